"""Confidence intervals for the ablation reports: percentile bootstrap over sample units.

Every number in a report is an :class:`Estimate`: a point estimate, a two-sided confidence
interval (95 % by default), the sample size ``n`` and the name of the method.

Method
------
The intervals are **percentile bootstrap** intervals (Efron & Tibshirani 1993, *An
Introduction to the Bootstrap*, ch. 13): draw ``n_boot`` resamples of the ``n`` sample units
with replacement, compute the statistic on every resample, and report the ``(1 - level) / 2``
and ``(1 + level) / 2`` quantiles of those bootstrap statistics. The point estimate is the
statistic on the original sample (not the mean of the bootstrap statistics).

Resampling unit
---------------
The unit is whatever the caller passes one number for: one seed, one game, one setting. Units
are assumed independent; numbers that are *not* independent (e.g. several votes inside one
game) must be pooled into one unit first, or passed to :func:`bootstrap_ratio`, which keeps
every unit's numerator and denominator together. In a paired design
(:func:`paired_difference`) the unit is the key shared by the two arms (same seed / game /
setting), and the resampled quantity is the per-unit difference, so the between-unit
variation common to both arms cancels.

What ``n`` means
----------------
``n`` is the number of sample units that entered the estimate: values that are ``None`` are
dropped and not counted; for a paired difference, only keys present and non-``None`` in both
arms count; for a ratio, every unit counts, including units whose denominator is zero.

Determinism
-----------
Resampling uses ``numpy.random.default_rng(seed)``; the same data, ``level``, ``n_boot`` and
``seed`` always give the same interval. Paired differences are ordered by sorted key (when the
keys are sortable), so the result does not depend on dictionary insertion order.

Degenerate cases
----------------
``n = 0``: mean, low and high are ``None``. ``n = 1``: the mean is reported with no interval
(``low = high = None``). All values equal: ``low = high = mean`` (a zero-width interval).

Caveat: at very small ``n`` (a handful of seeds) the percentile bootstrap interval is somewhat
narrower than nominal, because the bootstrap distribution of the mean has variance
``(n - 1) / n`` times the usual estimate and ignores the t-correction. Read intervals from
``n < 10`` units as indicative.

Bounded metrics
---------------
A percentile-bootstrap interval is *range-preserving* (Efron & Tibshirani 1993, ch. 13-14, where
the percentile method is compared with the standard normal one): every resampled mean is a mean of
observed values, so ``min(values) <= low <= high <= max(values)``. A metric that cannot leave
``[a, b]`` (a rate is in ``[0, 1]``; a WiS civilian's game score is ``>= 0``) therefore gets an
interval inside ``[a, b]`` with no clipping, unlike a normal or Student-t interval
``mean ± t·s/√n``, which leaves the range when the values pile up at a bound (scores 0, 0, 0, 12:
``3.00 [-6.55, 12.55]``). (A WiS spy's game score can be below 0: each civilian vote for the spy
costs it a point, WiS App. A rule e; the interval then reaches down to the lowest score seen, no
further.) A pooled ratio of sums with positive denominators (:func:`bootstrap_ratio`) is a
weighted mean of the units' ratios and is range-preserving the same way. :func:`clip` guards a
metric's range where an interval is not built this way.

Report tables
-------------
:meth:`Estimate.fmt` writes one cell ``"41.2 % [35.0, 47.9] (n=6)"`` for a Markdown report;
:func:`parse_estimate` reads such a cell back into numbers, and :func:`numeric_columns` turns a
report table (rows of cell texts) into one with separate ``value / low / high / n`` columns, the
form of a CSV download (both in :mod:`mas_agents.eval.reports.cells`).

Over 400 lines for one idea, the intervals of every report number: a third of it is this method
statement, which the estimators share and which would say less split over several files.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np


__all__ = [
    "Estimate",
    "bootstrap_mean",
    "paired_difference",
    "bootstrap_ratio",
    "wilson",
    "clip",
    "summary_sentence",
]

# Upper bound on the number of resampled indices held in memory at once.
_CHUNK_CELLS = 2_000_000


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its ``level`` confidence interval ``[low, high]`` over ``n`` units.

    ``mean`` is ``None`` when there is nothing to estimate (``n = 0``, or a ratio whose
    denominators are all zero); ``low``/``high`` are ``None`` when no interval can be computed
    (in particular when ``n = 1``).
    """

    mean: float | None
    low: float | None
    high: float | None
    n: int
    level: float = 0.95
    method: str = "percentile bootstrap"

    @property
    def includes_zero(self) -> bool | None:
        """True if ``low <= 0 <= high``; ``None`` when there is no interval."""
        if self.low is None or self.high is None:
            return None
        return self.low <= 0.0 <= self.high

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-serialisable) including ``includes_zero``."""
        d = asdict(self)
        d["includes_zero"] = self.includes_zero
        return d

    def fmt(self, scale: float = 100, digits: int = 1, unit: str = "%", *, signed: bool = False,
            n_unit: str = "") -> str:
        """Human-readable form, e.g. ``"41.2 % [35.0, 47.9] (n=6)"``.

        Values are multiplied by ``scale``. ``n = 0`` (or no mean) gives ``"- (n=0)"``; ``n = 1``
        gives ``"41.2 % [no interval, n=1]"``. ``signed=True`` prefixes the mean with ``+`` when
        positive (for differences). ``n_unit``: what n counts, in the plural (``"votes"``,
        ``"settings"``), written beside it (``(n=4 votes)``, ``[no interval, n=1 setting]``), so
        that two numbers of the same metric over different units do not read as disagreeing.
        """
        n = n_text(self.n, n_unit)
        if self.mean is None:
            return f"- (n={n})"
        mean = _num(self.mean * scale, digits, signed=signed)
        head = f"{mean} {unit}" if unit else mean
        if self.low is None or self.high is None:
            return f"{head} [no interval, n={n}]"
        low = _num(self.low * scale, digits)
        high = _num(self.high * scale, digits)
        return f"{head} [{low}, {high}] (n={n})"


def n_text(n: int, unit: str = "") -> str:
    """A sample size with what it counts: ``n_text(4, "votes") == "4 votes"``, ``n_text(1,
    "settings") == "1 setting"`` (the plural's trailing ``s`` dropped for one), ``"4"`` without
    a unit."""
    if not unit:
        return str(n)
    return f"{n} {unit[:-1] if n == 1 and unit.endswith('s') else unit}"


def _num(x: float, digits: int, *, signed: bool = False) -> str:
    s = f"{x:.{digits}f}"
    if float(s) == 0.0:  # no "-0.0"
        s = f"{0.0:.{digits}f}"
    elif signed and x > 0:
        s = "+" + s
    return s


def _check_params(level: float, n_boot: int) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if int(n_boot) != n_boot or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}")


def _clean(values: Sequence[float | None] | Any) -> np.ndarray:
    """Drop ``None``; reject NaN/inf (a NaN is a bug upstream, not a missing value)."""
    kept = [float(v) for v in values if v is not None]
    arr = np.asarray(kept, dtype=float)
    if arr.size and not np.all(np.isfinite(arr)):
        raise ValueError("values must be finite (use None for a missing unit)")
    return arr


def _index_chunks(rng: np.random.Generator, n: int, n_boot: int):
    """Yield ``(rows, n)`` arrays of resample indices, ``n_boot`` rows in total."""
    per = max(1, _CHUNK_CELLS // max(n, 1))
    done = 0
    while done < n_boot:
        rows = min(per, n_boot - done)
        yield rng.integers(0, n, size=(rows, n))
        done += rows


def _percentiles(stats: np.ndarray, level: float) -> tuple[float, float]:
    alpha = 1.0 - level
    low, high = np.quantile(stats, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(low), float(high)


def _bootstrap_mean_array(arr: np.ndarray, *, level: float, n_boot: int, seed: int, method: str) -> Estimate:
    n = int(arr.size)
    if n == 0:
        return Estimate(None, None, None, 0, level, method)
    mean = float(arr.mean())
    if n == 1:
        return Estimate(mean, None, None, 1, level, method)
    if np.all(arr == arr[0]):
        return Estimate(mean, mean, mean, n, level, method)
    rng = np.random.default_rng(seed)
    means = np.concatenate([arr[idx].mean(axis=1) for idx in _index_chunks(rng, n, n_boot)])
    low, high = _percentiles(means, level)
    return Estimate(mean, low, high, n, level, method)


def bootstrap_mean(
    values: Sequence[float | None],
    *,
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> Estimate:
    """Mean of ``values`` with a percentile-bootstrap interval (Efron & Tibshirani 1993).

    ``values`` holds one number per sample unit (seed, game or setting); the units are
    resampled with replacement ``n_boot`` times and the interval is the central ``level``
    range of the resampled means. ``None`` values are dropped and not counted in ``n``.
    Deterministic given ``seed`` (``numpy.random.default_rng``).

    ``n = 0`` → mean/low/high ``None``; ``n = 1`` → mean with ``low = high = None``;
    all values equal → ``low = high = mean``.
    """
    _check_params(level, n_boot)
    return _bootstrap_mean_array(
        _clean(values), level=level, n_boot=n_boot, seed=seed, method="percentile bootstrap"
    )


def _ordered_keys(keys: list[Hashable]) -> list[Hashable]:
    try:
        return sorted(keys)  # type: ignore[type-var]
    except TypeError:
        return keys


def paired_difference(
    variant: Mapping[Hashable, float | None],
    base: Mapping[Hashable, float | None],
    *,
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> Estimate:
    """Mean paired difference ``variant[k] - base[k]`` with a percentile-bootstrap interval.

    The sample units are the keys (seed / game / setting) present with a non-``None`` value in
    *both* arms; other keys are dropped and not counted in ``n``. The per-unit differences are
    resampled with replacement (Efron & Tibshirani 1993), so the interval reflects the
    variation of the *difference* across units, not of each arm separately. Keys are sorted
    (when sortable) before resampling, so the result is deterministic given ``seed``
    regardless of mapping order. ``method = "paired bootstrap"``.
    """
    _check_params(level, n_boot)
    common = [k for k in variant if k in base and variant[k] is not None and base[k] is not None]
    keys = _ordered_keys(common)
    diffs = _clean([float(variant[k]) - float(base[k]) for k in keys])  # type: ignore[arg-type]
    return _bootstrap_mean_array(diffs, level=level, n_boot=n_boot, seed=seed, method="paired bootstrap")


def bootstrap_ratio(
    numerators: Sequence[float | None],
    denominators: Sequence[float | None],
    *,
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> Estimate:
    """Pooled rate ``Σ numerators / Σ denominators`` with a percentile-bootstrap interval.

    For rates pooled over units, e.g. vote accuracy = Σ correct votes / Σ votes over games:
    unit ``i`` contributes ``(numerators[i], denominators[i])`` and whole units are resampled
    with replacement, so within-unit correlation is kept. Units with denominator 0 stay in the
    sample (and count in ``n``); a resample whose Σ denominators is 0 is skipped. A unit with
    ``None`` in either position is dropped and not counted. Denominators must be ``>= 0``.

    ``n`` is the number of units. ``mean`` is ``None`` when ``n = 0`` or all denominators are 0;
    ``n = 1`` gives the unit's ratio with no interval. Deterministic given ``seed``.
    """
    _check_params(level, n_boot)
    if len(numerators) != len(denominators):
        raise ValueError(f"{len(numerators)} numerators but {len(denominators)} denominators")
    pairs = [(a, b) for a, b in zip(numerators, denominators) if a is not None and b is not None]
    num = _clean([a for a, _ in pairs])
    den = _clean([b for _, b in pairs])
    if np.any(den < 0):
        raise ValueError("denominators must be >= 0")
    n = int(num.size)
    method = "ratio bootstrap"
    total = float(den.sum()) if n else 0.0
    if n == 0 or total == 0.0:
        return Estimate(None, None, None, n, level, method)
    ratio = float(num.sum()) / total
    if n == 1:
        return Estimate(ratio, None, None, 1, level, method)
    rng = np.random.default_rng(seed)
    stats: list[np.ndarray] = []
    for idx in _index_chunks(rng, n, n_boot):
        s_den = den[idx].sum(axis=1)
        s_num = num[idx].sum(axis=1)
        ok = s_den > 0
        stats.append(s_num[ok] / s_den[ok])
    ratios = np.concatenate(stats)
    if ratios.size == 0:  # pragma: no cover - needs every resample to miss all non-zero units
        return Estimate(ratio, None, None, n, level, method)
    if np.all(ratios == ratios[0]):
        return Estimate(ratio, ratio, ratio, n, level, method)
    low, high = _percentiles(ratios, level)
    return Estimate(ratio, low, high, n, level, method)


def wilson(k: int, n: int, *, level: float = 0.95) -> Estimate:
    """Proportion ``k / n`` with the Wilson score interval (Wilson 1927, "Probable inference, the
    law of succession, and statistical inference", JASA 22:209-212).

    The interval is the set of ``p`` for which ``|k/n - p| <= z * sqrt(p (1 - p) / n)``:
    ``(p̂ + z²/2n ± z * sqrt(p̂(1 - p̂)/n + z²/4n²)) / (1 + z²/n)`` with ``z`` the normal
    ``(1 + level) / 2`` quantile (1.95996... at 95 %). Unlike the Wald interval it stays inside
    [0, 1] and is not zero-width at ``k = 0`` or ``k = n``, so "100 % at n = 2" reads
    "100.0 % [34.2, 100.0] (n=2)". ``n = 0`` gives mean/low/high ``None``.
    ``method = "Wilson score"``.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k!r}, n={n!r}")
    method = "Wilson score"
    if n == 0:
        return Estimate(None, None, None, 0, level, method)
    from statistics import NormalDist
    z = NormalDist().inv_cdf((1.0 + level) / 2.0)
    p = k / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * ((p * (1 - p) / n + z2 / (4 * n * n)) ** 0.5) / (1 + z2 / n)
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return Estimate(p, low, high, n, level, method)


def clip(est: Estimate, low: float, high: float) -> Estimate:
    """``est`` with its mean and interval clipped to a metric's range ``[low, high]``.

    For an interval whose method is right but which is computed on a scale wider than the
    metric's own (a metric's interval never extends past what the metric can take). Not for a
    difference between two arms, whose range is twice as wide.
    """
    def c(x):
        return None if x is None else min(high, max(low, x))
    return Estimate(c(est.mean), c(est.low), c(est.high), est.n, est.level, est.method)


def bootstrap_units(by_unit: Mapping[Hashable, Any], metrics: Callable[[list], Mapping[str, float | None]],
                    keys: Sequence[str], base_by_unit: Mapping[Hashable, Any] | None = None, *,
                    n_boot: int = 1000, seed: int = 0, unit: str = "units") -> dict[str, dict]:
    """A cluster bootstrap: resample whole units (MAgIC setting ids: every game of a setting goes
    together) and recompute every metric from the resampled units' data.

    Args:
        by_unit: unit id -> that unit's data (e.g. the events of its games).
        metrics: ``metrics([data of unit, ...]) -> {key: value or None}``, computed on a list of
            unit data (one resample).
        keys: the metric keys to report.
        base_by_unit: the same for a base arm; then each key also gets ``diff_vs_base``, the
            paired difference (the same resampled ids for both arms; only ids both arms have).
        n_boot: resamples (none when there is one unit: the interval is then None).
        seed: numpy ``default_rng`` seed.
        unit: what a unit is, for the ``method`` text (``"bootstrap over <unit>"``).

    Returns:
        ``{key: {"estimate": Estimate.to_dict(), ["diff_vs_base": Estimate.to_dict()]}}``, with the
        95 % percentile interval (2.5th and 97.5th percentiles of the resampled values) and
        ``n`` = number of units. Resampling whole clusters keeps the games of one unit together
        (Efron & Tibshirani 1993, the cluster/block bootstrap).

    Raises:
        KeyError: ``metrics`` returned no value for one of ``keys``.
    """
    ids = sorted(by_unit)
    if base_by_unit is not None:
        ids = [i for i in ids if i in base_by_unit]

    def on(id_list, source):
        return metrics([source[i] for i in id_list])

    full = on(ids, by_unit)
    full_base = on(ids, base_by_unit) if base_by_unit is not None else None
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {k: [] for k in keys}
    diffs: dict[str, list[float]] = {k: [] for k in keys}
    if len(ids) > 1:
        for _ in range(n_boot):
            pick = [ids[j] for j in rng.integers(0, len(ids), len(ids))]
            m = on(pick, by_unit)
            mb = on(pick, base_by_unit) if base_by_unit is not None else None
            for k in keys:
                if m[k] is not None:
                    draws[k].append(m[k])
                if mb is not None and m[k] is not None and mb[k] is not None:
                    diffs[k].append(m[k] - mb[k])

    def ci(vals, mean, method):
        if mean is None:
            return Estimate(None, None, None, len(ids), method=method).to_dict()
        if len(vals) < 2:
            return Estimate(mean, None, None, len(ids), method=method).to_dict()
        lo, hi = np.percentile(vals, [2.5, 97.5])
        return Estimate(mean, float(lo), float(hi), len(ids), method=method).to_dict()

    out = {}
    for k in keys:
        out[k] = {"estimate": ci(draws[k], full[k], f"bootstrap over {unit}")}
        if full_base is not None:
            d = None if full[k] is None or full_base[k] is None else full[k] - full_base[k]
            out[k]["diff_vs_base"] = ci(diffs[k], d, f"paired bootstrap over {unit}")
    return out


def summary_sentence(
    name: str,
    est: Estimate,
    scale: float = 100,
    unit: str = "%",
    *,
    metric: str = "the score",
    digits: int = 1,
) -> str:
    """One sentence about a paired difference ``est`` of variant ``name`` from the base.

    E.g. ``"player_star changes the weighted score by +3.1 points [-2.0, 8.4] (n=6); the
    interval includes zero, so this is not distinguishable from no effect."`` With
    ``unit="%"`` the difference is in percentage *points*. The sentence always states whether
    the interval includes zero (or that there is no interval).
    """
    diff_unit = "points" if unit == "%" else unit
    if est.mean is None:
        return f"{name}: no paired units (n={est.n}), so there is no estimate of its effect on {metric}."
    head = f"{name} changes {metric} by {est.fmt(scale, digits, diff_unit, signed=True)}"
    pct = f"{est.level * 100:g} %"
    inc = est.includes_zero
    if inc is None:
        why = "with a single unit there is no interval" if est.n == 1 else "no interval could be computed"
        return f"{head}; {why}, so this is not distinguishable from no effect."
    if inc:
        return f"{head}; the interval includes zero, so this is not distinguishable from no effect."
    direction = "increase" if est.mean > 0 else "decrease"
    return (
        f"{head}; the {pct} interval excludes zero, so this {direction} is distinguishable "
        "from no effect."
    )
