"""What each kind of server reads and says: structured-output dialects, the start-up probes and
the context-length rejections.

* the dialect names (:data:`STRUCTURED_MODES`, :data:`DIALECTS`) and the probe that finds which
  one a server applies (:func:`_probe`: one short request per dialect, under the fault-tolerant
  retry rule :func:`_probe_retrying`, :data:`PROBE_TRIES` tries with ``PROBE_BACKOFF_S * 2**k``
  seconds between them);
* the context window a server reports (:func:`_reported_context`: ``GET /models``, llama.cpp's
  ``/props``);
* how the reply cap is named (:func:`_token_field`, :func:`is_openai_api`) and how each server
  words a context-length rejection (:func:`context_error_numbers`).

The rules are described in :mod:`mas_agents.remote` (the package docstring). Moved unchanged
from the former single module ``mas_agents/remote.py`` (issue 51 item 6). A test patches
the probe constants here (``monkeypatch.setattr(dialects, "PROBE_BACKOFF_S", ...)``): this module
is the one that reads them.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from typing import Any, Callable
from urllib.parse import urlparse

from mas_agents import accounting
from mas_agents.stop import StopRequested
from mas_agents.retry import _is_unreachable, is_transient_error, retry_after_s
from mas_agents.errors import MalformedResponse, ModelUnavailable

log = logging.getLogger("mas_agents.remote")
# Annotations name :class:`mas_agents.remote.endpoints.Endpoint` and
# :class:`mas_agents.remote.chat.RemoteChat`, which import this module (not imported here).

#: ``--structured`` values: ``grammar`` = whichever grammar field the server applies (probed).
STRUCTURED_MODES = ("auto", "grammar", "json", "prompt")
#: Dialects a server may speak, in the order ``auto`` tries them.
DIALECTS = ("gbnf", "vllm", "sglang", "json", "prompt")
GRAMMAR_DIALECTS = ("gbnf", "vllm", "sglang")
#: The string the probe grammar forces: no model says it by chance.
PROBE_TEXT = "zq-7"


def _server_root(base_url: str) -> str:
    """``http://h:p/v1`` -> ``http://h:p`` (llama.cpp serves ``/props`` at the root)."""
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


@functools.lru_cache(maxsize=256)
def is_openai_api(base_url: str | None) -> bool:
    """Whether ``base_url`` is OpenAI's own API (unset counts: the client's default is OpenAI).
    Cached: asked for every request, and a URL parse is a few microseconds."""
    return not base_url or (urlparse(base_url).hostname or "").endswith("api.openai.com")


# ---------------------------------------------------------------------------------------------
# probes


#: Tries of one probe request (the structured-output probe of each dialect, ``GET /models``,
#: ``GET /props``): the retry rule of gameplay calls (:meth:`AccountedModel.chat`), with
#: ``PROBE_BACKOFF_S * 2**k`` seconds before try ``k + 2``, or a 429's ``Retry-After`` if longer.
PROBE_TRIES = 4
PROBE_BACKOFF_S = 1.0
#: Seconds a ``GET /models`` or ``GET /props`` may take (a listing, no generation).
GET_TIMEOUT_S = 10.0


class _NotJSON(MalformedResponse):
    """A 200 to ``GET /models`` or ``/props`` whose body is not JSON (a gateway's error page, or a
    server that serves a web page there): retried like any malformed body."""


class _ProbeFailed(Exception):
    """Every try of one probe request met a transient fault; ``faults`` holds them in order."""

    def __init__(self, faults: list[BaseException]):
        super().__init__(f"{len(faults)} tries failed")
        self.faults = faults


