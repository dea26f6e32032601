"""Who is Spy's conformance hooks (:class:`mas_agents.game.conformance.Conformance`, registered with the game in
:mod:`mas_agents.graphs.wis.session`): the rules invariants of one game's event log (:func:`walk`,
:func:`checks`) and its re-scoring from the events (:func:`rescore`).

Moved from the per-game checker of ``tests/test_conformance.py`` (issue 51 item 2), its
assertions kept one for one as :func:`mas_agents.game.conformance.need` calls. The rules are
:mod:`mas_agents.graphs.wis.rules` (Who is Spy, WiS platform rules: speaking order, fouls, voting, scores).
"""

from __future__ import annotations


from mas_agents.game.conformance import Conformance, need, problems
from mas_agents.graphs.wis.metrics import player_rows
from mas_agents.graphs.wis.record import record_from_events
from mas_agents.graphs.wis import rules

#: What :func:`walk` replays of each seat (keys of :func:`mas_agents.graphs.wis.metrics.player_rows`).
SEAT_KEYS = ("agent", "role", "score", "won", "votes_cast_as_civilian", "correct_votes", "abstentions",
             "descriptions", "fouls", "timeouts", "survival_rounds")


def walk(config: dict, events: list[dict], result: dict) -> list[dict]:
    """Walk one game's log (``config.json``'s ``speak_timeout`` says whether a timeout may occur;
    the rest is in the events and ``result``) in the rules' order (:mod:`mas_agents.graphs.wis.rules`): the
    words dealt, speaking order of the alive players, the judge's fouls recomputed, alive voters
    only and never oneself, the tally, the end, the scores (:func:`mas_agents.graphs.wis.rules.game_scores`) and ``result.json``'s rounds, eliminations,
    outcome, invalid actions and per-seat metrics (:func:`mas_agents.graphs.wis.metrics.player_rows`).

    Returns one row per seat, from the log and the re-scored outcome, with :data:`SEAT_KEYS`
    (what a tournament's leaderboard aggregates).

    Raises:
        mas_agents.game.conformance.Violation: a rule the log breaks (the rule's line named).
    """

    seats = [p["name"] for p in result["players"]]
    roles = {p["name"]: p["role"] for p in result["players"]}
    words = {p["name"]: p["word"] for p in result["players"]}
    spy = next(p for p, r in roles.items() if r == "spy")
    need(words[spy] == result["pair"]["spy"] and all(words[p] == result["pair"]["civilian"] for p in seats if p != spy))
    lang = result["lang"]
    evs = [e for e in events if e["phase"] != "planning"]
    need(all(e["visible_to"] == [e["actor"]] for e in events if e["phase"] == "planning"))
    start = evs[0]
    need(start["kind"] == "start" and start["data"]["seats"] == seats)
    first = start["data"]["first_speaker"]
    need(first == result["first_speaker"])
    for p, e in zip(seats, evs[1:1 + len(seats)]):
        need((e["kind"], e["visible_to"], e["data"]["word"]) == ("word", [p], words[p]))
    i = 1 + len(seats)
    alive = list(seats)
    shown: list[str] = []
    eliminated: dict[str, dict] = {}
    votes_by_round: list[dict] = []
    rounds_out: list[dict] = []
    end = None
    rnd = 0
    while end is None:
        rnd += 1
        e = evs[i]
        i += 1
        order = rules.speaking_order(seats, first, alive)
        need((e["kind"], e["round"], e["data"]["order"]) == ("round_start", rnd, order), e)
        descriptions = []
        for speaker in order:                                   # only alive players speak, in order
            e = evs[i]
            i += 1
            need((e["kind"], e["actor"], e["round"]) == ("describe", speaker, rnd), e)
            text = e["content"]
            need(len(text) <= rules.MAX_CHARS[lang])
            # the judge's ruling, recomputed (a timeout only under a time limit: speak_timeout)
            timed_out = e["data"]["foul"] == "timeout"
            need(not timed_out or config.get("speak_timeout") is not None, e)
            need(e["data"]["foul"] == rules.foul(text or None, words[speaker], shown, timed_out=timed_out), e)
            if not e["data"]["valid"]:
                need(e["data"]["foul"] == "no_answer" and text == "", e)     # unreadable = a foul, never a move
            if text:
                shown.append(text)
            descriptions.append({"player": speaker, "text": text, "foul": e["data"]["foul"]})
        fouled = [d["player"] for d in descriptions if d["foul"]]
        for p in fouled:
            e = evs[i]
            i += 1
            need((e["kind"], e["data"]["player"], e["round"]) == ("foul", p, rnd), e)
            eliminated[p] = {"round": rnd, "by": "foul"}
        alive = [p for p in alive if p not in fouled]
        end = rules.end_reason(spy, alive, rnd, after_vote=False)
        votes: dict[str, str | None] = {}
        out = None
        if end is None:
            while evs[i]["kind"] == "vote":
                e = evs[i]
                i += 1
                voter, target = e["actor"], e["data"]["target"]
                need(voter in alive and voter not in votes and e["visible_to"] == [voter], e)   # alive voters only
                need(target is None or target in rules.vote_candidates(voter, alive), e)     # never oneself
                if not e["data"]["valid"]:
                    need(target is None, e)
                votes[voter] = target
            need(set(votes) == set(alive))
            votes = {p: votes[p] for p in alive}
            counts, out = rules.tally(votes, alive)
            e = evs[i]
            i += 1
            need(e["kind"] == "vote_result" and e["data"]["votes"] == votes, e)
            need((e["data"]["counts"], e["data"]["out"]) == (counts, out), e)
            if out:
                eliminated[out] = {"round": rnd, "by": "vote"}
                alive = [p for p in alive if p != out]
            end = rules.end_reason(spy, alive, rnd, after_vote=True)
            votes_by_round.append(votes)
        else:
            votes_by_round.append({})
        rounds_out.append({"round": rnd, "fouled": fouled, "votes": votes, "voted_out": out, "alive_after": list(alive),
                           "descriptions": descriptions})
    e = evs[i]
    need(e["kind"] == "outcome" and i + 1 == len(evs), evs[i:])
    # b. re-score with the rules' own functions on what the log says
    spy_round = eliminated.get(spy, {}).get("round")
    scores = rules.game_scores(roles, spy_round, alive, votes_by_round)
    need(result["scores"] == e["data"]["scores"] == scores)
    need(abs(sum(scores.values()) - rules.TOTAL_POINTS) < 1e-9)
    need(result["outcome"] == {"winner": "civilians" if spy_round else "spy", "spy": spy,
                                 "spy_eliminated_round": spy_round, "end_reason": end, "rounds_played": rnd})
    need(result["eliminated"] == eliminated)
    need([{k: r[k] for k in ("round", "fouled", "votes", "voted_out", "alive_after")} for r in result["rounds"]] == \
        [{k: r[k] for k in ("round", "fouled", "votes", "voted_out", "alive_after")} for r in rounds_out])
    need([[{k: d[k] for k in ("player", "text", "foul")} for d in r["descriptions"]] for r in result["rounds"]] == \
        [r["descriptions"] for r in rounds_out])
    invalid = sum(1 for e in events if e["kind"] in ("describe", "vote") and not e["data"]["valid"])
    timeouts = sum(1 for e in events if e["kind"] == "describe" and e["data"]["foul"] == "timeout")
    need(result["invalid_actions"] == invalid and result["timeouts"] == timeouts)
    # each seat in this game, from the log and the re-scored outcome
    winner = "civilians" if spy_round else "spy"
    agents = {p["name"]: p["agent"] for p in result["players"]}
    mine: dict[str, list[dict]] = {p: [e for e in events if e["actor"] == p] for p in seats}
    ballots = {p: [e["data"]["target"] for e in mine[p] if e["kind"] == "vote"] for p in seats}
    fouls = {p: [e["data"]["foul"] for e in mine[p] if e["kind"] == "describe"] for p in seats}
    replayed = [{"agent": agents[p], "role": roles[p], "score": scores[p],
                 "won": winner == ("spy" if roles[p] == "spy" else "civilians"),
                 "votes_cast_as_civilian": len(ballots[p]) if roles[p] != "spy" else 0,
                 "correct_votes": ballots[p].count(spy) if roles[p] != "spy" else 0,
                 "abstentions": ballots[p].count(None), "descriptions": len(fouls[p]),
                 "fouls": sum(1 for f in fouls[p] if f), "timeouts": fouls[p].count("timeout"),
                 "survival_rounds": eliminated[p]["round"] - 1 if p in eliminated else rnd} for p in seats]
    # the per-seat metrics (read from result.json) agree with them
    need([{k: row[k] for k in SEAT_KEYS} for row in player_rows(result)] == replayed)
    return replayed


