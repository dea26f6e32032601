"""Vote counting shared by the games (murder mystery, Who is Spy, MAgIC)."""

from __future__ import annotations

from collections import Counter
from typing import Mapping


def plurality(counts: Mapping[str, int]) -> str | None:
    """The unique top vote-getter, or ``None`` on a tie or when no vote was cast (zero counts
    are ignored)."""
    ranked = Counter({k: n for k, n in counts.items() if n > 0}).most_common()
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]
