"""The Who is Spy? leaderboard as text: its columns (:data:`HEADERS`), its rows sorted by rank score
with competition ranks (:func:`leaderboard_rows`), a rich table, plain text and Markdown. Split
from :mod:`mas_agents.graphs.wis.leaderboard` (issue 51 item 6), the store.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

__all__ = ["HEADERS", "RANK_NOTE", "format_leaderboard", "leaderboard_markdown", "leaderboard_rows", "leaderboard_table"]

def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


#: (header, formatter) of every leaderboard column after "rank" and "agent".
_COLUMNS = (
    ("rank score", lambda m: _num(m["rank_score"], 1)),
    ("avg score [95 %]", lambda m: _num(m["avg_score"]) + (
        f" [{m['avg_score_low']:.2f}, {m['avg_score_high']:.2f}]" if m.get("avg_score_low") is not None else "")),
    ("win spy", lambda m: _pct(m["win_rate_spy"])),
    ("win civilian", lambda m: _pct(m["win_rate_civilian"])),
    ("win overall", lambda m: _pct(m["win_rate"])),
    ("vote acc", lambda m: _pct(m["vote_accuracy"])),
    ("foul rate", lambda m: _pct(m["foul_rate"])),
    ("of which timeouts", lambda m: _pct(m.get("timeout_rate"))),
    ("avg survival", lambda m: _num(m["avg_survival_rounds"])),
    ("games (seats)", lambda m: str(m["games"])),
)
HEADERS = ("rank", "agent") + tuple(h for h, _ in _COLUMNS)

#: The note printed under a leaderboard: what the rank score rewards, and what the interval is.
RANK_NOTE = ("rank score = 100 + Σ scores − games (WiS §3.5): each game costs 1 point and gains 12 / players on "
             "average (2 at 6 players), so it grows with the number of games; avg score is the mean per game "
             "played, with a percentile-bootstrap 95 % interval resampling the games the agent sat in (when 2 or more).")


def _ranks(metrics: Sequence[Mapping[str, Any]]) -> list[int]:
    """Competition ranks (1, 1, 3, ...) by rank score, in the given (sorted) order."""
    ranks: list[int] = []
    for i, m in enumerate(metrics):
        same = i and m["rank_score"] == metrics[i - 1]["rank_score"]
        ranks.append(ranks[-1] if same else i + 1)
    return ranks


def leaderboard_rows(metrics: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """Cells of the leaderboard (see :data:`HEADERS`), rows sorted by rank score; None → ``-``."""
    ms = sorted(metrics, key=lambda m: (-m["rank_score"], m["agent"]))
    return [[str(r), str(m["agent"])] + [f(m) for _, f in _COLUMNS] for r, m in zip(_ranks(ms), ms)]


def leaderboard_table(metrics: Sequence[Mapping[str, Any]], title: str | None = None):
    """A :class:`rich.table.Table` of the leaderboard."""
    table = Table(title=title, box=box.SIMPLE_HEAD)
    for h in HEADERS:
        table.add_column(h, justify="left" if h == "agent" else "right", no_wrap=True)
    for row in leaderboard_rows(metrics):
        table.add_row(*row)
    return table


def format_leaderboard(metrics: Sequence[Mapping[str, Any]], title: str | None = None) -> str:
    """The leaderboard as a plain-text table (no colours, no wrapping)."""
    buf = io.StringIO()
    console = Console(file=buf, width=10_000, color_system=None, force_terminal=False,
                      no_color=True, highlight=False, emoji=False, markup=False)
    console.print(leaderboard_table(metrics, title))
    lines = [line.rstrip() for line in buf.getvalue().splitlines()]
    return "\n".join(lines).strip("\n") + "\n"


def leaderboard_markdown(metrics: Sequence[Mapping[str, Any]]) -> str:
    """The leaderboard as a GitHub-flavoured markdown table."""
    def cell(s: str) -> str:
        return s.replace("\\", "\\\\").replace("|", "\\|")

    right = {h for h in HEADERS if h != "agent"}
    lines = ["| " + " | ".join(HEADERS) + " |",
             "|" + "|".join("---:" if h in right else "---" for h in HEADERS) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in leaderboard_rows(metrics)]
    return "\n".join(lines) + "\n"
