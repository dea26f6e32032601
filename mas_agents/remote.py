"""OpenAI-compatible servers (vLLM, SGLang, llama.cpp, llama-cpp-python, Ollama, OpenAI).

:class:`RemoteChat` is ``langchain_openai.ChatOpenAI`` with what a game needs from a server that
is not the embedded model:

* **Requests every server reads.** The reply cap goes out as ``max_tokens`` (langchain-openai
  renames it ``max_completion_tokens``, which llama-cpp-python's server ignores, so generation ran
  unbounded); only ``api.openai.com`` gets ``max_completion_tokens``. No stop sequence is sent:
  no string is safe before the tagged line (a preamble, a ``<think>`` block, the invited thought),
  and after it the grammar ends decoding or the cap bounds it.
* **Structured outputs.** The reply format the local model decodes under
  (:class:`mas_agents.grammar.ReplyFormat`) is sent in the dialect the server speaks: ``gbnf``
  (llama.cpp / llama-cpp-python: a ``grammar`` field), ``vllm`` (``structured_outputs.grammar``),
  ``sglang`` (``ebnf``), ``json`` (``response_format`` JSON schema; the object is rendered back into
  the tagged lines) or ``prompt`` (nothing: the format is only in the prompt). ``structured="auto"``
  probes the endpoint once per base URL with a grammar that forces an improbable string, and
  caches the first dialect the server demonstrably applied. The strict parser and the
  re-prompt-once rule are unchanged whatever the dialect.
* **Context windows.** Read once per base URL from ``GET /models`` (``max_model_len``: vLLM,
  SGLang; ``meta.n_ctx`` / ``meta.n_ctx_train``: llama.cpp) or from ``--context-window``; each
  prompt's size is estimated conservatively (UTF-8 bytes over the smallest bytes-per-token ratio
  the server's own ``usage`` has shown, 2.5 before any) and the reply cap is lowered to fit (down
  to :data:`MIN_FIT_TOKENS`; the server has the last word). A server's context-length rejection
  (HTTP 400) becomes :class:`~mas_agents.errors.ContextOverflowError`, except that a prompt that
  fits with a smaller cap is asked once more with the room the server says is left. A rejection
  that does not give the context size says so (prompt size, reply cap, the server's words) and
  invents no limit.
* **Start-up probes are as fault-tolerant as any call.** The dialect probe (one
  ``POST /chat/completions`` per dialect tried) and the context-window reads (``GET /models``,
  ``GET /props``) each get up to :data:`PROBE_TRIES` tries under the rule of gameplay calls
  (:meth:`mas_agents.accounting.AccountedModel.chat`): a timeout, a dropped or refused connection,
  a 5xx, 408/409/429, or a 200 that is not a completion (not JSON, an HTML error page, no or empty
  ``choices``) is tried again after ``PROBE_BACKOFF_S * 2**k`` seconds, or a 429's ``Retry-After``
  if longer. Another 4xx is an answer: the dialect is "rejected", the context window "not
  reported". Only a probe request that fails every try stops the run, with
  :class:`~mas_agents.errors.ModelUnavailable` naming the base URL, the request, the number of tries
  and the last fault in one line ("model server URL is unreachable: ..." when that fault was a
  connection, else "... is not ready: ..."); the CLI prints it as one ``error:`` line, exit 3.
  Exception: ``GET /models`` or ``/props`` whose tries include a 200 that is not JSON leaves the
  context window unknown (``config.json`` says so) instead of stopping. A failed probe caches
  nothing: the next call probes again.
* **Concurrency.** One :class:`EndpointLimiter` per base URL, shared by every game, tournament
  cell, evaluation and ablation cell of the process: at most ``max_connections`` requests in
  flight; ``adaptive`` halves the limit on a 429 and adds one back after 20 successes. It counts
  requests in flight and calls/s for progress lines (:func:`activity`). Each base URL has one
  pool for chat completions (:meth:`Endpoint.direct`: ``http.client`` connections for a plain
  ``http://`` server, urllib3's pool for TLS or a proxy) and one SDK client pool for probes
  (:meth:`Endpoint.http_client`), each keeping as many idle keep-alive connections as the cap
  lets be in flight.
* **Several servers for one model.** ``OPENAI_BASE_URL`` may list several comma-separated base
  URLs (:func:`parse_base_urls`): a :class:`ReplicaSet` sends each request to the replica with the
  fewest in flight, each with its own limiter, probes and context window, and passes over one that
  cannot be reached while another can (see the class).
* **The request path.** The payload is langchain-openai's, posted over one pool per
  endpoint (:class:`DirectPost`, :meth:`RemoteChat._request`) with the SDK client's headers, key,
  timeout and error classes, or, for an SDK client whose key comes from a provider, with the SDK
  client's ``post``: the same JSON, headers, errors and reply as ``chat.completions.create``, at
  a third of its client CPU (``benchmarks/results/engine_choice.md``). Probes go through the SDK.

Process-wide settings (:func:`configure`) come from the CLI options ``--structured``,
``--context-window``, ``--max-connections`` and ``--adaptive-connections``; :func:`endpoint_report`
is what ``config.json`` records.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import io
import json
import logging
import re
import socket
import struct
import sys
import threading
import time
import weakref
from dataclasses import asdict, dataclass
from typing import Any, Callable
from urllib.parse import urlparse

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_openai import ChatOpenAI
from pydantic import Field

from mas_agents import accounting, jsonl
from mas_agents.accounting import StopRequested, _is_unreachable, is_transient_error, message_text, retry_after_s
from mas_agents.errors import ContextOverflowError, MalformedResponse, ModelUnavailable

log = logging.getLogger(__name__)

__all__ = ["STRUCTURED_MODES", "DIALECTS", "RemoteSettings", "configure", "settings", "EndpointLimiter",
           "Endpoint", "endpoint", "ReplicaSet", "replica_set", "parse_base_urls", "RemoteChat", "MalformedResponse", "activity", "endpoint_report", "parallel_calls", "auto_concurrency",
           "context_error_numbers"]

#: ``--structured`` values: ``grammar`` = whichever grammar field the server applies (probed).
STRUCTURED_MODES = ("auto", "grammar", "json", "prompt")
#: Dialects a server may speak, in the order ``auto`` tries them.
DIALECTS = ("gbnf", "vllm", "sglang", "json", "prompt")
GRAMMAR_DIALECTS = ("gbnf", "vllm", "sglang")
#: The string the probe grammar forces: no model says it by chance.
PROBE_TEXT = "zq-7"
#: Smallest reply cap the context fitting lowers a call to before giving up (tokens): a vote
#: with no thought needs about a dozen.
MIN_FIT_TOKENS = 16
#: Bytes per token assumed before the server's usage has shown the real ratio (English BPE text
#: is about 4, Chinese about 2 to 3: 2.5 over-counts English, so prompts are never under-counted).
START_BYTES_PER_TOKEN = 2.5
#: Tokens added per message for the chat template (role markers).
TEMPLATE_TOKENS_PER_MESSAGE = 8
#: Prompts shorter than this (UTF-8 bytes) teach nothing about the bytes-per-token ratio.
LEARN_MIN_BYTES = 400
#: Seconds a replica (one of several base URLs serving the model, :class:`ReplicaSet`) that could
#: not be reached -- connection refused or broken, a timeout, a start-up probe that failed every
#: try -- is passed over while another replica is up; after it, requests try it again.
REPLICA_DOWN_S = 5.0


@dataclass
class RemoteSettings:
    """Process-wide settings for OpenAI-compatible endpoints (set once by the CLI).

    Attributes:
        structured: ``auto`` | ``grammar`` | ``json`` | ``prompt`` (:data:`STRUCTURED_MODES`).
        context_window: tokens, when the server does not report its own (``--context-window``).
        max_connections: requests in flight per base URL (``--max-connections``).
        adaptive: halve the limit on a 429, grow it back by one after 20 successes.
    """

    structured: str = "auto"
    context_window: int | None = None
    max_connections: int = 8
    adaptive: bool = False

    def __post_init__(self) -> None:
        if self.structured not in STRUCTURED_MODES:
            raise ValueError(f"--structured must be one of {', '.join(STRUCTURED_MODES)}, got {self.structured!r}")
        if self.max_connections < 1:
            raise ValueError(f"--max-connections must be >= 1, got {self.max_connections}")
        if self.context_window is not None and self.context_window < 64:
            raise ValueError(f"--context-window must be >= 64 tokens, got {self.context_window}")


_SETTINGS = RemoteSettings()
_REGISTRY: dict[str, "Endpoint"] = {}
_REGISTRY_LOCK = threading.Lock()


def configure(**kwargs: Any) -> RemoteSettings:
    """Set the process-wide :class:`RemoteSettings` (fields by name) and forget every endpoint's
    cached probe, limiter and counters, so the next call starts from the new settings.

    Raises:
        ValueError: a value out of range (see :class:`RemoteSettings`).
    """
    global _SETTINGS
    _SETTINGS = RemoteSettings(**{**asdict(_SETTINGS), **kwargs})
    with _REGISTRY_LOCK:
        _REGISTRY.clear()
        _REPLICA_SETS.clear()
    return _SETTINGS


def settings() -> RemoteSettings:
    """The process-wide :class:`RemoteSettings`."""
    return _SETTINGS


class EndpointLimiter:
    """At most ``limit`` requests in flight (a counting semaphore whose limit may change).

    Args:
        limit: the most requests in flight (>= 1).
        adaptive: on :meth:`rate_limited` halve the current limit (never below 1; once per
            generation: not again before ``limit`` more requests have completed); after 20
            successes in a row at a lowered limit, raise it by one, up to ``limit``.

    Use as a context manager around one request. Counters: :attr:`in_flight`, :attr:`completed`,
    :meth:`calls_per_s` (completed requests over the seconds since the first one started).
    """

    def __init__(self, limit: int, adaptive: bool = False):
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self.max_limit = limit
        self.limit = limit
        self.adaptive = adaptive
        self.in_flight = 0
        self.peak = 0
        self.completed = 0
        self.started: float | None = None
        self._ok_streak = 0
        self._cut_at = -1            # requests completed at the last cut (-1: none yet)
        self._cond = threading.Condition()
        self.on_release: Callable[[], None] | None = None   # set by a ReplicaSet

    def __enter__(self) -> "EndpointLimiter":
        with self._cond:
            while self.in_flight >= self.limit:
                self._cond.wait()
            self._take()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def _take(self) -> None:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        if self.started is None:
            self.started = time.monotonic()

    def try_acquire(self) -> bool:
        """Take a slot if one is free now (True), else take nothing (False); never waits. A slot
        taken here is given back with :meth:`release`."""
        with self._cond:
            if self.in_flight >= self.limit:
                return False
            self._take()
            return True

    def release(self) -> None:
        """Give back a slot (the end of one request) and wake one waiter, and the replica set
        this endpoint belongs to, if any (:attr:`on_release`)."""
        with self._cond:
            self.in_flight -= 1
            self.completed += 1
            self._cond.notify()
        hook = self.on_release
        if hook is not None:
            hook()

    def rate_limited(self) -> None:
        """A 429 came back: in adaptive mode, halve the limit, at most once per generation of
        requests (a burst of 429s from the requests already in flight is one signal, not many)."""
        if not self.adaptive:
            return
        with self._cond:
            if self.completed - self._cut_at < self.limit and self._cut_at >= 0:
                return
            self.limit = max(1, self.limit // 2)
            self._cut_at = self.completed
            self._ok_streak = 0
            log.warning("429 from the server: at most %d requests in flight now", self.limit)

    def succeeded(self) -> None:
        """A reply came back: in adaptive mode, grow a lowered limit by one after 20 of these."""
        if not self.adaptive:
            return
        with self._cond:
            self._ok_streak += 1
            if self.limit < self.max_limit and self._ok_streak >= 20:
                self.limit += 1
                self._ok_streak = 0
                self._cond.notify()

    def calls_per_s(self) -> float:
        """Completed requests per second since the first one started (0.0 before any)."""
        if self.started is None or not self.completed:
            return 0.0
        return self.completed / max(time.monotonic() - self.started, 1e-9)


def _server_root(base_url: str) -> str:
    """``http://h:p/v1`` -> ``http://h:p`` (llama.cpp serves ``/props`` at the root)."""
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


