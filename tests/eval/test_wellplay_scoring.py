"""Scoring rules (strict / upstream), weighted score and option shuffling."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from mas_agents.graphs.mmg.dataset import Question, load_all, load_script
from mas_agents.eval.wellplay.metrics import WEIGHTS, is_correct, score, shuffled_view
from tests.data_roots import SIN_ID
from tests.eval.test_wellplay_loader import sin_rows

F = frozenset
A, B, C, D = F("a"), F("b"), F("c"), F("d")


def _question(options=("w", "x", "y", "z"), key=B, multi=False) -> Question:
    return Question(qid="t/x/2", script_id="t", character="x", category="reasoning", multi=multi,
                    text="Q?", options=tuple(options), key=key, file="t.csv", line=2)


# ---------------------------------------------------------------------------- is_correct

SINGLE = [  # chosen, key, strict, upstream
    (B, B, True, True),
    (A, B, False, False),
    (F("ab"), B, False, False),         # two letters on a single-choice question
    (A, F("ac"), True, True),           # the Ghost Revenge `ac` row accepts either letter
    (C, F("ac"), True, True),
    (B, F("ac"), False, False),
    (F("ac"), F("ac"), False, True),    # upstream: "ac" in "ac"
    (F("ab"), F("ac"), False, False),
    (None, B, False, False),            # abstention
    (F(), B, False, False),             # empty answer counts as abstention
]

MULTI = [  # key = the single real culprit (README "Schemas")
    (B, B, True, True),                 # 1 letter, the culprit
    (A, B, False, False),               # 1 letter, wrong
    (F("ab"), B, True, True),           # 2 letters incl. culprit
    (F("ac"), B, False, False),         # 2 letters without culprit
    (F("abc"), B, False, True),         # 3 letters: strict allows at most two
    (F("acd"), B, False, False),
    (F("abcde"), B, False, True),       # upstream: everything chosen always wins
    (None, B, False, False),
]


@pytest.mark.parametrize("chosen, key, strict, upstream", SINGLE)
def test_single_choice(chosen, key, strict, upstream):
    assert is_correct(chosen, key, multi=False) is strict
    assert is_correct(chosen, key, multi=False, scoring="strict") is strict
    assert is_correct(chosen, key, multi=False, scoring="upstream") is upstream


@pytest.mark.parametrize("chosen, key, strict, upstream", MULTI)
def test_multi_select(chosen, key, strict, upstream):
    assert is_correct(chosen, key, multi=True, scoring="strict") is strict
    assert is_correct(chosen, key, multi=True, scoring="upstream") is upstream


def test_unknown_scoring():
    with pytest.raises(ValueError):
        is_correct(A, A, False, scoring="lenient")


# ---------------------------------------------------------------------------- score


def test_weighted_score_arithmetic():
    items = [("objective", True), ("objective", False), ("reasoning", True), ("reasoning", True),
             ("reasoning", False), ("relation", False)]
    r = score(items)
    # (10 + 5 + 5) / (2*10 + 3*5 + 1*2) = 20 / 37
    assert r["weighted_score"] == pytest.approx(20 / 37)
    assert r["n"] == 6
    assert r["accuracy"] == {"objective": 0.5, "reasoning": pytest.approx(2 / 3), "relation": 0.0}
    assert r["counts"] == {"objective": {"n": 2, "correct": 1}, "reasoning": {"n": 3, "correct": 2},
                           "relation": {"n": 1, "correct": 0}}
    assert WEIGHTS == {"objective": 10, "reasoning": 5, "relation": 2}


def test_score_accepts_records_and_empty():
    class Rec:
        category, correct = "relation", True

    r = score([Rec(), {"category": "objective", "correct": False}])
    assert r["weighted_score"] == pytest.approx(2 / 12)
    empty = score([])
    assert empty["weighted_score"] is None and empty["accuracy"]["objective"] is None
    with pytest.raises(ValueError):
        score([("trivia", True)])


# ---------------------------------------------------------------------------- shuffling


def test_identity_view():
    q = _question()
    assert shuffled_view(q) == (("w", "x", "y", "z"), B, (0, 1, 2, 3))


def test_shuffle_remaps_key():
    q = _question(options=("w", "x", "y", "z", "v"), key=F("ac"))
    for seed in range(50):
        options, key, perm = shuffled_view(q, random.Random(seed))
        assert sorted(options) == sorted(q.options)
        assert all(options[i] == q.options[j] for i, j in enumerate(perm))
        # the key labels exactly the original key options ("w" and "y")
        assert {options["abcde".index(k)] for k in key} == {"w", "y"}
        assert len(key) == 2


def test_shuffle_is_deterministic_and_varies():
    q = _question()
    views = [shuffled_view(q, random.Random(7)) for _ in range(3)]
    assert views[0] == views[1] == views[2]
    perms = {shuffled_view(q, random.Random(s))[2] for s in range(40)}
    assert len(perms) > 10
    keys = {shuffled_view(q, random.Random(s))[1] for s in range(40)}
    assert keys == {A, B, C, D}  # the key letter moves with the option "x"


# ---------------------------------------------------------------------------- the real script Sin


@pytest.mark.realdata
def test_always_a_on_sin(real_data_root):
    # Sin's CSV files (read with the csv module, not the loader): keys 29 a, 6 b, 6 c, 3 d, all one
    # letter; `a` is the key of 0 of 3 objective, 8 of 20 reasoning and 21 of 21 relation rows:
    # (0*10 + 8*5 + 21*2) / (3*10 + 20*5 + 21*2) = 82 / 172 (weights 10/5/2, PLAYER* §3)
    rows = sin_rows(real_data_root)
    assert Counter(r.truth for r in rows) == {"a": 29, "b": 6, "c": 6, "d": 3}
    assert {v: (sum(r.value == v for r in rows), sum(r.value == v and r.truth == "a" for r in rows))
            for v in "abc"} == {"a": (3, 0), "b": (20, 8), "c": (21, 21)}
    qs = load_script(real_data_root, SIN_ID).all_questions()
    r = score((q.category, is_correct(A, q.key, q.multi)) for q in qs)
    assert r["counts"] == {"objective": {"n": 3, "correct": 0}, "reasoning": {"n": 20, "correct": 8},
                           "relation": {"n": 21, "correct": 21}}
    assert r["weighted_score"] == pytest.approx(82 / 172)
    # upstream scoring agrees: every key is one letter, so "a" in key <=> key == {a} either way
    up = score((q.category, is_correct(A, q.key, q.multi, "upstream")) for q in qs)
    assert up["weighted_score"] == pytest.approx(82 / 172)


# ---------------------------------------------------------------------------- README baseline (real data)


@pytest.fixture(scope="module")
def wellplay(real_data_root):
    return {lang: [q for s in load_all(real_data_root, lang) for q in s.all_questions()] for lang in ("en", "zh")}


@pytest.mark.realdata
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("scoring", ["upstream", "strict"])
def test_always_a_baseline(wellplay, lang, scoring):
    # README "Oddities": answering `a` everywhere scores 48.9 % (weighted, pooled over all
    # 1,482 per-character questions): (58*10 + 353*5 + 369*2) / (117*10 + 800*5 + 565*2).
    qs = wellplay[lang]
    r = score((q.category, is_correct(A, q.key, q.multi, scoring)) for q in qs)
    assert r["weighted_score"] == pytest.approx(3083 / 6300)
    assert abs(100 * r["weighted_score"] - 48.9) <= 0.1
    assert r["counts"]["objective"]["correct"] == 58
    assert r["counts"]["reasoning"]["correct"] == 353
    assert r["counts"]["relation"]["correct"] == 369


@pytest.mark.realdata
def test_all_letters_on_multi_baseline(wellplay):
    # README "Oddities": also answering a..e on multi-select questions scores 53.2 % (upstream).
    qs = wellplay["en"]

    def pick(q):
        return F("abcde"[: len(q.options)]) if q.multi else A

    up = score((q.category, is_correct(pick(q), q.key, q.multi, "upstream")) for q in qs)
    strict = score((q.category, is_correct(pick(q), q.key, q.multi, "strict")) for q in qs)
    assert abs(100 * up["weighted_score"] - 53.2) <= 0.1
    assert strict["weighted_score"] < 0.44  # strict rejects the 5-letter answers


@pytest.mark.realdata
def test_shuffling_removes_position_bias(wellplay):
    rng = random.Random(0)
    qs = wellplay["en"]
    r = score((q.category, is_correct(A, shuffled_view(q, rng)[1], q.multi)) for q in qs)
    assert 0.2 < r["weighted_score"] < 0.35  # about chance (1/4 for 4 options), far below 48.9 %
