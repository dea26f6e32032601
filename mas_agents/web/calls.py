"""The call viewer (``/calls/RUN``, ``/calls/RUN/CALL_ID``) and the WellPlay evaluation view
(``/eval/RUN``): what a run's model calls saw and said, filtered, searched and paged on the server
(query parameters, so every page works without JavaScript under the CSP).

Sources: ``llm_calls.jsonl`` (one line per call, :class:`mas_agents.call_log.LLMCall`), the prompt
log ``llm_prompts.jsonl(.gz)`` (:data:`mas_agents.prompt_log.PROMPTS_FORMAT`, read with
:func:`mas_agents.prompt_log.read_prompts`; absent for older runs and ``--no-record-prompts``),
``events.jsonl`` (each event's ``llm_call_ids``) and, for an evaluation, ``answers.jsonl`` (one
record per answered question, :func:`mas_agents.eval.wellplay.evaluate.evaluate_character`) with
``result.json``.

Nothing here marks text safe: the templates escape every field (prompts hold what agents wrote).
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from mas_agents.eval.wellplay.evaluate import CATEGORIES, chance_lines, score_with_interval
from mas_agents.prompt_log import prompt_paths, read_prompts
from mas_agents.web import replay_rows as rp
from mas_agents.rundir import RunDir

#: Calls per page of the call list; questions per page of the evaluation view.
CALLS_PER_PAGE = 100
QUESTIONS_PER_PAGE = 50
#: Metadata columns the call list may show (after the call and its status), as ``llm_calls.jsonl``
#: names them; a column empty on every call of the run is left out.
META_COLUMNS = ("actor", "purpose", "phase", "model", "input_tokens", "output_tokens", "cached_tokens",
                "max_tokens", "latency_s", "retries", "finish_reason")
LETTERS = "abcdefgh"


def _empty(v: Any) -> bool:
    return v is None or v == "" or v == [] or v == {}


def purpose_base(purpose: Any) -> str:
    """A call's purpose without its attempt suffix (``mcq#1`` -> ``mcq``)."""
    return str(purpose or "").split("#", 1)[0]


@dataclass
class CallLog:
    """A run's calls with what is known of each.

    Attributes:
        calls: the ``llm_calls.jsonl`` lines, in order. totals: :func:`replay.load_calls` totals.
        prompts: ``{call_id: merged prompt record}`` ({} without a prompt log).
        recorded: the run has a prompt log. problem: why the prompt log could not be read, or "".
        cited: ``{call_id: [event, ...]}`` of the events that name the call in ``llm_call_ids``.
        followed_by: ``{call_id: [call_id of a re-prompt of it, ...]}`` (``reprompt_of`` reversed).
        short: ``{call_id: the part that tells it apart}`` (:func:`short_ids`), what the pages show.
    """

    calls: list[dict[str, Any]]
    totals: dict[str, Any]
    prompts: dict[str, dict[str, Any]]
    recorded: bool
    problem: str = ""
    cited: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    followed_by: dict[str, list[str]] = field(default_factory=dict)
    short: dict[str, str] = field(default_factory=dict)

    def label(self, call_id: Any) -> str:
        """The short form of ``call_id`` (:attr:`short`; the id itself when the log lacks it, "?"
        for none)."""
        return self.short.get(str(call_id), str(call_id)) if call_id else "?"

    def status(self, c: dict[str, Any]) -> tuple[bool, str]:
        """``(failed, text)``: ``(False, "✓")``, or ``(True, "failed: <error>")`` for a call that
        raised, ``(True, "unreadable: <parse error>")`` for a reply the parser rejected."""
        if c.get("ok") is False:
            return True, f"failed: {c.get('error') or 'no reason recorded'}"
        pe = (self.prompts.get(str(c.get("call_id"))) or {}).get("parse_error")
        if pe:
            return True, f"unreadable: {pe}"
        return False, "✓"

    def text_of(self, call_id: str) -> str:
        """Everything searchable of a call: its messages, completion, rendered text, parsed value,
        errors (lower case)."""
        r = self.prompts.get(call_id) or {}
        parts = [str(m.get("content") or "") for m in r.get("messages") or [] if isinstance(m, dict)]
        parts += [str(r.get(k) or "") for k in ("completion", "rendered", "parse_error", "error")]
        if r.get("parsed") is not None:
            parts.append(json.dumps(r["parsed"], ensure_ascii=False))
        return "\n".join(parts).lower()