#: callback manager (a graph step's) -> whether the calls under it configure no handler
#: (:meth:`RemoteChat._memo_quiet`); an entry goes with its manager
_QUIET: "weakref.WeakKeyDictionary[Any, bool]" = weakref.WeakKeyDictionary()


@functools.lru_cache(maxsize=256)
def is_openai_api(base_url: str | None) -> bool:
    """Whether ``base_url`` is OpenAI's own API (unset counts: the client's default is OpenAI).
    Cached: asked for every request, and a URL parse is a few microseconds."""
    return not base_url or (urlparse(base_url).hostname or "").endswith("api.openai.com")


def _plain_key_client(client: Any) -> bool:
    """Whether an openai SDK client authenticates with a plain API key (or none): no provider
    runtime, key provider or workload identity that rewrites requests, which only the SDK's own
    request path applies."""
    return all(getattr(client, a, None) is None for a in ("_provider_runtime", "_api_key_provider",
                                                            "workload_identity"))


class _BlockingSocketIO(socket.SocketIO):
    """The raw reader of a reply on a blocking socket with a kernel receive timeout
    (``SO_RCVTIMEO``): a read the kernel timed out raises ``TimeoutError`` (``socket.SocketIO``
    returns None for it, which ``http.client`` would read as a closed connection)."""

    def readinto(self, b: Any) -> int:
        n = super().readinto(b)
        if n is None:
            raise TimeoutError("timed out")
        return n


class _ReplySocket:
    """What ``http.client.HTTPResponse`` reads a reply from: ``makefile`` over
    :class:`_BlockingSocketIO`."""

    def __init__(self, sock: socket.socket):
        self._sock = sock

    def makefile(self, mode: str, *args: Any, **kwargs: Any) -> Any:
        # as socket.makefile does: the reader holds the socket open until it is closed itself
        # (http.client closes the connection's socket before the body of a "Connection: close"
        # reply is read)
        self._sock._io_refs += 1   # type: ignore[attr-defined]
        return io.BufferedReader(_BlockingSocketIO(self._sock, "rb"))


