"""LLM call accounting: every model call is timed, counted, retried when transient, and recorded.

The game code never calls a chat model directly; it calls :meth:`AccountedModel.chat`, which

* invokes the wrapped langchain-core :class:`~langchain_core.language_models.BaseChatModel`,
* retries transient failures (timeouts, dropped connections, rate limits, 5xx from a remote
  OpenAI-compatible server) with exponential backoff,
* and appends one :class:`LLMCall` record per logical call (successful or not) to a
  :class:`CallRecorder`, i.e. one JSON line in ``<run_dir>/llm_calls.jsonl``.

Token counts come from ``AIMessage.usage_metadata`` (langchain-core's standard usage field, filled by
:class:`mas_agents.llm.LocalLlamaChat` from llama-cpp-python's ``usage`` and by ``ChatOpenAI`` from
the server's ``usage``); models that report no usage (e.g. langchain-core's fake models) give
``None``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from mas_agents.rundir import read_jsonl

log = logging.getLogger(__name__)

__all__ = ["LLMCall", "CallRecorder", "AccountedModel", "is_transient_error", "message_text"]


@dataclass
class LLMCall:
    """One logical LLM call (all its retries together), as written to ``llm_calls.jsonl``.

    Attributes:
        call_id: unique id (32 hex chars, uuid4) that game events cite to link an action to its call.
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

    def to_dict(self) -> dict[str, Any]:
        """The record as a JSON-ready dict (field name -> value)."""
        return dataclasses.asdict(self)


_TOTAL_KEYS = ("calls", "input_tokens", "output_tokens", "latency_s", "retries", "failures")


