"""What every HTTP server of this project checks before a route runs (``mas serve``, ``mas spy
serve-agent``): the ``Host`` a request names, and the size of its body.

* **Host** (DNS rebinding): a page of another site that points its own name at this machine
  sends its own name in ``Host``; a server that answers any name lets that page read runs and
  start games (issue 57, E3). Every server answers the loopback names, the address it is bound
  to (unless it is a wildcard such as ``0.0.0.0``) and the names given with ``--allowed-host``;
  any other ``Host`` gets **421 Misdirected Request** (RFC 9110 §15.5.20: this server is not
  the one that name is for). Starlette's ``TrustedHostMiddleware`` answers 400 and cannot say
  which names are accepted, so the check is this module's.
* **Body size**: a request whose body is longer than ``max_body`` bytes gets **413 Content Too
  Large** (RFC 9110 §15.5.14), from its ``Content-Length`` before anything is read, or, for a
  chunked body, as soon as the bytes read pass the limit; the route never has the body, so
  nothing is written (issue 57, E2: one 50 MB form field became a 12.5M-token prompt). This is
  Starlette's own ``RequestBodyLimitMiddleware``.

:func:`guard` adds both to an app; :class:`HostCheck` is a pure ASGI middleware (no response is
buffered); lifespan and websocket scopes pass through untouched. :func:`bind` and :func:`serve`
start uvicorn on a port bound before anything is printed.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Awaitable, Callable, Iterable

__all__ = ["LOOPBACK_HOSTS", "HostCheck", "allowed_hosts", "bind", "check_host", "guard", "host_name", "is_wildcard", "limit_body", "serve"]

#: Host names a server answers to on every bind: this machine's own names.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


#: A bracketed IPv6 Host: the literal and an optional port; anything after the bracket (``[::1]evil``)
#: or a missing bracket (``[::1``) leaves the name whole, which no allowlist holds.
_BRACKETED = re.compile(r"(\[[0-9a-z:.%_-]+\])(?::\d+)?")


def host_name(host: str) -> str:
    """The name of a ``Host`` header without its port, lower-cased (``[::1]:8000`` -> ``[::1]``,
    ``Example.org:80`` -> ``example.org``)."""
    host = host.strip().lower()
    if host.startswith("["):   # an IPv6 literal: "[addr]" or "[addr]:port", nothing else
        m = _BRACKETED.fullmatch(host)
        return m.group(1) if m else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def is_wildcard(bind: str) -> bool:
    """True for an address that binds every interface (``0.0.0.0``, ``::``, empty)."""
    try:
        return ipaddress.ip_address(bind.strip("[]")).is_unspecified
    except ValueError:
        return bind.strip() == ""


def allowed_hosts(bind: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The ``Host`` names a server bound to ``bind`` answers: :data:`LOOPBACK_HOSTS`, ``bind``
    itself unless it is a wildcard, and ``extra`` (``--allowed-host``; a port given with a name is
    dropped, an IPv6 address gets its brackets).

    Raises:
        ValueError: an ``extra`` name that is empty or holds a character no host name has
            (``/``, a space...), naming it.
    """
    names = set(LOOPBACK_HOSTS)
    for name in ([] if is_wildcard(bind) else [bind]) + list(extra):
        raw = name.strip()
        if not raw or any(c in raw for c in "/\\@?# \t\r\n,*"):
            raise ValueError(f"--allowed-host {name!r}: expected a host name or an address, e.g. myhost.lan "
                             "or 192.168.1.20")
        try:
            ip = ipaddress.ip_address(raw.strip("[]"))
            raw = f"[{ip}]" if ip.version == 6 else str(ip)
        except ValueError:
            raw = host_name(raw)
        names.add(raw.lower())
        if raw.startswith("[") and raw.strip("[]") == "::1":
            names.add("::1")
    return frozenset(names)


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class HostCheck:
    """ASGI middleware: 421 for a request whose ``Host`` is not in ``hosts``, 413 for one whose
    ``Content-Length`` is over ``max_body``; the others go on.

    Args:
        app: the ASGI app guarded.
        hosts: the accepted host names (:func:`allowed_hosts`); None accepts any (tests).
        what: the server's name in the refusal (``mas serve``...).
        max_body: the largest declared body, in bytes (None: not checked here).
    """

    def __init__(self, app: Any, hosts: frozenset[str] | None, what: str = "this server", max_body: int | None = None):
        self.app, self.hosts, self.what, self.max_body = app, hosts, what, max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.lower(): v.decode("latin-1") for k, v in scope.get("headers") or ()}
            host = host_name(headers.get(b"host", ""))
            if self.hosts is not None and host not in self.hosts:
                shown = host if len(host) <= 80 else host[:80] + "…"
                await _plain(send, 421, f"{self.what}: Host {shown!r} refused: this server answers to "
                                        f"{', '.join(sorted(self.hosts))} (add a name with --allowed-host NAME)")
                return
            declared = headers.get(b"content-length", "")
            if self.max_body is not None and declared.isdigit() and int(declared) > self.max_body:
                # said in a sentence at once; a body without a length is cut by limit_body's middleware
                await _plain(send, 413, f"{self.what}: a request body of {int(declared):,} bytes refused: this "
                                        f"server reads at most {self.max_body:,} bytes")
                return
        await self.app(scope, receive, send)


