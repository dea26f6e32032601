"""Prompt text for murder-mystery agents (written for this project).

Layout for prefix caching (llama.cpp and vLLM reuse the longest common token prefix): the system message holds what is stable
for one agent (game rules, role, goals); the user message holds what varies (retrieved script
and dialogue excerpts, the task, the answer format), so consecutive calls of one agent share
their longest prefix in llama.cpp's KV cache and vLLM's prefix cache.

Role rules follow PLAYER* Appendix A.2: civilians must answer honestly; a murderer may lie
and never admits the killing.
"""

from __future__ import annotations

from mas_agents.actions import LETTERS, ActionRequest

RULES = (
    "You are playing a murder mystery game with other players. Each player plays one "
    "character and has a private script that only they have read. The players introduce "
    "themselves, question each other over several rounds, and finally vote on who the "
    "murderer of each victim is."
)

CIVILIAN_RULE = (
    "You are not a murderer. You must answer other players' questions honestly, using only "
    "what your script says and what you have heard. Help find the murderer."
)

RESPONDENT_RULE = (
    "The game is over. Answer the evaluation questions truthfully and as accurately as you "
    "can from your script and what you heard; nothing is gained by hiding anything now."
)

MURDERER_RULE = (
    "You are the murderer of {victims}. You may lie or leave things out to hide it, and you "
    "must never admit the killing. Point suspicion at others when you can."
)

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


def system_prompt(name: str, title: str, role: str, goals: str, victims: list[str], players: list[str]) -> str:
    """The stable system message for one character.

    Args:
        name: the character played.
        title: the script's display name.
        role: ``"murderer"``, ``"civilian"`` (gameplay) or ``"respondent"`` (evaluation after
            the game: everyone answers truthfully).
        goals: the character's objectives (WellPlay ``acts_goal``).
        victims: the victims of the case.
        players: all characters in the game.
    """
    rule = {"murderer": MURDERER_RULE.format(victims=", ".join(victims)),
            "respondent": RESPONDENT_RULE}.get(role, CIVILIAN_RULE)
    return (
        f"{RULES}\n\nThe game is \"{title}\". The players are: {', '.join(players)}. "
        f"The victim(s): {', '.join(victims)}.\n\nYou are {name}. Speak as {name}, in the first person. "
        f"{rule}\n\nYour goals: {goals.strip()}"
    )


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
