"""``mas magic run``: the MAgIC benchmark (challenger vs defender), see :mod:`mas_agents.graphs.magic.bench`.

Typer takes one function parameter per option; the command builds the run's typed configuration
(:class:`~mas_agents.graphs.magic.bench.MagicBenchConfig`) from them once and passes it to the runner.

Function-level imports kept (``mas --help`` stays light): :mod:`mas_agents.graphs.magic.bench`
(LangGraph, LangChain) and :mod:`mas_agents.specs` (the planner blocks: faiss).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from mas_agents.cli import options
from mas_agents.cli import progress
from mas_agents.cli import failure
from mas_agents.cli.options import Concurrency, Model, Seed, Verbose, executor_options, remote_options
from mas_agents.rundir import stable_run_dir

magic_app = typer.Typer(help="MAgIC: Chameleon, Undercover, Cost Sharing, Prisoner's Dilemma, Public Good.",
                        no_args_is_help=True)


@magic_app.command("run")
@remote_options
@executor_options
def run(
    scenario: str = typer.Option("all", help="all, or comma-separated: chameleon, undercover, cost_sharing, "
                                             "prisoners_dilemma, public_good"),
    challenger: str = typer.Option("plain", help="Agent spec under test, BLOCKS[@MODEL] (e.g. plain+pgm)."),
    defender: str = typer.Option("plain", help="Agent spec of the fixed opponents."),
    settings: Optional[str] = typer.Option(None, help="Setting ids, e.g. 0-1 or 0,3,5-7 (default: all)."),
    replay_openings: bool = typer.Option(False, "--replay-openings", help="Defenders seated before the challenger "
                                                                          "replay the setting's recorded round-1 clues."),
    model: str = Model,
    seed: int = Seed,
    concurrency: Optional[int] = Concurrency,
    out: Optional[Path] = typer.Option(None, help="Run directory (default runs/magic-<args>; rerun to resume)."),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Datasets root (holds magic/)."),
    verbose: bool = Verbose,
) -> None:
    """Play the challenger against the defender and write result.json, report.md and radar.png."""
    progress.setup_logging(verbose)
    from mas_agents.graphs.magic.metrics import COORDINATION_LABELS, undefined_reason
    from mas_agents.graphs.magic.bench import MagicBenchConfig, game_label, parse_scenarios, plan, run_magic
    from mas_agents.graphs.magic.bench_report import HEADERS
    from mas_agents.specs import parse_spec, split_model

    root = options.data_root(data_dir)
    try:
        scen = parse_scenarios(scenario)
        for s in (challenger, defender):
            parse_spec(split_model(s)[0])
        n = len(plan(root, scen, settings))
    except (ValueError, FileNotFoundError) as exc:
        failure.fail(str(exc))
    out = out or stable_run_dir("magic", scenario, challenger, defender, settings or "all", model,
                                "replay" if replay_openings else "live")
    config = MagicBenchConfig(data_root=root, out=out, scenarios=scen, challenger=challenger, defender=defender,
                              settings=settings, model=model, seed=seed, replay_openings=replay_openings,
                              concurrency=concurrency)
    with progress.progress() as prog:
        task = prog.add_task("magic", total=n)
        try:
            tick = progress.ticker(prog, task)
            res = run_magic(config, tick=lambda line: tick(game_label(line)))
        except (ValueError, FileNotFoundError) as exc:
            failure.fail(str(exc))
    m = res["metrics"]

    def shown(k: str, v: float | None) -> str:   # in words; Coordination always with its denominator
        name = COORDINATION_LABELS.get(k) or HEADERS.get(k, k)
        if v is not None:
            return f"{name} {100 * v:.1f} %"
        why = undefined_reason(k, res.get("counts"))
        return f"{name} " + ("-" if why == "no data" else f"undefined: {why}")
    failure.console.print(", ".join(shown(k, v) for k, v in m.items())
                      + f"; {res['cost']['games']} games ({res['reused_games']} reused), {res['cost']['calls']} LLM calls")
    print(out)