class _BlockingReply(http.client.HTTPResponse):
    def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any):
        super().__init__(_ReplySocket(sock), *args, **kwargs)  # type: ignore[arg-type]


class _BlockingConnection(http.client.HTTPConnection):
    """``http.client.HTTPConnection`` over a blocking socket whose read and write timeouts are
    the kernel's (``SO_RCVTIMEO`` / ``SO_SNDTIMEO``) once connected (:func:`_kernel_timeouts`),
    and whose :meth:`post` writes a request's head and body in one ``sendall`` (``request``
    writes them in two: each write drops the interpreter lock, and at many games in flight
    each drop costs a wait to take it back)."""

    response_class = _BlockingReply
    _hold_head = False
    _head: bytes | None = None

    def post(self, path: str, data: bytes, headers: dict) -> None:
        """``request("POST", path, body=data, headers=headers)`` in one write."""
        self._hold_head, self._head = True, None
        try:
            self.request("POST", path, body=data, headers=headers)
        finally:
            self._hold_head = False
        if self._head is not None:          # no body came after the head
            head, self._head = self._head, None
            super().send(head)

    def send(self, data: Any) -> None:
        if self._hold_head:                 # the head: held for the body's write
            self._hold_head, self._head = False, bytes(data)
            return
        if self._head is not None:
            data, self._head = self._head + bytes(data), None
        super().send(data)


def _kernel_timeouts(sock: socket.socket, seconds: float | None) -> bool:
    """Make ``sock`` blocking with ``seconds`` as its kernel send and receive timeouts (None: no
    limit); False, with ``sock`` left as it was, where the platform takes no ``timeval`` for them
    (Windows) or ``seconds`` is not above zero (0 would mean no limit to the kernel).

    Why: a Python socket with a timeout polls before every send and receive, and each call drops
    the interpreter lock. At 64 games in flight a thread that drops the lock may wait for it again
    behind the others, even after a poll that returns at once (``benchmarks/results/
    throughput.md``, session 17). With the kernel's timeouts a request is one ``sendall`` and
    its reply usually one ``recv``; the limits mean what the socket timeout meant: per read or
    write, not per request.
    """
    if seconds is not None and (seconds <= 0 or not hasattr(socket, "SO_RCVTIMEO") or sys.platform == "win32"):
        return False
    if seconds is not None:
        whole, micro = divmod(max(1, round(seconds * 1e6)), 1_000_000)
        tv = struct.pack("@ll", whole, micro)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv)
    sock.settimeout(None)
    return True


class _PlainHTTPPool:
    """Idle keep-alive ``http.client`` connections to one plain-HTTP origin (no TLS, no proxy),
    at most ``maxsize`` kept, newest reused first; for :class:`DirectPost`.

    Why not urllib3's pool here: the same request over the stdlib ``http.client`` connection
    urllib3 itself wraps costs 0.49 ms of client CPU against 0.85 through urllib3's
    ``PoolManager`` and 0.77 through its ``HTTPConnectionPool`` (its response object, header
    containers, timeout and retry objects; a zero-latency stub, 2,000 requests each, interleaved,
    one run: ``benchmarks/results/throughput.md``, session 16), about a tenth of a WiS call's
    client CPU. The parsing, framing and sockets stay the standard library's; what is ours is the
    list of idle connections and urllib3's own liveness check
    (``urllib3.util.wait_for_read``) before one is reused, as urllib3 does it.
    """

    def __init__(self, host: str, port: int, maxsize: int):
        self.host = host
        self.port = port
        self.maxsize = max(1, maxsize)
        self._idle: list[Any] = []
        self._lock = threading.Lock()

    def _take(self) -> Any:
        """An idle connection the server has not closed, or None."""
        from urllib3.util import wait_for_read

        with self._lock:
            while self._idle:
                conn = self._idle.pop()
                # readable while idle = the server closed it (or sent garbage): not reusable
                if conn.sock is not None and not wait_for_read(conn.sock, timeout=0.0):
                    return conn
                conn.close()
        return None

    def _give(self, conn: Any) -> None:
        with self._lock:
            if len(self._idle) < self.maxsize:
                self._idle.append(conn)
                return
        conn.close()

    def post(self, path: str, data: bytes, headers: dict, connect_s: float | None,
             read_s: float | None) -> tuple[int, list[tuple[str, str]], bytes]:
        """POST ``data`` to ``path``; returns ``(status, headers, body)``.

        Raises:
            TimeoutError: the connect took over ``connect_s``, or a read or write over ``read_s``
                seconds.
            OSError: refused, reset or broken connection.
            http.client.HTTPException: a reply that is not HTTP/1.x (the connection is closed).
        """
        conn = self._take()
        if conn is None:
            conn = _BlockingConnection(self.host, self.port, timeout=connect_s)
            conn.connect()
            # as urllib3 does: a request's last segment is not held back waiting for an ACK
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if not _kernel_timeouts(conn.sock, read_s):
                conn.sock.settimeout(read_s)      # (its reply reader works over either)
        try:
            conn.post(path, data, headers)
            resp = conn.getresponse()
            body = resp.read()
        except BlockingIOError as exc:       # the kernel's send timeout (SO_SNDTIMEO)
            conn.close()
            raise TimeoutError("timed out") from exc
        except BaseException:
            conn.close()
            raise
        if resp.will_close:
            conn.close()
        else:
            self._give(conn)
        return resp.status, resp.getheaders(), body


