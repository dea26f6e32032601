"""A game's parallel moves inside one graph step: run them on a process-wide thread pool.

A Who-is-Spy round's votes are independent model calls made on the same state (WiS paper §3.1:
every alive player votes after the descriptions). LangGraph can fan them out as one task per
voter (``Send``), each task a step of its own with its own config, callback manager, writes and
thread hand-off; counted by callgrind on ten sequential games (``benchmarks/count_instructions.py``,
session 23), that path cost 3,452,803 instructions a call against 2,867,554 with the votes run
by :func:`fan_out` inside one node (-17 %), and the one-at-a-time path (width 1) 2,845,519.
:func:`fan_out` keeps the parallelism at that price: the calling thread (the game's) runs moves
itself, and up to ``width - 1`` helpers from one pool shared by every game of the process run the
others. Results come back in the order of the calls, so a step's writes are those of the fan-out
it replaces (LangGraph applies a step's task writes in task order).

Games whose interrupted steps must keep their finished branches (the murder mystery's checkpointed
votes: LangGraph saves each finished task's writes) keep ``Send``; a Who-is-Spy or MAgIC game is
replayed from its start when interrupted, so nothing is lost there.
"""

from __future__ import annotations

import contextvars
import functools
import queue
import threading
from typing import Any, Callable

#: Helper threads of the process-wide pool at most. Helpers only add parallelism: the calling
#: thread runs moves itself, so a step finishes even when every helper is busy elsewhere. Created
#: on demand and kept, so a game does not start threads of its own for its votes (LangGraph's
#: executor did, per graph run: starting and joining a thread cost about 0.2 ms of CPU on this
#: machine, session 23). 1,024 covers the fan-out of the last games of a run at the largest
#: connection caps measured (256 in flight, ``benchmarks/results/throughput.md``).
POOL_THREADS = 1024


class _Helpers:
    """The process-wide helper threads: daemon threads, started on demand up to ``limit``, that run
    the functions :meth:`submit` queues, in queue order.

    Daemon threads, unlike ``concurrent.futures.ThreadPoolExecutor``'s: an idle helper never
    delays the end of the process. With the executor's threads, a Ctrl-C whose KeyboardInterrupt
    reached the game's thread inside ``submit`` while it started the pool's first thread left that
    thread unregistered, so nothing woke it at exit and the process waited for it until a second
    Ctrl-C (issue 46, item 3: 1 stop in 19 hung for 11 minutes). Nothing a helper does outlives its
    :func:`fan_out`, which waits for every helper it started (a helper that starts late finds no
    call left and returns at once), so no work is lost by not waiting for helpers at exit.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._work: queue.SimpleQueue[Callable[[], Any]] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)    # one release per helper waiting for work
        self._lock = threading.Lock()
        self.started = 0

    def submit(self, fn: Callable[[], Any]) -> None:
        """Queue ``fn`` (its exceptions are the caller's to catch inside it); start a helper when
        none is idle and fewer than ``limit`` exist."""
        self._work.put(fn)
        if self._idle.acquire(blocking=False):
            return
        with self._lock:
            if self.started >= self.limit:
                return
            self.started += 1
            name = f"mas-fanout_{self.started - 1}"
        threading.Thread(target=self._run, name=name, daemon=True).start()

    def _run(self) -> None:
        while True:
            fn = self._work.get()
            try:
                fn()
            except BaseException:  # noqa: BLE001 - fan_out's drain keeps its own errors; a helper lives on
                pass
            del fn
            self._idle.release()


_POOL: _Helpers | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> _Helpers:
    global _POOL
    if _POOL is None:
        with _POOL_LOCK:
            if _POOL is None:
                _POOL = _Helpers(POOL_THREADS)
    return _POOL


def fan_out(calls: list[Callable[[], Any]], width: int | None = None) -> list[Any]:
    """Run ``calls`` (functions of no argument) with at most ``width`` at once; their results in
    the order of ``calls``.

    Args:
        calls: the moves, e.g. one ``functools.partial(vote, ballot, runtime)`` per voter.
        width: at most this many at once (LangGraph's ``max_concurrency`` in the step's config,
            :func:`mas_agents.cells.cell_fanout`); None: all at once. With a width of 1 (or one
            call) they run one after another on the calling thread, no helper involved.

    Each helper runs in a copy of the caller's context (``contextvars``: LangGraph's config and
    callbacks of the step, so a handler on the graph's run sees every call). Once a call raises, no
    further call starts; the calls already running finish, then the exception of the first
    failing call (in the order of ``calls``) is raised.

    Raises:
        whatever a call raises (e.g. :class:`mas_agents.errors.RunStopped`).
    """
    n = len(calls)
    width = n if width is None else min(width, n)
    if width <= 1:
        return [c() for c in calls]
    results: list[Any] = [None] * n
    errors: list[tuple[int, BaseException]] = []
    order = iter(range(n))
    running = 0         # calls started by helpers and not yet returned
    cond = threading.Condition()

    def drain(helper: bool) -> None:
        nonlocal running
        while True:
            with cond:
                i = None if errors else next(order, None)
                if i is None:
                    return
                running += helper
            try:
                results[i] = calls[i]()
            except BaseException as exc:  # re-raised by the caller below, in call order
                with cond:
                    errors.append((i, exc))
            finally:
                if helper:
                    with cond:
                        running -= 1
                        cond.notify_all()

    pool = _pool()
    for _ in range(width - 1):
        pool.submit(functools.partial(contextvars.copy_context().run, drain, True))
    try:
        drain(False)
    finally:
        # a helper that starts after the calls have run out returns at once: not waited for
        with cond:
            cond.wait_for(lambda: running == 0)
    if errors:
        raise min(errors, key=lambda e: e[0])[1]
    return results
