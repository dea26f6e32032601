"""Words for a run's line in ``mas serve``'s runs list, shared by the experiments' lines
(:attr:`mas_agents.game.experiments.ExperimentDef.line`) and the web: rates in percent with their
Wilson 95 % intervals and n (:mod:`mas_agents.stats`), the specs a run names, and the tolerant
reading of a record that may be being written. Pure text but :func:`read_json_or_none`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from mas_agents.stats import n_text, wilson


def pct(x: Any) -> str:
    """A fraction in percent with one decimal (``0.5`` -> ``"50.0 %"``); ``"-"`` when not a number."""
    return "-" if not isinstance(x, (int, float)) else f"{100 * x:.1f} %"


def interval_text(iv: Any, n_unit: str = "") -> str:
    """A recorded interval ``{"low", "high", "n"}`` as ``" [low, high] (n=N unit)"`` in percent;
    ``""`` when there is none (``low`` missing or None)."""
    if not isinstance(iv, dict) or iv.get("low") is None:
        return ""
    n = n_text(iv["n"], n_unit) if isinstance(iv.get("n"), int) else iv.get("n")
    return f" [{100 * iv['low']:.1f}, {100 * iv['high']:.1f}] (n={n})"


def rate_text(r: dict[str, Any], num: str, den: str, value: Any) -> str:
    """A rate with its n and Wilson 95 % interval from the row's counts ``r[num]`` of ``r[den]``
    (:func:`mas_agents.stats.wilson`); the bare rate ``value`` (:func:`pct`) when the row has no
    valid counts."""
    k, n = r.get(num), r.get(den)
    if not isinstance(k, int) or not isinstance(n, int) or n <= 0 or not 0 <= k <= n:
        return pct(value)
    return wilson(k, n).fmt()


def uniq(xs: Iterable[Any]) -> list[str]:
    """The non-empty items of ``xs`` as text, each once, in order."""
    return list(dict.fromkeys(str(x) for x in xs if x))


def run_models(cfg: dict[str, Any]) -> list[str]:
    """The model specs a run's seats used: ``config.json`` ``models`` (the run-record contract:
    sorted distinct specs), else ``[model]`` for a run written before it (nothing for none)."""
    ms = cfg.get("models")
    if isinstance(ms, list) and ms:
        return [str(m) for m in ms if m]
    m = cfg.get("model")
    return [str(m)] if m else []


def read_json_or_none(path: Path) -> Any:
    """The JSON value in ``path``, or None when it is missing or not JSON (a file being written)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
