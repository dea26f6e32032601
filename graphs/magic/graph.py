"""The five MAgIC games as LangGraph ``StateGraph`` s (MAgIC §3, Appendix A).

Flows (always 3 players, ``Player 1..3``)::

    chameleon / undercover:
        START -> setup -> turn (loops over the clue schedule: every player states who they are
                 and their role, the speaker gives a clue, every player fills the belief
                 questionnaire) -> vote (Send fan-out, private) -> tally -> [guess] -> finish
    cost_sharing:
        START -> setup -> propose (Send fan-out) -> collect -> ballot (Send fan-out, public)
              -> count --agreed or round 5--> finish, else -> propose
    prisoners_dilemma / public_good:
        START -> setup -> move (Send fan-out, hidden) -> reveal --round 5--> finish, else -> move

Rules are the pure functions of :mod:`mas_agents.graphs.magic.rules`; settings come from
:mod:`mas_agents.graphs.magic.dataset`; every step writes the events of :mod:`mas_agents.graphs.magic.events`, from
which :mod:`mas_agents.graphs.magic.metrics` computes the capability metrics. Agents live in
:class:`MagicRuntime`, outside the state. Prompts are written here (our own); the upstream
configs were read for the rules only.

Choices of ours (documented, the paper leaves them open): an unreadable Prisoner's-Dilemma choice
is logged as ``None`` and scored as *cooperate*; an unreadable or impossible contribution is
logged as ``None`` and counts as 0; a proposal that is unreadable or does not sum to 100 (±0.5)
is ``None`` and cannot be voted for; ``--replay-openings`` replays recorded clues of defender
seats in the first clue round while no challenger seat has spoken yet (the data README's rule).

The parts, one idea a module (issue 51 item 6): the shared state and runtime
(:mod:`mas_agents.graphs.magic.runtime`) and one module per graph
(:mod:`mas_agents.graphs.magic.deduction`, :mod:`mas_agents.graphs.magic.cost_sharing`,
:mod:`mas_agents.graphs.magic.repeated`); this module picks and compiles them.
"""

from __future__ import annotations

from langgraph.graph import StateGraph

from mas_agents.graphs.compiled import BoundGraph, once
from mas_agents.graphs.magic.cost_sharing import _cost_sharing_graph
from mas_agents.graphs.magic.deduction import _deduction_graph
from mas_agents.graphs.magic.repeated import _repeated_graph
from mas_agents.graphs.magic.runtime import MagicRuntime


def build_graph(rt: MagicRuntime) -> BoundGraph:
    """The graph of ``rt.scenario`` (compiled once per process, :func:`compiled_graph`) bound to
    ``rt``; stream or invoke with ``{"events": [], "moves": []}`` and ``{"recursion_limit": 300}``."""
    return BoundGraph(compiled_graph(graph_kind(rt.scenario)), rt)


def graph_kind(scenario: str) -> str:
    """Which of the three graphs plays ``scenario``: ``deduction`` (Chameleon, Undercover),
    ``cost_sharing``, or ``repeated`` (prisoner's dilemma, public good)."""
    if scenario in ("chameleon", "undercover"):
        return "deduction"
    return "cost_sharing" if scenario == "cost_sharing" else "repeated"


@once
def compiled_graph(kind: str):
    """The graph of ``kind`` (:func:`graph_kind`), compiled once per process and shared by every
    game and thread; every node reads its game's :class:`MagicRuntime` from LangGraph's run
    context (``runtime.context``).

    Raises:
        KeyError: an unknown ``kind``.
    """
    return builder(kind).compile()


def builder(kind: str) -> StateGraph:
    """The uncompiled ``StateGraph`` (state :class:`MagicState`) of ``kind`` (:func:`graph_kind`:
    ``deduction``, ``cost_sharing`` or ``repeated``), for a user's own graph: compile it with a
    checkpointer, an interrupt or nodes of one's own and run it with ``context=`` a
    :class:`MagicRuntime`. :func:`compiled_graph` compiles it once per process.

    Raises:
        KeyError: an unknown ``kind``.
    """
    return {"deduction": _deduction_graph, "cost_sharing": _cost_sharing_graph, "repeated": _repeated_graph}[kind]()
