"""The WellPlay comparison as an experiment (:mod:`mas_agents.game.experiments`):
``wellplay-compare``, the run directory of :func:`mas_agents.eval.compare.run.run_compare`
(its ``config.json`` records ``kind``): methods × scripts × seeds cells, each a game and its
evaluation under ``cells/<method>/<script>/seed<k>/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from mas_agents.eval.compare.table import SCORE_AGGREGATION
from mas_agents.game.experiments import ExperimentDef, Parts, RunFiles, RunLine, register
from mas_agents.game.line_text import interval_text, pct, uniq

#: The run kind (:attr:`mas_agents.eval.compare.run.CompareConfig.KIND`).
KIND = "wellplay-compare"


def line(files: RunFiles) -> RunLine:
    """The methods compared; the best three by weighted score (with the aggregation named) and the
    progress."""
    table = files.result.get("table") or []
    best = sorted(table, key=lambda t: -(t.get("weighted_score") or 0))[:3]
    # the weighted score's aggregation named: a comparison's is the plain mean over scripts, not
    # the App. B.3 pooled one a reproduce run leads with
    headline = (f"best (weighted, {SCORE_AGGREGATION}): " + ", ".join(
        f"{t['method']} {pct(t.get('weighted_score'))}{interval_text(t.get('weighted_score_interval'))}"
        for t in best)) if best else ""
    headline += f" ({files.progress()['text']})"
    return RunLine(agents=uniq(files.config.get("methods") or []), headline=headline)


def count(d: Path, cfg: dict[str, Any], finished: Callable[[Path], bool]) -> Parts:
    """Cells done (an evaluation's ``result.json``) of methods × scripts × seeds (its
    ``config.json``), and the cells' sub-runs without a ``result.json``."""
    cells = d / "cells"
    done = len(list(cells.glob("*/*/seed*/eval/result.json"))) if cells.is_dir() else 0
    total = len(cfg.get("methods") or []) * len(cfg.get("scripts") or []) * int(cfg.get("seeds") or 1) or None
    open_ = ([p.parent for p in sorted(cells.rglob("config.json")) if not (p.parent / "result.json").exists()]
             if cells.is_dir() else [])
    return Parts(done, total, open_)


DEF = register(ExperimentDef(KIND, line, parts="cells", count=count, composite=True))