def limit_body(app: Any, max_body: int | None) -> None:
    """Add Starlette's ``RequestBodyLimitMiddleware`` (``max_body`` bytes; None: nothing added) to
    the Starlette/FastAPI ``app``: 413 from ``Content-Length``, or as soon as the bytes read pass
    the limit, before the route has the body. Call it before any ``@app.middleware("http")`` is
    added, so that it sits inside those (their task group would wrap its refusal in an
    ``ExceptionGroup``) and the app's exception handlers answer its 413."""
    from starlette.middleware.body_limit import RequestBodyLimitMiddleware

    if max_body is not None:
        app.add_middleware(RequestBodyLimitMiddleware, max_body_size=max_body)


def check_host(app: Any, hosts: frozenset[str] | None, what: str, max_body: int | None = None) -> None:
    """Add :class:`HostCheck` to ``app``, outermost of the middleware added so far (call it last);
    ``max_body``: a declared ``Content-Length`` over it is answered 413 in a sentence there."""
    app.add_middleware(HostCheck, hosts=hosts, what=what, max_body=max_body)


def guard(app: Any, hosts: frozenset[str] | None, max_body: int | None, what: str) -> None:
    """Both checks of this module on an app without other middleware: :func:`limit_body`, then
    :func:`check_host` outermost."""
    limit_body(app, max_body)
    check_host(app, hosts, what, max_body)


def bind(host: str, port: int):
    """A listening TCP socket on ``host``:``port``, bound before anything is printed, so a busy
    port is one error and no address is announced (issue 57, E19); uvicorn serves on it
    (:func:`serve`). The options are uvicorn's own (``SO_REUSEADDR``, so a port in ``TIME_WAIT`` is
    not taken for busy).

    Raises:
        OSError: with a one-line message naming ``host:port`` and what is wrong (in use, an
            address of no interface of this machine, a port below 1024 without the right).
    """
    import errno
    import socket

    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        why = {errno.EADDRINUSE: "the port is in use (another server?): choose another with --port",
               errno.EADDRNOTAVAIL: "no interface of this machine has that address",
               errno.EACCES: "this user may not listen on that port"}.get(exc.errno, exc.strerror or str(exc))
        raise OSError(exc.errno, f"cannot listen on {host}:{port}: {why}") from None
    except (OverflowError, socket.gaierror) as exc:
        sock.close()
        raise OSError(errno.EINVAL, f"cannot listen on {host}:{port}: {exc}") from None
    sock.set_inheritable(True)
    return sock


def serve(app: Any, sock: Any, log_level: str = "warning", limit_concurrency: int | None = None) -> None:
    """Serve ``app`` with uvicorn on ``sock`` (:func:`bind`) until interrupted.

    ``limit_concurrency``: uvicorn's bound on connections and tasks at once (503 beyond it).
    """
    import uvicorn

    config = uvicorn.Config(app, log_level=log_level, limit_concurrency=limit_concurrency)
    uvicorn.Server(config).run(sockets=[sock])
