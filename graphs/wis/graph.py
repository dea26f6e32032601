"""Who is Spy? (WiS) as a LangGraph ``StateGraph`` (WiS paper §3.1).

Flow::

    START -> setup -> speaking (the round's start, every description in speaking order, the
                                judge's fouls) --ended--> finish -> END
                      \\-> voting (every alive player's vote, fanned out, then the tally)
                            --ended--> finish
                             \\-> speaking (next round)

A round's speaking phase is one graph step. Its descriptions are made one after another anyway
(each speaker hears the ones before), and every LangGraph step costs the client CPU of its own
(``benchmarks/results/throughput.md``, session 19: with a step per speaker, sequential games took
a median 16 % more client CPU a call than with a step per round). Each description's events are
published as it is made (:attr:`WisRuntime.publish`), so a game in progress is watched move by
move as before.

A round's votes and their tally are one step too. Every vote sees the same state (the round's
descriptions); the votes are made in parallel by :func:`mas_agents.graphs.fanout.fan_out` (at most the
step's ``max_concurrency`` at once: :func:`mas_agents.cells.cell_fanout` narrows the games of a
busy tournament to one, so they vote one after another on the game's thread) and returned in
voter order. A LangGraph fan-out (``Send``, a task per voter, then a tally step) did the same at
17 % more client instructions a call (:mod:`mas_agents.graphs.fanout`). An interrupted game is replayed from
its start (:mod:`mas_agents.game.runner`), so no half-voted step needs keeping.

Every player, local or remote, is driven only through the WiS protocol
(:mod:`mas_agents.graphs.wis.protocol_types`): ``perceive`` for announcements, ``interact`` for a
description or a vote. State is plain data; players, words and roles live in :class:`WisRuntime`,
the run context of a graph compiled once per process (:mod:`mas_agents.graphs.compiled`).
Rules (fouls, truncation, order, tally, end, scores) are the pure functions of
:mod:`mas_agents.graphs.wis.rules`.

The state, the runtime and the judge's texts are :mod:`mas_agents.graphs.wis.runtime`;
this module is the graph: its nodes in :func:`builder`.
"""

from __future__ import annotations

from functools import partial

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from mas_agents.events import make_event, vote_result_data
from mas_agents.graphs.compiled import BoundGraph, once
from mas_agents.graphs.fanout import fan_out
from mas_agents.graphs.wis import rules as rules
from mas_agents.graphs.wis.protocol_types import request
from mas_agents.graphs.wis.runtime import HOST, WisRuntime, WisState
from mas_agents.utterance import fold


def _private_events(meta: dict, actor: str, rnd: int, kind: str) -> list[dict]:
    """A local player's planning events and its reasoning, as private events."""
    out = list(meta.get("planning_events") or [])
    if meta.get("reasoning"):
        out.append(make_event(phase="planning", actor=actor, kind="reasoning", content=meta["reasoning"],
                              visible_to=[actor], round=rnd, llm_call_ids=meta.get("call_ids", ()),
                              data={"for": kind}))
    return out


@once
def compiled_graph():
    """The WiS graph, compiled once per process and shared by every game and thread
    (:mod:`mas_agents.graphs.compiled`); run it with a game's :class:`WisRuntime` as the context::

        compiled_graph().stream({"events": []}, {"recursion_limit": rt.step_bound()}, context=rt)
    """
    return builder().compile()


def build_graph(rt: WisRuntime) -> BoundGraph:
    """The process's compiled WiS graph (:func:`compiled_graph`) bound to ``rt``; invoke or stream
    with ``{"events": []}`` and ``{"recursion_limit": rt.step_bound()}``."""
    return BoundGraph(compiled_graph(), rt)


