"""A paper's reproduction as an experiment (:mod:`mas_agents.game.experiments`): ``reproduce``, the
run directory of ``mas reproduce`` (:func:`mas_agents.eval.reproduce.common.write_report`; its
``config.json`` records ``kind``).
"""

from __future__ import annotations

from mas_agents.game.experiments import ExperimentDef, RunFiles, RunLine, register
from mas_agents.game.line_text import uniq

#: The run kind (``config.json`` ``kind`` of every reproduction).
KIND = "reproduce"


def line(files: RunFiles) -> RunLine:
    """The model, the pool of opponents and the others; its result's headline (else the paper,
    finished or partial), or "playing" before its result; the pool as its models when its record
    names none."""
    cfg, res = files.config, files.result
    pool = cfg.get("pool") if isinstance(cfg.get("pool"), list) else []
    headline = (str(res.get("headline") or f"{cfg.get('paper')}: finished"
                    + (" (partial)" if res.get("partial") else "")) if res else "playing")
    return RunLine(agents=uniq([cfg.get("model"), *pool, cfg.get("others")]), headline=headline,
                   models=None if files.models else uniq(pool))


DEF = register(ExperimentDef(KIND, line))
