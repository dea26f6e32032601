"""mas_agents.stats: percentile bootstrap estimates, paired differences, ratios and formatting."""

import json

import numpy as np
import pytest

from mas_agents.stats import Estimate, bootstrap_mean, bootstrap_ratio, clip, paired_difference, summary_sentence, wilson


# ---------------------------------------------------------------- bootstrap_mean


def test_same_seed_same_interval_and_seed_matters():
    data = list(np.random.default_rng(1).normal(0.4, 0.1, size=20))
    a = bootstrap_mean(data, seed=7)
    b = bootstrap_mean(data, seed=7)
    c = bootstrap_mean(data, seed=8)
    assert a == b
    assert (a.low, a.high) != (c.low, c.high)
    assert a.mean == c.mean


def test_interval_contains_sample_mean():
    data = np.random.default_rng(2).normal(0.5, 0.2, size=25)
    est = bootstrap_mean(list(data))
    assert est.n == 25
    assert est.mean == pytest.approx(float(np.mean(data)))
    assert est.low < est.mean < est.high
    assert est.level == 0.95 and est.method == "percentile bootstrap"


def test_width_shrinks_with_n():
    rng = np.random.default_rng(3)
    small = bootstrap_mean(list(rng.normal(0.0, 1.0, size=5)))
    large = bootstrap_mean(list(rng.normal(0.0, 1.0, size=200)))
    assert (large.high - large.low) < (small.high - small.low)


def test_coverage_sanity():
    rng = np.random.default_rng(12345)
    true_mean = 0.3
    covered = 0
    runs = 200
    for i in range(runs):
        data = rng.normal(true_mean, 0.15, size=30)
        est = bootstrap_mean(list(data), n_boot=500, seed=i)
        covered += est.low <= true_mean <= est.high
    assert 0.88 * runs <= covered <= 0.99 * runs


def test_none_dropped_and_not_counted():
    est = bootstrap_mean([1.0, None, 3.0, None])
    assert est.n == 2
    assert est.mean == 2.0


def test_n0_and_n1():
    e0 = bootstrap_mean([])
    assert (e0.mean, e0.low, e0.high, e0.n) == (None, None, None, 0)
    assert e0.includes_zero is None
    assert bootstrap_mean([None, None]).n == 0
    e1 = bootstrap_mean([0.25, None])
    assert (e1.mean, e1.low, e1.high, e1.n) == (0.25, None, None, 1)
    assert e1.includes_zero is None


def test_all_equal_zero_width():
    est = bootstrap_mean([0.4] * 6)
    assert est.mean == est.low == est.high == pytest.approx(0.4)
    assert est.includes_zero is False


def test_rejects_nan_and_bad_params():
    with pytest.raises(ValueError):
        bootstrap_mean([1.0, float("nan")])
    with pytest.raises(ValueError):
        bootstrap_mean([1.0, 2.0], level=1.0)
    with pytest.raises(ValueError):
        bootstrap_mean([1.0, 2.0], n_boot=0)


# ---------------------------------------------------------------- paired_difference


def test_paired_constant_improvement():
    base = {s: v for s, v in zip(range(6), [0.1, 0.5, 0.3, 0.9, 0.2, 0.7])}
    variant = {s: v + 2 for s, v in base.items()}
    est = paired_difference(variant, base)
    assert est.n == 6
    assert est.mean == pytest.approx(2.0)
    assert est.low == pytest.approx(2.0) and est.high == pytest.approx(2.0)
    assert est.includes_zero is False
    assert est.method == "paired bootstrap"


def test_paired_mixed_includes_zero():
    base = {0: 0.5, 1: 0.5, 2: 0.5, 3: 0.5, 4: 0.5, 5: 0.5}
    variant = {0: 0.6, 1: 0.4, 2: 0.55, 3: 0.45, 4: 0.7, 5: 0.35}
    est = paired_difference(variant, base)
    assert est.mean == pytest.approx(0.00833333, abs=1e-6)
    assert est.low < 0 < est.high
    assert est.includes_zero is True


