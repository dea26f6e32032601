"""SQLite store and leaderboard of Who is Spy? (WiS) tournaments (stdlib :mod:`sqlite3`).

One database holds any number of tournaments. Each finished game is stored as its full record
(the ``result.json`` dict of :mod:`mas_agents.graphs.wis.rules`) plus one ``players`` row per seat (from
:func:`mas_agents.graphs.wis.metrics.player_rows`), in a single transaction: a game is stored entirely or
not at all, so an interrupted tournament resumes from :meth:`Leaderboard.finished_indices`.

Tables::

    tournaments(id TEXT PRIMARY KEY, config JSON, created, fingerprint)
    protocols(fingerprint TEXT PRIMARY KEY, inputs JSON, created)
    games(game_id TEXT PRIMARY KEY, tournament_id, game_index INTEGER, record JSON, finished_at)
        UNIQUE(tournament_id, game_index)
    players(game_id, tournament_id, seat, agent, name, role, score, won,
            votes_cast_as_civilian, correct_votes, abstentions, descriptions, fouls,
            survival_rounds)   PRIMARY KEY(game_id, name)

Seasons (issue 56 item 4). Every tournament is stored under the fingerprint of its protocol
(:func:`mas_agents.game.fingerprint.protocol_fingerprint`: prompts, rules, game settings, reply
format; not the agents), whose inputs are in ``protocols``. The tournaments of one fingerprint
form a **season** (:meth:`Leaderboard.seasons`); leaderboards and ratings are computed per
season (``games(season=...)``, ``metrics(season=...)``), never across two. A database written
before fingerprints existed is migrated when opened for writing: the ``fingerprint`` column and
the ``protocols`` table are added, and each old tournament gets the fingerprint of
:func:`mas_agents.graphs.wis.fingerprint.legacy_wis_protocol` (its recorded ``lang``, ``players`` and
speaking limit; prompts "not recorded"), an "unknown protocol" season. Opened read-only (the web
app), such a database is not changed: the same legacy fingerprints are computed as it is read.

The database runs in WAL mode; every method opens its own connection, and writes are
serialised by a lock, so one :class:`Leaderboard` may be shared by several threads.

Readers that must not change what they read (the web app, ``mas serve``) open it with
``Leaderboard(path, read_only=True)``: no schema, no journal-mode change, and connections from
:func:`connect_read_only`, which never create the ``-wal``/``-shm`` files beside the database.

The leaderboard's text forms (a rich table, plain text, Markdown) are
:mod:`mas_agents.graphs.wis.leaderboard_text`.
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

from mas_agents.game.fingerprint import protocol_diff, protocol_fingerprint, protocol_summary
from mas_agents.graphs.wis.fingerprint import legacy_wis_protocol
from mas_agents.graphs.wis.metrics import agent_metrics, player_rows
from mas_agents.stats import bootstrap_ratio

__all__ = [
    "Leaderboard",
    "connect_read_only",
    "default_db_path",
    "with_score_intervals",
]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tournaments (
    id TEXT PRIMARY KEY,
    config JSON NOT NULL,
    created TEXT NOT NULL,
    fingerprint TEXT
);
CREATE TABLE IF NOT EXISTS protocols (
    fingerprint TEXT PRIMARY KEY,
    inputs JSON NOT NULL,
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
            _migrate(conn)

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

    def start_tournament(self, tid: str, config: Mapping[str, Any],
                         protocol: Mapping[str, Any] | None = None) -> str:
        """Register tournament ``tid`` with ``config`` (a JSON-serialisable dict) under the
        protocol ``protocol`` (the inputs of :func:`mas_agents.graphs.wis.fingerprint.wis_protocol`;
        None: :func:`~mas_agents.graphs.wis.fingerprint.legacy_wis_protocol` of ``config``, an
        "unknown protocol" season).

        Starting an existing tournament with the same config and protocol is a no-op (resume).

        Returns:
            The tournament's protocol fingerprint (its season).

        Raises:
            ValueError: ``tid`` exists with a different config or protocol; the message names the
                differing fields (dotted paths for nested dicts).
        """
        new = _canonical(config)
        inputs = _canonical(protocol) if protocol is not None else legacy_wis_protocol(new)
        fp = protocol_fingerprint(inputs)
        with self._write() as conn:
            row = conn.execute("SELECT config, fingerprint FROM tournaments WHERE id = ?", (tid,)).fetchone()
            if row is None:
                conn.execute("INSERT OR IGNORE INTO protocols (fingerprint, inputs, created) VALUES (?, ?, ?)",
                             (fp, json.dumps(inputs, sort_keys=True, ensure_ascii=False), _now()))
                conn.execute("INSERT INTO tournaments (id, config, created, fingerprint) VALUES (?, ?, ?, ?)",
                             (tid, json.dumps(new, sort_keys=True), _now(), fp))
                return fp
            old = json.loads(row[0])
            diff = _diff(old, new)
            if diff:
                details = "; ".join(
                    f"{p}: stored {_get(old, p)!r}, given {_get(new, p)!r}" for p in diff)
                raise ValueError(f"tournament {tid!r} exists with a different config ({details})")
            if row[1] != fp:
                stored = conn.execute("SELECT inputs FROM protocols WHERE fingerprint = ?", (row[1],)).fetchone()
                changed = [d["field"] for d in protocol_diff(json.loads(stored[0]) if stored else {}, inputs)]
                raise ValueError(f"tournament {tid!r} was played under protocol {row[1]}, this run's is {fp} "
                                 f"(differs in {', '.join(changed) or 'its inputs'}): another protocol is another season; "
                                 "start another tournament (another --seed or --out)")
            return fp

    def tournaments(self) -> list[dict[str, Any]]:
        """Every tournament as ``{"id", "config", "created", "games", "fingerprint"}``, oldest
        first (``fingerprint``: its season, :meth:`seasons`)."""
        has_fp = self._has_fingerprints()
        rows = self._read(
            f"SELECT t.id, t.config, t.created, COUNT(g.game_id), {'t.fingerprint' if has_fp else 'NULL'} "
            "FROM tournaments t LEFT JOIN games g ON g.tournament_id = t.id GROUP BY t.id ORDER BY t.created, t.rowid")
        out = []
        for i, c, cr, n, fp in rows:
            config = json.loads(c)
            out.append({"id": i, "config": config, "created": cr, "games": n,
                        "fingerprint": fp or protocol_fingerprint(legacy_wis_protocol(config))})
        return out

    def _has_fingerprints(self) -> bool:
        """Whether the database has the ``fingerprint`` column (a read-only open of a database
        written before it is read without one)."""
        return any(r[1] == "fingerprint" for r in self._read("PRAGMA table_info(tournaments)"))

    def _protocols(self) -> dict[str, Any]:
        """``{fingerprint: inputs}`` of the ``protocols`` table ({} when there is none)."""
        if not self._read("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'protocols'"):
            return {}
        return {fp: json.loads(inputs) for fp, inputs in self._read("SELECT fingerprint, inputs FROM protocols")}

    def seasons(self) -> list[dict[str, Any]]:
        """The seasons of this database: the tournaments grouped by protocol fingerprint, in the
        order their first tournament was created.

        Returns:
            ``[{"number": 1.., "label": "season N" (+ " (unknown protocol)" for tournaments stored
            before fingerprints), "fingerprint", "inputs" (of :func:`mas_agents.graphs.wis.fingerprint.wis_protocol`),
            "recorded": bool, "summary": lines (:func:`~mas_agents.game.fingerprint.protocol_summary`),
            "tournaments": [ids], "games": n, "agents": [specs], "first", "last" (creation times),
            "changed": :func:`~mas_agents.game.fingerprint.protocol_diff` from the season before
            ([] for the first)}, ...]``.
        """
        protocols = self._protocols()
        by_fp: dict[str, dict[str, Any]] = {}
        for t in self.tournaments():
            fp = t["fingerprint"]
            s = by_fp.get(fp)
            if s is None:
                inputs = protocols.get(fp) or legacy_wis_protocol(t["config"])
                s = by_fp[fp] = {"fingerprint": fp, "inputs": inputs, "recorded": inputs.get("recorded") is not False,
                                 "tournaments": [], "games": 0, "agents": set(), "first": t["created"]}
            s["tournaments"].append(t["id"])
            s["games"] += t["games"]
            s["agents"].update(str(a) for a in t["config"].get("agents") or [])
            s["last"] = t["created"]
        out = []
        prev = None
        for n, s in enumerate(by_fp.values(), 1):
            s["number"] = n
            s["label"] = f"season {n}" + ("" if s["recorded"] else " (unknown protocol)")
            s["agents"] = sorted(s["agents"])
            s["summary"] = protocol_summary(s["inputs"])
            s["changed"] = protocol_diff(prev["inputs"], s["inputs"]) if prev else []
            out.append(s)
            prev = s
        return out

    def season(self, key: str | int | None = None) -> dict[str, Any]:
        """One season of :meth:`seasons` by its number (``2``, ``"2"``, ``"season 2"``) or its
        fingerprint (or a unique prefix of it); None: the season of the latest tournament.

        Raises:
            ValueError: no such season (the message lists the seasons), or no tournament at all.
        """
        seasons = self.seasons()
        if not seasons:
            raise ValueError(f"no tournament in {self.path}")
        if key is None or str(key).strip() == "":
            latest = self.tournaments()[-1]["fingerprint"]
            return next(s for s in seasons if s["fingerprint"] == latest)
        k = str(key).strip().lower().removeprefix("season").strip()
        found = [s for s in seasons if k == str(s["number"]) or (len(k) >= 4 and s["fingerprint"].startswith(k))]
        if len(found) != 1:
            listed = ", ".join(f"{s['number']} ({s['fingerprint']})" for s in seasons)
            raise ValueError(f"season {key!r}: {'ambiguous' if found else 'not found'} in {self.path}; "
                             f"its seasons are {listed}")
        return found[0]

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

    def games(self, tid: str | None = None, season: str | None = None) -> list[dict[str, Any]]:
        """Stored game records of ``tid`` (all tournaments when None), by tournament and index;
        with ``season`` (a fingerprint), only the games of that season's tournaments. All
        tournaments of all seasons (neither given) is for listings, never for one rating."""
        if tid is None:
            rows = self._read("SELECT tournament_id, record FROM games ORDER BY tournament_id, game_index")
        else:
            rows = self._read("SELECT tournament_id, record FROM games WHERE tournament_id = ? ORDER BY game_index",
                              (tid,))
        if season is not None:
            keep = {t["id"] for t in self.tournaments() if t["fingerprint"] == season}
            rows = [r for r in rows if r[0] in keep]
        return [json.loads(r) for _, r in rows]

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

    def metrics(self, tid: str | None = None, season: str | None = None) -> list[dict[str, Any]]:
        """:func:`mas_agents.graphs.wis.metrics.agent_metrics` of the stored games of ``tid`` (or all;
        of one season with ``season``), each with the 95 % interval of its average score
        (:func:`with_score_intervals`)."""
        games = self.games(tid, season)
        return with_score_intervals(agent_metrics(games), games)


def with_score_intervals(metrics: list[dict[str, Any]], games: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``metrics`` (of :func:`mas_agents.graphs.wis.metrics.agent_metrics`) with ``avg_score_low`` and
    ``avg_score_high``: the percentile-bootstrap 95 % interval of the mean score per seat played,
    resampling whole games (:func:`mas_agents.stats.bootstrap_ratio`: Σ scores / Σ seats over
    the games the agent sat in, n = those games; None with fewer than 2). Whole games, not seats:
    an agent holding several seats of one game (self-play) has scores that move together (the game
    is zero-sum), so resampling seats would make the interval too narrow.

    Why beside the rank score: WiS §3.5 ranks by 100 + Σ scores − N, which rewards volume (every
    game costs 1 point and gains 12 / players on average, 2 at 6 players, so +1 a game for an
    average agent there); the mean per game and its interval say how good an agent is and how
    sure that is, whatever the number of games."""
    by_game: dict[str, dict[Any, list[float]]] = {}   # agent -> game -> [score of each of its seats]
    for g in games:
        for r in player_rows(g):
            by_game.setdefault(str(r["agent"]), {}).setdefault(r["game_id"], []).append(float(r["score"]))
    out = []
    for m in metrics:
        per_game = list(by_game.get(str(m["agent"]), {}).values())
        e = bootstrap_ratio([sum(v) for v in per_game], [len(v) for v in per_game])
        out.append({**m, "avg_score_low": e.low, "avg_score_high": e.high})
    return out


