"""How ``mas rerun`` compares a re-executed run with the original (issue 50): ``events.jsonl``,
then ``result.json``, then the call records, each once what a re-execution cannot repeat is set
aside (:data:`CLOCK_KEYS`, :data:`CALL_CLOCK_FIELDS`; call ids compared by their pattern).
:func:`compare_runs` is the entry point (``mas rerun`` calls it)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mas_agents.call_log import read_calls
from mas_agents.events import read_events
from mas_agents.rundir import RunDir

__all__ = ["CLOCK_KEYS", "CALL_CLOCK_FIELDS", "EventDifference", "compare_runs", "first_event_difference",
           "first_field", "normal", "was_now"]

#: JSON keys whose values are clock readings or depend on the server's transient faults, not on
#: the game: left out of the comparison (WiS's per-move ``seconds``, call latency and start time,
#: wall time, retries of transient errors).
CLOCK_KEYS = frozenset({"seconds", "latency_s", "wall_time_s", "started_at", "retries"})


def normal(obj: Any, ids: dict[str, str]) -> Any:
    """``obj`` with :data:`CLOCK_KEYS` dropped and call ids replaced by their first-seen rank
    (``ids`` is filled as they are met, so two files compare by the pattern of their ids)."""
    if isinstance(obj, dict):
        return {k: normal(v, ids) for k, v in obj.items() if k not in CLOCK_KEYS}
    if isinstance(obj, list):
        return [normal(v, ids) for v in obj]
    if isinstance(obj, str) and len(obj) == 32 and obj.isalnum() and obj in ids:
        return ids[obj]
    return obj


def _ids(events: list[dict[str, Any]]) -> dict[str, str]:
    """Call id -> ``call#n`` in the order ``events`` first cite them (:func:`_collect_ids`)."""
    ids: dict[str, str] = {}
    _collect_ids(events, ids)
    return ids


def _collect_ids(events: list[dict], ids: dict[str, str]) -> None:
    for e in events:
        for cid in e.get("llm_call_ids") or ():
            ids.setdefault(cid, f"call#{len(ids)}")
        data = e.get("data") or {}
        for cid in data.get("call_ids") or () if isinstance(data, dict) else ():
            if isinstance(cid, str):
                ids.setdefault(cid, f"call#{len(ids)}")


