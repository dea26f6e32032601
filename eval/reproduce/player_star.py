"""``mas reproduce player-star``: PLAYER* (Zhu, Zhao, Du, Gui, He 2024, arXiv:2404.17662) on WellPlay.

The protocol (issue 27, from PLAYER* §3-§4 and the authors' repository):

* every seat is played by one model (``--model``); the murderer plays the fixed framework
  :data:`mas_agents.graphs.mmg.rules.MURDERER_SPEC` (``plain``: the chain-of-thought agent) whatever the
  method, which is what ``mas wellplay compare`` does (PLAYER* §4.1);
* :data:`ROUNDS` = 3 open questioning rounds, :data:`QUESTIONS` = 1 question per agent per round;
* methods (:data:`METHODS`): ``player_star`` (PLAYER*), ``werewolf``, ``ocot`` (O-CoT),
  ``thinkthrice`` (the game-playing baselines, PLAYER* Appendix C.2), and ``pp`` / ``op``
  (personal / omniscient perspective: evaluation only, no game), plus the model-free chance
  lines ``always_a`` / ``random`` (:data:`CHANCE`);
* one game per (method, script) and :data:`EVAL_RUNS` = 3 evaluation runs of every character's
  question file (run ``i`` shuffles the options and seeds the model with ``i``; every method
  sees the same shuffles);
* English and Chinese scripts (:data:`LANGS`).

It composes :func:`mas_agents.eval.compare.run.run_compare` once per language into ``out/<lang>/`` (the
cells, their games, evaluations, ``report.md`` and ``scores.png`` are compare's, whose weighted
score is the plain mean over scripts) and reads the
cells back for PLAYER* App. B.3's pooled aggregation over scripts (:func:`pooled_aggregate`, the
released logs' aggregation too) and the plain mean over scripts beside it
(:func:`plain_mean_aggregate`), the per-question 95 % intervals (:func:`mas_agents.eval.wellplay.evaluate.score_interval`), the cost table in the form of
PLAYER* Table A5, the dataset statistics (Table 1) and the qualitative claims; its own charts,
``out/scores_<lang>.png``, draw the App. B.3 pooled score (:func:`score_charts`).

``--limit N`` keeps the first N scripts of each language in :func:`script_order` (fewest
characters first, then fewest questions: the cheapest games and evaluations first). Rounds and
questions per agent are never cut. A budget-limited or smoke run can also take a subset of the
languages (``--langs``), of the methods (``--methods``; the model-free chance lines always come
along, they cost nothing) and of the evaluation runs (``--eval-runs 1`` or 2 of the paper's 3):
:func:`left_out` lists what a run left out, and the report then marks itself partial and says so.
A rerun may add languages or methods to a run (finished cells are reused); the evaluation runs
must stay the same. An evaluation cut off midway resumes at its next unanswered question
(:func:`mas_agents.eval.wellplay.run.run_wellplay_eval`).

The modules: :mod:`~mas_agents.eval.reproduce.player_star_protocol` (the protocol's numbers,
subsets and scripts), :mod:`~mas_agents.eval.reproduce.player_star_numbers` (our numbers from the
cells), :mod:`~mas_agents.eval.reproduce.player_star_report` (the report); this one holds the run:
its configuration (:class:`PlayerStarRun`), :func:`check_out` and :func:`reproduce`.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from mas_agents.game.data import DataError
from mas_agents.eval.reproduce.common import (
    PaperRun,
    Progress,
    check_options,
    load_table,
    save_estimate,
    versus_actual,
    write_report,
)
from mas_agents.eval.reproduce.player_star_numbers import (
    AGGREGATIONS,
    actual_cost,
    claims,
    dataset_summary,
    method_summary,
    pooled_aggregate,
)
from mas_agents.eval.reproduce.player_star_protocol import (
    CHANCE,
    EVAL_RUNS,
    LANGS,
    METHODS,
    PAPER,
    QUESTIONS,
    ROUNDS,
    check_subsets,
    left_out,
    plan_line,
    script_order,
)
from mas_agents.eval.reproduce.player_star_report import PROTOCOL_DIFFERENCES, headline, report_md, score_charts
from mas_agents.eval.compare.run import CompareConfig, cell_dir, run_compare
from mas_agents.game.record import NOT_CONFIGURATION, check_same_run
from mas_agents.game.run_config import NOT_RECORDED
from mas_agents.eval.wellplay.run import run_wellplay_eval
from mas_agents.graphs.mmg.rules import MURDERER_SPEC
from mas_agents.model_specs import spec_text
from mas_agents.rundir import RunDir


def _one_model(model: Any) -> Any:
    """``model``, a one-element list unwrapped.

    Raises:
        ValueError: a list of several models."""
    if isinstance(model, (list, tuple)):
        if len(model) != 1:
            raise ValueError(f"--model: player-star plays every seat with one model, got {len(model)}")
        return model[0]
    return model


@dataclass(frozen=True, kw_only=True)
class PlayerStarRun(PaperRun):
    """The configuration of ``mas reproduce player-star``.

    ``config.json`` holds, in this order: ``model``, ``limit``, the protocol's ``rounds`` and
    ``questions`` (:data:`ROUNDS`, :data:`QUESTIONS`), ``eval_runs``, ``methods``, ``models`` (the
    one model), ``langs`` (:meth:`settings`), then ``murderer_agent`` and the ``scripts`` played
    per language. There is no ``others`` and no ``seed``: one model seats every character, and
    the games and evaluation runs use seeds 0, 1, 2 (:meth:`from_options` refuses them).

    Attributes:
        model: the model of every seat as recorded (a spec such as ``local`` / ``openai:NAME``; a
            chat model object, in tests, is recorded by its class name and kept in ``model_object``;
            a one-element list is accepted).
        limit: the first N scripts of each language in :func:`script_order`; None = all 12.
        eval_runs: evaluation runs per cell, 1 to :data:`EVAL_RUNS`.
        methods: the model methods then the chance lines (:data:`CHANCE`, always run); given as a
            comma-separated string or a list of model methods (:func:`check_subsets`).
        langs: the languages (:data:`LANGS` order; a comma-separated string is accepted).
        model_object: the chat model object of every seat, when ``model`` was given as one.
        play, evaluate: passed to :func:`mas_agents.eval.compare.run.run_compare` (tests inject
            counting wrappers); ``evaluate`` (default
            :func:`mas_agents.eval.wellplay.run.run_wellplay_eval`) is called with its
            configuration's ``runs`` set to ``eval_runs``.

    Raises:
        ValueError: a list of several models, ``limit`` < 1, or a bad subset (named).
    """

    PAPER = PAPER

    model: str
    limit: int | None = None
    eval_runs: int = EVAL_RUNS
    methods: tuple[str, ...] = (*METHODS, *CHANCE)
    langs: tuple[str, ...] = LANGS
    model_object: Any = field(default=None, metadata=NOT_RECORDED)
    play: Callable | None = field(default=None, metadata=NOT_RECORDED)
    evaluate: Callable | None = field(default=None, metadata=NOT_RECORDED)

    def __post_init__(self) -> None:
        super().__post_init__()
        model = _one_model(self.model)
        if not isinstance(model, str):
            object.__setattr__(self, "model_object", model)
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"--limit must be at least 1, got {self.limit}")
        methods = self.methods
        if methods is not None and not isinstance(methods, str):   # a list, or the recorded one with the chance lines
            methods = [m for m in methods if m not in CHANCE]
        langs, model_methods, eval_runs = check_subsets(self.langs, methods, self.eval_runs)
        object.__setattr__(self, "model", spec_text(model))
        object.__setattr__(self, "langs", langs)
        object.__setattr__(self, "methods", (*model_methods, *CHANCE))
        object.__setattr__(self, "eval_runs", eval_runs)

    @classmethod
    def from_options(cls, *, data_root: Path, out: Path, model: Any, others: str | None = None,
                     limit: int | None = None, seed: int = 0,
                     options: Mapping[str, Any] | None = None) -> "PlayerStarRun":
        """``options``: ``langs``, ``methods``, ``eval_runs`` (:meth:`PaperRun.from_options`).

        Raises:
            ValueError: also ``others`` unlike ``model`` and ``seed`` not 0 (see the class text)."""
        model = _one_model(model)
        if others is not None and others != model:
            raise ValueError("--others: player-star seats every character with --model (the paper: one model); "
                             "drop --others")
        if seed != 0:
            raise ValueError("--seed: player-star runs seed 0 only (one game per method and script, evaluation "
                             "runs 0, 1, 2)")
        if limit is not None and limit < 1:
            raise ValueError(f"--limit must be at least 1, got {limit}")
        opts = {k: v for k, v in check_options(PAPER, options or {}).items() if v is not None}
        return cls(data_root=data_root, out=out, model=model, limit=limit, **opts)

    def as_options(self) -> dict[str, Any]:
        opts: dict[str, Any] = {}
        if self.langs != LANGS:
            opts["langs"] = ",".join(self.langs)
        if self.model_methods() != METHODS:
            opts["methods"] = ",".join(self.model_methods())
        if self.eval_runs != EVAL_RUNS:
            opts["eval_runs"] = self.eval_runs
        return {"model": self.model, "others": None, "limit": self.limit, "seed": 0, "options": opts}

    def model_methods(self) -> tuple[str, ...]:
        """The methods that call the model (:attr:`methods` without the chance lines)."""
        return tuple(m for m in self.methods if m not in CHANCE)

    def seat_model(self) -> Any:
        """What every seat plays on: the chat model object when one was given, else the spec."""
        return self.model if self.model_object is None else self.model_object

    def settings(self) -> dict[str, Any]:
        """``config.json`` up to ``langs`` (the class text): what a rerun into ``out`` must share,
        but ``methods`` and ``langs``, which a rerun may extend."""
        rec = self.record()
        return {"model": rec["model"], "limit": rec["limit"], "rounds": ROUNDS, "questions": QUESTIONS,
                "eval_runs": rec["eval_runs"], "methods": rec["methods"],
                "models": [rec["model"]],   # one model seats every character
                "langs": rec["langs"]}


def check_out(config: PlayerStarRun) -> dict:
    """Check that ``config.out`` may hold this run, writing and running nothing: what
    :func:`reproduce` checks first, callable before a costly step (the CLI's estimate, ``mas
    reproduce all``'s other parts).

    Returns:
        The settings compared with ``out/config.json`` (:meth:`PlayerStarRun.settings`). A rerun
        may add methods or languages; another ``limit`` is another run (other scripts, so other
        tables), refused.

    Raises:
        ValueError: ``out`` holding a run with other settings
            (:class:`mas_agents.rundir.RunConflict`, names config.json).
    """
    settings = config.settings()
    # a rerun may add languages or methods (finished cells are reused); the rest must be the same
    check_same_run(config.out, {"kind": "reproduce", "paper": PAPER, **settings},
                   may_differ=("methods", "langs"), ignore=NOT_CONFIGURATION - {"model"})
    return settings


def solitary_boat_firefly(result_langs: Mapping[str, dict]) -> dict | None:
    """Our PLAYER* weighted score on Table A6's script (PLAYER* App. C.4: Solitary Boat Firefly,
    WellPlay 1702, in **Chinese**) for the table's comparison row: ``{"lang": "zh", "weighted_score":
    mean over the runs (0..1)}`` of that one script, from the zh run when it played 1702 and
    PLAYER*; else the same from the en run, which the report labels "en, not like for like"; None
    when neither played it. The score is App. B.3's pooled aggregation (:func:`pooled_aggregate`)
    of script 1702's own runs (``method_summary``'s ``"per_script_runs"``), never the language's
    mean over every script it ran; on one script the pooled and the plain mean are the same number.
    """
    for lang in ("zh", "en"):
        L = result_langs.get(lang) or {}
        s = (L.get("methods") or {}).get("player_star")
        if s is not None and "1702" in L.get("script_ids", []):
            agg = pooled_aggregate([s["per_script_runs"]["1702"]])
            return {"lang": lang, "weighted_score": agg["weighted_score"]["mean"]}
    return None


def reproduce(config: PlayerStarRun) -> dict:
    """Play and evaluate PLAYER*'s protocol (module docstring) and write ``out/report.md``.

    Args:
        config: the run (:class:`PlayerStarRun`); its ``data_root`` holds ``wellplay/``;
            ``out/<lang>/`` is a ``mas wellplay compare`` run per language. Rerunning with the
            same configuration reuses finished cells (resumable).

    Returns:
        The ``result.json`` dict.

    Raises:
        ValueError: a rerun into ``out`` with other settings (names config.json), or WellPlay data
            that is missing or malformed (names the file).
    """
    settings = check_out(config)
    langs, eval_runs, limit, label = config.langs, config.eval_runs, config.limit, config.model
    model_methods = config.model_methods()
    out, model, estimate, tick = config.out, config.seat_model(), config.estimate, config.tick
    out.mkdir(parents=True, exist_ok=True)
    if estimate is not None:   # the estimate made before the run, kept for a resumed run's report
        save_estimate(out, estimate)
    tables = {"table1": load_table("player_star_table1"), "table_a6": load_table("player_star_table_a6"),
              "released_logs": load_table("player_star_released_logs"),
              "released_logs_earlier": load_table("player_star_released_logs_earlier")}
    try:
        ordered = {lang: script_order(config.data_root, lang) for lang in langs}
    except DataError as exc:   # the CLI prints a ValueError as one line
        raise ValueError(f"--data-dir: {exc}") from exc
    chosen = {lang: s[:limit] if limit else s for lang, s in ordered.items()}
    RunDir(out).write_config({"kind": "reproduce", "paper": PAPER, **settings,
                                     "murderer_agent": MURDERER_SPEC,
                                     "scripts": {lang: [s.name for s in v] for lang, v in chosen.items()}})
    methods = list(config.methods)
    progress = Progress(sum(len(v) for v in chosen.values()) * len(methods), tick, paper=PAPER,
                        free=sum(len(v) for v in chosen.values()) * len(CHANCE))
    if tick:
        tick(plan_line(chosen, model_methods, eval_runs))
    run_evaluation = config.evaluate or run_wellplay_eval

    def evaluate(cfg: Any) -> dict:   # every evaluation of a cell makes eval_runs passes
        return run_evaluation(cfg.replace(runs=eval_runs))
    lock = threading.Lock()   # compare runs cells in threads for a remote model
    result_langs = {}
    for lang in langs:
        lang_out = out / lang
        by_name = {s.name: s for s in chosen[lang]}
        finished = {(m, s.id) for m in methods for s in chosen[lang]
                    if RunDir(cell_dir(lang_out, m, s.id, 0) / "eval").has_result()}

        def cell_done(label_: str, lang_out: Path = lang_out, by_name: dict = by_name, finished: set = finished,
                      lang: str = lang) -> None:
            m, name, _ = [p.strip() for p in label_.split(" / ")]
            sc = by_name[name]
            calls = 0
            if (m, sc.id) not in finished:
                d = cell_dir(lang_out, m, sc.id, 0)
                for part in ("game", "eval"):
                    p = RunDir(d / part).result
                    if p.exists():
                        calls += json.loads(p.read_text(encoding="utf-8")).get("llm", {}).get("calls", 0)
            with lock:
                progress.done(f"{lang} / {label_}", calls, free=m in CHANCE)

        run_compare(CompareConfig(data_root=config.data_root, out=lang_out, methods=methods, scripts=chosen[lang],
                                  seeds=1, model=model, lang=lang, rounds=ROUNDS, questions=QUESTIONS),
                    tick=cell_done, play=config.play, evaluate=evaluate)
        result_langs[lang] = {"scripts": [s.name for s in chosen[lang]], "script_ids": [s.id for s in chosen[lang]],
                              "methods": {m: method_summary(lang_out, m, chosen[lang]) for m in methods}}
    sbf = solitary_boat_firefly(result_langs)
    gone = left_out(langs, model_methods, eval_runs)
    result = {"model": label, "murderer_agent": MURDERER_SPEC, "limit": limit, "rounds": ROUNDS,
              "questions": QUESTIONS, "eval_runs": eval_runs, "methods": methods, "left_out": gone,
              "partial": limit is not None or bool(gone),
              "scripts_run": max((len(v) for v in chosen.values()), default=0), "scripts_full": 12,
              "aggregations": AGGREGATIONS,
              "langs": result_langs, "claims": claims({lang: L["methods"] for lang, L in result_langs.items()}),
              "dataset": dataset_summary(ordered, tables["table1"]),
              "solitary_boat_firefly": sbf,
              "differences": PROTOCOL_DIFFERENCES + ([f"Left out of the protocol (a subset run): {'; '.join(gone)}."]
                                                     if gone else []),
              # the released logs' language aggregates only (their per-script rows stay in the CSV)
              "paper_tables": {k: {"source": t.source, "rows": [r for r in t.rows if r.get("script_id", "all") == "all"]}
                               for k, t in tables.items()}}
    if estimate is not None:
        result["estimate_vs_actual"] = versus_actual(estimate, actual_cost(out, langs, methods, chosen))
    result["headline"] = headline(result)
    score_charts(result, out)
    write_report(out, paper=PAPER, config={**settings, "murderer_agent": MURDERER_SPEC,
                                           "scripts": {lang: v["scripts"] for lang, v in result_langs.items()}},
                 result=result, markdown=report_md(result, tables))
    return {"kind": "reproduce", "paper": PAPER, **result}