def load_log(d: Path) -> CallLog:
    """The :class:`CallLog` of run directory ``d`` (missing files give empty parts)."""
    calls, tot = rp.load_calls(RunDir(d).calls)
    recorded = any(p.exists() for p in prompt_paths(RunDir(d).calls))
    prompts, problem = {}, ""
    if recorded:
        try:
            prompts = _prompts_cached(d, _stamp(prompt_paths(RunDir(d).calls)))
        except ValueError as exc:
            problem = str(exc)
    cited: dict[str, list[dict[str, Any]]] = {}
    for e in rp.load_events(RunDir(d).events):
        for cid in e.get("llm_call_ids") or []:
            cited.setdefault(str(cid), []).append(e)
    followed: dict[str, list[str]] = {}
    for cid, r in prompts.items():
        if r.get("reprompt_of"):
            followed.setdefault(str(r["reprompt_of"]), []).append(cid)
    short = short_ids([str(c.get("call_id")) for c in calls if c.get("call_id")])
    return CallLog(calls, tot, prompts, recorded, problem, cited, followed, short)


def _stamp(paths) -> tuple:
    """What tells that files changed: their (size, mtime) (None for a missing one)."""
    out = []
    for p in paths:
        try:
            st = Path(p).stat()
            out.append((st.st_size, st.st_mtime_ns))
        except OSError:
            out.append(None)
    return tuple(out)


@functools.lru_cache(maxsize=4)
def _prompts_cached(d: Path, stamp: tuple) -> dict[str, dict[str, Any]]:
    """:func:`read_prompts` of ``d``, kept while its files are unchanged (``stamp``): a whole
    evaluation's log is megabytes of gzip, and paging or filtering re-reads it."""
    return read_prompts(d)


#: The fewest characters a shortened call id shows of each part it keeps.
SHORT_MIN = 4


def short_ids(ids: list[str]) -> dict[str, str]:
    """``{call_id: the part of it that tells it apart from the run's other calls}``.

    A call id of :func:`mas_agents.call_log.new_call_id` is 16 hex digits drawn once per process
    and a 16-digit hex counter, so every call of one game shares its first 16 digits: the first 8
    alone are the same on every row (issue 46 item 8). Such ids (32 hex digits) are shown as
    ``…`` and the counter's last digits, as many as the run's highest counter needs (at least
    :data:`SHORT_MIN`: ``…001f``); when the run's calls came from several processes (a resumed game),
    the fewest leading digits (at least :data:`SHORT_MIN`) that tell the processes apart come first
    (``3fa2…001f``). Any other id (e.g. a uuid4 of an older run) is shown by its shortest prefix of
    8 characters or more that no other id of the run shares. Every value is unique when the ids are.

    Args:
        ids: the run's call ids (duplicates are fine).
    Returns:
        a dict with one entry per distinct id; an id that cannot be shortened maps to itself.
    """
    distinct = list(dict.fromkeys(str(i) for i in ids))
    hexid = re.compile(r"[0-9a-f]{32}")
    if distinct and all(hexid.fullmatch(i) for i in distinct):
        heads = sorted({i[:16] for i in distinct})
        width = max(SHORT_MIN, max(len(f"{int(i[16:], 16):x}") for i in distinct))
        k = 0
        if len(heads) > 1:
            k = next(n for n in range(SHORT_MIN, 17) if len({h[:n] for h in heads}) == len(heads))
        return {i: f"{i[:k]}…{i[32 - width:]}" for i in distinct}
    # the shortest unique prefix: one more character than the longest prefix shared with a
    # neighbour in sorted order
    order = sorted(distinct)
    out: dict[str, str] = {}
    for n, i in enumerate(order):
        shared = max((len(os.path.commonprefix([i, order[m]])) for m in (n - 1, n + 1) if 0 <= m < len(order)),
                     default=0)
        out[i] = i[:max(8, shared + 1)]
    return out


def columns(calls: list[dict[str, Any]]) -> list[str]:
    """The :data:`META_COLUMNS` not empty on every call."""
    return [c for c in META_COLUMNS if any(not _empty(x.get(c)) for x in calls)]


