"""``mas game list`` / ``mas game play``: any game registered in :mod:`mas_agents.game.contract`, through the
one runner (:func:`mas_agents.game.runner.run`). A game of another package is found through the
``mas_agents.games`` entry points, or imported with ``--module``; the built-in games also have
their own commands (``mas mmg``, ``mas spy``, ``mas magic``) that load their data.

A game's parameters reach its set-up by name (``--agents``, ``--set NAME=VALUE``): a game builds
its own typed configuration from them (e.g. :class:`mas_agents.graphs.wis.session.WisGameConfig`).

Function-level import kept (``mas --help`` stays light): the runner, :mod:`mas_agents.game.runner`
(LangChain, and the game's graph through the registry).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from mas_agents.cli import progress
from mas_agents.cli import options
from mas_agents.cli import failure
from mas_agents.cli.options import DataDir, Model, Seed, Verbose, remote_options
from mas_agents.game import contract as games
from mas_agents.game.data import DataError
from mas_agents.rundir import stable_run_dir

game_app = typer.Typer(help="Any registered game, through the one runner (list, play).", no_args_is_help=True)

#: The dataset folder each built-in game reads (for the line saying where to point --data-dir).
_GAME_DATA = {"mmg": ("wellplay",), "wis": ("whoisspy",), "magic": ("magic",)}

Module = typer.Option(None, "--module", help="Import this Python module first (a game it registers becomes "
                                             "playable), e.g. my_games.auction.")


def _import(modules: Optional[list[str]]) -> None:
    """Import each ``--module`` (the current directory is searched first, as ``python -m`` does)."""
    if modules and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    for m in modules or []:
        try:
            importlib.import_module(m)
        except ImportError as exc:
            failure.fail(f"--module {m}: {exc}")


def parse_sets(items: list[str]) -> dict:
    """``["rounds=3", "pair={\\"civilian\\": \\"tea\\"}", "lang=en"]`` -> their values: JSON when
    the text parses as JSON, else the text itself.

    Raises:
        ValueError: an item without ``=`` or with an empty name.
    """
    params = {}
    for item in items:
        key, eq, text = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"--set {item!r}: expected NAME=VALUE, e.g. rounds=3")
        try:
            params[key.strip()] = json.loads(text)
        except ValueError:
            params[key.strip()] = text
    return params


@game_app.command("list")
def list_games(module: Optional[list[str]] = Module) -> None:
    """Every registered game: kind, title, parameters, and whether it resumes mid-game."""
    _import(module)
    table = Table("kind", "title", "parameters", "resumes mid-game")
    for kind, g in games.games().items():
        table.add_row(kind, g.title, ", ".join(g.params) or "-", "yes" if g.checkpoint else "no")
    failure.console.print(table)


@game_app.command("play")
@remote_options
def play(
    kind: str = typer.Argument(..., help="A registered game kind (mas game list)."),
    agents: Optional[str] = typer.Option(None, help="Comma-separated agent specs, one per seat (the game's "
                                                    "'agents' parameter), e.g. plain,plain+pgm."),
    set_: Optional[list[str]] = typer.Option(None, "--set", help="A game parameter NAME=VALUE (VALUE as JSON "
                                                                 "when it parses, else text); repeatable."),
    module: Optional[list[str]] = Module,
    model: str = Model,
    seed: int = Seed,
    resume: bool = typer.Option(False, "--resume", help="Continue the game in --out (games that resume mid-game)."),
    out: Optional[Path] = typer.Option(None, help="Run directory (default runs/<kind>-<hash of the parameters>-"
                                                  "<model>-s<seed>)."),
    data_dir: Optional[Path] = DataDir,
    verbose: bool = Verbose,
) -> None:
    """Play one game of KIND and print its result.json. What a parameter names in a game's data is
    loaded from --data-dir: a script by name (mmg: --set script=Sin), a setting by id (magic:
    --set scenario=chameleon --set setting=0); a wis game without a pair draws one, as mas spy
    play does."""
    progress.setup_logging(verbose)
    _import(module)
    from mas_agents.game.runner import run

    if data_dir is not None:   # given: it must hold datasets, even when this game reads none of them
        options.data_root(data_dir, needs=_GAME_DATA.get(kind), holds=True)

    try:
        game = games.get(kind)
        params = parse_sets(set_ or [])
        if agents is not None:
            params["agents"] = [a.strip() for a in agents.split(",") if a.strip()]
    except ValueError as exc:
        failure.fail(str(exc))
    digest = hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:10]
    out = out or stable_run_dir(kind, digest, model, f"s{seed}")
    try:
        if game.load is not None:   # named data loaded (a script, a setting), a wis pair drawn
            params = game.load(params, data_root=data_dir, seed=seed)
    except DataError as exc:
        options.data_root(data_dir, needs=_GAME_DATA.get(kind))   # no datasets root: the line saying where to point
        failure.fail(str(exc))
    except (ValueError, FileNotFoundError) as exc:
        failure.fail(str(exc))
    try:
        res = run(game, out, model=model, seed=seed, resume=resume, **params)
    except (ValueError, FileExistsError, FileNotFoundError) as exc:
        failure.fail(str(exc))
    failure.console.print_json(json.dumps(res, ensure_ascii=False, default=str))
    failure.console.print(f"wrote {out}", markup=False, highlight=False)   # a path may hold [brackets]