class DirectPost:
    """Posts a chat-completion body directly for an SDK client with a plain key.

    The openai SDK's request path (building its request options and an ``httpx2`` request, the
    client's send, wrapping the response) costs 2.1-3.4 ms of client CPU per request at 64-256
    in flight, urllib3's pool 0.74-0.77 ms (``benchmarks/results/engine_choice.md``), the
    standard library's ``http.client`` about 0.5 ms. So a plain ``http://`` server reached without
    a proxy (a local or cluster vLLM, SGLang or llama.cpp server: where the client's CPU per call
    matters) is posted through ``http.client`` connections kept alive by :class:`_PlainHTTPPool`;
    ``https://`` and proxied servers (hosted APIs: TLS, proxies, seconds per call) through
    urllib3's pool. This keeps what the SDK gives beyond transport: the headers and key of the
    client (its ``default_headers`` and ``auth_headers``), its timeout, and its error classes: a
    non-2xx reply becomes the exception the SDK raises for it
    (``client._make_status_error_from_response``, the SDK's own mapping from status to
    ``BadRequestError``, ``RateLimitError``, ...); a refused or broken connection
    ``openai.APIConnectionError``, a connect or read timeout ``openai.APITimeoutError``, as the
    SDK raises them. A 2xx reply is returned as its parsed JSON (``dict``), or as text when it is
    not JSON (which the caller reports as malformed).

    Proxies: the ``http(s)_proxy`` / ``no_proxy`` environment, as ``httpx2`` reads it; TLS with
    certifi's certificates, as ``httpx2`` verifies them.
    """

    def __init__(self, base_url: str, maxsize: int):
        import urllib.parse
        import urllib.request

        import urllib3
        kwargs: dict[str, Any] = {"maxsize": maxsize, "block": False}
        try:
            import certifi
            kwargs["ca_certs"] = certifi.where()
        except ImportError:  # pragma: no cover - httpx2 depends on it
            pass
        parts = urllib.parse.urlsplit(base_url)
        proxy = urllib.request.getproxies().get(parts.scheme)
        proxied = bool(proxy) and not urllib.request.proxy_bypass(parts.hostname or "")
        #: the http.client pool of a plain-HTTP origin without a proxy, else None
        self.plain: _PlainHTTPPool | None = None
        if parts.scheme == "http" and not proxied and parts.hostname:
            self.plain = _PlainHTTPPool(parts.hostname, parts.port or 80, maxsize)
        self._origin = (parts.scheme, parts.hostname, parts.port)
        self._paths: dict[str, str] = {}
        if proxied:
            self.pool = urllib3.ProxyManager(proxy, **kwargs)
        else:
            self.pool = urllib3.PoolManager(**kwargs)

    def _plain_path(self, url: str) -> str | None:
        """The request target of ``url`` when it is this origin's (the plain pool serves it),
        else None."""
        path = self._paths.get(url)
        if path is None:
            import urllib.parse
            p = urllib.parse.urlsplit(url)
            if (p.scheme, p.hostname, p.port) != self._origin:
                return None
            path = self._paths[url] = (p.path or "/") + (f"?{p.query}" if p.query else "")
        return path

    def post(self, client: Any, path: str, body: dict) -> Any:
        """POST ``body`` as JSON to ``client.base_url`` + ``path``; see the class docstring.

        Raises:
            openai.APIStatusError (a subclass by status), openai.APIConnectionError,
            openai.APITimeoutError; json.JSONDecodeError for a JSON reply that does not parse.
        """
        import httpx2
        import openai
        import urllib3
        from openai import Omit

        url = str(client.base_url).rstrip("/") + path
        headers = {k: v for k, v in {**client.default_headers, **client.auth_headers}.items()
                   if not isinstance(v, Omit)}
        t = client.timeout
        connect_s, read_s = (t.connect, t.read) if isinstance(t, httpx2.Timeout) else (t, t)
        data = jsonl.body(body)
        target = self._plain_path(url) if self.plain is not None else None
        try:
            if target is not None:
                status, got, raw = self.plain.post(target, data, headers, connect_s, read_s)
                ctype = next((v for k, v in got if k.lower() == "content-type"), "*")
            else:
                r = self.pool.request("POST", url, body=data, headers=headers,
                                      timeout=urllib3.Timeout(connect=connect_s, read=read_s), retries=False,
                                      redirect=False)
                status, got, raw, ctype = r.status, list(r.headers.items()), r.data, r.headers.get("content-type", "*")
        except urllib3.exceptions.NewConnectionError as exc:   # refused, no route: before its timeout base
            raise openai.APIConnectionError(request=httpx2.Request("POST", url)) from exc
        except (TimeoutError, urllib3.exceptions.TimeoutError) as exc:
            raise openai.APITimeoutError(request=httpx2.Request("POST", url)) from exc
        except (urllib3.exceptions.HTTPError, http.client.HTTPException, OSError) as exc:
            raise openai.APIConnectionError(request=httpx2.Request("POST", url)) from exc
        if not 200 <= status < 300:
            response = httpx2.Response(status, headers=got, content=raw, request=httpx2.Request("POST", url))
            raise client._make_status_error_from_response(response)
        if not ctype.split(";")[0].strip().endswith("json"):
            return raw.decode("utf-8", "replace")
        return jsonl.loads(raw)