def choices(calls: list[dict[str, Any]], key: str) -> list[str]:
    """The distinct values of ``key`` (purposes without their ``#n``), in first-seen order."""
    get = (lambda c: purpose_base(c.get(key))) if key == "purpose" else (lambda c: str(c.get(key) or ""))
    return [v for v in dict.fromkeys(get(c) for c in calls) if v]


def filter_calls(log: CallLog, *, actor: str = "", phase: str = "", purpose: str = "", failed: bool = False,
                 q: str = "") -> list[dict[str, Any]]:
    """The calls matching every given filter: ``actor``/``phase`` exactly, ``purpose`` with or
    without its ``#n``, ``failed`` (:meth:`CallLog.status`), ``q`` a case-insensitive substring of
    the call's prompt and completion (:meth:`CallLog.text_of`) or of its actor, purpose or error."""
    needle = q.strip().lower()
    out = []
    for c in log.calls:
        cid = str(c.get("call_id"))
        if actor and str(c.get("actor") or "") != actor:
            continue
        if phase and str(c.get("phase") or "") != phase:
            continue
        if purpose and purpose not in (str(c.get("purpose") or ""), purpose_base(c.get("purpose"))):
            continue
        if failed and not log.status(c)[0]:
            continue
        if needle:
            meta = " ".join(str(c.get(k) or "") for k in ("call_id", "actor", "purpose", "error")).lower()
            if needle not in meta and needle not in log.text_of(cid):
                continue
        out.append(c)
    return out


def paginate(items: list[Any], page: int, per: int) -> tuple[list[Any], int, int]:
    """``(items of page, page, pages)`` with ``page`` clamped to ``1..pages`` (pages >= 1)."""
    pages = max(1, math.ceil(len(items) / per))
    page = min(max(1, page), pages)
    return items[(page - 1) * per:page * per], page, pages


