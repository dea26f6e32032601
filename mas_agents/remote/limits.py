"""Process-wide settings of the OpenAI-compatible endpoints and the per-endpoint concurrency limit.

:class:`RemoteSettings` holds what the CLI sets once (``--structured``, ``--context-window``,
``--max-connections``, ``--adaptive-connections``); :class:`EndpointLimiter` keeps at most
``max_connections`` requests in flight to one base URL (halving it on a 429 in adaptive mode)
and counts them for progress lines. Moved unchanged from the former single module
``mas_agents/remote.py`` (issue 51 item 6).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from mas_agents.remote.dialects import STRUCTURED_MODES

log = logging.getLogger("mas_agents.remote")


@dataclass
class RemoteSettings:
    """Process-wide settings for OpenAI-compatible endpoints (set once by the CLI).

    Attributes:
        structured: ``auto`` | ``grammar`` | ``json`` | ``prompt`` (:data:`STRUCTURED_MODES`).
        context_window: tokens, when the server does not report its own (``--context-window``).
        max_connections: requests in flight per base URL (``--max-connections``).
        adaptive: halve the limit on a 429, grow it back by one after 20 successes.
    """

    structured: str = "auto"
    context_window: int | None = None
    max_connections: int = 8
    adaptive: bool = False

    def __post_init__(self) -> None:
        if self.structured not in STRUCTURED_MODES:
            raise ValueError(f"--structured must be one of {', '.join(STRUCTURED_MODES)}, got {self.structured!r}")
        if self.max_connections < 1:
            raise ValueError(f"--max-connections must be >= 1, got {self.max_connections}")
        if self.context_window is not None and self.context_window < 64:
            raise ValueError(f"--context-window must be >= 64 tokens, got {self.context_window}")


class EndpointLimiter:
    """At most ``limit`` requests in flight (a counting semaphore whose limit may change).

    Args:
        limit: the most requests in flight (>= 1).
        adaptive: on :meth:`rate_limited` halve the current limit (never below 1; once per
            generation: not again before ``limit`` more requests have completed); after 20
            successes in a row at a lowered limit, raise it by one, up to ``limit``.

    Use as a context manager around one request. Counters: :attr:`in_flight`, :attr:`completed`,
    :meth:`calls_per_s` (completed requests over the seconds since the first one started).
    """

    def __init__(self, limit: int, adaptive: bool = False):
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self.max_limit = limit
        self.limit = limit
        self.adaptive = adaptive
        self.in_flight = 0
        self.peak = 0
        self.completed = 0
        self.started: float | None = None
        self._ok_streak = 0
        self._cut_at = -1            # requests completed at the last cut (-1: none yet)
        self._cond = threading.Condition()
        self.on_release: Callable[[], None] | None = None   # set by a ReplicaSet

    def __enter__(self) -> "EndpointLimiter":
        with self._cond:
            while self.in_flight >= self.limit:
                self._cond.wait()
            self._take()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def _take(self) -> None:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        if self.started is None:
            self.started = time.monotonic()

    def try_acquire(self) -> bool:
        """Take a slot if one is free now (True), else take nothing (False); never waits. A slot
        taken here is given back with :meth:`release`."""
        with self._cond:
            if self.in_flight >= self.limit:
                return False
            self._take()
            return True

    def release(self) -> None:
        """Give back a slot (the end of one request) and wake one waiter, and the replica set
        this endpoint belongs to, if any (:attr:`on_release`)."""
        with self._cond:
            self.in_flight -= 1
            self.completed += 1
            self._cond.notify()
        hook = self.on_release
        if hook is not None:
            hook()

    def rate_limited(self) -> None:
        """A 429 came back: in adaptive mode, halve the limit, at most once per generation of
        requests (a burst of 429s from the requests already in flight is one signal, not many)."""
        if not self.adaptive:
            return
        with self._cond:
            if self.completed - self._cut_at < self.limit and self._cut_at >= 0:
                return
            self.limit = max(1, self.limit // 2)
            self._cut_at = self.completed
            self._ok_streak = 0
            log.warning("429 from the server: at most %d requests in flight now", self.limit)

    def succeeded(self) -> None:
        """A reply came back: in adaptive mode, grow a lowered limit by one after 20 of these."""
        if not self.adaptive:
            return
        with self._cond:
            self._ok_streak += 1
            if self.limit < self.max_limit and self._ok_streak >= 20:
                self.limit += 1
                self._ok_streak = 0
                self._cond.notify()

    def calls_per_s(self) -> float:
        """Completed requests per second since the first one started (0.0 before any)."""
        if self.started is None or not self.completed:
            return 0.0
        return self.completed / max(time.monotonic() - self.started, 1e-9)
