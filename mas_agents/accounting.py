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
:class:`mas_agents.local_chat.LocalLlamaChat` from llama-cpp-python's ``usage`` and by ``ChatOpenAI`` from
the server's ``usage``); models that report no usage (e.g. langchain-core's fake models) give
``None``.

This module holds the wrapper (:class:`AccountedModel`, the failure streak; the Ctrl-C stop
:data:`STOP` is :mod:`mas_agents.stop`'s); the rest lives beside it, one idea a module (issue 51 item 6), and each name
is imported from the module that defines it: the call record and its recorder (:mod:`mas_agents.call_log`), the
prompt log (:mod:`mas_agents.prompt_log`), the retry rules (:mod:`mas_agents.retry`). Tests and
:mod:`mas_agents.remote.dialects` patch or read ``_sleep`` here: the wrapper's back-off reads it
from this module.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timezone
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from mas_agents.call_log import CallRecorder, LLMCall, new_call_id
from mas_agents.errors import CallFailed, ContextOverflowError, ModelUnavailable
from mas_agents.prompt_log import message_dicts
from mas_agents.retry import (
    _is_refusal,
    _is_request_error,
    _is_unreachable,
    is_transient_error,
    retry_after_s,
)
from mas_agents.stop import STOP, StopRequested

log = logging.getLogger(__name__)

__all__ = [
    "AccountedModel",
    "message_text",
]


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

    True for :class:`mas_agents.local_chat.LocalLlamaChat` and ``ChatOpenAI`` (whose request payload maps it
    to ``max_completion_tokens``); False for langchain-core's fake models and test doubles, so extra
    kwargs never reach model types that do not expect them.
    """
    while getattr(model, "bound", None) is not None:     # RunnableBinding from .bind(...)
        model = model.bound
    fields = getattr(type(model), "model_fields", None) or {}
    return "max_tokens" in fields


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
