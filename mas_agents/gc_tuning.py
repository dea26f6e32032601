"""Fewer garbage collections while runs play: a larger young generation for the engine.

Why: every model call leaves about 60 objects in reference cycles (LangGraph's per-task runtime,
scratchpad and callback managers, the stdlib JSON encoder's closures), which only CPython's
cyclic collector frees, and the process's heap is large (langchain, pydantic, torch when
memories are embedded). With CPython's default thresholds (700, 10, 10) a Who-is-Spy tournament
of 128 games at 64 in flight against a 300 ms stub ran about 470 young, 42 middle and 4 full
collections, the full ones about 0.2 s each: 1.4-1.8 s of the client's CPU, 10-15 % of it (a
throwaway script timing each collection with ``gc.callbacks``; benchmarks/results/throughput.md,
session 15). With the young threshold at :data:`YOUNG_THRESHOLD` the same run made 5 young
collections and no older one, 0.2 s in all.

The thresholds are the process's, so :func:`fewer_collections` raises them only while at least
one run is inside it (any thread; nested and concurrent uses count) and restores the thresholds
it found when the last one leaves. A threshold the user set higher, or 0 (collection off), is
left alone. The collector still runs: cycles are freed, only in larger batches, so garbage
waits longer; with 1,000 games in flight the peak RSS was 4 % higher (712 against 682 MiB) and
the client's CPU per call 29 % lower (benchmarks/results/scale.md, session 15).
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

__all__ = ["YOUNG_THRESHOLD", "fewer_collections"]

#: Net allocations of container objects between two young-generation collections while a run
#: plays (CPython's default: 700). 10,000 still ran a full collection in the run above; 50,000
#: ran none (benchmarks/results/throughput.md, session 15).
YOUNG_THRESHOLD = 50_000

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, ...] | None = None


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Within the block, the collector's young threshold is at least :data:`YOUNG_THRESHOLD`.

    Re-entrant and thread-safe: the thresholds found on the first entry are restored on the last
    exit, unless something else changed them in between (then its setting stays).
    """
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            if 0 < _saved[0] < YOUNG_THRESHOLD:
                gc.set_threshold(YOUNG_THRESHOLD, *_saved[1:])
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                ours = (YOUNG_THRESHOLD, *_saved[1:])
                if gc.get_threshold() == ours:
                    gc.set_threshold(*_saved)
                _saved = None