class CallRecorder:
    """Appends one JSON line per call to ``<run_dir>/llm_calls.jsonl`` and keeps running totals.

    Thread-safe: concurrent LangGraph nodes may record at the same time; each line is written,
    flushed and the file closed under one lock, so an interrupted run keeps every record made so
    far and lines never interleave. The file is opened in append mode (an existing file is extended,
    never truncated). The file (and its directory) is created at once, so a run that made no
    call still has an (empty) ``llm_calls.jsonl``.

    Args:
        path: the JSONL file, or ``None`` to keep records in memory only.
        load_existing: read the records already in ``path`` so that :meth:`totals` covers the
            whole run (a resumed game).

    Raises:
        ValueError: ``load_existing`` and a line of ``path`` is not a JSON call record (the
            message names the file and line).
    """

    def __init__(self, path: Path | None, load_existing: bool = False):
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._calls: list[LLMCall] = []
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if load_existing:
                self._calls.extend(read_calls(self.path))
            self.path.touch()

    def record(self, call: LLMCall) -> None:
        """Store ``call`` and append it as one JSON line (flushed) to :attr:`path` if set."""
        line = json.dumps(call.to_dict(), ensure_ascii=False)
        with self._lock:
            self._calls.append(call)
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(line + "\n")
                    fh.flush()

    def calls(self, phase: str | None = None) -> list[LLMCall]:
        """A copy of the records made by this recorder (optionally of one phase), in record order."""
        with self._lock:
            return [c for c in self._calls if phase is None or c.phase == phase]

    def totals(self, phase: str | None = None) -> dict:
        """Totals over the calls recorded by this object (optionally only those of ``phase``).

        Returns:
            ``{"calls": int, "input_tokens": int, "output_tokens": int, "latency_s": float (seconds,
            rounded to ms), "retries": int, "failures": int}``. Calls whose token counts are
            ``None`` add 0 tokens; ``failures`` counts calls with ``ok == False``.
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
    for c in calls:
        out["calls"] += 1
        out["input_tokens"] += c.input_tokens or 0
        out["output_tokens"] += c.output_tokens or 0
        out["latency_s"] += c.latency_s
        out["retries"] += c.retries
        out["failures"] += 0 if c.ok else 1
    out["latency_s"] = round(out["latency_s"], 3)
    return out


def _transient_types() -> tuple[type[BaseException], ...]:
    types: list[type[BaseException]] = [TimeoutError, ConnectionError]
    try:
        import openai

        # APITimeoutError is a subclass of APIConnectionError; listed for clarity.
        types += [openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError,
                  openai.InternalServerError]
    except ImportError:  # pragma: no cover - openai is a hard dependency
        pass
    return tuple(types)


_TRANSIENT = _transient_types()


def is_transient_error(exc: BaseException) -> bool:
    """Whether ``exc`` is worth retrying.

    True for ``openai.APITimeoutError``, ``openai.APIConnectionError``, ``openai.RateLimitError``,
    ``openai.InternalServerError`` (HTTP >= 500) and the builtin ``TimeoutError`` / ``ConnectionError``.
    False for everything else, notably :class:`mas_agents.llm.ContextOverflowError` (a ``ValueError``;
    the same prompt would overflow again) and ``openai.BadRequestError`` / other 4xx errors.
    """
    return isinstance(exc, _TRANSIENT)


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


class AccountedModel:
    """Wraps any langchain-core chat model: every call is timed, counted, retried and recorded.

    Transient errors (see :func:`is_transient_error`) are retried up to ``max_retries`` times, sleeping
    ``backoff_s * 2**k`` seconds before retry ``k`` (k = 0, 1, ...). Non-transient errors (e.g.
    :class:`mas_agents.llm.ContextOverflowError`, bad requests) are recorded and re-raised at once.

    Args:
        model: the chat model (``LocalLlamaChat``, ``ChatOpenAI``, a fake model, ...). For remote
            models build it with ``max_retries=0`` (as :func:`mas_agents.llm.make_chat_model` does)
            so retries happen here, where they are counted.
        recorder: where each call is recorded.
        label: printable model name stored in each record's ``model`` field.
        max_retries: retries after the first attempt (>= 0).
        backoff_s: first backoff sleep in seconds (>= 0).
        phase: default phase written to records (``chat(phase=...)`` overrides per call).
    """

    def __init__(self, model: BaseChatModel, recorder: CallRecorder, *, label: str, max_retries: int = 3,
                 backoff_s: float = 1.0, phase: str = "gameplay"):
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

    def with_phase(self, phase: str) -> "AccountedModel":
        """A wrapper around the same model and recorder whose default phase is ``phase``."""
        return AccountedModel(self.model, self.recorder, label=self.label, max_retries=self.max_retries,
                              backoff_s=self.backoff_s, phase=phase)

    def chat(self, messages: list[BaseMessage], *, actor: str, purpose: str, max_tokens: int | None = None,
             phase: str | None = None, **invoke_kwargs: Any) -> tuple[str, str]:
        """Invoke the model on ``messages`` and record the call.

        Args:
            messages: langchain messages (system / human / ai).
            actor, purpose: stored in the record.
            max_tokens: reply length cap for this call; passed as an invoke kwarg only to models that
                declare a ``max_tokens`` field (else the model's own setting applies).
            phase: overrides the wrapper's default phase for this record.
            invoke_kwargs: passed to ``model.invoke`` unchanged, e.g. ``grammar="root ::= ..."`` (GBNF)
                for :class:`mas_agents.llm.LocalLlamaChat`; only pass what the model type accepts.

        Returns:
            ``(reply_text, call_id)``.

        Raises:
            StopRequested: :data:`STOP` is set (nothing is called or recorded).
            The model's last exception, after recording the call with ``ok=False``, when it is not
            transient or the retries are exhausted.
        """
        if STOP.is_set():
            raise StopRequested("stop requested (Ctrl-C); finished work is saved")
        call_id = uuid.uuid4().hex
        started_at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        prompt_chars = sum(len(message_text(m.content)) for m in messages)
        kwargs: dict[str, Any] = dict(invoke_kwargs)
        if max_tokens is not None and _accepts_max_tokens(self.model):
            kwargs["max_tokens"] = max_tokens
        retries = 0
        t0 = time.perf_counter()
        while True:
            try:
                reply = self.model.invoke(messages, **kwargs)
                break
            except Exception as exc:  # noqa: BLE001 - recorded and re-raised below
                if is_transient_error(exc) and retries < self.max_retries:
                    delay = self.backoff_s * (2 ** retries)
                    retries += 1
                    log.warning("%s/%s: transient %s (retry %d/%d in %.2fs): %s", actor, purpose,
                                type(exc).__name__, retries, self.max_retries, delay, exc)
                    time.sleep(delay)
                    continue
                self.recorder.record(LLMCall(
                    call_id=call_id, actor=actor, purpose=purpose, model=self.label, input_tokens=None,
                    output_tokens=None, latency_s=round(time.perf_counter() - t0, 4), retries=retries,
                    ok=False, error=f"{type(exc).__name__}: {exc}", started_at=started_at,
                    prompt_chars=prompt_chars, output_chars=0, phase=phase or self.phase))
                raise
        latency = time.perf_counter() - t0
        text = message_text(getattr(reply, "content", reply))
        usage = getattr(reply, "usage_metadata", None) or {}
        self.recorder.record(LLMCall(
            call_id=call_id, actor=actor, purpose=purpose, model=self.label,
            input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"),
            latency_s=round(latency, 4), retries=retries, ok=True, error=None, started_at=started_at,
            prompt_chars=prompt_chars, output_chars=len(text), phase=phase or self.phase))
        return text, call_id
