"""SQLite store and leaderboard of Who is Spy? (WiS) tournaments (stdlib :mod:`sqlite3`).

One database holds any number of tournaments. Each finished game is stored as its full record
(the ``result.json`` dict of :mod:`mas_agents.graphs.wis.rules`) plus one ``players`` row per seat (from
:func:`mas_agents.eval.metrics.wis.player_rows`), in a single transaction: a game is stored entirely or
not at all, so an interrupted tournament resumes from :meth:`Leaderboard.finished_indices`.

Tables::

    tournaments(id TEXT PRIMARY KEY, config JSON, created)
    games(game_id TEXT PRIMARY KEY, tournament_id, game_index INTEGER, record JSON, finished_at)
        UNIQUE(tournament_id, game_index)
    players(game_id, tournament_id, seat, agent, name, role, score, won,
            votes_cast_as_civilian, correct_votes, abstentions, descriptions, fouls,
            survival_rounds)   PRIMARY KEY(game_id, name)

The database runs in WAL mode; every method opens its own connection, and writes are
serialised by a lock, so one :class:`Leaderboard` may be shared by several threads.

Readers that must not change what they read (the web app, ``mas serve``) open it with
``Leaderboard(path, read_only=True)``: no schema, no journal-mode change, and connections from
:func:`connect_read_only`, which never create the ``-wal``/``-shm`` files beside the database.

The leaderboard's text forms (a rich table, plain text, Markdown) are
:mod:`mas_agents.eval.reports.wis_leaderboard_text` (re-exported here).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mas_agents.eval.metrics.wis import agent_metrics, player_rows
from mas_agents.eval.reports.wis_leaderboard_text import (  # noqa: F401 - re-exported
    HEADERS,
    format_leaderboard,
    leaderboard_markdown,
    leaderboard_rows,
    leaderboard_table,
)

__all__ = ["HEADERS", "Leaderboard", "connect_read_only", "default_db_path", "format_leaderboard",
           "leaderboard_markdown", "leaderboard_rows", "leaderboard_table"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tournaments (
    id TEXT PRIMARY KEY,
    config JSON NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    game_id TEXT PRIMARY KEY,
    tournament_id TEXT NOT NULL REFERENCES tournaments(id),
    game_index INTEGER NOT NULL,
    record JSON NOT NULL,
    finished_at TEXT NOT NULL,
    UNIQUE (tournament_id, game_index)
);
CREATE TABLE IF NOT EXISTS players (
    game_id TEXT NOT NULL REFERENCES games(game_id),
    tournament_id TEXT NOT NULL,
    seat INTEGER,
    agent TEXT NOT NULL,
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    score REAL NOT NULL,
    won INTEGER NOT NULL,
    votes_cast_as_civilian INTEGER NOT NULL,
    correct_votes INTEGER NOT NULL,
    abstentions INTEGER NOT NULL,
    descriptions INTEGER NOT NULL,
    fouls INTEGER NOT NULL,
    timeouts INTEGER NOT NULL DEFAULT 0,
    survival_rounds INTEGER NOT NULL,
    PRIMARY KEY (game_id, name)
);
CREATE INDEX IF NOT EXISTS players_agent ON players(agent);
"""

_PLAYER_COLS = ("game_id", "tournament_id", "seat", "agent", "name", "role", "score", "won",
                "votes_cast_as_civilian", "correct_votes", "abstentions", "descriptions", "fouls",
                "timeouts", "survival_rounds")


def default_db_path(create: bool = True) -> Path:
    """``$MAS_DATA_HOME/wis.sqlite``, else ``$XDG_DATA_HOME/mas-agents/wis.sqlite``, else
    ``~/.local/share/mas-agents/wis.sqlite``; the parent directory is created unless ``create``
    is False (a reader only looks). Empty variables count as unset."""
    if os.environ.get("MAS_DATA_HOME"):
        base = Path(os.environ["MAS_DATA_HOME"]).expanduser()
    elif os.environ.get("XDG_DATA_HOME"):
        base = Path(os.environ["XDG_DATA_HOME"]).expanduser() / "mas-agents"
    else:
        base = Path.home() / ".local" / "share" / "mas-agents"
    if create:
        base.mkdir(parents=True, exist_ok=True)
    return base / "wis.sqlite"


