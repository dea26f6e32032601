"""The WiS agent protocol over HTTP: serve a local player, or play a remote one.

The protocol is the one of the WiS ("Who is Spy?") platform's example agents (whoisspy.ai; WiS
paper, arXiv 2412.03359, §3): an agent is an HTTP service with

==========================  ======================================================================
``POST /agent/init``        start a fresh player (result = the model name, as the SDK's agents)
``POST /agent/getModelName`` result = the name of the model behind the agent (GET accepted too)
``POST /agent/checkHealth`` result ``None`` (GET accepted too)
``POST /agent/perceive``    an announcement; result ``None``
``POST /agent/interact``    a ``round`` (describe) or ``vote`` request; result = the reply text
==========================  ======================================================================

Request bodies are JSON ``{message, name, status, word, round}`` (see
:mod:`mas_agents.graphs.wis.protocol_types` for what each status carries); every response is JSON
``{success, result, errMsg}`` with HTTP 200, errors included (``success = false`` and ``errMsg``
saying what went wrong), so a caller only ever has to read the envelope.

* :func:`make_app` / :func:`serve` expose any :class:`~mas_agents.graphs.wis.protocol_types.WisPlayer`
  (built by a factory) as such a service, e.g. for the WiS platform or ``mas spy serve-agent``.
* :class:`RemoteWisPlayer` is a :class:`~mas_agents.graphs.wis.protocol_types.WisPlayer` that forwards
  every call to such a service, so a game can seat agents running elsewhere (ours or theirs).
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from typing import Any, Callable

import fastapi
import httpx
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from mas_agents import http_guard
from mas_agents.graphs.wis.protocol_types import STATUSES, WisPlayer, request, response

log = logging.getLogger(__name__)

#: statuses a player answers through ``interact`` (the others are announcements).
INTERACT_STATUSES = ("round", "vote")


#: The largest request body the served agent reads, in bytes (413 beyond it, before the player
#: sees anything: :func:`mas_agents.http_guard.guard`); a message of a 9-seat round is a
#: few KB. Issue 57, E2: a 5 MB message became a 1.25M-token prompt.
MAX_BODY = 64 * 1024
#: The longest ``message`` (characters): a round's host line with every seat's description.
MAX_MESSAGE = 16_000
#: The longest ``name`` and ``word`` (characters): a player's name, one word of a pair.
MAX_NAME = 200


class WisRequest(BaseModel):
    """Body of ``/agent/perceive`` and ``/agent/interact`` (and, ignored, of the other routes).

    Every field is optional for the parser (``null`` counts as the default); the routes then
    require a valid ``status`` and answer ``success = false`` when it is missing or unknown.
    Unknown extra fields are ignored. A field longer than :data:`MAX_MESSAGE` / :data:`MAX_NAME`
    characters is refused (``success = false`` naming it).
    """

    message: str | None = Field("", max_length=MAX_MESSAGE)
    name: str | None = Field("", max_length=MAX_NAME)
    status: str | None = Field("", max_length=MAX_NAME)
    word: str | None = Field("", max_length=MAX_NAME)
    round: int | None = 0


def make_app(player_factory: Callable[[], WisPlayer], model_name: str, deadline: float | None = None,
             allowed_hosts: frozenset[str] | None = None, max_body: int | None = MAX_BODY) -> fastapi.FastAPI:
    """A FastAPI app serving one WiS player over the WiS platform's agent protocol.

    Args:
        player_factory: builds a fresh player; called on ``/agent/init``, on every ``start``
            perceive (a new game), and lazily when perceive/interact arrive before any init.
        model_name: what ``/agent/init`` and ``/agent/getModelName`` answer.
        deadline: seconds within which ``/agent/interact`` answers (set it below the judge's
            limit: WiS §3.1 fouls a description after 10 s); a player still thinking then gets
            ``success = false`` ("no reply within the agent's own deadline") at once, rather than
            the judge cutting the connection. ``None``/0: no deadline.
        allowed_hosts: the ``Host`` names answered (:func:`mas_agents.http_guard.allowed_hosts`;
            another gets 421 before any route); None: any (tests).
        max_body: the largest request body in bytes (413 beyond it); None: no limit.

    Routes (all answer HTTP 200 with ``{success, result, errMsg}``; init and checkHealth answer
    as an agent built on the platform's SDK does, spy-agent-build-sdk 0.0.29 ``server/server.py``):

    * ``POST /agent/init`` — replace the player with a fresh one; result ``model_name``.
    * ``GET|POST /agent/getModelName`` — result ``model_name``.
    * ``GET|POST /agent/checkHealth`` — result ``None``.
    * ``POST /agent/perceive`` — body ``{message, name, status, word, round}``; ``status`` must be
      one of :data:`~mas_agents.graphs.wis.protocol_types.STATUSES`; result ``None``.
    * ``POST /agent/interact`` — same body, ``status`` ``round`` or ``vote``; ``result`` is the
      player's reply. The player's ``success``/``errMsg`` are passed on; any other key of its
      response (e.g. the local ``meta``) is dropped.

    Errors — missing/unknown status, an invalid body, the factory or the player raising, a player
    reply that is not a response dict — give ``success = false`` and an ``errMsg`` naming the
    problem, never an HTTP error status.

    Calls into the player are serialised by a lock (a local agent is not assumed thread-safe), so
    a perceive arriving while an abandoned, slow interact still runs waits for it to finish, and
    so does the next interact (its deadline counts that wait); a perceive that waits longer than
    the judge's HTTP timeout is lost on the judge's side.
    The current player is available as ``app.state.player`` (``None`` before the first one).
    """
    # no /docs, /redoc, /openapi.json: FastAPI's pages load their scripts from a CDN
    app = fastapi.FastAPI(title="WiS agent", description=f"Who-is-Spy agent ({model_name})", docs_url=None,
                          redoc_url=None, openapi_url=None)
    http_guard.guard(app, allowed_hosts, max_body, "WiS agent")
    app.state.player = None
    lock = threading.Lock()
    worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="wis-agent") if deadline else None

    def fresh_player() -> WisPlayer:
        app.state.player = player_factory()
        return app.state.player

    def current_player() -> WisPlayer:
        return app.state.player if app.state.player is not None else fresh_player()

    def to_request(body: WisRequest, allowed: tuple[str, ...]) -> dict[str, Any]:
        status = body.status or ""
        if not status:
            raise ValueError(f"missing status; expected one of {', '.join(allowed)}")
        if status not in allowed:
            raise ValueError(f"unknown status {status!r}; expected one of {', '.join(allowed)}")
        return request(status, name=body.name or "", message=body.message or "",
                       word=body.word or "", round=body.round or 0)

    @app.exception_handler(RequestValidationError)
    async def _invalid_body(_req: fastapi.Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}" for e in exc.errors())
        return JSONResponse(status_code=200, content=response(None, success=False, err=f"invalid request: {problems}"))

    # Sync handlers: FastAPI runs them in its thread pool, so a slow player blocks no other route.
    @app.post("/agent/init")
    def init() -> dict[str, Any]:
        try:
            with lock:
                fresh_player()
        except Exception as exc:  # noqa: BLE001 - reported to the caller
            log.exception("WiS agent: player factory failed")
            return response(None, success=False, err=f"init failed: {type(exc).__name__}: {exc}")
        return response(model_name)

    @app.api_route("/agent/getModelName", methods=["GET", "POST"])
    def get_model_name() -> dict[str, Any]:
        return response(model_name)

    @app.api_route("/agent/checkHealth", methods=["GET", "POST"])
    def check_health() -> dict[str, Any]:
        return response(None)

    def handle(route: str, body: WisRequest, allowed: tuple[str, ...],
               act: Callable[[dict[str, Any]], dict[str, Any] | None]) -> dict[str, Any]:
        """Validate the body, run ``act`` (which takes the lock) and wrap its reply (None: no
        result) in the envelope; every fault becomes ``success: false`` with a one-line ``errMsg``."""
        try:
            req = to_request(body, allowed)
        except ValueError as exc:
            return response(None, success=False, err=f"{route}: {exc}")
        try:
            reply = act(req)
        except Exception as exc:  # noqa: BLE001 - reported to the caller
            log.exception("WiS agent: %s(%s) failed", route, req["status"])
            return response(None, success=False, err=f"{route} {req['status']} failed: {type(exc).__name__}: {exc}")
        if reply is None:
            return response(None)
        if not isinstance(reply, dict):
            return response(None, success=False, err=f"{route} {req['status']}: player returned {type(reply).__name__}, "
                                                   "not a response dict")
        # the player's own response minus local extras (``meta``)
        return response(reply.get("result"), success=bool(reply.get("success", True)), err=reply.get("errMsg"))

    def perceive_one(req: dict[str, Any]) -> None:
        with lock:
            player = fresh_player() if req["status"] == "start" else current_player()
            player.perceive(req)

    @app.post("/agent/perceive")
    def perceive(body: WisRequest) -> dict[str, Any]:
        return handle("perceive", body, STATUSES, perceive_one)

    def interact_locked(req: dict[str, Any]) -> dict[str, Any]:
        with lock:
            return current_player().interact(req)

    def interact_in_time(req: dict[str, Any]) -> dict[str, Any] | None:
        if worker is None:
            return interact_locked(req)
        # the player answers in a worker thread, under the lock; past the deadline the caller gets
        # a refusal at once (the abandoned answer finishes in the background and is dropped; the
        # next message waits for it, so the player never sees two at a time)
        job = worker.submit(interact_locked, req)
        try:
            return job.result(timeout=deadline)
        except concurrent.futures.TimeoutError:
            log.warning("WiS agent: interact %s passed its own deadline of %g s", req["status"], deadline)
            return response(None, success=False, err=f"no reply within the agent's own deadline of {deadline:g} s")

    @app.post("/agent/interact")
    def interact(body: WisRequest) -> dict[str, Any]:
        return handle("interact", body, INTERACT_STATUSES, interact_in_time)

    return app


def serve(player_factory: Callable[[], WisPlayer], model_name: str, host: str = "127.0.0.1",
          port: int = 7860, log_level: str = "info", deadline: float | None = None,
          allowed_hosts: frozenset[str] | None = None, sock: Any = None) -> None:
    """Serve a player over the WiS agent protocol with uvicorn; blocks until interrupted.

    See :func:`make_app` for the routes, ``deadline`` and ``allowed_hosts`` (default: those of
    ``host``, :func:`mas_agents.http_guard.allowed_hosts`). ``sock``: a socket already bound
    (:func:`mas_agents.http_guard.bind`; default: bound here). Used by ``mas spy serve-agent``.

    Raises:
        OSError: ``host``:``port`` cannot be listened on (one line, :func:`mas_agents.http_guard.bind`).
    """
    hosts = allowed_hosts if allowed_hosts is not None else http_guard.allowed_hosts(host)
    sock = sock if sock is not None else http_guard.bind(host, port)
    http_guard.serve(make_app(player_factory, model_name, deadline=deadline, allowed_hosts=hosts), sock,
                     log_level=log_level)


class RemoteWisPlayer:
    """A :class:`~mas_agents.graphs.wis.protocol_types.WisPlayer` played by a WiS-protocol HTTP service.

    The service is any agent speaking the WiS platform's protocol (see the module docstring),
    e.g. one started with :func:`serve`. Nothing here raises on network or protocol trouble: a
    broken remote must not crash a game.

    Args:
        url: base URL of the service, e.g. ``http://127.0.0.1:7860`` (routes ``/agent/...`` are
            appended; a trailing ``/`` or ``/agent`` is tolerated).
        timeout: seconds for connecting and for every call except :meth:`interact`'s read, which
            uses the ``timeout`` passed to it (when given).

    Attributes:
        label: the URL as given.
    """

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        self.label = url
        base = url.rstrip("/")
        if base.endswith("/agent"):
            base = base[: -len("/agent")]
        self.base_url = base
        self.timeout = float(timeout)
        self._client = httpx.Client(base_url=base, timeout=self.timeout)

    def __repr__(self) -> str:
        return f"RemoteWisPlayer({self.label!r})"

    # -- transport -------------------------------------------------------------------------
    def _post(self, route: str, body: dict[str, Any] | None = None,
              timeout: httpx.Timeout | float | None = None) -> dict[str, Any]:
        """POST ``/agent/<route>`` and return the normalised envelope.

        Raises:
            httpx.ReadTimeout: the service did not answer in time (callers decide what it means).
        """
        kwargs: dict[str, Any] = {"json": body if body is not None else {}}
        if timeout is not None:
            kwargs["timeout"] = timeout
        for attempt in (1, 2):
            try:
                resp = self._client.post(f"/agent/{route}", **kwargs)
                break
            except httpx.ReadTimeout:
                raise
            except (httpx.ConnectError, httpx.RemoteProtocolError) as exc:
                # A refused connection, or a kept-alive one the service had closed (one that
                # answered an error with HTTP 500 may): tried once more on a fresh one, so the next
                # message is not lost for that. Read/write errors and timeouts are not retried:
                # the service may have taken the message already, and must not get it twice.
                if attempt == 1:
                    log.info("WiS remote %s: %s: %s; retrying once", self.label, route, type(exc).__name__)
                    continue
                return response(None, success=False,
                                err=f"{route}: cannot reach {self.base_url}: {type(exc).__name__}: {exc}")
            except httpx.HTTPError as exc:
                return response(None, success=False,
                                err=f"{route}: cannot reach {self.base_url}: {type(exc).__name__}: {exc}")
        if resp.status_code != 200:
            return response(None, success=False,
                            err=f"{route}: HTTP {resp.status_code}: {resp.text[:200]}")
        try:
            data = resp.json()
        except ValueError:
            return response(None, success=False, err=f"{route}: response is not JSON: {resp.text[:200]}")
        if not isinstance(data, dict) or "success" not in data:
            return response(None, success=False,
                            err=f"{route}: not a {{success, result, errMsg}} response: {str(data)[:200]}")
        return response(data.get("result"), success=bool(data.get("success")), err=data.get("errMsg"))

    def _call(self, route: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        try:
            return self._post(route, body)
        except httpx.ReadTimeout:
            return response(None, success=False, err=f"{route}: timeout after {self.timeout:g} s")

    # -- protocol --------------------------------------------------------------------------
    def check_ready(self) -> str | None:
        """``/agent/checkHealth`` then ``/agent/init``, before a game (the platform checks an
        agent's health before seating it; init clears an SDK agent's memory).

        Returns:
            the ``init`` result: the model name an SDK agent reports (``None`` if it gives none).

        Raises:
            ValueError: either call failed (unreachable, HTTP error, ``success = false``), one line
                naming the URL and the route.
        """
        for route in ("checkHealth", "init"):
            resp = self._call(route)
            if not resp["success"]:
                raise ValueError(f"WiS agent {self.label}: {route} failed ({resp['errMsg']}); not seating it")
        return None if resp["result"] is None else str(resp["result"])

    def init(self) -> dict[str, Any]:
        """POST ``/agent/init`` (a fresh player on the remote); returns the response dict."""
        return self._call("init")

    def model_name(self) -> str | None:
        """The remote's ``/agent/getModelName`` result, or ``None`` when the call fails."""
        resp = self._call("getModelName")
        return str(resp["result"]) if resp["success"] and resp["result"] is not None else None

    def health(self) -> bool:
        """Whether ``/agent/checkHealth`` answers with success."""
        return bool(self._call("checkHealth")["success"])

    def perceive(self, req: dict[str, Any]) -> None:
        """POST ``/agent/perceive``; failures (network, timeout, ``success = false``) are logged only."""
        resp = self._call("perceive", req)
        if not resp["success"]:
            log.warning("WiS remote %s: perceive %s failed: %s", self.label, req.get("status"), resp["errMsg"])

    def interact(self, req: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """POST ``/agent/interact`` and return ``{success, result, errMsg}``.

        ``timeout`` (seconds; default: the client's) bounds the wait for the answer (httpx read
        timeout; the service sends nothing until it has replied). When it passes, the result is
        ``{success: False, result: None, errMsg: "timeout", timed_out: True}``. Connection, HTTP
        and malformed-response errors give ``success = False`` with an ``errMsg`` saying which.
        """
        limit = self.timeout if timeout is None else float(timeout)
        try:
            return self._post("interact", req,
                              timeout=httpx.Timeout(self.timeout, read=limit))
        except httpx.ReadTimeout:
            log.warning("WiS remote %s: interact %s timed out after %g s", self.label, req.get("status"), limit)
            return response(None, success=False, err="timeout", timed_out=True)

    # -- lifetime --------------------------------------------------------------------------
    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def __enter__(self) -> RemoteWisPlayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
