"""Chain-of-thought block: ask the model to reason briefly before its tagged answer line.

The ``plain`` agent (README, "Agents") is memory retrieval + script and goals +
chain-of-thought (Wei et al. 2022 style "think step by step"). The reasoning stays private: the
parser keeps only the tagged line as the action and stores the text before it as
``Action.reasoning``.
"""

from __future__ import annotations

from dataclasses import dataclass

from mas_agents.planners.base import BlockAgent, Contribution

_INSTRUCTIONS = {
    "introduce": "First think in one or two short sentences about what to reveal and what to keep to yourself.",
    "ask": "First think in one or two short sentences about who knows something useful and what to ask.",
    "answer": "First think in one or two short sentences about what your script says on this.",
    "vote": "First think step by step in two or three short sentences: who had a motive and an opportunity?",
    "mcq": "First think step by step in two or three short sentences using the excerpts.",
}


@dataclass
class ChainOfThought:
    """Adds a short think-first instruction to every action kind it knows.

    Args:
        kinds: the action kinds to apply to (default: all MMG kinds).
    """

    kinds: tuple[str, ...] = tuple(_INSTRUCTIONS)
    name: str = "cot"

    def contribute(self, agent: BlockAgent, request) -> Contribution | None:
        """Return the think-first instruction for ``request.kind``, or None."""
        if not request.game.investigation:
            return None  # its texts are investigation (murder-mystery) texts; other games have their own blocks
        if request.kind not in self.kinds or request.kind not in _INSTRUCTIONS:
            return None
        return Contribution(instructions=_INSTRUCTIONS[request.kind])