def connect_read_only(path: str | os.PathLike[str], *, timeout: float = 5.0) -> sqlite3.Connection:
    """A read-only connection to the SQLite file ``path`` that leaves the file and its folder as
    they were.

    A WAL-mode database opened with ``mode=ro`` still creates ``-wal`` and ``-shm`` beside it
    and, read-only, cannot remove them when it closes (SQLite, "Write-Ahead Logging", section
    "Read-Only Databases": https://sqlite.org/wal.html#readonly): reading would add two files to
    a run folder and move its modification time. So when no ``-wal`` file exists (no writer has
    the database open, and the last one checkpointed everything into the file), the file is
    opened ``immutable=1`` (no locks, no side files: https://sqlite.org/uri.html#uriimmutable);
    when a ``-wal`` exists, a writer may hold committed pages there, and the file is opened
    ``mode=ro``, which reads them through the ``-shm`` index that already exists.

    Raises:
        sqlite3.Error: not a database, or not readable (an immutable read that a writer starting
            at that moment disturbs raises too: callers may retry).
        FileNotFoundError: ``path`` does not exist (SQLite would otherwise report "unable to open").
    """
    p = Path(path).resolve()
    if not p.is_file():
        raise FileNotFoundError(str(path))
    wal = p.with_name(p.name + "-wal")
    mode = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
    return sqlite3.connect(f"{p.as_uri()}?{mode}", uri=True, timeout=timeout, isolation_level=None)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _canonical(config: Mapping[str, Any]) -> Any:
    """``config`` as it reads back from JSON (tuples become lists, keys strings)."""
    return json.loads(json.dumps(config, sort_keys=True))


