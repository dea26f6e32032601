"""The kinds of run directory ``mas serve`` knows: every game registered in
:mod:`mas_agents.game.contract` (a single game; its ``GameDef`` gives its headline, seats and
replay) and every experiment registered in :mod:`mas_agents.game.experiments` (a run of many games
or of no game: its ``ExperimentDef`` gives its line, what its progress counts and which pages it
has). This module knows no kind by name: a page asks the two registries.

A run's kind is the one its runner recorded in ``config.json`` ``kind``; a run directory written
before its runner recorded it is recognised by the experiments' declared legacy recognisers
(:func:`mas_agents.game.experiments.legacy_kind`, the one fallback). A folder holding only a
``run.lock`` is :data:`UNCONFIGURED`. What is here: that lookup (:func:`detect_kind`), the
runs list's filters (:func:`all_kinds`), a run's state (:func:`run_state`: finished, running,
stopped) and its progress (:func:`progress`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from mas_agents.game import contract as game_registry
from mas_agents.game import experiments
from mas_agents.rundir import CALLS_FILE, CONFIG_FILE, EVENTS_FILE, RunDir, marker_process, read_run_marker
from mas_agents.web.paths import read_json as _read

#: The kind of a folder holding only a ``run.lock``: a run that failed (or is starting) before it
#: wrote its ``config.json`` (a game started from ``/play`` whose model could not be built). It is
#: listed, with the marker's error as its reason, so that a start that failed is not invisible.
UNCONFIGURED = "incomplete"


def is_game(kind: Any) -> bool:
    """``kind`` is a game registered in :mod:`mas_agents.game.contract` (a run of one game)."""
    return game_registry.find(kind) is not None


def all_kinds() -> tuple[str, ...]:
    """The kinds the runs list offers as filters: the built-in games, the registered experiments
    (:func:`mas_agents.game.experiments.kinds`), then every other registered game."""
    games = game_registry.kinds()
    built_in = [k for k in games if k in game_registry.BUILTIN]
    return tuple(built_in) + tuple(experiments.kinds()) + tuple(k for k in games if k not in built_in)


def detect_kind(d: Path) -> str | None:
    """The kind of run in ``d``: its ``config.json`` ``kind`` when that is a registered game or
    experiment, else the legacy recognisers' (:func:`mas_agents.game.experiments.legacy_kind`),
    or None when ``d`` is not a run."""
    d = Path(d)
    cfg = _read(RunDir(d).config) if RunDir(d).config.is_file() else None
    k = cfg.get("kind") if isinstance(cfg, dict) else None
    if experiments.find(k) is not None or is_game(k):
        return k
    res = _read(RunDir(d).result) if RunDir(d).result.is_file() else None
    return experiments.legacy_kind(cfg, res, d)


def leaderboard_id(d: Path, kind: str | None = None) -> str | None:
    """The leaderboard id of the run in ``d`` of kind ``kind`` (None: :func:`detect_kind`), by
    its experiment's :attr:`mas_agents.game.experiments.ExperimentDef.leaderboard_id`; None for a
    kind without a leaderboard, or when it names none yet."""
    ex = experiments.find(kind if kind is not None else detect_kind(d))
    return ex.leaderboard_id(Path(d)) if ex is not None and ex.leaderboard_id is not None else None


# ------------------------------------------------------------------ state and progress
#: A run without a process marker (written before markers existed, or by a runner that does not
#: write one) counts as running while one of its files was written less than this many seconds
#: ago: longer than a human seat's default time to answer (120 s) or a slow local model's call.
FRESH_S = 300
#: The files whose age (with the directory's own) tells whether a run without a marker is still
#: being written.
_WRITTEN = (EVENTS_FILE, CALLS_FILE, CONFIG_FILE, "human")


def _age(d: Path, deep: bool) -> float | None:
    """Seconds since a file of ``d`` was last written (``deep``: of its sub-runs too), or None."""
    paths = [d] + [d / n for n in _WRITTEN]
    if deep:
        paths += [p for n in (EVENTS_FILE, CALLS_FILE) for p in d.glob(f"**/{n}")][:2000]
    times = []
    for p in paths:
        try:
            times.append(p.stat().st_mtime)
        except OSError:
            pass
    return time.time() - max(times) if times else None


def _single(kind: str) -> bool:
    """A run of ``kind`` is one game (or a kind not known here): no sub-run to look into."""
    return experiments.find(kind) is None and kind != UNCONFIGURED


def run_state(d: Path, kind: str) -> tuple[str, str]:
    """``(state, reason)`` of the run in ``d`` of kind ``kind`` (``""``: unknown, read as one
    game): ``finished`` (its result is written), ``running`` (the process in its ``run.lock`` is
    alive on this host: :func:`mas_agents.rundir.marker_process`) or ``stopped`` (a marker whose
    process is gone, or that kept the runner's error). Without a marker: a run of many games with
    a running sub-run is running; otherwise a run is running while a file of it is younger than
    :data:`FRESH_S` seconds, else ``stopped (no process marker)``. A marker of another host (a
    shared disk) is judged by the same age rule."""
    d = Path(d)
    marker = read_run_marker(d)
    ex = experiments.find(kind)
    if ex is not None and not ex.own_result:
        games = [g for g in (d / "games").iterdir() if g.is_dir()] if (d / "games").is_dir() else []
        open_games = [g for g in games if not RunDir(g).result.exists()]
        if marker is None and games and not open_games:
            return "finished", ""
    elif isinstance(_read(RunDir(d).result), dict):
        return "finished", ""
    else:
        open_games = []
    if marker is not None:
        alive, why = marker_process(marker)
        if alive:
            return "running", ""
        if alive is False:
            return "stopped", why
    elif not _single(kind):
        subs = open_games or [p.parent for p in d.glob(f"*/**/{CONFIG_FILE}") if not RunDir(p.parent).has_result()]
        for sub in subs[:50]:
            if read_run_marker(sub) is not None and marker_process(read_run_marker(sub))[0]:
                return "running", ""
    age = _age(d, deep=not _single(kind))
    if age is not None and age < FRESH_S:
        return "running", (why + "; " if marker is not None else "no process marker; ") + f"last written {age:.0f} s ago"
    if marker is not None:
        return "stopped", why + f"; nothing written for {FRESH_S} s"
    return "stopped", "no process marker, and nothing written for " + (f"{age / 60:.0f} min" if age else "a while")


def progress(d: Path, kind: str, db_total: int | None = None) -> dict[str, Any]:
    """How far a run of many parts is: ``{"done", "total" (None when unknown), "running": [rel
    names of sub-runs started and not finished, still running], "stopped": [the same, stopped],
    "text"}``.

    The parts are counted by the run's experiment (:attr:`mas_agents.game.experiments.ExperimentDef.count`:
    a comparison's cells, an ablation's benches), else they are the games in ``d/games``: the
    total from ``db_total`` (a tournament's planned games) when given, else the games listed in
    ``result.json`` once finished. The text names the parts (:attr:`ExperimentDef.parts`) and the
    last one running (:attr:`ExperimentDef.doing`), else how many stopped before the end.
    """
    d = Path(d)
    cfg = _read(RunDir(d).config) or {}
    ex = experiments.find(kind)
    if ex is not None and ex.count is not None:
        parts = ex.count(d, cfg, _is_finished)
        done, total, open_ = parts.done, parts.total, parts.open
    else:
        games = sorted(g for g in (d / "games").iterdir() if g.is_dir()) if (d / "games").is_dir() else []
        done = sum(1 for g in games if RunDir(g).result.exists())
        open_ = [g for g in games if not RunDir(g).result.exists()]
        res = _read(RunDir(d).result) or {}
        total = db_total if db_total is not None else (len(res.get("games") or []) or None)
    running, stopped = _split_open(d, open_)
    what = ex.parts if ex is not None else "parts"
    text = f"{done} of {total} {what} finished" if total else f"{done} {what} finished"
    if running:
        text += f"; {ex.doing if ex is not None else 'playing'} {running[-1]}"
    elif stopped:
        text += f"; {len(stopped)} stopped before the end"
    return {"done": done, "total": total, "running": running, "stopped": stopped, "text": text}


def _split_open(d: Path, subs: list[Path]) -> tuple[list[str], list[str]]:
    """Unfinished sub-runs of ``d`` as ``(running, stopped)`` rel names (:func:`run_state`)."""
    running, stopped = [], []
    for sub in subs:
        (running if run_state(sub, detect_kind(sub) or "")[0] == "running" else stopped).append(
            sub.relative_to(d).as_posix())
    return running, stopped


def _is_finished(d: Path) -> bool:
    """The run in ``d`` has its result: a run of an experiment that writes no ``result.json`` of
    its own (a tournament: :attr:`mas_agents.game.experiments.ExperimentDef.own_result`) when it
    has games and every one has its ``result.json``; any other run when its ``result.json`` exists."""
    ex = experiments.find(detect_kind(d))
    if ex is not None and not ex.own_result and not RunDir(d).result.exists():
        games = [g for g in (d / "games").iterdir() if g.is_dir()] if (d / "games").is_dir() else []
        return bool(games) and all(RunDir(g).result.exists() for g in games)
    return RunDir(d).result.exists()
