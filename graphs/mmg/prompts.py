"""The murder mystery's rules text (written for this project).

Role rules follow PLAYER* Appendix A.2: civilians must answer honestly; a murderer may lie and
never admits the killing; after the game (the WellPlay evaluation) everyone answers truthfully.
What another player said reaches a player as one quoted utterance after the game's attribution
(``Li asked Zhao: «...»``, :mod:`mas_agents.utterance`, issue 57 E1); :data:`RULES` ends with the
sentence that says so. The system message is stable for one agent (rules, role, goals), so
consecutive calls share their longest prefix in llama.cpp's KV cache and vLLM's prefix cache.
"""

from __future__ import annotations

from mas_agents.utterance import CLOSE, OPEN

RULES = (
    "You are playing a murder mystery game with other players. Each player plays one "
    "character and has a private script that only they have read. The players introduce "
    "themselves, question each other over several rounds, and finally vote on who the "
    f"murderer of each victim is. In what you have heard, each player's words are quoted between {OPEN} and "
    f"{CLOSE} after who said them."
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