class Endpoint:
    """What is known about one base URL: its limiter, structured dialect, context window and
    the bytes-per-token ratio its usage reports have shown. One per base URL per process
    (:func:`endpoint`); probes run at most once, under a lock."""

    def __init__(self, base_url: str, cfg: RemoteSettings):
        self.base_url = base_url
        self.cfg = cfg
        self.limiter = EndpointLimiter(cfg.max_connections, cfg.adaptive)
        self._lock = threading.Lock()
        self._dialect: str | None = None
        self._probe_note = ""
        self._ctx: tuple[int | None, str] | None = None
        self._bytes_per_token = START_BYTES_PER_TOKEN
        self._ratio_seen = False
        self._client_lock = threading.RLock()
        self._http: Any = None
        self._clients: dict[int, tuple[Any, Any]] = {}   # id(model's root client) -> (it, its copy here)
        self._direct: DirectPost | None = None
        #: a replica passed over until this time.monotonic() (see :class:`ReplicaSet`), and why
        self.down_until = 0.0
        self.down_reason = ""

    # -- HTTP --------------------------------------------------------------------------------
    def http_client(self) -> Any:
        """This endpoint's HTTP client for the openai SDK (its ``httpx2`` client and defaults),
        shared by every model of the process that calls it: probes, and the chat completions of
        an SDK client whose key comes from a provider (the others go through :meth:`direct`). Its
        pool keeps up to ``max_connections`` idle keep-alive connections and sets no cap of its
        own (the limiter is the cap; probes run beside it)."""
        with self._client_lock:
            if self._http is None:
                import httpx2
                from openai._base_client import SyncHttpxClientWrapper

                limits = httpx2.Limits(max_connections=None, max_keepalive_connections=self.cfg.max_connections)
                kwargs: dict[str, Any] = {"limits": limits}
                opts = _default_socket_options()
                if opts:   # langchain-openai's TCP keep-alive options, as its own client sets them
                    kwargs["transport"] = httpx2.HTTPTransport(limits=limits, socket_options=list(opts))
                # the SDK's own wrapper of its default client: closed (its sockets too) when the
                # endpoint is dropped, e.g. by configure()
                self._http = SyncHttpxClientWrapper(**kwargs)
            return self._http

    def client_for(self, model: "RemoteChat") -> Any:
        """``model``'s openai SDK client (its key, headers, timeout, retries) aimed at this base URL
        over :meth:`http_client`; one copy per model client, made on first use."""
        root = model.root_client
        hit = self._clients.get(id(root))
        if hit is None or hit[0] is not root:
            with self._client_lock:
                hit = self._clients.get(id(root))
                if hit is None or hit[0] is not root:
                    hit = self._clients[id(root)] = (root, root.copy(base_url=self.base_url,
                                                                     http_client=self.http_client()))
        return hit[1]

    def direct(self) -> DirectPost:
        """This endpoint's :class:`DirectPost` (its pools keep ``max_connections`` idle connections),
        made on first use."""
        if self._direct is None:
            with self._client_lock:
                if self._direct is None:
                    self._direct = DirectPost(self.base_url, self.cfg.max_connections)
        return self._direct

    # -- replica faults ------------------------------------------------------------------------
    def mark_down(self, why: str) -> None:
        """Pass this replica over for :data:`REPLICA_DOWN_S` seconds (it could not be reached)."""
        self.down_until = time.monotonic() + REPLICA_DOWN_S
        self.down_reason = why

    def is_up(self, now: float | None = None) -> bool:
        """Whether this replica is not being passed over (see :meth:`mark_down`)."""
        return (now if now is not None else time.monotonic()) >= self.down_until

    # -- context window ----------------------------------------------------------------------
    def context_window(self, model: "RemoteChat") -> tuple[int | None, str]:
        """``(tokens or None, source)``: the server's own report, else ``--context-window``,
        else ``(None, "unknown (...)")`` (the source says why: the server reports none, or its
        ``GET /models`` answered no JSON). A smaller ``--context-window`` than the server's wins
        (it is the user's own limit). Read once per base URL; nothing is cached on a failure.

        Raises:
            ModelUnavailable: ``GET /models`` (or ``/props``) failed every one of its
                :data:`PROBE_TRIES` tries (see :func:`_http_get_json`).
        """
        with self._lock:
            if self._ctx is None:
                reported, where = _reported_context(model, self)
                mine = self.cfg.context_window
                if reported and (mine is None or reported <= mine):
                    self._ctx = (reported, where)
                elif mine is not None:
                    self._ctx = (mine, "--context-window" + (f" (smaller than {where}: {reported})" if reported else ""))
                else:
                    self._ctx = (None, f"unknown ({where or 'the server reports none'}; pass --context-window)")
            return self._ctx

    def estimate_tokens(self, messages: list[BaseMessage]) -> int:
        """A prompt's size in tokens, over-counted on purpose (see the module docstring)."""
        n_bytes = sum(len(message_text(m.content).encode("utf-8")) for m in messages)
        return int(n_bytes / self._bytes_per_token) + 1 + TEMPLATE_TOKENS_PER_MESSAGE * len(messages)

    def learn(self, messages: list[BaseMessage], prompt_tokens: int | None) -> None:
        """Take the server's prompt token count of ``messages`` into the bytes-per-token ratio
        (the smallest ratio seen is kept, so the estimate stays an over-count)."""
        n_bytes = sum(len(message_text(m.content).encode("utf-8")) for m in messages)
        text_tokens = (prompt_tokens or 0) - TEMPLATE_TOKENS_PER_MESSAGE * len(messages)
        if n_bytes < LEARN_MIN_BYTES or text_tokens <= 0:   # too short to say anything about the text
            return
        ratio = n_bytes / text_tokens
        with self._lock:
            if not self._ratio_seen or ratio < self._bytes_per_token:
                self._bytes_per_token = max(ratio, 0.5)
                self._ratio_seen = True

    # -- structured outputs ------------------------------------------------------------------
    def dialect(self, model: "RemoteChat") -> str:
        """The structured-output dialect to use (probed once for ``auto`` and ``grammar``; a probe
        that fails is not cached, so the next call probes again).

        Raises:
            ModelUnavailable: a dialect's probe request failed every one of its
                :data:`PROBE_TRIES` tries (see :func:`_probe`).
        """
        with self._lock:
            if self._dialect is None:
                mode = self.cfg.structured
                if mode in ("prompt", "json"):
                    self._dialect, self._probe_note = mode, f"--structured {mode}"
                else:
                    tries = GRAMMAR_DIALECTS if mode == "grammar" else DIALECTS[:-1]
                    self._dialect, self._probe_note = _probe(model, self, tries)
                    if mode == "grammar" and self._dialect == "prompt":
                        log.warning("%s applied none of the grammar fields (%s); the format is in the "
                                    "prompt only", self.base_url, self._probe_note)
                log.info("%s: structured outputs: %s (%s)", self.base_url, self._dialect, self._probe_note)
            return self._dialect

    def report(self, model: "RemoteChat") -> dict:
        """What ``config.json`` records for this endpoint (probing it if not done yet)."""
        ctx, src = self.context_window(model)
        return {"base_url": self.base_url, "structured_requested": self.cfg.structured,
                "structured": self.dialect(model), "structured_probe": self._probe_note,
                "context_window": ctx, "context_window_source": src,
                "max_connections": self.cfg.max_connections, "adaptive_connections": self.cfg.adaptive}


def endpoint(base_url: str | None) -> Endpoint:
    """The process-wide :class:`Endpoint` of ``base_url`` (``None``: OpenAI's API)."""
    key = (base_url or "https://api.openai.com/v1").rstrip("/")
    with _REGISTRY_LOCK:
        ep = _REGISTRY.get(key)
        if ep is None:
            ep = _REGISTRY[key] = Endpoint(key, _SETTINGS)
        return ep


def parse_base_urls(text: str | None) -> list[str]:
    """The base URLs in ``OPENAI_BASE_URL``: one, or several comma-separated URLs serving the same
    model (replicas, :class:`ReplicaSet`), in the order given, trailing ``/`` dropped, repeats
    removed. ``None`` or blank: ``[]`` (OpenAI's API).

    Raises:
        ValueError: an entry that is not an ``http://`` or ``https://`` URL with a host (one line
            naming it).
    """
    out: list[str] = []
    for raw in (text or "").split(","):
        url = raw.strip().rstrip("/")
        if not url:
            continue
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"OPENAI_BASE_URL: {raw.strip()!r} is not an http(s) URL "
                             "(several servers of one model: comma-separated URLs)")
        if url not in out:
            out.append(url)
    return out


class ReplicaSet:
    """Several base URLs serving the same model, used as one.

    Each request goes to the replica with the fewest requests in flight among those with a free
    slot (on a tie, the one that has completed fewest; each replica keeps its own :class:`Endpoint`: its own ``--max-connections`` cap,
    limiter, probes, context window and connection pool); when every replica is at its cap the
    request waits for the first slot to free. A replica that could not be reached is passed over
    for :data:`REPLICA_DOWN_S` seconds (:meth:`Endpoint.mark_down`) while another is up, and the
    request goes on at once to the next one; only when every replica has failed the request does
    it fail, with the last replica's error (then :class:`mas_agents.accounting.AccountedModel`
    retries it as any call, and stops the run with its one-line error when they stay down).
    """

    def __init__(self, endpoints: list[Endpoint]):
        self.endpoints = endpoints
        self._cond = threading.Condition()
        for ep in endpoints:
            ep.limiter.on_release = self._released

    @property
    def base_urls(self) -> list[str]:
        """The replicas' base URLs, in the order given."""
        return [ep.base_url for ep in self.endpoints]

    def _released(self) -> None:
        with self._cond:
            self._cond.notify()

    def acquire(self, skip: set[str] | frozenset[str] = frozenset()) -> Endpoint | None:
        """Take a slot on the best replica not in ``skip`` (base URLs): an up replica with a free
        slot and the fewest in flight; when every replica not skipped is passed over, those too
        (the request has nowhere else to go). Waits while all candidates are at their cap.
        Returns the endpoint whose slot is held (give it back with its ``limiter.release()``),
        or None when every replica is in ``skip``."""
        with self._cond:
            while True:
                left = [ep for ep in self.endpoints if ep.base_url not in skip]
                if not left:
                    return None
                now = time.monotonic()
                up = [ep for ep in left if ep.is_up(now)] or sorted(left, key=lambda e: e.down_until)
                # fewest in flight; on a tie, fewest completed (one call at a time alternates)
                for ep in sorted(up, key=lambda e: (e.limiter.in_flight, e.limiter.completed)):
                    if ep.limiter.try_acquire():
                        return ep
                self._cond.wait(timeout=0.5)


