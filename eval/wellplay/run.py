"""Run a WellPlay evaluation end to end into a run directory (``mas wellplay eval``).

See :mod:`mas_agents.eval.wellplay.evaluate` for the methods, shuffling and files written. The
run is configured by one :class:`WellPlayEvalConfig` (issue 51 item 5), which ``config.json`` records.

The answering agents are built by :mod:`mas_agents.eval.wellplay.agents` (:class:`AgentBuilds`,
:func:`build_eval_agent`). Kept inside a function: ``mas_agents.memory`` (faiss),
only where a recorded setting is read back, so a model-free evaluation and the readers of this
module (compare, ablate) do not load it.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import random
import threading
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from mas_agents.game.data import data_files
from mas_agents.graphs.mmg.dataset import Script, load_all, load_script
from mas_agents.game.record import check_same_run, holds_record, model_fields
from mas_agents.eval.wellplay.evaluate import (
    METHODS,
    MODEL_FREE,
    aggregate_runs,
    answer_order,
    chance_and_interval,
    evaluate_scripts,
    model_free_answerers,
    report_md,
    session_events,
    summarise,
)
from mas_agents.call_log import CallRecorder
from mas_agents.prompt_log import clear_call_log, record_prompts
from mas_agents.events import write_events
from mas_agents.game.cost import prompt_cost
from mas_agents.embedded import prefix_cache_mb
from mas_agents.model_specs import spec_text
from mas_agents.remote.usage import endpoint_report, parallel_calls
from mas_agents.game.run_config import NOT_RECORDED, RunConfig, ordered
from mas_agents.eval.wellplay.agents import AgentBuilds, build_eval_agent
from mas_agents.rundir import RunDir, Stopwatch, marks_run, versions, write_jsonl

#: the names this module gave before the agents' building moved out (their importers keep working)
__all__ = [
    "AGENT_METHODS",
    "PROGRESS",
    "WellPlayEvalConfig",
    "memory_settings",
    "read_progress",
    "run_wellplay_eval",
    "same_run_path",
    "scripts_for",
    "settings_record",
]

log = logging.getLogger(__name__)

#: the methods whose answering agent is :attr:`WellPlayEvalConfig.agent` (``session`` uses the game's)
AGENT_METHODS = ("pp", "op")


def settings_record(settings: Any) -> dict | None:
    """A :class:`mas_agents.memory.MemorySettings` as ``config.json`` holds it (its fields), or None."""
    if settings is None or isinstance(settings, Mapping):
        return None if settings is None else dict(settings)
    return dict(vars(settings))


def memory_settings(settings: Any) -> Any:
    """``settings`` as a :class:`mas_agents.memory.MemorySettings` (a recorded dict is rebuilt), or None.

    Raises:
        ValueError: a budget below 0 (:class:`mas_agents.memory.MemorySettings`).
    """
    if isinstance(settings, Mapping):
        from mas_agents.memory import MemorySettings   # faiss: only once a setting is read back
        return MemorySettings.from_record(settings)
    return settings


#: The order of config.json's first keys (as written before the typed configuration).
CONFIG_ORDER = ("kind", "method", "agent", "scripts", "lang", "model", "seed", "runs", "shuffle", "scoring", "run",
                "settings")

@dataclasses.dataclass(frozen=True, kw_only=True)
class WellPlayEvalConfig(RunConfig):
    """The configuration of one WellPlay evaluation (``mas wellplay eval``, :func:`run_wellplay_eval`).

    Recorded in ``config.json`` under these names: ``method``, ``agent``, ``lang``, ``seed``,
    ``runs``, ``shuffle``, ``scoring``, ``run``, ``settings`` (the memory budgets as a dict). The
    runner adds what follows from them: ``kind``, ``scripts`` (the names evaluated), ``model`` /
    ``models`` / ``default_model`` (:mod:`mas_agents.game.record`), ``record_prompts``,
    ``prefix_cache_mb``, ``versions`` and ``endpoints``.

    Attributes:
        method: one of :data:`mas_agents.eval.wellplay.evaluate.METHODS`.
        agent: agent spec answering for ``pp``/``op``; None for the other methods (``session``
            answers with each character's spec from the game's ``result.json``; a model-free
            method has no agent): set so on construction.
        lang: ``en`` or ``zh``.
        seed, runs: run ``i`` uses seed ``seed + i`` for the option shuffle and the model.
        shuffle, scoring: see :mod:`mas_agents.eval.wellplay.metrics`.
        run: the game directory a ``session`` evaluation reads (as first given).
        settings: :class:`mas_agents.memory.MemorySettings` (retrieval budgets) or None; a dict
            read back from ``config.json`` is rebuilt into one.
        out: the run directory (not recorded).
        data_root: datasets root (:func:`mas_agents.game.data.resolve_data_dir`; not recorded).
        script: display name, id, or ``"all"`` (ignored for ``session``: the game's script); not
            recorded (``scripts`` is); :meth:`from_record` restores it from ``scripts``.
        model: model spec (``local``, ``local:/x.gguf``, ``openai:NAME``) or a chat model object
            (not recorded as given: ``config.json``'s model fields say which model answered).
        concurrency: characters answering at once; None = :func:`mas_agents.remote.usage.parallel_calls`
            of ``model``. The files written do not depend on it (not recorded).
    """

    KIND = "wellplay-eval"

    method: str
    agent: Optional[str] = "plain"
    lang: str = "en"
    seed: int = 0
    runs: int = 1
    shuffle: bool = True
    scoring: str = "strict"
    run: Optional[Path] = None
    settings: Any = None
    out: Path = dataclasses.field(metadata=NOT_RECORDED)
    data_root: Path = dataclasses.field(metadata=NOT_RECORDED)
    script: Optional[str] = dataclasses.field(default=None, metadata=NOT_RECORDED)
    model: Any = dataclasses.field(default="local", metadata=NOT_RECORDED)
    concurrency: Optional[int] = dataclasses.field(default=None, metadata=NOT_RECORDED)

    def __post_init__(self) -> None:
        if self.method not in AGENT_METHODS and self.agent is not None:
            object.__setattr__(self, "agent", None)
        object.__setattr__(self, "settings", memory_settings(self.settings))

    def record(self) -> dict[str, Any]:
        """:meth:`RunConfig.record` with ``settings`` as its fields (``{"script_budget": ..}``)."""
        return {**super().record(), "settings": settings_record(self.settings)}

    @classmethod
    def from_record(cls, record: Mapping[str, Any], **extra: Any) -> "WellPlayEvalConfig":
        """:meth:`RunConfig.from_record`; ``script`` comes from the recorded ``scripts`` (the one
        name, else ``"all"``) unless given in ``extra``."""
        names = record.get("scripts")
        if "script" not in extra and names:
            extra["script"] = names[0] if len(names) == 1 else "all"
        return super().from_record(record, **extra)


def scripts_for(data_root: Path, method: str, script: str | None, lang: str, run: Path | None) -> tuple[list[Script], list[dict]]:
    """The scripts to evaluate and, for ``session``, the game's events.

    Raises:
        ValueError: ``session`` without ``--run``, or a ``--script`` that disagrees with the run.
    """
    if method == "session":
        if run is None:
            raise ValueError("--method session needs --run DIR, a directory written by `mas mmg run`")
        if not Path(run).is_dir():
            raise ValueError(f"--run {run}: {'a file, not a game directory' if Path(run).exists() else 'no such directory'} "
                             f"(--method session evaluates a directory written by `mas mmg run`)")
        if not RunDir(run).config.is_file():
            raise ValueError(f"--run {run}: no config.json: not a game directory (--method session evaluates a "
                             f"directory written by `mas mmg run`)")
        cfg = RunDir(run).read_config()
        if not isinstance(cfg, dict) or cfg.get("kind", "mmg") != "mmg" or "script" not in cfg:
            raise ValueError(f"--run {run}: {_run_kind(cfg)}, not a murder-mystery game; --method session "
                             f"evaluates a directory written by `mas mmg run`")
        events = session_events(run)
        sc = load_script(data_root, cfg["script"], cfg.get("lang", lang))
        if script and script.lower() not in ("all", sc.name.lower(), sc.id.lower()):
            raise ValueError(f"--script {script!r} differs from the game's script {sc.name!r} in {run}")
        return [sc], events
    if not script or script.lower() == "all":
        return load_all(data_root, lang), []
    return [load_script(data_root, script, lang)], []


def _run_kind(config: Any) -> str:
    """What a run's ``config.json`` says it holds, for an error: ``a Who is Spy? game``,
    ``a MAgIC game``, ``a 'compare' run``, ``a run of unknown kind``."""
    from mas_agents.game import contract as games
    kind = config.get("kind") if isinstance(config, dict) else None
    if not isinstance(kind, str) or not kind:
        return "its config.json names no kind of run"
    g = games.find(kind)
    return f"it holds a {g.title} game" if g is not None else f"it holds a {kind!r} run"


def same_run_path(out: Path, run: str | None) -> str | None:
    """``run`` (the game a ``session`` evaluation reads) as ``out/config.json`` stores it when both
    name the same directory: ``config.json`` keeps the path as first given, and a rerun naming it
    another way (``./runs/x`` for ``runs/x``, or absolute) is the same run. Paths are compared
    resolved against the current directory (a relative path stored from another directory may then
    differ, and the rerun is refused naming both). ``run`` itself otherwise."""
    if run is None:
        return None
    try:
        stored = RunDir(out).read_config().get("run")
    except (OSError, ValueError, AttributeError):
        return run
    if isinstance(stored, str) and stored != run and Path(stored).expanduser().resolve() == Path(run).expanduser().resolve():
        return stored
    return run


@marks_run
def run_wellplay_eval(cfg: WellPlayEvalConfig, *, make_agent: Callable[..., Any] | None = None,
                      tick: Callable[[], None] | None = None, total: Callable[[int], None] | None = None) -> dict:
    """Evaluate ``cfg.method`` and write ``config.json``, ``events.jsonl``, ``answers.jsonl``,
    ``llm_calls.jsonl``, ``result.json`` and ``report.md`` into ``cfg.out``.

    ``result.json`` also holds ``interval`` (95 % bootstrap interval of the weighted score over
    questions) and ``chance`` (``always_a`` / ``random`` on the same questions, shuffle, seeds and
    scoring): see :func:`mas_agents.eval.wellplay.evaluate.chance_and_interval`.

    Args:
        cfg: the evaluation (:class:`WellPlayEvalConfig`: method, scripts, model, seeds, ...).
        make_agent: ``(script, name, method, events, model, seed, *, recorder, settings, accounted,
            spec) -> (Agent, AccountedModel)`` (tests inject fakes);
            defaults to :func:`build_eval_agent`.
        tick/total: progress callbacks (one tick per question; total questions once).

    Into a directory that holds an evaluation (issue 46, :func:`mas_agents.game.record.check_same_run`):
    one of another configuration is refused, nothing written; a finished one of the same
    configuration is reused (its ``result.json`` returned, nothing run); an unfinished one
    resumes at the next unanswered question (issue 47 item 3): every answer is saved as it comes
    in :data:`PROGRESS` (removed once ``result.json`` is written), a rerun takes those answers as
    they are, asks only the rest (an agent whose questions are all answered is not even built)
    and keeps counting into the same ``llm_calls.jsonl``. A character resumed mid-file does not
    recall its answers given before the stop. ``config.json`` records ``models`` (the answering
    model; none for a model-free method) and ``default_model`` (:mod:`mas_agents.game.record`).

    Raises:
        ValueError: unknown method or scoring, or session without run.
        RunConflict: ``out`` holds an evaluation of another configuration (names the field).
    """
    method, out, model, seed, runs = cfg.method, Path(cfg.out), cfg.model, cfg.seed, cfg.runs
    lang, shuffle, scoring, run, settings = cfg.lang, cfg.shuffle, cfg.scoring, cfg.run, cfg.settings
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    if scoring not in ("strict", "upstream"):
        raise ValueError(f"unknown scoring {scoring!r}; expected strict or upstream")
    out.mkdir(parents=True, exist_ok=True)
    scripts, game_events = scripts_for(cfg.data_root, method, cfg.script, lang, run)
    # session: every character answers with the agent spec it played with (game result.json)
    specs = RunDir(run).read_result().get("agents", {}) if method == "session" else {}
    used = model_fields([] if method in MODEL_FREE else [spec_text(model)], model)   # one model answers for all
    config = ordered({"kind": cfg.KIND, **cfg.record(), "scripts": [s.name for s in scripts],
                      "model": used.pop("model") or None,
                      "data_files": data_files(scripts), **used,
                      "record_prompts": record_prompts() and method not in MODEL_FREE,
                      "prefix_cache_mb": prefix_cache_mb(), "versions": versions()}, CONFIG_ORDER)
    if holds_record(out):   # never over an evaluation of another configuration; a finished one is reused
        config["run"] = same_run_path(out, config["run"])
        check_same_run(out, config)
        if RunDir(out).has_result():
            log.warning("%s already holds this finished evaluation (same configuration): reused, not run again; "
                        "choose another --out to evaluate again", out)
            return RunDir(out).read_result()
    RunDir(out).write_config(config)
    if total:
        total(runs * sum(len(s.all_questions()) for s in scripts))
    before = read_progress(out / PROGRESS) if method not in MODEL_FREE else {}
    if before:   # resume: the calls made before the stop stay counted
        recorder = CallRecorder(RunDir(out).calls, load_existing=True)
        log.warning("%s: resuming an unfinished evaluation: %d answers on record are kept, the rest asked",
                    out, sum(len(v) for v in before.values()))
    else:
        (out / PROGRESS).unlink(missing_ok=True)
        clear_call_log(RunDir(out).calls)  # a re-run into the same dir starts its call and prompt logs afresh
        recorder = CallRecorder(RunDir(out).calls)
    saving = threading.Lock()
    watch = Stopwatch()
    make_agent = make_agent or build_eval_agent
    per_run, all_records, all_events = [], [], []
    accounted = None
    for i in range(runs):
        run_seed = seed + i
        rng = random.Random(run_seed)
        # model-free answerers share one random stream: they answer in order, whatever the model
        parallel = 1 if method in MODEL_FREE else (cfg.concurrency or parallel_calls(model))
        if method in MODEL_FREE:
            records, evs = evaluate_scripts([(sc, model_free_answerers(method, sc, rng)) for sc in scripts],
                                            seed=run_seed, shuffle=shuffle, scoring=scoring, tick=tick, concurrency=1)
        else:
            def save(rec: dict, ev: dict, i: int = i) -> None:
                line = json.dumps({"run": i, "record": rec, "event": ev}, ensure_ascii=False, default=str)
                with saving, open(out / PROGRESS, "a", encoding="utf-8") as f:
                    f.write(line + "\n")
                    f.flush()

            def make(sc: Script, name: str, acc: Any, run_seed: int = run_seed) -> tuple[Any, Any]:
                return make_agent(sc, name, method, game_events, model, run_seed, recorder=recorder,
                                  settings=settings, accounted=acc, spec=specs.get(name, cfg.agent or "plain"))

            order = [(scripts[si], scripts[si].characters[ci].name)
                     for si, ci in answer_order([(sc, None) for sc in scripts])]
            with AgentBuilds(make, order, background=parallel > 1, accounted=accounted) as builds:
                jobs = [(sc, {c.name: builds.answerer(sc, c.name) for c in sc.characters}) for sc in scripts]
                records, evs = evaluate_scripts(jobs, seed=run_seed, shuffle=shuffle, scoring=scoring,
                                                tick=tick, concurrency=parallel, answered=before.get(i),
                                                on_answer=save)
            accounted = builds.accounted
        for r in records:
            r["run"] = i
        all_events += evs
        s = summarise(records)
        s["seed"] = run_seed
        per_run.append(s)
        all_records += records
        write_jsonl(out / "answers.jsonl", all_records)
        write_events(RunDir(out).events, all_events)
    if accounted is not None:
        config["endpoints"] = endpoint_report([accounted])
        RunDir(out).write_config(config)
    agg = aggregate_runs(per_run)
    by_char: dict[str, list[dict]] = {}
    for r in all_records:
        by_char.setdefault(f"{r['script']} / {r['character']}", []).append(r)
    result = {"method": method, "scoring": scoring, "shuffle": shuffle, "lang": lang,
              "scripts": [s.name for s in scripts], "model": config["model"], **agg,
              "runs": per_run,
              **chance_and_interval(scripts, all_records, seed=seed, runs=runs, shuffle=shuffle, scoring=scoring),
              "per_character": {k: summarise(v) for k, v in by_char.items()} if len(scripts) == 1 else {},
              "per_script": {s.name: summarise([r for r in all_records if r["script"] == s.name]) for s in scripts},
              "llm": {**recorder.totals(), "prompt_cost": prompt_cost(out, all_events)}, "wall_time_s": watch.seconds}
    RunDir(out).write_result(result)
    RunDir(out).write_report(report_md(result))
    (out / PROGRESS).unlink(missing_ok=True)   # answers.jsonl holds them all now
    recorder.close()    # the prompt log -> llm_prompts.jsonl.gz
    return result


#: The answers of an unfinished evaluation, one JSON line per question as it is answered:
#: ``{"run": i, "record": <answers.jsonl record>, "event": <its mcq event>}``.
PROGRESS = "answered.jsonl"


def read_progress(path: Path) -> dict[int, dict[tuple[str, str, str], tuple[dict, dict]]]:
    """The answers saved in ``path`` (:data:`PROGRESS`): run index -> ``(script, character, qid)``
    -> ``(record, event)`` (:data:`mas_agents.eval.wellplay.evaluate.Answered`); ``{}`` when there is no file.
    A line that is not whole JSON (the process was killed while writing it) is skipped: that
    question is asked again."""
    out: dict[int, dict] = {}
    if not Path(path).is_file():
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                d = json.loads(line)
                rec, ev, i = d["record"], d["event"], int(d["run"])
                key = (rec["script"], rec["character"], rec["qid"])
            except (ValueError, KeyError, TypeError):
                continue
            out.setdefault(i, {})[key] = (rec, ev)
    return out
