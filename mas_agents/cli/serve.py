"""``mas serve``: the web app over the run directories (see :mod:`mas_agents.web.app`).

It binds its port before it prints anything (a busy port: one error line, no address), answers only
the Host names of its bind and ``--allowed-host`` (421 otherwise, on every bind), and plays at most
``--max-games`` games started in the browser at once (:mod:`mas_agents.http_guard`,
:mod:`mas_agents.web.app`; issue 57, E2/E3/E19).

``mas_agents.web.app`` and uvicorn are imported inside :func:`serve`: FastAPI, Jinja2 and the run
readers are over a thousand modules that no other command and not ``mas --help`` should load.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Optional

import typer

from mas_agents.cli import progress
from mas_agents.cli import failure
from mas_agents.cli.options import Model, Verbose
from mas_agents.game.data import DataError, resolve_data_dir


def serve(
    runs: Optional[Path] = typer.Option(None, "--runs", help="Directory of run directories; nothing outside it is served "
                                                             "(default: ./runs, created if missing; a folder named "
                                                             "here must exist)."),
    db: Optional[Path] = typer.Option(None, "--db", help="Who-is-Spy leaderboard database (default: $MAS_DATA_HOME or "
                                                         "~/.local/share/mas-agents/wis.sqlite)."),
    host: str = typer.Option("127.0.0.1", help="Interface to listen on (127.0.0.1: this machine only)."),
    port: int = typer.Option(8000, help="Port."),
    allowed_host: list[str] = typer.Option([], "--allowed-host", metavar="NAME",
                                           help="A host name or address this server may be reached as, besides "
                                                "127.0.0.1, localhost, ::1 and --host (repeatable); a request naming "
                                                "another Host gets 421."),
    max_games: int = typer.Option(4, "--max-games", min=1, help="Games started in the browser played at once; "
                                                                 "another start is refused (429) until one ends."),
    model: str = Model,
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Datasets root, for word pairs of games "
                                                                      "started in the browser; else $MAS_DATA_DIR, else ../shared/datasets."),
    verbose: bool = Verbose,
) -> None:
    """Watch, replay, rank and play in the browser: runs list, replays of the three games with
    private events and call logs, live games, the Who-is-Spy leaderboard with ratings, reports with
    figures, and a human seat in a Who-is-Spy game."""
    progress.setup_logging(verbose)
    from mas_agents import http_guard
    from mas_agents.web.app import create_app

    try:
        hosts = http_guard.allowed_hosts(host, allowed_host)
    except ValueError as exc:
        failure.fail(str(exc))
    refused = _bad_paths(runs, db)
    if refused:
        failure.fail(refused)
    runs = runs if runs is not None else Path("runs")
    try:
        root = resolve_data_dir(data_dir)
    except DataError:   # optional: without it, a game started in the browser needs its word pair
        root = None
    try:
        sock = http_guard.bind(host, port)   # before any line: a busy port is one error, no address
    except OSError as exc:
        refused = f"mas serve: {exc.strerror or exc}"
    else:
        refused = ""
    if refused:   # outside the except: fail() would read a handled OSError as a path given
        failure.fail(refused)
    app = create_app(runs, db, model=model, data_root=root, allowed_hosts=hosts, max_games=max_games)
    if host not in http_guard.LOOPBACK_HOSTS:
        failure.console.print(f"[yellow]Listening on {host}: anyone who can reach this port can read the runs and "
                          "play the human seats.[/yellow]", soft_wrap=True)
    shown = host if not http_guard.is_wildcard(host) else "127.0.0.1"
    failure.console.print(f"mas serve: runs in {Path(runs).resolve()}; open http://{shown}:{port}/", soft_wrap=True)
    extra = sorted(hosts - http_guard.LOOPBACK_HOSTS)
    if http_guard.is_wildcard(host) or extra:
        failure.console.print(f"Answers to the host names {', '.join(sorted(hosts))}; from another machine, use one of "
                          "them or add one with --allowed-host NAME.", soft_wrap=True)
    # Ctrl-C is uvicorn's (a graceful shutdown), not the games' stop of the other commands
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # limit_concurrency: connections and tasks at once (uvicorn answers 503 beyond it)
    http_guard.serve(app, sock, log_level="info" if verbose else "warning", limit_concurrency=64)


#: The first bytes of every SQLite 3 database file (sqlite.org/fileformat.html, "The Database Header").
SQLITE_HEADER = b"SQLite format 3\x00"


def _bad_paths(runs: Path | None, db: Path | None) -> str:
    """Why ``--runs`` / ``--db`` cannot be served, in one line, checked before the port is bound
    (the web app reads both lazily, so a typo would otherwise show an empty site); ``""`` when
    both are fine. A ``--runs`` named on the command line must be an existing folder (only the
    default ``./runs`` is created); a ``--db`` must be a SQLite file or a path still free (a new,
    empty leaderboard), not a folder or another kind of file."""
    if runs is not None and not runs.is_dir():
        return (f"--runs {runs}: {'exists and is not a folder' if runs.exists() else 'no such folder'} "
                "(name the folder that holds your run directories)")
    if db is not None and db.exists():
        if db.is_dir():
            return f"--db {db}: a folder, not a leaderboard database (a SQLite file such as wis.sqlite)"
        try:
            with open(db, "rb") as f:
                head = f.read(len(SQLITE_HEADER))
        except OSError as exc:
            return f"--db {db}: cannot be read ({exc.strerror or exc})"
        if head and head != SQLITE_HEADER:
            return f"--db {db}: not a SQLite database (a leaderboard is a file such as wis.sqlite)"
    return ""
