"""``mas ablate``: the same agent with planner blocks on and off, on WellPlay, Who is Spy and MAgIC
(see :mod:`mas_agents.eval.ablate.grid`).

The runner (:mod:`mas_agents.eval.ablate.grid`: langchain, the model layer) is imported inside the
command, so that ``mas --help`` stays light.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Optional

import typer

from mas_agents.cli import options
from mas_agents.cli import progress
from mas_agents.cli import failure
from mas_agents.cli.options import Concurrency, Model, Verbose, executor_options, remote_options
from mas_agents.game.data import DataError
from mas_agents.rundir import stable_run_dir


@remote_options
@executor_options
def ablate(
    bench: str = typer.Option("all", help="wellplay, spy, magic (comma-separated) or all."),
    base: str = typer.Option("plain", help="Base agent spec."),
    blocks: str = typer.Option("player_star,pgm", help="Blocks switched on and off (every subset is a variant)."),
    seeds: int = typer.Option(2, min=1, help="WellPlay seeds."),
    model: str = Model,
    script: str = typer.Option("Sin", help="WellPlay script."),
    games: int = typer.Option(4, min=1, help="Who-is-Spy games per variant."),
    settings: str = typer.Option("0-1", help="MAgIC setting ids."),
    rounds: int = typer.Option(3, min=0, help="Murder-mystery questioning rounds."),
    concurrency: Optional[int] = Concurrency,
    speak_timeout: Optional[float] = typer.Option(
        None, "--speak-timeout", min=0,
        help="Who-is-Spy speaking limit in seconds, a block's readings included (default: none, so that "
             "extra model calls on a slow machine are not fouls)."),
    out: Optional[Path] = typer.Option(None, help="Run directory (default runs/ablate-<args>; rerun to resume)."),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Datasets root (holds wellplay/, whoisspy/ and "
                                                                     "magic/, as --bench needs); else $MAS_DATA_DIR, "
                                                                     "else ../shared/datasets."),
    verbose: bool = Verbose,
) -> None:
    """Run {base, base+each block subset} on the same seeds, games and settings; write report.md,
    result.json and figures with n and 95 % intervals for every number."""
    # one parameter per option (typer); the ablation's configuration (AblateConfig) is built once below
    progress.setup_logging(verbose)
    from mas_agents.eval.ablate.grid import BENCHES, AblateConfig, run_ablate

    root = options.data_root(data_dir)
    benches = list(BENCHES) if bench == "all" else [b.strip() for b in bench.split(",") if b.strip()]
    names = [b.strip() for b in blocks.split(",") if b.strip()]
    label = "all" if set(benches) == set(BENCHES) else ",".join(b for b in BENCHES if b in benches)
    out = out or stable_run_dir("ablate", label, base, "-".join(names), model, f"s{seeds}g{games}", settings, script)
    with progress.progress() as prog:
        task = prog.add_task("ablate", total=None)
        try:
            cfg = AblateConfig(out=out, data_root=root, benches=benches, base=base, blocks=names, seeds=seeds,
                               model=model, script=script, games=games, settings=settings, rounds=rounds,
                               concurrency=concurrency, speak_timeout=speak_timeout,
                               command="mas " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
            res = run_ablate(cfg, tick=progress.ticker(prog, task))
        except (ValueError, FileNotFoundError, DataError) as exc:
            failure.fail(str(exc))
    # the summary is report text: "[no interval, n=1]" is not a rich markup tag (it printed "0.0 points ;")
    failure.console.print(res["summary"], markup=False, highlight=False, soft_wrap=True)
    print(out)
