"""The one session runner: play any registered game (:mod:`mas_agents.game.contract`) into a run directory.

It owns the run directory for every game (docs/reference/run-files.md):

* ``config.json``: ``{"kind": game.kind, **the game's fields, "endpoints", "record_prompts",
  "events_format", "prefix_cache_mb", "versions"}`` (``events_format``: :data:`mas_agents.events.EVENTS_FORMAT`;
  ``prefix_cache_mb``: the embedded engine's prefix-cache budget, :func:`mas_agents.embedded.prefix_cache_mb`;
  ``model`` and ``seed`` after the game's fields when it wrote none, then
  ``models``, ``seat_models`` and ``default_model``: the models the seats used, the run-record
  contract of :mod:`mas_agents.game.record`; ``data_files``: ``{path relative to the
  datasets root: SHA-256}`` of the dataset files the game's parameters were loaded from (a
  WellPlay script, a MAgIC setting, a drawn Who-is-Spy pair: :func:`mas_agents.game.data.data_files`;
  absent when none was), which ``mas rerun`` checks before it replays), written before the first move;
* ``events.jsonl``: streamed as the game goes (``mas serve`` watches it), rewritten whole at the
  end; for a game that checkpoints, rewritten after every graph step from the checkpoint;
* ``llm_calls.jsonl`` and the prompt log beside it (:class:`mas_agents.call_log.CallRecorder`;
  compressed when the game ends);
* ``checkpoints.sqlite`` for a game with :attr:`mas_agents.game.contract.GameDef.checkpoint` (LangGraph
  ``SqliteSaver``, one thread named after the game's kind; ``resume=True`` continues from it);
* ``result.json`` (with ``llm.prompt_cost``: prompt tokens, cached and reusable by an ideal prefix
  cache, per phase and agent, :func:`mas_agents.game.cost.prompt_cost`) and ``transcript.md`` at the
  end, ``run.lock`` while it runs
  (:func:`mas_agents.rundir.marks_run`).

Run again into a directory that holds a game (issue 46, :func:`mas_agents.game.record.check_same_run`):
a game of another configuration is refused (:class:`mas_agents.rundir.RunConflict`, naming the
field) and nothing is written; a finished game of the same configuration is reused (its
``result.json`` is returned, nothing is replayed or rewritten); an unfinished one is resumed
(a game that checkpoints, with ``resume``) or replayed from the start (its call and prompt logs
cleared first). Runners of many games skip those whose ``result.json`` exists.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any, Callable, Mapping

from mas_agents.game.data import data_files
from mas_agents.game.contract import GameDef, Table, get
from mas_agents.game.record import check_same_run, holds_record, model_fields
from mas_agents.game.seats import Hand, Seats
from mas_agents.call_log import CallRecorder
from mas_agents.prompt_log import clear_call_log
from mas_agents.events import EVENTS_FORMAT, follow_events, write_events
from mas_agents.game.cost import prompt_cost
from mas_agents.gc_tuning import fewer_collections
from mas_agents.embedded import prefix_cache_mb
from mas_agents.rundir import RunDir, Stopwatch, marks_run

log = logging.getLogger(__name__)


@marks_run
def run(game: str | GameDef, out: Path, *, model: Any = "local", seed: int = 0, temperature: float | None = None,
        resume: bool = False, progress: Callable[[int, int, str], None] | None = None,
        recorder: CallRecorder | None = None, hand: Mapping[str | int, Hand] | None = None, **params: Any) -> dict:
    """Set up the game ``game`` with ``params``, play (or resume) it into ``out`` and return its
    ``result.json``.

    Args:
        game: a registered run kind (``"wis"``, ``"mmg"``, ``"magic"``, or one a package
            registered) or a :class:`mas_agents.game.contract.GameDef`.
        out: the run directory (created).
        model: default model spec (``local``, ``openai:NAME``) or a chat model object.
        seed: sampling seed of models built from spec strings; the game may use it too.
        temperature: sampling temperature of models built from spec strings (None: default).
        resume: continue the game from ``out/checkpoints.sqlite`` (games that checkpoint only).
        progress: ``progress(done_steps, step_bound, node_names)`` after each graph step.
        recorder: the call recorder to use (it must write ``out/llm_calls.jsonl``); None: the
            runner makes one (reading the calls already there when ``resume``).
        hand: place -> :class:`mas_agents.game.seats.Hand`: seats handed built agents (a seat name
            or a 0-based index in seating order; :class:`mas_agents.game.seats.Seats`); ``config.json``'s
            ``seated`` names what holds each.
        params: the game's own parameters (:attr:`mas_agents.game.contract.GameDef.params`: its set-up's
            keyword-only arguments).

    Returns:
        The game's ``result.json`` content (the stored one when ``out`` holds this game finished).

    Raises:
        ValueError: an unknown game, a missing or unknown parameter (:func:`check_params`, before
            anything is written), ``resume`` for a game that does not checkpoint, what the
            game's setup raises for a bad parameter value, or a place of ``hand`` the game does
            not seat (nothing is left in ``out`` then).
        RunConflict: ``out`` holds a game of another configuration (a ``ValueError`` and a
            ``FileExistsError``; the message names the field); nothing is written.
        FileExistsError: an unfinished checkpointed game already in ``out`` and ``resume`` False.
        FileNotFoundError: ``resume`` but ``out`` holds no checkpoint, or a seat's local model file
            is missing (:func:`load_local_models`, after ``config.json``, before the first move).
    """
    from mas_agents.remote.usage import endpoint_report
    from mas_agents.rundir import versions

    g = get(game)
    check_params(g, params)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ckpt = RunDir(out).checkpoints
    calls = RunDir(out).calls
    finished = RunDir(out).has_result()
    played = holds_record(out)
    if played:   # another kind of run there: refused before any seat or model is built
        stored = RunDir(out).read_config()
        if isinstance(stored, dict) and stored.get("kind") != g.kind:
            check_same_run(out, {**stored, "kind": g.kind})    # RunConflict naming the field 'kind'
    if g.checkpoint:
        if resume and not ckpt.exists() and not finished:
            raise FileNotFoundError(f"{ckpt} does not exist: nothing to resume in {out}")
        if not resume and not finished and (ckpt.exists() or RunDir(out).events.exists()):
            raise FileExistsError(f"{out} already holds a game; pass --resume to continue it or choose another --out")
    elif resume:
        raise ValueError(f"{g.title} games do not resume mid-game: run it again into a new directory")
    new_log = not calls.exists()
    fresh_log = recorder is None
    recorder = recorder if recorder is not None else CallRecorder(calls, load_existing=resume and calls.exists())
    seats = Seats(recorder, model, seed, temperature=temperature, out=out, hand=hand)
    table: Table | None = None
    try:
        try:
            table = g.setup(seats, out=out, **params)
            if hand:
                table.config["seated"] = seats.handed(g.kind)
        except Exception:
            if new_log and calls.exists() and calls.stat().st_size == 0:
                calls.unlink()   # a refused set-up leaves nothing behind
            raise
        # the models the seats used (mas_agents.game.record), in the game's own dict: its result sees them
        fields = record_fields(seats, model)
        table.config["model"] = fields.pop("model")
        table.config.setdefault("seed", seed)
        table.config.update(fields)
        config = {"kind": g.kind, **table.config}
        files = data_files(*params.values())     # the dataset files the game's inputs were read from
        if files:
            config["data_files"] = files
        if played:   # never over a played run of another configuration; a finished one is reused
            check_same_run(out, config)
            if finished:
                log.warning("%s already holds this finished %s game (same configuration): reused, not replayed; "
                            "choose another --out to play it again", out, g.title)
                return RunDir(out).read_result()
        if not g.checkpoint and not resume and fresh_log:
            clear_call_log(calls)   # a replayed game starts its call and prompt logs afresh
            calls.touch()
        RunDir(out).write_config({**config, "endpoints": endpoint_report(seats.models()),
                                         "record_prompts": recorder.records_prompts,
                                         "events_format": EVENTS_FORMAT, "prefix_cache_mb": prefix_cache_mb(),
                                         "versions": versions()})
        load_local_models(seats.models())
        clock = Stopwatch()
        with fewer_collections():
            if g.checkpoint:
                values = _play_checkpointed(table, out, ckpt, resume, progress, {"configurable": {"thread_id": g.kind}},
                                            seats.models())
            else:
                values = _play(table, out, progress, seats.models())
        events = values.get("events", [])
        result = table.result(values, llm=recorder.totals(), wall_time_s=clock.seconds)
        # prompt tokens, cached, reusable by an ideal prefix cache (issue 48): under "llm", the calls'
        # cost, which a resumed game counts with its failed and redone calls
        result.setdefault("llm", {})["prompt_cost"] = prompt_cost(out, events)
        RunDir(out).write_result(result)
        RunDir(out).transcript.write_text(table.transcript(result, events), encoding="utf-8")
        recorder.close()    # the prompt log -> llm_prompts.jsonl.gz
        if table.finished:
            table.finished(events)
        return result
    finally:
        if table is not None and table.close:
            table.close()


def record_fields(seats: Seats, model: Any) -> dict:
    """The model fields of a game's ``config.json`` (:func:`mas_agents.game.record.model_fields`): the
    models its seats used (``models``, ``seat_models``, ``model``) and the default given
    (``default_model``), from the seats the game's set-up recorded (:meth:`Seats.seat`)."""
    return model_fields(seats.used_models(), model, seats.seat_models or None)