def test_paired_drops_missing_and_none_keys():
    base = {"a": 1.0, "b": 2.0, "c": None, "d": 4.0}
    variant = {"a": 2.0, "b": 4.0, "c": 10.0, "d": None, "e": 7.0}
    est = paired_difference(variant, base)
    assert est.n == 2
    assert est.mean == pytest.approx(1.5)
    one = paired_difference({"a": 3.0}, {"a": 1.0, "b": 2.0})
    assert (one.mean, one.low, one.high, one.n) == (2.0, None, None, 1)
    none = paired_difference({"a": 1.0}, {"b": 1.0})
    assert (none.mean, none.n) == (None, 0)


def test_paired_independent_of_key_order():
    base = {k: float(k % 3) for k in range(10)}
    variant = {k: float(k % 3) + (k % 4) * 0.5 for k in range(10)}
    rev_variant = dict(reversed(list(variant.items())))
    assert paired_difference(variant, base, seed=3) == paired_difference(rev_variant, base, seed=3)


def test_paired_is_tighter_than_unpaired_when_units_vary():
    rng = np.random.default_rng(5)
    unit = rng.normal(0, 1.0, size=30)  # large between-unit variation shared by both arms
    base = {i: float(u) for i, u in enumerate(unit)}
    variant = {i: float(u + 0.2 + rng.normal(0, 0.05)) for i, u in enumerate(unit)}
    paired = paired_difference(variant, base)
    assert paired.includes_zero is False
    assert bootstrap_mean(list(variant.values())).includes_zero is True


# ---------------------------------------------------------------- bootstrap_ratio


def test_ratio_mean_is_pooled_rate():
    correct = [3, 0, 5, 2, 4]
    votes = [4, 0, 6, 5, 4]  # includes a game with no votes
    est = bootstrap_ratio(correct, votes)
    assert est.n == 5
    assert est.mean == pytest.approx(14 / 19)
    assert est.low < est.mean < est.high
    assert 0.0 <= est.low and est.high <= 1.0
    assert est.method == "ratio bootstrap"
    assert est == bootstrap_ratio(correct, votes)  # deterministic


def test_ratio_degenerate_cases():
    assert bootstrap_ratio([], []).mean is None
    all_zero = bootstrap_ratio([0, 0], [0, 0])
    assert (all_zero.mean, all_zero.n) == (None, 2)
    one = bootstrap_ratio([2], [4])
    assert (one.mean, one.low, one.high, one.n) == (0.5, None, None, 1)
    const = bootstrap_ratio([1, 2, 0], [2, 4, 0])
    assert const.mean == const.low == const.high == 0.5
    assert const.n == 3
    dropped = bootstrap_ratio([1, None, 3], [2, 5, None])
    assert (dropped.mean, dropped.n) == (0.5, 1)
    with pytest.raises(ValueError):
        bootstrap_ratio([1, 2], [1])
    with pytest.raises(ValueError):
        bootstrap_ratio([1, 2], [1, -1])


# ---------------------------------------------------------------- formatting


def test_fmt_exact():
    assert Estimate(0.412, 0.35, 0.479, 6).fmt() == "41.2 % [35.0, 47.9] (n=6)"
    assert Estimate(None, None, None, 0).fmt() == "- (n=0)"
    assert Estimate(0.5, None, None, 1).fmt() == "50.0 % [no interval, n=1]"
    assert Estimate(1.23456, 1.0, 1.5, 30).fmt(scale=1, digits=2, unit="") == "1.23 [1.00, 1.50] (n=30)"
    assert Estimate(0.031, -0.02, 0.084, 6).fmt(unit="points", signed=True) == "+3.1 points [-2.0, 8.4] (n=6)"
    assert Estimate(-0.0001, -0.01, 0.01, 4).fmt() == "0.0 % [-1.0, 1.0] (n=4)"


