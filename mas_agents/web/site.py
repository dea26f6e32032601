"""What every page of ``mas serve`` shares: the :class:`Site` (the ``--runs`` root, the templates,
the leaderboard databases, the games started from ``/play``), reached by a route through
:func:`get_site` (``site: Site = Depends(get_site)``), and the small helpers of the routers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, quote, urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from jinja2 import ChoiceLoader, Environment, FileSystemLoader, FunctionLoader

from mas_agents import utterance
from mas_agents.game import contract as game_registry
from mas_agents.game.human import HUMAN, HUMAN_SPEAK_TIMEOUT, human_seats, read_view
from mas_agents.web import runs as rs
from mas_agents.game import experiments
from mas_agents.web import run_kinds
from mas_agents.web import paths
from mas_agents.web.evaluation import eval_progress
from mas_agents.web.paths import recorded_run
from mas_agents.rundir import RunDir

HERE = Path(__file__).parent
#: What ``/raw`` serves, and as what (never HTML: a file of a run is data, not a page).
RAW_TYPES = {".png": "image/png", ".json": "application/json", ".jsonl": "text/plain; charset=utf-8",
             ".md": "text/plain; charset=utf-8", ".csv": "text/plain; charset=utf-8",
             ".txt": "text/plain; charset=utf-8"}


#: The name under which a game's own seat template is included (``game-seat:<kind>``): the file
#: its :attr:`mas_agents.game.view.GameView.seat_template` names, in the game's folder.
GAME_TEMPLATE = "game-seat:"


def _game_template(name: str) -> tuple[str, str, Callable[[], bool]] | None:
    """Jinja2's source of ``game-seat:<kind>``: the registered game's seat template; None for any
    other name (Jinja2 then reports it missing)."""
    if not name.startswith(GAME_TEMPLATE):
        return None
    game = game_registry.find(name[len(GAME_TEMPLATE):])
    path = game.view.seat_template if game is not None else None
    if path is None or not path.is_file():
        return None
    mtime = path.stat().st_mtime
    return path.read_text(encoding="utf-8"), str(path), lambda: path.stat().st_mtime == mtime


def make_env(globals_: dict[str, Any] | None = None) -> Environment:
    """The Jinja2 environment of the templates (autoescaping on; filter ``u`` quotes a path for
    a URL, ``said`` renders a seat's words as one quoted line, :func:`mas_agents.utterance.quote`);
    ``globals_`` are added to its globals."""
    env = Environment(loader=ChoiceLoader([FileSystemLoader(str(HERE / "templates")), FunctionLoader(_game_template)]),
                      autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["u"] = lambda rel: quote(str(rel), safe="/")
    env.filters["said"] = utterance.quote      # a seat's words: one quoted line (issue 57, E1)
    env.globals.update(human_speak_timeout=HUMAN_SPEAK_TIMEOUT, **(globals_ or {}))
    return env


@dataclass
class Site:
    """The state of one web app.

    Attributes:
        root: the ``--runs`` directory, resolved; nothing outside it is read or written.
        db: the ``--db`` leaderboard database given (None: the default one).
        data_root: datasets root (word pairs of games started from ``/play``, question totals).
        model: default model of the agents in games started from ``/play``.
        env: the templates. starter: the games started from ``/play``
            (:class:`mas_agents.web.routes.play.GameStarter`).
    """

    root: Path
    db: Path | None
    data_root: Path | None
    model: Any
    env: Environment
    starter: Any = None

    def page(self, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        """The template ``name`` rendered with ``ctx`` (and ``root``) as an HTML response."""
        html = self.env.get_template(name).render(root=str(self.root), **ctx)
        return HTMLResponse(html, status_code=status)

    def locate(self, rel: str, must_exist: bool = True) -> Path:
        """``rel`` under ``--runs`` (:func:`mas_agents.web.paths.confine`).

        Raises:
            OutsideRuns, BadPath: see ``confine`` (403, 400). FileNotFoundError: ``must_exist``
            and nothing is there (404).
        """
        d = paths.confine(self.root, rel)
        if must_exist and not d.exists():
            raise FileNotFoundError(rel)
        return d

    def problem(self, request: Request, status: int, title: str, message: str) -> Response:
        """The error page (or, for ``/api/``, ``{"error": message}``) with ``status``."""
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": message}, status_code=status)
        return self.page("error.html", status, title=title, message=message)

    def rel(self, d: Path) -> str:
        """``d`` relative to ``--runs`` in URL form."""
        return paths.relpath(self.root, d)

    def seats(self, d: Path) -> list[str]:
        """The folder names of the human seats of the run in ``d``."""
        return [p.name for p in human_seats(d)]

    def withheld(self, d: Path) -> list[str] | None:
        """The seats of the game being played with a person in it that holds ``d`` (``d`` itself
        or a folder above it under ``--runs``), or None when there is none: while such a game is
        played, whatever shows what its human seat may not see (another seat's word or role, the
        pair in ``config.json``, the prompts, the private events) is withheld from every visitor,
        the person included (issue 57, E4), until it has ended (finished or stopped).

        A game has a person in it when it has human seat folders (:func:`human_seats`), names the
        seat spec ``human`` in its ``config.json``, or was started from ``/play`` by this server;
        it is being played while this server's thread of it lives or :func:`mas_agents.web.run_kinds.run_state`
        says ``running``.

        Returns:
            the human seats' player names (``view.json`` ``seat``, e.g. ``["Player 1"]``; ``[]``
            before a seat has written its view), or None.
        """
        d = Path(d)
        for p in [d, *d.parents]:
            if p == self.root or self.root not in p.parents:
                return None
            if not p.is_dir():
                continue
            key = self.rel(p)
            th = self.starter.threads.get(key) if self.starter is not None else None
            cfg = as_dict(paths.read_json(RunDir(p).config)) if RunDir(p).config.is_file() else {}
            human = (th is not None or (p / "human").is_dir() or cfg.get("human")
                     or HUMAN in [str(a) for a in (cfg.get("agents") or []) if isinstance(cfg.get("agents"), list)])
            if not human or RunDir(p).has_result():
                continue
            if (th is not None and th.is_alive()) or run_kinds.run_state(p, run_kinds.detect_kind(p) or "")[0] == "running":
                return [str(as_dict(_view(s)).get("seat") or s.name.replace("_", " ")) for s in human_seats(p)]
        return None

    def check_open(self, d: Path, inside: bool = False) -> None:
        """Raise :class:`Withheld` when ``d`` belongs to a game being played with a person in it
        (:meth:`withheld`), or, with ``inside``, when such a game is anywhere under ``d`` (a zip of
        a folder holding it)."""
        if self.withheld(d) is not None:
            raise Withheld(f"{self.rel(d) or '.'} belongs to a game with a human seat that is being played: what its "
                           "seat may not see (the other seats' words and roles, the prompts, the run's files) is "
                           "shown when the game has ended. Its seat page and its replay show what the seat sees.")
        if inside and d.is_dir():
            for r in rs.scan(d):
                if self.withheld(d / r.rel) is not None:
                    raise Withheld(f"{self.rel(d) or '.'} holds {self.rel(d / r.rel)}, a game with a human seat that is "
                                   "being played: it can be downloaded when that game has ended.")

    def run_link(self, path: Any) -> str | None:
        """The ``rel`` under ``--runs`` of a run directory a record names (an evaluation's
        ``config.json`` ``run``: the game it evaluated), or None when it is not under ``--runs``
        (:func:`mas_agents.web.paths.recorded_run`)."""
        real = recorded_run(self.root, path)
        return None if real is None else paths.relpath(self.root, real)

    def databases(self) -> list[tuple[str, Path]]:
        """``[(key, path)]`` of every leaderboard database: ``--db`` (or the default one) when it
        exists, then those found under ``--runs``; the key of one under ``--runs`` is its path
        there, of another ``--db``. The databases are those of the registered leaderboard
        (:func:`mas_agents.game.experiments.board`); none when no experiment has one."""
        out: list[tuple[str, Path]] = []
        board = experiments.board()
        if board is None:
            return out
        given = Path(self.db) if self.db is not None else board.default_db()
        if given.is_file() and rs.is_leaderboard_db(given):
            real = given.resolve()
            out.append((paths.relpath(self.root, real) if self.root in real.parents else "--db", real))
        for f in rs.find_leaderboards(self.root):
            if all(f != p for _, p in out):
                out.append((paths.relpath(self.root, f), f))
        return out

    def board_link(self, d: Path) -> str | None:
        """The leaderboard address of the tournament in ``d`` (the database that holds it)."""
        tid = run_kinds.leaderboard_id(d)
        board = experiments.board()
        if not tid or board is None:
            return None
        for key, path in self.databases():
            if board.open(path).config(tid) is not None:
                return f"/leaderboard?db={quote(key)}&tournament={quote(tid)}"
        return None

    def progress(self, d: Path, kind: str) -> dict[str, Any]:
        """How far the run in ``d`` is: an evaluation's answers
        (:func:`mas_agents.web.evaluation.eval_progress`), else its games
        (:func:`mas_agents.web.run_kinds.progress`; a tournament's total from its own record, else
        from the leaderboard database holding it)."""
        rk = experiments.find(kind)
        if rk is not None and rk.evaluation:
            return eval_progress(d, self.data_root)
        total = None
        planned = as_dict(paths.read_json(RunDir(d).config)).get("games") if rk is not None and rk.leaderboard else None
        if isinstance(planned, int) and not isinstance(planned, bool):
            total = planned   # the tournament's own record (written before its first game)
        elif rk is not None and rk.leaderboard and (board := experiments.board()) is not None:
            tid = run_kinds.leaderboard_id(d, kind)
            for _, path in (self.databases() if tid else []):
                cfg = board.open(path).config(tid)
                if cfg:
                    total = cfg.get("games")
                    break
        return run_kinds.progress(d, kind, db_total=total)


class Withheld(Exception):
    """A page or file of a game being played with a person in it (:meth:`Site.withheld`): 403."""


def _view(seat_dir: Path) -> Any:
    try:
        return read_view(seat_dir)
    except (OSError, ValueError):
        return {}


def not_withheld(request: Request) -> None:
    """A router's dependency: its ``{rel}`` must not belong to a game being played with a person
    in it (:meth:`Site.check_open`; a zip: nor hold one). Raises :class:`Withheld` (403)."""
    rel = request.path_params.get("rel")
    if rel is None:
        return
    site = get_site(request)
    site.check_open(paths.confine(site.root, rel), inside=request.url.path.startswith("/zip/"))


def get_site(request: Request) -> Site:
    """The :class:`Site` of the app serving ``request`` (a route's ``Depends``)."""
    return request.app.state.site


def query(f: dict[str, Any]) -> str:
    """The non-empty filters of a list page as a query string (for its paging links)."""
    return urlencode({k: v for k, v in f.items() if v not in ("", 0, None)})


def as_dict(x: Any) -> dict[str, Any]:
    """``x`` when it is a dict (a JSON file read), else {}."""
    return x if isinstance(x, dict) else {}


def short(text: str, n: int = 120) -> str:
    """``text`` cut to ``n`` characters (with an ellipsis)."""
    return text if len(text) <= n else text[:n] + "…"


def csv_response(text: str, filename: str) -> Response:
    """``text`` as a CSV download named ``filename``."""
    return PlainTextResponse(text, media_type="text/csv; charset=utf-8",
                             headers={"Content-Disposition": f'attachment; filename="{quote(filename)}"'})


def form_fields(body: bytes) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body as ``{name: last value}`` (no multipart)."""
    return {k: v[-1] for k, v in parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True).items()}