def pretty(value: Any) -> str:
    """``value`` as indented JSON text (strings as they are)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=1, default=str)


# -- the WellPlay evaluation view ---------------------------------------------------------------

@dataclass
class Question:
    """One answered question as the evaluation view shows it.

    Attributes:
        n: its position in ``answers.jsonl`` (1-based). record: the ``answers.jsonl`` record.
        options: ``[(shown letter, text or "", is a key letter, was chosen)]`` in the order the
            model saw them (``record["perm"]``); texts are "" when neither the dataset nor the
            prompt gives them.
        key_shown, chosen_shown: letters as shown to the model. outcome: right, wrong, abstained.
        call_id: the call whose reply was scored (the last of ``call_ids``), or "".
        source: where the option texts came from (``dataset``, ``prompt`` or ``""``).
    """

    n: int
    record: dict[str, Any]
    options: list[tuple[str, str, bool, bool]]
    key_shown: list[str]
    chosen_shown: list[str]
    outcome: str
    call_id: str
    source: str


def shown_key(perm: list[int], key: list[str]) -> list[str]:
    """The key letters (upstream order) as the model saw them after ``perm``
    (``shown[i] = upstream[perm[i]]``, as :func:`mas_agents.eval.wellplay.metrics.shuffled_view` maps them)."""
    return [LETTERS[i] for i, j in enumerate(perm) if LETTERS[j] in set(key)]


_OPTION_LINE = re.compile(r"^([a-h])\) (.*)$", re.MULTILINE)


def options_from_prompt(prompt: dict[str, Any] | None) -> list[str]:
    """The option texts of an ``mcq`` call as its last user message listed them (``a) ...``)."""
    msgs = [m for m in (prompt or {}).get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    if not msgs:
        return []
    # the first user message: a re-prompt's last one asks again without the options
    found = _OPTION_LINE.findall(str(msgs[0].get("content") or ""))
    return [t for _, t in found] if [x for x, _ in found] == list(LETTERS[:len(found)]) else []


def dataset_options(data_root: Path | None, scripts: list[str], lang: str,
                    load: Callable[[Path, str, str], Any] | None) -> dict[str, list[str]]:
    """``{qid: upstream option texts}`` of the evaluation's scripts, each read by ``load``
    (its experiment's :attr:`mas_agents.game.experiments.ExperimentDef.script`); {} without the
    datasets or without ``load``."""
    if data_root is None or load is None:
        return {}
    return _dataset_options(load, Path(data_root), tuple(scripts), lang)


@functools.lru_cache(maxsize=8)
def _dataset_options(load: Callable[[Path, str, str], Any], data_root: Path, scripts: tuple[str, ...],
                     lang: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name in scripts:
        try:
            sc = load(data_root, name, lang)
        except Exception:   # DataError, a script of another dataset version: the prompt is used instead
            continue
        for qs in sc.questions.values():
            for q in qs:
                out[q.qid] = list(q.options)
    return out


def questions(records: list[dict[str, Any]], texts: dict[str, list[str]],
              prompts: dict[str, dict[str, Any]]) -> list[Question]:
    """The :class:`Question` of every record, options in the order shown."""
    out = []
    for i, r in enumerate(records, 1):
        perm = [int(x) for x in r.get("perm") or []]
        key = [str(k) for k in r.get("key") or []]
        ks = shown_key(perm, key)
        chosen = [str(x) for x in r.get("chosen_shown") or []]
        ids = [str(x) for x in r.get("call_ids") or []]
        cid = ids[-1] if ids else ""
        upstream = texts.get(str(r.get("qid")))
        if upstream and len(upstream) == len(perm):
            shown, source = [upstream[j] for j in perm], "dataset"
        else:
            shown = options_from_prompt(prompts.get(ids[0]) if ids else None)
            source = "prompt" if shown and len(shown) == len(perm) else ""
            if not source:
                shown = [""] * len(perm)
        opts = [(LETTERS[k], shown[k], LETTERS[k] in ks, LETTERS[k] in chosen) for k in range(len(perm))]
        outcome = "abstained" if r.get("abstained") else ("right" if r.get("correct") else "wrong")
        out.append(Question(i, r, opts, ks, chosen, outcome, cid, source))
    return out


def filter_questions(qs: list[Question], *, category: str = "", character: str = "", outcome: str = "",
                     q: str = "") -> list[Question]:
    """The questions matching every filter; ``q``: a case-insensitive substring of the question or
    one of its options."""
    needle = q.strip().lower()
    out = []
    for x in qs:
        r = x.record
        if category and r.get("category") != category:
            continue
        if character and r.get("character") != character:
            continue
        if outcome and x.outcome != outcome and not (outcome == "wrong" and x.outcome == "abstained"):
            continue
        if needle and needle not in (str(r.get("question") or "") + "\n" + "\n".join(t for _, t, _, _ in x.options)).lower():
            continue
        out.append(x)
    return out


def totals(qs: list[Question], result: dict[str, Any]) -> dict[str, Any]:
    """The numbers at the top of the evaluation view.

    Returns ``{"categories": [{category, n, right, wrong, abstained, accuracy, always_a, random}],
    "answerers": [(name, weighted score text with its interval, {category: accuracy})],
    "note": the report's sentence on the interval and the baselines}``: counts from
    ``answers.jsonl`` (every run), accuracies and intervals exactly as ``result.json`` holds
    them (the 95 % bootstrap interval of the weighted score over questions, and the ``always_a`` /
    ``random`` rows of the report)."""
    chance = result.get("chance") or {}
    cats = []
    for c in CATEGORIES:
        mine = [x for x in qs if x.record.get("category") == c]
        cats.append({"category": c, "n": len(mine), "right": sum(x.outcome == "right" for x in mine),
                     "wrong": sum(x.outcome == "wrong" for x in mine),
                     "abstained": sum(x.outcome == "abstained" for x in mine),
                     "accuracy": (result.get("accuracy") or {}).get(c),
                     **{m: ((chance.get(m) or {}).get("accuracy") or {}).get(c) for m in ("always_a", "random")}})
    answerers = []
    if "weighted_score" in result:
        answerers.append((f"{result.get('method', '?')} (this run)",
                          score_with_interval(result["weighted_score"], result.get("interval")),
                          result.get("accuracy") or {}))
    for m, ch in chance.items():
        answerers.append((m, score_with_interval(ch.get("weighted_score"), ch.get("interval")), ch.get("accuracy") or {}))
    note = ""
    try:
        lines = chance_lines(result)
        note = lines[-1].replace("`", "") if lines else ""
    except (KeyError, TypeError):
        pass
    return {"categories": cats, "answerers": answerers, "note": note}
