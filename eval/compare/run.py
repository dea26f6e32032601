"""``mas wellplay compare``: play and evaluate several methods on the same scripts and seeds.

For every (method, seed, script) *cell*:

* an **agent method** (an agent spec such as ``plain``, ``player_star``, ``werewolf``) plays one
  game with that spec for every non-murderer character (the murderer keeps the fixed
  framework, PLAYER* §4.1), then is evaluated with ``session``;
* ``pp`` / ``op`` are evaluated without a game (``plain`` agents);
* ``always_a`` / ``random`` are the model-free baselines.

Every evaluation of seed ``s`` uses ``seed=s``, so all methods see the same option shuffle
(a paired comparison). A cell is finished when its ``eval/result.json`` exists: rerunning the
same command skips finished cells, and a game interrupted mid-way resumes from its checkpoint.

The run directory holds ``cells/<method>/<script id>/seed<s>/{game,eval}/``, plus
``result.json``, ``report.md`` and ``scores.png`` (weighted score with its 95 % interval and n:
over seeds when there are several, else the cell's interval over questions; a std over one seed is
never shown as ± 0).

Cost (PLAYER* §4, Table A5 "Efficiency and Cost Comparison"): besides every game's total, a
method's gameplay cost is counted over the seats it plays (``game_seat_*``: every character but
the murderer, who plays the fixed ``plain`` agent whatever the method), and set against the
cheapest game-playing baseline (:data:`GAME_BASELINES`) and ``plain`` (:func:`cost_comparison`).

A comparison is configured by one :class:`CompareConfig` (issue 51 item 5). This module runs the
cells; the table over them is :mod:`mas_agents.eval.compare.table`, its report
:mod:`mas_agents.eval.compare.report`.

Imports kept inside functions: ``mas_agents.specs`` (faiss) in :func:`check_methods` and
``mas_agents.graphs.mmg.session`` (langgraph, faiss) in :func:`run_cell`, so a comparison of
evaluation-only methods loads neither.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable, Optional

from mas_agents.game.data import data_files, merge_data_files
from mas_agents.graphs.mmg.dataset import load_script
from mas_agents.game.cost import actor_cost, method_seats
from mas_agents.eval.compare.report import bar_chart, fewer_calls_line, report_md
from mas_agents.eval.compare.table import EVAL_ONLY, aggregate, cost_comparison, is_game_method
from mas_agents.game.record import NOT_CONFIGURATION, check_same_run, model_fields, recorded_models
from mas_agents.game.run_config import NOT_RECORDED, RunConfig, ordered
from mas_agents.eval.wellplay.evaluate import MODEL_FREE
from mas_agents.eval.wellplay.run import WellPlayEvalConfig, run_wellplay_eval
from mas_agents.prompt_log import record_prompts
from mas_agents.cells import default_concurrency, run_cells
from mas_agents.model_specs import spec_text
from mas_agents.remote.usage import auto_concurrency
from mas_agents.rundir import RunDir, marks_run, read_json, versions

#: the names this module gave before its table and report moved out (their importers keep working)
__all__ = [
    "CompareConfig",
    "DEFAULT_METHODS",
    "EXTENDS",
    "cell_dir",
    "cell_finished",
    "check_methods",
    "game_seat_cost",
    "run_cell",
    "run_compare",
    "summary_row",
]

DEFAULT_METHODS = ("pp", "op", "plain", "player_star", "werewolf", "ocot", "thinkthrice", "always_a", "random")


def check_methods(methods: list[str]) -> None:
    """Raise ValueError naming any method that is neither an eval method nor a known agent spec."""
    from mas_agents.specs import parse_spec   # faiss (the planner blocks' memory): only when checking
    for m in methods:
        if m in EVAL_ONLY:
            continue
        try:
            parse_spec(m)
        except ValueError as exc:
            raise ValueError(f"--methods: {m!r} is neither one of {', '.join(EVAL_ONLY)} nor an agent spec ({exc})") from exc


def cell_dir(out: Path, method: str, script_id: str, seed: int) -> Path:
    return out / "cells" / method.replace("+", "_") / script_id / f"seed{seed}"


def cell_finished(d: Path) -> bool:
    """Whether the cell in directory ``d`` is done: its evaluation wrote ``eval/result.json``."""
    return RunDir(d / "eval").has_result()


#: The order of config.json's first keys (as written before the typed configuration).
CONFIG_ORDER = ("kind", "methods", "scripts", "seeds", "model", "lang", "rounds", "questions")


@dataclasses.dataclass(frozen=True, kw_only=True)
class CompareConfig(RunConfig):
    """The configuration of one WellPlay comparison (``mas wellplay compare``, :func:`run_compare`).

    Recorded in ``config.json`` under these names: ``methods``, ``scripts`` (display names),
    ``seeds``, ``lang``, ``rounds``, ``questions``; the runner adds ``kind``, the model fields
    (``model``, ``models``, ``default_model``: :mod:`mas_agents.game.record`),
    ``data_files`` (the files of every script of the run, those of an earlier run into ``out``
    too: :func:`mas_agents.game.data.merge_data_files`), ``record_prompts`` and ``versions``.

    Attributes:
        methods: pp, op, always_a, random and agent specs (:func:`check_methods`).
        scripts: loaded :class:`mas_agents.graphs.mmg.dataset.Script` objects, or names or ids
            (loaded from ``data_root`` when run); recorded by display name.
        seeds: seeds ``0 .. seeds-1``; each seed is one game per method and one option shuffle.
        lang: ``en`` or ``zh``. rounds, questions: each game's (:class:`mas_agents.graphs.mmg.session.MmgConfig`).
        out: the run directory; data_root: datasets root (neither recorded).
        model: model spec or chat model object of every seat and evaluation (not recorded as given).
        concurrency: cells run at once on the configured executor (:func:`mas_agents.cells.run_cells`:
            threads, or Ray tasks in flight; in one process the local model serialises its own calls, so
            >1 helps remote models only); None = ``--max-connections`` for a remote model, else 1. Not recorded.
        settings: :class:`mas_agents.memory.MemorySettings` of every game and evaluation (None: the
            defaults); not recorded in the comparison's ``config.json`` (each cell's records it).
    """

    KIND = "wellplay-compare"

    methods: tuple[str, ...]
    scripts: tuple[Any, ...]
    seeds: int = 1
    lang: str = "en"
    rounds: int = 3
    questions: int = 1
    out: Path = dataclasses.field(metadata=NOT_RECORDED)
    data_root: Path = dataclasses.field(metadata=NOT_RECORDED)
    model: Any = dataclasses.field(default="local", metadata=NOT_RECORDED)
    concurrency: Optional[int] = dataclasses.field(default=None, metadata=NOT_RECORDED)
    settings: Any = dataclasses.field(default=None, metadata=NOT_RECORDED)

    def __post_init__(self) -> None:
        object.__setattr__(self, "methods", tuple(self.methods))
        object.__setattr__(self, "scripts", tuple(self.scripts))

    def record(self) -> dict[str, Any]:
        """:meth:`RunConfig.record` with the scripts by display name."""
        return {**super().record(), "scripts": [s if isinstance(s, str) else s.name for s in self.scripts]}

    def loaded_scripts(self) -> list[Any]:
        """:attr:`scripts` as loaded scripts (a name or id loaded from :attr:`data_root`).

        Raises:
            DataError: an unknown script (names it)."""
        return [load_script(self.data_root, s, self.lang) if isinstance(s, str) else s for s in self.scripts]


def run_cell(cfg: CompareConfig, method: str, sc: Any, seed: int, *, play: Callable | None = None,
             evaluate: Callable | None = None) -> dict:
    """Play (if needed) and evaluate one cell of ``cfg`` (its ``out`` is the comparison's run
    directory); returns a summary row. Skips finished work.

    ``play(MmgConfig, *, resume)`` / ``evaluate(WellPlayEvalConfig)`` default to
    :func:`mas_agents.graphs.mmg.session.play_script` and
    :func:`mas_agents.eval.wellplay.run.run_wellplay_eval` (tests inject fakes through ``model``).
    """
    d = cell_dir(cfg.out, method, sc.id, seed)
    game = d / "game"
    ev = d / "eval"
    evaluate = evaluate or run_wellplay_eval
    if cell_finished(d):
        return {**summary_row(method, sc, seed, d), "reused": True}
    answers = dict(data_root=cfg.data_root, out=ev, lang=cfg.lang, model=cfg.model, seed=seed, settings=cfg.settings)
    if is_game_method(method):
        if not RunDir(game).has_result():
            # langgraph and faiss: loaded for the first game, not for a comparison without one
            from mas_agents.graphs.mmg.session import MmgConfig, play_script
            (play or play_script)(MmgConfig(script=sc, out=game, agent=method, model=cfg.model, rounds=cfg.rounds,
                                            questions=cfg.questions, seed=seed, lang=cfg.lang, settings=cfg.settings,
                                            data_dir=cfg.data_root),
                                  resume=RunDir(game).checkpoints.exists())
        evaluate(WellPlayEvalConfig(method="session", run=game, **answers))
    else:
        evaluate(WellPlayEvalConfig(method=method, script=sc.id, **answers))
    return {**summary_row(method, sc, seed, d), "reused": False}


def game_seat_cost(game: Path) -> dict | None:
    """The gameplay cost of the seats a method plays in one finished game directory ``game``.

    The seats are the characters whose role in ``game/result.json`` (``roles``: name -> role) is
    not ``"murderer"``: the murderer plays :data:`mas_agents.graphs.mmg.rules.MURDERER_SPEC` whatever the
    method (PLAYER* §4.1), so its calls are not the method's cost. The calls are the lines of
    ``game/llm_calls.jsonl`` whose ``actor`` is one of those seats (every call of the game, a
    resumed game's calls before the resume too; :func:`mas_agents.game.cost.actor_cost` over
    :func:`mas_agents.game.cost.method_seats`).

    Returns:
        ``{"calls": int, "input_tokens": int, "output_tokens": int}`` (counts, summed over the
        seats), or None when ``result.json`` records no roles (the seats are unknown).
    """
    roles = RunDir(game).read_result().get("roles")
    if not roles:
        return None
    c = actor_cost(RunDir(game).calls, method_seats(roles))
    return {k: c[k] for k in ("calls", "input_tokens", "output_tokens")}


def summary_row(method: str, sc: Any, seed: int, d: Path) -> dict:
    """One (method, script, seed) row from the cell's result files.

    ``game_calls`` / ``game_*_tokens`` are the game's totals (``game/result.json``, every
    character); ``game_seat_calls`` / ``game_seat_*_tokens`` those of the seats the method plays
    (:func:`game_seat_cost`; 0 for a method that plays no game, None when the seats are unknown).
    ``*_model_s`` is the summed latency of the part's model calls in seconds (every call in
    ``llm_calls.jsonl``, so it includes a game's calls before a resume); ``*_wall_s`` is the
    wall time of the process that finished the part (a resumed game counts only its last run)."""
    ev = RunDir(d / "eval").read_result()
    row = {"method": method, "script": sc.name, "seed": seed, "weighted_score": ev["weighted_score"],
           "interval": ev.get("interval"),
           "accuracy": ev["accuracy"], "counts": ev.get("counts"),
           "abstained": ev["runs"][0]["abstained"] if ev.get("runs") else 0,
           "eval_calls": ev["llm"]["calls"], "eval_input_tokens": ev["llm"]["input_tokens"],
           "eval_output_tokens": ev["llm"]["output_tokens"], "eval_wall_s": ev["wall_time_s"],
           "eval_model_s": ev["llm"]["latency_s"], "eval_cache_hit": ev["llm"].get("cache_hit"),
           "eval_reusable": (ev["llm"].get("prompt_cost") or {}).get("reusable_share"), "game_reusable": None,
           "game_cache_hit": None, "game_calls": 0, "game_input_tokens": 0, "game_output_tokens": 0, "game_wall_s": 0.0, "game_model_s": 0.0,
           "game_seat_calls": 0, "game_seat_input_tokens": 0, "game_seat_output_tokens": 0,
           "murderer_caught": None, "invalid_actions": None}
    g = RunDir(d / "game").result
    if g.exists():
        gr = read_json(g)
        llm = gr["llm"]
        row.update(game_calls=llm["calls"], game_input_tokens=llm["input_tokens"],
                   game_output_tokens=llm["output_tokens"], game_wall_s=gr["wall_time_s"],
                   game_model_s=llm["latency_s"], game_cache_hit=llm.get("cache_hit"),
                   game_reusable=(llm.get("prompt_cost") or {}).get("reusable_share"),
                   murderer_caught=(gr.get("outcome") or {}).get("murderer_caught"),
                   invalid_actions=gr.get("invalid_actions"))
        seat = game_seat_cost(d / "game")
        row.update({f"game_seat_{k}": None if seat is None else seat[k]
                    for k in ("calls", "input_tokens", "output_tokens")})
    return row


#: Fields of ``config.json`` a rerun into the same directory may change: it extends the run
#: (the models then follow the methods); see :mod:`mas_agents.game.record`.
EXTENDS = ("methods", "scripts", "seeds", "models")


@marks_run
def run_compare(cfg: CompareConfig, *, tick: Callable[[str], None] | None = None, play: Callable | None = None,
                evaluate: Callable | None = None) -> dict:
    """Run every cell of ``cfg`` (skipping finished ones) and write ``result.json``, ``report.md``,
    ``scores.png`` into ``cfg.out``.

    A rerun into the same ``out`` with other methods, scripts or seeds extends the run: only the
    cells asked are played; ``config.json`` and the result name the union of the stored and asked
    methods, scripts (a stored one is loaded by name), seeds (the larger count) and models, and the
    result counts every finished cell of that union (an unfinished earlier cell is not played unasked).

    Args:
        cfg: the comparison (:class:`CompareConfig`).
        tick: called with a cell label as each cell finishes.
        play, evaluate: the game and evaluation runners of a cell (:func:`run_cell`).

    Raises:
        ValueError: an unknown method.
        RunConflict: ``out`` holds a comparison with another model, lang, rounds or questions
            (:func:`mas_agents.game.record.check_same_run`; other methods, scripts or seeds extend it).
    """
    out, model, lang, data_root = Path(cfg.out), cfg.model, cfg.lang, cfg.data_root
    methods, seeds = list(cfg.methods), cfg.seeds
    check_methods(methods)
    scripts = cfg.loaded_scripts()
    out.mkdir(parents=True, exist_ok=True)
    # every seat of every game and every evaluation runs ``model``; model-free methods none
    used = model_fields([spec_text(model)] if any(m not in MODEL_FREE for m in methods) else [], model)
    config = ordered({"kind": cfg.KIND, **cfg.record(), "methods": methods, "model": used.pop("model"), **used},
                     CONFIG_ORDER)
    # a rerun may add methods, scripts or seeds (finished cells are reused); the model given
    # (default_model, which every seat runs), lang, rounds and questions must be the same
    stored = check_same_run(out, config, may_differ=EXTENDS, ignore=NOT_CONFIGURATION - {"default_model"})
    asked = [(m, sc, s) for s in range(seeds) for sc in scripts for m in methods]
    # an extending rerun adds to the record: config.json and the result keep what was run before
    # (the union of the stored and asked methods, scripts, seeds and models); only the cells asked
    # now are played, earlier ones count when they are finished (an unfinished one is not played
    # unasked: it is resumed by asking for it again)
    earlier: list = []
    if stored:
        held = set(methods)
        methods = list(methods) + [m for m in stored.get("methods") or [] if m not in held]
        names = {sc.name for sc in scripts}
        scripts = list(scripts) + [load_script(data_root, n, lang) for n in stored.get("scripts") or []
                                   if n not in names]
        seeds = max(seeds, int(stored.get("seeds") or 0))
        wanted = {(m, sc.name, s) for m, sc, s in asked}
        earlier = [(m, sc, s) for s in range(seeds) for sc in scripts for m in methods
                   if (m, sc.name, s) not in wanted and cell_finished(cell_dir(out, m, sc.id, s))]
        config.update(model_fields(recorded_models(stored) + list(config["models"]), model))
        config.update(methods=methods, scripts=[sc.name for sc in scripts], seeds=seeds)
    # the script files every cell reads (an earlier run's too)
    files = merge_data_files((stored or {}).get("data_files"), data_files(scripts))
    RunDir(out).write_config({**config, **({"data_files": files} if files else {}),
                                     "record_prompts": record_prompts(), "versions": versions()})
    cells = asked

    def one(cell, root: Path):
        m, sc, s = cell
        return run_cell(cfg.replace(out=root), m, sc, s, play=play, evaluate=evaluate)

    def rel(cell) -> str:
        return cell_dir(Path(), cell[0], cell[1].id, cell[2]).as_posix()

    concurrency = cfg.concurrency
    if concurrency is None:
        concurrency = default_concurrency([model], auto_concurrency([model]))
    rows = run_cells(cells, one, root=out, rel=rel, models=[model], concurrency=concurrency,
                     finished=lambda c: cell_finished(out / rel(c)),
                     done=(lambda c, r: tick(f"{c[0]} / {c[1].name} / seed {c[2]}")) if tick else None)
    rows = list(rows) + [{**summary_row(m, sc, s, cell_dir(out, m, sc.id, s)), "reused": True}
                         for m, sc, s in earlier]
    table = aggregate(rows, methods)
    result = {"methods": methods, "scripts": [s.name for s in scripts], "seeds": seeds, "lang": lang,
              "model": config["model"], "models": config["models"], "rounds": cfg.rounds,
              "questions": cfg.questions, "table": table, "cells": rows, "fewer_calls": fewer_calls_line(table),
              "gameplay_cost": cost_comparison(table),
              "reused_cells": sum(1 for r in rows if r.get("reused"))}
    RunDir(out).write_result(result)
    bar_chart(table, out / "scores.png")
    RunDir(out).write_report(report_md(result))
    return result
