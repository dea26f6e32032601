"""The prompt layout every game shares (written for this project): the user message with the
agent's memory, the task, the numbered choices and the answer format of each action kind; the
re-prompt. A game's rules text lives with the game (``graphs/<game>/``).

Layout for prefix caching (issue 48). Every server worth the name reuses the longest token prefix
a new prompt shares with one it has already computed (llama.cpp's slots, llama-cpp-python's RAM
cache, vLLM's prefix caching, SGLang's radix cache; hosted APIs bill it at a discount), so a prompt
leads with what changes least and ends with what is specific to the call:

1. the system message: what is fixed for the game and the character (rules, the case, role, goals);
2. the character's WHOLE script, in document order, when the retrieval budget covers it
   (:attr:`Recall.script_whole`): identical in every call of that character;
3. the memory that changes less often first (:meth:`Recall.before_task`): during the game, the
   script excerpts of this query (a recurring query, an agent's every "ask" turn, selects the same
   ones) before the dialogue, which grows at its end; after the game (the WellPlay evaluation,
   :attr:`Recall.dialogue_closed`), the whole dialogue, now fixed, before the script excerpts,
   which change with every question;
4. the blocks' context, the task with its choices, then a closed dialogue's excerpts when its
   budget does not cover it (:meth:`Recall.after_task`: two questions of one character then share
   everything up to the question when the script budget covers the script), the blocks'
   instructions, the answer format.

Retrieved excerpts are in document order (:meth:`memory.VectorMemory.retrieve`, unchanged: the
set a budget selects is the same). Measured on the README demo with the fake model of
``scripts/fake_runs.py``, share of the prompt text an ideal prefix cache could reuse
(:func:`mas_agents.game.cost.prompt_cost`): the evaluation at the default budgets 25 % with the layout
before issue 48 (script excerpts, then the dialogue, then the question), 46 % with this one; 87 %
when the script budget covers the script. The gameplay's order was already the better one (53 %
against 26 % with the dialogue first).

"""

from __future__ import annotations

from dataclasses import dataclass

from mas_agents.action_kinds import LETTERS
from mas_agents.planners.base import ActionRequest, action_kind


def default_system(name: str, goals: str = "") -> str:
    """The system message of an agent whose game wrote none (``Persona.system`` empty): who it
    is, and its goals when it has any. Every game of this repository writes its own
    (``graphs/<game>/prompts.py`` or the game's player)."""
    text = f"You are {name}. Speak as {name}, in the first person."
    return text + (f"\n\nYour goals: {goals.strip()}" if goals.strip() else "")


def format_choices(request: ActionRequest) -> str:
    """The numbered (vote/ask) or lettered (a kind marked ``lettered``: mcq) list of choices, or ''."""
    if not request.choices:
        return ""
    if action_kind(request.kind).lettered:
        return "\n".join(f"{LETTERS[i]}) {c}" for i, c in enumerate(request.choices))
    return "\n".join(f"{i + 1}. {c}" for i, c in enumerate(request.choices))


def format_instruction(request: ActionRequest) -> str:
    """The answer-format line the strict parser expects for ``request``: its kind's registered
    :attr:`mas_agents.planners.base.ActionKind.instruction` (the built-in kinds' lines: :mod:`mas_agents.action_kinds`)."""
    return action_kind(request.kind).instruction(request)


@dataclass(frozen=True)
class Recall:
    """What an agent's memory gives one call (:meth:`mas_agents.agents.Agent.recall`).

    Attributes:
        script: the script chunks retrieved for the query, in document order, one per line.
        script_whole: True when the script budget covers the whole script (then ``script`` is all
            of it, identical in every call of the character).
        dialogue: the dialogue chunks retrieved, in the order they were heard, one per line.
        dialogue_whole: True when the dialogue budget covers everything heard so far.
        dialogue_closed: True when the dialogue no longer grows (the game is over: the WellPlay
            evaluation); then the whole dialogue is as fixed as the script.
    """

    script: str = ""
    script_whole: bool = True
    dialogue: str = ""
    dialogue_whole: bool = True
    dialogue_closed: bool = False

    def _script(self) -> str:
        if not self.script:
            return ""
        if self.script_whole:
            return f"Your script:\n{self.script}"
        return f"Excerpts from your script (chosen for this, in script order):\n{self.script}"

    def _dialogue(self) -> str:
        if not self.dialogue:
            return ""
        if self.dialogue_whole:
            return f"What you have heard, in order:\n{self.dialogue}"
        return f"Excerpts of what you have heard (chosen for this, in order):\n{self.dialogue}"

    def before_task(self) -> list[str]:
        """The headed memory sections that lead the user message, most stable first: the whole
        script; the whole dialogue once it is closed; the script excerpts of this query; the
        dialogue while it still grows (whole: append-only; or this query's excerpts). Empty
        sections are left out.

        Why the script excerpts come before a growing dialogue: a query that recurs (an agent's
        every "ask" turn) selects the same excerpts while the dialogue grows at its end, so the
        prompt stays a prefix of the next one; with the dialogue first, every new exchange cut the
        prefix before the excerpts (the README demo's game on a fake model: 26 % of its prompt
        text reusable instead of 53 %)."""
        script, dialogue = self._script(), self._dialogue()
        if not self.dialogue_closed:
            order = [script, dialogue]
        elif self.script_whole:
            order = [script, dialogue if self.dialogue_whole else ""]
        else:
            order = [dialogue if self.dialogue_whole else "", script]
        return [p for p in order if p]

    def after_task(self) -> list[str]:
        """The excerpts of a closed dialogue that a budget does not cover (chosen per question,
        the last memory a question's prompt differs in): after the question, so two questions
        share everything up to it when the script budget covers the script."""
        if self.dialogue_closed and not self.dialogue_whole and self.dialogue:
            return [self._dialogue()]
        return []


def memory_block(recall: Recall) -> list[str]:
    """The headed memory sections of a free-text call (:meth:`mas_agents.agents.Agent.think`),
    in the order of :meth:`Recall.before_task` (then :meth:`Recall.after_task`)."""
    return recall.before_task() + recall.after_task()


def user_prompt(request: ActionRequest, recall: Recall, block_context: str, block_instructions: str) -> str:
    """The user message of an action, in the order of the module docstring: the memory that leads
    (:meth:`Recall.before_task`), the blocks' context, the task with its choices, the memory that
    follows (:meth:`Recall.after_task`), the blocks' instructions, the answer format."""
    parts = recall.before_task()
    if block_context:
        parts.append(block_context)
    task = request.prompt
    choices = format_choices(request)
    if choices:
        task += "\n" + choices
    parts.append(task)
    parts += recall.after_task()
    if block_instructions:
        parts.append(block_instructions)
    parts.append(format_instruction(request))
    return "\n\n".join(parts)


def reprompt(error: str, request: ActionRequest) -> str:
    """The single follow-up sent after an unparseable reply."""
    return (
        f"I could not read your reply ({error}). Reply again, this time with only the required "
        f"line(s) and nothing else.\n{format_instruction(request)}"
    )