def first_field(a: Any, b: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first (dotted) path where ``a`` and ``b`` differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}.{k}".lstrip("."), a.get(k, "(absent)"), b.get(k, "(absent)")
            d = first_field(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_field(x, y, f"{path}[{i}]")
            if d:
                return d
        if len(a) != len(b):
            return f"{path} (length)".lstrip("."), len(a), len(b)
        return None
    return None if a == b else (path.lstrip(".") or "(value)", a, b)


def was_now(a: Any, b: Any, n: int = 160) -> str:
    """``was A, now B`` for two values, each cut to ``n`` characters around the first character
    where their JSON texts part (so a long line shows where it changed)."""
    x, y = json.dumps(a, ensure_ascii=False, default=str), json.dumps(b, ensure_ascii=False, default=str)
    at = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))

    def cut(t: str) -> str:
        if len(t) <= n:
            return t
        start = max(0, min(at - n // 3, len(t) - n))
        return ("..." if start else "") + t[start:start + n] + ("..." if start + n < len(t) else "")
    return f"was {cut(x)}, now {cut(y)}"


@dataclass(frozen=True)
class EventDifference:
    """The first event where two runs' event lists part (:func:`first_event_difference`).

    Attributes:
        index: 0-based position in both lists (for a length difference: the shorter list's length,
            the first event only the longer one has).
        path: the dotted field of the first difference inside the event (``"(length)"``: one list
            ends there).
        a, b: that field's values in the first and second run (normalised: :func:`normal`); for
            a length difference, the two lengths.
        ids_a, ids_b: call id -> ``call#n``, the first-seen rank each run's events give its ids.
    """

    index: int
    path: str
    a: Any
    b: Any
    ids_a: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    ids_b: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def length(self) -> bool:
        """Whether one list ends here (every earlier event equal)."""
        return self.path == "(length)"


def first_event_difference(old_ev: list[dict[str, Any]], new_ev: list[dict[str, Any]]) -> EventDifference | None:
    """The first event of ``old_ev`` and ``new_ev`` (two runs' ``events.jsonl``) that differs once
    :data:`CLOCK_KEYS` are dropped and call ids are compared by their pattern (:func:`normal`);
    None when the lists are equal so."""
    ids_a, ids_b = _ids(old_ev), _ids(new_ev)
    for i, (x, y) in enumerate(zip(old_ev, new_ev)):
        nx, ny = normal(x, ids_a), normal(y, ids_b)
        if nx != ny:
            path, a, b = first_field(nx, ny) or ("?", x, y)
            return EventDifference(i, path, a, b, ids_a, ids_b)
    if len(old_ev) != len(new_ev):
        return EventDifference(min(len(old_ev), len(new_ev)), "(length)", len(old_ev), len(new_ev), ids_a, ids_b)
    return None


def compare_runs(original: Path, rerun_dir: Path) -> tuple[str, str]:
    """Compare ``events.jsonl`` then ``result.json`` of two run directories (see the module
    text); returns ``("identical", "")`` or ``(status, what differs)``.

    Raises:
        FileNotFoundError, ValueError: a file is missing or not JSON.
    """
    old_ev, new_ev = read_events(RunDir(original).events), read_events(RunDir(rerun_dir).events)
    d = first_event_difference(old_ev, new_ev)
    if d is not None and not d.length:
        x = old_ev[d.index]
        return "events", (f"event {d.index} ({x.get('kind')} by {x.get('actor')}, round {x.get('round')}): "
                          f"{d.path} {was_now(d.a, d.b)}")
    if d is not None:
        longer, which = (old_ev, "the run") if len(old_ev) > len(new_ev) else (new_ev, "the rerun")
        e = longer[d.index]
        return "events", (f"{len(old_ev)} events recorded, {len(new_ev)} now; {which}'s event {d.index} "
                          f"is {e.get('kind')} by {e.get('actor')}")
    ids_a, ids_b = _ids(old_ev), _ids(new_ev)
    old_res, new_res = RunDir(original).read_result(), RunDir(rerun_dir).read_result()
    r = first_field(normal(old_res, ids_a), normal(new_res, ids_b))
    if r:
        return "result", f"result.json {r[0]} {was_now(r[1], r[2])}"
    return _compare_calls(original, rerun_dir)


#: Fields of a call record that a re-execution cannot repeat (its id, its clock, the server's
#: transient faults): left out when the call logs are compared.
CALL_CLOCK_FIELDS = ("call_id", "latency_s", "started_at", "retries")


def _call_rows(d: Path) -> list[str]:
    rows = []
    for c in read_calls(RunDir(d).calls):
        rec = {k: v for k, v in c.to_dict().items() if k not in CALL_CLOCK_FIELDS}
        rows.append(json.dumps(rec, sort_keys=True, ensure_ascii=False, default=str))
    return sorted(rows)


def _compare_calls(original: Path, rerun_dir: Path) -> tuple[str, str]:
    """The accounting: the two call logs hold the same records (every field but
    :data:`CALL_CLOCK_FIELDS`, in any order)."""
    a, b = Counter(_call_rows(original)), Counter(_call_rows(rerun_dir))
    if a == b:
        return "identical", ""
    gone, extra = sorted((a - b).elements()), sorted((b - a).elements())
    what = []
    if gone:
        g = json.loads(gone[0])
        what.append(f"{len(gone)} recorded call record(s) not made again, e.g. {g.get('actor')} ({g.get('purpose')}): "
                    f"{was_now(g, json.loads(extra[0]) if extra else None)}")
    elif extra:
        x = json.loads(extra[0])
        what.append(f"{len(extra)} call record(s) not in the recording, e.g. {x.get('actor')} ({x.get('purpose')})")
    return "calls", "llm_calls.jsonl: " + "; ".join(what)
