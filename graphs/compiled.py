"""Compile a game's LangGraph graph once per process; bind one game's runtime per run.

Compiling a ``StateGraph`` is not cheap (LangGraph walks every node function's bytecode looking
for subgraphs): compiled per game it cost about 12 % of the client's CPU at many games in flight
(``benchmarks/results/throughput.md``). A game's graph is therefore built by a function of no
per-game value, its nodes reading the game's runtime (players, words, roles...) from LangGraph's
run context (a ``runtime: Runtime[...]`` parameter, ``runtime.context``); :func:`once` caches the
compiled graph, and :class:`BoundGraph` passes ``context=rt`` on every run. A compiled graph keeps
no run state (LangGraph builds the channels of every run afresh), so one compiled object serves
every game and thread of the process.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable, Iterator


def once(build: Callable[..., Any]) -> Callable[..., Any]:
    """``build`` (a graph compiler taking hashable arguments, e.g. none, or a variant name) run at
    most once per argument tuple per process; concurrent first calls wait for the one compile."""
    lock = threading.Lock()
    cache: dict[tuple, Any] = {}

    @functools.wraps(build)
    def cached(*args: Any) -> Any:
        graph = cache.get(args)
        if graph is None:
            with lock:
                graph = cache.get(args)
                if graph is None:
                    graph = cache[args] = build(*args)
        return graph

    return cached


class BoundGraph:
    """A compiled graph shared by the process with one game's runtime bound to it.

    ``stream`` / ``invoke`` / ``get_state`` take LangGraph's arguments; the runs get
    ``context=rt``. ``checkpointer`` (e.g. a ``SqliteSaver``), when given, is this game's own: the
    shared graph is copied with it (a shallow copy of the compiled object, no recompile).
    """

    def __init__(self, graph: Any, rt: Any, checkpointer: Any = None):
        self.graph = graph if checkpointer is None else graph.copy(update={"checkpointer": checkpointer})
        self.rt = rt

    def with_checkpointer(self, checkpointer: Any) -> "BoundGraph":
        """The same graph and runtime with this game's own ``checkpointer`` (no recompile)."""
        return BoundGraph(self.graph, self.rt, checkpointer)

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:
        """LangGraph's ``stream`` with this game's runtime as the run context."""
        return self.graph.stream(input, config, context=self.rt, **kwargs)

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        """LangGraph's ``invoke`` with this game's runtime as the run context."""
        return self.graph.invoke(input, config, context=self.rt, **kwargs)

    def get_state(self, config: Any, **kwargs: Any) -> Any:
        """LangGraph's ``get_state`` (the checkpointed state of ``config``'s thread)."""
        return self.graph.get_state(config, **kwargs)
