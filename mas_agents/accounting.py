"""LLM call accounting: every model call is timed, counted, retried when transient, and recorded.

The game code never calls a chat model directly; it calls :meth:`AccountedModel.chat`, which

* invokes the wrapped langchain-core :class:`~langchain_core.language_models.BaseChatModel`,
* retries transient failures (timeouts, dropped connections, rate limits, 5xx from a remote
  OpenAI-compatible server) with exponential backoff,
* and appends one :class:`LLMCall` record per logical call (successful or not) to a
  :class:`CallRecorder`, i.e. one JSON line in ``<run_dir>/llm_calls.jsonl``,
* and, unless prompt recording is off (``--no-record-prompts``, :func:`set_record_prompts`), what
  the model saw and said: the messages as sent, the structured-output fields, the raw completion,
  and (written by the agent, which parses the reply) the parsed action or the parse error and the
  call a re-prompt follows, in ``<run_dir>/llm_prompts.jsonl`` while the run goes and
  ``llm_prompts.jsonl.gz`` once it is closed (:data:`PROMPTS_FORMAT`, :func:`read_prompts`).

Token counts come from ``AIMessage.usage_metadata`` (langchain-core's standard usage field, filled by
:class:`mas_agents.llm.LocalLlamaChat` from llama-cpp-python's ``usage`` and by ``ChatOpenAI`` from
the server's ``usage``); models that report no usage (e.g. langchain-core's fake models) give
``None``.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import itertools
import json
import logging
import os
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from mas_agents import appender, jsonl
from mas_agents.errors import CallFailed, ContextOverflowError, MalformedResponse, ModelUnavailable
from mas_agents.rundir import read_jsonl

log = logging.getLogger(__name__)

__all__ = ["LLMCall", "CallRecorder", "AccountedModel", "is_transient_error", "message_text", "read_prompts",
           "set_record_prompts", "record_prompts", "PROMPTS_FILE", "PROMPTS_GZ"]

#: The prompt log beside ``llm_calls.jsonl`` while a run writes it (plain JSON lines, appended and
#: flushed per call under the recorder's lock, so a crashed run keeps every record made).
PROMPTS_FILE = "llm_prompts.jsonl"
#: The same records once the recorder is closed (:meth:`CallRecorder.close`): gzip, one member per
#: close (a resumed game appends a member; concatenated members are one valid gzip file).
PROMPTS_GZ = "llm_prompts.jsonl.gz"

PROMPTS_FORMAT = """\
``llm_prompts.jsonl`` / ``llm_prompts.jsonl.gz``: UTF-8 JSON lines of two kinds, keyed by the
``call_id`` of ``llm_calls.jsonl`` (every call there has exactly one call line here when prompts
were recorded; ``config.json`` says whether they were: ``record_prompts``).

call line (written by :meth:`AccountedModel.chat`, with the ``llm_calls.jsonl`` line):
    call_id      str    the call's id
    messages     list   ``[{"role": "system" | "user" | "assistant", "content": str}]`` exactly as
                        given to the model (a re-prompt holds the first prompt, the unreadable
                        reply as ``assistant`` and the re-prompt as the last ``user`` message)
    structured   dict | null   the request fields that carried the reply format, as sent:
                        ``{"grammar": GBNF}`` for a local model or a llama.cpp server,
                        ``{"structured_outputs": {"grammar": GBNF}}`` (vLLM), ``{"ebnf": GBNF}``
                        (SGLang), ``{"response_format": {...json schema...}}`` (OpenAI-style),
                        ``{}`` when the format was in the prompt only; null when the call asked
                        for no format (free text, e.g. a reflection) or the model takes none, and
                        for a remote call that failed (its dialect is chosen inside the model)
    completion   str | null    the reply text as the model returned it (for the JSON dialect:
                        the JSON object); null when the call failed
    rendered     str    only for the JSON dialect: the tagged lines the parser read
    error        str    only when the call failed: ``"ExceptionType: message"``

