"""Report cells as numbers: :func:`parse_estimate` reads a cell that
:meth:`mas_agents.stats.Estimate.fmt` wrote (``"41.2 % [35.0, 47.9] (n=6)"``) back into
numbers, and :func:`numeric_columns` turns a report table into one with separate
``value / low / high / n`` columns, the form of a CSV download. Split from
:mod:`mas_agents.stats` (issue 51 item 6).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

__all__ = ["numeric_columns", "parse_estimate"]

_NUM = r"[+-]?\d+(?:\.\d+)?"
#: One cell as :meth:`mas_agents.stats.Estimate.fmt` writes it, with the variants the reports add: a unit after the
#: mean (``%``, ``points``, ``pt``), what ``n`` counts (``n=5 games``) and a trailing remark in
#: parentheses (``(includes 0)``).
_CELL = re.compile(
    rf"^(?P<mean>{_NUM})(?:\s*(?P<unit>%|[A-Za-z][A-Za-z ]*?))?\s*"
    rf"(?:\[(?P<low>{_NUM}), (?P<high>{_NUM})\]\s*\(n=(?P<n>\d+)(?: [A-Za-z ]+)?\)"
    r"|\[no interval, n=(?P<n1>\d+)(?: [A-Za-z ]+)?\]"
    r"|\(no interval\))"
    r"(?P<rest>(?:\s*\([^()]*\))*)\s*$")
_EMPTY = re.compile(r"^-\s*\(n=(?P<n>\d+)(?: [A-Za-z ]+)?\)$")


def _cell_parts(text: str) -> dict[str, str | None] | None:
    """The number texts of one estimate cell (``value``, ``low``, ``high``, ``n``, ``unit``), as
    printed; None if the cell is not one."""
    t = " ".join(str(text).split())
    m = _EMPTY.match(t)
    if m:
        return {"value": None, "low": None, "high": None, "n": m["n"], "unit": ""}
    m = _CELL.match(t)
    if not m:
        return None
    return {"value": m["mean"], "low": m["low"], "high": m["high"],
            "n": m["n"] if m["n"] is not None else m["n1"], "unit": (m["unit"] or "").strip()}


def parse_estimate(text: str) -> dict[str, Any] | None:
    """The numbers of one report cell written by :meth:`mas_agents.stats.Estimate.fmt`, or None if it is not one.

    ``"41.2 % [35.0, 47.9] (n=6)"`` -> ``{"value": 41.2, "low": 35.0, "high": 47.9, "n": 6,
    "unit": "%"}``; ``"57.1 [no interval, n=1]"`` -> low/high None, n 1; ``"- (n=0 votes)"`` ->
    value None, n 0; ``"50.0 (no interval)"`` -> n None. Numbers are on the cell's scale (percent
    stays percent); what ``n`` counts (``n=5 games``) and a trailing remark (``(includes 0)``) are
    dropped. A bare number, a word, or a cell holding several estimates returns None.
    """
    parts = _cell_parts(text)
    if parts is None:
        return None

    def num(x: str | None) -> float | None:
        return None if x is None else float(x)
    return {"value": num(parts["value"]), "low": num(parts["low"]), "high": num(parts["high"]),
            "n": None if parts["n"] is None else int(parts["n"]), "unit": parts["unit"]}


def _plain(x: str | None) -> str:
    """A number text for a CSV cell: ``""`` for None, no leading ``+``."""
    return "" if x is None else x.lstrip("+")


def numeric_columns(rows: Sequence[Sequence[str]]) -> list[list[str]]:
    """A report table (the header row first, then rows of cell texts) with every column that holds
    estimates split into four numeric columns: ``<name>``, ``<name> low``, ``<name> high`` and
    ``<name> n`` (the form ``/leaderboard.csv`` has), for a CSV download.

    A column is split when at least one of its cells is an estimate (:func:`parse_estimate`). In
    such a column, an estimate fills the four columns (empty where there is no interval or no
    ``n``); a bare number goes to ``<name>`` alone (e.g. a paper's value beside ours); ``-`` and an
    empty cell stay empty; any other text is kept in ``<name>`` as it is, so nothing the report says
    is lost. When every estimate of a column has the same unit, the value column is named
    ``<name> (<unit>)`` (e.g. ``Judgement (%)``). Other columns are copied unchanged. Numbers are
    written as the report printed them (percent stays percent).
    """
    rows = [list(map(str, r)) for r in rows]
    if not rows:
        return []
    header, body = rows[0], rows[1:]
    width = max(len(r) for r in rows)
    header = header + [""] * (width - len(header))
    body = [r + [""] * (width - len(r)) for r in body]
    out_header: list[str] = []
    out_body: list[list[str]] = [[] for _ in body]
    for j, name in enumerate(header):
        parsed = [_cell_parts(r[j]) for r in body]
        if not any(p is not None for p in parsed):
            out_header.append(name)
            for o, r in zip(out_body, body):
                o.append(r[j])
            continue
        units = {p["unit"] for p in parsed if p is not None and p["value"] is not None}
        unit = units.pop() if len(units) == 1 else ""
        out_header += [f"{name} ({unit})" if unit else name, f"{name} low", f"{name} high", f"{name} n"]
        for o, r, p in zip(out_body, body, parsed):
            if p is not None:
                o += [_plain(p["value"]), _plain(p["low"]), _plain(p["high"]), _plain(p["n"])]
                continue
            cell = r[j].strip()
            bare = cell.rstrip("%").strip()
            if re.fullmatch(_NUM, bare):
                o += [_plain(bare), "", "", ""]
            else:
                o += ["" if cell in ("-", "–") else cell, "", "", ""]
    return [out_header, *out_body]
