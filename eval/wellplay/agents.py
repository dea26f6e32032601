"""The answering agents of a WellPlay evaluation (:func:`mas_agents.eval.wellplay.run.run_wellplay_eval`):
how one character's agent is built (:func:`build_eval_agent`) and how the run builds them, in answer
order on a builder thread of their own (:class:`AgentBuilds`).

Imports kept inside :func:`build_eval_agent`: ``mas_agents.memory`` and ``mas_agents.graphs.mmg.players``
(both load faiss), so that importing the evaluation's runner does not.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

from mas_agents.graphs.mmg.dataset import Script
from mas_agents.game.seats import Seats
from mas_agents.eval.wellplay.evaluate import Answerer, agent_answerer
from mas_agents.graphs.mmg.rules import GAME as MMG_GAME
from mas_agents.stop import STOP, StopRequested
from mas_agents.call_log import CallRecorder


class AgentBuilds:
    """The answering agents of one evaluation run, each built when it is first needed.

    With ``background`` (several characters answer at once), one builder thread builds them in
    ``order`` (:func:`mas_agents.eval.wellplay.evaluate.answer_order`: most questions first), so the first
    characters answer while later ones still embed their scripts; otherwise each is built in its
    cell as the cell starts. Building embeds a character's script chunks (PLAYER* §2.2): with all
    68 characters and nothing cached, 5,220 chunks at 21 ms of CPU each on the 2-core
    project machine, all before the first question could be asked until session 14
    (``benchmarks/results/throughput.md``). A character with no questions is never built.

    Stopping: once a build fails, a cell fails (a model server gone) or Ctrl-C was pressed
    (:data:`mas_agents.stop.STOP`), every build not yet made raises that error (Ctrl-C:
    :class:`mas_agents.stop.StopRequested`) without building, so the cells waiting for
    one stop within one build. A build that fails now fails after the first characters' calls,
    not before every call as when all agents were built first.

    Use as a context manager: leaving it cancels the builds not started and waits for the one
    running.

    Args:
        make: ``(script, name, accounted) -> (agent, accounted)``.
        order: ``(script, character name)`` in the order to build.
        background: build on a thread of its own, ahead of the cells.
        accounted: the accounted model built by an earlier run, or None.
    """

    def __init__(self, make: Callable[[Script, str, Any], tuple[Any, Any]], order: list[tuple[Script, str]],
                 *, background: bool, accounted: Any = None):
        self._make = make
        self.accounted = accounted
        self._order = order
        self._background = background
        self._pool: ThreadPoolExecutor | None = None
        self._futures: dict[tuple[int, str], Future] = {}
        self._error: BaseException | None = None

    def __enter__(self) -> "AgentBuilds":
        if self._background:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="wellplay-build")
            for sc, name in self._order:
                self._futures[(id(sc), name)] = self._pool.submit(self._build, sc, name)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def abort(self, exc: BaseException) -> None:
        """Build nothing more: every later build raises ``exc`` (the first abort wins)."""
        if self._error is None:
            self._error = exc

    def _build(self, sc: Script, name: str) -> Any:
        if self._error is None and STOP.is_set():
            self.abort(StopRequested("stop requested (Ctrl-C); finished work is saved"))
        if self._error is not None:
            raise self._error
        try:
            agent, self.accounted = self._make(sc, name, self.accounted)   # one builder at a time
        except BaseException as exc:
            self.abort(exc)
            raise
        return agent

    def answerer(self, sc: Script, name: str) -> Answerer:
        """``name``'s answerer; its agent is built (or awaited) on its first use.

        Raises (on first use): whatever building the agent raised; after any failure of the
        answerer, later builds raise it too (:meth:`abort`)."""
        built: list[Answerer] = []

        def real() -> Answerer:
            if not built:
                if self._pool is not None:
                    fut = self._futures.get((id(sc), name))
                    if fut is None:     # not in the order given: still built on the builder thread
                        fut = self._futures[(id(sc), name)] = self._pool.submit(self._build, sc, name)
                    agent = fut.result()
                else:
                    agent = self._build(sc, name)
                built.append(agent_answerer(agent))
            return built[0]

        def guarded(method: str) -> Callable[[Any], Any]:
            """``real().<method>``; a failure stops the builds not yet made (:meth:`abort`)."""
            def call(arg: Any) -> Any:
                try:
                    return getattr(real(), method)(arg)
                except BaseException as exc:
                    self.abort(exc)
                    raise
            return call

        return Answerer(name, guarded("answer"), guarded("prepare"))


def build_eval_agent(sc: Script, name: str, method: str, game_events: list[dict], model: Any, seed: int, *,
                     recorder: CallRecorder, settings=None, accounted=None, spec: str = "plain"):
    """Build the agent that answers ``name``'s questions for ``method``.

    ``pp``: own script only; ``op``: every character's script; ``session``: own script plus the
    dialogue it heard in the game. The agent and its model are built as a game's are
    (:class:`mas_agents.game.seats.Seats`, :class:`mas_agents.llm.ModelPool`), their calls recorded
    under the ``evaluation`` phase; the model is built once and reused (``accounted``).

    Its parameters are the ``make_agent`` protocol of :func:`mas_agents.eval.wellplay.run.run_wellplay_eval`,
    which the tests' fake answerers implement; they stay one per value rather than a configuration.

    Returns:
        ``(agent, accounted_model)``.
    """
    from mas_agents.graphs.mmg.players import persona_for
    from mas_agents.memory import default_embedder

    seats = Seats(recorder, model if accounted is None else accounted, seed, phase="evaluation")
    persona = persona_for(sc, name, role="respondent")  # after the game everyone answers truthfully
    extra = [(c.name, c.script) for c in sc.characters] if method == "op" else []
    agent = seats.agent(persona, spec, MMG_GAME, embedder=default_embedder(), settings=settings, extra_scripts=extra)
    accounted = seats.model()
    if method == "session":
        agent.observe(game_events)
    agent.dialogue_closed = True   # the game is over: what it heard is fixed (prompt layout, issue 48)
    return agent, accounted
