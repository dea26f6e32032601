"""The game contract and the game registry: every game runs through one runner.

A game registers one :class:`GameDef` (its run kind, title, :class:`mas_agents.planners.base.GameInfo`, how a
table is set up, whether it resumes mid-game). :func:`mas_agents.game.runner.run` owns the run
directory for every game: ``config.json``, ``events.jsonl`` (streamed as the game goes),
``llm_calls.jsonl`` and the prompt log, ``checkpoints.sqlite`` when the game resumes mid-game,
``result.json``, ``transcript.md`` and ``run.lock``. A game only says what is its own: the seats
and runtime (:attr:`GameDef.setup` returning a :class:`Table`), its part of ``config.json``, its
``result.json`` and its transcript. The shape follows OpenSpiel's game registry (a game registers
itself under a name with its facts and a way to build a state), in LangGraph terms.

The built-in games are registered by importing their composition roots (:data:`BUILTIN`); a
game of another package registers itself with :func:`register` when its module is imported, or
through the ``mas_agents.games`` entry-point group (each entry point names a module to import),
so adding a game never edits this file.

Everything here is pure Python: no model, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

from mas_agents.game.conformance import Conformance
from mas_agents.game.registry import Registry
from mas_agents.game.view import DEFAULT as DEFAULT_VIEW
from mas_agents.game.view import GameView

if TYPE_CHECKING:
    from mas_agents.planners.base import GameInfo

#: The games this project ships: run kind -> the module that registers it (imported on first use).
BUILTIN: dict[str, str] = {"mmg": "mas_agents.graphs.mmg.session", "wis": "mas_agents.graphs.wis.session",
                           "magic": "mas_agents.graphs.magic.session"}
ENTRY_POINT_GROUP = "mas_agents.games"


@dataclass
class Table:
    """One game set up and ready to play: what :attr:`GameDef.setup` returns.

    Attributes:
        graph: the game's graph bound to its runtime (:class:`mas_agents.graphs.compiled.BoundGraph`, or any
            object with LangGraph's ``stream``; with ``get_state`` too when the game checkpoints).
        start: the graph's input state (``{"events": []}`` and whatever else the game starts with).
        step_bound: LangGraph ``recursion_limit`` for the game (an upper bound on its steps).
        config: the game's own ``config.json`` fields, in order; the runner puts ``"kind"`` first
            and ``endpoints``, ``record_prompts`` and ``versions`` after them.
        result: ``result(values, llm=totals, wall_time_s=seconds) -> dict``: the whole
            ``result.json`` from the final state ``values`` (the game places the cost fields).
        transcript: ``transcript(result, events) -> str``: ``transcript.md`` (Markdown).
        finished: ``finished(events)``, called after ``result.json`` is written (e.g. a person's
            seat sees the outcome); None: nothing.
        close: called once the run is over, also when it fails (e.g. close HTTP seats); None:
            nothing.
        watch: ``watch(publish)``, called by the runner before the game starts (games without a
            checkpoint): the game calls ``publish(events)`` with each move's events as soon as a
            step that makes several moves has made it, so ``events.jsonl`` shows every move while
            the game is played (:func:`mas_agents.events.follow_events`); None: the events are
            written when each step ends.
    """

    graph: Any
    start: dict[str, Any]
    step_bound: int
    config: dict[str, Any]
    result: Callable[..., dict[str, Any]]
    transcript: Callable[[dict[str, Any], list[dict[str, Any]]], str]
    finished: Callable[[list[dict[str, Any]]], None] | None = None
    close: Callable[[], None] | None = None
    watch: Callable[[Callable[[list[dict[str, Any]]], None]], None] | None = None


@dataclass(frozen=True)
class GameDef:
    """A game as the runner sees it.

    Attributes:
        kind: the run kind, ``config.json``'s ``"kind"`` and the registry key (``"wis"``).
        title: a human name (``"Who is Spy?"``).
        info: the :class:`mas_agents.planners.base.GameInfo` its agents get, or a mapping name -> GameInfo
            for a family of games sharing one graph (MAgIC's five scenarios).
        setup: ``setup(seats, out=..., **params) -> Table``: build the seats (through the
            :class:`mas_agents.game.seats.Seats` given, which records every model call of the run) and
            the runtime from the game's parameters. Raises ValueError on a bad parameter, before
            anything is written but ``out`` itself.
        checkpoint: the game resumes mid-game from LangGraph's SQLite checkpoint
            (``out/checkpoints.sqlite``; ``resume=True`` continues it). False: a rerun replays the
            game from the start (runners of many games reuse the finished ones).
        headline: ``headline(config, result) -> str``, the run's line in ``mas serve``'s runs
            list from its ``config.json`` and ``result.json`` (``{}`` while it plays); None: the
            runner's generic line (calls and invalid actions).
        seat_specs: ``seat_specs(config) -> list[str]``, the agent specs a run seated (the runs
            list's agent filter; the players panel's agents, in seat order); None: none listed.
        view: how ``mas serve`` replays its runs (:class:`mas_agents.game.view.GameView`: sentences,
            seats, round titles, hidden roles, the truth at the end); None: every default of
            :data:`mas_agents.game.view.DEFAULT` (round headings and a players panel from the events).
        conformance: the game's own rules invariants and event-log re-scoring
            (:class:`mas_agents.game.conformance.Conformance`), which the conformance kit
            (:mod:`mas_agents.game.conformance_kit`) runs on every game it plays; None: the kit has no
            rules of the game to check (it still checks resume and hidden information).
        load: ``load(params, data_root=..., seed=...) -> params``: the parameters a person gives
            by name (``mas game play --set script=Sin``, :func:`mas_agents.api.play`) with the
            game's dataset items loaded from ``data_root`` (None: ``$MAS_DATA_DIR``, then
            ``../shared/datasets``) and the ones it draws from its data filled in (a Who-is-Spy
            word pair drawn with ``seed``, as ``mas spy play`` draws it). Parameters already
            loaded pass unchanged. Raises ValueError / FileNotFoundError /
            :class:`mas_agents.game.data.DataError` naming what it could not load. None: the
            parameters are passed as given.
        builder: ``builder(variant) -> StateGraph``: the game's uncompiled LangGraph graph
            (``graphs/<game>/graph.py``), for :func:`mas_agents.api.builder`; ``variant`` names
            one graph of a family (MAgIC's scenario), None for a game of one graph. Raises
            ValueError on a variant the game does not have. None: the game offers none.
    """

    kind: str
    title: str
    info: GameInfo | Mapping[str, GameInfo]
    setup: Callable[..., Table]
    checkpoint: bool = False
    headline: Callable[[dict[str, Any], dict[str, Any]], str] | None = None
    seat_specs: Callable[[dict[str, Any]], list[str]] | None = None
    view: GameView | None = None
    conformance: Conformance | None = None
    load: Callable[..., dict[str, Any]] | None = None
    builder: Callable[[str | None], Any] | None = None

    @property
    def params(self) -> list[str]:
        """The game's parameters: ``setup``'s keyword-only arguments but ``out``, in order."""
        import inspect
        return [n for n, p in inspect.signature(self.setup).parameters.items()
                if p.kind is inspect.Parameter.KEYWORD_ONLY and n != "out"]


#: The registered games (:mod:`mas_agents.game.registry`).
REGISTRY: Registry[GameDef] = Registry("game", BUILTIN, ENTRY_POINT_GROUP, "'wis' or 'my_game'")


def register(game: GameDef) -> GameDef:
    """Register ``game`` under ``game.kind`` and return it (so a module may write
    ``GAME_DEF = register(GameDef(...))``). Registering the same kind again replaces it.

    Raises:
        ValueError: an empty kind, or one that is not a lowercase identifier (it names run
            directories' kind and URLs).
    """
    return REGISTRY.add(game.kind, game)


def unregister(kind: str) -> None:
    """Remove ``kind`` from the registry (tests that register a toy game clean up with it)."""
    REGISTRY.remove(kind)


def single_graph(kind: str, build: Callable[[], Any]) -> Callable[[str | None], Any]:
    """A :attr:`GameDef.builder` for a game of one graph: ``build()`` (the game's uncompiled
    ``StateGraph``) when no variant is named.

    Raises (the returned builder):
        ValueError: a variant is named (the game has one graph).
    """
    def builder(variant: str | None = None) -> Any:
        if variant is not None:
            raise ValueError(f"builder({kind!r}): this game has one graph, no variant {variant!r}")
        return build()
    return builder


def get(kind: str | GameDef) -> GameDef:
    """The registered :class:`GameDef` for ``kind`` (a GameDef is returned as it is).

    Raises:
        ValueError: no game of that kind is registered (names the kinds that are).
    """
    if isinstance(kind, GameDef):
        return kind
    game = REGISTRY.lookup(kind)
    if game is None:
        raise ValueError(f"no game {kind!r}; the games are: {', '.join(kinds())}")
    return game


def find(kind: object) -> GameDef | None:
    """The registered :class:`GameDef` for ``kind``, or None when ``kind`` is no registered game
    (any other run kind, or not a string). Never raises."""
    if not isinstance(kind, str) or not kind:
        return None
    try:
        return get(kind)
    except ValueError:
        return None


def view_of(kind: object) -> GameView:
    """The :class:`mas_agents.game.view.GameView` of the game ``kind`` (a kind or a GameDef): its own,
    else :data:`mas_agents.game.view.DEFAULT` (also for a kind that is no registered game). Never raises."""
    game = kind if isinstance(kind, GameDef) else find(kind)
    return (game.view if game is not None else None) or DEFAULT_VIEW


def kinds() -> list[str]:
    """Every registered run kind, built-ins first, in registration order."""
    return REGISTRY.kinds()


def games() -> Mapping[str, GameDef]:
    """Every registered game by kind (a copy)."""
    return REGISTRY.items()
