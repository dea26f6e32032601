"""``mas diff RUN_A RUN_B``: where two runs of one game part, and why (issue 59 item 2).

:func:`diff_runs` compares two single-game run directories of the same run kind: a run and its
rerun (``mas rerun --out``), two runs of one configuration, or runs of other configurations or
seeds. It reports, in this order:

1. **the configuration** (``config.json``): every top-level field whose value differs, compared
   as a runner compares a stored configuration with the one asked
   (:func:`mas_agents.game.record.config_difference`, dotted to the first nested field that
   differs), leaving out what is no part of a configuration
   (:data:`mas_agents.game.record.NOT_CONFIGURATION`: versions, the command line, the
   ``--model`` default...) and :data:`RUN_NAMES` (the run's own name);
2. **the first event that differs** (``events.jsonl``), compared as ``mas rerun`` compares a
   rerun with its original (:func:`mas_agents.eval.rerun.compare.first_event_difference`: clock
   keys dropped, call ids compared by their pattern), and the **model calls that caused it**:
   the calls of the acting seat between the previous common event and this one (the calls the
   event cites, and the seat's other calls of ``llm_calls.jsonl`` after the last call an earlier
   event cites), paired between the runs by purpose, each with the diff of its first differing
   prompt message and of its completion (the prompt log, :func:`mas_agents.prompt_log.read_prompts`;
   the same unified diff ``mas rerun`` shows on a mismatch). When the first differing event is
   the game's own (a seed's draw: no model call made it), the first differing event a model call
   made is reported too, with its calls;
3. **the outcome** (``result.json``): the top-level fields that differ (clock keys and
   :data:`RUN_NAMES` left out), the outcome and winner first;
4. **per-seat metrics**: each run re-scored from its events by the game's own re-scorer
   (``GameDef.conformance.rescore``, found through the registry,
   :func:`mas_agents.game.contract.find`), the values that differ listed per seat (or per key);
   a game without a re-scorer (or a log it cannot read) falls back to ``result.json``'s per-seat
   fields (dicts keyed by the seats ``config.json``'s ``seat_models`` names, and ``scores``).

Games are reached only through the registry: this module names none.

Errors (:class:`DiffError`, one line naming the file): a path that is no run directory (no
``config.json``), a ``config.json`` without a run kind, runs of different kinds, a run without
``events.jsonl`` (a run of many cells: compare its games' directories).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mas_agents.call_log import LLMCall, read_calls
from mas_agents.events import read_events
from mas_agents.game.contract import find
from mas_agents.game.record import NOT_CONFIGURATION, config_difference
from mas_agents.prompt_log import read_prompts
from mas_agents.replayed_model import call_diff, first_difference
from mas_agents.rundir import RunDir, read_json
from mas_agents.eval.rerun.compare import EventDifference, first_event_difference, first_field, normal, was_now
from mas_agents.eval.rerun.rescore import MALFORMED

__all__ = ["RUN_NAMES", "DiffError", "CallPair", "EventReport", "Change", "RunDiff", "diff_runs"]

#: Fields of ``config.json`` and ``result.json`` that name the run (its directory), not what was
#: played: not compared.
RUN_NAMES = frozenset({"game_id"})
#: Characters of a value shown in a ``was A, now B`` line.
SHOWN = 120


class DiffError(ValueError):
    """Two paths that cannot be compared: the message is one line naming the file."""


@dataclass
class Change:
    """One value that differs between the runs.

    Attributes:
        field: where (a dotted ``config.json`` / ``result.json`` field, or a metric's name).
        a, b: the value in the first and the second run (``"(absent)"`` when a run has none).
        key: for a per-seat (or per-key) metric, the seat or key; None otherwise.
    """

    field: str
    a: Any
    b: Any
    key: str | None = None

    def text(self) -> str:
        where = f"{self.field}[{self.key}]" if self.key is not None else self.field
        return f"{where}: {was_now(self.a, self.b, SHOWN)}"


@dataclass
class CallPair:
    """A model call of the acting seat in each run (either may be None: only one run made it).

    Attributes:
        a, b: ``{"call_id", "actor", "purpose"}`` of the call in each run.
        message: 1-based index of the first prompt message that differs, and its role; None when
            the prompts are equal (or one call is missing or has no prompt record).
        prompt_diff: the unified diff of that message (A -> B); ``""`` when equal.
        completion_diff: the unified diff of the completions (A -> B); ``""`` when equal.
        note: why a diff is missing (a call only one run made, prompts not recorded).
    """

    a: dict[str, Any] | None
    b: dict[str, Any] | None
    message: str | None = None
    prompt_diff: str = ""
    completion_diff: str = ""
    note: str = ""


@dataclass
class EventReport:
    """The first differing event and the calls behind it.

    Attributes:
        index: its 0-based position in ``events.jsonl`` (every earlier event is equal).
        path: the dotted field of the first difference inside it (``"(length)"``: one run's
            events end there).
        a, b: that field's values (the event counts for a length difference).
        event_a, event_b: ``{"kind", "actor", "round"}`` of the event in each run (None: absent).
        calls: the acting seat's calls that made it, paired between the runs.
    """

    index: int
    path: str
    a: Any
    b: Any
    event_a: dict[str, Any] | None
    event_b: dict[str, Any] | None
    calls: list[CallPair] = field(default_factory=list)

    def head(self) -> str:
        """``event N (kind by actor, round R): field was A, now B``."""
        ea, eb = self.event_a or {}, self.event_b or {}

        def who(e: dict[str, Any]) -> str:
            return f"{e.get('kind')} by {e.get('actor')}"
        if self.path == "(length)":
            longer, which = (ea, "A") if ea else (eb, "B")
            return (f"A has {self.a} events, B has {self.b}: the first {self.index} are equal; only {which} has "
                    f"event {self.index} ({who(longer)}, round {longer.get('round')})")
        what = who(ea) if who(ea) == who(eb) else f"{who(ea)} in A, {who(eb)} in B"
        return f"event {self.index} ({what}, round {ea.get('round')}): {self.path} {was_now(self.a, self.b, SHOWN)}"


@dataclass
class RunDiff:
    """What :func:`diff_runs` found (see the module text).

    Attributes:
        run_a, run_b: the two run directories; kind: their run kind.
        config: the ``config.json`` fields that differ.
        event: the first differing event (None: the events are equal).
        model_event: when ``event`` is the game's own (no model call made it), the first
            differing event a model call made (None otherwise, or when there is none).
        result: the ``result.json`` top-level fields that differ.
        missing_result: the runs without ``result.json`` (``"A"``, ``"B"``: unfinished).
        metrics: the re-scored (or per-seat ``result.json``) values that differ.
        metrics_from: ``"rescore"`` (the game's re-scorer) or ``"result.json"``.
    """

    run_a: Path
    run_b: Path
    kind: str
    config: list[Change] = field(default_factory=list)
    event: EventReport | None = None
    model_event: EventReport | None = None
    result: list[Change] = field(default_factory=list)
    missing_result: list[str] = field(default_factory=list)
    metrics: list[Change] = field(default_factory=list)
    metrics_from: str = "rescore"

    @property
    def identical(self) -> bool:
        """Same configuration, events and ``result.json`` (what cannot repeat set aside)."""
        return not (self.config or self.event or self.result or self.missing_result)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (``mas diff --json``): the fields above and
        ``identical``; paths as strings."""
        out = asdict(self)
        out["run_a"], out["run_b"] = str(self.run_a), str(self.run_b)
        out["identical"] = self.identical
        plain: dict[str, Any] = json.loads(json.dumps(out, ensure_ascii=False, default=str))
        return plain

    def text(self) -> str:
        """The report as ``mas diff`` prints it (plain text, several lines)."""
        lines = [f"A: {self.run_a}", f"B: {self.run_b}"]
        if self.identical:
            lines.append(f"identical ({self.kind}: same configuration, events and result.json; clock keys and "
                         "call ids set aside)")
            return "\n".join(lines)
        if self.config:
            lines.append("the configurations differ (config.json):")
            lines += [f"  {c.text()}" for c in self.config]
        else:
            lines.append("same configuration (config.json)")
        if self.event is None:
            lines.append("events identical (events.jsonl)")
        else:
            lines.append(f"first difference (events.jsonl): {self.event.head()}")
            lines += _calls_text(self.event)
            if self.model_event is not None:
                lines.append(f"first difference a model call made: {self.model_event.head()}")
                lines += _calls_text(self.model_event)
        if self.missing_result:
            lines.append(f"no result.json in {' and '.join(self.missing_result)} (an unfinished run)")
        elif self.result:
            lines.append("outcome (result.json), the fields that differ:")
            lines += [f"  {c.text()}" for c in self.result]
        else:
            lines.append("result.json identical")
        if self.metrics:
            src = ("re-scored from events.jsonl by the game's rules" if self.metrics_from == "rescore"
                   else "result.json's per-seat fields")
            lines.append(f"per-seat metrics ({src}):")
            lines += [f"  {c.text()}" for c in self.metrics]
        return "\n".join(lines)


def _calls_text(ev: EventReport) -> list[str]:
    if not ev.calls:
        return ["  no model call made it (the game's own event: its rules or its seed's draw)"]
    out = ["  the model calls behind it (the acting seat's, since the previous common event):"]
    for p in ev.calls:
        a = f"{p.a['actor']} {p.a['purpose']} (call {p.a['call_id']})" if p.a else "none"
        b = f"{p.b['actor']} {p.b['purpose']} (call {p.b['call_id']})" if p.b else "none"
        out.append(f"  - A: {a}; B: {b}")
        if p.note:
            out.append(f"    {p.note}")
            continue
        out.append(f"    prompt: message {p.message} differs:" if p.message else "    prompt: the same")
        out += [f"      {x}" for x in p.prompt_diff.splitlines()]
        out.append("    completion differs:" if p.completion_diff else "    completion: the same")
        out += [f"      {x}" for x in p.completion_diff.splitlines()]
    return out


# ---------------------------------------------------------------------- reading the runs


@dataclass
class _Run:
    path: Path
    config: dict[str, Any]
    events: list[dict[str, Any]]
    result: dict[str, Any] | None
    calls: list[LLMCall] = field(default_factory=list)
    prompts: dict[str, Any] = field(default_factory=dict[str, Any])


def _load(path: Path) -> tuple[Path, dict[str, Any]]:
    rd = RunDir(Path(path))
    if not rd.config.is_file():
        what = "no such directory" if not rd.path.exists() else (
            "not a directory" if not rd.path.is_dir() else "no such file")
        raise DiffError(f"{rd.config}: {what}: {rd.path} is not a run directory")
    config = read_json(rd.config)
    if not isinstance(config, dict) or not isinstance(config.get("kind"), str):
        raise DiffError(f"{rd.config}: not a run's config.json (no run kind)")
    return rd.path, config


def _read(path: Path, config: dict[str, Any]) -> _Run:
    rd = RunDir(path)
    if not rd.events.is_file():
        raise DiffError(f"{rd.events}: no such file: {path} is no single game's run (a run of many cells: "
                        f"compare its games' directories)")
    result = rd.read_result() if rd.result.is_file() else None
    return _Run(path, config, read_events(rd.events), result if isinstance(result, dict) else None)


def _with_calls(r: _Run) -> _Run:
    r.calls = read_calls(RunDir(r.path).calls)
    r.prompts = read_prompts(r.path)
    return r


# ---------------------------------------------------------------------- the comparisons


def _config_changes(a: dict[str, Any], b: dict[str, Any]) -> list[Change]:
    """The top-level ``config.json`` fields that differ (A's order, then B's own)."""
    skip = NOT_CONFIGURATION | RUN_NAMES
    out = []
    for k in list(a) + [k for k in b if k not in a]:
        if k in skip:
            continue
        if k not in a or k not in b:
            out.append(Change(k, a.get(k, "(absent)"), b.get(k, "(absent)")))
            continue
        d = config_difference({k: a[k]}, {k: b[k]}, ignore=())
        if d:
            out.append(Change(d[0], d[1], d[2]))
    return out


def _result_changes(a: dict[str, Any], b: dict[str, Any]) -> list[Change]:
    """The top-level ``result.json`` fields that differ (clock keys, :data:`RUN_NAMES` left out),
    the outcome and winner fields first."""
    na, nb = normal(a, {}), normal(b, {})
    keys = [k for k in list(na) + [k for k in nb if k not in na] if k not in RUN_NAMES]
    keys.sort(key=lambda k: 0 if ("outcome" in k or "winner" in k) else 1)
    absent = "(absent)"
    return [Change(k, na.get(k, absent), nb.get(k, absent)) for k in keys if na.get(k, absent) != nb.get(k, absent)]


def _cited(e: dict[str, Any]) -> list[str]:
    """The call ids an event cites (``llm_call_ids`` and ``data.call_ids``)."""
    ids = [c for c in e.get("llm_call_ids") or () if isinstance(c, str)]
    data = e.get("data")
    if isinstance(data, dict):
        ids += [c for c in data.get("call_ids") or () if isinstance(c, str)]
    return ids


def _window(r: _Run, i: int) -> list[LLMCall]:
    """The calls behind event ``i`` of run ``r``: those it cites, and its actor's other calls of
    ``llm_calls.jsonl`` after the last call an earlier event cites (up to its own last call; for
    an event that cites none, up to the next call a later event cites)."""
    if i >= len(r.events):
        return []
    pos = {c.call_id: n for n, c in enumerate(r.calls)}
    start = max((pos[c] for e in r.events[:i] for c in _cited(e) if c in pos), default=-1)
    own = {c for c in _cited(r.events[i]) if c in pos}
    if own:
        end = max(pos[c] for c in own)
    else:
        later = [pos[c] for e in r.events[i + 1:] for c in _cited(e) if c in pos and pos[c] > start]
        end = min(later) - 1 if later else len(r.calls) - 1
    actor = r.events[i].get("actor")
    return [c for n, c in enumerate(r.calls)
            if c.call_id in own or (start < n <= end and c.actor == actor)]


def _pairs(ca: list[LLMCall], cb: list[LLMCall]) -> list[tuple[LLMCall | None, LLMCall | None]]:
    """``ca`` and ``cb`` paired: by purpose first (in order), the rest in order."""
    left = list(cb)
    out: list[tuple[LLMCall | None, LLMCall | None]] = []
    rest_a = []
    for c in ca:
        m = next((x for x in left if x.purpose == c.purpose), None)
        if m is None:
            rest_a.append(c)
            continue
        left.remove(m)
        out.append((c, m))
    for k in range(max(len(rest_a), len(left))):
        out.append((rest_a[k] if k < len(rest_a) else None, left[k] if k < len(left) else None))
    return out


def _labelled(diff: str, a: str, b: str) -> str:
    """A diff of :func:`mas_agents.replayed_model.call_diff` with its two header lines naming the runs."""
    lines = diff.splitlines()
    if len(lines) >= 2 and lines[0].startswith("---") and lines[1].startswith("+++"):
        lines[:2] = [f"--- A (call {a})", f"+++ B (call {b})"]
    return "\n".join(lines)


def _brief(c: LLMCall | None) -> dict[str, Any] | None:
    return None if c is None else {"call_id": c.call_id, "actor": c.actor, "purpose": c.purpose}


def _call_pair(ra: _Run, rb: _Run, a: LLMCall | None, b: LLMCall | None) -> CallPair:
    p = CallPair(_brief(a), _brief(b))
    if a is None or b is None:
        p.note = f"only {'A' if b is None else 'B'} made this call"
        return p
    pa, pb = ra.prompts.get(a.call_id), rb.prompts.get(b.call_id)
    if pa is None or pb is None:
        p.note = f"no prompt record in {'A' if pa is None else 'B'} (prompts not recorded: --no-record-prompts)"
        return p
    ma, mb = pa.get("messages") or [], pb.get("messages") or []
    i = first_difference(ma, mb)
    if i < max(len(ma), len(mb)):
        old, new = (ma[i] if i < len(ma) else None), (mb[i] if i < len(mb) else None)
        p.message = f"{i + 1} ({(new or old or {}).get('role', '?')})"
        p.prompt_diff = _labelled(call_diff(old, new, a.call_id), a.call_id, b.call_id)
    xa, xb = pa.get("completion"), pb.get("completion")
    if xa != xb:
        p.completion_diff = _labelled(
            call_diff({"role": "assistant", "content": xa if xa is not None else f"(failed: {pa.get('error')})"},
                  {"role": "assistant", "content": xb if xb is not None else f"(failed: {pb.get('error')})"},
                  a.call_id), a.call_id, b.call_id)
    return p


def _event_report(ra: _Run, rb: _Run, d: EventDifference) -> EventReport:
    def brief(ev: list[dict[str, Any]]) -> dict[str, Any] | None:
        if d.index >= len(ev):
            return None
        e = ev[d.index]
        return {"kind": e.get("kind"), "actor": e.get("actor"), "round": e.get("round")}
    rep = EventReport(d.index, d.path, d.a, d.b, brief(ra.events), brief(rb.events))
    rep.calls = [_call_pair(ra, rb, a, b) for a, b in _pairs(_window(ra, d.index), _window(rb, d.index))]
    return rep


def _model_event(ra: _Run, rb: _Run, d: EventDifference) -> EventDifference | None:
    """The first event from ``d.index`` on, in either run, that cites a model call, as a
    difference (its first differing field)."""
    for j in range(d.index, max(len(ra.events), len(rb.events))):
        x = ra.events[j] if j < len(ra.events) else None
        y = rb.events[j] if j < len(rb.events) else None
        if (x and _cited(x)) or (y and _cited(y)):
            if x is None or y is None:
                return EventDifference(j, "(length)", len(ra.events), len(rb.events))
            f = first_field(normal(x, d.ids_a), normal(y, d.ids_b)) or ("(value)", x, y)
            return EventDifference(j, f[0], f[1], f[2], d.ids_a, d.ids_b)
    return None


def _metric_changes(ra: _Run, rb: _Run, kind: str) -> tuple[list[Change], str]:
    """The re-scored values that differ, per seat or key, and where they came from."""
    from mas_agents.game.conformance import Violation
    game = find(kind)
    hook = game.conformance.rescore if game is not None and game.conformance is not None else None
    va = vb = None
    if hook is not None and ra.result is not None and rb.result is not None:
        try:
            va = {k: v[0] for k, v in hook(ra.config, ra.events, ra.result).items()}
            vb = {k: v[0] for k, v in hook(rb.config, rb.events, rb.result).items()}
        except (Violation, *MALFORMED):
            va = vb = None
    source = "rescore"
    if va is None or vb is None:
        source = "result.json"
        seats = set(ra.config.get("seat_models") or {}) | set(rb.config.get("seat_models") or {})

        def per_seat(res: dict[str, Any] | None) -> dict[str, Any]:
            return {k: v for k, v in (res or {}).items() if isinstance(v, dict) and v and
                    (k == "scores" or (seats and set(v) <= seats))}
        va, vb = per_seat(ra.result), per_seat(rb.result)
    seats = {str(k) for r in (ra, rb) for k in (r.config.get("seat_models") or {})}
    out: list[Change] = []
    for name in list(va) + [k for k in vb if k not in va]:
        _leaves(name, normal(va.get(name, "(absent)"), {}), normal(vb.get(name, "(absent)"), {}), seats, out)
    return out, source


def _leaves(name: str, x: Any, y: Any, seats: set[str], out: list[Change]) -> None:
    """Append to ``out`` where ``x`` and ``y`` differ: per seat when a dict[str, Any] is keyed by seats,
    per dotted key inside other dicts, the whole value otherwise (a list)."""
    if x == y:
        return
    if not (isinstance(x, dict) and isinstance(y, dict)):
        out.append(Change(name, x, y))
        return
    for k in list(x) + [k for k in y if k not in x]:
        a, b = x.get(k, "(absent)"), y.get(k, "(absent)")
        if a == b:
            continue
        if str(k) in seats:
            out.append(Change(name, a, b, key=str(k)))
        else:
            _leaves(f"{name}.{k}", a, b, seats, out)


def diff_runs(run_a: Path, run_b: Path) -> RunDiff:
    """Compare two runs of one game (see the module text).

    Args:
        run_a, run_b: two single-game run directories of the same run kind.

    Returns:
        The :class:`RunDiff`; :attr:`RunDiff.identical` when nothing differs.

    Raises:
        DiffError: a path that is no run directory, runs of different kinds, a missing
            ``events.jsonl`` (the message names the file).
        ValueError: a corrupt ``config.json``, ``events.jsonl``, ``result.json``, call or prompt
            log (the message names the file and line).
    """
    pa, ca = _load(Path(run_a))
    pb, cb = _load(Path(run_b))
    if ca["kind"] != cb["kind"]:
        raise DiffError(f"{RunDir(pb).config}: a {cb['kind']!r} run, but {RunDir(pa).config} is a {ca['kind']!r} "
                        f"run: runs of different kinds cannot be compared")
    ra, rb = _read(pa, ca), _read(pb, cb)
    out = RunDiff(pa, pb, ca["kind"], config=_config_changes(ca, cb))
    d = first_event_difference(ra.events, rb.events)
    if d is not None:
        _with_calls(ra)
        _with_calls(rb)
        out.event = _event_report(ra, rb, d)
        if not out.event.calls:
            m = _model_event(ra, rb, d)
            if m is not None and m.index != d.index:
                out.model_event = _event_report(ra, rb, m)
    out.missing_result = [w for w, r in (("A", ra), ("B", rb)) if r.result is None]
    if ra.result is not None and rb.result is not None:
        out.result = _result_changes(ra.result, rb.result)
    if out.result or d is not None:
        out.metrics, out.metrics_from = _metric_changes(ra, rb, ca["kind"])
    return out

