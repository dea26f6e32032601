"""The experiment registry: the kinds of run that are not one game register like games.

A run directory is one game (its kind a :class:`mas_agents.game.contract.GameDef`) or an
experiment: a run of many games or of no game (a tournament, a bench, a comparison, an
ablation, an evaluation, a reproduction). An experiment registers one :class:`ExperimentDef`
from its own module (beside its runner): its kind, its title, its runs-list line (:attr:`ExperimentDef.line`)
and what its progress counts. ``mas serve`` reads this registry and the game registry; it knows
no experiment by name.

A run's kind is recorded, not guessed: every runner writes it as ``config.json`` ``kind``. Run
directories written before the runners recorded it are recognised by the one fallback
:func:`legacy_kind`: each experiment may declare :attr:`ExperimentDef.recognizes` for them.

The built-in experiments are registered by importing their modules (:data:`BUILTIN`); an
experiment of another package registers itself with :func:`register` when its module is
imported, or through the ``mas_agents.experiments`` entry-point group (each entry point names a
module to import), so adding an experiment never edits this file.

Everything here is pure Python: the hooks read files, the registry does not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from mas_agents.game.registry import Registry

if TYPE_CHECKING:
    from mas_agents.game.view import SeatInfo

#: The experiments this project ships: run kind -> the module that registers it (imported on first
#: use), in the order the runs list offers them as filters. Legacy recognisers
#: (:attr:`ExperimentDef.recognizes`) are tried in this order, then the other experiments'.
BUILTIN: dict[str, str] = {
    "wellplay-eval": "mas_agents.eval.wellplay.run_def",
    "wellplay-compare": "mas_agents.eval.compare.run_def",
    "magic-bench": "mas_agents.graphs.magic.bench_def",
    "ablation": "mas_agents.eval.ablate.grid_def",
    "wis-tournament": "mas_agents.graphs.wis.tournament_def",
    "wis-experiment": "mas_agents.graphs.wis.tournament_def",
    "reproduce": "mas_agents.eval.reproduce.run_def",
}
ENTRY_POINT_GROUP = "mas_agents.experiments"


@dataclass(frozen=True)
class RunFiles:
    """What an experiment's runs-list line is made from (given by ``mas serve``).

    Attributes:
        dir: the run directory.
        config: its ``config.json`` (``{}`` when missing or malformed).
        result: its ``result.json`` (``{}`` when missing: the run is not finished).
        models: the model specs its own record names (``config.json`` ``models``, else ``[model]``).
        progress: ``progress(db_total=None) -> {"done", "total", "running", "stopped", "text"}``,
            how far the run is (``db_total``: its planned number of parts, when known), as the
            run page shows it.
        find_run: ``find_run(path) -> Path | None``, the run directory a record names (an
            evaluation's ``config.json`` ``run``), if it is inside the runs served.
    """

    dir: Path
    config: dict[str, Any]
    result: dict[str, Any]
    models: list[str] = field(default_factory=list)
    progress: Callable[..., dict[str, Any]] = lambda db_total=None: {"text": ""}
    find_run: Callable[[Any], Path | None] = lambda path: None


@dataclass(frozen=True)
class RunLine:
    """An experiment's line in the runs list.

    Attributes:
        agents: the agent specs or methods it ran (the runs list's agent filter).
        headline: a few numbers in words (scores with intervals, progress...).
        models: the model specs its seats used, when its own record lacks them (a tournament's
            from its games); None: its record's.
        finished: whether it is finished, for a kind without a ``result.json`` of its own
            (:attr:`ExperimentDef.own_result` False); None: its ``result.json`` exists.
    """

    agents: list[str]
    headline: str
    models: list[str] | None = None
    finished: bool | None = None


@dataclass(frozen=True)
class Parts:
    """How many parts of an experiment are done (:attr:`ExperimentDef.count`).

    Attributes:
        done: parts finished. total: parts planned (None: unknown).
        open: the sub-run directories started and not finished (running or stopped).
    """

    done: int
    total: int | None
    open: list[Path]


@dataclass(frozen=True)
class LeaderboardDef:
    """A leaderboard database an experiment stores its games in (:attr:`ExperimentDef.board`), as
    ``mas serve`` reads it: its ``/leaderboard`` page and CSV, a tournament's standings and link.

    Attributes:
        open: ``open(path) -> board``, the database in the SQLite file ``path`` opened read-only
            (never created or written); the board has ``path``, ``config(tid)`` (None: no such
            tournament), ``tournaments()``, ``seasons()``, ``season(key)`` (ValueError: no such
            season), ``games(tid, season=)``, ``finished_indices(tid)`` and ``metrics(tid)``.
        default_db: ``default_db() -> Path``, the database used when ``--db`` is not given (its
            folder is not created).
        connect_read_only: ``connect_read_only(path) -> sqlite3.Connection``, a read-only
            connection that leaves the file and its folder as they were (raises
            ``sqlite3.Error``/``OSError``/``ValueError`` when ``path`` is no SQLite file).
        rank_table: ``rank_table(games) -> [row]``, the rank table of stored game records (one
            row per agent, with intervals).
        ratings: ``ratings(games) -> dict``, the agents' ratings over stored game records.
    """

    open: Callable[[Path], Any]
    default_db: Callable[[], Path]
    connect_read_only: Callable[[Path], Any]
    rank_table: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
    ratings: Callable[[list[dict[str, Any]]], dict[str, Any]]


@dataclass(frozen=True)
class ExperimentDef:
    """A kind of run that is not one game (its runs hold many games, or answer questions).

    Attributes:
        kind: the run kind, ``config.json``'s ``"kind"`` and the registry key (``"ablation"``).
        line: ``line(files: RunFiles) -> RunLine``, its line in ``mas serve``'s runs list.
        title: a human name, the replay's heading (``"WellPlay evaluation"``); ``""``: its kind.
        recognizes: ``recognizes(config, result, d) -> bool`` for a run directory written before
            its runner recorded ``kind`` in ``config.json`` (``config``/``result`` are None when
            missing); None: recognised only by its recorded kind. See :func:`legacy_kind`.
        parts: what its progress counts (``games``, ``cells``, ``benches``...).
        doing: the word for a part being run in its progress line (``playing`` a game,
            ``running`` a bench).
        count: ``count(d, config, finished) -> Parts``, its parts from its folder (``finished(p)``
            tells whether the sub-run in ``p`` has its result); None: the games in ``d/games``
            (the total from ``result.json`` ``games`` once finished, or from a planned number).
        composite: its run page shows its progress.
        own_result: it writes a ``result.json`` when it ends (a tournament does not: it is
            finished when each of its games is).
        evaluation: it answers questions (its progress is "k of N answered", it has the
            evaluation page, its replay shows every answer).
        replay: its ``events.jsonl`` is replayed (the calls pages link the replay).
        leaderboard_id: ``leaderboard_id(d) -> str | None``, the id under which its games are
            stored in a leaderboard database (its run page links the leaderboard); None: it has
            no leaderboard.
        board: the leaderboard database its games are stored in, as ``mas serve`` reads it
            (:class:`LeaderboardDef`; :func:`board`); None: it has none of its own.
        script: ``script(data_root, name, lang) -> Script``, one script of the dataset its
            questions come from under the datasets root ``data_root`` (``name``, ``characters``
            with their ``name``, ``questions`` ``{character: [question with qid, options]}``;
            raises when ``data_root`` has no such script): the evaluation page's option texts and
            the question totals of its progress. None: no dataset is read.
        seats: ``seats(events, config, result) -> SeatInfo``, the players panel of its replay
            (None: the game's).
    """

    kind: str
    line: Callable[[RunFiles], RunLine]
    title: str = ""
    recognizes: Callable[[Any, Any, Path], bool] | None = None
    parts: str = "parts"
    doing: str = "playing"
    count: Callable[[Path, dict[str, Any], Callable[[Path], bool]], Parts] | None = None
    composite: bool = False
    own_result: bool = True
    evaluation: bool = False
    replay: bool = False
    leaderboard_id: Callable[[Path], str | None] | None = None
    board: LeaderboardDef | None = None
    script: Callable[[Path, str, str], Any] | None = None
    seats: Callable[[list[dict[str, Any]], dict[str, Any], dict[str, Any]], SeatInfo] | None = None

    @property
    def leaderboard(self) -> bool:
        """Its games are stored in a leaderboard database (:attr:`leaderboard_id`)."""
        return self.leaderboard_id is not None


#: The registered experiments (:mod:`mas_agents.game.registry`).
REGISTRY: Registry[ExperimentDef] = Registry("experiment", BUILTIN, ENTRY_POINT_GROUP, "'ablation' or 'my-bench'")


def register(experiment: ExperimentDef) -> ExperimentDef:
    """Register ``experiment`` under its kind and return it (``DEF = register(ExperimentDef(...))``).
    Registering the same kind again replaces it.

    Raises:
        ValueError: an empty kind, or one that is not a lowercase name (it names run
            directories' kind and the runs list's filter).
    """
    return REGISTRY.add(experiment.kind, experiment)


def unregister(kind: str) -> None:
    """Remove ``kind`` from the registry (tests that register a toy experiment clean up with it)."""
    REGISTRY.remove(kind)


def find(kind: object) -> ExperimentDef | None:
    """The registered :class:`ExperimentDef` for ``kind``, or None (a game, no known kind, or
    not a string). Never raises."""
    if not isinstance(kind, str) or not kind:
        return None
    return REGISTRY.lookup(kind)


def kinds() -> list[str]:
    """Every registered experiment kind, built-ins first (in :data:`BUILTIN` order), then in
    registration order."""
    return REGISTRY.kinds()


def experiments() -> Mapping[str, ExperimentDef]:
    """Every registered experiment by kind (a copy)."""
    return REGISTRY.items()


def board() -> LeaderboardDef | None:
    """The leaderboard ``mas serve`` shows: the :attr:`ExperimentDef.board` of the first
    experiment, in :func:`kinds` order, that has one; None when none has."""
    return next((e.board for e in REGISTRY.items().values() if e.board is not None), None)


def legacy_kind(config: Any, result: Any, d: Path) -> str | None:
    """The kind of a run directory that records none (written before its runner wrote
    ``config.json`` ``kind``): the first experiment, in :func:`kinds` order, whose
    :attr:`ExperimentDef.recognizes` holds for its ``config.json`` and ``result.json`` (None
    when missing) and folder ``d``; None when none does. This is the one place a run's kind is
    guessed from its files; the built-in recognisers are disjoint, so their order does not matter."""
    for k, experiment in REGISTRY.items().items():
        rec = experiment.recognizes
        if rec is not None and rec(config, result, d):
            return k
    return None
