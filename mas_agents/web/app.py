"""The ``mas serve`` web app (FastAPI, Jinja2 templates, one small static script).

Pages (every ``{rel}`` is a path under ``--runs``, resolved by :func:`mas_agents.web.runs.confine`;
anything outside is answered 403):

================================  ===============================================================
``/``                             the runs: kind, date, model, agents, headline; filters
``/run/{rel}``                    one run: its numbers, progress, the runs inside it, its files
``/replay/{rel}``                 a game replayed from ``events.jsonl``; live while it is played
``/calls/{rel}``                  the run's LLM call log (``llm_calls.jsonl``)
``/report/{rel}``                 ``report.md`` rendered (raw HTML off) with its figures
``/wis-replay/{rel}``             the Who-is-Spy replay page of ``eval/reports/wis_replay.py``
``/raw/{rel}``                    a PNG/JSON/JSONL/Markdown/CSV/text file of a run, as data
``/leaderboard``                  Who is Spy: the paper's columns and openskill ratings
``/play``                         start a Who-is-Spy game with a human seat
``/play/{rel}``                   the human seat: what that player sees, and the answer form
================================  ===============================================================

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

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader

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

        threading.Thread(target=run, name=f"wis-{key}", daemon=True).start()


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
    env = _env()
    starter = GameStarter(model, data_root)
    app = FastAPI(title="mas serve", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

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

    @app.exception_handler(FileNotFoundError)
    async def not_found(request: Request, exc: FileNotFoundError):
        return page("error.html", 404, title="Not found", message=f"nothing at {exc}")

    @app.exception_handler(rs.OutsideRuns)
    async def refused(request: Request, exc: rs.OutsideRuns):
        resp = page("error.html", 403, title="Refused", message=str(exc))
        return resp

    # -- runs --------------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse)
    def index(kind: str = "", model: str = "", agent: str = "", nested: int = 0):
        every = rs.scan(root)
        shown = rs.filter_runs(every, kind=kind, model=model, agent=agent, nested=bool(nested))
        models = sorted({r.model for r in every if r.model})
        return page("index.html", runs=shown, total=len(every), kinds=rs.KINDS, models=models,
                    f={"kind": kind, "model": model, "agent": agent, "nested": nested})

    @app.get("/run/{rel:path}", response_class=HTMLResponse)
    def run_page(rel: str):
        d = locate(rel)
        kind = rs.detect_kind(d)
        if kind is None:
            inside = [r for r in rs.scan(d)] if d.is_dir() else []
            return page("error.html", 404, title="Not a run", message=f"{rel or '.'} holds no run"
                        + (f" (it holds {len(inside)} runs: see the list)" if inside else ""))
        run = rs.describe(root, d, kind)
        children = [r for r in rs.scan(root) if r.parent == run.rel] if not run.is_game else []
        prog = _progress(d, kind) if kind in ("wis-tournament", "ablation", "wellplay-compare", "magic-bench") else None
        files = sorted(p.name for p in d.iterdir() if p.is_file() and p.suffix in RAW_TYPES)
        figures = [f for f in files if f.endswith(".png")]
        return page("run.html", run=run, children=children, progress=prog, files=files, figures=figures,
                    has_events=(d / "events.jsonl").exists(), has_calls=(d / "llm_calls.jsonl").exists(),
                    has_report=(d / "report.md").exists(), seats=_seats(d))

    def _progress(d: Path, kind: str) -> dict[str, Any]:
        total = None
        if kind == "wis-tournament":
            tid = rs.tournament_id(d)
            cfg = _board().config(tid) if tid and _db_exists() else None
            total = (cfg or {}).get("games")
        return rs.progress(d, kind, db_total=total)

    @app.get("/api/progress/{rel:path}")
    def api_progress(rel: str):
        d = locate(rel)
        kind = rs.detect_kind(d) or ""
        return JSONResponse(_progress(d, kind))

    # -- replays -----------------------------------------------------------------------------
    @app.get("/replay/{rel:path}", response_class=HTMLResponse)
    def replay_page(rel: str, private: int = 0):
        d = locate(rel)
        kind = rs.detect_kind(d) or ""
        events = rp.load_events(d / "events.jsonl")
        if not events and not (d / "config.json").exists():
            raise FileNotFoundError(f"{rel}/events.jsonl")
        game = rp.game_of(events, kind)
        finished = (d / "result.json").exists()
        calls, tot = rp.load_calls(d / "llm_calls.jsonl")
        return page("replay.html", rel=rs.relpath(root, d), game=game, rows=rp.rows(events, game),
                    players=rp.players_of(events), truth=rp.truth(events, game), finished=finished,
                    show_private=bool(private), n_events=len(events), calls_total=tot, run=rs.describe(root, d, kind)
                    if kind else None, seats=_seats(d))

    @app.get("/fragment/events/{rel:path}", response_class=HTMLResponse)
    def events_fragment(rel: str, after: int = 0):
        d = locate(rel)
        events = rp.load_events(d / "events.jsonl")
        game = rp.game_of(events, rs.detect_kind(d) or "")
        start = max(0, min(after, len(events)))
        prev = rp.section_of(game, events[start - 1]) if start > 0 else ""
        html = env.get_template("_rows.html").render(rows=rp.rows(events, game, start), prev_section=prev,
                                                     rel=rs.relpath(root, d))
        resp = HTMLResponse(html)
        resp.headers["X-Next"] = str(len(events))
        resp.headers["X-Finished"] = "1" if (d / "result.json").exists() else "0"
        return resp

    @app.get("/calls/{rel:path}", response_class=HTMLResponse)
    def calls_page(rel: str):
        d = locate(rel)
        calls, tot = rp.load_calls(d / "llm_calls.jsonl")
        return page("calls.html", rel=rs.relpath(root, d), calls=calls, total=tot, columns=rp.CALL_COLUMNS)

    @app.get("/wis-replay/{rel:path}", response_class=HTMLResponse)
    def wis_replay(rel: str):
        from eval.reports.wis_replay import replay_html
        d = locate(rel)
        record = rs._read(d / "result.json")
        if not isinstance(record, dict):
            raise FileNotFoundError(f"{rel}/result.json")
        try:
            return HTMLResponse(replay_html(record, rp.load_events(d / "events.jsonl")))
        except ValueError as exc:
            return page("error.html", 422, title="Not a Who-is-Spy game", message=str(exc))

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
    def _board():
        from eval.reports.wis_leaderboard import Leaderboard
        return Leaderboard(db)

    def _db_exists() -> bool:
        from eval.reports.wis_leaderboard import default_db_path
        return Path(db).exists() if db is not None else default_db_path().exists()

    @app.get("/leaderboard", response_class=HTMLResponse)
    def leaderboard(tournament: str = ""):
        from eval.reports.wis_leaderboard import HEADERS, leaderboard_rows
        from mas_agents.web.rating import ratings
        if not _db_exists():
            return page("leaderboard.html", missing=True, db=str(db or "default"), tournaments=[], rows=[],
                        headers=HEADERS, rating=None, current="")
        board = _board()
        tid = tournament or None
        games = board.games(tid)
        return page("leaderboard.html", missing=False, db=str(board.path), tournaments=board.tournaments(),
                    rows=leaderboard_rows(board.metrics(tid)), headers=HEADERS, rating=ratings(games),
                    current=tournament, n_games=len(games))

    # -- a human seat ------------------------------------------------------------------------
    def _seats(d: Path) -> list[str]:
        from eval.runs.human import human_seats
        return [p.name for p in human_seats(d)]

    @app.get("/play", response_class=HTMLResponse)
    def play_form(error: str = ""):
        return page("play_new.html", error=error, model=str(model if isinstance(model, str) else type(model).__name__))

    @app.post("/play")
    async def play_start(request: Request):
        form = _form(await request.body())
        from eval.runs.human import HUMAN
        from eval.runs.wis_session import parse_pair
        from graphs.wis import rules as wis_rules
        agents = [a.strip() for a in form.get("agents", "").split(",") if a.strip()]
        try:
            if agents.count(HUMAN) != 1:
                raise ValueError("seat exactly one human: e.g. human,plain,plain,plain")
            wis_rules.check_players(len(agents))
            from mas_agents.specs import is_remote, parse_spec, split_model
            for a in agents:
                if a != HUMAN and not is_remote(a):
                    parse_spec(split_model(a)[0])
            lang = form.get("lang", "en")
            if lang not in ("en", "zh"):
                raise ValueError(f"language {lang!r}: en or zh")
            seed = int(form.get("seed") or 0)
            limit = float(form.get("speak_timeout") or 0) or None
            if form.get("pair", "").strip():
                pair = parse_pair(form["pair"])
            else:
                from eval.datasets.wis import load_pairs
                if starter.data_root is None:
                    raise ValueError("give a word pair (CIVILIAN/SPY): this server has no datasets root")
                pair = random.Random(seed).choice(load_pairs(starter.data_root, lang))
        except (ValueError, FileNotFoundError) as exc:
            return RedirectResponse(f"/play?error={quote(str(exc))}", status_code=303)
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        out = root / "play" / f"spy-human-{stamp}-{random.Random().randrange(16**4):04x}"
        out.mkdir(parents=True)
        key = rs.relpath(root, out)
        starter.start(out, key, agents=agents, pair=pair, lang=lang, seed=seed, speak_timeout=limit)
        return RedirectResponse(f"/play/{quote(key)}", status_code=303)

    @app.get("/play/{rel:path}", response_class=HTMLResponse)
    def play_page(rel: str, seat: str = ""):
        from eval.runs.human import read_view
        d = locate(rel)
        key = rs.relpath(root, d)
        seats = _seats(d)
        sig = _seat_sig(d, seat)   # read before the view: a change after it reloads the page
        if not seats:   # the game is still seating its players
            err = starter.errors.get(key)
            return page("play.html", rel=key, seat="", view=None, seats=[], error=err, waiting=not err, sig=sig)
        seat = seat if seat in seats else seats[0]
        view = read_view(d / "human" / seat)
        return page("play.html", rel=key, seat=seat, view=view, seats=seats, error=starter.errors.get(key),
                    waiting=False, finished=(d / "result.json").exists(), sig=sig)

    def _seat_sig(d: Path, seat: str) -> str:
        """What the seat page shows, in one string: a change makes the page reload itself."""
        from eval.runs.human import read_view
        seats = _seats(d)
        err = starter.errors.get(rs.relpath(root, d), "")
        if not seats:
            return f"none:{err}"
        v = read_view(d / "human" / (seat if seat in seats else seats[0]))
        p = v.get("pending") or {}
        return f"{len(v.get('messages') or [])}:{p.get('id')}:{v.get('finished')}:{(d / 'result.json').exists()}:{err}"

    @app.get("/api/seat/{rel:path}")
    def seat_state(rel: str, seat: str = ""):
        return JSONResponse({"sig": _seat_sig(locate(rel), seat)})

    @app.post("/play/{rel:path}/answer")
    async def play_answer(rel: str, request: Request):
        from eval.runs.human import submit_answer
        d = locate(rel)
        form = _form(await request.body())
        seat = form.get("seat", "")
        if seat not in _seats(d):
            raise FileNotFoundError(f"{rel}: seat {seat!r}")
        try:
            submit_answer(d / "human" / seat, int(form.get("id", "-1")), form.get("text", ""),
                          target=form.get("target") or None)
        except ValueError as exc:
            return RedirectResponse(f"/play/{quote(rs.relpath(root, d))}?seat={quote(seat)}&note={quote(str(exc))}",
                                    status_code=303)
        await asyncio.sleep(0.3)   # usually long enough for the game to take the answer and ask the next thing
        return RedirectResponse(f"/play/{quote(rs.relpath(root, d))}?seat={quote(seat)}", status_code=303)

    return app


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
    paths relative to the run rewritten to ``/raw/<rel>/...``; also returns the image paths it
    showed. An image path that leaves the run directory is dropped."""
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
        return default_image(tokens, idx, options, env)

    md.add_render_rule("image", image)
    return md.render(text), used
