"""PLAYER* relationship map block (§2.3: "each agent first updates its understanding of
interpersonal relationships"). The map itself (nodes, edges, sources, labels, summaries) is
:mod:`mas_agents.planners.player_star.relation_graph`; this module is the block that keeps it up to date
and logs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mas_agents.planners.base import BlockAgent, Contribution
from mas_agents.planners.player_star.relation_graph import (MAX_MODEL_PAIRS, MODEL_LABELS, add_relation, graph_json,
                                                 relation_summary, update_from_event)
from mas_agents.planners.player_star.state import PlayerStarState, find_state
from mas_agents.utterance import quote


@dataclass
class RelationMap:
    """Block: keeps the agent's relationship map up to date and logs it every round.

    * ``on_event``: every introduction/answer the agent hears updates the map (rule-based; plus at
      most :data:`MAX_MODEL_PAIRS` ``choose`` calls per answer when ``relation_model`` is on).
    * ``on_round_end``: emits a private ``relations`` event with the node-link JSON of the map.
    * :meth:`relation_summary` (a, b) -> str for other blocks and the evaluation.

    Contributes nothing to actions itself (the sensors and questioning read the map).

    Args:
        state: the agent's shared PLAYER* state (its ``graph`` is the map).
    """

    state: PlayerStarState = field(default_factory=PlayerStarState)
    name: str = "player_star.relations"
    model_labelled: set = field(default_factory=set)

    def contribute(self, agent: BlockAgent, request: Any) -> Contribution | None:
        """On a WellPlay relation question (``mcq`` with category ``relation``): this agent's
        notes on the two characters the question names, as context (PLAYER* §2.3: the map is
        fed to the relation questions at evaluation)."""
        if getattr(request, "kind", None) != "mcq" or (request.context or {}).get("category") != "relation":
            return None
        st = self.state.ensure(agent)
        text = request.prompt
        named = sorted((n for n in st.names() if n and n in text), key=text.index)
        if len(named) < 2 or st.graph is None:
            return None
        return Contribution(context="Your relationship notes: " + relation_summary(st.graph, named[0], named[1], me=st.me),
                            notes={"relation": named[:2]})

    def on_event(self, agent: BlockAgent, event: dict) -> None:
        st = self.state.ensure(agent)
        st.observe(event)
        if st.graph is None:
            return
        touched = update_from_event(st.graph, event, st.names())
        if st.config.relation_model and event.get("kind") == "answer" and event.get("actor") != st.me:
            self._label_with_model(agent, event, touched)

    def _label_with_model(self, agent: BlockAgent, event: dict, touched: list[tuple[str, str]]) -> None:
        st = self.state
        speaker = event.get("actor", "")
        pairs = [p for p in dict.fromkeys(touched) if speaker in p and frozenset(p) not in self.model_labelled]
        for a, b in pairs[:MAX_MODEL_PAIRS]:
            self.model_labelled.add(frozenset((a, b)))
            act = agent.choose(
                f"From what {speaker} just said ({quote(str(event.get('content', ''))[:400])}), what is the relation "
                f"between {a} and {b}? Options:", list(MODEL_LABELS),
                query=f"{a} and {b}: relationship", context={"relation": [a, b], "round": event.get("round", 0)})
            if act.valid and act.value not in ("unclear",):
                add_relation(st.graph, a, b, [act.value],
                             {"source": "model", "round": int(event.get("round", 0)), "speaker": speaker,
                              "text": f"model label: {act.value}", "labels": [act.value], "call_ids": act.call_ids})

    def on_round_end(self, agent: BlockAgent, round: int) -> None:
        st = self.state.ensure(agent)
        if st.graph is None:
            return
        g = st.graph
        related = sorted(n for n in g.neighbors(st.me)) if st.me in g else []
        agent.emit("relations",
                   f"relationship map after round {round}: {g.number_of_nodes()} characters, "
                   f"{g.number_of_edges()} relations; related to me: {', '.join(related) or 'nobody yet'}",
                   data=graph_json(g), round=round)

    def relation_summary(self, a: str, b: str) -> str:
        """What this agent's map holds about a and b (see :func:`relation_summary`)."""
        if self.state.graph is None:
            return f"No known relation between {a} and {b}."
        return relation_summary(self.state.graph, a, b, me=self.state.me)


def agent_relation_summary(agent: BlockAgent, a: str, b: str) -> str:
    """``relation_summary(a, b)`` from ``agent``'s PLAYER* map; ``""`` when the agent has no map."""
    st = find_state(agent)
    if st is None or st.graph is None:
        return ""
    return relation_summary(st.graph, a, b, me=st.me)
