"""A fast, stdlib-only stub of an OpenAI-compatible chat-completions server.

Used by

* fault-injection tests of our HTTP client (429 / 5xx / context overflow / timeouts / resets /
  broken bodies), and
* the throughput benchmark, which needs ~1,000 requests/s at 256 concurrent keep-alive
  connections on a 2-core machine -- hence a bare ``asyncio.start_server`` with a minimal
  HTTP/1.1 parser (request line, headers, ``Content-Length`` body, keep-alive by default,
  ``Connection: close`` honoured) instead of FastAPI/uvicorn.

Endpoints (everything else answers 404, a known path with the wrong method 405):

* ``POST /v1/chat/completions`` -- after ``latency_s`` (an ``asyncio.sleep``, so requests overlap)
  a ``chat.completion`` object whose assistant content is ``reply(body)``, with
  ``usage.prompt_tokens = <characters of all message contents> // 4 + 1`` and
  ``usage.completion_tokens = len(content) // 4 + 1``. ``"stream": true`` answers HTTP 400
  ("streaming not supported by the stub"); a body that is not a JSON object, or lacks ``model`` /
  ``messages``, answers HTTP 400. Chunked request bodies answer 501.
* ``GET /v1/models`` -- ``{"object": "list", "data": models}``; counted in
  :attr:`StubServer.models_requests`.

Faults (:meth:`StubServer.push_faults`): two FIFO queues. ``push_faults(*faults)`` queues for chat
completions: every chat-completion request whose body is a JSON object is recorded in
:attr:`StubServer.requests` and then pops one fault, if any, which decides its answer.
``push_faults(*faults, on="models")`` queues for ``GET /v1/models`` instead, whose every request
pops one fault of that queue; there only the faults that make sense for a listing are accepted
(``ok``, ``429``/``429:S``, ``500``, ``503``, ``hang:S``, ``reset``, ``malformed``, ``html``). The
two queues are independent: a chat fault is never consumed by a model listing, nor the reverse.

=======================  ===========================================================================
``"429"``, ``"429:S"``   HTTP 429, OpenAI-style error JSON, header ``Retry-After: S`` (default 1)
``"500"``, ``"503"``     that status with an OpenAI-style error JSON
``"400:context"``        HTTP 400, llama.cpp's ``exceed_context_size_error`` body (5000 > 4096)
``"400:openai-context"`` HTTP 400, OpenAI's ``context_length_exceeded`` body (5000 > 4096)
``"400:context-nosize"`` HTTP 400, a context rejection that gives no numbers (older llama.cpp
                         servers: ``exceed_context_size_error`` without ``n_prompt_tokens``/``n_ctx``)
``"400:<message>"``      HTTP 400 with ``message`` in a vLLM-style error body (any other text)
``"ok"``                 no fault: answered normally (to let requests through before a fault)
``"hang:S"``             wait S seconds, then answer normally (to trigger client timeouts)
``"reset"``              close the TCP connection without writing anything
``"malformed"``          HTTP 200, ``application/json``, body ``{"id": "x", "choices": [``
``"html"``               HTTP 200, ``text/html``, a gateway's HTML error page (:data:`HTML_ERROR_PAGE`)
``"empty_choices"``      HTTP 200, a valid completion object whose ``choices`` is ``[]``
``"no_usage"``           a normal reply without the ``usage`` key
=======================  ===========================================================================

Error faults answer at once; ``latency_s`` applies to every HTTP 200 chat answer (``malformed`` and
``html`` included), never to ``GET /v1/models``. Unknown fault strings
raise ``ValueError`` in :meth:`~StubServer.push_faults`.

In-process use (the server's loop runs in a daemon thread)::

    with StubServer(latency_s=0.01, reply=lambda body: "Vote: Alice") as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key="x", max_retries=0)
        ...
        assert stub.requests[0]["model"] == "m"

As a separate process (so the server's CPU does not share the benchmark client's GIL)::

    python -m tests.stub_openai --latency 0.3 [--port 0] [--reply-file replies.json]

prints ``READY <base_url>`` (flushed) once listening and serves until SIGTERM/SIGINT. The reply file
is a JSON object mapping a substring of the last user message to the reply content (first match in
file order wins) plus a required ``"default"`` key. Without ``--reply-file`` chat completions answer
HTTP 500, exactly like an in-process :class:`StubServer` without ``reply``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import signal
import sys
import threading
import time
import traceback
from typing import Any, Callable

__all__ = ["StubServer", "FAULTS", "MODELS_FAULT_KINDS", "HTML_ERROR_PAGE", "NOSIZE_CONTEXT_ERROR", "load_reply_file",
           "main"]

HOST = "127.0.0.1"
MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024
CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"

#: Fault forms accepted by :meth:`StubServer.push_faults` (``S``: seconds, a number >= 0).
FAULTS = ("ok", "429", "429:S", "500", "503", "400:context", "400:openai-context", "400:context-nosize",
          "400:<message>", "hang:S", "reset", "malformed", "html", "empty_choices", "no_usage")
_PLAIN_FAULTS = frozenset({"500", "503", "400:context", "400:openai-context", "400:context-nosize", "reset",
                           "malformed", "html", "empty_choices", "no_usage"})
#: Fault kinds ``GET /v1/models`` accepts (``push_faults(..., on="models")``); None is "ok".
MODELS_FAULT_KINDS = frozenset({None, "429", "500", "503", "hang", "reset", "malformed", "html"})

LLAMA_CPP_CONTEXT_ERROR = {"error": {
    "code": 400,
    "message": "the request exceeds the available context size, try increasing it",
    "type": "exceed_context_size_error",
    "n_prompt_tokens": 5000,
    "n_ctx": 4096,
}}
OPENAI_CONTEXT_ERROR = {"error": {
    "message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
               "(4744 in the messages, 256 in the completion). Please reduce the length of the messages "
               "or completion.",
    "type": "invalid_request_error",
    "param": "messages",
    "code": "context_length_exceeded",
}}
#: An older llama.cpp server's context rejection: no prompt size, no context size.
NOSIZE_CONTEXT_ERROR = {"error": {
    "code": 400,
    "message": "the request exceeds the available context size, try increasing the context size or enable "
               "context shift",
    "type": "exceed_context_size_error",
}}
MALFORMED_BODY = b'{"id": "x", "choices": ['
#: What a reverse proxy in front of a model server answers (with HTTP 200) when its upstream failed.
HTML_ERROR_PAGE = (b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
                   b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
                   b"</body>\r\n</html>\r\n")
STREAMING_MESSAGE = "streaming not supported by the stub"

_REASONS = {100: "Continue", 200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
            413: "Payload Too Large", 429: "Too Many Requests", 431: "Request Header Fields Too Large",
            500: "Internal Server Error", 501: "Not Implemented", 503: "Service Unavailable"}

_RESET = object()          # sentinel answer: abort the connection without writing


def _no_reply(body: dict) -> str:
    raise NotImplementedError("StubServer has no reply function: pass reply=callable(body) -> str")


def _error(message: str, type_: str, *, code: Any = None, param: Any = None) -> dict:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def _seconds(text: str, fault: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"stub fault {fault!r}: {text!r} is not a number of seconds >= 0")
    return value


def _parse_fault(fault: Any) -> tuple[str, Any]:
    """``fault`` -> ``(kind, argument)``; ValueError naming the known forms when unrecognised."""
    if isinstance(fault, str):
        if fault == "ok":
            return None, None
        if fault in _PLAIN_FAULTS:
            return fault, None
        if fault == "429":
            return "429", "1"
        kind, sep, arg = fault.partition(":")
        if sep and kind == "429":
            _seconds(arg, fault)
            return "429", arg
        if sep and kind == "hang":
            return "hang", _seconds(arg, fault)
        if sep and kind == "400" and arg.strip():
            return "400", arg
    raise ValueError(f"unknown stub fault {fault!r}; known: {', '.join(FAULTS)}")


def _content_chars(content: Any) -> int:
    """Characters of a message ``content``: a string, a list of parts (text parts count), or None."""
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(len(p.get("text") or "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return 0


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _http_response(status: int, body: bytes, *, close: bool, headers: tuple[tuple[str, str], ...] = (),
                   content_type: str = "application/json") -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}",
             f"Content-Type: {content_type}",
             f"Content-Length: {len(body)}",
             "Connection: close" if close else "Connection: keep-alive"]
    lines += [f"{k}: {v}" for k, v in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _json_bytes(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


class _Answer:
    """One HTTP answer: status, JSON-able payload (or raw bytes), extra headers, content type."""

    __slots__ = ("status", "body", "headers", "content_type")

    def __init__(self, status: int, payload: Any, headers: tuple[tuple[str, str], ...] = (),
                 content_type: str = "application/json"):
        self.status = status
        self.body = payload if isinstance(payload, bytes) else _json_bytes(payload)
        self.headers = headers
        self.content_type = content_type


class _ProtocolError(Exception):
    """A request the stub cannot parse: answered with ``status`` and the connection closed."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class StubServer:
    """An OpenAI-compatible chat-completions stub on ``127.0.0.1`` (see the module docstring).

    Args:
        latency_s: seconds every HTTP 200 chat answer waits (``asyncio.sleep``) before being sent.
        reply: ``callable(body: dict) -> str`` giving the assistant content from the request body.
            The default raises ``NotImplementedError``, which the stub answers with HTTP 500 carrying
            that message -- tests must say what the model replies. Any exception from ``reply`` (or
            a non-string result) is answered with HTTP 500 naming it.
        models: the ``data`` list of ``GET /v1/models``; default one model ``"stub"``.
        usage: whether replies carry a ``usage`` object.
        cached_tokens: when not None, ``usage.prompt_tokens_details.cached_tokens``.
        port: TCP port to bind; 0 (default) picks a free one.
    """

    def __init__(self, *, latency_s: float = 0.0, reply: Callable[[dict], str] | None = None,
                 models: list[dict] | None = None, usage: bool = True, cached_tokens: int | None = None,
                 port: int = 0):
        if not (isinstance(latency_s, (int, float)) and math.isfinite(latency_s) and latency_s >= 0):
            raise ValueError(f"latency_s must be a number >= 0, got {latency_s!r}")
        if cached_tokens is not None and not (isinstance(cached_tokens, int) and cached_tokens >= 0):
            raise ValueError(f"cached_tokens must be None or an int >= 0, got {cached_tokens!r}")
        if reply is not None and not callable(reply):
            raise TypeError(f"reply must be callable(body) -> str, got {reply!r}")
        self.latency_s = float(latency_s)
        self.reply = reply if reply is not None else _no_reply
        self.models = list(models) if models is not None else [{"id": "stub", "object": "model", "owned_by": "stub"}]
        self.usage = usage
        self.cached_tokens = cached_tokens
        self.port = port
        self.base_url = ""
        #: Every chat-completion JSON body received, in arrival order.
        self.requests: list[dict] = []
        #: ``GET /v1/models`` requests received.
        self.models_requests = 0
        #: Chat-completion requests being handled right now / the most ever at once.
        self.in_flight = 0
        self.in_flight_max = 0
        self._lock = threading.Lock()
        self._faults: dict[str, list[tuple[str, Any]]] = {"chat": [], "models": []}
        self._ids = itertools.count(1)
        self._conns: set[asyncio.Task] = set()
        self._server: asyncio.base_events.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop_event: asyncio.Event | None = None

    # -- public API -------------------------------------------------------------------------

    def push_faults(self, *faults: str, on: str = "chat") -> None:
        """Queue faults (FIFO) for chat completions (``on="chat"``: each chat-completion request
        pops one) or for ``GET /v1/models`` (``on="models"``: each listing pops one). ValueError on
        an unknown fault, one the models queue does not accept, or an unknown ``on`` (then nothing
        is queued)."""
        if on not in self._faults:
            raise ValueError(f"unknown stub fault queue {on!r}; known: {', '.join(self._faults)}")
        parsed = [_parse_fault(f) for f in faults]
        if on == "models":
            bad = [f for f, (kind, _) in zip(faults, parsed) if kind not in MODELS_FAULT_KINDS]
            if bad:
                raise ValueError(f"stub fault {bad[0]!r} does not apply to GET {MODELS_PATH}")
        with self._lock:
            self._faults[on].extend(parsed)

    @property
    def pending_faults(self) -> int:
        """How many pushed faults (of both queues) no request has consumed yet."""
        with self._lock:
            return sum(len(q) for q in self._faults.values())

    def start(self) -> "StubServer":
        """Bind ``127.0.0.1`` and serve from an event loop in a daemon thread; returns ``self``."""
        if self._thread is not None:
            raise RuntimeError("StubServer already started")
        ready = threading.Event()
        failure: list[BaseException] = []
        loop = asyncio.new_event_loop()

        def on_ready(exc: BaseException | None) -> None:
            if exc is not None:
                failure.append(exc)
            ready.set()

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._serve(on_ready))
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="stub-openai", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            self._thread = None
            raise failure[0]
        return self

    def stop(self) -> None:
        """Close the listener and every connection, stop the loop thread. Idempotent."""
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        if thread.is_alive() and self._stop_event is not None:
            try:
                loop.call_soon_threadsafe(self._stop_event.set)
            except RuntimeError:        # loop already closed
                pass
        thread.join(timeout=10)
        self._thread = None

    def __enter__(self) -> "StubServer":
        return self if self._thread is not None else self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    # -- serving ----------------------------------------------------------------------------

    async def _serve(self, on_ready: Callable[[BaseException | None], None]) -> None:
        """Listen, call ``on_ready(None)`` (or ``on_ready(exc)`` when binding fails), serve until
        ``_stop_event`` is set, then close everything."""
        self._stop_event = asyncio.Event()
        try:
            self._server = await asyncio.start_server(self._handle_connection, HOST, self.port,
                                                      limit=MAX_HEADER_BYTES, backlog=4096)
        except BaseException as exc:          # noqa: BLE001 - handed to the caller of start()
            on_ready(exc)
            return
        self.port = self._server.sockets[0].getsockname()[1]
        self.base_url = f"http://{HOST}:{self.port}/v1"
        on_ready(None)
        try:
            await self._stop_event.wait()
        finally:
            self._server.close()
            for task in list(self._conns):
                task.cancel()
            if self._conns:
                await asyncio.wait(list(self._conns), timeout=5)
            await self._server.wait_closed()

    async def _handle_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._conns.add(task)
        try:
            while True:
                try:
                    request = await self._read_request(reader, writer)
                except _ProtocolError as exc:
                    writer.write(_http_response(exc.status, _json_bytes(_error(str(exc), "invalid_request_error")),
                                                close=True))
                    await writer.drain()
                    return
                if request is None:           # clean EOF / client went away
                    return
                method, path, body, close = request
                answer = await self._dispatch(method, path, body)
                if answer is _RESET:
                    writer.transport.abort()
                    return
                writer.write(_http_response(answer.status, answer.body, close=close, headers=answer.headers,
                                            content_type=answer.content_type))
                await writer.drain()
                if close:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass                              # the client hung up: nothing to report
        except asyncio.CancelledError:
            # stop() cancels connection tasks; end normally, because Python 3.11's start_server
            # done-callback calls task.exception() and logs a traceback for a cancelled task.
            pass
        finally:
            self._conns.discard(task)
            writer.close()

    async def _read_request(self, reader: asyncio.StreamReader,
                            writer: asyncio.StreamWriter) -> tuple[str, str, bytes, bool] | None:
        """``(method, path, body, close_after)`` of the next request, or None at end of stream."""
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                return None
            except asyncio.LimitOverrunError:
                raise _ProtocolError(431, "request headers too large") from None
            head = head.lstrip(b"\r\n")       # tolerate empty lines between requests
            if head:
                break
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise _ProtocolError(400, f"malformed request line {lines[0][:200]!r}")
        method, target, version = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if not line:
                continue
            name, sep, value = line.partition(":")
            if not sep:
                raise _ProtocolError(400, f"malformed header line {line[:200]!r}")
            headers[name.strip().lower()] = value.strip()
        if "transfer-encoding" in headers:
            raise _ProtocolError(501, "chunked request bodies are not supported by the stub")
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            raise _ProtocolError(400, "invalid Content-Length") from None
        if length < 0:
            raise _ProtocolError(400, "invalid Content-Length")
        if length > MAX_BODY_BYTES:
            raise _ProtocolError(413, f"request body over {MAX_BODY_BYTES} bytes")
        if length and headers.get("expect", "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        body = await reader.readexactly(length) if length else b""
        tokens = {t.strip() for t in headers.get("connection", "").lower().split(",")}
        close = "close" in tokens if version == "HTTP/1.1" else "keep-alive" not in tokens
        return method, target.split("?", 1)[0], body, close

    async def _dispatch(self, method: str, path: str, body: bytes) -> Any:
        if path == CHAT_PATH:
            if method != "POST":
                return _Answer(405, _error(f"{method} not allowed on {path}", "invalid_request_error"))
            return await self._chat(body)
        if path == MODELS_PATH:
            if method != "GET":
                return _Answer(405, _error(f"{method} not allowed on {path}", "invalid_request_error"))
            return await self._models()
        return _Answer(404, _error(f"unknown path {path!r}", "invalid_request_error", code="not_found"))

    async def _models(self) -> Any:
        with self._lock:
            self.models_requests += 1
            kind, arg = self._faults["models"].pop(0) if self._faults["models"] else (None, None)
        if kind is not None and kind != "hang":
            return self._fault_answer(kind, arg)
        if kind == "hang":
            await asyncio.sleep(arg)
        return _Answer(200, {"object": "list", "data": self.models})

    @staticmethod
    def _fault_answer(kind: str, arg: Any) -> Any:
        """The answer of a fault that does not depend on the request (None: it does)."""
        if kind == "reset":
            return _RESET
        if kind == "429":
            return _Answer(429, _error("Rate limit reached (stub fault)", "requests", code="rate_limit_exceeded"),
                           headers=(("Retry-After", arg),))
        if kind in ("500", "503"):
            status = int(kind)
            return _Answer(status, _error(f"{_REASONS[status]} (stub fault)", "server_error", code=status))
        if kind == "malformed":
            return _Answer(200, MALFORMED_BODY)
        if kind == "html":
            return _Answer(200, HTML_ERROR_PAGE, content_type="text/html")
        return None

    async def _chat(self, raw: bytes) -> Any:
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            return _Answer(400, _error(f"request body is not valid JSON: {exc}", "invalid_request_error"))
        if not isinstance(body, dict):
            return _Answer(400, _error("request body must be a JSON object", "invalid_request_error"))
        with self._lock:
            self.requests.append(body)
            kind, arg = self._faults["chat"].pop(0) if self._faults["chat"] else (None, None)
        self.in_flight += 1
        self.in_flight_max = max(self.in_flight_max, self.in_flight)
        try:
            return await self._chat_answer(body, kind, arg)
        except Exception as exc:  # noqa: BLE001 - a stub bug: loud on stderr and to the client
            traceback.print_exc()
            return _Answer(500, _error(f"stub internal error: {exc!r}", "server_error"))
        finally:
            self.in_flight -= 1

    async def _chat_answer(self, body: dict, kind: str | None, arg: Any) -> Any:
        if kind in ("reset", "429", "500", "503"):
            return self._fault_answer(kind, arg)
        if kind == "400":
            return _Answer(400, _error(arg, "BadRequestError", code=400))
        if kind == "400:context":
            return _Answer(400, LLAMA_CPP_CONTEXT_ERROR)
        if kind == "400:openai-context":
            return _Answer(400, OPENAI_CONTEXT_ERROR)
        if kind == "400:context-nosize":
            return _Answer(400, NOSIZE_CONTEXT_ERROR)
        if kind == "hang":
            await asyncio.sleep(arg)
        if body.get("stream"):
            return _Answer(400, _error(STREAMING_MESSAGE, "invalid_request_error", param="stream"))
        model, messages = body.get("model"), body.get("messages")
        if not isinstance(model, str):
            return _Answer(400, _error("missing required parameter: 'model'", "invalid_request_error", param="model"))
        if not isinstance(messages, list):
            return _Answer(400, _error("missing required parameter: 'messages'", "invalid_request_error",
                                       param="messages"))
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if kind in ("malformed", "html"):
            return self._fault_answer(kind, arg)
        content = None
        if kind != "empty_choices":
            try:
                content = self.reply(body)
            except Exception as exc:  # noqa: BLE001 - reported to the client as HTTP 500
                return _Answer(500, _error(f"{type(exc).__name__}: {exc}", "server_error", code=500))
            if not isinstance(content, str):
                return _Answer(500, _error(f"reply() returned {type(content).__name__}, not str", "server_error",
                                           code=500))
        completion: dict[str, Any] = {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [] if content is None else [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        }
        if self.usage and kind != "no_usage":
            prompt = sum(_content_chars(m.get("content")) for m in messages if isinstance(m, dict)) // 4 + 1
            completion_tokens = 0 if content is None else len(content) // 4 + 1
            usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion_tokens,
                                     "total_tokens": prompt + completion_tokens}
            if self.cached_tokens is not None:
                usage["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
            completion["usage"] = usage
        return _Answer(200, completion)


# ---------------------------------------------------------------------------------------------
# process mode


def load_reply_file(path: str) -> Callable[[dict], str]:
    """A ``reply`` function from a JSON file ``{"<substring of the last user message>": "<reply>", ...,
    "default": "<reply>"}``: the first key (in file order, ``"default"`` excluded) found in the last
    user message wins, else ``"default"``. ValueError when the file is not such an object."""
    with open(path, encoding="utf-8") as f:
        table = json.load(f)
    if not isinstance(table, dict) or "default" not in table:
        raise ValueError(f"{path}: must be a JSON object with a 'default' key")
    bad = [k for k, v in table.items() if not isinstance(v, str)]
    if bad:
        raise ValueError(f"{path}: replies must be strings (not for {bad[:5]})")
    default = table["default"]
    rules = [(k, v) for k, v in table.items() if k != "default"]

    def reply(body: dict) -> str:
        last = ""
        for m in reversed(body.get("messages") or []):
            if isinstance(m, dict) and m.get("role") == "user":
                last = _message_text(m.get("content"))
                break
        for key, value in rules:
            if key in last:
                return value
        return default

    return reply


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.stub_openai``: serve until SIGTERM/SIGINT; ``READY <base_url>`` on stdout."""
    parser = argparse.ArgumentParser(prog="python -m tests.stub_openai",
                                     description="OpenAI-compatible chat-completions stub server (127.0.0.1).")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each HTTP 200 chat answer")
    parser.add_argument("--port", type=int, default=0, help="TCP port (0: a free one)")
    parser.add_argument("--reply-file", help="JSON {substring of last user message: reply, ..., 'default': reply}")
    args = parser.parse_args(argv)
    try:
        reply = load_reply_file(args.reply_file) if args.reply_file else None
        server = StubServer(latency_s=args.latency, reply=reply, port=args.port)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))

    failure: list[BaseException] = []

    async def run() -> None:
        loop = asyncio.get_running_loop()

        def on_ready(exc: BaseException | None) -> None:
            if exc is not None:
                failure.append(exc)
                return
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, server._stop_event.set)
            print(f"READY {server.base_url}", flush=True)

        await server._serve(on_ready)

    asyncio.run(run())
    if failure:
        print(f"stub_openai: cannot listen on {HOST}:{args.port}: {failure[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
