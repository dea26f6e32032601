"""``mas diff RUN_A RUN_B``: where two runs of one game part (:mod:`mas_agents.eval.rerun.diff`,
issue 59 item 2): "identical", or the configuration fields that differ, the first event that
differs with the acting seat's model calls behind it (prompt and completion diffs), the outcome
fields and the per-seat metrics that differ.

Exit codes: 0 a report (identical or not: ``--json``'s ``identical`` says which), 1 bad input
(one ``error:`` line naming the file: no run directory, runs of different kinds, a missing
``events.jsonl``, a corrupt file).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from mas_agents.cli import failure
from mas_agents.cli.game import Module, _import


def diff(
    run_a: Path = typer.Argument(..., help="A game's run directory."),
    run_b: Path = typer.Argument(..., help="Another run of the same game (its rerun, another seed or configuration)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    module: Optional[list[str]] = Module,
) -> None:
    """Compare two runs of one game: "identical", or the configuration fields that differ, the first
    event that differs with the model calls that made it (prompt and completion diffs), and the
    outcome and per-seat metrics that differ."""
    _import(module)
    from mas_agents.eval.rerun.diff import DiffError, diff_runs
    try:
        report = diff_runs(run_a, run_b)
    except (DiffError, ValueError, OSError) as exc:       # OSError: FileNotFoundError, PermissionError...
        failure.fail(" ".join(str(exc).split()), code=1)
    print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) if as_json else report.text())
