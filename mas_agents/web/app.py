"""The ``mas serve`` web app (FastAPI, Jinja2 templates, one small static script): :func:`create_app`
builds it from one router per page family (:mod:`mas_agents.web.routes`: runs, replay, calls,
eval, reports, downloads, leaderboard, play), which share a :class:`mas_agents.web.site.Site`.
Every game is shown through its ``GameDef`` hooks (headline, seats, replay view): no page names
a game, and the kinds of run that are not one game are one table (:mod:`mas_agents.web.run_kinds`).

Pages (every ``{rel}`` is a path under ``--runs``, resolved by :func:`mas_agents.web.paths.confine`;
anything outside is answered 403):

================================  ===============================================================
``/``                             the runs: kind, date, model, agents, headline; filters
``/run/{rel}``                    one run: its numbers, progress, the runs inside it, its files
``/replay/{rel}``                 a game replayed from ``events.jsonl`` by round and phase (anchors
                                  ``#r1``, ``#ev-57``), players panel, ``?seen_by=SEAT``; live while played
``/calls/{rel}``                  the run's LLM calls (``llm_calls.jsonl``): filters (actor, phase,
                                  purpose, failed), a search over prompts and completions, pages
``/calls/{rel}/{call_id}``        one call: the messages as sent, structured-output field, raw
                                  completion, parsed action or parse error, re-prompt chain, events
``/eval/{rel}``                   a WellPlay evaluation: every question with its options as shown,
                                  the model's letter, the key, right/wrong; totals with intervals;
                                  while it runs, "k of N answered" per character, followed live
                                  (``/replay/{rel}`` of it leads here until its events are written)
``/report/{rel}``                 ``report.md`` rendered (raw HTML off) with its figures
``/wis-replay/{rel}``             an old address: redirected (301) to ``/replay/{rel}``
``/raw/{rel}``                    a PNG/JSON/JSONL/Markdown/CSV/text file of a run, as data
``/zip/{rel}``                    the whole run directory as a zip, streamed
``/csv/{rel}?table=N``            table N of the run's ``report.md`` as CSV
``/diff?a=REL&b=REL``           two runs of one game compared, as ``mas diff`` prints it
``/leaderboard``                  Who is Spy: the paper's columns with intervals, openskill ratings;
                                  every leaderboard database under ``--runs`` (and ``--db``)
``/leaderboard.csv``              its rank table as CSV
``/play``                         start a game with a human seat (the form of its ``GameView.play``:
                                  Who is Spy)
``/play/{rel}``                   the human seat: what that player sees, and the answer form
``POST /verify/{rel}``            ``mas rerun`` of the run on its recorded prompts (a child process, a
                                  temporary directory): identical, or the first difference
``/favicon.ico``                  the icon (also ``/static/favicon.svg``, which pages name)
================================  ===============================================================

Reading never writes: leaderboard databases are opened read-only without creating ``-wal`` or
``-shm`` files (the registered leaderboard's ``connect_read_only``,
:class:`mas_agents.game.experiments.LeaderboardDef`), and a run's date is read
from its record (:func:`mas_agents.web.runs.run_date`), not from its folder's modification time.
Responses are gzip-compressed for browsers that accept it (Starlette's ``GZipMiddleware``; zips and
PNGs are left as they are).

A run is ``finished``, ``running`` or ``stopped`` (:func:`mas_agents.web.run_kinds.run_state`, from
its ``result.json`` and the ``run.lock`` its runner keeps while it runs); only a running game is
polled. Bad input (a path no file can have, a query value that is not a number, an unknown page,
a bad form) gets the error page with a plain sentence and a 4xx status, never a traceback or
JSON; errors are rendered by the handler that finds them, never read from the query string.

Safety: every page escapes what runs contain (Jinja2 autoescaping, Markdown without raw HTML),
and a Content-Security-Policy allows scripts from this server's ``/static`` only, so a
``<script>`` in an event is text and could not run even if it slipped through. ``mas serve``
binds 127.0.0.1 unless told otherwise, and on every bind answers only the Host names
:func:`mas_agents.http_guard.allowed_hosts` gives (loopback names, its own address, ``--allowed-host``;
421 for another: a page that rebinds its own name to this machine is refused). A POST from a page
of another origin is refused. Work is bounded: a request body over :data:`MAX_BODY` gets 413, a form
field longer than a game's form allows 400 (the word pair: words), and at most ``--max-games``
games from ``/play`` are played at once (429 beyond it). ``/docs`` and the OpenAPI schema are off
(FastAPI's Swagger page loads its script from a CDN). While a game with a human seat is played,
everything that holds what that seat may not see (the private replay, ``/raw``, ``/zip``, the
calls...) answers 403 (:meth:`mas_agents.web.site.Site.withheld`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.gzip import GZipMiddleware

from mas_agents import http_guard
from mas_agents.web import paths
from mas_agents.web.routes import calls, diff, downloads, evaluation, leaderboard, play, replay, reports
from mas_agents.web.routes import runs as runs_pages
from mas_agents.web.routes.play import GameStarter
from mas_agents.web.site import HERE, Site, Withheld, make_env, short

__all__ = ["CSP", "MAX_BODY", "MAX_GAMES", "ROUTERS", "create_app"]

CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; "
       "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
#: The largest request body ``mas serve`` reads, in bytes: its forms (a game's seats and word pair,
#: a seat's answer) are under 1 KB; 64 KiB leaves room and refuses a 1 MB field (413).
MAX_BODY = 64 * 1024
#: Games started from ``/play`` played at once by default (``mas serve --max-games``): each holds a
#: thread and its agents' model calls, on a machine that may have 2 cores.
MAX_GAMES = 4
#: The routers, in the order their routes are matched.
ROUTERS = (runs_pages.router, replay.router, calls.router, evaluation.router, reports.router, downloads.router,
           leaderboard.router, play.router, diff.router)


def create_app(runs: Path, db: Path | None = None, *, model: Any = "local", data_root: Path | None = None,
               allowed_hosts: frozenset[str] | None = None, max_games: int = MAX_GAMES,
               max_body: int | None = MAX_BODY) -> FastAPI:
    """The web app over the run directories under ``runs``.

    Args:
        runs: the ``--runs`` directory (created if missing); nothing outside it is read or written.
        db: the leaderboard database (default: the registered leaderboard's ``default_db``,
            :func:`mas_agents.game.experiments.board`).
        model: default model of the agents in games started from ``/play``.
        data_root: datasets root for word pairs of those games.
        allowed_hosts: host names (``Host`` header, port dropped) answered; others get 421
            (:class:`mas_agents.http_guard.HostCheck`). ``mas serve`` gives
            :func:`mas_agents.http_guard.allowed_hosts` of its bind and ``--allowed-host``s on every
            bind. None: any (tests).
        max_games: at most this many games started from ``/play`` are played at once; another
            start answers 429 (``mas serve --max-games``).
        max_body: the largest request body in bytes (413 beyond it; None: no limit).
    """
    root = Path(runs).resolve()
    root.mkdir(parents=True, exist_ok=True)
    site = Site(root=root, db=db, data_root=data_root, model=model, env=make_env(),
                starter=GameStarter(model, data_root, max_games=max_games))
    app = FastAPI(title="mas serve", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.site = site
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    # innermost of the middleware: a body over max_body is refused (413, the error page) before a route has it
    http_guard.limit_body(app, max_body)
    # pages, JSON and run files compressed when the browser accepts gzip (not zips and PNGs:
    # Starlette leaves those content types alone); level 6: most of 9's gain at a fraction of its CPU
    app.add_middleware(GZipMiddleware, minimum_size=1000, compresslevel=6)

    @app.middleware("http")
    async def guard(request: Request, call_next):
        declared = request.headers.get("content-length", "")
        if max_body is not None and declared.isdigit() and int(declared) > max_body:
            # the error page at once (a body sent without a length is cut by limit_body, then
            # answered by http_error below)
            return too_large(request)
        if request.method == "POST":
            # a page of another site (an opaque "null" origin included: a sandboxed frame, a data:
            # URL) must not start games or answer a seat; a client that sends neither header is
            # not a browser
            origin = request.headers.get("origin")
            fetch_site = request.headers.get("sec-fetch-site")
            if ((origin is not None and (origin == "null" or urlsplit(origin).netloc != request.headers.get("host")))
                    or fetch_site not in (None, "same-origin", "none")):
                return Response("cross-origin POST refused", status_code=403)
        resp = await call_next(request)
        resp.headers["Content-Security-Policy"] = CSP
        resp.headers["X-Content-Type-Options"] = "nosniff"
        resp.headers["Referrer-Policy"] = "same-origin"   # "no-referrer" makes Chromium send Origin: null on our own form POSTs
        return resp

    @app.exception_handler(FileNotFoundError)
    async def not_found(request: Request, exc: FileNotFoundError):
        return site.problem(request, 404, "Not found", f"There is nothing at {exc} under the runs directory.")

    @app.exception_handler(paths.OutsideRuns)
    async def refused(request: Request, exc: paths.OutsideRuns):
        return site.problem(request, 403, "Refused", str(exc))

    @app.exception_handler(Withheld)
    async def withheld(request: Request, exc: Withheld):
        return site.problem(request, 403, "Withheld while the game is played", str(exc))

    @app.exception_handler(paths.BadPath)
    async def bad_path(request: Request, exc: paths.BadPath):
        return site.problem(request, 400, "Bad address", str(exc))

    @app.exception_handler(RequestValidationError)
    async def bad_query(request: Request, exc: RequestValidationError):
        parts = []
        for e in exc.errors():
            loc = [str(x) for x in e.get("loc", ()) if x not in ("query", "path", "body")]
            name = ".".join(loc) or "a value"
            got = request.query_params.get(name, "")
            want = {"int_parsing": "a whole number", "float_parsing": "a number"}.get(e.get("type", ""), "another value")
            parts.append(f"{name}={got!r} is not {want}" if got else f"{name} must be {want}")
        return site.problem(request, 400, "Bad address", "In the address, " + "; ".join(parts) + ".")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        if exc.status_code == 404:
            return site.problem(request, 404, "Not found", f"This server has no page at {short(request.url.path)}.")
        if exc.status_code == 413:
            return too_large(request)
        if exc.status_code == 405:
            return site.problem(request, 405, "Not allowed", f"{short(request.url.path)} does not take a {request.method}.")
        return site.problem(request, exc.status_code, "Error", str(exc.detail))

    def too_large(request: Request) -> Response:
        return site.problem(request, 413, "Too large", f"{short(request.url.path)}: this server reads a request "
                                                      f"body of at most {max_body or 0:,} bytes; this one is longer, "
                                                      "so nothing was done.")

    for router in ROUTERS:
        app.include_router(router)
    # outermost: a foreign Host gets 421 before anything else runs
    http_guard.check_host(app, allowed_hosts, "mas serve")
    return app
