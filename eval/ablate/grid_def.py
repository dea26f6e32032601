"""The ablation grid as an experiment (:mod:`mas_agents.game.experiments`): ``ablation``, the run
directory of :func:`mas_agents.eval.ablate.grid.run_ablate` (its ``config.json`` records ``kind``;
a grid written before it is recognised by ``base`` and ``benches``): one bench folder per bench,
each holding its variants' runs.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Callable

from mas_agents.game.experiments import ExperimentDef, Parts, RunFiles, RunLine, register
from mas_agents.game.line_text import uniq

#: The run kind (:data:`mas_agents.eval.ablate.grid.KIND`).
KIND = "ablation"


def whole_sentences(text: str, n: int = 600) -> str:
    """``text`` whole when it has at most ``n`` characters, else its sentences that fit in ``n``
    and "…": a headline cut mid-sentence (at 220 characters) lost the ablation's conclusion
    (issue 57, E15)."""
    if len(text) <= n:
        return text
    cut = text.rfind(". ", 0, n)
    return (text[:cut + 1] if cut > 0 else text[:n].rsplit(" ", 1)[0]) + " …"


def line(files: RunFiles) -> RunLine:
    """The variants (every subset of the blocks on the base, :func:`mas_agents.eval.ablate.grid.variants`,
    until its result names them) and its summary's whole sentences, else its progress."""
    cfg, res = files.config, files.result
    base = cfg.get("base", "")
    blocks = list(cfg.get("blocks") or [])
    agents = uniq(res.get("variants") or ["+".join([base, *c]) for k in range(len(blocks) + 1)
                                          for c in itertools.combinations(blocks, k)])
    summary = str(res.get("summary") or "")
    return RunLine(agents=agents, headline=whole_sentences(summary) if summary else files.progress()["text"])


def _bench_done(d: Path, finished: Callable[[Path], bool]) -> bool:
    """A bench is done when it has sub-runs and every one of them is finished."""
    if not d.is_dir():
        return False
    subs = [p.parent for p in d.rglob("config.json")]
    return bool(subs) and all(finished(p) for p in subs)


def count(d: Path, cfg: dict[str, Any], finished: Callable[[Path], bool]) -> Parts:
    """Benches done of its ``benches``, and every sub-run (at any depth) not finished."""
    benches = cfg.get("benches") or []
    done = [b for b in benches if _bench_done(d / b, finished)]
    open_ = [p.parent for p in sorted(d.rglob("config.json")) if p.parent != d and not finished(p.parent)]
    return Parts(len(done), len(benches), open_)


def recognizes(cfg: Any, res: Any, d: Path) -> bool:
    """A grid written before its ``config.json`` recorded ``kind``: one with ``base`` and ``benches``."""
    return isinstance(cfg, dict) and "base" in cfg and "benches" in cfg


DEF = register(ExperimentDef(KIND, line, recognizes=recognizes, parts="benches", doing="running", count=count,
                             composite=True))
