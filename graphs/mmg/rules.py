"""Murder-mystery game (MMG) rules as pure functions on plain data.

Source: PLAYER* (Zhu et al. 2024) Appendix A.2 and §4.1, with the choices this repository made (docs/guides/murder-mystery.md, "Murder-mystery games"):

* scripts are distributed privately, every character introduces themselves in seat order;
* ``rounds`` rounds of open questioning: in each round every character, in seat order, asks
  ``questions`` questions, each to one other character, who answers; everyone hears the exchange;
* voting: for each victim every character votes for one suspect among the *other* characters
  (a murderer never votes for themselves; we apply the same "not yourself" rule to everyone,
  so a civilian's self-vote cannot occur either);
* the plurality of valid votes is accused; a tie for the top count, or no valid vote at all,
  accuses no one;
* the outcome per victim is whether the accused is one of that victim's true murderers
  (WellPlay ``kill_by_me``).

No I/O, no models: the LangGraph graph in :mod:`mas_agents.graphs.mmg.graph` wires these to agent calls.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping

from mas_agents.graphs.voting import plurality
from mas_agents.planners.base import GameInfo

#: What planner blocks may know of the murder mystery (PLAYER* Appendix A.2): the murderer is
#: told its role, characters question each other and their statements are evidence, and each
#: victim's murderer is voted on. Its dialogue, what each character's memory keeps of what it
#: heard: the introductions and each question with its answer (PLAYER* §2.2).
GAME = GameInfo(name="mmg", hidden_role="murderer", holder_knows_role=True, investigation=True,
                dialogue=frozenset({"introduce", "answer"}))

#: The one fixed agent spec every murderer plays with, whatever the other players use, so that
#: comparisons between agent types face the same opponent (PLAYER* §4.1).
MURDERER_SPEC = "plain"


def question_schedule(players: list[str], rounds: int, questions: int) -> list[tuple[int, str]]:
    """The ordered questioning turns as ``(round, asker)`` pairs (round is 1-based).

    Each round visits the players in seat order, each asking ``questions`` questions in a row.

    Raises:
        ValueError: fewer than 2 players, or a negative round/question count.
    """
    if len(players) < 2:
        raise ValueError(f"an MMG needs at least 2 players, got {len(players)}")
    if rounds < 0 or questions < 0:
        raise ValueError(f"rounds and questions must be >= 0 (got {rounds}, {questions})")
    return [(r, p) for r in range(1, rounds + 1) for p in players for _ in range(questions)]


def other_players(actor: str, players: Iterable[str]) -> list[str]:
    """Everyone but ``actor``, in seat order: whom ``actor`` may question or vote for."""
    return [p for p in players if p != actor]


def tally(votes: Mapping[str, str | None]) -> Counter:
    """Count valid votes. ``votes`` maps voter -> chosen suspect, ``None`` = abstained.

    Raises:
        ValueError: a voter voted for themselves (illegal by the rules above).
    """
    for voter, choice in votes.items():
        if choice is not None and choice == voter:
            raise ValueError(f"{voter} voted for themselves, which the MMG rules forbid")
    return Counter(c for c in votes.values() if c is not None)


def victim_outcome(victim: str, votes: Mapping[str, str | None], murderers: Iterable[str]) -> dict:
    """The voting result for one victim.

    Returns:
        ``{"victim", "votes" (voter -> choice or None), "counts" (name -> n), "accused"
        (name or None), "murderers" (list), "correct" (bool: the accused is a true murderer),
        "abstained" (int)}``.
    """
    counts = tally(votes)
    accused = plurality(counts)
    murderers = list(murderers)
    return {
        "victim": victim,
        "votes": dict(votes),
        "counts": dict(counts),
        "accused": accused,
        "murderers": murderers,
        "correct": accused is not None and accused in murderers,
        "abstained": sum(1 for c in votes.values() if c is None),
    }


def game_outcome(per_victim: list[dict]) -> dict:
    """Summarise per-victim outcomes: ``{"victims": [...], "correct": k, "total": n,
    "murderer_caught": all correct}``."""
    k = sum(1 for v in per_victim if v["correct"])
    return {"victims": per_victim, "correct": k, "total": len(per_victim),
            "murderer_caught": bool(per_victim) and k == len(per_victim)}
