"""Our agents as nodes of a user's own LangGraph graph (issue 49 item 2): ``mas.node`` and
``mas.end_round`` (docs/api.md, "Your own LangGraph graph"; the tutorial docs/tutorials/langgraph.md).

A node is a plain callable ``state -> update``: nothing here imports LangGraph, so the user's graph
decides its own state, checkpointer and interrupts. Part of the public face beside
:mod:`mas_agents.api` (the top layer of the import contracts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from mas_agents.events import make_event
from mas_agents.planners.base import KINDS, ActionRequest

if TYPE_CHECKING:   # for the signatures only (the agent core and LangChain stay unimported until an agent is made)
    from mas_agents.agents import Agent

#: A LangGraph node as :func:`node` and :func:`end_round` make it: the graph's state (the user's own
#: schema, read by key) -> the update (``{events key: new events}`` and the ``output`` key).
Node = Callable[[Mapping[str, Any]], dict[str, Any]]

#: Aliases :func:`node` accepts for the action kinds of :data:`mas_agents.planners.base.KINDS`: the
#: decisions of issue 49 (speak, question, vote, answer).
NODE_KINDS = {"speak": "introduce", "question": "ask", "vote": "vote", "answer": "answer"}


def _value(v: object, state: Mapping[str, Any]) -> Any:
    return v(state) if callable(v) else v


def node(agent: Agent, kind: str, prompt: str | Callable[[Mapping[str, Any]], str], *,
         choices: Iterable[str] | Callable[[Mapping[str, Any]], Iterable[str]] | None = None,
         context: Mapping[str, Any] | Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None,
         round: int | Callable[[Mapping[str, Any]], int] | str = "round",
         visible_to: Iterable[str] = ("*",), events: str = "events", phase: str | None = None,
         output: str | None = None) -> Node:
    """A LangGraph node (``state -> update``) in which ``agent`` makes one decision.

    The node gives the agent the events of ``state[events]`` it has not seen (its memory and its
    blocks' ``on_event`` hooks read them, as in our games: :meth:`mas_agents.agents.Agent.observe`),
    asks it an :class:`mas_agents.planners.base.ActionRequest` (strict parsing, one re-prompt, its blocks
    consulted) and returns ``{events: [its blocks' planning events..., the decision's event]}``:
    add ``events: Annotated[list, operator.add]`` to the graph's state. The decision's event is a
    :func:`mas_agents.events.make_event` dict (``kind``, ``actor``, ``content``, ``llm_call_ids``
    of its calls, ``data``: the parsed value, ``valid``, and ``context``), every model call is
    accounted and recorded by the agent's model (:func:`mas_agents.api.recorder`).

    Args:
        agent: an agent (:func:`mas_agents.api.agent`).
        kind: ``"speak"`` (an introduction: ``Introduction: ...``), ``"question"`` (``To:`` one of
            ``choices`` and ``Question:``), ``"answer"``, ``"vote"`` (one of ``choices``), or any
            kind of :data:`mas_agents.planners.base.KINDS`.
        prompt: the task text, or ``prompt(state) -> str``.
        choices: legal choices (``vote``, ``question``: whom to ask), or ``choices(state)``.
        context: the request's facts (``{"asker": ..., "question": ...}`` for ``answer``: its
            event keeps them, so a dialogue chunk is remembered as asked), or ``context(state)``.
        round: the state key holding the round number, an int, or ``round(state)``.
        visible_to: who sees the decision's event (``["*"]``: everyone); planning events are the
            agent's own.
        events: the state key of the event list.
        phase: the phase written to the call records and the event (default: the kind).
        output: also write the parsed value under this state key (e.g. ``"accused"``).

    Returns:
        The node function.

    Raises:
        ValueError: an unknown kind (when the node is made).
    """

    k = NODE_KINDS.get(kind, kind)
    if k not in KINDS:
        raise ValueError(f"node: unknown kind {kind!r}; expected one of {', '.join([*NODE_KINDS, *KINDS])}")

    def run(state: Mapping[str, Any]) -> dict[str, Any]:
        seen = list(state.get(events) or [])
        agent.observe(seen)
        rnd = state.get(round, 0) if isinstance(round, str) else _value(round, state)
        ctx = dict(_value(context, state) or {})
        ch = _value(choices, state)
        req = ActionRequest(kind=k, actor=agent.name, prompt=_value(prompt, state),
                            choices=None if ch is None else list(ch), context=ctx, game=agent.game)
        act = agent.act(req, phase=phase or k)
        value = act.value
        content = (value.get("question", "") if isinstance(value, dict) else
                   "" if value is None else ", ".join(sorted(value)) if isinstance(value, frozenset) else str(value))
        data = {**ctx, "valid": act.valid, "value": sorted(value) if isinstance(value, frozenset) else value}
        if k == "ask" and isinstance(value, dict):
            data["target"] = value.get("target")
        if not act.valid:
            data["errors"] = list(act.errors)
        ev = make_event(phase=phase or k, actor=agent.name, kind=k, content=content, visible_to=visible_to,
                        round=rnd or 0, llm_call_ids=act.call_ids, data=data)
        update: dict[str, Any] = {events: agent.drain_events() + [ev]}
        if output:
            update[output] = value
        return update

    run.__name__ = f"{agent.name}_{k}".replace(" ", "_")
    return run


def end_round(agents: Iterable[Agent], *, round: str | int = "round", events: str = "events") -> Node:
    """A LangGraph node that ends a questioning round for ``agents`` as our games do
    (:meth:`mas_agents.agents.Agent.end_round`: read the new events, run each block's
    ``on_round_end``, e.g. PLAYER*'s pruner of the suspect list) and returns their planning events."""
    group = list(agents)

    def run(state: Mapping[str, Any]) -> dict[str, Any]:
        rnd = state.get(round, 0) if isinstance(round, str) else round
        seen = list(state.get(events) or [])
        out: list[dict[str, Any]] = []
        for a in group:
            out += a.end_round(rnd or 0, seen)
        return {events: out}

    return run