def checks(config: dict, events: list[dict], result: dict) -> list[str]:
    """The rules invariants of one game (:func:`walk`): ``[]``, or the first problem found."""
    return problems(walk, config, events, result)


def rescore(config: dict, events: list[dict], result: dict) -> dict:
    """``{field: (recomputed, stored)}``: eliminations, scores (``mas_agents.graphs.wis.rules.game_scores``),
    outcome and rounds recomputed from the ``describe`` / ``foul`` / ``vote_result`` events alone
    (:func:`mas_agents.graphs.wis.record.record_from_events`); ``mas rerun --rescore`` and the
    conformance kit call it through the registry (:attr:`mas_agents.game.contract.GameDef.conformance`).

    Raises:
        StopIteration, KeyError, IndexError, TypeError: the log lacks an event or field it needs.
    """
    rec = record_from_events(events, config)
    roles = {p["name"]: p["role"] for p in rec["players"]}
    spy = next(p for p, r in roles.items() if r == "spy")
    eliminated = rec["eliminated"]
    alive = [p for p in roles if p not in eliminated]
    spy_round = eliminated.get(spy, {}).get("round")
    votes = [r["votes"] for r in rec["rounds"]]
    scores = rules.game_scores(roles, spy_round, alive, votes)
    outcome = {"winner": "civilians" if spy_round else "spy", "spy": spy, "spy_eliminated_round": spy_round}
    keep = ("round", "fouled", "votes", "voted_out", "alive_after")
    return {"eliminated": (eliminated, result.get("eliminated")),
            "scores": (scores, result.get("scores")),
            "outcome": (outcome, {k: (result.get("outcome") or {}).get(k) for k in outcome}),
            "rounds": ([{k: r[k] for k in keep} for r in rec["rounds"]],
                       [{k: r.get(k) for k in keep} for r in result.get("rounds") or []])}


CONFORMANCE = Conformance(checks=checks, rescore=rescore)
