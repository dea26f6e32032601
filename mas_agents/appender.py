"""One writer thread per process for the lines runs append to their files.

Every model call appends a line to its game's ``llm_calls.jsonl`` and its prompt log, and every
graph step its new events to ``events.jsonl``. Done by the calling thread, each append is an
open, a write and a close: about ten system calls, each of which releases the GIL. With 64 games
in flight on 64 threads, every release hands the interpreter to another thread; keeping the
records in memory instead took the client from 5.9 to 4.7 ms of CPU per call (a knock-out,
benchmarks/results/throughput.md, session 13). Here the calling thread only queues the text;
one background thread writes whatever is queued, one open/write/close per file per batch, in the
order queued.

Guarantees:

- Lines reach each file in the order :func:`append` was called (one FIFO queue, one writer).
- :func:`sync` returns once everything queued before it is written. The readers of this package
  that read a run file in the same process (``rundir.read_jsonl``, ``accounting.read_prompts``,
  ``CallRecorder.close`` / ``flush``, ``rundir.write_jsonl`` before it replaces a file) call it
  first, so they never miss a line. Another process (``mas serve``) sees a line once the writer
  has written it, normally within milliseconds.
- At interpreter exit (also after Ctrl-C) what is queued is written (``atexit``). A process
  killed outright (SIGKILL, power loss) can lose the lines still queued; before this module it
  could lose the line being written.
- A write that fails (a full disk, a removed directory that cannot be made again, text that is
  not UTF-8) does not stop the writer: the other lines are written, and the next :func:`append`
  or :func:`sync` of any thread raises ``OSError`` naming the file, once (at exit: one line on
  stderr).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from collections import deque
from pathlib import Path

__all__ = ["append", "sync"]

#: Seconds the writer gathers lines before writing them (a :func:`sync` writes at once).
BATCH_S = 0.25


class _Appender:
    def __init__(self) -> None:
        self._cv = threading.Condition(threading.Lock())
        self._queue: deque[tuple[Path, str]] = deque()
        self._queued = 0          # lines queued so far
        self._written = 0         # lines written (or failed) so far
        self._idle = True         # the writer waits for work
        self._syncing = 0         # threads waiting in sync(): write at once
        self._error: OSError | None = None
        self._thread: threading.Thread | None = None

    def append(self, path: Path, text: str) -> None:
        with self._cv:
            self._raise_error()
            self._queue.append((path, text))
            self._queued += 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="mas-appender", daemon=True)
                self._thread.start()
            elif self._idle:
                self._cv.notify_all()

    def sync(self) -> None:
        if self._written == self._queued and self._error is None:    # nothing pending: no lock
            return
        with self._cv:
            target = self._queued
            self._syncing += 1
            self._cv.notify_all()
            try:
                while self._written < target and self._thread is not None and self._thread.is_alive():
                    self._cv.wait(0.5)
            finally:
                self._syncing -= 1
            self._raise_error()

    def _raise_error(self) -> None:
        # under self._cv
        if self._error is not None:
            err, self._error = self._error, None
            raise err

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._queue:
                    self._idle = True
                    self._cv.wait()
                self._idle = False
                # gather for a moment: a file then gets its lines in one open/write/close, and
                # this thread takes the interpreter once per batch; a sync() cuts the wait short
                deadline = time.monotonic() + BATCH_S
                while not self._syncing and (left := deadline - time.monotonic()) > 0:
                    self._cv.wait(left)
                batch = list(self._queue)
                self._queue.clear()
            by_path: dict[Path, list[str]] = {}
            for path, text in batch:
                by_path.setdefault(path, []).append(text)
            error = None
            for path, texts in by_path.items():
                try:
                    _write(path, "".join(texts))
                except Exception as exc:  # noqa: BLE001 - kept for the callers; the writer goes on
                    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
                    error = error or OSError(getattr(exc, "errno", None),
                                             f"{path}: could not append run records ({why})")
            with self._cv:
                self._written += len(batch)
                if error is not None and self._error is None:
                    self._error = error
                self._cv.notify_all()

    def _after_fork(self) -> None:
        self.__init__()


def _write(path: Path, text: str) -> None:
    try:
        fh = open(path, "a", encoding="utf-8")
    except FileNotFoundError:                 # its directory was removed: make it again
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(path, "a", encoding="utf-8")
    with fh:
        fh.write(text)


_APPENDER = _Appender()
os.register_at_fork(after_in_child=_APPENDER._after_fork)


def _at_exit() -> None:
    """Write what is queued before the interpreter exits; a failed write is one line on stderr."""
    if _APPENDER._thread is None:
        return
    try:
        _APPENDER.sync()
    except OSError as exc:
        print(f"mas: {exc.strerror or exc}", file=sys.stderr)


atexit.register(_at_exit)


def append(path: Path, text: str) -> None:
    """Queue ``text`` (whole lines, each ending in ``\\n``) to be appended to ``path`` (UTF-8) by
    the process's writer thread; returns at once.

    Raises:
        OSError: an earlier append failed (the message names that file); raised once.
    """
    # a Path as it is: Path(path) would parse it again (about 4 appends a model call)
    _APPENDER.append(path if isinstance(path, Path) else Path(path), text)


def sync() -> None:
    """Wait until every line queued so far (by any thread) is written.

    Raises:
        OSError: a queued append failed (the message names the file); raised once.
    """
    _APPENDER.sync()
