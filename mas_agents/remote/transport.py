"""Transport to OpenAI-compatible servers: the sockets and HTTP pools a chat completion is posted
over (:class:`DirectPost`), and which SDK clients may use it (:func:`_plain_key_client`).

One idea: bytes to a server and back, the SDK's headers, key, timeout and error classes kept.
What a server is (its limiter, dialect, context window) is :mod:`mas_agents.remote.endpoints`;
how the chat model uses this, :mod:`mas_agents.remote.chat`. Moved unchanged from the former
single module ``mas_agents/remote.py`` (issue 51 item 6).
"""

from __future__ import annotations

import http.client
import io
import socket
import struct
import sys
import threading
from typing import Any

from mas_agents import jsonl


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


def _default_socket_options() -> tuple:
    """The TCP keep-alive socket options langchain-openai sets on its own default client (``()``
    when it sets none, or this version has no such helper)."""
    try:
        from langchain_openai.chat_models._client_utils import _resolve_socket_options
        return tuple(_resolve_socket_options(None))
    except Exception:  # noqa: BLE001 - an optional nicety of the client, never a failure
        return ()