def _diff(old: Any, new: Any, path: str = "") -> list[str]:
    """Dotted paths of the fields that differ between two JSON values."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in sorted(set(old) | set(new)):
            p = f"{path}.{k}" if path else str(k)
            if k not in old or k not in new:
                out.append(p)
            else:
                out.extend(_diff(old[k], new[k], p))
        return out
    return [] if old == new else [path or "<config>"]


class Leaderboard:
    """A SQLite store of WiS tournaments (see the module docstring).

    Args:
        path: database file; :func:`default_db_path` when None. Its parent directory is created.
        read_only: only read an existing database: nothing is created or changed, not even the
            ``-wal``/``-shm`` files (:func:`connect_read_only`); a write raises
            :class:`PermissionError`.

    Raises:
        FileNotFoundError: ``read_only`` and ``path`` does not exist.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, read_only: bool = False):
        self.path = Path(path) if path is not None else default_db_path(create=not read_only)
        self.read_only = read_only
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None    # the writes' connection, opened on first write
        if read_only:
            if not self.path.is_file():
                raise FileNotFoundError(str(self.path))
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, closing(self._connect()) as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)

    def _connect(self, shared: bool = False) -> sqlite3.Connection:
        # shared: the writes' connection, used by whichever thread holds the lock
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=not shared)
        conn.execute("PRAGMA busy_timeout=30000")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A connection inside one ``BEGIN IMMEDIATE`` transaction: committed on success,
        rolled back on any exception.

        One connection serves every write of this object (under its lock; a tournament stores
        each finished game, and opening a connection for each, with its pragmas and the schema
        read, was 1.1 % of a Who-is-Spy call's instructions: ``benchmarks/results/throughput.md``,
        session 21). It is closed and dropped after a failed write, so the next
        one starts on a fresh connection whatever state the failure left."""
        if self.read_only:
            raise PermissionError(f"{self.path} was opened read-only")
        with self._lock:
            if self._conn is None:
                self._conn = self._connect(shared=True)
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            except BaseException:
                self._conn = None
                conn.close()
                raise

    def close(self) -> None:
        """Close the writes' connection (a later write opens another); reads open their own.

        The write-ahead log is checkpointed into the database first (``PRAGMA
        wal_checkpoint(TRUNCATE)``), so with no other connection open SQLite removes the
        ``-wal``/``-shm`` files when this one closes (issue 57, E17: a tournament stopped with
        Ctrl-C left them beside the database)."""
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except sqlite3.Error:   # busy (another process reads): the next close folds it in
                    pass
                self._conn.close()
                self._conn = None

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[tuple]:
        if self.read_only:
            try:
                with closing(connect_read_only(self.path)) as conn:
                    return conn.execute(sql, args).fetchall()
            except sqlite3.DatabaseError:
                # an immutable read disturbed by a writer that started meanwhile: once more, now
                # that its -wal exists (connect_read_only then reads through it)
                with closing(connect_read_only(self.path)) as conn:
                    return conn.execute(sql, args).fetchall()
        with closing(self._connect()) as conn:
            return conn.execute(sql, args).fetchall()

    # ------------------------------------------------------------------ tournaments

    def start_tournament(self, tid: str, config: Mapping[str, Any]) -> None:
        """Register tournament ``tid`` with ``config`` (a JSON-serialisable dict).

        Starting an existing tournament with the same config is a no-op (resume).

        Raises:
            ValueError: ``tid`` exists with a different config; the message names the differing
                fields (dotted paths for nested dicts).
        """
        new = _canonical(config)
        with self._write() as conn:
            row = conn.execute("SELECT config FROM tournaments WHERE id = ?", (tid,)).fetchone()
            if row is None:
                conn.execute("INSERT INTO tournaments (id, config, created) VALUES (?, ?, ?)",
                             (tid, json.dumps(new, sort_keys=True), _now()))
                return
            old = json.loads(row[0])
            diff = _diff(old, new)
            if diff:
                details = "; ".join(
                    f"{p}: stored {_get(old, p)!r}, given {_get(new, p)!r}" for p in diff)
                raise ValueError(f"tournament {tid!r} exists with a different config ({details})")

    def tournaments(self) -> list[dict[str, Any]]:
        """Every tournament as ``{"id", "config", "created", "games"}``, oldest first."""
        rows = self._read(
            "SELECT t.id, t.config, t.created, COUNT(g.game_id) FROM tournaments t "
            "LEFT JOIN games g ON g.tournament_id = t.id GROUP BY t.id ORDER BY t.created, t.id")
        return [{"id": i, "config": json.loads(c), "created": cr, "games": n} for i, c, cr, n in rows]

    def config(self, tid: str) -> dict[str, Any] | None:
        """The stored config of ``tid``, or None if there is no such tournament."""
        rows = self._read("SELECT config FROM tournaments WHERE id = ?", (tid,))
        return json.loads(rows[0][0]) if rows else None

    def finished_indices(self, tid: str) -> set[int]:
        """Indices of the games of ``tid`` already stored (to resume an interrupted run)."""
        return {i for (i,) in self._read("SELECT game_index FROM games WHERE tournament_id = ?",
                                          (tid,))}

    # ------------------------------------------------------------------ games

    def add_game(self, tid: str, index: int, record: Mapping[str, Any]) -> bool:
        """Store game number ``index`` of tournament ``tid``, all in one transaction.

        Returns:
            True if stored; False if a game with this ``game_id`` is already stored (no-op).

        Raises:
            ValueError: unknown tournament, or ``index`` already holds another game.
        """
        game_id = record["game_id"]
        rows = player_rows(record)  # validate before writing
        blob = json.dumps(record, ensure_ascii=False)
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM tournaments WHERE id = ?", (tid,)).fetchone() is None:
                raise ValueError(f"unknown tournament {tid!r}; call start_tournament first")
            if conn.execute("SELECT 1 FROM games WHERE game_id = ?", (game_id,)).fetchone():
                return False
            other = conn.execute("SELECT game_id FROM games WHERE tournament_id = ? AND game_index = ?",
                                 (tid, index)).fetchone()
            if other is not None:
                raise ValueError(f"tournament {tid!r} game {index} is already stored as "
                                 f"{other[0]!r}, not {game_id!r}")
            conn.execute("INSERT INTO games (game_id, tournament_id, game_index, record, finished_at) "
                         "VALUES (?, ?, ?, ?, ?)", (game_id, tid, int(index), blob, _now()))
            self._insert_players(conn, tid, rows)
        return True

    @staticmethod
    def _insert_players(conn: sqlite3.Connection, tid: str, rows: list[dict[str, Any]]) -> None:
        conn.executemany(
            f"INSERT INTO players ({', '.join(_PLAYER_COLS)}) "
            f"VALUES ({', '.join('?' * len(_PLAYER_COLS))})",
            [tuple(tid if c == "tournament_id" else int(r[c]) if c == "won" else r[c]
                   for c in _PLAYER_COLS) for r in rows])

    def games(self, tid: str | None = None) -> list[dict[str, Any]]:
        """Stored game records of ``tid`` (all tournaments when None), by tournament and index."""
        if tid is None:
            rows = self._read("SELECT record FROM games ORDER BY tournament_id, game_index")
        else:
            rows = self._read("SELECT record FROM games WHERE tournament_id = ? ORDER BY game_index",
                              (tid,))
        return [json.loads(r) for (r,) in rows]

    def players(self, tid: str | None = None) -> list[dict[str, Any]]:
        """Rows of the ``players`` table (one per seat), of ``tid`` or of all tournaments."""
        cols = ", ".join(f"p.{c}" for c in _PLAYER_COLS)
        where = " WHERE p.tournament_id = ?" if tid is not None else ""
        sql = (f"SELECT {cols} FROM players p JOIN games g ON g.game_id = p.game_id{where}"
               " ORDER BY p.tournament_id, g.game_index, p.seat")
        rows = self._read(sql, (tid,) if tid is not None else ())
        out = [dict(zip(_PLAYER_COLS, r)) for r in rows]
        for r in out:
            r["won"] = bool(r["won"])
        return out

    def metrics(self, tid: str | None = None) -> list[dict[str, Any]]:
        """:func:`mas_agents.eval.metrics.wis.agent_metrics` of the stored games of ``tid`` (or all)."""
        return agent_metrics(self.games(tid))


def _get(d: Any, dotted: str) -> Any:
    """The value at a path from :func:`_diff` (``"<missing>"`` if absent)."""
    if dotted == "<config>":
        return d
    for k in dotted.split("."):
        if not isinstance(d, dict) or k not in d:
            return "<missing>"
        d = d[k]
    return d
