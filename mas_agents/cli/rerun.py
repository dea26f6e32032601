"""``mas rerun RUN_DIR``: re-execute a recorded run without its model and check it comes out the
same (:mod:`mas_agents.eval.rerun.execute`, issue 50); ``--rescore`` recomputes its scores from its events
(:mod:`mas_agents.eval.rerun.rescore`).

Exit codes: 0 identical (or re-scored equal), 1 a difference (the first one is printed), 2 bad
input or a run that cannot be replayed (one ``error:`` line), 3 a fault that stopped the rerun.
A run of many cells prints each cell's outcome as it finishes (a cell that cannot be rerun is
its own "refused"/"failed"/"error" line and stops none of the others) and exits with the worst.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from mas_agents.cli import progress
from mas_agents.cli import paths
from mas_agents.cli import failure
from mas_agents.cli.options import DataDir, Verbose
from mas_agents.cli.game import Module, _import


def rerun(
    run_dir: Path = typer.Argument(..., help="A run directory: one game, or a run of many cells (each game is rerun)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Where to write the rerun (default: a temporary "
                                                           "directory, removed when identical)."),
    rescore: bool = typer.Option(False, "--rescore", help="Recompute the scores from events.jsonl (no model, no "
                                                          "replay) and compare them with result.json."),
    module: Optional[list[str]] = Module,
    data_dir: Optional[Path] = DataDir,
    verbose: bool = Verbose,
) -> None:
    """Re-execute RUN_DIR from its config.json with every model answering from the run's recorded
    prompts; print "identical" or the first event that differs and why."""
    progress.setup_logging(verbose)
    _import(module)
    from mas_agents.replayed_model import NotReplayable
    from mas_agents.rundir import RunDir

    if not RunDir(run_dir).config.is_file():
        failure.fail(f"RUN_DIR {run_dir}: no config.json: not a run directory")
    if paths.out_is_file("--out", out):
        failure.fail(*paths.out_is_file("--out", out))
    if rescore:
        from mas_agents.eval.rerun.rescore import EventsFormatError, rescore_run
        try:
            results = rescore_run(run_dir)
        except (EventsFormatError, ValueError, FileNotFoundError) as exc:
            failure.fail(str(exc))
        none = [r for r in results if not r.rescorer]
        for r in results:
            if r.rescorer:
                print(r.text())
        if none:          # nothing could be compared: bad input, not a difference
            failure.fail(none[0].text() + (f" (and {len(none) - 1} more game(s) without one)" if len(none) > 1 else ""))
        raise typer.Exit(0 if all(r.same for r in results) else 1)
    from mas_agents.game.data import DataError, resolve_data_dir
    from mas_agents.eval.rerun.execute import game_cells, rerun_cells
    try:
        root = resolve_data_dir(data_dir)
    except DataError as exc:
        if data_dir is not None:
            failure.fail(str(exc))
        root = None            # a game that needs no dataset (the toy game, WiS with its pair in config.json)
    try:
        cells = game_cells(run_dir)
    except OSError as exc:
        failure.fail(f"RUN_DIR {run_dir}: {exc}")
    if len(cells) > 1:       # each cell's outcome printed as it finishes; a bad cell stops none
        outcomes = rerun_cells(run_dir, out, data_root=root, on_outcome=lambda o: print(o.text(), flush=True))
        same = sum(o.identical for o in outcomes)
        print(f"{same} of {len(outcomes)} games identical")
        raise typer.Exit(max(o.exit_code for o in outcomes))
    try:
        outcomes = rerun_cells(run_dir, out, data_root=root)
    except NotReplayable as exc:
        failure.fail(str(exc))
    [o] = outcomes
    if o.status in ("refused", "failed"):
        failure.fail(o.detail)
    if o.status == "error":
        failure.fail(o.detail, code=3)
    print(o.text())
    raise typer.Exit(o.exit_code)