def builder() -> StateGraph:
    """Who is Spy's uncompiled ``StateGraph`` (state :class:`WisState`), for a user's own graph:
    compile it with a checkpointer, an interrupt or nodes of one's own and run it with
    ``context=`` a :class:`WisRuntime`; every node reads its game's runtime from
    ``runtime.context``. :func:`compiled_graph` compiles it once per process."""

    def setup(state: WisState, runtime: Runtime[WisRuntime]) -> dict:
        rt = runtime.context
        host = HOST[rt.lang]
        # The sequence the WiS platform's agent SDK expects (spy-agent-build-sdk 0.0.29, its example
        # agent): ``start`` with the player's own name in ``message``, its word in ``distribution``;
        # the rules and the table then come as host messages (``round``, round 0, no speaker).
        rules_msg = host["rules"].format(n=len(rt.seats), chars=rules.MAX_CHARS[rt.lang])
        players_msg = host["players"] + ", ".join(rt.seats)
        events = [make_event(phase="setup", actor="game", kind="start", content=f"{rules_msg}\n{players_msg}",
                             data={"seats": rt.seats, "first_speaker": rt.first, "lang": rt.lang})]
        for p in rt.seats:
            rt.players[p].perceive(request("start", name=p, message=p))
            rt.players[p].perceive(request("distribution", name=p, word=rt.words[p]))
            rt.players[p].perceive(request("round", message=rules_msg))
            rt.players[p].perceive(request("round", message=players_msg))
            events.append(make_event(phase="setup", actor="game", kind="word", content=f"{p} gets the word {rt.words[p]!r}.",
                                     visible_to=[p], data={"player": p, "word": rt.words[p]}))
        return {"events": events, "round": 0, "alive": list(rt.seats), "shown": [], "rounds": [], "eliminated": {},
                "end": None}

    def round_start(state: WisState, rt: WisRuntime) -> dict:
        host = HOST[rt.lang]
        rnd = state["round"] + 1
        order = rules.speaking_order(rt.seats, rt.first, state["alive"])
        msg = host["round"].format(round=rnd, order=("，" if rt.lang == "zh" else ", ").join(order))
        rt.broadcast("round", message=msg, round=rnd)
        return {"round": rnd, "order": order, "turn": 0, "descriptions": [],
                "events": [make_event(phase="speaking", actor="game", kind="round_start", content=msg, round=rnd,
                                      data={"order": order})]}

    def speak(state: WisState, rt: WisRuntime) -> dict:
        host = HOST[rt.lang]
        rnd, speaker = state["round"], state["order"][state["turn"]]
        resp, secs = rt.interact(speaker, "round", message=host["turn"], round=rnd)
        meta = resp.get("meta") or {}
        timed_out = bool(resp.get("timed_out")) or (rt.speak_timeout is not None and secs > rt.speak_timeout)
        text = None
        if resp.get("success") and isinstance(resp.get("result"), str) and not timed_out:
            text = rules.truncate(resp["result"].strip(), rt.lang)
        foul = rules.foul(text, rt.words[speaker], state["shown"], timed_out=timed_out)
        if timed_out:
            rt.stats["timeouts"] += 1
        if not resp.get("success") and not timed_out:
            rt.stats["invalid_actions"] += 1
        if text is not None:
            # sent on one line (issue 57, E1): a remote agent that writes "name: message" into its
            # history (the platform SDK's example agent does) gets no line of the host's from a player
            rt.broadcast("round", name=speaker, message=fold(text), round=rnd)
        d = {"player": speaker, "text": text or "", "foul": foul, "seconds": round(secs, 3)}
        ev = make_event(phase="speaking", actor=speaker, kind="describe", content=text or "", round=rnd,
                        llm_call_ids=meta.get("call_ids", ()),
                        data={"foul": foul, "seconds": d["seconds"], "valid": bool(resp.get("success")),
                              "self_check_retry": bool(meta.get("self_check_retry")),
                              "error": resp.get("errMsg"), "attempts": meta.get("attempts")})
        return {"turn": state["turn"] + 1, "descriptions": state["descriptions"] + [d],
                "shown": state["shown"] + ([text] if text else []),
                "events": _private_events(meta, speaker, rnd, "describe") + [ev]}

    def judge(state: WisState, rt: WisRuntime) -> dict:
        host = HOST[rt.lang]
        rnd = state["round"]
        fouled = [d["player"] for d in state["descriptions"] if d["foul"]]
        alive = [p for p in state["alive"] if p not in fouled]
        elim = dict(state["eliminated"])
        events = []
        for d in state["descriptions"]:
            if d["foul"]:
                elim[d["player"]] = {"round": rnd, "by": "foul"}
                msg = host["foul"].format(player=d["player"], text=rules.FOUL_TEXT[d["foul"]], foul=d["foul"])
                rt.broadcast("round", message=msg, round=rnd)
                events.append(make_event(phase="judging", actor="game", kind="foul", content=msg, round=rnd,
                                         data={"player": d["player"], "foul": d["foul"]}))
        end = rules.end_reason(rt.spy, alive, rnd, after_vote=False, max_rounds=rt.max_rounds)
        out = {"alive": alive, "eliminated": elim, "events": events, "end": end}
        if end:
            out["rounds"] = state["rounds"] + [_round_record(state, fouled, {}, {}, None, alive)]
        return out

    def speaking(state: WisState, runtime: Runtime[WisRuntime]) -> dict:
        """One round's speaking phase as one step: the round's start, each alive player's
        description in speaking order, then the judge's fouls; each part's events published as
        it is made, and returned together in the same order."""
        rt = runtime.context
        st: dict = dict(state)
        out: dict = {"events": []}

        def apply(update: dict) -> None:
            events = update.pop("events")
            st.update(update)
            out.update(update)
            out["events"] += events
            if rt.publish is not None:
                rt.publish(events)

        apply(round_start(st, rt))
        while st["turn"] < len(st["order"]):
            apply(speak(st, rt))
        apply(judge(st, rt))
        return out

    def ballots(state: WisState) -> list[dict]:
        return [{"round": state["round"], "voter": v, "candidates": rules.vote_candidates(v, state["alive"])}
                for v in state["alive"]]

    def after_speaking(state: WisState) -> str:
        return "finish" if state["end"] else "voting"

    def vote_one(arg: dict, runtime: Runtime[WisRuntime]) -> dict:
        """One alive player's vote (``arg``: one of :func:`ballots`); its update (one vote record,
        its events)."""
        rt = runtime.context
        rnd, voter, cands = arg["round"], arg["voter"], arg["candidates"]
        resp, secs = rt.interact(voter, "vote", message=",".join(cands), round=rnd)
        meta = resp.get("meta") or {}
        res = resp.get("result")
        # a late vote is an abstention (not a foul: the rules foul descriptions only). Only a
        # player's own report of a timeout counts (a remote agent cut off at the limit): the votes
        # are cast in parallel, and local seats sharing one model queue behind each other, so
        # their wall time measures the queue, not the player (with a one-connection server, the
        # six votes of a 6-player game wait for one another)
        late = bool(resp.get("timed_out"))
        target = (res.strip() if resp.get("success") and isinstance(res, str) and res.strip() in cands and not late
                  else None)
        if late:
            rt.stats["vote_timeouts"] += 1
        elif not resp.get("success"):
            rt.stats["invalid_actions"] += 1
        ev = make_event(phase="voting", actor=voter, kind="vote", content=target or "", round=rnd, visible_to=[voter],
                        llm_call_ids=meta.get("call_ids", ()),
                        data={"target": target, "valid": bool(resp.get("success")), "said": res, "late": late,
                              "error": resp.get("errMsg"), "seconds": round(secs, 3)})
        return {"votes": [{"round": rnd, "voter": voter, "target": target}],
                "events": _private_events(meta, voter, rnd, "vote") + [ev]}

    def voting(state: WisState, runtime: Runtime[WisRuntime], config: RunnableConfig) -> dict:
        """The round's votes (at most ``max_concurrency`` of the config at once,
        :func:`mas_agents.graphs.fanout.fan_out`), in voter order, then their tally."""
        out: dict[str, list] = {"votes": [], "events": []}
        for one in fan_out([partial(vote_one, b, runtime) for b in ballots(state)], config.get("max_concurrency")):
            out["votes"] += one["votes"]
            out["events"] += one["events"]
        counted = tally({**state, "votes": state["votes"] + out["votes"]}, runtime)
        return {**counted, "votes": out["votes"], "events": out["events"] + counted["events"]}

    def tally(state: WisState, runtime: Runtime[WisRuntime]) -> dict:
        rt = runtime.context
        rnd = state["round"]
        votes = {v["voter"]: v["target"] for v in state["votes"] if v["round"] == rnd}
        votes = {p: votes.get(p) for p in state["alive"]}  # seat order
        counts, out = rules.tally(votes, state["alive"])
        for voter, target in votes.items():
            rt.broadcast("vote", name=voter, message=target or "", round=rnd)
        # the eliminated name in ``message`` too: the SDK's example agent reads ``name``, and
        # some agents built for the platform read ``message``
        rt.broadcast("vote_result", name=out or "", message=out or "", round=rnd)
        alive = [p for p in state["alive"] if p != out]
        elim = dict(state["eliminated"])
        if out:
            elim[out] = {"round": rnd, "by": "vote"}
        shown = ", ".join(f"{v} → {t or 'abstained'}" for v, t in votes.items())
        msg = (f"Votes: {shown}. " + (f"{out} is voted out." if out else "No one is voted out (tie or no votes)."))
        end = rules.end_reason(rt.spy, alive, rnd, after_vote=True, max_rounds=rt.max_rounds)
        fouled = [d["player"] for d in state["descriptions"] if d["foul"]]
        return {"alive": alive, "eliminated": elim, "end": end,
                "rounds": state["rounds"] + [_round_record(state, fouled, votes, counts, out, alive)],
                "events": [make_event(phase="voting", actor="game", kind="vote_result", content=msg, round=rnd,
                                      data=vote_result_data(out, votes=votes, counts=counts))]}

    def after_tally(state: WisState, runtime: Runtime[WisRuntime]) -> str:
        rt = runtime.context
        return "finish" if state["end"] else "speaking"

    def finish(state: WisState, runtime: Runtime[WisRuntime]) -> dict:
        rt = runtime.context
        rnd = state["round"]
        spy = rt.spy
        spy_round = state["eliminated"].get(spy, {}).get("round")
        scores = rules.game_scores(rt.roles, spy_round, state["alive"], [r["votes"] for r in state["rounds"]])
        winner = "civilians" if spy_round else "spy"
        civ_word = next(w for p, w in rt.words.items() if rt.roles[p] == "civilian")
        msg = {"en": f"Game over after round {rnd}: the {'civilians win' if winner == 'civilians' else 'spy wins'}. "
                     f"The spy was {spy} (word {rt.words[spy]!r}); the civilians' word was {civ_word!r}. Scores: "
                     + ", ".join(f"{p} {s:g}" for p, s in scores.items()) + ".",
               "zh": f"第{rnd}轮后游戏结束：{'平民获胜' if winner == 'civilians' else '卧底获胜'}。卧底是{spy}（词语“{rt.words[spy]}”），"
                     f"平民的词语是“{civ_word}”。得分：" + "，".join(f"{p} {s:g}" for p, s in scores.items()) + "。"}[rt.lang]
        rt.broadcast("result", message=msg, round=rnd)
        outcome = {"winner": winner, "spy": spy, "spy_eliminated_round": spy_round, "end_reason": state["end"],
                   "rounds_played": rnd, "scores": scores}
        return {"events": [make_event(phase="outcome", actor="game", kind="outcome", content=msg, round=rnd,
                                      data=outcome)]}

    g = StateGraph(WisState)
    for name, fn in (("setup", setup), ("speaking", speaking), ("voting", voting), ("finish", finish)):
        g.add_node(name, fn)
    g.add_edge(START, "setup")
    g.add_edge("setup", "speaking")
    g.add_conditional_edges("speaking", after_speaking, ["voting", "finish"])
    g.add_conditional_edges("voting", after_tally, ["speaking", "finish"])
    g.add_edge("finish", END)
    return g


def _round_record(state: WisState, fouled: list[str], votes: dict, counts: dict, out: str | None,
                  alive: list[str]) -> dict:
    return {"round": state["round"], "order": state["order"], "descriptions": state["descriptions"],
            "fouled": fouled, "votes": votes, "vote_counts": counts, "voted_out": out, "alive_after": alive}
