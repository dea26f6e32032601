"""The planner-block protocol.

An agent is ``model + memory + [blocks]`` (DESIGN.md, "Planner block protocol"). Before each
action the agent asks every block, in order, for a :class:`Contribution`: extra prompt context
(a belief summary, a suspect list), extra instructions (think step by step), a narrowed choice
list, or the whole action (e.g. a PGM vote that needs no model call). Blocks never import a
game; they see only the :class:`~mas_agents.actions.ActionRequest` and the agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    from mas_agents.actions import Action, ActionRequest


@dataclass
class Contribution:
    """What one block adds to one action.

    Attributes:
        context: text placed in the prompt's context section (after memory excerpts).
        instructions: text appended to the task instructions (e.g. chain-of-thought).
        choices: a narrowed list of legal choices (must be a subset of the request's).
        action: a complete action; when set, the agent uses it and makes no model call.
        append: text the agent appends to its parsed free-text reply (e.g. the WiS attack and
            defense strategies add a fixed sentence to a spy's description).
        notes: structured facts for the event log (readings, scores...).
    """

    context: str = ""
    instructions: str = ""
    choices: list[str] | None = None
    action: "Action | None" = None
    append: str = ""
    notes: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class PlannerBlock(Protocol):
    """A composable piece of an agent's planning.

    Attributes:
        name: the block's spec name (``cot``, ``player_star``, ``pgm``...).
    """

    name: str

    def contribute(self, agent: Any, request: "ActionRequest") -> Contribution | None:
        """Return this block's contribution to ``request`` (or None to pass)."""
        ...


# Optional hooks a block may define (looked up with getattr, so they are not part of the
# Protocol's required surface):
#   on_event(agent, event)        every event the agent can see, once, in order (Agent.observe)
#   on_round_end(agent, round)    after each questioning round (Agent.end_round)
# A block records what it decided with ``agent.emit(kind, content, data=...)``: private
# planning events that the game appends to events.jsonl.