def _migrate(conn: sqlite3.Connection) -> None:
    """Give a database written before protocol fingerprints its ``fingerprint`` column and fill
    it, and ``protocols``, for every tournament without one, from
    :func:`mas_agents.graphs.wis.fingerprint.legacy_wis_protocol` of its stored config (one
    transaction; a no-op on a database already migrated)."""
    if not any(r[1] == "fingerprint" for r in conn.execute("PRAGMA table_info(tournaments)")):
        try:
            conn.execute("ALTER TABLE tournaments ADD COLUMN fingerprint TEXT")
        except sqlite3.OperationalError as exc:   # another process added it meanwhile
            if "duplicate column" not in str(exc):
                raise
    rows = conn.execute("SELECT id, config FROM tournaments WHERE fingerprint IS NULL").fetchall()
    if not rows:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for tid, config in rows:
            inputs = legacy_wis_protocol(json.loads(config))
            fp = protocol_fingerprint(inputs)
            conn.execute("INSERT OR IGNORE INTO protocols (fingerprint, inputs, created) VALUES (?, ?, ?)",
                         (fp, json.dumps(inputs, sort_keys=True, ensure_ascii=False), _now()))
            conn.execute("UPDATE tournaments SET fingerprint = ? WHERE id = ?", (fp, tid))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _get(d: Any, dotted: str) -> Any:
    """The value at a path from :func:`_diff` (``"<missing>"`` if absent)."""
    if dotted == "<config>":
        return d
    for k in dotted.split("."):
        if not isinstance(d, dict) or k not in d:
            return "<missing>"
        d = d[k]
    return d
