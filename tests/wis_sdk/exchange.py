"""Exchanges (request + reply records) and the recorded fixtures of ``tests/data/wis_sdk/``.

An *exchange* is a list of ``{"path", "request", "http_status", "response"}`` dicts, as logged
by :mod:`tests.wis_sdk.sdk_agent` (one list per SDK agent) and returned by
:mod:`tests.wis_sdk.platform_judge`; entries of a whole table carry ``"seat"`` too.

:func:`shape` reduces an entry to what the protocol fixes, leaving out what a model or a wording
change may vary: the route, ``status``, ``name``, ``round``, ``word``, and the ``message`` /
``result`` reduced by :func:`message_shape` (player names and comma-joined name lists are kept
as they are, a "Players:" line too; any other text is ``"<text>"``; a missing field or ``null``
is ``None``, distinct from ``""``), and the reply's ``success``.

A fixture file is JSON lines: first ``{"fixture": "wis-sdk", "kind": ..., "meta": {...}}``, then
one entry a line. :func:`check_or_record` writes it when ``MAS_UPDATE_FIXTURES=1`` (call it only
after the run passed its own checks, so a broken run is never recorded) and otherwise compares
the shapes with the stored ones.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "data" / "wis_sdk"
UPDATE_ENV = "MAS_UPDATE_FIXTURES"
TEXT = "<text>"
_PLAYERS_LINE = re.compile(r"^(Players:\s*|玩家[:：]\s*)(.*)$", re.DOTALL)


def updating() -> bool:
    """Whether this run records fixtures (``MAS_UPDATE_FIXTURES=1``)."""
    return os.environ.get(UPDATE_ENV, "") == "1"


def message_shape(text: Any, names: Iterable[str]) -> Any:
    """``text`` with free text replaced by ``"<text>"``; names, name lists, "Players:" lines kept.

    A list must be joined with a bare ``","`` to count as names: the SDK's example agent splits on
    ``","`` without stripping, so ``"Player 1, Player 2"`` is free text to it (and here).
    """
    if text is None or text == "":
        return text
    if not isinstance(text, str):
        return f"<{type(text).__name__}>"
    names = set(names)
    if text in names or all(piece in names for piece in text.split(",")):
        return text
    m = _PLAYERS_LINE.match(text)
    if m and all(p.strip() in names for p in m.group(2).split(",")):
        return text
    return TEXT


def shape(entry: dict, names: Iterable[str]) -> dict:
    """The protocol shape of one exchange entry (see the module docstring)."""
    names = list(names)
    req = entry.get("request")
    resp = entry.get("response")
    out: dict[str, Any] = {"path": entry.get("path")}
    if "seat" in entry:
        out["seat"] = entry["seat"]
    if isinstance(req, dict):
        for key in ("status", "name", "round", "word"):
            out[key] = req.get(key)
        out["message"] = message_shape(req.get("message"), names)
    else:
        out["request"] = TEXT
    out["http_status"] = entry.get("http_status")
    if isinstance(resp, dict):
        out["success"] = resp.get("success")
        out["result"] = message_shape(resp.get("result"), names)
    else:
        out["response"] = TEXT
    return out


def shapes(entries: Iterable[dict], names: Iterable[str]) -> list[dict]:
    names = list(names)
    return [shape(e, names) for e in entries]


def first_difference(actual: list[dict], expected: list[dict]) -> str | None:
    """A one-paragraph description of where two shape lists first differ, or None."""
    for i, (a, e) in enumerate(zip(actual, expected)):
        if a != e:
            keys = sorted(k for k in set(a) | set(e) if a.get(k) != e.get(k))
            return (f"entry {i} differs in {', '.join(keys)}:\n  now:      {json.dumps(a, ensure_ascii=False)}\n"
                    f"  recorded: {json.dumps(e, ensure_ascii=False)}")
    if len(actual) != len(expected):
        longer, which = (actual, "now") if len(actual) > len(expected) else (expected, "recorded")
        n = min(len(actual), len(expected))
        return (f"{len(actual)} entries now, {len(expected)} recorded; the first extra one ({which}): "
                f"{json.dumps(longer[n], ensure_ascii=False)}")
    return None


def fixture_path(name: str) -> Path:
    return FIXTURES / f"{name}.jsonl"


def write_fixture(name: str, kind: str, meta: dict, entries: Iterable[dict]) -> Path:
    """Write ``tests/data/wis_sdk/<name>.jsonl`` (header line, then one entry a line)."""
    path = fixture_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"fixture": "wis-sdk", "kind": kind, "meta": meta}, ensure_ascii=False)]
    lines += [json.dumps(e, ensure_ascii=False) for e in entries]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_fixture(name: str) -> tuple[str, dict, list[dict]]:
    """``(kind, meta, entries)`` of a stored fixture.

    Raises:
        FileNotFoundError: not recorded yet (the message says how to record it).
    """
    path = fixture_path(name)
    if not path.exists():
        raise FileNotFoundError(f"{path.relative_to(REPO)} is not recorded: run "
                                f"`{UPDATE_ENV}=1 .venv/bin/python -m pytest -m integration "
                                f"tests/graphs/test_wis_sdk_contract.py` (needs the package registry once)")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    head, entries = rows[0], rows[1:]
    if head.get("fixture") != "wis-sdk":
        raise ValueError(f"{path}: not a wis-sdk fixture (first line {head!r})")
    return head["kind"], head["meta"], entries


def check_or_record(name: str, kind: str, meta: dict, entries: list[dict], names: Iterable[str]) -> str | None:
    """Record the fixture (``MAS_UPDATE_FIXTURES=1``), or compare shapes with the stored one.

    Returns:
        None when recorded or equal, else the :func:`first_difference` text (or the reason the
        fixture cannot be read).
    """
    names = list(names)
    if updating():
        write_fixture(name, kind, meta, entries)
        return None
    try:
        stored_kind, _meta, stored = read_fixture(name)
    except FileNotFoundError as exc:
        return str(exc)
    if stored_kind != kind:
        return f"fixture {name} is a {stored_kind!r} fixture, not {kind!r}"
    diff = first_difference(shapes(entries, names), shapes(stored, names))
    return None if diff is None else f"fixture {name}: {diff}"


def by_seat(entries: Iterable[dict]) -> dict[str, list[dict]]:
    """A table's entries grouped by ``seat``, each seat's order kept."""
    out: dict[str, list[dict]] = {}
    for e in entries:
        out.setdefault(e["seat"], []).append(e)
    return out
