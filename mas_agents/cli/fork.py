"""``mas fork RUN --at STEP --seat NAME --agent SPEC [--model M] [--out DIR]``: play a recorded
game again up to one of its events exactly as it went (every model call answered from the
recording), then on from there with other agents in some seats (:mod:`mas_agents.eval.rerun.fork`,
issue 59). ``--seat``/``--agent`` pairs repeat.

Exit codes: 0 forked, 1 bad input (an unreachable fork point, an unknown seat, a spec, a run that
cannot be forked: one ``error:`` line) or a fork whose events before the fork point differ from the
run's, 3 a fault that stopped the fork (a call before the fork point not in the recording, a model
that is down).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from mas_agents.cli import failure
from mas_agents.cli import paths
from mas_agents.cli import progress
from mas_agents.cli.options import DataDir, Verbose


def fork(
    run_dir: Path = typer.Argument(..., help="A finished game's run directory (recorded with its prompts)."),
    at: str = typer.Option(..., "--at", help="The fork point: an event index of events.jsonl (0-based) or "
                                             "round:N (the first event of round N)."),
    seat: list[str] = typer.Option(..., "--seat", help="A seat to change, as the events name it (Player 2); "
                                                       "repeat with --agent."),
    agent: list[str] = typer.Option(..., "--agent", help="The seat's new agent spec BLOCKS[@MODEL], in the "
                                                         "order of --seat."),
    model: Optional[str] = typer.Option(None, "--model", help="Live model of the changed seats whose spec names "
                                                              "none (default: the model the run recorded for "
                                                              "the seat)."),
    out: Optional[Path] = typer.Option(None, "--out", help="The fork's run directory (default: "
                                                           "runs/fork-<run name>-<timestamp>)."),
    data_dir: Optional[Path] = DataDir,
    verbose: bool = Verbose,
) -> None:
    """Fork RUN_DIR at event --at: replay it up to there, then play on with --seat played by --agent."""
    progress.setup_logging(verbose)
    from mas_agents.errors import RunStopped
    from mas_agents.game.data import DataError, resolve_data_dir
    from mas_agents.replayed_model import NotReplayable
    from mas_agents.rundir import RunDir, default_run_dir

    if not RunDir(run_dir).config.is_file():
        failure.fail(f"RUN_DIR {run_dir}: no config.json: not a run directory", code=1)
    if len(seat) != len(agent):
        failure.fail(f"{len(seat)} --seat but {len(agent)} --agent: give one --agent per --seat, in order", code=1)
    if len(set(seat)) != len(seat):
        failure.fail(f"--seat {', '.join(sorted({s for s in seat if seat.count(s) > 1}))} given twice", code=1)
    if paths.out_is_file("--out", out):
        failure.fail(*paths.out_is_file("--out", out))
    try:
        root = resolve_data_dir(data_dir)
    except DataError as exc:
        if data_dir is not None:
            failure.fail(str(exc))
        root = None            # Who is Spy keeps its pair in config.json: no dataset to read
    from mas_agents.eval.rerun.fork import fork as fork_run
    target = out if out is not None else default_run_dir("fork", run_dir.resolve().name)
    try:
        o = fork_run(run_dir, at, dict(zip(seat, agent)), target, model=model, data_root=root)
    except RunStopped as exc:
        failure.fail(" ".join(str(exc).split()), code=3)
    except (NotReplayable, ValueError, FileNotFoundError, DataError, KeyError, OSError, RuntimeError) as exc:
        failure.fail(" ".join(str(exc).split()) or type(exc).__name__, code=1)
    print(o.text())
    raise typer.Exit(0 if o.prefix_identical else 1)
