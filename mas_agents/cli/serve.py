"""``mas serve``: the web app over the run directories (see :mod:`mas_agents.web.app`).

``mas_agents.web.app`` and uvicorn are imported inside :func:`serve`: FastAPI, Jinja2 and the run
readers are over a thousand modules that no other command and not ``mas --help`` should load.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Optional

import typer

from mas_agents.cli import common as cli
from mas_agents.cli.common import Model, Verbose
from mas_agents.eval.datasets import DataError, resolve_data_dir


def serve(
    runs: Path = typer.Option(Path("runs"), "--runs", help="Directory of run directories; nothing outside it is served."),
    db: Optional[Path] = typer.Option(None, "--db", help="Who-is-Spy leaderboard database (default: $MAS_DATA_HOME or "
                                                         "~/.local/share/mas-agents/wis.sqlite)."),
    host: str = typer.Option("127.0.0.1", help="Interface to listen on (127.0.0.1: this machine only)."),
    port: int = typer.Option(8000, help="Port."),
    model: str = Model,
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Datasets root, for word pairs of games "
                                                                      "started in the browser; else $MAS_DATA_DIR, else ../shared/datasets."),
    verbose: bool = Verbose,
) -> None:
    """Watch, replay, rank and play in the browser: runs list, replays of the three games with
    private events and call logs, live games, the Who-is-Spy leaderboard with ratings, reports with
    figures, and a human seat in a Who-is-Spy game."""
    cli.setup_logging(verbose)
    import uvicorn

    from mas_agents.web.app import LOOPBACK_HOSTS, create_app

    try:
        root = resolve_data_dir(data_dir)
    except DataError:   # optional: without it, a game started in the browser needs its word pair
        root = None
    if host not in LOOPBACK_HOSTS:
        cli.console.print(f"[yellow]Listening on {host}: anyone who can reach this port can read the runs and "
                          "play the human seats.[/yellow]")
    app = create_app(runs, db, model=model, data_root=root,
                     allowed_hosts=LOOPBACK_HOSTS if host in LOOPBACK_HOSTS else None)
    cli.console.print(f"mas serve: runs in {Path(runs).resolve()}; open http://{host}:{port}/")
    # Ctrl-C is uvicorn's (a graceful shutdown), not the games' stop of the other commands
    signal.signal(signal.SIGINT, signal.default_int_handler)
    uvicorn.run(app, host=host, port=port, log_level="info" if verbose else "warning")
