"""The ``mas serve`` web app (FastAPI, Jinja2 templates, one small static script).

Pages (every ``{rel}`` is a path under ``--runs``, resolved by :func:`mas_agents.web.runs.confine`;
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
``/leaderboard``                  Who is Spy: the paper's columns with intervals, openskill ratings;
                                  every leaderboard database under ``--runs`` (and ``--db``)
``/leaderboard.csv``              its rank table as CSV
``/play``                         start a Who-is-Spy game with a human seat
``/play/{rel}``                   the human seat: what that player sees, and the answer form
``/favicon.ico``                  the icon (also ``/static/favicon.svg``, which pages name)
================================  ===============================================================

Reading never writes: leaderboard databases are opened read-only without creating ``-wal`` or
``-shm`` files (:func:`eval.reports.wis_leaderboard.connect_read_only`), and a run's date is read
from its record (:func:`mas_agents.web.runs.run_date`), not from its folder's modification time.
Responses are gzip-compressed for browsers that accept it (Starlette's ``GZipMiddleware``; zips and
PNGs are left as they are).

A run is ``finished``, ``running`` or ``stopped`` (:func:`mas_agents.web.runs.run_state`, from
its ``result.json`` and the ``run.lock`` its runner keeps while it runs); only a running game is
polled. Bad input (a path no file can have, a query value that is not a number, an unknown page,
a bad form) gets the error page with a plain sentence and a 4xx status, never a traceback or
JSON; errors are rendered by the handler that finds them, never read from the query string.

Safety: every page escapes what runs contain (Jinja2 autoescaping, Markdown without raw HTML),
and a Content-Security-Policy allows scripts from this server's ``/static`` only, so a
``<script>`` in an event is text and could not run even if it slipped through. ``mas serve``
binds 127.0.0.1 unless told otherwise. A POST from a page of another origin is refused.
"""

from __future__ import annotations

import asyncio
import random
import threading
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import (FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse,
                               Response, StreamingResponse)
from fastapi.staticfiles import StaticFiles
from starlette.middleware.gzip import GZipMiddleware
from jinja2 import Environment, FileSystemLoader
from starlette.exceptions import HTTPException as StarletteHTTPException

from eval import games as game_registry
from mas_agents.web import replay as rp
from mas_agents.web import runs as rs

HERE = Path(__file__).parent
#: What ``/raw`` serves, and as what (never HTML: a file of a run is data, not a page).
RAW_TYPES = {".png": "image/png", ".json": "application/json", ".jsonl": "text/plain; charset=utf-8",
             ".md": "text/plain; charset=utf-8", ".csv": "text/plain; charset=utf-8",
             ".txt": "text/plain; charset=utf-8"}
CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; "
       "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")


def _env() -> Environment:
    env = Environment(loader=FileSystemLoader(str(HERE / "templates")), autoescape=True, trim_blocks=True,
                      lstrip_blocks=True)
    env.filters["u"] = lambda rel: quote(str(rel), safe="/")
    from eval.runs.human import HUMAN_SPEAK_TIMEOUT
    from graphs.wis.rules import MAX_CHARS
    env.globals.update(max_chars=MAX_CHARS, human_speak_timeout=HUMAN_SPEAK_TIMEOUT)
    return env


class GameStarter:
    """Starts Who-is-Spy games with a human seat in background threads and remembers their errors.

    Args:
        model: the default model of the agents' seats (a spec such as ``local``, or a chat model
            object in tests).
        data_root: the datasets root, to draw a word pair when the form gives none (None: a
            pair must be given).
    """

    def __init__(self, model: Any, data_root: Path | None):
        self.model = model
        self.data_root = data_root
        self.errors: dict[str, str] = {}
        self.threads: dict[str, threading.Thread] = {}

    def start(self, out: Path, key: str, *, agents: list[str], pair: dict[str, str], lang: str, seed: int,
              speak_timeout: float | None) -> None:
        """Play the game into ``out`` in a daemon thread (its error, if any, under ``key``)."""
        from eval.runs.wis_session import play_game

        def run() -> None:
            try:
                play_game(out, agents=agents, pair=pair, lang=lang, model=self.model, seed=seed,
                          speak_timeout=speak_timeout)
            except BaseException as exc:   # shown on the seat page; the server goes on
                self.errors[key] = f"{type(exc).__name__}: {exc}"

        th = threading.Thread(target=run, name=f"wis-{key}", daemon=True)
        self.threads[key] = th
        th.start()