def load_local_models(models: list) -> int:
    """Load the embedded (llama.cpp) models among ``models`` (chat models, or accounted wrappers
    with the chat model as ``.model``) before the first turn; returns how many it loaded.

    A local model otherwise loads on its first call, and that wait would count against the first
    speaker's time limit (WiS §3.1: 10 s to describe). Measured on this 2-core machine (session
    19, the embedded model, a WiS game's first description): 5.2 s with the load, 4.7 s after it;
    the rest of a first call's extra time over the next ones (1.6-2.4 s) is its whole prompt
    evaluated with nothing cached. Loading is shared by the process
    (:func:`mas_agents.local_chat.LocalLlamaChat.load`), so later games pay nothing.

    Raises:
        FileNotFoundError: a local model's GGUF file does not exist.
    """
    from mas_agents.local_chat import LocalLlamaChat

    n = 0
    for m in models:
        inner = getattr(m, "model", m)
        if isinstance(inner, LocalLlamaChat):
            inner.load()
            n += 1
    return n


def check_params(game: GameDef, params: dict[str, Any]) -> None:
    """Raise ``ValueError`` naming the game's parameters when ``params`` lacks one its set-up
    requires or has one it does not take (checked against ``game.setup``'s signature)."""
    import inspect

    sig = inspect.signature(game.setup)
    takes = game.params
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
        return
    missing = [n for n in takes if sig.parameters[n].default is inspect.Parameter.empty and n not in params]
    unknown = sorted(set(params) - set(takes))
    if missing or unknown:
        what = "; ".join(filter(None, [f"missing {', '.join(missing)}" if missing else "",
                                       f"no parameter {', '.join(unknown)}" if unknown else ""]))
        raise ValueError(f"{game.kind}: {what}; its parameters: {', '.join(takes) or 'none'}")


