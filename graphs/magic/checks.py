"""MAgIC's conformance hooks (:class:`mas_agents.game.conformance.Conformance`, registered with the game in
:mod:`mas_agents.graphs.magic.session`): the rules invariants of one game's event log (:func:`walk`,
:func:`checks`: the five scenarios' schedules, legal moves and outcomes) and its re-scoring from
the events (:func:`rescore`).

Moved from the per-game checker of ``tests/test_conformance.py`` (issue 51 item 2), its
assertions kept one for one as :func:`mas_agents.game.conformance.need` calls. The rules are
:mod:`mas_agents.graphs.magic.rules` (MAgIC, Xu et al. 2024: chameleon, undercover, cost sharing,
prisoner's dilemma, public good).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from mas_agents.game.conformance import Conformance, need, problems
from mas_agents.game.data import resolve_data_dir
from mas_agents.graphs.magic.dataset import load_setting
from mas_agents.graphs.magic import rules as R


def walk(config: dict, events: list[dict], result: dict) -> dict:
    """One MAgIC game (:mod:`mas_agents.graphs.magic.rules`, :mod:`mas_agents.graphs.magic.events`): legal moves in
    schedule order, and the outcome recomputed with the rules' functions (``config`` unused: the
    setup event holds the setting; a public-good game's number of rounds is read from its setting
    under the datasets root of :func:`mas_agents.game.data.resolve_data_dir`).

    Returns what a MAgIC run totals (``tests/conformance``): the game's ``scenario``, challenger
    ``side`` and ``seats``, ``roles`` (deduction games), the checked ``moves``, the stored
    ``outcome`` and the ``recomputed`` one.

    Raises:
        mas_agents.game.conformance.Violation: a rule the log breaks (the rule's line named).
        mas_agents.game.data.DataError: a public-good setting cannot be read.
    """

    setup = events[0]
    need(setup["kind"] == "setup" and setup["visible_to"] == ["game"])
    s = setup["data"]
    players = list(R.PLAYERS)
    need(s["players"] == players and s["scenario"] == result["scenario"])
    need(s["challenger_seats"] == result["challenger_seats"] and s["side"] == result["side"])
    for p, e in zip(players, events[1:4]):
        need((e["kind"], e["visible_to"]) == ("private_info", [p]))
    body = events[4:]
    need(body[-1]["kind"] == "outcome" and body[-1]["data"] == result["outcome"])
    need(sum(e["kind"] == "outcome" for e in events) == 1)
    invalid = [e for e in events if e["kind"] == "invalid"]
    need(result["invalid_actions"] == len(invalid))
    need(all(e["visible_to"] == [e["actor"]] and e["actor"] in players for e in invalid))
    moves = [e for e in body if e["kind"] not in ("invalid", "belief_table") and e["phase"] != "planning"]
    invalid_at = Counter((e["actor"], e["data"]["action"], e["round"]) for e in invalid)

    def unreadable(e: dict, action: str, rnd: int | None = None) -> bool:
        return invalid_at[(e["actor"], action, e["round"] if rnd is None else rnd)] > 0

    scenario = s["scenario"]
    if scenario in ("chameleon", "undercover"):
        roles = s["roles"]
        hidden = next(p for p, r in roles.items() if r == scenario)
        n_rounds = R.CHAMELEON_CLUE_ROUNDS if scenario == "chameleon" else R.UNDERCOVER_CLUE_ROUNDS
        sched = [(r, p) for r in range(1, n_rounds + 1) for p in players]
        told = ("chameleon", "non_chameleon") if scenario == "chameleon" else ("undercover", "civilian")
        i = 0
        for k, (rnd, speaker) in enumerate(sched):
            for p in players:                                   # self-awareness, every player, before the clue
                e = moves[i]
                i += 1
                d = e["data"]
                need((e["kind"], e["actor"], d["clue_index"], e["visible_to"]) == ("self_awareness", p, k, ["game"]), e)
                need((d["true_name"], d["true_role"]) == (p, roles[p]))
                if d["said_name"] is None:
                    need(d["said_role"] is None and e["content"] == "" and unreadable(e, "choose"), e)
                else:
                    need(d["said_name"] in players and d["said_role"] in told)
                need(d["correct"] == (d["said_name"] == p and d["said_role"] == roles[p]))
            e = moves[i]
            i += 1
            need((e["kind"], e["actor"], e["data"]["clue_index"], e["round"]) == ("clue", speaker, k, rnd), e)
            if not e["data"]["text"]:
                need(e["content"] == "(no clue)" and unreadable(e, "describe"), e)
            for p in players:                                   # the questionnaire, every player, after it
                e = moves[i]
                i += 1
                d = e["data"]
                need((e["kind"], e["actor"], d["clue_index"], e["visible_to"]) == ("belief", p, k, [p]), e)
                need(set(d["predicted"]) == set(players) - {p})
                need(d["suspect"] is None or d["suspect"] in players)
                need(all(v is None or v in players for v in d["predicted"].values()))
                if d["suspect"] is None:
                    need(unreadable(e, "form"), e)
        votes = {}
        for _ in players:
            e = moves[i]
            i += 1
            p, target = e["actor"], e["data"]["target"]
            need(e["kind"] == "vote" and e["visible_to"] == [p] and p not in votes, e)
            need(target is None or target in [q for q in players if q != p], e)   # never oneself
            if target is None:
                need(unreadable(e, "vote", 0), e)
            votes[p] = target
        counts, accused, tie = R.vote_outcome(votes, players)
        e = moves[i]
        i += 1
        need(e["kind"] == "vote_result" and e["data"] == {"votes": votes, "counts": counts, "out": accused, "tie": tie})
        if scenario == "undercover":
            expected = {"code": R.undercover_outcome(accused, tie, hidden), "accused": accused}
        elif accused == hidden:                                 # the caught chameleon guesses
            e = moves[i]
            i += 1
            need((e["kind"], e["actor"]) == ("guess", hidden), e)
            word = e["data"]["word"]
            need(e["data"]["correct"] == R.guess_correct(word, s["code"]))
            if word is None:
                need(unreadable(e, "guess", 0), e)
            expected = {"code": R.chameleon_outcome(accused, False, hidden, e["data"]["correct"]), "accused": accused}
        else:
            expected = {"code": R.chameleon_outcome(accused, tie, hidden, None), "accused": accused}
        need(moves[i]["kind"] == "outcome" and i + 1 == len(moves), moves[i:])
        need(result["outcome"] == expected)

    elif scenario == "cost_sharing":
        i = 0
        latest: dict[str, Any] = {}
        for rnd in range(1, R.COST_SHARING_MAX_ROUNDS + 1):
            props = {}
            for p in players:
                e = moves[i]
                i += 1
                d = e["data"]
                need((e["kind"], e["actor"], d["round"], e["round"]) == ("proposal", p, rnd, rnd), e)
                if d["said"] is None:
                    need(d["split"] is None and unreadable(e, "propose"), e)
                else:
                    need(d["split"] == (d["said"] if R.valid_split(d["said"]) else None), e)
                props[p] = d["split"]
            votes = {}
            for p in players:
                e = moves[i]
                i += 1
                target = e["data"]["for"]
                need((e["kind"], e["actor"], e["data"]["round"]) == ("proposal_vote", p, rnd), e)
                # a vote goes to a proposer whose split is valid this round, or to nobody
                need(target is None or props.get(target) is not None, e)
                if target is None and any(props.values()):
                    need(unreadable(e, "vote"), e)
                votes[p] = target
            latest = {p: props.get(p) or latest.get(p) for p in players}
            agreed, split = R.splits_agree(votes, props)
            if agreed or rnd == R.COST_SHARING_MAX_ROUNDS:
                expected = {"agreed": agreed, "rounds": rnd, "split": list(split) if split else None,
                            "latest_proposals": latest}
                break
        need(moves[i]["kind"] == "outcome" and i + 1 == len(moves), moves[i:])
        need(result["outcome"] == expected)

    else:                                                       # prisoner's dilemma / public good
        pd = scenario == "prisoners_dilemma"
        i = 0
        spent = {p: 0 for p in players}
        history: dict[str, list] = {p: [] for p in players}
        rounds = R.PD_ROUNDS if pd else load_setting(resolve_data_dir(), scenario, s["setting_id"]).rounds
        for rnd in range(1, rounds + 1):
            now = {}
            for p in players:
                e = moves[i]
                i += 1
                need(e["actor"] == p and e["round"] == rnd and e["visible_to"] == [p], e)   # hidden until revealed
                if pd:
                    need(e["kind"] == "pd_choice")
                    v = e["data"]["choice"]
                    need(v is None or v in R.PD_CHOICES, e)
                    if v is None:
                        need(unreadable(e, "choose"), e)
                else:
                    need(e["kind"] == "contribution")
                    v = e["data"]["amount"]
                    need(v is None or (isinstance(v, int) and 0 <= v <= R.PG_ENDOWMENT - spent[p]), e)  # never more than left
                    # nothing left: not asked, 0 (rules.pg_forced); else asked
                    forced = R.pg_forced(R.PG_ENDOWMENT - spent[p]) is not None
                    need(bool(e["data"].get("forced")) == forced, e)
                    if forced:
                        need(v == 0 and not e.get("llm_call_ids"), e)
                    if v is None:
                        need(unreadable(e, "contribute"), e)
                    spent[p] += v or 0
                now[p] = v
                history[p].append(v)
            e = moves[i]
            i += 1
            if pd:
                pay = R.pd_payoffs({p: now[p] or "cooperate" for p in players}, s["payoffs"])
                need(e["kind"] == "pd_reveal" and e["data"] == {"round": rnd, "choices": now, "payoffs": pay}, e)
            else:
                amounts = {p: now[p] or 0 for p in players}
                need(e["kind"] == "pg_reveal" and e["data"]["amounts"] == amounts, e)
                not_asked = [m["actor"] for m in moves[i - 1 - len(players):i - 1] if m["data"].get("forced")]
                need(e["data"].get("forced", []) == not_asked, e)
                need(e["data"]["pool_total"] == sum(spent.values()))
        need(moves[i]["kind"] == "outcome" and i + 1 == len(moves), moves[i:])
        if pd:
            reveals = [e["data"]["payoffs"] for e in moves if e["kind"] == "pd_reveal"]
            totals = {p: sum(r[p] for r in reveals) for p in players}
            expected = {"totals": totals, "winners": R.pd_winners(totals)}
            need(result["outcome"] == expected)
        else:
            finals = R.pg_finals({p: [v or 0 for v in history[p]] for p in players}, s["multiplier"])
            expected = {"finals": finals, "winners": R.pg_winners(finals)}
            need(result["outcome"] == expected)
    return {"scenario": scenario, "side": s["side"], "seats": set(s["challenger_seats"]), "roles": s.get("roles", {}),
            "moves": moves, "outcome": result["outcome"], "recomputed": expected}


def checks(config: dict, events: list[dict], result: dict) -> list[str]:
    """The rules invariants of one game (:func:`walk`): ``[]``, or the first problem found."""
    return problems(walk, config, events, result)


def rescore(config: dict, events: list[dict], result: dict) -> dict:
    """``{field: (recomputed, stored)}``: the outcome recomputed from the events with the rules'
    functions (:func:`walk`), and the invalid actions counted in them.

    Raises:
        mas_agents.game.conformance.Violation: the log breaks a rule (the walk also compares the outcome it
            recomputes with ``result.json``'s, so a different stored outcome is raised here).
    """
    recomputed = walk(config, events, result)["recomputed"]
    return {"outcome": (recomputed, result.get("outcome")),
            "invalid_actions": (sum(1 for e in events if e["kind"] == "invalid"), result.get("invalid_actions"))}


CONFORMANCE = Conformance(checks=checks, rescore=rescore)
