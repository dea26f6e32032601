"""The p-beauty contest as a LangGraph flow: each round every player guesses (sealed: nobody
sees a guess before the round's result), then the round is scored. Compiled once per process;
nodes read the game's runtime from the run context (:mod:`mas_agents.graphs.compiled`)."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from mas_agents.graphs.compiled import BoundGraph, once
from mas_agents.events import make_event
from mas_agents.planners.base import ActionRequest
from toygame import rules


class State(TypedDict, total=False):
    events: Annotated[list, operator.add]
    round: int


@dataclass
class Runtime_:
    players: list[str]
    agents: dict[str, Any]
    rounds: int = 1
    stats: dict[str, int] = field(default_factory=lambda: {"invalid_actions": 0})


def _guess(state: State, runtime: Runtime[Runtime_]) -> dict:
    rt = runtime.context
    rnd = state.get("round", 0) + 1
    events, guesses = [], {}
    for p in rt.players:
        agent = rt.agents[p]
        agent.observe(state.get("events", []))
        req = ActionRequest(kind="contribute", actor=p, max_value=rules.MAX_GUESS, game=rules.GAME,
                            prompt=(f"Round {rnd}. Name a whole number from 0 to {rules.MAX_GUESS}. The winner is "
                                    f"whoever is nearest to two thirds of the average of all numbers named."))
        act = agent.act(req, phase="guess")
        if act.value is None:
            rt.stats["invalid_actions"] += 1
            events.append(make_event(phase="guess", actor=p, kind="invalid", content="no readable guess",
                                     visible_to=["game"], round=rnd, llm_call_ids=act.call_ids,
                                     data={"action": "contribute"}))
            continue
        guesses[p] = int(act.value)
        events.append(make_event(phase="guess", actor=p, kind="guess", content=str(act.value),
                                 visible_to=["game"], round=rnd, llm_call_ids=act.call_ids,
                                 data={"guess": int(act.value)}))
    won = rules.winners(guesses)
    t = rules.target(guesses)
    events.append(make_event(phase="result", actor="game", kind="round_result", round=rnd,
                             content=f"Target {float(t):.2f}; nearest: {', '.join(won) or 'nobody'}",
                             data={"guesses": guesses, "target": [t.numerator, t.denominator], "winners": won}))
    return {"events": events, "round": rnd}


def _more(state: State, runtime: Runtime[Runtime_]) -> str:
    return "guess" if state["round"] < runtime.context.rounds else END


@once
def compiled_graph():
    g = StateGraph(State, context_schema=Runtime_)
    g.add_node("guess", _guess)
    g.add_edge(START, "guess")
    g.add_conditional_edges("guess", _more, ["guess", END])
    return g.compile()


def build_graph(rt: Runtime_) -> BoundGraph:
    return BoundGraph(compiled_graph(), rt)
