"""The call log: one :class:`LLMCall` record per logical model call, appended by a
:class:`CallRecorder` to ``<run_dir>/llm_calls.jsonl`` (with the call's prompt record to the prompt
log, :mod:`mas_agents.prompt_log`), read back by :func:`read_calls` and summed by
:func:`call_totals`. Split from :mod:`mas_agents.accounting` (issue 51 item 6); callers import
these names from here; :class:`mas_agents.accounting.AccountedModel` makes the records.
"""

from __future__ import annotations

import dataclasses
import gzip
import itertools
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from mas_agents import appender, jsonl
from mas_agents.prompt_log import _json_default, prompt_paths, record_prompts
from mas_agents.rundir import read_jsonl

__all__ = ["CallRecorder", "LLMCall", "call_totals", "new_call_id", "read_calls"]

_CALL_ID_PREFIX = os.urandom(8).hex()
_CALL_IDS = itertools.count()


def _new_id_prefix() -> None:
    global _CALL_ID_PREFIX, _CALL_IDS
    _CALL_ID_PREFIX, _CALL_IDS = os.urandom(8).hex(), itertools.count()


os.register_at_fork(after_in_child=_new_id_prefix)


def new_call_id() -> str:
    """A new call id: 32 hex characters, 16 drawn at random once per process (again in a forked
    child) and a 16-digit counter, so ids are unique within a process, in the order calls start,
    and distinct across processes but with probability ~2^-64 per pair.

    Not ``uuid4``: its ``os.urandom`` is a system call that releases the interpreter lock, one
    more point per call where another of the process's many game threads takes over.
    """
    return f"{_CALL_ID_PREFIX}{next(_CALL_IDS):016x}"


