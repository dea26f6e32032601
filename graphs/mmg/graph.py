"""The murder-mystery game (MMG) as a LangGraph ``StateGraph`` (PLAYER* Appendix A.2).

Flow::

    START -> setup -> introduce (loops once per character, seat order)
          -> ask -> answer (loops over the questioning schedule of rounds x players x questions;
                            round_end after each round: agents' round hooks, e.g. a pruner)
          -> vote (Send fan-out: one branch per (voter, victim), simultaneous, private)
          -> tally -> END

State is plain data (events, cursors, votes, the agents' reply counters) so the SQLite
checkpointer can snapshot it every step and ``--resume`` continues an interrupted game; agents,
models and FAISS memories live in :class:`MMGRuntime`, outside the state, and agents rebuild
their dialogue memory from the events on resume. Each node returns the :attr:`Agent.stats`
changes its own work made (:func:`mas_agents.agents.counting`), so the state's ``agent_stats``
counts every finished step once, across interruptions. Rules (schedule, tally, outcome) are the pure functions of
:mod:`mas_agents.graphs.mmg.rules`.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from mas_agents.graphs.compiled import BoundGraph, once
from mas_agents.graphs.mmg import rules as rules
from mas_agents.planners.base import Action, ActionRequest
from mas_agents.agents import Agent, add_counts, counting
from mas_agents.events import EVERYONE, make_event
from mas_agents.utterance import utterance


class MMGState(TypedDict, total=False):
    """Graph state (JSON-able, checkpointed every step).

    events: every game event so far (appended through the ``operator.add`` reducer).
    intro_i: how many introductions are done.
    cursor: index of the next turn in the questioning schedule.
    pending: the question awaiting an answer ({round, asker, target, question}) or None.
    votes: one record per (voter, victim) vote, appended by the parallel vote branches.
    vote_events: one ``{voter, victim, events}`` group per vote branch (its planning events and
        its vote / invalid event); ``tally`` moves them into ``events`` in seat order, so the log
        does not depend on which branch finished first (nor on a resume between them).
    outcome: the result from :func:`mas_agents.graphs.mmg.rules.game_outcome` once tallied.
    agent_stats: character -> {counter: n}: the changes of each agent's ``stats`` (malformed
        replies, abstentions, re-prompt recoveries, forced moves...) made by the finished steps,
        summed through :func:`mas_agents.agents.add_counts`.
    """

    events: Annotated[list[dict], operator.add]
    intro_i: int
    cursor: int
    pending: dict | None
    votes: Annotated[list[dict], operator.add]
    vote_events: Annotated[list[dict], operator.add]
    outcome: dict | None
    agent_stats: Annotated[dict, add_counts]


@dataclass
class MMGRuntime:
    """Everything a game needs that is not state.

    Attributes:
        title: script display name.
        players: characters in seat order.
        victims: the case's victims.
        murderers: victim -> list of true murderers (WellPlay ``kill_by_me``).
        agents: character -> agent.
        rounds, questions: questioning rounds and questions per player per round.
    """

    title: str
    players: list[str]
    victims: list[str]
    murderers: dict[str, list[str]]
    agents: dict[str, Agent]
    rounds: int = 3
    questions: int = 1
    schedule: list[tuple[int, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        missing = [p for p in self.players if p not in self.agents]
        if missing:
            raise ValueError(f"no agent for character(s): {', '.join(missing)}")
        self.schedule = rules.question_schedule(self.players, self.rounds, self.questions)

    def act(self, name: str, events: list[dict], request: ActionRequest) -> tuple[Action, list[dict], dict]:
        """Let ``name`` read the events it can see, then answer ``request``.

        Returns the action, the private planning events its blocks queued meanwhile (sensor
        readings, target choices...), which the node appends before the action's own event, and
        the ``agent_stats`` update of this work (:func:`mas_agents.agents.counting`).
        """
        agent = self.agents[name]
        with counting() as counts:
            agent.observe(events)
            action = agent.act(request, phase="gameplay")
        return action, agent.drain_events(), counts

    def step_bound(self) -> int:
        """An upper bound on graph steps, for LangGraph's ``recursion_limit``."""
        return 2 + len(self.players) + 2 * len(self.schedule) + self.rounds + 2 + 10


