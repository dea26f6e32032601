"""``mas reproduce PAPER``: a paper's protocol in one command, its numbers beside ours
(:mod:`eval.reproduce`).

    mas reproduce magic       --model openai:NAME [--others openai:gpt-4] [--limit N] [--out DIR]
    mas reproduce player-star --model openai:NAME [--limit N] [--out DIR]
    mas reproduce wis         --model openai:A,openai:B[,...] [--limit N] [--out DIR]
    mas reproduce all         --model openai:NAME [--others ...] [--limit N] [--out DIR]

Resumable: rerunning the same command continues in the same ``--out`` (finished cells reused).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Optional

import typer

from mas_agents.cli import common as cli
from mas_agents.cli.common import Seed, Verbose

#: ``mas reproduce`` argument -> module under ``eval.reproduce``.
MODULES = {"magic": "magic", "player-star": "player_star", "wis": "wis"}


def reproduce(
    paper: str = typer.Argument(..., help="magic | player-star | wis | all"),
    model: str = typer.Option("local", help="The model under test: local | openai:NAME; for wis a "
                                            "comma-separated pool (e.g. openai:A,openai:B)."),
    others: Optional[str] = typer.Option(None, help="magic: the model of every other seat (the paper: GPT-4 at "
                                                    "temperature 0); default: --model."),
    limit: Optional[int] = typer.Option(None, min=1, help="Only the first N settings / scripts / games (a smoke "
                                                          "run; the report says it is partial)."),
    seed: int = Seed,
    out: Optional[Path] = typer.Option(None, help="Run directory (default runs/reproduce-<paper>-<model>[-limitN]; "
                                                  "rerun to resume)."),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Datasets root (holds wellplay/, whoisspy/, "
                                                                     "magic/); else $MAS_DATA_DIR, else ../shared/datasets."),
    verbose: bool = Verbose,
) -> None:
    """Run a paper's protocol and write report.md with the paper's numbers beside ours."""
    cli.setup_logging(verbose)
    from mas_agents.rundir import stable_run_dir

    if paper != "all" and paper not in MODULES:
        cli.fail(f"unknown paper {paper!r}: choose magic, player-star, wis or all")
    root = cli.data_root(data_dir)
    out = out or stable_run_dir("reproduce", paper, model, *( [f"limit{limit}"] if limit else []))
    cli.set_resume_hint(f"rerun the same command (same --out {out}) to continue")

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        if paper == "all":
            from eval.reproduce.all import reproduce_all
            reproduce_all(data_root=root, out=out, model=model, others=others, limit=limit, seed=seed, tick=say)
        else:
            mod = importlib.import_module(f"eval.reproduce.{MODULES[paper]}")
            mod.reproduce(data_root=root, out=out, model=model, others=others, limit=limit, seed=seed, tick=say)
    except (ValueError, FileNotFoundError) as exc:
        cli.fail(str(exc))
    cli.console.print(f"report: {out / 'report.md'}", markup=False, highlight=False, soft_wrap=True)
    print(out)
