"""Who-is-Spy tournaments and strategy experiments, stored in the SQLite leaderboard.

* :func:`schedule` seats agents so that each plays the spy equally often (WiS §5.1): game ``i``
  gives the spy seat to agent ``i mod K``; the civilian seats cycle through the other agents
  (all agents when there is only one), starting one further each game so civilian seats even
  out too. Word pairs are drawn from the dataset without replacement (reshuffled when used up),
  spy seat and first speaker at random, all from ``random.Random(seed)``.
* :func:`run_tournament` plays the scheduled games into ``<out>/games/g<i>`` and stores each
  finished game in the leaderboard in one transaction; rerunning the same command skips stored
  games, so an interrupted tournament loses no finished game. ``<out>/config.json`` (``kind:
  "wis-tournament"``, :func:`tournament_record`) records its options, the models its seats ran
  and its id; another tournament into the same ``out`` is refused (:mod:`mas_agents.game.record`).
  It also records ``protocol``: the fingerprint of the protocol the games were played under and
  its inputs (:func:`mas_agents.graphs.wis.fingerprint.wis_protocol`: prompts, rules, settings, reply
  format), which is part of the id and the tournament's season in the leaderboard.
* :func:`run_experiment` (WiS §5.3–5.4, Tables 3–4) plays the same schedule twice, once with the
  subject as given (baseline) and once with the strategy block added, and tabulates the
  subject's vote accuracy, foul rate, average score and win rate (and the other seats' foul
  rate, which an attack aims to raise). For ``attack``/``defense`` the subject is the spy in
  every game (the strategies act only as spy); for ``reasoning`` it is a civilian in every game
  (vote accuracy is a civilian's metric).

The runs are configured by :class:`TournamentConfig` and :class:`ExperimentConfig`
(:mod:`mas_agents.game.run_config`). The experiment's table is written by
:mod:`mas_agents.graphs.wis.experiment_table`. Every import is at module level.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import random
from pathlib import Path
from typing import Any, Callable

from mas_agents import cells
from mas_agents.prompt_log import record_prompts
from mas_agents.cells import default_concurrency, run_cells
from mas_agents.game.data import data_files
from mas_agents.graphs.wis.dataset import load_pairs
from mas_agents.game.fingerprint import protocol_fingerprint
from mas_agents.graphs.wis.fingerprint import wis_protocol
from mas_agents.graphs.wis.metrics import agent_metrics, player_rows
from mas_agents.graphs.wis.leaderboard import Leaderboard
from mas_agents.graphs.wis import session as wis_session
from mas_agents.game.record import NOT_CONFIGURATION, check_same_run, model_fields, seat_model
from mas_agents.game.run_config import NOT_RECORDED, RunConfig
from mas_agents.graphs.wis.experiment_table import experiment_markdown
from mas_agents.graphs.wis.session import WisGameConfig
from mas_agents.graphs.wis import rules as rules
from mas_agents.model_specs import spec_text
from mas_agents.remote.usage import auto_concurrency
from mas_agents.rundir import RunDir, marks_run, versions
from mas_agents.specs import is_remote, split_model

log = logging.getLogger(__name__)

EXPERIMENT_KINDS = ("attack", "defense", "reasoning")
#: ``config.json``'s ``kind`` of a tournament's directory and of an experiment's.
TOURNAMENT_KIND = "wis-tournament"
EXPERIMENT_KIND = "wis-experiment"


def schedule(agents: list[str], games: int, players: int = rules.DEFAULT_PLAYERS, *, pairs: list[dict],
             seed: int = 0, spy_agent: str | None = None, civilians_only: str | None = None) -> list[dict]:
    """The seating of ``games`` games.

    Args:
        agents: agent specs or URLs (K >= 1).
        games: number of games; with ``games`` a multiple of K every agent is spy equally often.
        players: seats per game (3..9).
        pairs: word pairs to draw from.
        spy_agent: if set, this agent is the spy in every game and fills no civilian seat
            (attack/defense experiments).
        civilians_only: if set, this agent never plays the spy and holds exactly one civilian
            seat per game (reasoning experiments); the other seats cycle through ``agents``.

    Returns:
        ``[{"index", "agents": [spec per seat], "spy_seat", "first_speaker", "pair"}, ...]``, plus
        ``subject_seat`` (the seat of ``spy_agent`` / ``civilians_only``) when either is set.

    Raises:
        ValueError: no agents, games < 1, a bad player count, or no pairs.
    """
    if not agents:
        raise ValueError("a tournament needs at least one agent")
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    rules.check_players(players)
    if not pairs:
        raise ValueError("no word pairs to draw from")
    rng = random.Random(seed)
    order: list[int] = []
    out = []
    for i in range(games):
        if not order:
            order = list(range(len(pairs)))
            rng.shuffle(order)
        pair = pairs[order.pop()]
        spy_seat, first = rng.randrange(players), rng.randrange(players)
        if spy_agent is not None:
            spy = spy_agent
            pool = [a for a in agents if a != spy_agent] or list(agents)
        elif civilians_only is not None:
            pool = [a for a in agents if a != civilians_only] or list(agents)
            spy = pool[i % len(pool)]
        else:
            spy = agents[i % len(agents)]
            pool = [a for a in agents if a != spy] or list(agents)
        civ = [pool[(i + j) % len(pool)] for j in range(players - 1)]
        g = {"index": i, "spy_seat": spy_seat, "first_speaker": first, "pair": pair}
        if civilians_only is not None:
            k = rng.randrange(players - 1)
            civ[k] = civilians_only
            g["subject_seat"] = k if k < spy_seat else k + 1
        elif spy_agent is not None:
            g["subject_seat"] = spy_seat
        g["agents"] = civ[:spy_seat] + [spy] + civ[spy_seat:]
        out.append(g)
    return out


def _is_local_seat(spec: str, default_model: Any) -> bool:
    if is_remote(spec):
        return False
    m = split_model(spec)[1] or default_model
    return not isinstance(m, str) or m.startswith("local")


def tournament_record(tid: str, config: dict, model: Any) -> dict:
    """The tournament's own ``config.json`` (``kind: "wis-tournament"``) from its leaderboard
    ``config`` (:func:`run_tournament`): the options, the models its seats used (``models``: every
    game's seats, :mod:`mas_agents.game.record`; a WiS-protocol agent by its URL), the ``--model``
    default (``default_model``, which the id depends on) and the tournament ``id`` (a hash of the
    whole seating plan, :func:`tournament_id`), without the plan itself (the leaderboard keeps it)."""
    seats = {seat_model(a, model) for g in config["plan"] for a in g["agents"]}
    used = model_fields(seats, model)
    return {"kind": TOURNAMENT_KIND, "agents": list(config["agents"]), "games": config["games"],
            "players": config["players"], "lang": config["lang"], "seed": config["seed"],
            "speak_timeout": config["speak_timeout"], "model": used.pop("model"), **used, "id": tid}


def tournament_id(config: dict) -> str:
    """A stable id for a tournament config: rerunning the same command finds the same id."""
    blob = json.dumps(config, sort_keys=True, ensure_ascii=False)
    return "t-" + hashlib.sha1(blob.encode("utf-8")).hexdigest()[:10]


@dataclasses.dataclass(frozen=True, kw_only=True)
class TournamentConfig(RunConfig):
    """A Who-is-Spy tournament (:func:`run_tournament`).

    Recorded (``<out>/config.json``, in this order, after ``kind``; ``games`` is the number of
    games planned and ``speak_timeout`` the limit resolved, as the tournament played them; the
    models its seats used, ``default_model`` and the ``id`` follow, :func:`tournament_record`):

    Attributes:
        agents: agent specs / URLs (a list is kept as a tuple); games, players, lang, seed: see
            :func:`schedule`.
        speak_timeout: ``"auto"`` (default), seconds, or 0/None for no limit: resolved once for the
            whole tournament by :func:`mas_agents.graphs.wis.session.speak_limit` (the rule of every WiS
            command: none when a seat plays on the embedded model, else WiS's 10 s).

    Not recorded:
        model: default model for specs without ``@MODEL`` (a string, or a chat model in tests).
        data_root: datasets root (for the word pairs) unless ``pairs`` is given.
        pairs: the word pairs to draw from.
        concurrency: games played at once on the configured executor (:func:`mas_agents.cells.run_cells`:
            threads, where the local model serialises its calls, or Ray tasks in flight); None =
            ``--max-connections`` when every seat's model is remote and there is no speaking
            limit, else 1.
        db: leaderboard database (default :func:`mas_agents.graphs.wis.leaderboard.default_db_path`).
        out: directory for the game directories (default ``runs/spy-<id>``).
        tid: tournament id (default :func:`tournament_id` of the config).
        games_plan: a ready schedule (experiments); default :func:`schedule`.
    """

    KIND = TOURNAMENT_KIND
    agents: tuple[str, ...]
    games: int
    players: int = rules.DEFAULT_PLAYERS
    lang: str = "en"
    seed: int = 0
    speak_timeout: float | None | str = "auto"
    model: Any = dataclasses.field(default="local", metadata=NOT_RECORDED)
    data_root: Path | None = dataclasses.field(default=None, metadata=NOT_RECORDED)
    pairs: list[dict] | None = dataclasses.field(default=None, metadata=NOT_RECORDED)
    concurrency: int | None = dataclasses.field(default=None, metadata=NOT_RECORDED)
    db: Path | None = dataclasses.field(default=None, metadata=NOT_RECORDED)
    out: Path | None = dataclasses.field(default=None, metadata=NOT_RECORDED)
    tid: str | None = dataclasses.field(default=None, metadata=NOT_RECORDED)
    games_plan: list[dict] | None = dataclasses.field(default=None, metadata=NOT_RECORDED)

    def __post_init__(self) -> None:
        object.__setattr__(self, "agents", tuple(self.agents))


@marks_run
def run_tournament(config: TournamentConfig, *, play: Callable[[Path, WisGameConfig], dict] | None = None,
                   tick: Callable[[int], None] | None = None) -> dict:
    """Play (or continue) the tournament ``config`` and return ``{"id", "db", "out", "played", "skipped", "metrics"}``.

    Args:
        config: the tournament (:class:`TournamentConfig`).
        play: game function ``play(out, WisGameConfig)`` (default :func:`mas_agents.graphs.wis.session.play_game`).
        tick: called with each game's index as it finishes, and at once for each game already
            stored (so a resumed run's progress counts every game, as in the compare and MAgIC runners).

    Writes ``<out>/config.json`` (:func:`tournament_record`, and ``data_files``: the pairs file the
    planned games' pairs were drawn from) before the first game.

    Raises:
        ValueError: bad arguments (no ``data_root`` nor ``pairs``), or an existing tournament id with another config.
        RunConflict: ``out`` holds another tournament (other agents, games, options, models or
            ``--model``), before anything is written (:func:`mas_agents.game.record.check_same_run`).
    """
    play = play or wis_session.play_game
    agents, model, lang, seed, games_plan = list(config.agents), config.model, config.lang, config.seed, config.games_plan
    pairs = config.pairs
    if pairs is None:
        if config.data_root is None:
            raise ValueError("give data_root or pairs")
        pairs = load_pairs(config.data_root, lang)
    speak_timeout = wis_session.speak_limit(sorted({a for g in games_plan for a in g["agents"]}) if games_plan else agents,
                                            model, config.speak_timeout)
    seat_models = [split_model(a)[1] or model for a in agents if not is_remote(a)]
    concurrency = config.concurrency
    if concurrency is None:
        # with a speaking limit, one game at a time: a description waiting for a connection
        # behind other games' votes would count against the limit and foul by chance
        # (on Ray each game is its own process with its own share of the connections: the
        # cluster's width, mas_agents.cells.default_concurrency)
        concurrency = default_concurrency(seat_models, 1 if speak_timeout is not None else auto_concurrency(seat_models))
    if concurrency > 1 and cells.settings().kind == "local" and any(_is_local_seat(a, model) for a in agents):
        raise ValueError("--concurrency > 1 needs remote models: local seats share one in-process model, so a "
                         "player's speaking time would include other games' waits and count as timeout fouls")
    plan = games_plan or schedule(agents, config.games, config.players, pairs=pairs, seed=seed)
    # the protocol (prompts, rules, settings, reply format) is part of the id: a tournament under
    # another protocol is another tournament, in another season of the leaderboard
    protocol = wis_protocol(lang=lang, players=config.players, speak_timeout=speak_timeout)
    fingerprint = protocol_fingerprint(protocol)
    board_config = {"agents": agents, "games": len(plan), "players": config.players, "lang": lang, "seed": seed,
                    "model": spec_text(model), "speak_timeout": speak_timeout, "protocol": fingerprint,
                    "plan": [{k: g[k] for k in ("agents", "spy_seat", "first_speaker", "pair")} for g in plan]}
    tid = config.tid or tournament_id(board_config)
    out = Path(config.out) if config.out else Path("runs") / f"spy-{tid}"
    record = tournament_record(tid, board_config, model)
    record["protocol"] = {"fingerprint": fingerprint, "inputs": protocol}
    check_same_run(out, record, ignore=NOT_CONFIGURATION - {"default_model"})
    board = Leaderboard(config.db)
    board.start_tournament(tid, board_config, protocol)
    out.mkdir(parents=True, exist_ok=True)
    # the pairs file of every game's drawn pair (data_files: mas_agents.game.data; none for typed pairs)
    files = data_files([g["pair"] for g in plan])
    RunDir(out).write_config({**record, **({"data_files": files} if files else {}),
                                     "record_prompts": record_prompts(), "versions": versions()})
    done = board.finished_indices(tid)
    todo = [g for g in plan if g["index"] not in done]

    def rel(g: dict) -> str:
        return f"games/g{g['index']:04d}"

    def one(g: dict, root: Path) -> dict:
        return play(root / rel(g), WisGameConfig(
            agents=g["agents"], pair=g["pair"], lang=lang, model=model, seed=seed * 100003 + g["index"],
            spy_seat=g["spy_seat"], first_speaker=g["first_speaker"], speak_timeout=speak_timeout,
            game_id=f"{tid}-g{g['index']:04d}"))

    def finished(g: dict, rec: dict) -> None:
        # on this thread (the driver): the leaderboard is written by one process only
        board.add_game(tid, g["index"], rec)
        if tick:
            tick(g["index"])

    if tick:
        for g in plan:
            if g["index"] in done:
                tick(g["index"])
    try:
        run_cells(todo, one, root=out, rel=rel, models=seat_models, concurrency=concurrency, done=finished)
        metrics = board.metrics(tid)
    finally:
        board.close()   # on a stop too: the last connection closed, SQLite folds -wal/-shm back in (E17)
    return {"id": tid, "db": str(board.path), "out": str(out), "played": len(todo), "skipped": len(done),
            "metrics": metrics, "fingerprint": fingerprint}


def subject_metrics(games: list[dict], plan: list[dict]) -> dict:
    """Metrics of the subject's seat (``plan[i]["subject_seat"]`` of game ``i``, found by its
    ``-g<i>`` id suffix), plus the other seats' foul rate and vote accuracy (an attack aims to
    make the *others* foul). Seats, not specs, say who the subject is, so a subject with the
    same spec as the others is still told apart."""
    seat_of = {g["index"]: g["subject_seat"] for g in plan}
    relabelled = []
    for g in games:
        idx = int(g["game_id"].rsplit("-g", 1)[1])
        players = [dict(p, agent="subject" if p["seat"] == seat_of[idx] else "others") for p in g["players"]]
        relabelled.append(dict(g, players=players))
    mine = [m for m in agent_metrics(relabelled) if m["agent"] == "subject"]
    rows = [r for g in relabelled for r in player_rows(g) if r["agent"] != "subject"]
    desc = sum(r["descriptions"] for r in rows)
    cast = sum(r["votes_cast_as_civilian"] for r in rows)
    m = dict(mine[0]) if mine else {"agent": "subject", "games": 0}
    # the subject's score in each game: the unit of the average score's bootstrap interval
    m["scores"] = [float(g["scores"][p["name"]]) for g in relabelled for p in g["players"]
                   if p["agent"] == "subject" and p["name"] in (g.get("scores") or {})]
    m["others_foul_rate"] = (sum(r["fouls"] for r in rows) / desc) if desc else None
    m["others_vote_accuracy"] = (sum(r["correct_votes"] for r in rows) / cast) if cast else None
    m["others_descriptions"], m["others_fouls"] = desc, sum(r["fouls"] for r in rows)
    m["others_votes"], m["others_correct_votes"] = cast, sum(r["correct_votes"] for r in rows)
    return m


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExperimentConfig(RunConfig):
    """A baseline-vs-strategy experiment (:func:`run_experiment`, WiS §5.3–5.4).

    Recorded (``<out>/config.json``, in this order, after ``kind: "wis-experiment"``; the models
    the seats used and ``default_model`` follow):

    Attributes:
        experiment: the strategy, one of :data:`EXPERIMENT_KINDS` (``mas spy experiment --kind``).
        subject: the baseline spec of the tested agent (the strategy block is added to it).
        others: the spec of every other seat.
        games: games per arm; players, lang, seed: see :func:`schedule`.
        speak_timeout: as :class:`TournamentConfig` (recorded as given).

    Not recorded:
        data_root: datasets root (for the word pairs).
        model, concurrency, db: as :class:`TournamentConfig`.
        out: the experiment's directory (its arms in ``<out>/baseline`` and ``<out>/<experiment>``);
            None: nothing written but the arms' leaderboard rows.
    """

    KIND = EXPERIMENT_KIND
    experiment: str
    subject: str
    others: str
    games: int
    players: int = rules.DEFAULT_PLAYERS
    lang: str = "en"
    seed: int = 0
    speak_timeout: float | None | str = "auto"
    data_root: Path = dataclasses.field(metadata=NOT_RECORDED)
    model: Any = dataclasses.field(default="local", metadata=NOT_RECORDED)
    concurrency: int | None = dataclasses.field(default=None, metadata=NOT_RECORDED)
    db: Path | None = dataclasses.field(default=None, metadata=NOT_RECORDED)
    out: Path | None = dataclasses.field(default=None, metadata=NOT_RECORDED)


def run_experiment(config: ExperimentConfig, *, play: Callable[[Path, WisGameConfig], dict] | None = None,
                   tick: Callable[[int], None] | None = None) -> dict:
    """Baseline vs strategy (WiS §5.3–5.4) on the same seating, pairs and seeds.

    Writes ``<out>/config.json`` (``kind: "wis-experiment"``, the options and the models the seats
    used) before the first game; the arms are tournaments in ``<out>/baseline`` and ``<out>/<experiment>``.
    ``play`` and ``tick`` are passed to each arm's :func:`run_tournament`.

    Returns:
        ``{"kind", "subject", "others", "games", "players", "model", "models", "rows": [baseline
        metrics, strategy metrics], "table": markdown}`` (``models``: the subject's and the
        others' models, :mod:`mas_agents.game.record`).

    Raises:
        ValueError: unknown experiment, or a subject that already carries the strategy block.
        RunConflict: ``out`` holds an experiment of another configuration, before anything is
            written (:func:`mas_agents.game.record.check_same_run`).
    """
    kind, subject, others, games, players = config.experiment, config.subject, config.others, config.games, config.players
    model, out = config.model, config.out
    if kind not in EXPERIMENT_KINDS:
        raise ValueError(f"--kind {kind!r}: expected one of {', '.join(EXPERIMENT_KINDS)}")
    blocks, mdl = split_model(subject)
    if kind in blocks.split("+"):
        raise ValueError(f"--subject {subject!r} already has the {kind} block; give the baseline spec")
    treated = f"{blocks}+{kind}" + (f"@{mdl}" if mdl else "")
    pairs = load_pairs(config.data_root, config.lang)
    used = model_fields([seat_model(a, model) for a in (subject, others)], model)
    record = {"kind": EXPERIMENT_KIND, **config.record(), "model": used.pop("model"), **used}
    if out is not None:
        check_same_run(out, record, ignore=NOT_CONFIGURATION - {"default_model"})
    board = Leaderboard(config.db)   # a database that cannot be opened stops the run before config.json is written
    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
        files = data_files(pairs)   # the pairs file both arms draw from
        RunDir(out).write_config({**record, **({"data_files": files} if files else {}),
                                               "record_prompts": record_prompts(), "versions": versions()})
    rows = []
    for arm, spec in (("baseline", subject), (kind, treated)):
        plan = schedule([spec, others], games, players, pairs=pairs, seed=config.seed,
                        spy_agent=spec if kind in ("attack", "defense") else None,
                        civilians_only=spec if kind == "reasoning" else None)
        arm_config = TournamentConfig(agents=[spec, others], games=games, pairs=pairs, players=players,
                                      lang=config.lang, model=model, seed=config.seed,
                                      speak_timeout=config.speak_timeout, concurrency=config.concurrency,
                                      db=config.db, out=(Path(out) / arm) if out else None, games_plan=plan)
        res = run_tournament(arm_config, play=play, tick=tick)
        m = subject_metrics(board.games(res["id"]), plan)
        rows.append({"arm": arm, "spec": spec, "tournament": res["id"], **m})
    return {"kind": kind, "subject": subject, "others": others, "games": games, "players": players,
            "model": record["model"], "models": record["models"], "rows": rows,
            "table": experiment_markdown(kind, rows, players=players)}