def _invalid_event(action: Action, phase: str, round: int) -> dict:
    return make_event(
        phase=phase, round=round, actor=action.actor, kind="invalid",
        content=f"({action.kind} abstained: {'; '.join(action.errors)})",
        visible_to=[action.actor], llm_call_ids=action.call_ids,
        data={"action": action.kind, "raw": action.raw, "errors": action.errors},
    )


def build_graph(rt: MMGRuntime, checkpointer=None) -> BoundGraph:
    """The MMG graph (compiled once per process, :func:`compiled_graph`) bound to ``rt``.

    Args:
        rt: the runtime (agents, players, victims...).
        checkpointer: a LangGraph checkpointer (e.g. ``SqliteSaver``) for resume, or None.

    Returns:
        A :class:`mas_agents.graphs.compiled.BoundGraph`; stream or invoke with ``{"events": []}`` and a config
        holding a ``thread_id`` and ``recursion_limit`` >= ``rt.step_bound()``.
    """
    return BoundGraph(compiled_graph(), rt, checkpointer)


@once
def compiled_graph():
    """The MMG graph, compiled once per process and shared by every game and thread; every node
    reads its game's :class:`MMGRuntime` from LangGraph's run context (``runtime.context``)."""
    return builder().compile()


def builder() -> StateGraph:
    """The murder mystery's uncompiled ``StateGraph`` (state :class:`MMGState`), for a user's own
    graph: compile it with a checkpointer, an ``interrupt_before`` for a person, or add nodes of
    one's own, then run it with ``context=`` an :class:`MMGRuntime` (its nodes read the game from
    the run context, :mod:`mas_agents.graphs.compiled`). :func:`compiled_graph` compiles it as it is."""

    def setup(state: MMGState, runtime: Runtime[MMGRuntime]) -> dict:
        rt = runtime.context
        players = rt.players
        victims_txt = ", ".join(rt.victims)
        events = [make_event(phase="setup", actor="game", kind="start",
                             content=f"The game \"{rt.title}\" begins. Players: {', '.join(players)}. "
                                     f"Victim(s): {victims_txt}.")]
        for p in players:
            a = rt.agents[p]
            events.append(make_event(
                phase="setup", actor="game", kind="script", visible_to=[p],
                content=f"{p} receives their private script ({len(a.persona.script)} characters) "
                        f"and goals; role: {a.persona.role}.",
                data={"role": a.persona.role, "agent": a.spec}))
        return {"events": events, "intro_i": 0, "cursor": 0, "pending": None, "votes": [], "outcome": None}

    def introduce(state: MMGState, runtime: Runtime[MMGRuntime]) -> dict:
        rt = runtime.context
        players = rt.players
        victims_txt = ", ".join(rt.victims)
        i = state["intro_i"]
        name = players[i]
        req = ActionRequest(
            game=rules.GAME,
            kind="introduce", actor=name,
            prompt=(f"It is your turn to introduce yourself to the other players: who you are, and "
                    f"how you know {victims_txt}."),
            query=f"{name} who I am, my job, my relationship with {victims_txt}")
        act, planning, counts = rt.act(name, state["events"], req)
        if act.valid:
            ev = make_event(phase="introduction", actor=name, kind="introduce", content=act.value,
                            llm_call_ids=act.call_ids, data={"valid": True, "reasoning": act.reasoning})
            return {"events": planning + [ev], "intro_i": i + 1, "agent_stats": counts}
        return {"events": planning + [_invalid_event(act, "introduction", 0)], "intro_i": i + 1,
                "agent_stats": counts}

    def ask(state: MMGState, runtime: Runtime[MMGRuntime]) -> dict:
        rt = runtime.context
        players = rt.players
        victims_txt = ", ".join(rt.victims)
        rnd, asker = rt.schedule[state["cursor"]]
        targets = rules.other_players(asker, players)
        req = ActionRequest(
            game=rules.GAME,
            kind="ask", actor=asker, choices=targets,
            prompt=(f"Round {rnd} of {rt.rounds} of questioning. Choose one player to question and ask "
                    f"them one question that helps find out who killed {victims_txt}. Players you can ask:"),
            query=f"Who killed {victims_txt}? suspicious, motive, alibi, last seen",
            context={"round": rnd})
        act, planning, counts = rt.act(asker, state["events"], req)
        if not act.valid:
            return {"events": planning + [_invalid_event(act, "questioning", rnd)], "pending": None,
                    "cursor": state["cursor"] + 1, "agent_stats": counts}
        q = {"round": rnd, "asker": asker, "target": act.value["target"], "question": act.value["question"]}
        ev = make_event(phase="questioning", round=rnd, actor=asker, kind="ask",
                        content=act.value["question"], llm_call_ids=act.call_ids,
                        data={"target": q["target"], "reasoning": act.reasoning})
        return {"events": planning + [ev], "pending": q, "agent_stats": counts}

    def answer(state: MMGState, runtime: Runtime[MMGRuntime]) -> dict:
        rt = runtime.context
        q = state["pending"]
        target = q["target"]
        req = ActionRequest(
            game=rules.GAME,
            kind="answer", actor=target,
            prompt=f"{utterance(q['asker'] + ' asks you', q['question'])}\nAnswer {q['asker']}.",
            query=q["question"], context=dict(q))
        act, planning, counts = rt.act(target, state["events"], req)
        if act.valid:
            ev = make_event(phase="questioning", round=q["round"], actor=target, kind="answer",
                            content=act.value, llm_call_ids=act.call_ids,
                            data={"asker": q["asker"], "question": q["question"], "reasoning": act.reasoning})
        else:
            ev = _invalid_event(act, "questioning", q["round"])
            ev["visible_to"] = [EVERYONE]
            ev["content"] = f"({target} did not answer)"
        return {"events": planning + [ev], "pending": None, "cursor": state["cursor"] + 1, "agent_stats": counts}

    def after_turn(state: MMGState, runtime: Runtime[MMGRuntime]) -> str:
        rt = runtime.context
        if state.get("pending"):
            return "answer"
        cur = state["cursor"]
        if cur >= len(rt.schedule) or rt.schedule[cur][0] != rt.schedule[cur - 1][0]:
            return "round_end"
        return "ask"

    def round_end(state: MMGState, runtime: Runtime[MMGRuntime]) -> dict:
        rt = runtime.context
        players = rt.players
        rnd = rt.schedule[state["cursor"] - 1][0]
        events = [make_event(phase="questioning", round=rnd, actor="game", kind="round_end",
                             content=f"Round {rnd} of questioning is over.")]
        seen = state["events"] + events
        with counting() as counts:
            for p in players:
                events += rt.agents[p].end_round(rnd, seen)
        return {"events": events, "agent_stats": counts}

    def after_round(state: MMGState, runtime: Runtime[MMGRuntime]) -> str:
        rt = runtime.context
        return "ask" if state["cursor"] < len(rt.schedule) else "vote_start"

    def after_setup(state: MMGState, runtime: Runtime[MMGRuntime]) -> str:
        return "introduce" if runtime.context.players else "vote_start"

    def after_intro(state: MMGState, runtime: Runtime[MMGRuntime]) -> str:
        rt = runtime.context
        players = rt.players
        if state["intro_i"] < len(players):
            return "introduce"
        return "ask" if rt.schedule else "vote_start"

    def vote_start(state: MMGState, runtime: Runtime[MMGRuntime]) -> dict:
        rt = runtime.context
        victims_txt = ", ".join(rt.victims)
        return {"events": [make_event(phase="voting", actor="game", kind="announce",
                                      content="Questioning is over. Every player now votes, in private, "
                                              f"on who killed {victims_txt}.")]}

    def fan_out(state: MMGState, runtime: Runtime[MMGRuntime]) -> list[Send]:
        rt = runtime.context
        players = rt.players
        done = {(v["voter"], v["victim"]) for v in state.get("votes", [])}
        sends = [Send("vote_one", {"voter": p, "victim": v, "events": state["events"]})
                 for v in rt.victims for p in players if (p, v) not in done]
        return sends or [Send("tally", state)]

    def vote_one(payload: dict, runtime: Runtime[MMGRuntime]) -> dict:
        rt = runtime.context
        players = rt.players
        voter, victim = payload["voter"], payload["victim"]
        req = ActionRequest(
            game=rules.GAME,
            kind="vote", actor=voter, choices=rules.other_players(voter, players),
            prompt=f"Voting. Who killed {victim}? Vote for one player from this list:",
            query=f"Who killed {victim}? motive, opportunity, weapon, lies, timeline",
            context={"victim": victim})
        act, planning, counts = rt.act(voter, payload["events"], req)
        record = {"voter": voter, "victim": victim, "choice": act.value if act.valid else None,
                  "valid": act.valid}
        ev = make_event(phase="voting", actor=voter, kind="vote" if act.valid else "invalid",
                        content=(f"votes {act.value} for the murder of {victim}" if act.valid
                                 else f"abstains on {victim} (unreadable vote)"),
                        visible_to=[voter], llm_call_ids=act.call_ids,
                        data={"victim": victim, "choice": record["choice"], "reasoning": act.reasoning,
                              "errors": act.errors, "raw": act.raw if not act.valid else "",
                              **({} if act.valid else {"action": "vote"})})   # invalid_by_kind names it
        return {"votes": [record], "vote_events": [{"voter": voter, "victim": victim, "events": planning + [ev]}],
                "agent_stats": counts}

    def tally(state: MMGState, runtime: Runtime[MMGRuntime]) -> dict:
        rt = runtime.context
        players = rt.players
        per_victim = []
        order = {(p, v): (i, j) for i, p in enumerate(players) for j, v in enumerate(rt.victims)}
        groups = sorted(state.get("vote_events") or [], key=lambda g: order[(g["voter"], g["victim"])])
        events = [e for g in groups for e in g["events"]]
        for v in rt.victims:
            votes = {r["voter"]: r["choice"] for r in state["votes"] if r["victim"] == v}
            res = rules.victim_outcome(v, votes, rt.murderers.get(v, []))
            per_victim.append(res)
            who = res["accused"] or "no one (tie or no valid votes)"
            events.append(make_event(
                phase="outcome", actor="game", kind="accuse",
                content=(f"For the murder of {v}, the vote accuses {who}. Votes: "
                         + ", ".join(f"{k}: {n}" for k, n in sorted(res["counts"].items()))
                         + f". The true murderer: {', '.join(res['murderers']) or 'unknown'}. "
                         + ("Correct." if res["correct"] else "Wrong.")),
                data=res))
        return {"events": events, "outcome": rules.game_outcome(per_victim)}

    g = StateGraph(MMGState)
    g.add_node("setup", setup)
    g.add_node("introduce", introduce)
    g.add_node("ask", ask)
    g.add_node("answer", answer)
    g.add_node("round_end", round_end)
    g.add_node("vote_start", vote_start)
    g.add_node("vote_one", vote_one)
    g.add_node("tally", tally)
    g.add_edge(START, "setup")
    g.add_conditional_edges("setup", after_setup, ["introduce", "vote_start"])
    g.add_conditional_edges("introduce", after_intro, ["introduce", "ask", "vote_start"])
    g.add_conditional_edges("ask", after_turn, ["answer", "ask", "round_end"])
    g.add_conditional_edges("answer", after_turn, ["answer", "ask", "round_end"])
    g.add_conditional_edges("round_end", after_round, ["ask", "vote_start"])
    g.add_conditional_edges("vote_start", fan_out, ["vote_one", "tally"])
    g.add_edge("vote_one", "tally")
    g.add_edge("tally", END)
    return g
