"""Rules of the p-beauty contest (Keynes, General Theory ch. 12; Nagel 1995, AER 85(5)): every
player names a whole number 0..:data:`MAX_GUESS` at once; the target is :data:`P` times the
mean; the nearest guesses win, a tie shares the win. Pure: no model, no I/O."""

from __future__ import annotations

from fractions import Fraction

from mas_agents.planners.base import GameInfo

P = Fraction(2, 3)       # Nagel 1995: p = 2/3
MAX_GUESS = 100
GAME = GameInfo(name="beauty_contest", moves="amount")


def target(guesses: dict[str, int]) -> Fraction:
    """``P`` x the mean of the valid guesses (exact); 0 when nobody guessed.

    Raises:
        ValueError: a guess outside 0..MAX_GUESS.
    """
    for name, g in guesses.items():
        if not 0 <= g <= MAX_GUESS:
            raise ValueError(f"{name}: guess {g} is not in 0..{MAX_GUESS}")
    if not guesses:
        return Fraction(0)
    return P * Fraction(sum(guesses.values()), len(guesses))


def winners(guesses: dict[str, int]) -> list[str]:
    """The players whose guess is nearest the :func:`target`, in seat order; [] when nobody
    guessed (an abstention is no guess)."""
    if not guesses:
        return []
    t = target(guesses)
    best = min(abs(g - t) for g in guesses.values())
    return [n for n, g in guesses.items() if abs(g - t) == best]
