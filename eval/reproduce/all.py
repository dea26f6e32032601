"""``mas reproduce all``: the three papers against one endpoint, with one summary page (a model's
social-reasoning card).

Runs :mod:`mas_agents.eval.reproduce.magic`, :mod:`mas_agents.eval.reproduce.player_star` and :mod:`mas_agents.eval.reproduce.wis`
in ``out/magic``, ``out/player-star`` and ``out/wis`` (each resumable on its own), one after the
other, then writes ``out/report.md`` linking the three reports with each one's headline.

The WiS protocol needs a pool of at least two models: ``all`` seats ``--model`` against
``--others`` when given, else ``--model`` against itself (``MODEL,MODEL``), and says so.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable

from mas_agents.eval.reproduce.common import md_table, write_report

#: (folder / ``mas reproduce`` name, module, title).
PARTS = (("magic", "magic", "MAgIC (Xu et al.)"),
         ("player-star", "player_star", "PLAYER* / WellPlay (Zhu, Zhao et al.)"),
         ("wis", "wis", "WiS: Who is Spy? (Hu et al.)"))


def wis_pool(model: str, others: str | None) -> str:
    """The WiS model pool for ``all``: ``model,others`` (``model,model`` without ``--others``).

    Raises:
        ValueError: ``model`` is already a list (``all`` tests one model; use ``mas reproduce wis``
            for a pool)."""
    if "," in model:
        raise ValueError(f"--model {model!r}: 'all' tests one model; give a pool to 'mas reproduce wis'")
    return f"{model},{others or model}"


def part_options(folder: str, model: str, others: str | None, pool: str) -> dict:
    """The ``model`` and ``others`` one part of ``all`` runs with: WiS the pool (:func:`wis_pool`),
    the others ``--model``; PLAYER*'s protocol seats every character with one model, so it gets no
    ``--others``."""
    return {"model": pool if folder == "wis" else model, "others": None if folder == "player-star" else others}


def check_out(*, out: Path, model: str, others: str | None, limit: int | None, seed: int = 0) -> None:
    """Check every part's options and run directory (``out/<folder>``, each paper module's
    ``check_out``) before any part runs, writing nothing.

    ``--limit`` may differ from an earlier ``all`` run only where every part allows it: MAgIC
    extends its run, PLAYER* and WiS refuse another limit (other scripts / games per arm are
    another run). Without this check the first part would run in full and a later one refuse.

    Raises:
        ValueError: a bad option, or a part's ``config.json`` holding other settings
            (:class:`mas_agents.eval.runs.record.RunConflict`, names that file and field).
    """
    pool = wis_pool(model, others)
    for folder, module, _title in PARTS:
        mod = importlib.import_module(f"mas_agents.eval.reproduce.{module}")
        mod.check_out(out=Path(out) / folder, **part_options(folder, model, others, pool), limit=limit, seed=seed)


def reproduce_all(*, data_root: Path, out: Path, model: str, others: str | None, limit: int | None,
                  seed: int = 0, tick: Callable[[str], None] | None = None) -> dict:
    """Run the three papers' protocols and write the summary card; returns its ``result.json``.

    Raises:
        ValueError: bad options (from :func:`wis_pool` or a paper module)."""
    from mas_agents.eval.runs.record import NOT_CONFIGURATION, check_same_run
    pool = wis_pool(model, others)
    out = Path(out)
    config = {"model": model, "others": others, "limit": limit, "seed": seed,
              "models": sorted({model, others or model})}   # every seat's model (mas_agents.eval.runs.record)
    # never over another run; another limit may differ here, but the parts decide (check_out below)
    check_same_run(out, {"kind": "reproduce", "paper": "all", **config}, may_differ=("limit",),
                   ignore=NOT_CONFIGURATION - {"model"})
    check_out(out=out, model=model, others=others, limit=limit, seed=seed)
    parts = []
    for folder, module, title in PARTS:
        mod = importlib.import_module(f"mas_agents.eval.reproduce.{module}")
        opts = part_options(folder, model, others, pool)
        res = mod.reproduce(data_root=data_root, out=out / folder, **opts, limit=limit, seed=seed, tick=tick)
        parts.append({"paper": folder, "title": title, "model": opts["model"], "headline": res.get("headline", ""),
                      "partial": bool(res.get("partial", limit is not None)), "report": f"{folder}/report.md"})
    lines = [f"# Social-reasoning card: {model}", "",
             f"Three papers' protocols against one endpoint: `--model {model}`"
             + (f", other seats `--others {others}`" if others else "") + (f", `--limit {limit}`" if limit else "")
             + f". Who is Spy? needs a pool of models: it seated `{pool}`.", ""]
    if limit is not None:
        lines += [f"> **Partial** (`--limit {limit}`): a smoke run of each protocol, not a reproduction.", ""]
    lines += md_table(["paper", "headline (ours; the paper's numbers are in each report)", "report"],
                      [[p["title"], p["headline"] or "-", f"[report]({p['report']})"] for p in parts])
    lines += [""]
    result = {"headline": "; ".join(f"{p['paper']}: {p['headline']}" for p in parts if p["headline"])[:300],
              "parts": parts, "partial": limit is not None}
    write_report(out, paper="all", config=config, result=result, markdown="\n".join(lines))
    return result
