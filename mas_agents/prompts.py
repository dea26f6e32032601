"""The prompt layout every game shares (written for this project): the user message with the
retrieved excerpts, the task, the numbered choices and the answer format of each action kind;
the re-prompt. A game's rules text lives with the game (``graphs/<game>/``).

Layout for prefix caching (llama.cpp and vLLM reuse the longest common token prefix): the system message holds what is stable
for one agent (game rules, role, goals); the user message holds what varies (retrieved script
and dialogue excerpts, the task, the answer format), so consecutive calls of one agent share
their longest prefix in llama.cpp's KV cache and vLLM's prefix cache.

"""

from __future__ import annotations

from mas_agents.actions import LETTERS, ActionRequest

FORMATS = {
    "introduce": 'End with a line "Introduction: ..." holding what you say to everyone.',
    "ask": 'End with two lines: "To: ..." with the name of the player you question, then "Question: ..." with your question.',
    "answer": 'End with a line "Answer: ..." holding what you say in reply.',
    "vote": 'End with a line "Vote: ..." holding exactly one name from the list.',
    "mcq": 'End with a line "Answer: ..." holding the letter of the correct option.',
    "choose": 'End with a line "Choice: ..." holding exactly one option from the list.',
    "describe": 'End with a line "Description: ..." holding your description (never the word itself).',
    "guess": 'End with a line "Guess: ..." holding only the word you guess.',
    "contribute": 'End with a line "Contribution: ..." holding one whole number.',
    "propose": 'End with a line "Proposal: {example}" with your own numbers (they must sum to 100).',
    "mcq_multi": 'End with a line "Answer: ..." holding the letters of your choices, at most two, separated by a comma.',
}


def default_system(name: str, goals: str = "") -> str:
    """The system message of an agent whose game wrote none (``Persona.system`` empty): who it
    is, and its goals when it has any. Every game of this repository writes its own
    (``graphs/<game>/prompts.py`` or the game's player)."""
    text = f"You are {name}. Speak as {name}, in the first person."
    return text + (f"\n\nYour goals: {goals.strip()}" if goals.strip() else "")


def format_choices(request: ActionRequest) -> str:
    """The numbered (vote/ask) or lettered (mcq) list of choices, or ''."""
    if not request.choices:
        return ""
    if request.kind == "mcq":
        return "\n".join(f"{LETTERS[i]}) {c}" for i, c in enumerate(request.choices))
    return "\n".join(f"{i + 1}. {c}" for i, c in enumerate(request.choices))


def format_instruction(request: ActionRequest) -> str:
    """The answer-format line the strict parser expects for ``request``."""
    if request.kind == "mcq" and request.multi:
        return FORMATS["mcq_multi"]
    if request.kind == "form":
        lines = "\n".join(f"{tag}: <one of: {', '.join(choices)}>" for tag, choices in request.fields or [])
        return f"End with exactly these lines, one answer each:\n{lines}"
    if request.kind == "propose":
        # placeholders, not numbers: the embedded model copied a numeric example verbatim, so
        # every player proposed the same split and every negotiation "agreed" in round 1
        names = [n for n, _ in request.fields or []]
        example = ", ".join(f"{n}: <{chr(97 + i)}>%" for i, n in enumerate(names))
        return FORMATS["propose"].format(example=example)
    return FORMATS[request.kind]


def memory_block(script_excerpts: str, dialogue_excerpts: str) -> list[str]:
    """The headed memory sections of a user message (empty sections are left out)."""
    parts = []
    if script_excerpts:
        parts.append(f"Excerpts from your script:\n{script_excerpts}")
    if dialogue_excerpts:
        parts.append(f"What you have heard so far (excerpts):\n{dialogue_excerpts}")
    return parts


def user_prompt(request: ActionRequest, script_excerpts: str, dialogue_excerpts: str,
                block_context: str, block_instructions: str) -> str:
    """The varying user message: memory excerpts, block context, the task, choices, format."""
    parts = memory_block(script_excerpts, dialogue_excerpts)
    if block_context:
        parts.append(block_context)
    task = request.prompt
    choices = format_choices(request)
    if choices:
        task += "\n" + choices
    parts.append(task)
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