def _limits(table: Table, models: list) -> dict:
    """The LangGraph config of one game: its step bound, and its fan-out width while the process
    plays several games at once (:func:`mas_agents.cells.cell_fanout`)."""
    from mas_agents.cells import cell_fanout
    cfg: dict[str, Any] = {"recursion_limit": table.step_bound}
    width = cell_fanout(models)
    if width is not None:
        cfg["max_concurrency"] = width
    return cfg


def _play(table: Table, out: Path, progress: Callable | None, models: list) -> dict:
    """Stream the whole state after each step into ``events.jsonl`` (:func:`follow_events`)."""
    states = table.graph.stream(table.start, _limits(table, models), stream_mode="values")
    if progress:
        states = _counted(states, table.step_bound, progress)
    return follow_events(RunDir(out).events, states, table.watch)


def _counted(states, bound: int, progress: Callable):
    for i, state in enumerate(states):
        if i:   # the first state streamed is the input
            progress(i, bound, "")
        yield state


def _play_checkpointed(table: Table, out: Path, ckpt: Path, resume: bool, progress: Callable | None,
                       thread: dict, models: list) -> dict:
    """Play or resume with a SQLite checkpoint; ``events.jsonl`` rewritten after every step."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(ckpt), check_same_thread=False)
    try:
        graph = table.graph.with_checkpointer(SqliteSaver(conn))
        cfg = {**thread, **_limits(table, models)}
        start: dict | None = table.start
        if resume:
            snap = graph.get_state(cfg)
            start = None if snap.values else table.start
            if snap.values and not snap.next:
                start = None  # already finished: nothing left to run
        steps = 0
        # "sync": each step's checkpoint is written before the next step starts (LangGraph's
        # default "async" writes it while the next step runs, so get_state below could still read
        # the step before, and an interrupt could lose a finished step's events)
        for update in graph.stream(start, cfg, stream_mode="updates", durability="sync"):
            steps += 1
            values = graph.get_state(cfg).values
            write_events(RunDir(out).events, values.get("events", []))
            if progress:
                progress(steps, table.step_bound, ",".join(update))
        values = graph.get_state(cfg).values
    finally:
        conn.close()
    write_events(RunDir(out).events, values.get("events", []))
    return dict(values)
