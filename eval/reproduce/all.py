"""``mas reproduce all``: the three papers against one endpoint, with one summary page (a model's
social-reasoning card).

Runs :mod:`mas_agents.eval.reproduce.magic`, :mod:`mas_agents.eval.reproduce.player_star` and :mod:`mas_agents.eval.reproduce.wis`
in ``out/magic``, ``out/player-star`` and ``out/wis`` (each resumable on its own), one after the
other, then writes ``out/report.md`` linking the three reports with each one's headline.

The WiS protocol needs a pool of at least two models: ``all`` seats ``--model`` against
``--others`` when given, else ``--model`` against itself (``MODEL,MODEL``), and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Mapping

from mas_agents.eval.reproduce import magic, player_star, wis
from mas_agents.eval.reproduce.common import PaperRun, check_options, md_table, write_report
from mas_agents.game.record import NOT_CONFIGURATION, check_same_run
from mas_agents.rundir import REPORT_FILE

#: (folder / ``mas reproduce`` name, module, title). The modules are looked up when a part runs
#: (``module.reproduce``), so a test may replace a part's function.
PARTS: tuple[tuple[str, ModuleType, str], ...] = (
    ("magic", magic, "MAgIC (Xu et al.)"),
    ("player-star", player_star, "PLAYER* / WellPlay (Zhu, Zhao et al.)"),
    ("wis", wis, "WiS: Who is Spy? (Hu et al.)"))
#: ``mas reproduce`` name -> the paper's configuration class.
CONFIGS: dict[str, type[PaperRun]] = {"magic": magic.MagicRun, "player-star": player_star.PlayerStarRun,
                                      "wis": wis.WisRun}


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


@dataclass(frozen=True, kw_only=True)
class AllRun(PaperRun):
    """The configuration of ``mas reproduce all`` (``config.json``: these fields, then
    ``models``, every seat's model).

    Attributes:
        model: the one model under test (``local``, ``openai:NAME``).
        others: magic's defenders and WiS's second pool member (None: ``model``).
        limit: every part's ``--limit`` (a smoke run).
        seed: every part's ``--seed`` (PLAYER* takes only 0).

    Raises:
        ValueError: ``model`` a list (:func:`wis_pool`).
    """

    PAPER = "all"

    model: str
    others: str | None = None
    limit: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        wis_pool(self.model, self.others)

    @classmethod
    def from_options(cls, *, data_root: Path, out: Path, model: Any, others: str | None = None,
                     limit: int | None = None, seed: int = 0, options: Mapping[str, Any] | None = None) -> "AllRun":
        """``all`` takes no paper's own option (:meth:`PaperRun.from_options`)."""
        check_options("all", options or {})
        return cls(data_root=data_root, out=out, model=model, others=others, limit=limit, seed=seed)

    def as_options(self) -> dict[str, Any]:
        return {"model": self.model, "others": self.others, "limit": self.limit, "seed": self.seed, "options": {}}

    def settings(self) -> dict[str, Any]:
        """``config.json`` after ``kind`` and ``paper``."""
        return {**self.record(), "models": sorted({self.model, self.others or self.model})}   # every seat's model

    def parts(self) -> list[tuple[str, ModuleType, str, PaperRun]]:
        """``(folder, module, title, configuration)`` of each part, in :data:`PARTS` order: in
        ``out/<folder>``, with :func:`part_options`, this run's ``limit``, ``seed``, ``tick`` and no
        estimate.

        Raises:
            ValueError: a part refuses an option (e.g. PLAYER* a seed other than 0)."""
        pool = wis_pool(self.model, self.others)
        return [(folder, mod, title,
                 CONFIGS[folder].from_options(data_root=self.data_root, out=self.out / folder,
                                              **part_options(folder, self.model, self.others, pool),
                                              limit=self.limit, seed=self.seed).replace(tick=self.tick))
                for folder, mod, title in PARTS]


def check_out(config: AllRun) -> list[tuple[str, ModuleType, str, PaperRun]]:
    """Check every part's options and run directory (``out/<folder>``, each paper module's
    ``check_out``) before any part runs, writing nothing; returns :meth:`AllRun.parts`.

    ``--limit`` may differ from an earlier ``all`` run only where every part allows it: MAgIC
    extends its run, PLAYER* and WiS refuse another limit (other scripts / games per arm are
    another run). Without this check the first part would run in full and a later one refuse.

    Raises:
        ValueError: a bad option, or a part's ``config.json`` holding other settings
            (:class:`mas_agents.rundir.RunConflict`, names that file and field).
    """
    parts = config.parts()
    for _folder, mod, _title, part in parts:
        mod.check_out(part)
    return parts


def reproduce_all(config: AllRun) -> dict:
    """Run the three papers' protocols and write the summary card; returns its ``result.json``.

    Raises:
        ValueError: bad options (from :func:`wis_pool` or a paper module), or ``out`` (or a part's
            folder) holding another run."""
    model, others, limit, out = config.model, config.others, config.limit, config.out
    pool = wis_pool(model, others)
    settings = config.settings()
    # never over another run; another limit may differ here, but the parts decide (check_out below)
    check_same_run(out, {"kind": "reproduce", "paper": "all", **settings}, may_differ=("limit",),
                   ignore=NOT_CONFIGURATION - {"model"})
    parts = []
    for folder, mod, title, part in check_out(config):
        res = mod.reproduce(part)
        parts.append({"paper": folder, "title": title, "model": part.as_options()["model"],
                      "headline": res.get("headline", ""),
                      "partial": bool(res.get("partial", limit is not None)), "report": f"{folder}/{REPORT_FILE}"})
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
    write_report(out, paper="all", config=settings, result=result, markdown="\n".join(lines))
    return result