@dataclass
class LLMCall:
    """One logical LLM call (all its retries together), as written to ``llm_calls.jsonl``.

    Attributes:
        call_id: unique id (32 hex chars, :func:`new_call_id`) that game events cite to link an action
            to its call.
        actor: who asked (a player name, ``"judge"``, ...).
        purpose: why (e.g. ``"vote#1"``); free text chosen by the caller.
        model: printable model label (see :func:`mas_agents.model_specs.model_label`).
        input_tokens / output_tokens: from ``AIMessage.usage_metadata``; ``None`` when the model
            reports no usage or the call failed.
        latency_s: wall-clock seconds from the first attempt to the end of the last one, including
            retry backoff sleeps (what the caller waited).
        retries: number of attempts after the first (0 = first attempt succeeded or failed for good).
        ok: whether a reply was obtained.
        error: ``"ExceptionType: message"`` of the last error when ``ok`` is False, else ``None``.
        started_at: ISO-8601 UTC timestamp of the first attempt, millisecond precision.
        prompt_chars: total characters of the text content of the prompt messages.
        output_chars: characters of the reply text (0 on failure).
        phase: ``"gameplay"``, ``"evaluation"``, ... (set by the caller / :class:`mas_agents.accounting.AccountedModel`).
        cached_tokens: prompt tokens the server reused from its prefix cache
            (``usage.prompt_tokens_details.cached_tokens``, langchain's ``input_token_details.cache_read``;
            the local model reports its KV-cache reuse); ``None`` when not reported.
        max_tokens: the reply cap this call was sent with (after fitting to the context window).
        finish_reason: ``"stop"``, ``"length"`` (the cap cut the reply), ... as the model reported it.
        structured: how the reply format was enforced: ``"grammar"`` (local GBNF), ``"gbnf"``,
            ``"vllm"``, ``"sglang"``, ``"json"`` or ``"prompt"`` (remote dialects), ``None`` for other models.
    """

    call_id: str
    actor: str
    purpose: str
    model: str
    input_tokens: int | None
    output_tokens: int | None
    latency_s: float
    retries: int
    ok: bool
    error: str | None
    started_at: str
    prompt_chars: int
    output_chars: int
    phase: str = "gameplay"
    cached_tokens: int | None = None
    max_tokens: int | None = None
    finish_reason: str | None = None
    structured: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The record as a JSON-ready dict (field name -> value, in field order; every field is a
        plain value, so this equals ``dataclasses.asdict`` at a fifth of its cost)."""
        return {name: getattr(self, name) for name in _CALL_FIELDS}


_CALL_FIELDS = tuple(f.name for f in dataclasses.fields(LLMCall))
_TOTAL_KEYS = ("calls", "input_tokens", "output_tokens", "cached_tokens", "latency_s", "retries", "failures")


class CallRecorder:
    """Appends one JSON line per call to ``<run_dir>/llm_calls.jsonl`` and keeps running totals.

    Thread-safe: concurrent LangGraph nodes may record at the same time; each line is queued under
    one lock to the process's writer thread (:mod:`mas_agents.appender`), which appends it in
    order, so lines never interleave, and a stopped run (Ctrl-C, an error) keeps every record
    made so far (the queue is written at exit); :meth:`flush` waits until the lines are on disk,
    and :meth:`close` and :func:`read_calls` / :func:`mas_agents.prompt_log.read_prompts` do so first. The file is
    extended, never truncated. The file (and its directory) is created at once, so a run that
    made no call still has an (empty) ``llm_calls.jsonl``.

    With prompt recording on (the process-wide switch, :func:`set_record_prompts`, when the
    recorder is created) and a ``path``, the prompt records (:data:`mas_agents.prompt_log.PROMPTS_FORMAT`) go, under the
    same lock, to ``llm_prompts.jsonl`` beside it; :meth:`close` compresses them into
    ``llm_prompts.jsonl.gz``. Without a ``path`` nothing of the prompts is kept.

    Args:
        path: the JSONL file, or ``None`` to keep records in memory only.
        load_existing: read the records already in ``path`` so that :meth:`totals` covers the
            whole run (a resumed game).
        prompts: record prompts; ``None`` = the process-wide switch.

    Raises:
        ValueError: ``load_existing`` and a line of ``path`` is not a JSON call record (the
            message names the file and line).
    """

    def __init__(self, path: Path | None, load_existing: bool = False, prompts: bool | None = None):
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._calls: list[LLMCall] = []
        on = record_prompts() if prompts is None else prompts
        self.prompts_path: Path | None = prompt_paths(self.path)[0] if (on and self.path is not None) else None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if load_existing:
                self._calls.extend(read_calls(self.path))
            self.path.touch()

    @property
    def records_prompts(self) -> bool:
        """Whether this recorder writes prompt records."""
        return self.prompts_path is not None

    def record(self, call: LLMCall, prompt: dict[str, Any] | None = None) -> None:
        """Store ``call`` and append it as one JSON line (flushed) to :attr:`path` if set; and
        ``prompt`` (its call line of :data:`mas_agents.prompt_log.PROMPTS_FORMAT`, without ``call_id``) to the prompt
        log when this recorder records prompts."""
        line = jsonl.line(call.to_dict())
        with self._lock:
            self._calls.append(call)
            if self.path is not None:
                appender.append(self.path, line + "\n")
                if prompt is not None and self.prompts_path is not None:
                    self._append_prompt({"call_id": call.call_id, **prompt})

    def annotate(self, call_id: str, **fields: Any) -> None:
        """Append an agent line (``{"call_id": call_id, **fields}``, :data:`mas_agents.prompt_log.PROMPTS_FORMAT`) to the
        prompt log; nothing when this recorder records no prompts. ``fields`` should be JSON-able;
        a set (an mcq's letters) is written as a sorted list, anything else as its ``str``."""
        if self.prompts_path is None:
            return
        with self._lock:
            self._append_prompt({"call_id": call_id, **fields})

    def _append_prompt(self, rec: dict[str, Any]) -> None:
        # under self._lock
        appender.append(self.prompts_path, jsonl.line(rec, _json_default) + "\n")

    def flush(self) -> None:
        """Wait until every record made so far is on disk (:func:`mas_agents.appender.sync`).

        Raises:
            OSError: a record could not be written (the message names the file).
        """
        appender.sync()

    def close(self) -> None:
        """Compress the prompt log: append ``llm_prompts.jsonl`` as one gzip member to
        ``llm_prompts.jsonl.gz`` (mtime 0, so equal records give equal bytes) and remove it.
        Safe to call twice, and a no-op for a recorder that records no prompts. Records made
        after ``close`` start a new plain file (closed again by the next ``close``); a run that
        stops before ``close`` keeps its plain file, which :func:`mas_agents.prompt_log.read_prompts` reads too."""
        appender.sync()
        if self.prompts_path is None:
            return
        with self._lock:
            src = self.prompts_path
            if not src.exists():
                return
            data = src.read_bytes()
            gz = prompt_paths(self.path)[1]
            if data:
                with gz.open("ab") as fh:
                    fh.write(gzip.compress(data, compresslevel=6, mtime=0))
                    fh.flush()
            src.unlink()

    def calls(self, phase: str | None = None) -> list[LLMCall]:
        """A copy of the records made by this recorder (optionally of one phase), in record order."""
        with self._lock:
            return [c for c in self._calls if phase is None or c.phase == phase]

    def totals(self, phase: str | None = None) -> dict:
        """Totals over the calls recorded by this object (optionally only those of ``phase``).

        Returns:
            ``{"calls": int, "input_tokens": int, "output_tokens": int, "cached_tokens": int,
            "cache_hit": float | None, "latency_s": float (seconds, rounded to ms), "retries": int,
            "failures": int}``. Calls whose token counts are ``None`` add 0 tokens; ``cache_hit`` is
            cached / input tokens over the calls that reported a cache count (None when none did);
            ``failures`` counts calls with ``ok == False``.
        """
        return call_totals(self.calls(phase))


def read_calls(path: Path) -> list[LLMCall]:
    """The call records of an ``llm_calls.jsonl`` file ([] when it does not exist); reading
    changes nothing on disk. Unknown fields are ignored.

    Raises:
        ValueError: a line is not a JSON call record (the message names the file and line).
    """
    path = Path(path)
    if not path.exists():
        return []
    names = {f.name for f in dataclasses.fields(LLMCall)}
    calls = []
    for lineno, d in read_jsonl(path, "an LLM call record"):
        try:
            calls.append(LLMCall(**{k: v for k, v in d.items() if k in names}))
        except (AttributeError, TypeError) as exc:
            raise ValueError(f"{path}:{lineno}: not an LLM call record ({exc})") from exc
    return calls


def call_totals(calls: Iterable[LLMCall]) -> dict:
    """Totals over ``calls``, as :meth:`CallRecorder.totals` returns them."""
    out: dict[str, Any] = dict.fromkeys(_TOTAL_KEYS, 0)
    out["latency_s"] = 0.0
    cache_in = 0
    for c in calls:
        out["calls"] += 1
        out["input_tokens"] += c.input_tokens or 0
        out["output_tokens"] += c.output_tokens or 0
        if c.cached_tokens is not None and c.input_tokens:
            out["cached_tokens"] += c.cached_tokens
            cache_in += c.input_tokens
        out["latency_s"] += c.latency_s
        out["retries"] += c.retries
        out["failures"] += 0 if c.ok else 1
    out["latency_s"] = round(out["latency_s"], 3)
    out["cache_hit"] = round(out["cached_tokens"] / cache_in, 4) if cache_in else None
    return out