#: Host names a server bound to the loopback interface answers to (a page of another site that
#: rebinds its own name to 127.0.0.1 sends its own name and is refused: DNS rebinding).
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def create_app(runs: Path, db: Path | None = None, *, model: Any = "local", data_root: Path | None = None,
               allowed_hosts: frozenset[str] | None = None) -> FastAPI:
    """The web app over the run directories under ``runs``.

    Args:
        runs: the ``--runs`` directory (created if missing); nothing outside it is read or written.
        db: the Who-is-Spy leaderboard database (default
            :func:`eval.reports.wis_leaderboard.default_db_path`).
        model: default model of the agents in games started from ``/play``.
        data_root: datasets root for word pairs of those games.
        allowed_hosts: host names (``Host`` header, port dropped) answered; others get 421.
            ``mas serve`` gives :data:`LOOPBACK_HOSTS` when it binds a loopback address. None: any.
    """
    root = Path(runs).resolve()
    root.mkdir(parents=True, exist_ok=True)
    create_db = db
    env = _env()
    starter = GameStarter(model, data_root)
    app = FastAPI(title="mas serve", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    # pages, JSON and run files compressed when the browser accepts gzip (not zips and PNGs:
    # Starlette leaves those content types alone); level 6: most of 9's gain at a fraction of its CPU
    app.add_middleware(GZipMiddleware, minimum_size=1000, compresslevel=6)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon():
        # pages name /static/favicon.svg; a browser asks for /favicon.ico on files (a JSON, a PNG)
        return FileResponse(HERE / "static" / "favicon.svg", media_type="image/svg+xml",
                            headers={"Cache-Control": "max-age=86400"})

    def page(name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        html = env.get_template(name).render(root=str(root), **ctx)
        return HTMLResponse(html, status_code=status)

    @app.middleware("http")
    async def guard(request: Request, call_next):
        if allowed_hosts is not None:
            host = _hostname(request.headers.get("host") or "")
            if host not in allowed_hosts:
                return Response(f"host {host!r} refused: this server answers to {', '.join(sorted(allowed_hosts))}",
                                status_code=421)
        if request.method == "POST":
            # a page of another site (an opaque "null" origin included: a sandboxed frame, a data:
            # URL) must not start games or answer a seat; a client that sends neither header is
            # not a browser
            origin = request.headers.get("origin")
            site = request.headers.get("sec-fetch-site")
            if ((origin is not None and (origin == "null" or urlsplit(origin).netloc != request.headers.get("host")))
                    or site not in (None, "same-origin", "none")):
                return Response("cross-origin POST refused", status_code=403)
        resp = await call_next(request)
        resp.headers["Content-Security-Policy"] = CSP
        resp.headers["X-Content-Type-Options"] = "nosniff"
        resp.headers["Referrer-Policy"] = "same-origin"   # "no-referrer" makes Chromium send Origin: null on our own form POSTs
        return resp

    def locate(rel: str, must_exist: bool = True) -> Path:
        d = rs.confine(root, rel)
        if must_exist and not d.exists():
            raise FileNotFoundError(rel)
        return d

    def wants_json(request: Request) -> bool:
        return request.url.path.startswith("/api/")

    def problem(request: Request, status: int, title: str, message: str) -> Response:
        """The error page (or, for ``/api/``, ``{"error": message}``) with ``status``."""
        if wants_json(request):
            return JSONResponse({"error": message}, status_code=status)
        return page("error.html", status, title=title, message=message)

    @app.exception_handler(FileNotFoundError)
    async def not_found(request: Request, exc: FileNotFoundError):
        return problem(request, 404, "Not found", f"There is nothing at {exc} under the runs directory.")

    @app.exception_handler(rs.OutsideRuns)
    async def refused(request: Request, exc: rs.OutsideRuns):
        return problem(request, 403, "Refused", str(exc))

    @app.exception_handler(rs.BadPath)
    async def bad_path(request: Request, exc: rs.BadPath):
        return problem(request, 400, "Bad address", str(exc))

    @app.exception_handler(RequestValidationError)
    async def bad_query(request: Request, exc: RequestValidationError):
        parts = []
        for e in exc.errors():
            loc = [str(x) for x in e.get("loc", ()) if x not in ("query", "path", "body")]
            name = ".".join(loc) or "a value"
            got = request.query_params.get(name, "")
            want = {"int_parsing": "a whole number", "float_parsing": "a number"}.get(e.get("type", ""), "another value")
            parts.append(f"{name}={got!r} is not {want}" if got else f"{name} must be {want}")
        return problem(request, 400, "Bad address", "In the address, " + "; ".join(parts) + ".")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        if exc.status_code == 404:
            return problem(request, 404, "Not found", f"This server has no page at {_short(request.url.path)}.")
        if exc.status_code == 405:
            return problem(request, 405, "Not allowed", f"{_short(request.url.path)} does not take a {request.method}.")
        return problem(request, exc.status_code, "Error", str(exc.detail))

    # -- runs --------------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse)
    def index(kind: str = "", model: str = "", agent: str = "", nested: int = 0):
        every = rs.scan(root)
        shown = rs.filter_runs(every, kind=kind, model=model, agent=agent, nested=bool(nested))
        for r in shown:
            if r.kind == "wellplay-eval" and not r.finished and not r.headline:
                r.headline = rs.eval_progress(root / r.rel, data_root)["text"]   # "k of N answered"
        models = sorted({m for r in every for m in r.models})
        return page("index.html", runs=shown, total=len(every), kinds=rs.all_kinds(), models=models,
                    f={"kind": kind, "model": model, "agent": agent, "nested": nested})

    @app.get("/run/{rel:path}", response_class=HTMLResponse)
    def run_page(rel: str):
        d = locate(rel)
        kind = rs.kind_of(d)
        if kind is None:
            inside = [r for r in rs.scan(d)] if d.is_dir() else []
            return page("error.html", 404, title="Not a run", message=f"{rel or '.'} holds no run"
                        + (f" (it holds {len(inside)} runs: see the list)" if inside else ""))
        run = rs.describe(root, d, kind)
        every = rs.scan(root) if not run.is_game or kind == "mmg" else []
        children = [r for r in every if r.parent == run.rel] if not run.is_game else []
        composite = kind in ("wis-tournament", "ablation", "wellplay-compare", "magic-bench")
        prog = _progress(d, kind) if composite or (kind == "wellplay-eval" and not run.finished) else None
        headline = run.headline
        if prog and prog["text"] in headline:
            # the headline of a composite run ends with its progress: said once, beside the bar
            headline = headline.replace(f" ({prog['text']})", "").replace(prog["text"], "").strip(" ;")
        files = sorted(p.name for p in d.iterdir() if p.is_file() and p.suffix in RAW_TYPES)
        figures = [f for f in files if f.endswith(".png")]
        cfg = _dict(rs._read(d / "config.json"))
        return page("run.html", run=run, headline=headline, children=children, progress=prog, files=files,
                    figures=figures, board=_board_link(d) if kind == "wis-tournament" else None,
                    has_events=(d / "events.jsonl").exists(), has_calls=(d / "llm_calls.jsonl").exists(),
                    has_report=(d / "report.md").exists(), seats=_seats(d),
                    has_eval=kind == "wellplay-eval", evaluated=_run_link(cfg.get("run")) if kind == "wellplay-eval" else None,
                    evaluations=_evaluations(d, every) if kind == "mmg" else [])

    def _run_link(path: Any) -> str | None:
        """The ``rel`` under ``--runs`` of a run directory a record names (an evaluation's
        ``config.json`` ``run``: the game it evaluated), or None when it is not under ``--runs``."""
        if not path:
            return None
        p = Path(str(path))
        # a relative path is the runner's, from its working directory: tried from this server's,
        # then each tail of it under --runs (``runs/sin`` given in the folder holding --runs)
        tries = [p] if p.is_absolute() else [Path.cwd() / p] + [root.joinpath(*p.parts[i:]) for i in range(len(p.parts))]
        for t in tries:
            try:
                real = t.resolve()
            except (OSError, RuntimeError):
                continue
            if (real == root or root in real.parents) and real.is_dir() and real != root:
                return rs.relpath(root, real)
        return None

    def _evaluations(d: Path, every: list[rs.Run]) -> list[rs.Run]:
        """The WellPlay evaluations under ``--runs`` whose ``config.json`` names the game in ``d``."""
        real = d.resolve()
        out = []
        for r in every:
            if r.kind == "wellplay-eval":
                named = _dict(rs._read(root / r.rel / "config.json")).get("run")
                if named and _run_link(named) == rs.relpath(root, real):
                    out.append(r)
        return out

    def _progress(d: Path, kind: str) -> dict[str, Any]:
        if kind == "wellplay-eval":
            return rs.eval_progress(d, data_root)
        total = None
        planned = _dict(rs._read(d / "config.json")).get("games") if kind == "wis-tournament" else None
        if isinstance(planned, int) and not isinstance(planned, bool):
            total = planned   # the tournament's own record (written before its first game)
        elif kind == "wis-tournament":
            from eval.reports.wis_leaderboard import Leaderboard
            tid = rs.tournament_id(d)
            for _, path in (_databases() if tid else []):
                cfg = Leaderboard(path, read_only=True).config(tid)
                if cfg:
                    total = cfg.get("games")
                    break
        return rs.progress(d, kind, db_total=total)

    @app.get("/api/progress/{rel:path}")
    def api_progress(rel: str):
        d = locate(rel)
        kind = rs.detect_kind(d) or ""
        return JSONResponse(_progress(d, kind))

    # -- replays -----------------------------------------------------------------------------
    @app.get("/replay/{rel:path}", response_class=HTMLResponse)
    def replay_page(request: Request, rel: str, private: int = 0, seen_by: str = ""):
        d = locate(rel)
        kind = rs.detect_kind(d) or ""
        if kind == "wellplay-eval" and not (d / "events.jsonl").exists():
            # an evaluation writes its events when a run of it ends: until then its progress is
            # on the evaluation page, which follows it
            return RedirectResponse("/eval/" + quote(rs.relpath(root, d), safe="/"), status_code=303)
        events = rp.load_events(d / "events.jsonl")
        if not events and not (d / "config.json").exists():
            raise FileNotFoundError(f"{rel}/events.jsonl")
        game = rp.game_of(events, kind)
        cfg, res = _dict(rs._read(d / "config.json")), _dict(rs._read(d / "result.json"))
        lang, scenario = rp.lang_of(events, game, cfg), (rp.scenario_of(events, cfg) if game == "magic" else "")
        finished = (d / "result.json").exists()
        state, reason = rs.run_state(d, kind or "wis")
        ended = finished or any(e.get("kind") in ("outcome", "accuse") for e in events)
        panel = rp.players_panel(events, game, cfg, res, reveal=ended or bool(private), lang=lang,
                                 stopped=state == "stopped" and not ended)
        players = [s.name for s in panel] or rp.players_of(events)
        if seen_by and seen_by not in players:
            return problem(request, 400, "Bad address",
                           f"This game has no seat {_short(seen_by, 60)!r} for ?seen_by=; its seats are "
                           f"{', '.join(players) or 'none yet'}.")
        rows = rp.rows(events, game, lang=lang, scenario=scenario)
        groups = list(dict.fromkeys((r.group, r.group_title) for r in rows))
        calls, tot = rp.load_calls(d / "llm_calls.jsonl")
        hidden = any(s.hidden for s in panel)
        registered = game_registry.find(game)
        return page("replay.html", rel=rs.relpath(root, d), game=game, game_title=registered.title if registered else game,
                    rows=rows, lang=lang, scenario=scenario,
                    players=players, panel=panel, groups=groups, seen=seen_by,
                    n_seen=sum(1 for r in rows if "*" in r.visible_to or seen_by in r.visible_to),
                    hidden_note="The roles of a hidden-role game are shown when it has ended, or on the private "
                                "view (show private)." if hidden else "",
                    truth=rp.truth(events, game, lang, scenario), finished=finished, state=state, reason=reason,
                    show_private=bool(private), n_events=len(events), calls_total=tot, wall_s=res.get("wall_time_s"),
                    run=rs.describe(root, d, kind)
                    if kind else None, seats=_seats(d))

    @app.get("/fragment/events/{rel:path}", response_class=HTMLResponse)
    def events_fragment(rel: str, after: int = 0):
        d = locate(rel)
        events = rp.load_events(d / "events.jsonl")
        game = rp.game_of(events, rs.detect_kind(d) or "")
        cfg = _dict(rs._read(d / "config.json"))
        lang, scenario = rp.lang_of(events, game, cfg), (rp.scenario_of(events, cfg) if game == "magic" else "")
        start = max(0, min(after, len(events)))
        prev_group, prev_phase = rp.heading_before(events, game, start, lang)
        html = env.get_template("_rows.html").render(rows=rp.rows(events, game, start, lang, scenario),
                                                     prev_group=prev_group, prev_phase=prev_phase, seen="",
                                                     rel=rs.relpath(root, d))
        resp = HTMLResponse(html)
        resp.headers["X-Next"] = str(len(events))
        state = rs.run_state(d, rs.detect_kind(d) or "wis")[0]
        resp.headers["X-State"] = state
        resp.headers["X-Finished"] = "0" if state == "running" else "1"   # the client stops polling
        return resp

    @app.get("/calls/{rel:path}", response_class=HTMLResponse)
    def calls_page(rel: str, actor: str = "", phase: str = "", purpose: str = "", failed: int = 0, q: str = "",
                   page_no: int = Query(1, alias="page")):
        from mas_agents.web import calls as cl
        d = locate(rel, must_exist=False)
        if not d.is_dir() and "/" in rel.strip("/"):
            # /calls/RUN/CALL_ID: one call's page
            run_rel, call_id = rel.strip("/").rsplit("/", 1)
            return call_page(locate(run_rel), call_id)
        if not d.exists():
            raise FileNotFoundError(rel)
        log = cl.load_log(d)
        hits = cl.filter_calls(log, actor=actor, phase=phase, purpose=purpose, failed=bool(failed), q=q)
        shown, page_no, pages = cl.paginate(hits, page_no, cl.CALLS_PER_PAGE)
        f = {"actor": actor, "phase": phase, "purpose": purpose, "failed": failed, "q": q}
        return page("calls.html", rel=rs.relpath(root, d), log=log, calls=shown, n_hits=len(hits), total=log.totals,
                    columns=cl.columns(log.calls), actors=cl.choices(log.calls, "actor"),
                    phases=cl.choices(log.calls, "phase"), purposes=cl.choices(log.calls, "purpose"), f=f,
                    page_no=page_no, pages=pages, per=cl.CALLS_PER_PAGE, query=_query(f), searched=bool(q.strip()),
                    kind=rs.detect_kind(d) or "")

    def call_page(d: Path, call_id: str) -> HTMLResponse:
        from mas_agents.web import calls as cl
        log = cl.load_log(d)
        ids = [str(c.get("call_id")) for c in log.calls]
        rel = rs.relpath(root, d)
        if call_id not in ids:
            return page("error.html", 404, title="No such call",
                        message=f"The run {rel or '.'} has no model call {_short(call_id, 80)!r} "
                                f"(its call log holds {len(ids)} calls).")
        i = ids.index(call_id)
        c = log.calls[i]
        rec = log.prompts.get(call_id) or {}
        kind = rs.detect_kind(d) or ""
        return page("call.html", rel=rel, c=c, rec=rec, log=log, st=log.status(c),
                    prev_id=ids[i - 1] if i > 0 else "", next_id=ids[i + 1] if i + 1 < len(ids) else "",
                    index=i + 1, n_calls=len(ids), cited=log.cited.get(call_id, []),
                    followed_by=log.followed_by.get(call_id, []), pretty=cl.pretty, kind=kind,
                    has_eval=kind == "wellplay-eval" and (d / "answers.jsonl").exists(),
                    columns=[k for k in cl.META_COLUMNS if c.get(k) not in (None, "")])

    @app.get("/eval/{rel:path}", response_class=HTMLResponse)
    def eval_page(rel: str, category: str = "", character: str = "", result: str = "", q: str = "", call: str = "",
                  page_no: int = Query(1, alias="page")):
        from mas_agents.web import calls as cl
        d = locate(rel)
        kind = rs.detect_kind(d)
        if kind != "wellplay-eval":
            return page("error.html", 404, title="Not an evaluation",
                        message=f"{rel or '.'} is not a WellPlay evaluation; "
                                "the evaluation view shows the questions of `mas wellplay eval` runs.")
        records = rp.load_events(d / "answers.jsonl") if (d / "answers.jsonl").is_file() else []
        cfg = rs._read(d / "config.json") or {}
        res = rs._read(d / "result.json")
        res = res if isinstance(res, dict) else {}
        log = cl.load_log(d)
        texts = cl.dataset_options(data_root, list(cfg.get("scripts") or []), str(cfg.get("lang") or "en"))
        qs = cl.questions(records, texts, log.prompts)
        if call:
            qs_f = [x for x in qs if call in (x.record.get("call_ids") or [])]
        else:
            qs_f = cl.filter_questions(qs, category=category, character=character, outcome=result, q=q)
        shown, page_no, pages = cl.paginate(qs_f, page_no, cl.QUESTIONS_PER_PAGE)
        f = {"category": category, "character": character, "result": result, "q": q}
        run = rs.describe(root, d, kind)
        return page("eval.html", rel=rs.relpath(root, d), run=run, cfg=cfg, res=res,
                    progress=None if res else rs.eval_progress(d, data_root), evaluated=_run_link(cfg.get("run")),
                    qs=shown, n_hits=len(qs_f), n_all=len(qs), tot=cl.totals(qs, res), f=f,
                    categories=list(dict.fromkeys(str(x.record.get("category")) for x in qs)),
                    characters=list(dict.fromkeys(str(x.record.get("character")) for x in qs)),
                    page_no=page_no, pages=pages, per=cl.QUESTIONS_PER_PAGE, query=_query(f),
                    sources={x.source for x in qs}, has_calls=bool(log.calls), recorded=log.recorded,
                    call_ids={str(c.get("call_id")) for c in log.calls}, multi_runs=len({r.get("run") for r in records}) > 1)

    @app.get("/wis-replay/{rel:path}")
    def wis_replay(rel: str):
        # the Who-is-Spy page is the replay now; old links land there
        d = locate(rel)
        return RedirectResponse("/replay/" + quote(rs.relpath(root, d), safe="/"), status_code=301)

    # -- reports -----------------------------------------------------------------------------
    @app.get("/report/{rel:path}", response_class=HTMLResponse)
    def report_page(rel: str):
        d = locate(rel)
        path = d / "report.md"
        if not path.is_file():
            raise FileNotFoundError(f"{rel}/report.md")
        body, used = render_markdown(path.read_text(encoding="utf-8"), rs.relpath(root, d), d)
        figures = sorted(p.name for p in d.glob("*.png") if p.name not in used)
        return page("report.html", rel=rs.relpath(root, d), body=body, figures=figures,
                    run=rs.describe(root, d, rs.detect_kind(d) or "") if rs.detect_kind(d) else None)

    @app.get("/raw/{rel:path}")
    def raw(rel: str):
        p = locate(rel)
        if not p.is_file() or p.suffix not in RAW_TYPES:
            raise FileNotFoundError(rel)
        return FileResponse(p, media_type=RAW_TYPES[p.suffix])

    # -- leaderboard -------------------------------------------------------------------------
    def _databases() -> list[tuple[str, Path]]:
        """``[(key, path)]`` of every leaderboard database: ``--db`` (or the default one) when it
        exists, then those found under ``--runs``; the key of one under ``--runs`` is its path
        there, of another ``--db``."""
        from eval.reports.wis_leaderboard import default_db_path
        out: list[tuple[str, Path]] = []
        given = Path(db) if db is not None else default_db_path(create=False)
        if given.is_file() and rs.is_leaderboard_db(given):
            real = given.resolve()
            out.append((rs.relpath(root, real) if root in real.parents else "--db", real))
        for f in rs.find_leaderboards(root):
            if all(f != p for _, p in out):
                out.append((rs.relpath(root, f), f))
        return out

    def _board_link(d: Path) -> str | None:
        """The leaderboard address of the tournament in ``d`` (the database that holds it)."""
        tid = rs.tournament_id(d)
        if not tid:
            return None
        from eval.reports.wis_leaderboard import Leaderboard
        for key, path in _databases():
            if Leaderboard(path, read_only=True).config(tid) is not None:
                return f"/leaderboard?db={quote(key)}&tournament={quote(tid)}"
        return None

    def _pick(db_key: str, tournament: str):
        """``(databases, key, Leaderboard, tournament id or None)`` of a leaderboard request."""
        from eval.reports.wis_leaderboard import Leaderboard
        dbs = _databases()
        if not dbs:
            return dbs, "", None, None
        if db_key:
            if db_key != "--db":
                rs.confine(root, db_key)   # 400/403 for a bad or outside path
            match = [p for k, p in dbs if k == db_key]
            if not match:
                raise FileNotFoundError(f"{db_key} (no leaderboard database there)")
            path = match[0]
        else:
            db_key, path = dbs[0]
        board = Leaderboard(path, read_only=True)
        if tournament and board.config(tournament) is None:
            raise FileNotFoundError(f"{db_key}: tournament {tournament}")
        return dbs, db_key, board, tournament or None

    def _game_runs() -> tuple[dict[str, str], dict[str, str]]:
        """``({game_id: run rel}, {tournament id: run rel})`` of the runs under ``--runs``."""
        games, tours = {}, {}
        for r in rs.scan(root):
            d = root / r.rel
            if r.kind == "wis":
                cfg = rs._read(d / "config.json") or {}
                games.setdefault(str(cfg.get("game_id") or ""), r.rel)
            elif r.kind == "wis-tournament":
                tid = rs.tournament_id(d)
                if tid:
                    tours.setdefault(tid, r.rel)
        return games, tours

    @app.get("/leaderboard", response_class=HTMLResponse)
    def leaderboard(db: str = "", tournament: str = "", agent: str = ""):
        from mas_agents.web.rating import rank_table, ratings
        dbs, key, board, tid = _pick(db, tournament)
        if board is None:
            from eval.reports.wis_leaderboard import default_db_path
            return page("leaderboard.html", missing=True, looked=[str(create_db or default_db_path(create=False)) + (" (--db)" if create_db else " (the default)"),
                                                                  f"every *.sqlite, *.sqlite3 and *.db file under {root}"])
        games = board.games(tid)
        game_runs, tour_runs = _game_runs()
        listed = [g for g in games if not agent or any(p.get("agent") == agent for p in g.get("players") or [])]
        return page("leaderboard.html", missing=False, dbs=dbs, key=key, db_path=str(board.path),
                    tournaments=board.tournaments(), current=tid or "", rows=rank_table(games), rating=ratings(games),
                    n_games=len(games), agent=agent, games=listed[:500], n_listed=len(listed), game_runs=game_runs,
                    tour_runs=tour_runs)

    @app.get("/leaderboard.csv")
    def leaderboard_csv(db: str = "", tournament: str = ""):
        from mas_agents.web.downloads import table_csv
        from mas_agents.web.rating import rank_table
        _, key, board, tid = _pick(db, tournament)
        if board is None:
            raise FileNotFoundError("a leaderboard database")
        head = ["rank", "agent", "seats", "rank_score", "avg_score", "avg_score_low95_bootstrap", "avg_score_high95_bootstrap"]
        for m in ("win_spy", "win_civilian", "vote_accuracy", "foul_rate"):
            head += [m, f"{m}_k", f"{m}_n", f"{m}_low95_wilson", f"{m}_high95_wilson"]
        rows = [head]
        for r in rank_table(board.games(tid)):
            a = r["avg_score"]
            row = [r["rank"], r["agent"], r["seats"], r["rank_score"], a["mean"], a["low"], a["high"]]
            for m in ("win_spy", "win_civilian", "vote_accuracy", "foul_rate"):
                row += [r[m]["rate"], r[m]["k"], r[m]["n"], r[m]["low"], r[m]["high"]]
            rows.append(["" if v is None else (f"{v:.6g}" if isinstance(v, float) else str(v)) for v in row])
        return _csv_response(table_csv(rows), f"leaderboard-{tid or 'overall'}.csv")

    # -- a human seat ------------------------------------------------------------------------
    def _seats(d: Path) -> list[str]:
        from eval.runs.human import human_seats
        return [p.name for p in human_seats(d)]

    def _model_name() -> str:
        return str(model if isinstance(model, str) else type(model).__name__)

    @app.get("/play", response_class=HTMLResponse)
    def play_form():
        return page("play_new.html", error="", form={}, model=_model_name())

    @app.post("/play")
    async def play_start(request: Request):
        form = _form(await request.body())
        try:
            game = _check_game(form, starter.data_root)
        except ValueError as exc:
            # shown by this handler, with the form as it was filled (never through the address)
            return page("play_new.html", 400, error=str(exc), form=form, model=_model_name())
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        # directly under --runs: its seat is /play/spy-human-..., its run /run/spy-human-...
        out = root / f"spy-human-{stamp}-{random.Random().randrange(16**4):04x}"
        out.mkdir(parents=True)
        key = rs.relpath(root, out)
        starter.start(out, key, **game)
        return RedirectResponse(f"/play/{quote(key)}", status_code=303)

    def _seat_page(d: Path, seat: str, status: int = 200, note: str = "") -> HTMLResponse:
        from eval.runs.human import read_view
        key = rs.relpath(root, d)
        seats = _seats(d)
        state, reason = _seat_state(d)
        sig = _seat_sig(d, seat)   # read before the view: a change after it reloads the page
        err = starter.errors.get(key)
        if not seats:
            if err or state != "running":
                if not err and not (d / "human").exists() and rs.detect_kind(d) is not None:
                    return page("error.html", 404, title="No human seat",
                                message=f"{key} is a game without a human seat; watch it on its replay page.")
                return page("play.html", status, rel=key, seat="", view=None, seats=[], error=err, waiting=False,
                            sig=sig, state=state, reason=reason, note=note)
            return page("play.html", status, rel=key, seat="", view=None, seats=[], error=None, waiting=True, sig=sig,
                        state=state, reason=reason, note=note)
        seat = seat if seat in seats else seats[0]
        view = read_view(d / "human" / seat)
        return page("play.html", status, rel=key, seat=seat, view=view, seats=seats, error=err, waiting=False,
                    finished=(d / "result.json").exists(), sig=sig, state=state, reason=reason, note=note)

    def _seat_state(d: Path) -> tuple[str, str]:
        """The game's state; a game this server is starting is running while its thread lives."""
        th = starter.threads.get(rs.relpath(root, d))
        if th is not None and th.is_alive() and not (d / "result.json").exists():
            return "running", ""
        return rs.run_state(d, rs.detect_kind(d) or "wis")

    @app.get("/play/{rel:path}", response_class=HTMLResponse)
    def play_page(rel: str, seat: str = ""):
        return _seat_page(locate(rel), seat)

    def _seat_sig(d: Path, seat: str) -> str:
        """What the seat page shows, in one string: a change makes the page reload itself."""
        from eval.runs.human import read_view
        seats = _seats(d)
        err = starter.errors.get(rs.relpath(root, d), "")
        state = _seat_state(d)[0]
        if not seats:
            return f"none:{err}:{state}"
        v = read_view(d / "human" / (seat if seat in seats else seats[0]))
        p = v.get("pending") or {}
        return f"{len(v.get('messages') or [])}:{p.get('id')}:{v.get('finished')}:{state}:{err}"

    @app.get("/api/seat/{rel:path}")
    def seat_state(rel: str, seat: str = ""):
        d = locate(rel)
        return JSONResponse({"sig": _seat_sig(d, seat), "state": _seat_state(d)[0]})

    @app.post("/play/{rel:path}/answer")
    async def play_answer(rel: str, request: Request):
        from eval.runs.human import submit_answer
        d = locate(rel)
        form = _form(await request.body())
        seat = form.get("seat", "")
        if seat not in _seats(d):
            raise FileNotFoundError(f"{rel}: seat {seat!r}")
        state, reason = _seat_state(d)
        if state != "running":
            why = "it is over" if state == "finished" else f"it has stopped ({reason})"
            return _seat_page(d, seat, 409, note=f"Your answer was not sent: the game is not being played any more, {why}.")
        try:
            rid = int(form.get("id", ""))
        except ValueError:
            return _seat_page(d, seat, 400, note="Your answer was not sent: the form did not say which request it answers.")
        try:
            submit_answer(d / "human" / seat, rid, form.get("text", ""), target=form.get("target") or None)
        except ValueError as exc:
            return _seat_page(d, seat, 409, note=f"Your answer was not sent: {exc}")
        await asyncio.sleep(0.3)   # usually long enough for the game to take the answer and ask the next thing
        return RedirectResponse(f"/play/{quote(rs.relpath(root, d))}?seat={quote(seat)}", status_code=303)

    # -- downloads ---------------------------------------------------------------------------
    @app.get("/zip/{rel:path}")
    def zip_run(rel: str):
        from mas_agents.web.downloads import zip_stream
        d = locate(rel)
        if not d.is_dir() or d == root:
            raise FileNotFoundError(f"{rel or '.'} (a run directory)")
        name = rs.relpath(root, d).replace("/", "_")
        return StreamingResponse(zip_stream(root, d, d.name), media_type="application/zip",
                                 headers={"Content-Disposition": f'attachment; filename="{quote(name)}.zip"'})

    @app.get("/csv/{rel:path}")
    def report_csv(rel: str, table: int = 0):
        from mas_agents.web.downloads import markdown_tables, table_csv
        d = locate(rel)
        if not (d / "report.md").is_file():
            raise FileNotFoundError(f"{rel}/report.md")
        tables = markdown_tables((d / "report.md").read_text(encoding="utf-8"))
        if not 0 <= table < len(tables):
            raise FileNotFoundError(f"{rel}/report.md, table {table} (it has {len(tables)})")
        name = rs.relpath(root, d).replace("/", "_")
        # an estimate cell ("57.1 [35.0, 80.2] (n=7)") becomes numeric value / low / high / n columns
        from eval.stats import numeric_columns
        return _csv_response(table_csv(numeric_columns(tables[table])), f"{name}-table{table + 1}.csv")

    return app


def _query(f: dict[str, Any]) -> str:
    """The non-empty filters of a list page as a query string (for its paging links)."""
    from urllib.parse import urlencode
    return urlencode({k: v for k, v in f.items() if v not in ("", 0, None)})


def _dict(x: Any) -> dict[str, Any]:
    """``x`` when it is a dict (a JSON file read), else {}."""
    return x if isinstance(x, dict) else {}


def _short(text: str, n: int = 120) -> str:
    return text if len(text) <= n else text[:n] + "…"


def _csv_response(text: str, filename: str) -> Response:
    return PlainTextResponse(text, media_type="text/csv; charset=utf-8",
                             headers={"Content-Disposition": f'attachment; filename="{quote(filename)}"'})


def _number(form: dict[str, str], name: str, what: str, kind=int, low: float = 0, high: float = 10**9):
    """``form[name]`` as a number in ``[low, high]`` (empty: 0), or ValueError in a plain sentence."""
    import math
    text = (form.get(name) or "").strip() or "0"
    try:
        x = kind(text)
    except ValueError:
        raise ValueError(f"The {what} must be {'a whole number' if kind is int else 'a number'}; "
                         f"{_short(text, 40)!r} is not one.") from None
    if not (math.isfinite(x) and low <= x <= high):
        raise ValueError(f"The {what} must be between {low:g} and {high:g}; {_short(text, 40)!r} is not.")
    return x


def _check_game(form: dict[str, str], data_root: Path | None) -> dict[str, Any]:
    """The game a ``/play`` form asks for, as keyword arguments of :meth:`GameStarter.start`.

    Raises:
        ValueError: in a plain sentence (seats, agents, language, seed, time limit, word pair).
    """
    from eval.runs.human import HUMAN
    from graphs.wis import rules as wis_rules
    from mas_agents.specs import is_remote, parse_spec, split_model
    agents = [a.strip() for a in form.get("agents", "").split(",") if a.strip()]
    if agents.count(HUMAN) != 1:
        raise ValueError("Seat exactly one human, e.g. human,plain,plain,plain.")
    try:
        wis_rules.check_players(len(agents))
    except ValueError:
        raise ValueError(f"A game has {wis_rules.MIN_PLAYERS} to {wis_rules.MAX_PLAYERS} seats; "
                         f"this one has {len(agents)}.") from None
    for a in agents:
        if a != HUMAN and not is_remote(a):
            try:
                blocks, seat_model = split_model(a)
                parse_spec(blocks)
                if seat_model is not None:
                    check_model_spec(seat_model)
            except ValueError as exc:
                raise ValueError(f"The seat {_short(a, 60)!r} is not an agent this project knows ({exc}).") from None
    lang = form.get("lang", "en")
    if lang not in ("en", "zh"):
        raise ValueError("The language must be en or zh.")
    seed = _number(form, "seed", "seed")
    limit = _number(form, "speak_timeout", "time to answer (in seconds)", float, 0, 3600) or None
    text = form.get("pair", "").strip()
    if text:
        parts = [p.strip() for p in text.split("/")]
        if len(parts) != 2 or not all(parts):
            raise ValueError("The word pair must be two words separated by a slash, the civilians' word first: "
                             "tea/coffee.")
        if parts[0].casefold() == parts[1].casefold():
            raise ValueError(f"The two words of the pair must differ; both are {_short(parts[0], 40)!r}.")
        pair = {"civilian": parts[0], "spy": parts[1]}
    else:
        from eval.datasets.wis import load_pairs
        if data_root is None:
            raise ValueError("Give a word pair (CIVILIAN/SPY): this server has no datasets to draw one from.")
        try:
            pair = random.Random(seed).choice(load_pairs(data_root, lang))
        except (FileNotFoundError, ValueError, IndexError) as exc:
            raise ValueError(f"Give a word pair (CIVILIAN/SPY): no pair could be drawn from the datasets ({exc}).") from None
    return {"agents": agents, "pair": pair, "lang": lang, "seed": seed, "speak_timeout": limit}


def check_model_spec(spec: str) -> None:
    """Check a model spec as :func:`mas_agents.llm.make_chat_model` would read it, without
    building the model (a local one would load its weights): ``local``, ``local:PATH`` of an
    existing file, ``openai:NAME`` with ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` set.

    Raises:
        ValueError: in a sentence naming the spec and what is accepted.
    """
    import os

    from mas_agents.llm import CLI_SPEC_FORMS
    s = spec.strip()
    if s == "local":
        return
    if s.startswith("local:"):
        path = Path(s[len("local:"):].strip()).expanduser()
        if not path.is_file():
            raise ValueError(f"model {_short(spec, 60)!r}: no GGUF file at {_short(str(path), 80)}")
        return
    if s.startswith("openai:"):
        if not s[len("openai:"):].strip():
            raise ValueError(f"model {_short(spec, 60)!r}: no model name after 'openai:'")
        if not (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")):
            raise ValueError(f"model {_short(spec, 60)!r}: this server has neither OPENAI_API_KEY nor "
                             "OPENAI_BASE_URL set")
        return
    raise ValueError(f"unknown model {_short(spec, 60)!r}; accepted: {', '.join(CLI_SPEC_FORMS)}")


def _hostname(host: str) -> str:
    """The name of a ``Host`` header without its port (``[::1]:8000`` -> ``[::1]``)."""
    if host.startswith("["):
        return host.split("]")[0] + "]"
    return host.rsplit(":", 1)[0]


def _form(body: bytes) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body as ``{name: last value}`` (no multipart)."""
    return {k: v[-1] for k, v in parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True).items()}


def render_markdown(text: str, rel: str, d: Path) -> tuple[str, set[str]]:
    """``report.md`` as HTML with raw HTML disabled (it is escaped), GitHub tables on, and image
    paths relative to the run rewritten to ``/raw/<rel>/...``, and a link to each table as CSV
    (``/csv/<rel>?table=N``) after it; also returns the image paths it showed. An image path that
    leaves the run directory is dropped."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    used: set[str] = set()
    default_image = md.renderer.rules.get("image")

    def image(renderer, tokens, idx, options, env):
        tok = tokens[idx]
        src = tok.attrGet("src") or ""
        if "://" in src or src.startswith("/") or src.startswith("data:"):
            tok.attrSet("src", "")
        else:
            try:
                p = rs.confine(d, src)
                tok.attrSet("src", "/raw/" + quote(f"{rel}/{rs.relpath(d, p)}".lstrip("/"), safe="/"))
                used.add(src)
            except rs.OutsideRuns:
                tok.attrSet("src", "")
        img = default_image(tokens, idx, options, env)
        full = tok.attrGet("src")
        # shown at the page's width; the image itself, at full size, one click away
        return f'<a href="{full}" class="figure-link" title="full size">{img}</a>' if full else img

    tables = [0]

    def table_close(renderer, tokens, idx, options, env):
        n = tables[0]
        tables[0] += 1
        href = "/csv/" + quote(rel, safe="/") + f"?table={n}"
        return f'</table>\n<p class="csv"><a href="{href}" class="csv-link" download>table {n + 1} as CSV</a></p>\n'

    def link_open(renderer, tokens, idx, options, env):
        """A relative link inside the run: ``X/report.md`` -> that sub-run's report page, any other
        file -> ``/raw/...``; a link leaving the run is dropped (``#``); absolute links are kept."""
        tok = tokens[idx]
        href = tok.attrGet("href") or ""
        if href and "://" not in href and not href.startswith(("/", "#", "mailto:")):
            try:
                p = rs.confine(d, href)
                target = f"{rel}/{rs.relpath(d, p)}".strip("/")
                if p.name == "report.md":
                    tok.attrSet("href", "/report/" + quote(target.rsplit("/", 1)[0] if "/" in target else "", safe="/"))
                else:
                    tok.attrSet("href", "/raw/" + quote(target, safe="/"))
            except (rs.OutsideRuns, rs.BadPath):
                tok.attrSet("href", "#")
        return renderer.renderToken(tokens, idx, options, env)

    md.add_render_rule("image", image)
    md.add_render_rule("table_close", table_close)
    md.add_render_rule("link_open", link_open)
    return md.render(text), used
