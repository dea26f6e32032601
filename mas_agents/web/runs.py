"""The run directories under ``--runs``: the runs list, each run's line, and when it started.

What each kind of run is, how it is recognised and what its line says is one table,
:mod:`mas_agents.web.run_kinds` (the games' lines come from their ``GameDef.headline``, the
experiments' from their ``ExperimentDef.line``); paths are
resolved by :func:`mas_agents.web.paths.confine` (never outside ``--runs``). The names of both
modules used by the pages are importable from here too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mas_agents.game import contract as game_registry
from mas_agents.rundir import CHECKPOINTS_FILE, CONFIG_FILE, EVENTS_FILE, RESULT_FILE, RunDir
from mas_agents.game import experiments
from mas_agents.game.experiments import RunFiles
from mas_agents.game.line_text import run_models, uniq
from mas_agents.web.run_kinds import UNCONFIGURED, detect_kind, is_game, progress, run_state
from mas_agents.web.paths import read_json as _read, recorded_run, relpath

#: Names of :mod:`mas_agents.web.run_kinds` and :mod:`mas_agents.web.paths` the pages use from here.
__all__ = [
    "Run",
    "describe",
    "filter_runs",
    "find_leaderboards",
    "is_leaderboard_db",
    "kind_of",
    "run_date",
    "scan",
]

#: Folders never descended into while scanning (they hold no run of their own).
_SKIP = {"human", "__pycache__", ".git"}
MAX_DEPTH = 8


def _holds_runs(d: Path) -> bool:
    """``d`` has a sub-folder (a composite run's parts may be inside: walk it instead)."""
    try:
        return any(p.is_dir() for p in d.iterdir())
    except OSError:
        return False


def kind_of(d: Path) -> str | None:
    """:func:`mas_agents.web.run_kinds.detect_kind`, or :data:`UNCONFIGURED` for a folder holding a
    ``run.lock`` and no run of a known kind (nor sub-folders), or None."""
    kind = detect_kind(d)
    if kind is None and RunDir(d).lock.is_file() and not _holds_runs(Path(d)):
        return UNCONFIGURED
    return kind


@dataclass
class Run:
    """One run directory, as the runs list shows it.

    Attributes:
        rel: path under ``--runs`` (URL form). kind: see :data:`KINDS`.
        date: when the run started, from its own record (:func:`run_date`), local time text.
        mtime: the same as Unix seconds (for sorting).
        models: the model specs its seats used (``config.json`` ``models``, the run-record
            contract; older runs: ``[model]``). model: the same as text (``", "``-joined), or ``""``.
        agents: agent specs / methods it ran.
        headline: a few numbers in words (outcome, score with interval, progress...).
        finished: its ``result.json`` exists. parent: ``rel`` of the run it is part of, or None.
        depth: how many runs it is nested in.
        state: ``finished``, ``running`` or ``stopped`` (:func:`run_state`); reason: why, in words
            (for ``stopped`` and a ``running`` told by the age of its files).
    """

    rel: str
    kind: str
    date: str
    mtime: float
    model: str = ""
    agents: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    headline: str = ""
    finished: bool = False
    parent: str | None = None
    depth: int = 0
    state: str = "finished"
    reason: str = ""

    @property
    def is_game(self) -> bool:
        """The run is one game (its kind is a game registered in :mod:`mas_agents.game.contract`)."""
        return is_game(self.kind)


def scan(root: Path) -> list[Run]:
    """Every run directory under ``root`` (nested ones too, with their parent), newest first
    among the top-level runs, each followed by the runs inside it.

    Symbolic links are not followed while walking, and a folder that resolves outside ``root``
    is never listed.
    """
    root = Path(root).resolve()

    def walk(d: Path, parent: str | None, depth: int, level: int) -> list[Run]:
        out: list[Run] = []
        try:
            subs = sorted(p for p in d.iterdir() if p.is_dir() and not p.is_symlink() and p.name not in _SKIP)
        except OSError:
            return out
        for sub in subs:
            kind = kind_of(sub)
            if kind is not None:
                run = describe(root, sub, kind, parent=parent, depth=depth)
                out.append(run)
                if level < MAX_DEPTH and not run.is_game:
                    out.extend(walk(sub, run.rel, depth + 1, level + 1))
            elif level < MAX_DEPTH:
                out.extend(walk(sub, parent, depth, level + 1))
        return out

    found: list[Run] = walk(root, None, 0, 0)
    # newest top-level run first, each followed by its nested runs in path order
    tops = [r for r in found if r.parent is None]
    tops.sort(key=lambda r: (-r.mtime, r.rel))
    children: dict[str, list[Run]] = {}
    for r in found:
        if r.parent is not None:
            children.setdefault(r.parent, []).append(r)
    ordered: list[Run] = []

    def add(r: Run) -> None:
        ordered.append(r)
        for c in children.get(r.rel, []):
            add(c)

    for t in tops:
        add(t)
    return ordered




#: Keys of ``config.json`` that may hold when a run started (ISO 8601), in the order trusted.
_START_KEYS = ("started_at", "started", "created_at", "created")


def _iso(text: Any) -> float | None:
    """Unix seconds of an ISO 8601 time (a naive one is taken as UTC, as the runners write
    UTC), or None."""
    if not isinstance(text, str) or not text:
        return None
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()


def _first_call_time(d: Path) -> float | None:
    """``started_at`` of the first line of ``d/llm_calls.jsonl`` (its first model call), or None."""
    try:
        with RunDir(d).calls.open(encoding="utf-8") as fh:
            line = fh.readline()
        return _iso(json.loads(line).get("started_at")) if line.strip() else None
    except (OSError, ValueError, AttributeError):
        return None


def run_date(d: Path, kind: str | None = None) -> float | None:
    """When the run in ``d`` started, in Unix seconds, read from the run's own record (never
    from the folder's modification time, which anything written into the folder moves: a
    leaderboard's ``-wal`` file, a zip extracted over it):

    1. a start time its ``config.json`` records (:data:`_START_KEYS`);
    2. the ``started_at`` of its first model call (``llm_calls.jsonl``; a resumed run keeps it);
    3. the ``started`` of its ``run.lock`` (a run that is running, or stopped: a run that failed
       before writing anything else has only this);
    4. for a run with a ``games/`` folder (a tournament, which has no ``config.json`` of its
       own, or a bench): its first game's date by these rules;
    5. the modification time of ``config.json``, else ``result.json``, else ``events.jsonl``
       (files the runner writes; reading never touches them).

    Returns None when none of these exists."""
    d = Path(d)
    cfg = _read(RunDir(d).config)
    for key in _START_KEYS if isinstance(cfg, dict) else ():
        t = _iso(cfg.get(key))
        if t is not None:
            return t
    t = _first_call_time(d)
    if t is not None:
        return t
    marker = _read(RunDir(d).lock)
    t = _iso(marker.get("started")) if isinstance(marker, dict) else None
    if t is not None:
        return t
    try:
        first = min((g for g in (d / "games").iterdir() if g.is_dir()), default=None)
    except OSError:
        first = None
    if first is not None:
        t = run_date(first)
        if t is not None:
            return t
    for name in (CONFIG_FILE, RESULT_FILE, EVENTS_FILE):
        try:
            return (d / name).stat().st_mtime
        except OSError:
            continue
    return None


def _date(path: Path, kind: str | None = None) -> tuple[str, float]:
    """``(local time text, Unix seconds)`` of :func:`run_date` (``("-", 0.0)`` when unknown)."""
    t = run_date(path, kind)
    if t is None:
        return "-", 0.0
    return datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M"), t



def describe(root: Path, d: Path, kind: str, parent: str | None = None, depth: int = 0) -> Run:
    """The :class:`Run` of directory ``d`` of kind ``kind`` (read from its files; missing or
    malformed files give empty fields, never an error)."""
    cfg = _read(RunDir(d).config)
    cfg = cfg if isinstance(cfg, dict) else {}
    res = _read(RunDir(d).result)
    date, mtime = _date(d, kind)
    models = run_models(cfg)
    run = Run(rel=relpath(root, d), kind=kind, date=date, mtime=mtime, model=", ".join(models), models=models,
              finished=isinstance(res, dict), parent=parent, depth=depth)
    res = res if isinstance(res, dict) else {}
    try:
        _fill(run, kind, cfg, res, d, root)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        run.headline = run.headline or "(result not readable)"
    run.state, run.reason = run_state(d, kind)
    if run.state == "stopped" and run.headline in ("playing", ""):
        run.headline = "stopped before the end"
    if not run.model and run.models:
        run.model = ", ".join(run.models)
    return run


def _fill(run: Run, kind: str, cfg: dict, res: dict, d: Path, root: Path) -> None:
    """``run``'s agents and headline: its experiment's line
    (:attr:`mas_agents.game.experiments.ExperimentDef.line`, with its models and whether it is
    finished where its own record lacks them), or its game's ``GameDef.seat_specs`` and
    ``GameDef.headline`` (without a headline hook: its calls and invalid actions)."""
    if kind == UNCONFIGURED:
        marker = _read(RunDir(d).lock)
        err = marker.get("error") if isinstance(marker, dict) else None
        # the error itself is the stopped run's reason, shown beside it
        run.headline = "failed before writing its configuration" if err else "starting"
        return
    ex = experiments.find(kind)
    if ex is not None:
        line = ex.line(RunFiles(dir=d, config=cfg, result=res, models=list(run.models),
                                progress=lambda db_total=None: progress(d, kind, db_total=db_total),
                                find_run=lambda path: recorded_run(root, path)))
        run.agents, run.headline = line.agents, line.headline
        if line.models is not None:
            run.models = line.models
            run.model = ", ".join(line.models)
        if line.finished is not None:
            run.finished = line.finished
    elif (game := game_registry.find(kind)) is not None:
        run.agents = uniq(game.seat_specs(cfg)) if game.seat_specs else []
        if game.headline:
            run.headline = game.headline(cfg, res)
        elif res:
            run.headline = (f"{game.title}: {(res.get('llm') or {}).get('calls', 0)} LLM calls, "
                            f"{res.get('invalid_actions', 0)} invalid")
        else:
            run.headline = "playing"


def filter_runs(runs: list[Run], kind: str = "", model: str = "", agent: str = "", nested: bool = False) -> list[Run]:
    """The runs matching every given filter (``agent``: a substring of one of its agents,
    case-insensitive; ``model``: one of the models its seats used, :attr:`Run.models`, exactly).
    Without any filter only top-level runs are listed unless ``nested``; with one, nested runs
    (games of a tournament...) match too."""
    def ok(r: Run) -> bool:
        return ((not kind or r.kind == kind) and (not model or model.strip() in r.models)
                and (not agent or any(agent.lower() in a.lower() for a in r.agents)))
    hits = [r for r in runs if ok(r)]
    if nested or kind or model or agent:
        return hits
    return [r for r in hits if r.parent is None]


#: File names a Who-is-Spy leaderboard database may have (``mas spy tournament --db FILE``).
DB_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def is_leaderboard_db(path: Path) -> bool:
    """``path`` is an SQLite file with the leaderboard's tables (opened read-only, never created,
    no ``-wal``/``-shm`` left beside it: the registered leaderboard's ``connect_read_only``,
    :func:`mas_agents.game.experiments.board`; a murder mystery's ``checkpoints.sqlite`` is not
    one). False when no experiment registers a leaderboard."""
    import sqlite3
    from contextlib import closing

    board = experiments.board()
    if board is None:
        return False
    try:
        with closing(board.connect_read_only(path)) as conn:
            names = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except (sqlite3.Error, OSError, ValueError):
        return False
    return {"tournaments", "games", "players"} <= names


def find_leaderboards(root: Path) -> list[Path]:
    """Every leaderboard database under ``root`` (symlinks not followed, never outside ``root``),
    in path order."""
    root = Path(root).resolve()
    out: list[Path] = []

    def walk(d: Path, level: int) -> None:
        try:
            entries = sorted(d.iterdir())
        except OSError:
            return
        for p in entries:
            if p.is_symlink():
                continue
            if p.is_dir() and p.name not in _SKIP and level < MAX_DEPTH:
                walk(p, level + 1)
            elif p.is_file() and p.suffix in DB_SUFFIXES and p.name != CHECKPOINTS_FILE and is_leaderboard_db(p):
                out.append(p)

    walk(root, 0)
    return out
