"""``mas spy``: Who is Spy? games, tournaments, leaderboard, experiments, replays, agent server.

Commands (WiS §3, the platform's game and agent protocol)::

    mas spy play [--players 6] [--agents SPEC,...] [--pair tea/coffee] [--lang en|zh] [--model local]
                 [--seed S] [--speak-timeout S] [--out DIR]     (a seat ``human``: a person, in mas serve)
    mas spy tournament --agents SPEC,SPEC,... --games N [--players 6] [--concurrency K] [--db FILE]
    mas spy leaderboard [--db FILE] [--season N|FINGERPRINT [--compare N]] [--tournament ID] [--markdown]
    mas spy experiment --kind attack|defense|reasoning --subject SPEC --others SPEC --games N
    mas spy replay DIR                (a finished or a stopped game)
    mas spy serve-agent --agent SPEC [--port 7860]

An agent spec is ``BLOCKS[@MODEL]`` (``plain``, ``plain+reasoning``, ``plain@openai:gpt-4o-mini``)
or the URL of a WiS-protocol agent (``http://127.0.0.1:7860``).

The speaking limit of every command that plays (``--speak-timeout``) follows one rule,
:func:`mas_agents.graphs.wis.session.speak_limit`: 10 s (WiS paper Appendix A), none when a seat plays on the
embedded model (on a small machine its descriptions take longer, and would foul on the clock), 120 s
with a human seat; a number given overrides it (0: no limit).

Typer takes one function parameter per option; each command that plays builds its run's typed
configuration (:class:`~mas_agents.graphs.wis.session.WisGameConfig`,
:class:`~mas_agents.graphs.wis.tournament.TournamentConfig`, :class:`~mas_agents.graphs.wis.tournament.ExperimentConfig`)
from them once and passes it to the runner.

Function-level imports kept (``mas --help`` stays light): the runners
(:mod:`~mas_agents.graphs.wis.session`, :mod:`~mas_agents.graphs.wis.tournament`: LangGraph),
:mod:`mas_agents.specs` and :mod:`mas_agents.game.human` (the planner blocks: faiss),
:mod:`mas_agents.graphs.wis.protocol` (FastAPI), :mod:`mas_agents.accounting` and :mod:`mas_agents.llm` (LangChain).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from mas_agents.cli import options
from mas_agents.cli import progress
from mas_agents.cli import failure
from mas_agents.cli.options import Concurrency, Lang, Model, Seed, Verbose, executor_options, remote_options
from mas_agents.cli.failure import set_resume_hint
from mas_agents.game import contract as game_registry
from mas_agents.game.fingerprint import protocol_diff
from mas_agents.graphs.wis.leaderboard import Leaderboard, default_db_path
from mas_agents.graphs.wis.leaderboard_text import RANK_NOTE, format_leaderboard, leaderboard_markdown
from mas_agents.graphs.wis.replay_html import game_kind, game_summary, write_replay
from mas_agents.game.seats import Seats
from mas_agents.graphs.wis import rules as rules
from mas_agents.rundir import RunDir, default_run_dir, stable_run_dir

spy_app = typer.Typer(help="Who is Spy? (WiS): games, tournaments, leaderboard, experiments.", no_args_is_help=True)

DataDir = typer.Option(None, "--data-dir", help="Datasets root (holds whoisspy/); else $MAS_DATA_DIR, else ../shared/datasets.")
Players = typer.Option(6, help="Seats (3-9).")
SpeakTimeout = typer.Option(
    None, "--speak-timeout", min=0,
    help="Seconds to describe before it counts as a foul; 0: no limit. Default: 10 (WiS Appendix A), none when "
         "a seat plays on the embedded model (local), 120 with a human seat.")
Db = typer.Option(None, "--db", help="Leaderboard database (default: $MAS_DATA_HOME or ~/.local/share/mas-agents/wis.sqlite).")



def _specs(text: str, allow_human: bool = False) -> list[str]:
    specs = [s.strip() for s in text.split(",") if s.strip()]
    if not specs:
        failure.fail("--agents: give at least one agent spec")
    from mas_agents.game.human import HUMAN
    from mas_agents.specs import is_remote, parse_spec, split_model
    for s in specs:
        if s == HUMAN and not allow_human:
            failure.fail("a human seat plays single games only: mas spy play --agents human,...")
        if is_remote(s) or s == HUMAN:
            continue
        try:
            parse_spec(split_model(s)[0])
        except ValueError as exc:
            failure.fail(f"agent spec {s!r}: {exc}")
    return specs


@spy_app.command("play")
@remote_options
def play(
    players: int = Players,
    agents: str = typer.Option("plain", help="Comma-separated seat specs; cycled over the seats."),
    pair: Optional[str] = typer.Option(None, help="CIVILIAN/SPY words, e.g. tea/coffee (default: drawn from the dataset)."),
    lang: str = Lang,
    model: str = Model,
    seed: int = Seed,
    speak_timeout: Optional[float] = SpeakTimeout,
    vote_timeout: Optional[float] = typer.Option(
        None, help="Seconds a remote (URL) agent has to vote before the vote counts as an abstention (default: the same as --speak-timeout)."),
    out: Optional[Path] = typer.Option(None, help="Game directory (default runs/spy-<time>)."),
    data_dir: Optional[Path] = DataDir,
    verbose: bool = Verbose,
) -> None:
    """Play one game and write its record, transcript and replay.html."""
    progress.setup_logging(verbose)
    from mas_agents.game.human import HUMAN
    from mas_agents.graphs.wis.session import AUTO, WisGameConfig, draw_pair, parse_pair, play_game, speak_limit

    specs = _specs(agents, allow_human=True)
    try:
        rules.check_players(players)
        rules.check_lang(lang)
        if pair:
            if data_dir is not None:   # given: it must hold the datasets, even when --pair needs none
                options.data_root(data_dir, holds=True)
            words = parse_pair(pair)
        else:
            words = draw_pair(options.data_root(data_dir), lang, seed)
    except (ValueError, FileNotFoundError) as exc:
        failure.fail(str(exc))
    if HUMAN in specs:   # one person, at the listed position; the agents fill the other seats in turn
        others = [s for s in specs if s != HUMAN]
        if specs.count(HUMAN) > 1 or not others:
            failure.fail("--agents: one human seat and at least one agent, e.g. human,plain")
        fill = [others[i % len(others)] for i in range(players - 1)]
        at = min(specs.index(HUMAN), players - 1)
        seat_specs = fill[:at] + [HUMAN] + fill[at:]
    else:
        seat_specs = [specs[i % len(specs)] for i in range(players)]
    try:
        limit = speak_limit(seat_specs, model, AUTO if speak_timeout is None else speak_timeout)
    except ValueError as exc:
        failure.fail(str(exc))
    out = out or default_run_dir("spy", f"{words['civilian']}-{words['spy']}")
    set_resume_hint("rerun the command to play the game again (a single game restarts; tournaments reuse finished games)")
    if HUMAN in seat_specs:
        failure.console.print(f"A human seat waits for its answers in the browser: run [bold]mas serve --runs "
                          f"{escape(str(out.parent))}[/bold] and open the game {escape(out.name)} "
                          + (f"(answers within {limit:g} s)." if limit else "(no time limit)."))
    try:
        config = WisGameConfig(agents=seat_specs, pair=words, lang=lang, model=model, seed=seed, speak_timeout=limit,
                               vote_timeout="speak" if vote_timeout is None else vote_timeout)
        rec = play_game(out, config)
    except (ValueError, FileNotFoundError) as exc:
        failure.fail(str(exc))
    html = write_replay(out)
    clock = (f"speaking limit {limit:g} s" if limit else
             "no speaking limit" + (" (a seat plays on the embedded model)" if speak_timeout is None else ""))
    failure.console.print(f"{game_summary(rec)}; scores " + ", ".join(f"{k} {v:g}" for k, v in rec["scores"].items())
                      + f"; {rec['llm']['calls']} LLM calls, {rec['wall_time_s']:.1f} s, {clock}; replay {html}",
                      markup=False, highlight=False, soft_wrap=True)
    print(out)


@spy_app.command("tournament")
@remote_options
@executor_options
def tournament(
    agents: str = typer.Option(..., help="Comma-separated agent specs or URLs."),
    games: int = typer.Option(..., min=1, help="Games to play (a multiple of the number of agents balances the spy role)."),
    players: int = Players,
    lang: str = Lang,
    model: str = Model,
    seed: int = Seed,
    speak_timeout: Optional[float] = SpeakTimeout,
    concurrency: Optional[int] = Concurrency,
    db: Optional[Path] = Db,
    out: Optional[Path] = typer.Option(None, help="Where game directories go (default runs/spy-<tournament id>)."),
    data_dir: Optional[Path] = DataDir,
    verbose: bool = Verbose,
) -> None:
    """Play many games with balanced roles into the leaderboard; rerun the same command to continue."""
    progress.setup_logging(verbose)
    from mas_agents.graphs.wis.tournament import TournamentConfig, run_tournament

    specs = _specs(agents)
    config = TournamentConfig(agents=specs, games=games, data_root=options.data_root(data_dir), players=players, lang=lang,
                              model=model, seed=seed, speak_timeout="auto" if speak_timeout is None else speak_timeout,
                              concurrency=concurrency, db=db, out=out)
    with progress.progress() as prog:
        task = prog.add_task("tournament", total=games)
        t = progress.ticker(prog, task)
        try:
            res = run_tournament(config, tick=lambda i: t(f"game {i + 1}, games/g{i:04d}"))
        except (ValueError, FileNotFoundError) as exc:
            failure.fail(str(exc))
    failure.console.print(f"tournament {res['id']}: {res['played']} game(s) played, {res['skipped']} already stored; "
                      f"db {res['db']}; games in {res['out']}; protocol {res['fingerprint']}")
    print(format_leaderboard(res["metrics"], title=f"tournament {res['id']}"))
    print(RANK_NOTE)


@spy_app.command("leaderboard")
def leaderboard(
    db: Optional[Path] = Db,
    season: Optional[str] = typer.Option(None, help="One season: its number (see the listing) or protocol fingerprint "
                                                    "(default: every season, one table each)."),
    compare: Optional[str] = typer.Option(None, help="With --season: list what differs between that season's "
                                                     "protocol and this season's (default: the season before it)."),
    tournament: Optional[str] = typer.Option(None, help="One tournament id (default: every stored game of the season)."),
    markdown: bool = typer.Option(False, "--markdown", help="Print Markdown tables."),
) -> None:
    """Print the seasons of the database (tournaments grouped by protocol fingerprint: prompts,
    rules, game settings, reply format), then per season rank score (100 + Σ scores − games),
    average score with its 95 % interval, win rates by role, vote accuracy, foul rate, survival
    rounds and games for every agent. Seasons are never pooled."""
    if db is not None and not db.is_file():   # a typo must not leave an empty database behind
        failure.fail(f"--db {db}: no such file (a leaderboard database is written by mas spy tournament)")
    if db is None and not default_db_path().is_file():
        failure.fail(f"no leaderboard yet at {default_db_path()}: play games with mas spy tournament, or give --db",
                 code=1)
    board = Leaderboard(db)
    seasons = board.seasons()
    if not seasons:
        failure.fail(f"no games in {board.path}", code=1)
    if compare and not season:
        failure.fail("--compare needs --season (the season to compare it with)")
    try:
        if tournament:
            fp = next((t["fingerprint"] for t in board.tournaments() if t["id"] == tournament), None)
            if fp is None:
                failure.fail(f"no tournament {tournament} in {board.path}", code=1)
            shown = [board.season(fp)]
        else:
            shown = [board.season(season)] if season else seasons
        other = board.season(compare) if compare else None
    except ValueError as exc:
        failure.fail(str(exc))
    h, li = ("### ", "- ") if markdown else ("", "  ")
    if not season and not tournament:
        print(f"{h}WiS leaderboard ({board.path}): {len(seasons)} season{'s' if len(seasons) != 1 else ''}, "
              "one per protocol fingerprint; a rating never pools two\n")
        for s in seasons:
            changed = ", ".join(d["field"] for d in s["changed"])
            print(f"{li}{s['label']} {s['fingerprint']}: {len(s['tournaments'])} tournament(s), "
                  f"{s['games']} games, agents {', '.join(s['agents'])}"
                  + (f"; changed from season {s['number'] - 1}: {changed}" if changed else ""))
        print()
    for s in shown:
        print(f"{h}{s['label']} ({s['fingerprint']})" + (f", tournament {tournament}" if tournament else ""))
        for line in s["summary"]:
            print(f"{li}{line}")
        base = other or (seasons[s["number"] - 2] if season and s["number"] > 1 else None)
        if base is not None:
            changes = protocol_diff(base["inputs"], s["inputs"])
            print(f"{li}what changed from {base['label']} ({base['fingerprint']}):" + ("" if changes else " nothing"))
            for d in changes:
                print(f"    {'- ' if markdown else ''}{d['field']}: {d['old']!r} -> {d['new']!r}")
        metrics = board.metrics(tournament, season=s["fingerprint"])
        if not metrics:
            print("  no games yet\n")
            continue
        print()
        print(leaderboard_markdown(metrics) if markdown else format_leaderboard(metrics))
    print(RANK_NOTE)


@spy_app.command("experiment")
@remote_options
@executor_options
def experiment(
    kind: str = typer.Option(..., help="attack | defense | reasoning"),
    subject: str = typer.Option(..., help="Baseline spec of the tested agent (the strategy block is added to it)."),
    others: str = typer.Option("plain", help="Spec of every other seat."),
    games: int = typer.Option(..., min=1),
    players: int = Players,
    lang: str = Lang,
    model: str = Model,
    seed: int = Seed,
    speak_timeout: Optional[float] = SpeakTimeout,
    concurrency: Optional[int] = Concurrency,
    db: Optional[Path] = typer.Option(None, "--db", help="Leaderboard database of the two arms (default: <out>/wis.sqlite, "
                                                     "the experiment's own, so its arms stay out of your leaderboard)."),
    out: Optional[Path] = typer.Option(None, help="Directory for report.md and the games (default runs/spy-exp-<kind>)."),
    data_dir: Optional[Path] = DataDir,
    verbose: bool = Verbose,
) -> None:
    """Baseline vs strategy on the same seating and words (WiS §5.3–5.4); writes report.md."""
    progress.setup_logging(verbose)
    from mas_agents.graphs.wis.tournament import ExperimentConfig, run_experiment

    _specs(f"{subject},{others}")
    out = out or stable_run_dir("spy-exp", kind, subject, others, games, seed)
    # the arms are tournaments of an experiment, not a ranking of agents: by default they go to the run's
    # own database, never into the global leaderboard that /leaderboard and mas spy leaderboard show
    config = ExperimentConfig(experiment=kind, subject=subject, others=others, games=games, data_root=options.data_root(data_dir),
                              players=players, lang=lang, model=model, seed=seed,
                              speak_timeout="auto" if speak_timeout is None else speak_timeout,
                              concurrency=concurrency, db=db or out / "wis.sqlite", out=out)
    with progress.progress() as prog:
        task = prog.add_task(f"{kind} experiment", total=2 * games)
        t, ticks = progress.ticker(prog, task), [0]

        def tick(i: int) -> None:   # the baseline arm's games are played (or found) first
            arm = "baseline" if ticks[0] < games else kind
            ticks[0] += 1
            t(f"{arm} game {i + 1}")

        try:
            res = run_experiment(config, tick=tick)
        except (ValueError, FileNotFoundError) as exc:
            failure.fail(str(exc))
    out.mkdir(parents=True, exist_ok=True)
    RunDir(out).write_result(res)
    RunDir(out).write_report(f"# WiS {kind} experiment\n\nSubject `{subject}` vs others `{others}`, "
                                   f"{games} games per arm, {players} players, models {', '.join(res['models'])}, seed {seed}.\n\n"
                                   + res["table"])
    print(res["table"])
    print(out)


@spy_app.command("replay")
def replay(game_dir: Path = typer.Argument(..., help="A Who-is-Spy game directory (result.json, or the "
                                                     "events.jsonl of a game that stopped).")) -> None:
    """Write DIR/replay.html: the game round by round, words revealed at the end; a game that stopped
    before its end shows its rounds so far. Other games (murder mystery, MAgIC) replay in mas serve."""
    if not game_dir.is_dir():
        failure.fail(f"GAME_DIR {game_dir}: " + ("a file, not a game directory" if game_dir.exists() else "no such directory"))
    try:
        kind = game_kind(game_dir)
        if kind is not None and kind != "wis":
            _other_replay(game_dir, kind)
        print(write_replay(game_dir))
    except (ValueError, FileNotFoundError) as exc:
        failure.fail(str(exc))


def _other_replay(game_dir: Path, kind: str) -> None:
    """Exit with one line saying where a run that is not a Who-is-Spy game can be seen."""
    g = game_registry.find(kind)
    title = "" if g is None else g.title if g.title[:2].isupper() else g.title[0].lower() + g.title[1:]   # MAgIC stays
    what = f"a {title} game" if g is not None else f"a {kind!r} run, not a single game"
    where = (f"replay it in the browser: mas serve --runs {game_dir.resolve().parent}, then open "
             f"/replay/{game_dir.resolve().name}" if g is not None else
             f"open it in the browser: mas serve --runs {game_dir.resolve().parent}")
    failure.fail(f"{game_dir} holds {what}; mas spy replay draws Who-is-Spy games only: {where}")


@spy_app.command("serve-agent")
@remote_options
def serve_agent(
    agent: str = typer.Option("plain", help="Agent spec BLOCKS[@MODEL]."),
    port: int = typer.Option(7860),
    host: str = typer.Option("127.0.0.1", help="Interface to listen on; 0.0.0.0 to be reachable from other machines."),
    model: str = typer.Option("local", help="Model for a spec without @MODEL."),
    lang: str = typer.Option("auto", help="en, zh, or auto: Chinese when the game's word is Chinese."),
    deadline: float = typer.Option(
        9.0, min=0, help="Seconds within which every interact answers (below the judge's 10 s speaking limit, "
                         "WiS Appendix A); a player still thinking then answers 'no reply' at once. 0: none."),
    calls: Optional[Path] = typer.Option(None, help="Where to record LLM calls (default: not kept)."),
    allowed_host: list[str] = typer.Option([], "--allowed-host", metavar="NAME",
                                           help="A host name or address the platform reaches this agent as, besides "
                                                "127.0.0.1, localhost, ::1 and --host (repeatable); another Host gets 421."),
    verbose: bool = Verbose,
) -> None:
    """Serve one of our agents over HTTP with the WiS agent protocol (POST /agent/init, /agent/perceive,
    /agent/interact, /agent/getModelName, /agent/checkHealth), as an agent built on the platform's SDK
    answers them. Use --host 0.0.0.0 to let a platform on another machine reach it."""
    progress.setup_logging(verbose)
    from mas_agents.graphs.wis.session import PlayerFactory
    from mas_agents.graphs.wis.protocol import serve
    from mas_agents.call_log import CallRecorder
    from mas_agents.model_specs import model_label
    from mas_agents.specs import is_remote, split_model

    if is_remote(agent):
        failure.fail("--agent must be a local agent spec, not a URL")
    if lang not in ("en", "zh", "auto"):
        failure.fail(f"--lang {lang!r}: expected en, zh or auto")
    _specs(agent)
    if calls is not None and calls.is_dir():
        failure.fail(f"--calls {calls}: a folder; name the file the call log is written to (e.g. calls.jsonl)")
    from mas_agents import http_guard
    try:
        hosts = http_guard.allowed_hosts(host, allowed_host)
    except ValueError as exc:
        failure.fail(str(exc))
    try:
        sock = http_guard.bind(host, port)   # a busy port: one line, before the model is loaded
    except OSError as exc:
        refused = f"mas spy serve-agent: {exc.strerror or exc}"
    else:
        refused = ""
    if refused:
        failure.fail(refused)
    # safe_reply: a description that still says the word after the re-prompt becomes a generic one
    # (a platform's judge would eliminate the agent for it; mas_agents.graphs.wis.player.safe_description)
    factory = PlayerFactory(Seats(CallRecorder(calls) if calls else CallRecorder(None), model), lang=lang,
                            safe_reply=True)
    factory.model(split_model(agent)[1])  # load the model before the first request
    serve(lambda: factory(agent, "civilian"), model_label(split_model(agent)[1] or model), host=host, port=port,
          deadline=deadline or None, allowed_hosts=hosts, sock=sock)
