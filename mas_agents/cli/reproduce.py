"""``mas reproduce PAPER``: a paper's protocol in one command, its numbers beside ours
(:mod:`mas_agents.eval.reproduce`).

    mas reproduce magic       --model openai:NAME [--others openai:gpt-4] [--limit N] [--conditions C,..] [--out DIR]
    mas reproduce player-star --model openai:NAME [--limit N] [--langs en,zh] [--methods M,..] [--eval-runs K]
    mas reproduce wis         --model openai:A,openai:B[,...] [--limit N] [--out DIR]
    mas reproduce all         --model openai:NAME [--others ...] [--limit N] [--out DIR]
    mas reproduce PAPER ... --estimate [--price-in USD --price-out USD]     (no model is called)

Resumable: rerunning the same command continues in the same ``--out`` (finished cells reused; a
WellPlay evaluation cut off midway resumes at its next unanswered question).

``--estimate`` prints what the run would cost (:mod:`mas_agents.eval.reproduce.estimate`: games and calls per
cell, prompt and completion tokens, the price at ``--price-in``/``--price-out`` USD per million
tokens) from a dry run of the same protocol on a fake model, and writes nothing. A real run of
``magic``, ``player-star`` or ``wis`` makes the same estimate first (kept in ``OUT/estimate.json``) and its
report sets it beside the calls and tokens actually used.

The command builds the paper's run configuration once (:func:`mas_agents.eval.reproduce.registry.build`)
and passes it to the estimate, the check and the run. Imports kept inside the command: the
``mas_agents.eval.reproduce`` modules (the papers' runners load the game graphs, langgraph, and the
estimate langchain; ``mas --help`` stays light).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from mas_agents.cli import progress
from mas_agents.cli import options as cli_options
from mas_agents.cli import paths
from mas_agents.cli import failure
from mas_agents.cli.options import Seed, Verbose
from mas_agents.rundir import RunDir, stable_run_dir


def reproduce(
    paper: str = typer.Argument(..., help="magic | player-star | wis | all"),
    model: str = typer.Option("local", help="The model under test: local | openai:NAME; for wis a "
                                            "comma-separated pool (e.g. openai:A,openai:B)."),
    others: Optional[str] = typer.Option(None, help="magic: the model of every other seat (the paper: GPT-4 at "
                                                    "temperature 0); default: --model."),
    limit: Optional[int] = typer.Option(None, min=1, help="Only the first N settings / scripts / games (a smoke "
                                                          "run; the report says it is partial)."),
    conditions: Optional[str] = typer.Option(None, help="magic: the conditions to run, comma-separated from "
                                                        "vanilla,pgm_paper,pgm (default all three; the report "
                                                        "names those left out)."),
    langs: Optional[str] = typer.Option(None, help="player-star: the languages, from en,zh (default both; "
                                                   "a subset marks the report partial)."),
    methods: Optional[str] = typer.Option(None, help="player-star: the methods, from player_star,werewolf,ocot,"
                                                     "thinkthrice,pp,op (default all; always_a/random always run)."),
    eval_runs: Optional[int] = typer.Option(None, "--eval-runs", help="player-star: evaluation runs per cell, "
                                                                      "1 to 3 (the paper: 3)."),
    estimate: bool = typer.Option(False, "--estimate", help="Print the games, calls, tokens and price this run "
                                                            "would take (a dry run on a fake model); call no "
                                                            "model, write nothing."),
    price_in: float = typer.Option(0.0, "--price-in", min=0.0, help="USD per million prompt tokens (--estimate "
                                                                    "and the report's estimate)."),
    price_out: float = typer.Option(0.0, "--price-out", min=0.0, help="USD per million completion tokens."),
    seed: int = Seed,
    out: Optional[Path] = typer.Option(None, help="Run directory (default runs/reproduce-<paper>-<model>[-limitN]; "
                                                  "rerun to resume)."),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Datasets root (holds wellplay/, whoisspy/, "
                                                                     "magic/); else $MAS_DATA_DIR, else ../shared/datasets."),
    verbose: bool = Verbose,
) -> None:
    """Run a paper's protocol (MAgIC, PLAYER*, Who is Spy?, or all three) and write report.md with
    the paper's numbers beside ours. Rerun the same command to resume; --estimate prints the calls,
    tokens and price first, calling no model."""
    # one parameter per option (typer); they become the paper's run configuration once, here
    progress.setup_logging(verbose)
    from mas_agents.eval.reproduce import estimate as est_mod
    from mas_agents.eval.reproduce import registry
    from mas_agents.eval.reproduce.common import check_options

    if paper not in registry.CONFIGS:
        failure.fail(f"unknown paper {paper!r}: choose magic, player-star, wis or all")
    options = {k: v for k, v in (("conditions", conditions), ("langs", langs), ("methods", methods),
                                 ("eval_runs", eval_runs)) if v is not None}
    try:
        check_options(paper, options)
    except ValueError as exc:
        failure.fail(str(exc))
    root = cli_options.data_root(data_dir)

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    parts = [f"limit{limit}"] if limit else []
    if eval_runs is not None and eval_runs < 3:
        parts.append(f"evalruns{eval_runs}")   # another number of runs is another run (never mixed)
    if paths.out_is_file("--out", out):    # before the estimate's dry run
        failure.fail(*paths.out_is_file("--out", out))
    out = out or stable_run_dir("reproduce", paper, model, *parts)
    try:
        config = registry.build(paper, data_root=root, out=out, model=model,
                                options={"others": others, "limit": limit, "seed": seed, **options}).replace(tick=say)
    except ValueError as exc:
        failure.fail(str(exc))
    if estimate:
        try:
            est = est_mod.estimate(config if verbose else config.replace(tick=None))
        except (ValueError, FileNotFoundError) as exc:
            failure.fail(str(exc))
        print("\n".join(est_mod.render(est, price_in=price_in, price_out=price_out)))
        return
    failure.set_resume_hint(f"rerun the same command (same --out {out}) to continue")

    try:
        if paper in est_mod.COMPARED:
            # refuse a conflicting --out before the estimate's dry run, not after it
            registry.check_out(config)
            # the estimate the report sets beside the actual cost
            config = config.replace(estimate=est_mod.estimate_for_run(config, price_in=price_in, price_out=price_out))
        registry.run(config)
    except (ValueError, FileNotFoundError) as exc:
        failure.fail(str(exc))
    failure.console.print(f"report: {RunDir(out).report}", markup=False, highlight=False, soft_wrap=True)
    print(out)
