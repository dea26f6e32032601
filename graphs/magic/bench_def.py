"""The MAgIC bench as an experiment (:mod:`mas_agents.game.experiments`): ``magic-bench``, the run
directory of :func:`mas_agents.graphs.magic.bench.run_magic` (its ``config.json`` records
``kind``; a bench written before it is recognised by ``challenger`` and ``scenarios``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mas_agents.game.experiments import ExperimentDef, RunFiles, RunLine, register
from mas_agents.game.line_text import interval_text, pct, uniq
from mas_agents.graphs.magic.bench_report import N_UNITS, lower_first
from mas_agents.graphs.magic.metrics import COORDINATION_LABELS, undefined_reason

#: The run kind (:data:`mas_agents.graphs.magic.bench.KIND`).
KIND = "magic-bench"


def _score_iv(x: Any, iv: Any, n_unit: str = "") -> str:
    """MAgIC Deception (a rate plus 0.25 × a rate, range [0, 1.25]) on the scale of MAgIC's
    tables (Table 1/4: percent, one decimal, so up to 125.0), with its interval and n: the
    same scale as the reports'."""
    if not isinstance(x, (int, float)):
        return "-"
    return f"{pct(x)}{interval_text(iv, n_unit)}"


def line(files: RunFiles) -> RunLine:
    """The challenger and defender; the win rate and every other metric with its interval and n
    (an undefined one says why), and the progress."""
    cfg, res = files.config, files.result
    m = res.get("metrics") or {}
    ivs = res.get("intervals") or {}
    units = N_UNITS   # what each n counts (votes, settings...), as in the bench's report.md
    # Coordination has two denominators (graphs/magic/metrics.py): each is named with its own, in the
    # words of every report (COORDINATION_LABELS, lower-case like the line's other names), and the
    # one ÷ agreed games, undefined with no agreed game, says so
    named = {k: lower_first(label) for k, label in COORDINATION_LABELS.items()}

    def value(k: str, v: Any) -> str:
        if k == "deception":
            return _score_iv(v, ivs.get(k), units.get(k, ""))
        why = undefined_reason(k, res.get("counts")) if v is None else "no data"
        return f"{pct(v)}{interval_text(ivs.get(k), units.get(k, ''))}" if why == "no data" else f"undefined: {why}"
    headline = (f"win rate {pct(m.get('win_rate'))}{interval_text(ivs.get('win_rate'), units['win_rate'])}; " + ", ".join(
        f"{named.get(k) or k.replace('self_', 'self-').replace('_', ' ')} {value(k, v)}"
        for k, v in m.items() if k != "win_rate")) if m else ""
    headline += f" ({files.progress()['text']})"
    return RunLine(agents=uniq([cfg.get("challenger"), cfg.get("defender")]), headline=headline)


def recognizes(cfg: Any, res: Any, d: Path) -> bool:
    """A bench written before its ``config.json`` recorded ``kind``: one with ``challenger`` and
    ``scenarios``."""
    return isinstance(cfg, dict) and "challenger" in cfg and "scenarios" in cfg


DEF = register(ExperimentDef(KIND, line, recognizes=recognizes, parts="games", composite=True))