_REPLICA_SETS: dict[tuple[str, ...], ReplicaSet] = {}


def replica_set(base_urls: list[str]) -> ReplicaSet:
    """The process-wide :class:`ReplicaSet` of ``base_urls`` (their :func:`endpoint` objects)."""
    key = tuple(u.rstrip("/") for u in base_urls)
    with _REGISTRY_LOCK:
        rs = _REPLICA_SETS.get(key)
        if rs is not None and all(_REGISTRY.get(u) is ep for u, ep in zip(key, rs.endpoints)):
            return rs
    eps = [endpoint(u) for u in key]
    with _REGISTRY_LOCK:
        rs = _REPLICA_SETS.get(key)
        if rs is None or any(a is not b for a, b in zip(rs.endpoints, eps)):
            rs = _REPLICA_SETS[key] = ReplicaSet(eps)
        return rs


def _default_socket_options() -> tuple:
    """The TCP keep-alive socket options langchain-openai sets on its own default client (``()``
    when it sets none, or this version has no such helper)."""
    try:
        from langchain_openai.chat_models._client_utils import _resolve_socket_options
        return tuple(_resolve_socket_options(None))
    except Exception:  # noqa: BLE001 - an optional nicety of the client, never a failure
        return ()


def _unwrap(model: Any) -> Any:
    """The chat model inside an accounted wrapper (its ``model``); a chat model itself as it is
    (a ``ChatOpenAI``'s own ``model`` attribute is its model name)."""
    return model if isinstance(model, RemoteChat) else getattr(model, "model", model)


def parallel_calls(model: Any) -> int:
    """How many calls a run should keep going at once for ``model`` (a spec or a model object):
    ``--max-connections`` for an OpenAI-compatible server (times the number of replicas when
    ``OPENAI_BASE_URL`` names several, :class:`ReplicaSet`), 1 for anything else (the embedded
    model serialises its calls on one lock, so more threads would only wait)."""
    m = _unwrap(model)
    if isinstance(m, RemoteChat):
        return _SETTINGS.max_connections * len(m.base_urls())
    if isinstance(m, str) and m.strip().startswith("openai:"):
        import os
        try:
            replicas = len(parse_base_urls(os.environ.get("OPENAI_BASE_URL"))) or 1
        except ValueError:
            replicas = 1                     # the model's construction says what is wrong
        return _SETTINGS.max_connections * replicas
    return 1


def auto_concurrency(models: list[Any]) -> int:
    """Games/cells a run plays at once by default: ``--max-connections`` when every model in
    ``models`` (specs or objects) is on an OpenAI-compatible server, else 1. An empty list (all
    seats are WiS-protocol agents) counts as remote."""
    return min((parallel_calls(m) for m in models), default=_SETTINGS.max_connections)


def activity() -> str:
    """``"12 in flight, 35.2 calls/s"`` over every endpoint used so far ('' when none)."""
    with _REGISTRY_LOCK:
        eps = list(_REGISTRY.values())
    if not eps:
        return ""
    return (f"{sum(e.limiter.in_flight for e in eps)} in flight, "
            f"{sum(e.limiter.calls_per_s() for e in eps):.1f} calls/s")


def endpoint_report(models: list[Any]) -> list[dict]:
    """:meth:`Endpoint.report` of every :class:`RemoteChat` among ``models`` (accounted wrappers
    are unwrapped; other models are skipped), one entry per base URL. A model on several
    replicas (:class:`ReplicaSet`) gives one entry per replica, each with ``replicas`` (every
    base URL of its set); a replica whose probes failed every try is recorded with
    ``unreachable`` (the one-line fault) and passed over, as long as another replica answered.

    Raises:
        ModelUnavailable: a probe of a single base URL, or of every replica of a set, failed
            every try.
    """
    out: dict[str, dict] = {}
    for m in models:
        m = _unwrap(m)
        if not isinstance(m, RemoteChat):
            continue
        urls = m.base_urls()
        faults = []
        for url in urls:
            if url in out:
                continue
            ep = endpoint(url)
            try:
                rep = ep.report(m)
            except ModelUnavailable as exc:
                if len(urls) == 1:
                    raise
                faults.append(exc)
                ep.mark_down(_one_line(exc))
                rep = {"base_url": url, "unreachable": _one_line(exc), "max_connections": ep.cfg.max_connections,
                       "adaptive_connections": ep.cfg.adaptive}
            if len(urls) > 1:
                rep["replicas"] = list(urls)
            out[url] = rep
        if faults and len(faults) == len(urls):
            raise _replicas_down(urls, list(zip(urls, faults))) from faults[-1]
    return list(out.values())


def _replicas_down(urls: list[str], faults: list[tuple[str, BaseException]]) -> ModelUnavailable:
    """The one-line stop when every replica of a set failed: all of them named, each one's fault."""
    return ModelUnavailable(f"model servers {', '.join(urls)} are unreachable (every replica failed: "
                            + "; ".join(f"{u}: {_one_line(f)}" for u, f in faults) + ")")


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

    A transient fault (:func:`mas_agents.accounting.is_transient_error`: timeouts, dropped or
    refused connections, 5xx, 408/409/429, a 200 that is not a completion or not JSON) is tried
    again, up to :data:`PROBE_TRIES` tries in all, after ``PROBE_BACKOFF_S * 2**k`` seconds (k = 0,
    1, ...) or what a 429's ``Retry-After`` asks if longer; anything else propagates at once.

    Raises:
        _ProbeFailed: every try met a transient fault (the caller decides what that means).
        StopRequested: Ctrl-C (:data:`mas_agents.accounting.STOP`) during a backoff.
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


# ---------------------------------------------------------------------------------------------
# the chat model