def test_to_dict_json():
    d = Estimate(0.1, -0.05, 0.2, 8, method="paired bootstrap").to_dict()
    assert d == {
        "mean": 0.1, "low": -0.05, "high": 0.2, "n": 8, "level": 0.95,
        "method": "paired bootstrap", "includes_zero": True,
    }
    json.dumps(d)
    assert Estimate(None, None, None, 0).to_dict()["includes_zero"] is None


def test_summary_sentences():
    inc = Estimate(0.031, -0.02, 0.084, 6, method="paired bootstrap")
    assert summary_sentence("player_star", inc, metric="the weighted score") == (
        "player_star changes the weighted score by +3.1 points [-2.0, 8.4] (n=6); "
        "the interval includes zero, so this is not distinguishable from no effect."
    )
    exc = Estimate(-0.05, -0.08, -0.01, 6, method="paired bootstrap")
    assert summary_sentence("pgm", exc, metric="vote accuracy") == (
        "pgm changes vote accuracy by -5.0 points [-8.0, -1.0] (n=6); "
        "the 95 % interval excludes zero, so this decrease is distinguishable from no effect."
    )
    up = summary_sentence("pgm", Estimate(0.05, 0.01, 0.08, 6))
    assert "this increase is distinguishable" in up
    one = summary_sentence("pgm", Estimate(0.05, None, None, 1))
    assert "[no interval, n=1]" in one and "not distinguishable" in one
    zero = summary_sentence("pgm", Estimate(None, None, None, 0))
    assert "n=0" in zero
    raw = summary_sentence("x", Estimate(1.5, 0.5, 2.5, 10), scale=1, unit="wins")
    assert raw.startswith("x changes the score by +1.5 wins [0.5, 2.5] (n=10);")


# ---- Wilson score interval (Wilson 1927) -------------------------------------------------
# Reference values by hand: z = 1.959964, z^2 = 3.841459.
# k=0, n=10: low 0, high = (z^2/n) / (1 + z^2/n) = 0.3841459 / 1.3841459 = 0.277533.
# k=5, n=10: centre 0.5, half = z*sqrt(0.025 + z^2/400) / 1.3841459 = 0.263408 -> [0.236592, 0.763408].
# k=2, n=2: centre (1 + z^2/4)/(1 + z^2/2) = 1.960365 / 2.920729 = 0.671191, half = (z^2/4)/(1 + z^2/2) = 0.328809.
def test_wilson_known_values():
    e = wilson(0, 10)
    assert e.mean == 0.0 and e.low == 0.0 and e.n == 10 and e.method == "Wilson score"
    assert e.high == pytest.approx(0.277533, abs=1e-5)
    e = wilson(5, 10)
    assert e.mean == 0.5
    assert e.low == pytest.approx(0.236593, abs=1e-5)
    assert e.high == pytest.approx(0.763407, abs=1e-5)
    e = wilson(2, 2)
    assert e.high == 1.0
    assert e.low == pytest.approx(0.671191 - 0.328809, abs=1e-5)
    assert e.fmt() == "100.0 % [34.2, 100.0] (n=2)"


def test_wilson_edges_and_range():
    assert wilson(0, 0).mean is None and wilson(0, 0).n == 0
    with pytest.raises(ValueError):
        wilson(3, 2)
    for n in range(1, 30):
        for k in range(n + 1):
            e = wilson(k, n)
            assert 0.0 <= e.low <= e.mean <= e.high <= 1.0


def test_clip_keeps_an_interval_inside_the_metric_range():
    e = clip(Estimate(1.0, 0.75, 1.25, 4), 0.0, 1.0)
    assert (e.mean, e.low, e.high, e.n) == (1.0, 0.75, 1.0, 4)
    assert clip(Estimate(None, None, None, 0), 0.0, 1.0).mean is None
