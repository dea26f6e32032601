"""The *O-CoT* (objective-guided chain of thought) baseline adapted to the murder-mystery game
(PLAYER* Appendix C.2; procedure as in the PLAYER* repository's ``main_O-CoT.py``).

O-CoT makes a character ask questions in the service of its own objectives: before asking, it
thinks about each objective in turn (what it knows, what it still has to find out) and then
crafts its question from those reflections. Answers come from script and dialogue, with no extra
step.

``ask`` (k + 1 model calls, k = number of objectives, at most ``max_objectives`` = 3)
    1. k ``think`` calls (purposes ``ocot.objective#1`` ... ``ocot.objective#k``), one per
       objective, in the order the goals list them; each retrieves memory for its objective.
    2. the agent's own ``ask`` call (``ask#1``) with every reflection as context.

``answer`` (1 call), introduce / vote / mcq: the agent's default + chain-of-thought.

Objectives come from :func:`split_objectives` on ``persona.goals`` (WellPlay ``acts_goal``):
numbered lines (``1.``, ``①``...) become separate objectives, point annotations are dropped, and
a goals text with no structure is one objective. With no goals at all the one objective is
"find out who killed <victims>".

Events (private): ``ocot_reflection`` on every ask (``data``: ``objectives``, ``reflections``),
citing the k reflection calls.

Deviations from the upstream code (github.com/alickzhu/PLAYER, ``main_O-CoT.py``):

* Upstream first turns the goals into questions with one extra model call per character at the
  start of the game (JSON output); here the goals are split by rule (no model call, nothing to
  mis-parse), and the reflection prompt phrases each objective as a question to itself.
* Upstream reflects on every objective; here at most ``max_objectives`` (default 3, the first
  ones listed) to bound the cost per question on a small machine. WellPlay characters list up
  to ~8 goals.
* Upstream reflects once per (asker, target) pair because its asker questions every suspect in
  turn; here once per ask, and the ask call itself chooses whom to question.

Errors: :func:`split_objectives` raises nothing; model/transport errors from ``agent.think``
propagate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mas_agents.planners.base import BlockAgent, Contribution
from mas_agents.planners.cot import ChainOfThought

_LITERAL_NEWLINE = re.compile(r"\\\s*[nN]")           # WellPlay goals hold literal "\n", "\ n", "\N"
_CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮⑯⑰⑱⑲⑳"
_ITEM_START = re.compile(rf"^\s*(?:\d{{1,2}}\s*[.、)]|[{_CIRCLED}])\s*")
_ITEM_INNER = re.compile(rf"\s(?=\d{{1,2}}[.、)]\s)|(?=[{_CIRCLED}])")
_POINTS = re.compile(r"[(（]\s*\d+\s*points?\s*[)）]\.?", re.IGNORECASE)


def split_objectives(goals: str) -> list[str]:
    """Split a character's goals text into its objectives, in order.

    Handles the WellPlay shapes: ``"1. ...\\n2. ..."``, circled numbers (``① ... ② ...``), literal
    backslash-n separators, point annotations ``(5 points)`` (dropped), header lines ending in
    ``:`` and bracketed headers ``[Things ...]`` (dropped). A text without numbering splits on
    line breaks. Returns ``[]`` for an empty text.
    """
    text = _LITERAL_NEWLINE.sub("\n", goals or "")
    items: list[str] = []
    for line in text.splitlines():
        for piece in _ITEM_INNER.split(line):
            piece = _POINTS.sub("", _ITEM_START.sub("", piece)).strip().strip("'\"").strip()
            if len(piece) < 4 or piece.endswith((":", "：")) or re.fullmatch(r"[\[【].*[\]】]", piece):
                continue
            items.append(piece)
    return items


@dataclass
class ObjectiveCoT:
    """O-CoT baseline block: one reflection per objective before each question.

    Args:
        max_objectives: cap on reflections per ask (>= 1).
        reflect_tokens: completion budget of each reflection.
        name: spec name.

    Raises:
        ValueError: ``max_objectives`` < 1.
    """

    max_objectives: int = 3
    reflect_tokens: int = 120
    name: str = "ocot"

    def __post_init__(self) -> None:
        if self.max_objectives < 1:
            raise ValueError(f"max_objectives must be >= 1, got {self.max_objectives}")

    def objectives(self, agent: BlockAgent) -> list[str]:
        """The (capped) objectives this block reflects on for ``agent``."""
        objs = split_objectives(agent.persona.goals)
        if not objs:
            objs = [f"Find out who killed {' and '.join(agent.persona.victims) or 'the victim'}."]
        return objs[: self.max_objectives]

    def contribute(self, agent: BlockAgent, request) -> Contribution | None:
        """``ask`` -> the objective reflections as context; every other kind -> None."""
        if request.kind != "ask":
            return None
        victims = " and ".join(agent.persona.victims) or "the victim"
        objs = self.objectives(agent)
        reflections: list[str] = []
        call_ids: list[str] = []
        for k, obj in enumerate(objs, 1):
            prompt = (f"One of your objectives in this game: {obj}\n"
                      f"Ask yourself, in one or two sentences: what do you already know that serves "
                      f"this objective, and what do you still need to learn from the other players "
                      f"about it or about the death of {victims}?")
            text, cid = agent.think(prompt, purpose=f"ocot.objective#{k}", query=f"{obj} {victims}",
                                    max_tokens=self.reflect_tokens)
            reflections.append(text.strip())
            call_ids.append(cid)
        lines = [f"Objective {k}: {o}\nYour thought: {r or '(none)'}"
                 for k, (o, r) in enumerate(zip(objs, reflections), 1)]
        agent.emit("ocot_reflection", " | ".join(f"{o} -> {r}" for o, r in zip(objs, reflections)),
                   data={"objectives": objs, "reflections": reflections},
                   round=int(request.context.get("round", 0) or 0), llm_call_ids=call_ids)
        return Contribution(
            context="What you thought about your objectives just now:\n" + "\n".join(lines),
            instructions="Ask the question that moves these objectives forward the most.",
            notes={"ocot_objectives": len(objs)})


def ocot_blocks() -> list:
    """Fresh blocks of the O-CoT baseline agent: ``[ObjectiveCoT(), ChainOfThought()]``."""
    return [ObjectiveCoT(), ChainOfThought()]