class RemoteChat(ChatOpenAI):
    """``ChatOpenAI`` for any OpenAI-compatible server (see the module docstring).

    Extra invoke kwarg: ``reply_format`` (a :class:`mas_agents.grammar.ReplyFormat`), turned into
    the server's structured-output fields. Built by :func:`mas_agents.llm.make_chat_model` for
    ``openai:<model>`` specs, with ``max_retries=0`` (retries are counted in
    :class:`mas_agents.accounting.AccountedModel`).

    Raises (from ``invoke``):
        ModelUnavailable: a start-up probe (dialect, context window) failed every try.
        ContextOverflowError: the prompt does not fit the context window (estimated before
            sending, or the server's 400).
        MalformedResponse: a 200 with no choices.
        openai.APIError subclasses: as the server answered (the caller retries the transient ones).
    """

    structured_dialect: str | None = Field(default=None, exclude=True)   # fixed dialect (tests); None = endpoint's
    #: several base URLs serving this model (:class:`ReplicaSet`; the first is ``openai_api_base``);
    #: None = ``openai_api_base`` alone
    replica_urls: list[str] | None = Field(default=None, exclude=True)

    def invoke(self, input: Any, config: Any = None, *, stop: list[str] | None = None, **kwargs: Any) -> Any:
        """langchain-core's ``invoke``, without its run bookkeeping when nobody listens.

        When the call's callback manager, configured exactly as ``BaseChatModel.generate`` does
        (the config's and this model's callbacks, tags and metadata, ``verbose``, LangSmith tracing
        from the environment or a tracing context), has no handler, the messages go straight to
        ``_generate_with_cache`` (the path ``generate`` takes: the cache, the rate limiter, the
        response metadata merge) and its message is returned; the run's start/end events, which
        no one would receive, are not built (0.4 ms of CPU a call: 1.4 -> 0.9 ms per request to a
        zero-latency stub). The message then has no ``lc_run-`` id. Otherwise, or with a ``run_id``
        or LangSmith's ``ls_structured_output_format``, it is ``BaseChatModel.invoke`` itself.

        Where ``_generate_with_cache`` would only call ``_generate`` and merge the generation's
        info into the message's ``response_metadata`` (no cache, global or the model's; no rate
        limiter; no streaming asked; ``output_version`` not ``"v1"``), :meth:`_plain_generate`
        does just that, without its per-call checks (an ``inspect.signature`` of ``_generate``
        among them). With the messages' conversion skipped for a list of messages with text
        content (which it returns unchanged), 4.7 % fewer instructions a Who-is-Spy call on a
        zero-latency stub (callgrind, ``benchmarks/results/throughput.md``, session 20).

        Whether a call configures a handler is asked once per graph step (:meth:`_memo_quiet`),
        not once per call: 4.0 % fewer instructions a Who-is-Spy call (session 21).
        """
        from langchain_core.callbacks import CallbackManager
        from langchain_core.runnables.config import ensure_config, var_child_runnable_config

        cfg = ensure_config(config)
        if cfg.get("run_id") is None and "ls_structured_output_format" not in kwargs:
            # a graph step's callback manager is the same object for every call the step makes
            # (a Who-is-Spy round's six descriptions, its six narrowed votes; ensure_config
            # hands out a copy of it): whether it configures a handler is asked once per step
            source = config if config is not None else var_child_runnable_config.get()
            parent = source.get("callbacks") if source else None
            memo = self._memo_quiet(parent)
            quiet = _QUIET.get(parent) if memo else None
            if quiet is None:
                quiet = not CallbackManager.configure(cfg.get("callbacks"), self.callbacks, self.verbose,
                                                      cfg.get("tags"), self.tags, cfg.get("metadata"),
                                                      self.metadata).handlers
                if memo:
                    _QUIET[parent] = quiet
            if quiet:
                if isinstance(input, list) and all(isinstance(m, BaseMessage) and isinstance(m.content, str)
                                                   for m in input):
                    # what the conversion below returns for them (the same messages; only a list
                    # content is normalized), without a ChatPromptValue validated around them
                    messages = list(input)
                else:
                    from langchain_core.language_models._utils import _normalize_messages
                    messages = _normalize_messages(self._convert_input(input).to_messages())
                if self._plain_call(kwargs):
                    return self._plain_generate(messages, stop, kwargs)
                return self._generate_with_cache(messages, stop=stop, **kwargs).generations[0].message
        return super().invoke(input, config, stop=stop, **kwargs)

    def _memo_quiet(self, parent: Any) -> bool:
        """Whether :meth:`invoke` may keep its answer to "does this call configure a callback
        handler?" for the rest of ``parent``'s life: ``parent`` is a callback manager (a graph
        step's: LangGraph makes one per task), and this model adds no callbacks and is not
        verbose, so the answer depends on that manager's handlers, which a step does not
        change, and on LangSmith tracing and langchain-core's debug switch, taken as they are
        when the step's first call is made. A list of callbacks or none (a call outside a
        graph) is configured every call."""
        return isinstance(parent, BaseCallbackManager) and not self.callbacks and not self.verbose

    def _plain_call(self, kwargs: dict) -> bool:
        """True when langchain-core's ``_generate_with_cache`` (langchain-core 1.x) would do
        nothing for this call but ``_generate`` and the metadata merge: the model's ``cache`` is
        False, or None with no global cache set; no ``rate_limiter``; no streaming (neither
        ``stream`` in ``kwargs`` nor ``streaming=True``; no handler exists here); ``output_version``
        is not ``"v1"`` (which rewrites the content into blocks)."""
        from langchain_core.globals import get_llm_cache

        if self.cache is not False and (self.cache is not None or get_llm_cache() is not None):
            return False
        if self.rate_limiter is not None or kwargs.get("stream") or self.output_version == "v1":
            return False
        return not ("streaming" in self.model_fields_set and self.streaming is True)

    def _plain_generate(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict) -> BaseMessage:
        """``_generate`` and the message of its one generation, its ``response_metadata``
        merged as langchain-core merges it (the generation's info but its gateway key, then the
        message's own metadata, under the result's ``llm_output``)."""
        from langchain_core.language_models.chat_models import _gen_info_and_msg_metadata

        result = self._generate(messages, stop=stop, run_manager=None, **kwargs)
        for generation in result.generations:
            generation.message.response_metadata = _gen_info_and_msg_metadata(generation)
        message = result.generations[0].message
        if len(result.generations) == 1 and result.llm_output is not None:
            message.response_metadata = {**result.llm_output, **message.response_metadata}
        return message

    def base_urls(self) -> list[str]:
        """The base URLs this model's requests go to: its replicas, else its one base URL
        (OpenAI's API when unset)."""
        if self.replica_urls:
            return list(self.replica_urls)
        return [(self.openai_api_base or "https://api.openai.com/v1").rstrip("/")]

    def endpoint(self) -> Endpoint:
        """This model's :class:`Endpoint` (by base URL; with replicas, the first one's)."""
        return endpoint(self.base_urls()[0])

    def replicas(self) -> ReplicaSet | None:
        """The :class:`ReplicaSet` of this model's base URLs, or None with a single one."""
        urls = self.base_urls()
        return replica_set(urls) if len(urls) > 1 else None

    def constrain(self, fmt: Any) -> dict:
        """Invoke kwargs that constrain a reply to ``fmt`` (a ReplyFormat)."""
        return {"reply_format": fmt}

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if not is_openai_api(self.openai_api_base) and "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        return payload

    def _extra(self, fmt: Any, dialect: str) -> dict:
        """The extra_body fields of one request under ``dialect``. Never a stop sequence: a
        preamble, a reasoning model's <think> block or the thought the prompt invites may hold
        any line break before the tagged line; the cap bounds length."""
        if fmt is None or dialect == "prompt":
            return {}
        if dialect == "gbnf":
            return {"grammar": fmt.gbnf()}
        if dialect == "vllm":
            return {"structured_outputs": {"grammar": fmt.gbnf()}}
        if dialect == "sglang":
            return {"ebnf": fmt.gbnf()}
        if dialect == "json":
            return {"response_format": {"type": "json_schema", "json_schema": {
                "name": f"{fmt.request.kind}_reply", "strict": True, "schema": fmt.schema()}}}
        raise ValueError(f"unknown structured dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")

    def _request(self, ep: Endpoint, messages: list[BaseMessage], stop: list[str] | None, run_manager: Any,
                 kwargs: dict) -> ChatResult:
        """One chat completion at ``ep``: the payload langchain-openai builds, posted directly
        (:class:`DirectPost`: the SDK client's headers, key, timeout and error classes kept) when
        the model's SDK client has a plain key, else through the SDK client itself
        (``client.post``, not ``chat.completions.create``, which walks every request's parameters
        against their TypedDicts); the reply, read as a dict, becomes a ``ChatResult`` as
        langchain-openai makes it, and its errors the exceptions langchain-openai raises.
        Streaming, a top-level ``response_format`` or the Responses API (never used by our calls)
        go through langchain-openai itself."""
        import openai
        from langchain_openai.chat_models.base import _handle_openai_api_error, _handle_openai_bad_request
        from openai._base_client import make_request_options

        self._ensure_sync_client_available()
        payload = self._get_request_payload(messages, stop=stop, **kwargs)
        if payload.get("stream") or "response_format" in payload or self._use_responses_api(payload):
            if self.replicas() is not None:
                raise ValueError("streaming, a top-level response_format or the Responses API is not "
                                 "supported with several base URLs")
            return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
        extra = payload.pop("extra_body", None)
        client = ep.client_for(self)
        try:
            if _plain_key_client(client):
                # the body posted directly, the SDK's headers, key, timeout and error classes kept
                # (DirectPost: 0.5-0.8 ms of CPU a request against 2.1-3.4 through the SDK)
                resp = ep.direct().post(client, "/chat/completions", {**payload, **(extra or {})})
            else:
                # cast_to=object: the reply's JSON as a dict, which langchain-openai reads as it
                # reads a ChatCompletion once dumped (building and dumping that model ~0.5 ms)
                resp = client.post(
                    "/chat/completions", body=payload, cast_to=object,
                    options=make_request_options(extra_body=extra, security={"bearer_auth": True}))
        except openai.BadRequestError as e:
            _handle_openai_bad_request(e)
        except openai.APIError as e:
            _handle_openai_api_error(e)
        return self._create_chat_result(resp, {})

    def _send(self, ep: Endpoint, held: bool, messages: list[BaseMessage], stop: list[str] | None,
              run_manager: Any, kwargs: dict) -> ChatResult:
        """One request under the endpoint's limiter (already ``held`` by a replica set, or taken
        here), server faults mapped to our errors."""
        import openai

        with (contextlib.nullcontext() if held else ep.limiter):
            try:
                return self._request(ep, messages, stop, run_manager, kwargs)
            except openai.RateLimitError:
                ep.limiter.rate_limited()
                raise
            except openai.APIError as exc:
                nums = context_error_numbers(exc)
                if nums is not None:
                    # the server's numbers where it gave them; an unknown n_ctx stays None
                    raise ContextOverflowError(nums["prompt"] or ep.estimate_tokens(messages), nums["ctx"] or None,
                                               kwargs["max_tokens"], where=ep.base_url,
                                               estimated=nums["prompt"] is None,
                                               detail=f"the server said: {_one_line(exc)}") from exc
                raise
            except (KeyError, ValueError) as exc:
                # langchain-openai on a 200 whose body is no completion: no "choices", an "error"
                # object, or not JSON at all
                raise MalformedResponse(f"{ep.base_url}: malformed response ({type(exc).__name__}: {exc})") from exc
            except TypeError as exc:
                if "NoneType" not in str(exc):        # "choices": null; anything else is a bug of ours
                    raise
                raise MalformedResponse(f"{ep.base_url}: malformed response ({exc})") from exc

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        rs = self.replicas()
        if rs is None:
            return self._generate_at(self.endpoint(), False, messages, stop, run_manager, kwargs)
        import openai

        tried: set[str] = set()
        faults: list[tuple[str, BaseException]] = []
        while True:
            ep = rs.acquire(tried)
            if ep is None:
                last = faults[-1][1]
                if any(isinstance(f, ModelUnavailable) for _, f in faults):
                    # a replica's start-up probe failed every try: already a stop, naming them all
                    raise _replicas_down(rs.base_urls, faults) from last
                raise last
            try:
                return self._generate_at(ep, True, messages, stop, run_manager, dict(kwargs))
            except Exception as exc:
                # a fault of this replica, not of the request: the next replica takes it at once
                if not (is_transient_error(exc) or isinstance(exc, ModelUnavailable)):
                    raise
                tried.add(ep.base_url)
                faults.append((ep.base_url, exc))
                if isinstance(exc, (ModelUnavailable, openai.APITimeoutError)) or _is_unreachable(exc):
                    ep.mark_down(_one_line(exc))
                if len(tried) < len(rs.endpoints):
                    log.warning("%s: %s; the request goes to another replica", ep.base_url, _one_line(exc))
            finally:
                ep.limiter.release()

    def _generate_at(self, ep: Endpoint, held: bool, messages: list[BaseMessage], stop: list[str] | None,
                     run_manager: Any, kwargs: dict) -> ChatResult:
        """One call at ``ep`` (see :meth:`_send` for ``held``): the reply cap fitted to its
        context window, the reply format in its dialect, one more try with the room a server
        says is left."""
        fmt = kwargs.pop("reply_format", None)
        max_tokens = kwargs.pop("max_tokens", None) or self.max_tokens or 256
        ctx, _ = ep.context_window(self)
        if ctx:
            # fit the cap to what the (over-counted) prompt leaves; the server has the last word
            room = ctx - ep.estimate_tokens(messages)
            if room < max_tokens:
                fitted = max(room, MIN_FIT_TOKENS)
                log.info("%s: reply cap lowered from %d to %d tokens to fit the %d-token context",
                         ep.base_url, max_tokens, fitted, ctx)
                max_tokens = fitted
        dialect = (self.structured_dialect or ep.dialect(self)) if fmt is not None else "prompt"
        extra = self._extra(fmt, dialect)
        kwargs["extra_body"] = {**(kwargs.get("extra_body") or {}), **extra}
        kwargs["max_tokens"] = max_tokens
        try:
            result = self._send(ep, held, messages, stop, run_manager, kwargs)
        except ContextOverflowError as exc:
            # the prompt fits but prompt + cap does not (vLLM says so): once more with the room left
            room = exc.n_ctx - exc.prompt_tokens if exc.n_ctx and not exc.estimated else 0
            if room < MIN_FIT_TOKENS or room >= kwargs["max_tokens"]:
                raise
            log.info("%s: the server's context leaves %d reply tokens; asking again with that cap", ep.base_url, room)
            kwargs["max_tokens"] = max_tokens = room
            result = self._send(ep, held, messages, stop, run_manager, kwargs)
        ep.limiter.succeeded()
        if not result.generations:
            raise MalformedResponse(f"{ep.base_url}: the response has no choices")
        msg = result.generations[0].message
        usage = getattr(msg, "usage_metadata", None) or {}
        ep.learn(messages, usage.get("input_tokens"))
        meta = dict(msg.response_metadata or {})
        meta["structured"] = dialect
        meta["max_tokens"] = max_tokens
        # what the request carried and the server said, for the prompt log (accounting.PROMPTS_FORMAT)
        meta["structured_fields"] = extra if fmt is not None else None
        if dialect == "json" and fmt is not None:
            meta["raw_completion"] = message_text(msg.content)
            msg.content = fmt.render(meta["raw_completion"])
        msg.response_metadata = meta
        return result


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:300]