agent line (written by :class:`mas_agents.agent.Agent` after it parsed the reply; absent for free
text, e.g. a reflection, which is not parsed):
    call_id      str    the call it describes
    parsed       dict | null   ``{"kind": action kind, "value": parsed value}`` (value: a string,
                        a ``{"target", "question"}`` object, an mcq's letters as a sorted list,
                        a form's field dict...)
                        or null when the reply was unreadable or the call failed
    parse_error  str | null    the strict parser's message for an unreadable reply
    reprompt_of  str | null    the call_id of the unreadable reply this call re-prompted

:func:`read_prompts` merges the lines of a call into one dict.
"""

#: Process-wide switch read by every :class:`CallRecorder` when it is created (the CLI's
#: ``--no-record-prompts`` clears it for the command's duration).
_RECORD_PROMPTS = True


def set_record_prompts(on: bool) -> bool:
    """Switch prompt recording for recorders created from now on; returns the previous setting."""
    global _RECORD_PROMPTS
    prev, _RECORD_PROMPTS = _RECORD_PROMPTS, bool(on)
    return prev


def record_prompts() -> bool:
    """Whether recorders created now record prompts (:func:`set_record_prompts`)."""
    return _RECORD_PROMPTS


def prompt_paths(calls_path: Path) -> tuple[Path, Path]:
    """``(llm_prompts.jsonl, llm_prompts.jsonl.gz)`` beside the call log ``calls_path`` (a call
    log with another name than ``llm_calls.jsonl``, e.g. ``mas spy serve-agent --calls x.jsonl``,
    gets ``x.prompts.jsonl`` / ``x.prompts.jsonl.gz``)."""
    calls_path = Path(calls_path)
    if calls_path.name == "llm_calls.jsonl":
        return calls_path.with_name(PROMPTS_FILE), calls_path.with_name(PROMPTS_GZ)
    stem = calls_path.name.removesuffix(".jsonl")
    return calls_path.with_name(f"{stem}.prompts.jsonl"), calls_path.with_name(f"{stem}.prompts.jsonl.gz")


def clear_call_log(calls_path: Path) -> None:
    """Remove a call log and the prompt files beside it (a replayed game starts them afresh)."""
    Path(calls_path).unlink(missing_ok=True)
    for p in prompt_paths(calls_path):
        p.unlink(missing_ok=True)


_ROLES = {"system": "system", "human": "user", "ai": "assistant"}


def _json_default(obj: Any) -> Any:
    """JSON for what ``json`` does not write: a set as a sorted list (an mcq's letters), else ``str``."""
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=str)
    return str(obj)


def message_dicts(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    """``[{"role", "content"}]`` of langchain messages: system / user / assistant (a
    ``ChatMessage`` keeps its role, other types their langchain type); content unchanged."""
    return [{"role": _ROLES.get(m.type) or getattr(m, "role", None) or m.type, "content": m.content}
            for m in messages]


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
        model: printable model label (see :func:`mas_agents.llm.model_label`).
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
        phase: ``"gameplay"``, ``"evaluation"``, ... (set by the caller / :class:`AccountedModel`).
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
    and :meth:`close` and :func:`read_calls` / :func:`read_prompts` do so first. The file is
    extended, never truncated. The file (and its directory) is created at once, so a run that
    made no call still has an (empty) ``llm_calls.jsonl``.

    With prompt recording on (the process-wide switch, :func:`set_record_prompts`, when the
    recorder is created) and a ``path``, the prompt records (:data:`PROMPTS_FORMAT`) go, under the
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
        ``prompt`` (its call line of :data:`PROMPTS_FORMAT`, without ``call_id``) to the prompt
        log when this recorder records prompts."""
        line = jsonl.line(call.to_dict())
        with self._lock:
            self._calls.append(call)
            if self.path is not None:
                appender.append(self.path, line + "\n")
                if prompt is not None and self.prompts_path is not None:
                    self._append_prompt({"call_id": call.call_id, **prompt})

    def annotate(self, call_id: str, **fields: Any) -> None:
        """Append an agent line (``{"call_id": call_id, **fields}``, :data:`PROMPTS_FORMAT`) to the
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
        stops before ``close`` keeps its plain file, which :func:`read_prompts` reads too."""
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


def read_prompts(run_dir: Path) -> dict[str, dict[str, Any]]:
    """The prompt records of a run directory (or of the call log file given), one merged dict per
    call_id, in first-seen order.

    Reads ``llm_prompts.jsonl.gz`` (every gzip member) and then ``llm_prompts.jsonl`` (the part
    not compressed yet, e.g. of a run that stopped); the lines of one call are merged in file
    order (a later line's keys win). See :data:`PROMPTS_FORMAT` for the fields. Returns ``{}``
    when the run recorded no prompts.

    Raises:
        ValueError: a line is not a JSON object with a ``call_id`` (the message names the file
            and line), or the gzip file is corrupt.
    """
    appender.sync()
    run_dir = Path(run_dir)
    plain, gz = prompt_paths(run_dir if run_dir.suffix == ".jsonl" else run_dir / "llm_calls.jsonl")
    out: dict[str, dict[str, Any]] = {}

    def merge(path: Path, lines: Iterable[str]) -> None:
        for lineno, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not a prompt record ({exc.msg})") from exc
            if not isinstance(rec, dict) or not isinstance(rec.get("call_id"), str):
                raise ValueError(f"{path}:{lineno}: not a prompt record (no call_id)")
            out.setdefault(rec["call_id"], {}).update(rec)

    if gz.exists():
        try:
            text = gzip.decompress(gz.read_bytes()).decode("utf-8")
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise ValueError(f"{gz}: corrupt prompt log ({exc})") from exc
        merge(gz, text.splitlines())
    if plain.exists():
        with plain.open(encoding="utf-8") as fh:
            merge(plain, fh)
    return out


@functools.lru_cache(maxsize=1)
def _transient_types() -> tuple[type[BaseException], ...]:
    types: list[type[BaseException]] = [TimeoutError, ConnectionError, MalformedResponse]
    try:
        import openai

        # APITimeoutError is a subclass of APIConnectionError; listed for clarity.
        types += [openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError,
                  openai.InternalServerError, openai.APIResponseValidationError]
    except ImportError:  # pragma: no cover - openai is a hard dependency
        pass
    return tuple(types)


def is_transient_error(exc: BaseException) -> bool:
    """Whether ``exc`` is worth retrying.

    True for ``openai.APITimeoutError``, ``openai.APIConnectionError``, ``openai.RateLimitError``,
    ``openai.InternalServerError`` (HTTP >= 500), HTTP 408 and 409, ``openai.APIResponseValidationError`` and
    :class:`mas_agents.remote.MalformedResponse` (a body that is not a completion), a
    ``json.JSONDecodeError`` raised while reading a response, and the builtin ``TimeoutError`` /
    ``ConnectionError``. False for everything else, notably
    :class:`mas_agents.errors.ContextOverflowError` (the same prompt would overflow again) and
    ``openai.BadRequestError`` / other 4xx errors.
    """
    if isinstance(exc, json.JSONDecodeError):
        return True
    if getattr(exc, "status_code", None) in (408, 409):     # request timeout / conflict: try again
        return True
    return isinstance(exc, _transient_types())


def _is_unreachable(exc: BaseException) -> bool:
    """A connection that could not be made or broke (not a timeout: a slow server is up)."""
    try:
        import openai
    except ImportError:  # pragma: no cover
        return isinstance(exc, ConnectionError)
    if isinstance(exc, openai.APITimeoutError):
        return False
    return isinstance(exc, (openai.APIConnectionError, ConnectionError))


#: HTTP statuses a server gives every request alike: the key, the permission, the model name.
REFUSALS = (401, 403, 404)


def _is_refusal(exc: BaseException) -> bool:
    """A 401/403/404: the server refuses every request of this run alike."""
    return getattr(exc, "status_code", None) in REFUSALS


def _is_request_error(exc: BaseException) -> bool:
    """Another 4xx (400, 413, 422, ...): this request was refused; the next may not be."""
    code = getattr(exc, "status_code", None)
    return isinstance(code, int) and 400 <= code < 500 and code not in (408, 409, 429) + REFUSALS


def retry_after_s(exc: BaseException, cap: float = 60.0) -> float | None:
    """Seconds the server asked to wait (``Retry-After`` / ``retry-after-ms`` headers of a 429 or
    503), capped at ``cap``; None when it did not say."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms"):
            return min(float(headers["retry-after-ms"]) / 1000.0, cap)
        if headers.get("retry-after"):
            return min(float(headers["retry-after"]), cap)
    except ValueError:
        return None
    return None


def message_text(content: Any) -> str:
    """Plain text of a message ``content`` (a string, or a list of strings / ``{"type": "text"}`` blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
        return "".join(parts)
    return "" if content is None else str(content)


def _accepts_max_tokens(model: Any) -> bool:
    """Whether ``max_tokens`` may be passed as an invoke kwarg (model declares such a field).

    True for :class:`mas_agents.llm.LocalLlamaChat` and ``ChatOpenAI`` (whose request payload maps it
    to ``max_completion_tokens``); False for langchain-core's fake models and test doubles, so extra
    kwargs never reach model types that do not expect them.
    """
    while getattr(model, "bound", None) is not None:     # RunnableBinding from .bind(...)
        model = model.bound
    fields = getattr(type(model), "model_fields", None) or {}
    return "max_tokens" in fields


#: Set to stop every accounted model: the next ``chat`` call in any thread raises
#: :class:`StopRequested`. The CLI sets it on Ctrl-C, because LangGraph runs nodes in worker
#: threads that a KeyboardInterrupt in the main thread does not reach.
STOP = threading.Event()


class StopRequested(KeyboardInterrupt):
    """Raised by :meth:`AccountedModel.chat` once :data:`STOP` is set (before calling the model)."""


#: Logical calls to one model that may fail in a row (each after its retries) before the backend
#: counts as down and the run stops: one failure is a lost action, three in a row a dead server.
FAIL_STREAK = 3


class _Streak:
    """Failed logical calls in a row of one model, shared by its phase wrappers (thread-safe)."""

    def __init__(self) -> None:
        self.n = 0
        self._lock = threading.Lock()

    def failed(self) -> int:
        with self._lock:
            self.n += 1
            return self.n

    def ok(self) -> None:
        self.n = 0


class AccountedModel:
    """Wraps any langchain-core chat model: every call is timed, counted, retried and recorded.

    Transient errors (see :func:`is_transient_error`) are retried up to ``max_retries`` times, sleeping
    ``backoff_s * 2**k`` seconds before retry ``k`` (k = 0, 1, ...), or what a 429's ``Retry-After``
    asks if that is longer. When a call has failed for good it is recorded with ``ok=False`` and:

    * a context-length error (:class:`mas_agents.errors.ContextOverflowError`) is re-raised as is;
    * a server that cannot be reached, or that refuses every request (401/403/404: the key, the
      permission, the model name), raises :class:`mas_agents.errors.ModelUnavailable` (the run
      stops; finished work is kept);
    * any other transient failure, or another 4xx (this request refused, not retried), raises
      :class:`mas_agents.errors.CallFailed` (the game turns it into the rule's no-answer), unless
      it is the :data:`FAIL_STREAK`-th failed call in a row, which raises ``ModelUnavailable``;
    * anything else (a bug, a local model's own error) is re-raised unchanged.

    Args:
        model: the chat model (``LocalLlamaChat``, ``RemoteChat``, a fake model, ...). For remote
            models build it with ``max_retries=0`` (as :func:`mas_agents.llm.make_chat_model` does)
            so retries happen here, where they are counted.
        recorder: where each call is recorded.
        label: printable model name stored in each record's ``model`` field.
        max_retries: retries after the first attempt (>= 0).
        backoff_s: first backoff sleep in seconds (>= 0).
        phase: default phase written to records (``chat(phase=...)`` overrides per call).
    """

    def __init__(self, model: BaseChatModel, recorder: CallRecorder, *, label: str, max_retries: int = 3,
                 backoff_s: float = 1.0, phase: str = "gameplay", _streak: _Streak | None = None):
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if backoff_s < 0:
            raise ValueError(f"backoff_s must be >= 0, got {backoff_s}")
        self.model = model
        self.recorder = recorder
        self.label = label
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.phase = phase
        self._streak = _streak or _Streak()

    def with_phase(self, phase: str) -> "AccountedModel":
        """A wrapper around the same model and recorder whose default phase is ``phase``."""
        return AccountedModel(self.model, self.recorder, label=self.label, max_retries=self.max_retries,
                              backoff_s=self.backoff_s, phase=phase, _streak=self._streak)

    def constrain(self, fmt: Any) -> dict:
        """Invoke kwargs that make the wrapped model follow the reply format ``fmt`` (a
        :class:`mas_agents.grammar.ReplyFormat`): a GBNF grammar for a local model, the server's
        structured-output fields for a remote one, ``{}`` for a model that takes neither."""
        hook = getattr(self._inner()[1], "constrain", None)
        return hook(fmt) if hook is not None else {}

    def _inner(self) -> tuple[Any, Any, bool]:
        """``(self.model, the model inside its .bind(...) wrappers, whether it takes max_tokens)``,
        worked out once per model object: a pydantic chat model answers each missing attribute
        (``bound``) by raising and catching an exception, three times a call otherwise."""
        hit = self.__dict__.get("_inner_of")
        if hit is None or hit[0] is not self.model:
            hit = self._inner_of = (self.model, _unbound(self.model), _accepts_max_tokens(self.model))
        return hit

    def _where(self) -> str:
        m = self._inner()[1]
        if hasattr(m, "openai_api_base"):
            urls = m.base_urls() if hasattr(m, "base_urls") else []
            if len(urls) > 1:                     # replicas: every one failed this call
                return f"model servers {', '.join(urls)}"
            return f"model server {m.openai_api_base or 'https://api.openai.com/v1'}"
        return f"model {self.label}"

    def _failure(self, exc: Exception, call_id: str, retries: int) -> BaseException:
        """The exception a call that failed for good raises (see the class docstring)."""
        if isinstance(exc, ContextOverflowError):
            return exc
        what = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        tries = f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries else ""
        if _is_unreachable(exc):
            where = self._where()
            verb = "are" if where.startswith("model servers ") else "is"
            return ModelUnavailable(f"{where} {verb} unreachable{tries} ({what})")
        if _is_refusal(exc):
            return ModelUnavailable(f"{self._where()} refused the request ({what})")
        if is_transient_error(exc) or _is_request_error(exc):
            n = self._streak.failed()
            if n >= FAIL_STREAK:
                return ModelUnavailable(f"{self._where()}: {n} calls in a row failed{tries}; last: {what}")
            return CallFailed(call_id, what)
        return exc

    def chat(self, messages: list[BaseMessage], *, actor: str, purpose: str, max_tokens: int | None = None,
             phase: str | None = None, **invoke_kwargs: Any) -> tuple[str, str]:
        """Invoke the model on ``messages`` and record the call.

        Args:
            messages: langchain messages (system / human / ai).
            actor, purpose: stored in the record.
            max_tokens: reply length cap for this call; passed as an invoke kwarg only to models that
                declare a ``max_tokens`` field (else the model's own setting applies).
            phase: overrides the wrapper's default phase for this record.
            invoke_kwargs: passed to ``model.invoke`` unchanged, e.g. what :meth:`constrain` returns;
                only pass what the model type accepts.

        Returns:
            ``(reply_text, call_id)``.

        Raises:
            StopRequested: :data:`STOP` is set (nothing is called or recorded).
            ContextOverflowError, ModelUnavailable, CallFailed: see the class docstring (the call is
                recorded with ``ok=False`` first).
            Exception: the model's own exception, for errors that are none of those.
        """
        if STOP.is_set():
            raise StopRequested("stop requested (Ctrl-C); finished work is saved")
        call_id = new_call_id()
        started_at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        prompt_chars = sum(len(message_text(m.content)) for m in messages)
        kwargs: dict[str, Any] = dict(invoke_kwargs)
        if max_tokens is not None and self._inner()[2]:
            kwargs["max_tokens"] = max_tokens
        structured = "grammar" if "grammar" in kwargs else None
        recording = self.recorder.records_prompts
        retries = 0
        t0 = time.perf_counter()
        while True:
            try:
                reply = self.model.invoke(messages, **kwargs)
                break
            except Exception as exc:  # noqa: BLE001 - recorded and re-raised below
                if is_transient_error(exc) and retries < self.max_retries:
                    delay = max(self.backoff_s * (2 ** retries), retry_after_s(exc) or 0.0)
                    retries += 1
                    log.warning("%s/%s: transient %s (retry %d/%d in %.2fs): %s", actor, purpose,
                                type(exc).__name__, retries, self.max_retries, delay, exc)
                    if _sleep(delay):
                        raise StopRequested("stop requested (Ctrl-C); finished work is saved") from exc
                    continue
                error = f"{type(exc).__name__}: {exc}"
                self.recorder.record(LLMCall(
                    call_id=call_id, actor=actor, purpose=purpose, model=self.label, input_tokens=None,
                    output_tokens=None, latency_s=round(time.perf_counter() - t0, 4), retries=retries,
                    ok=False, error=error, started_at=started_at,
                    prompt_chars=prompt_chars, output_chars=0, phase=phase or self.phase,
                    max_tokens=kwargs.get("max_tokens")),
                    self._prompt_record(messages, kwargs, None, None, error) if recording else None)
                err = self._failure(exc, call_id, retries)
                if err is exc:
                    raise
                raise err from exc
        self._streak.ok()
        latency = time.perf_counter() - t0
        text = message_text(getattr(reply, "content", reply))
        usage = getattr(reply, "usage_metadata", None) or {}
        meta = getattr(reply, "response_metadata", None) or {}
        cached = (usage.get("input_token_details") or {}).get("cache_read")
        self.recorder.record(LLMCall(
            call_id=call_id, actor=actor, purpose=purpose, model=self.label,
            input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"),
            latency_s=round(latency, 4), retries=retries, ok=True, error=None, started_at=started_at,
            prompt_chars=prompt_chars, output_chars=len(text), phase=phase or self.phase,
            cached_tokens=cached, max_tokens=meta.get("max_tokens", kwargs.get("max_tokens")),
            finish_reason=meta.get("finish_reason"), structured=meta.get("structured", structured)),
            self._prompt_record(messages, kwargs, meta, text, None) if recording else None)
        return text, call_id

    def annotate(self, call_id: str, **fields: Any) -> None:
        """Add the agent's reading of call ``call_id`` to the prompt log (``parsed``,
        ``parse_error``, ``reprompt_of``: :data:`PROMPTS_FORMAT`); see :meth:`CallRecorder.annotate`."""
        self.recorder.annotate(call_id, **fields)

    @staticmethod
    def _prompt_record(messages: list[BaseMessage], kwargs: dict[str, Any], meta: dict | None,
                       text: str | None, error: str | None) -> dict[str, Any]:
        """The call line of :data:`PROMPTS_FORMAT` (without ``call_id``) of one call."""
        meta = meta or {}
        if "structured_fields" in meta:              # what a remote model put in its request
            fields = meta["structured_fields"]
        elif "grammar" in kwargs:                    # a local model's GBNF text
            g = kwargs["grammar"]
            fields = {"grammar": g if isinstance(g, str) else str(g)}
        else:                                        # no format, or a remote call that failed
            fields = None
        rec: dict[str, Any] = {"messages": message_dicts(messages), "structured": fields,
                               "completion": meta.get("raw_completion", text)}
        if "raw_completion" in meta and text is not None:
            rec["rendered"] = text
        if error is not None:
            rec["error"] = error
        return rec


def _sleep(seconds: float) -> bool:
    """Back off for ``seconds``; True when Ctrl-C (:data:`STOP`) cut the wait short."""
    return STOP.wait(seconds)


def _unbound(model: Any) -> Any:
    """The model inside ``.bind(...)`` wrappers."""
    while getattr(model, "bound", None) is not None:
        model = model.bound
    return model
