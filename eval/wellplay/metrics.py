"""Pure scoring rules for WellPlay questions (no I/O).

Weights and the weighted score follow PLAYER* (Zhu et al. 2024, arXiv:2404.17662) §3 and the
data README ("Upstream result logs": score = Σ weight·correct / Σ weight, weights 10/5/2).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from mas_agents.graphs.mmg.dataset import Question

__all__ = ["LETTERS", "WEIGHTS", "is_correct", "score", "shuffled_view"]

#: Category weights (PLAYER* §3): objective 10, reasoning 5, relation 2.
WEIGHTS: dict[str, int] = {"objective": 10, "reasoning": 5, "relation": 2}

LETTERS = "abcde"

Scoring = Literal["strict", "upstream"]


def shuffled_view(
    q: Question, rng: random.Random | None = None
) -> tuple[tuple[str, ...], frozenset[str], tuple[int, ...]]:
    """Options of ``q`` in a random order, with the key remapped to the new letters.

    Returns ``(options, key, perm)``: ``options[i] == q.options[perm[i]]``, and a letter is in
    ``key`` iff it labels an option that was a key option. With ``rng=None`` the view is the
    identity (upstream order, ``perm == (0, 1, ...)``). The same seed gives the same view.
    Shuffling removes the answer-position bias of the upstream keys (README "Oddities":
    779 of 1,481 single-letter keys are ``a``).
    """
    perm = list(range(len(q.options)))
    if rng is not None:
        rng.shuffle(perm)
    options = tuple(q.options[j] for j in perm)
    key = frozenset(LETTERS[i] for i, j in enumerate(perm) if LETTERS[j] in q.key)
    return options, key, tuple(perm)


def is_correct(
    chosen: frozenset[str] | None, key: frozenset[str], multi: bool, scoring: Scoring = "strict"
) -> bool:
    """Whether the chosen letters answer a question with answer key ``key``.

    ``chosen`` is the set of lower-case letters the agent picked; ``None`` (abstained) and the
    empty set are always wrong.

    ``scoring="strict"`` (default):
        single-choice: exactly one letter, and it is in ``key`` (the two-letter ``ac`` key
        accepts either letter); multi-select ("select the two people", key = the culprit):
        every key letter chosen and at most two letters chosen.
    ``scoring="upstream"`` (upstream ``Game_Framework.evaluate``): with ``answer`` = the chosen
        letters joined in sorted order and ``truth`` = the key letters joined in sorted order,
        single-choice is right iff ``answer in truth`` (substring), multi-select iff
        ``truth in answer``. So answering every letter always wins a multi-select question
        (README "Oddities": 53.2 %), and ``ac`` also accepts the answer "ac". Upstream would
        count an empty answer as a substring of any key; that artefact is not reproduced.

    Raises ValueError for an unknown ``scoring``.
    """
    if scoring not in ("strict", "upstream"):
        raise ValueError(f"scoring must be 'strict' or 'upstream', not {scoring!r}")
    if not chosen:
        return False
    if scoring == "strict":
        if multi:
            return key <= chosen and len(chosen) <= 2
        return len(chosen) == 1 and chosen <= key
    answer, truth = "".join(sorted(chosen)), "".join(sorted(key))
    return truth in answer if multi else answer in truth


def _item(item: Any) -> tuple[str, bool]:
    if isinstance(item, tuple):
        category, correct = item
    elif isinstance(item, Mapping):
        category, correct = item["category"], item["correct"]
    else:
        category, correct = item.category, item.correct
    if category not in WEIGHTS:
        raise ValueError(f"unknown category {category!r}; expected one of {list(WEIGHTS)}")
    return category, bool(correct)


def score(items: Iterable[Any]) -> dict[str, Any]:
    """Weighted score and per-category accuracy of graded answers.

    ``items``: ``(category, correct)`` pairs, mappings with keys ``category``/``correct`` or
    objects with those attributes; ``category`` in :data:`WEIGHTS`.

    Returns ``{"weighted_score": Σ w·correct / Σ w (0..1, None if no items), "n": total,
    "accuracy": {category: fraction correct or None if none}, "counts": {category: {"n", "correct"}}}``
    pooled over all items (PLAYER* §3). Upstream reports the mean of per-script scores;
    call this once per script and average to get that. Raises ValueError for an unknown category.
    """
    counts = {c: {"n": 0, "correct": 0} for c in WEIGHTS}
    for item in items:
        category, correct = _item(item)
        counts[category]["n"] += 1
        counts[category]["correct"] += correct
    total = sum(WEIGHTS[c] * v["n"] for c, v in counts.items())
    got = sum(WEIGHTS[c] * v["correct"] for c, v in counts.items())
    return {
        "weighted_score": got / total if total else None,
        "n": sum(v["n"] for v in counts.values()),
        "accuracy": {c: v["correct"] / v["n"] if v["n"] else None for c, v in counts.items()},
        "counts": counts,
    }
