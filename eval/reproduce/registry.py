"""The papers of ``mas reproduce`` by name: each one's configuration class (:data:`CONFIGS`), a
configuration built from the command's options (:func:`build`), and its check and run
(:func:`check_out`, :func:`run`), for the CLI, :func:`mas_agents.api.reproduce` and the estimate.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any, Mapping

from mas_agents.eval.reproduce import all as all_papers
from mas_agents.eval.reproduce import magic, player_star, wis
from mas_agents.eval.reproduce.common import PaperRun

#: ``mas reproduce`` paper -> its configuration class.
CONFIGS: dict[str, type[PaperRun]] = {**all_papers.CONFIGS, "all": all_papers.AllRun}
#: ``mas reproduce`` paper -> the module holding its ``check_out`` and ``reproduce`` (looked up when
#: called, so a test may replace them).
MODULES: dict[str, ModuleType] = {"magic": magic, "player-star": player_star, "wis": wis}
#: The options every paper takes besides ``model`` (:meth:`PaperRun.from_options`).
COMMON = ("others", "limit", "seed")


def build(paper: str, *, data_root: Path, out: Path, model: Any, options: Mapping[str, Any] | None = None) -> PaperRun:
    """The configuration of ``mas reproduce PAPER`` from its options: ``options`` holds
    ``others``, ``limit``, ``seed`` and the paper's own (``conditions``; ``langs``, ``methods``,
    ``eval_runs``), as :func:`mas_agents.api.reproduce` takes them.

    Raises:
        ValueError: an unknown paper, an option the paper does not take, or a bad value (named).
    """
    if paper not in CONFIGS:
        raise ValueError(f"unknown paper {paper!r}: choose magic, player-star, wis or all")
    own = dict(options or {})
    common = {k: own.pop(k) for k in COMMON if k in own}
    return CONFIGS[paper].from_options(data_root=data_root, out=out, model=model, **common, options=own)


def check_out(config: PaperRun) -> Any:
    """The paper's ``check_out(config)``: its options and ``out`` checked, nothing written.

    Raises:
        ValueError: ``out`` (or a part's folder, for ``all``) holding another run."""
    if config.PAPER == "all":
        return all_papers.check_out(config)
    return MODULES[config.PAPER].check_out(config)


def run(config: PaperRun) -> dict:
    """Play (or resume) the paper's protocol: its ``reproduce(config)``; returns ``result.json``'s dict."""
    if config.PAPER == "all":
        return all_papers.reproduce_all(config)
    return MODULES[config.PAPER].reproduce(config)
