"""The murder mystery's conformance hooks (:class:`mas_agents.game.conformance.Conformance`, registered with
the game in :mod:`mas_agents.graphs.mmg.session`): the rules invariants of one game's event log
(:func:`walk`, :func:`checks`) and its re-scoring from the events (:func:`rescore`).

Moved from the per-game checker of ``tests/test_conformance.py`` (issue 51 item 2), its
assertions kept one for one as :func:`mas_agents.game.conformance.need` calls (the script, the rounds and
the questions per round now come from the game's ``config.json`` instead of the test's setup).
"""

from __future__ import annotations

from typing import Any

from mas_agents.game.conformance import Conformance, need, problems
from mas_agents.game.data import resolve_data_dir
from mas_agents.graphs.mmg.dataset import load_script
from mas_agents.graphs.mmg import rules


def _invalid_for(ev: dict, actor: str, action: str) -> bool:
    return ev["kind"] == "invalid" and ev["actor"] == actor and ev["data"].get("action") == action


def walk(config: dict, events: list[dict], result: dict) -> None:
    """Walk one game's log in the order of the rules and graph (:mod:`mas_agents.graphs.mmg.rules`,
    :mod:`mas_agents.graphs.mmg.graph`): the scripts dealt, introductions in seat order, the questioning
    schedule (:func:`mas_agents.graphs.mmg.rules.question_schedule` of ``config.json``'s ``rounds`` and
    ``questions``; never asking oneself, answers by the one asked), secret ballots for every
    victim (a legal suspect, read at the first or second try; an unreadable one abstains), each
    accusation re-scored (:func:`mas_agents.graphs.mmg.rules.victim_outcome`) and ``result.json``'s outcome,
    invalid actions and counts. The players, victims and murderers are the script's
    (``config.json``'s ``script_id`` and ``lang`` under its ``data_dir``, else the datasets root of
    :func:`mas_agents.game.data.resolve_data_dir`).

    Raises:
        mas_agents.game.conformance.Violation: a rule the log breaks (the rule's line named).
        mas_agents.game.data.DataError: the script cannot be read.
    """

    sc = load_script(resolve_data_dir(config.get("data_dir")), config["script_id"], config.get("lang", "en"))
    players = [c.name for c in sc.characters]
    victims = list(sc.victims)
    need(result["players"] == players and result["finished"])
    evs = [e for e in events if e["phase"] != "planning"]      # private block events may interleave
    need(all(e["visible_to"] == [e["actor"]] for e in events if e["phase"] == "planning"))
    i = 0

    def take() -> dict:
        nonlocal i
        need(i < len(evs), "the event log ends early")
        i += 1
        return evs[i - 1]

    e = take()
    need((e["kind"], e["actor"]) == ("start", "game"))
    for p in players:
        e = take()
        need((e["kind"], e["visible_to"]) == ("script", [p]))
    for p in players:                                           # introductions in seat order
        e = take()
        need(e["actor"] == p and (e["kind"] == "introduce" or _invalid_for(e, p, "introduce")), e)
        if e["kind"] == "introduce":
            need(e["content"] and e["visible_to"] == ["*"])
    schedule = rules.question_schedule(players, config["rounds"], config["questions"])
    for n, (rnd, asker) in enumerate(schedule):
        e = take()
        need(e["actor"] == asker and e["round"] == rnd, (n, e))
        if e["kind"] == "ask":
            target = e["data"]["target"]
            need(target in rules.other_players(asker, players), e)        # never oneself
            a = take()
            need(a["actor"] == target and a["round"] == rnd, a)
            if a["kind"] == "answer":
                need(a["data"]["asker"] == asker and a["data"]["question"] == e["content"], a)
            else:                                               # an unreadable answer: everyone sees it
                need(_invalid_for(a, target, "answer") and a["visible_to"] == ["*"], a)
        else:
            need(_invalid_for(e, asker, "ask"), e)            # an unreadable question is no move
        if n + 1 == len(schedule) or schedule[n + 1][0] != rnd:
            e = take()
            need((e["kind"], e["actor"], e["round"]) == ("round_end", "game", rnd))
    e = take()
    need((e["kind"], e["phase"]) == ("announce", "voting"))
    ballots: dict[tuple[str, str], str | None] = {}
    while evs[i]["phase"] == "voting":
        e = take()
        voter, victim, choice = e["actor"], e["data"]["victim"], e["data"]["choice"]
        need(e["visible_to"] == [voter] and victim in victims and (voter, victim) not in ballots, e)
        if e["kind"] == "vote":
            need(choice in rules.other_players(voter, players), e)        # a legal suspect, not oneself
            need(len(e["data"]["errors"]) < 2, e)                         # read at the first or second try
        else:
            need(e["kind"] == "invalid" and choice is None, e)            # unreadable = abstained
            need(e["data"]["errors"], e)
        ballots[(voter, victim)] = choice
    need(set(ballots) == {(p, v) for v in victims for p in players})
    # b. re-score: the project's outcome functions on the ballots of the log
    per_victim = [rules.victim_outcome(v, {p: ballots[(p, v)] for p in players}, sc.murderers_of(v)) for v in victims]
    for v, res in zip(victims, per_victim):
        e = take()
        need((e["kind"], e["actor"]) == ("accuse", "game") and e["data"] == res)
    need(i == len(evs), f"events after the outcome: {evs[i:]}")
    need(result["outcome"] == rules.game_outcome(per_victim))
    invalid = [e for e in events if e["kind"] == "invalid"]
    need(result["invalid_actions"] == len(invalid))
    need(result["counts"] == {k: sum(1 for e in events if e["kind"] == k) for k in ("introduce", "ask", "answer", "vote")})
    need(sum(result["invalid_by_kind"].values()) == len(invalid))


def checks(config: dict, events: list[dict], result: dict) -> list[str]:
    """The rules invariants of one game (:func:`walk`): ``[]``, or the first problem found."""
    return problems(walk, config, events, result)


def rescore(config: dict, events: list[dict], result: dict) -> dict:
    """``{field: (recomputed, stored)}``: the outcome (each victim's accusation from the voting
    ballots, ``mas_agents.graphs.mmg.rules.victim_outcome`` with the murderers its ``accuse`` event names;
    ``rules.game_outcome``), the action counts and the invalid actions, recomputed from the events
    alone; ``mas rerun --rescore`` and the conformance kit call it through the registry
    (:attr:`mas_agents.game.contract.GameDef.conformance`).

    Raises:
        KeyError, TypeError: an event lacks a field it needs.
    """
    ballots: dict[str, dict[str, Any]] = {}
    for e in events:
        if e.get("phase") == "voting" and e.get("kind") in ("vote", "invalid") and "victim" in (e.get("data") or {}):
            ballots.setdefault(e["data"]["victim"], {})[e["actor"]] = e["data"].get("choice")
    per_victim = [rules.victim_outcome(e["data"]["victim"], ballots.get(e["data"]["victim"], {}), e["data"]["murderers"])
                  for e in events if e.get("kind") == "accuse"]
    counts = {k: sum(1 for e in events if e.get("kind") == k) for k in ("introduce", "ask", "answer", "vote")}
    return {"outcome": (rules.game_outcome(per_victim), result.get("outcome")),
            "counts": (counts, result.get("counts")),
            "invalid_actions": (sum(1 for e in events if e.get("kind") == "invalid"), result.get("invalid_actions"))}


CONFORMANCE = Conformance(checks=checks, rescore=rescore)