def _one_fault(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


def _probe_retrying(base: str, request: str, attempt: Callable[[], Any]) -> Any:
    """``attempt()``, retried under the rule of gameplay calls (:meth:`AccountedModel.chat`).

    A transient fault (:func:`mas_agents.retry.is_transient_error`: timeouts, dropped or
    refused connections, 5xx, 408/409/429, a 200 that is not a completion or not JSON) is tried
    again, up to :data:`PROBE_TRIES` tries in all, after ``PROBE_BACKOFF_S * 2**k`` seconds (k = 0,
    1, ...) or what a 429's ``Retry-After`` asks if longer; anything else propagates at once.

    Raises:
        _ProbeFailed: every try met a transient fault (the caller decides what that means).
        StopRequested: Ctrl-C (:data:`mas_agents.stop.STOP`) during a backoff.
    """
    faults: list[BaseException] = []
    for k in range(PROBE_TRIES):
        try:
            return attempt()
        except Exception as exc:  # noqa: BLE001 - only transient faults are kept, the rest re-raised
            if not is_transient_error(exc):
                raise
            faults.append(exc)
            if k == PROBE_TRIES - 1:
                break
            delay = max(PROBE_BACKOFF_S * 2 ** k, retry_after_s(exc) or 0.0)
            log.warning("%s: %s: try %d/%d failed, next in %.2fs: %s", base, request, k + 1, PROBE_TRIES,
                        delay, _one_fault(exc))
            if accounting._sleep(delay):
                raise StopRequested("stop requested (Ctrl-C); finished work is saved") from exc
    raise _ProbeFailed(faults)


def _unavailable(base: str, request: str, faults: list[BaseException]) -> ModelUnavailable:
    """The one-line stop for a probe none of whose tries was answered: the endpoint, the request,
    the number of tries and the last fault ("is unreachable" when that was a connection that could
    not be made or broke, else "is not ready")."""
    last = faults[-1]
    state = "is unreachable" if _is_unreachable(last) else "is not ready"
    return ModelUnavailable(f"model server {base} {state}: {request} failed all {len(faults)} tries "
                            f"(last: {_one_fault(last)})")


def _http_get_json(model: "RemoteChat", ep: Endpoint, url: str, request: str) -> tuple[Any, str]:
    """``(json, "")`` of ``GET url`` through the model's own client (its key and headers) on
    ``ep``'s connections (:meth:`Endpoint.client_for`), under
    :func:`_probe_retrying`; a non-JSON 200 counts as a transient fault there.

    Returns ``(None, "")`` for a 4xx (the server does not serve ``url``: not reported), and
    ``(None, why)`` when every try failed but at least one was a 200 whose body is not JSON (a
    server answering there with something else: the value is unknown, not a stop).

    Raises:
        ModelUnavailable: every try failed with a connection failure, a timeout, a 5xx, 408/409 or
            429 (named by ``base`` and ``request``, see :func:`_unavailable`).
        StopRequested: Ctrl-C during a backoff.
    """
    import openai

    client = ep.client_for(model)
    base = ep.base_url

    def attempt() -> Any:
        try:
            # the body as text whatever its content type (the client parses nothing), errors as
            # the client raises them for every call
            text = client.get(url, cast_to=str, options={"timeout": GET_TIMEOUT_S})
        except openai.APIStatusError as exc:
            if is_transient_error(exc):
                raise
            return None                       # a 4xx: not reported
        try:
            return json.loads(text)
        except ValueError as exc:
            raise _NotJSON(f"{url}: a 200 whose body is not JSON ({_snippet(text)})") from exc

    try:
        return _probe_retrying(base, request, attempt), ""
    except _ProbeFailed as failed:
        if any(isinstance(f, _NotJSON) for f in failed.faults):
            return None, f"{request} gave no JSON in {len(failed.faults)} tries"
        raise _unavailable(base, request, failed.faults) from failed.faults[-1]


def _snippet(text: Any) -> str:
    return repr(" ".join(str(text).split())[:80])


def _reported_context(model: "RemoteChat", ep: Endpoint) -> tuple[int | None, str]:
    """``(tokens, source)``: the context window the server reports for ``model.model_name``:
    ``/models`` (``max_model_len``, ``context_length``, ``meta.n_ctx``, ``meta.n_ctx_train``), then
    llama.cpp's ``/props`` (``default_generation_settings.n_ctx``). ``(None, why)`` when it reports
    none: ``why`` is "" when the server answered without one, else says which request gave no JSON.

    Raises:
        ModelUnavailable: a request failed every try (see :func:`_http_get_json`).
    """
    base_url = ep.base_url
    listing, why = _http_get_json(model, ep, base_url + "/models", "GET /models")
    entries = listing.get("data") if isinstance(listing, dict) else None
    for e in entries or []:
        if not isinstance(e, dict) or (e.get("id") != model.model_name and len(entries) > 1):
            continue
        meta = e.get("meta") if isinstance(e.get("meta"), dict) else {}
        for key, val in (("max_model_len", e.get("max_model_len")), ("context_length", e.get("context_length")),
                         ("meta.n_ctx", meta.get("n_ctx")), ("meta.n_ctx_train", meta.get("n_ctx_train"))):
            if isinstance(val, int) and val > 0:
                if key == "meta.n_ctx_train":   # the trained length; the server's own n_ctx may be smaller
                    props_url = _server_root(base_url) + "/props"
                    props, _ = _http_get_json(model, ep, props_url, f"GET {props_url}")
                    n = ((props or {}).get("default_generation_settings") or {}).get("n_ctx") if isinstance(props, dict) else None
                    if isinstance(n, int) and n > 0:
                        return n, "server: /props default_generation_settings.n_ctx"
                return val, f"server: /models {key}"
    return None, why


def _probe_fields(dialect: str) -> dict:
    grammar = f'root ::= "{PROBE_TEXT}"'
    if dialect == "gbnf":
        return {"grammar": grammar}
    if dialect == "vllm":
        return {"structured_outputs": {"grammar": grammar}}
    if dialect == "sglang":
        return {"ebnf": grammar}
    schema = {"type": "object", "properties": {"answer": {"type": "string", "enum": [PROBE_TEXT]}},
              "required": ["answer"], "additionalProperties": False}
    return {"response_format": {"type": "json_schema",
                                "json_schema": {"name": "probe", "strict": True, "schema": schema}}}


def _probe_ok(dialect: str, text: str) -> bool:
    if dialect != "json":
        return text.strip() == PROBE_TEXT
    try:
        return json.loads(text) == {"answer": PROBE_TEXT}
    except ValueError:
        return False


def _completion_text(resp: Any) -> str:
    """The reply text of a chat completion the openai client returned. A 200 that is not one (a
    ``str``: the client's answer to a body that is not JSON, e.g. a gateway's HTML error page; no
    or empty ``choices``; a choice without a message) raises :class:`MalformedResponse`."""
    if isinstance(resp, (str, bytes)):
        raise MalformedResponse(f"a 200 that is not a completion (not JSON: {_snippet(resp)})")
    choices = getattr(resp, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise MalformedResponse(f"a 200 that is not a completion ({'empty' if choices == [] else 'no'} choices)")
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    if message is None or not (content is None or isinstance(content, str)):
        raise MalformedResponse("a 200 that is not a completion (no message in its first choice)")
    return content or ""


def _probe(model: "RemoteChat", ep: Endpoint, dialects: tuple[str, ...]) -> tuple[str, str]:
    """The first of ``dialects`` whose probe reply is exactly what its constraint forces;
    ``("prompt", note)`` when none is. One short request per dialect tried (at most 12 reply
    tokens), each under :func:`_probe_retrying` (up to :data:`PROBE_TRIES` tries).

    A dialect is settled only by an answer: a completion (its constraint applied or ignored) or
    a 4xx other than 408/409/429 (rejected). A 200 that is not a completion (not JSON, an HTML
    page, no or empty ``choices``) is a fault like a 5xx, retried, never taken for "ignored".

    Raises:
        ModelUnavailable: every try of one dialect's probe failed (nothing is cached: the caller
            stores the dialect only when this returns).
        StopRequested: Ctrl-C during a backoff.
    """
    import openai

    client = ep.client_for(model)
    base = ep.base_url
    notes = []
    for d in dialects:
        def attempt(d: str = d) -> tuple[str | None, int | None]:
            try:
                resp = client.chat.completions.create(
                    model=model.model_name, messages=[{"role": "user", "content": "Say anything."}],
                    temperature=0, extra_body={**_token_field(model, 12), **_probe_fields(d)})
            except openai.APIStatusError as exc:
                if is_transient_error(exc):
                    raise
                return None, exc.status_code        # rejected: the server does not take this dialect
            return _completion_text(resp), None

        request = f"POST /chat/completions (structured-output probe, {d})"
        try:
            text, rejected = _probe_retrying(base, request, attempt)
        except _ProbeFailed as failed:
            raise _unavailable(base, request, failed.faults) from failed.faults[-1]
        if text is None:
            notes.append(f"{d}: rejected ({rejected})")
            continue
        if _probe_ok(d, text):
            return d, f"probe: the server applied {d}" + (f" (not: {', '.join(notes)})" if notes else "")
        notes.append(f"{d}: ignored")
    return "prompt", "probe: " + ", ".join(notes)


def _token_field(model: "RemoteChat", n: int) -> dict:
    """The reply cap as the endpoint reads it."""
    return {"max_completion_tokens" if is_openai_api(model.openai_api_base) else "max_tokens": n}


# ---------------------------------------------------------------------------------------------
# context-length rejections

_CTX_PATTERNS = [
    re.compile(r"maximum context length is (\d+)"),                       # OpenAI, vLLM, llama-cpp-python
    re.compile(r"available context size \((\d+) tokens\)"),              # llama.cpp server
    re.compile(r"exceed context window of (\d+)"),                        # older llama-cpp-python
]
_PROMPT_PATTERNS = [
    re.compile(r"(\d+) in the messages"),                                 # OpenAI, llama-cpp-python, older vLLM
    re.compile(r"prompt contains at least (\d+) input tokens"),           # newer vLLM
    re.compile(r"request has (\d+) input tokens"),                        # vLLM, prompt + cap too long
    re.compile(r"request \((\d+) tokens\) exceeds"),                     # llama.cpp server
]


def _first_int(patterns: list[re.Pattern], text: str) -> int | None:
    for pat in patterns:
        m = pat.search(text)
        if m:
            return int(m.group(1))
    return None


def context_error_numbers(exc: Exception) -> dict | None:
    """``{"prompt", "ctx"}`` (either may be None) when ``exc`` is a server's context-length
    rejection, else None. Recognised (HTTP 400 bodies as each server words them): OpenAI and
    llama-cpp-python ``context_length_exceeded`` ("maximum context length is N tokens ... P in the
    messages"), vLLM "maximum context length ... prompt contains at least P input tokens", the
    llama.cpp server's ``exceed_context_size_error`` (with ``n_prompt_tokens``/``n_ctx``), and
    langchain-openai's own context-overflow error classes."""
    text = str(exc)
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, dict) else {}
    err = err if isinstance(err, dict) else {}
    is_ctx = ("context_length_exceeded" in text or "exceed_context_size" in text or "exceeds the available context" in text
              or "exceed context window" in text or "maximum context length" in text
              or "ContextOverflow" in type(exc).__name__ or err.get("type") == "exceed_context_size_error")
    if not is_ctx:
        return None
    prompt, ctx = err.get("n_prompt_tokens"), err.get("n_ctx")
    return {"prompt": prompt if isinstance(prompt, int) else _first_int(_PROMPT_PATTERNS, text),
            "ctx": ctx if isinstance(ctx, int) else _first_int(_CTX_PATTERNS, text)}
