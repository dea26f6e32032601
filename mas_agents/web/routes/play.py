"""A person's seat in a game: the form that starts one (``/play``: the form of the first game whose
view has one, :attr:`mas_agents.game.view.GameView.play`; Who is Spy's), the seat's page (``/play/{rel}``:
what that player sees, and the answer form, from the template its view names, :attr:`mas_agents.game.view.GameView.seat_template`), its state for
the page's polling (``/api/seat/{rel}``) and the answer (``POST /play/{rel}/answer``). Games are
started in background threads of this server (:class:`GameStarter`)."""

from __future__ import annotations

import asyncio
import html
import random
import threading
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from markupsafe import Markup

from mas_agents.game import contract as game_registry
from mas_agents.game.view import PlayForm
from mas_agents.game.human import read_view, submit_answer
from mas_agents.model_specs import check_spec
from mas_agents.rundir import RunDir
from mas_agents.game import experiments
from mas_agents.web import run_kinds
from mas_agents.web.site import GAME_TEMPLATE, Site, form_fields, get_site, short

router = APIRouter()


class GameStarter:
    """Starts games with a person's seat in background threads and remembers their errors.

    Args:
        model: the default model of the agents' seats (a spec such as ``local``, or a chat model
            object in tests).
        data_root: the datasets root (a game may draw from it what the form leaves empty, e.g. a
            word pair; None: the form must give it).
        max_games: at most this many games are played at once (``mas serve --max-games``);
            :meth:`start` refuses another with :class:`TooManyGames` (the page answers 429).
    """

    #: At most this many games' errors are kept (the oldest dropped first): a long-lived server
    #: must not grow without limit; a dropped one is still in the run's ``run.lock``
    #: (:func:`mas_agents.rundir.marks_run`), which the seat page then reads.
    MAX_ERRORS = 256

    def __init__(self, model: Any, data_root: Path | None, max_games: int = 4):
        if max_games < 1:
            raise ValueError(f"--max-games {max_games}: at least 1 game must be allowed")
        self.model = model
        self.data_root = data_root
        self.max_games = max_games
        self.errors: dict[str, str] = {}
        #: the threads of the games still being played (a finished one is dropped at the next start)
        self.threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()

    def playing(self) -> int:
        """How many games are being played (their threads alive)."""
        with self._lock:
            return sum(1 for t in self.threads.values() if t.is_alive())

    def start(self, out: Path, key: str, play: PlayForm, **arguments: Any) -> None:
        """Play the game of ``play`` with ``arguments`` (its ``check``'s) into ``out`` in a daemon
        thread (its error, if any, under ``key``; at most :attr:`MAX_ERRORS` kept).

        Raises:
            TooManyGames: :attr:`max_games` games are being played (nothing is started).
        """
        def run() -> None:
            try:
                play.start(out, model=self.model, **arguments)
            except BaseException as exc:   # shown on the seat page; the server goes on
                with self._lock:
                    self.errors.pop(key, None)
                    self.errors[key] = f"{type(exc).__name__}: {exc}"
                    while len(self.errors) > self.MAX_ERRORS:
                        del self.errors[next(iter(self.errors))]

        th = threading.Thread(target=run, name=f"{play.folder}-{key}", daemon=True)
        with self._lock:
            for k in [k for k, t in self.threads.items() if not t.is_alive()]:
                del self.threads[k]
            if len(self.threads) >= self.max_games:
                raise TooManyGames(self.max_games)
            self.threads[key] = th
            th.start()


class TooManyGames(RuntimeError):
    """The server is playing as many games as ``--max-games`` allows."""

    def __init__(self, limit: int):
        super().__init__(f"This server is already playing {limit} game{'s' if limit != 1 else ''}, as many as it "
                         f"plays at once (mas serve --max-games {limit}); start this one when one of them has ended.")
        self.limit = limit


def new_run_dir(root: Path, folder: str, rng: random.Random | None = None, tries: int = 20) -> Path:
    """Make and return a new, empty run directory directly under ``root`` (``--runs``: its seat
    is ``/play/<name>``, its run ``/run/<name>``) named ``<folder>-<YYYYmmdd-HHMMSS>-<4 hex>``; a
    name already taken (two games started in one second) is never shared: another suffix is drawn.

    Raises:
        FileExistsError: ``tries`` names in a row were taken.
    """
    rng = rng or random.Random()
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    root.mkdir(parents=True, exist_ok=True)
    for _ in range(tries):
        out = root / f"{folder}-{stamp}-{rng.randrange(16**4):04x}"
        try:
            out.mkdir()
        except FileExistsError:
            continue
        return out
    raise FileExistsError(f"{root}: no free name for a new {folder} run after {tries} tries")


def playable() -> tuple[str, PlayForm] | None:
    """``(kind, form)`` of the first registered game a person can start from ``/play``, or None."""
    for kind in game_registry.kinds():
        form = game_registry.view_of(kind).play
        if form is not None:
            return kind, form
    return None


def _code_text(text: str) -> Markup:
    """``text`` escaped, with the parts between backticks shown as code."""
    parts = html.escape(text, quote=False).split("`")   # text between tags: quotes need no escaping
    return Markup("".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts)))


def _form_page(site: Site, status: int = 200, error: str = "", form: dict[str, str] | None = None) -> HTMLResponse:
    found = playable()
    if found is None:
        return site.page("error.html", 404, title="Nothing to play",
                         message="No game registered here can be started from the browser.")
    play = found[1]
    return site.page("play_new.html", status, error=error, form=form or {}, play=play,
                     intro=_code_text(play.intro.replace("{model}", _model_name(site))), hint=_code_text(play.hint))


def _model_name(site: Site) -> str:
    return str(site.model if isinstance(site.model, str) else type(site.model).__name__)


def _page(site: Site, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
    """A seat's page, with what the game's seat page needs (:attr:`mas_agents.game.view.GameView.seat_page`)."""
    extra = game_registry.view_of(ctx.get("kind") or "").seat_page
    return site.page(name, status, **{**extra, **ctx})


@router.get("/play", response_class=HTMLResponse)
def play_form(site: Site = Depends(get_site)):
    return _form_page(site)


#: The longest value of a ``/play`` form field, in characters (the seats of 9 agents with models
#: are under 300; a word pair is two words of at most ``wis_play.MAX_WORD``): a longer one is
#: refused (400) before the game's own check reads it.
MAX_FIELD = 500
#: The longest answer a person's seat sends, in characters (a description, a question): about
#: what an agent's reply may hold, so one answer cannot become a huge prompt for the others.
MAX_ANSWER = 2000


@router.post("/play")
async def play_start(request: Request, site: Site = Depends(get_site)):
    form = form_fields(await request.body())
    found = playable()
    if found is None:
        return _form_page(site)
    play = found[1]
    long = next((k for k, v in form.items() if len(v) > MAX_FIELD), None)
    if long is not None:
        return _form_page(site, 400, error=f"The field {short(long, 40)!r} is {len(form[long]):,} characters long; "
                                           f"a field of this form holds at most {MAX_FIELD}.",
                          form={k: v for k, v in form.items() if len(v) <= MAX_FIELD})
    if site.starter.playing() >= site.starter.max_games:
        return _busy(site, form)
    try:
        game = play.check(form, site.starter.data_root, served_model(site))
    except ValueError as exc:
        # shown by this handler, with the form as it was filled (never through the address)
        return _form_page(site, 400, error=str(exc), form=form)
    out = new_run_dir(site.root, play.folder)
    key = site.rel(out)
    try:
        site.starter.start(out, key, play, **game)
    except TooManyGames:
        out.rmdir()   # made empty just above: nothing of the refused game is left
        return _busy(site, form)
    return RedirectResponse(f"/play/{quote(key)}", status_code=303)


def _busy(site: Site, form: dict[str, str]) -> HTMLResponse:
    """The form again with 429: the server plays ``--max-games`` games already (nothing written)."""
    resp = _form_page(site, 429, error=str(TooManyGames(site.starter.max_games)), form=form)
    resp.headers["Retry-After"] = "60"
    return resp


def served_model(site: Site):
    """The ``check_model`` of the ``/play`` form (:attr:`mas_agents.game.view.PlayForm.check`):
    a seat may name only the model this server was started with (``mas serve --model``), so the
    form cannot make the server open a file, a URL or a model it was not given (issue 57, E9: the
    answer to ``plain@local:/etc/passwd`` told whether that path exists).

    Raises (the returned function):
        ValueError: any other spec, in a sentence naming the accepted one.
    """
    own = site.model if isinstance(site.model, str) else None

    def check(spec: str) -> None:
        if own is None or spec.strip() != own:
            accepted = f"only {own!r}, the model it was started with" if own else "no model spec (a seat is BLOCKS alone)"
            raise ValueError(f"the model {short(spec, 40)!r} is not one this server plays: a seat names {accepted}")
        check_model_spec(spec)
    return check


def _seat_page(site: Site, d: Path, seat: str, status: int = 200, note: str = "") -> HTMLResponse:
    key = site.rel(d)
    seats = site.seats(d)
    state, reason = _seat_state(site, d)
    sig = _seat_sig(site, d, seat)   # read before the view: a change after it reloads the page
    err = site.starter.errors.get(key)
    if not seats:
        if err or state != "running":
            if not err and not (d / "human").exists() and run_kinds.detect_kind(d) is not None:
                return site.page("error.html", 404, title="No human seat",
                                 message=f"{key} is a game without a human seat; watch it on its replay page.")
            return _page(site, "play.html", status, rel=key, seat="", view=None, seats=[], error=err, waiting=False,
                         sig=sig, state=state, reason=reason, note=note)
        return _page(site, "play.html", status, rel=key, seat="", view=None, seats=[], error=None, waiting=True,
                     sig=sig, state=state, reason=reason, note=note)
    seat = seat if seat in seats else seats[0]
    view = read_view(d / "human" / seat)
    # the seat's view names its game (a character's), else the run does, else it is one this page starts
    game = game_registry.find(view.get("game") or run_kinds.detect_kind(d) or (playable() or ("", None))[0])
    kind = game.kind if game is not None else ""
    tpl = game.view.seat_template if game is not None else None
    seat_template = f"{GAME_TEMPLATE}{kind}" if tpl is not None and tpl.is_file() else "_play_none.html"
    return _page(site, "play.html", status, rel=key, seat=seat, view=view, seats=seats, error=err, waiting=False,
                 finished=RunDir(d).has_result(), sig=sig, state=state, reason=reason, note=note,
                 game_title=game.title if game is not None else "", seat_template=seat_template, kind=kind)


def _seat_state(site: Site, d: Path) -> tuple[str, str]:
    """The game's state; a game this server is starting is running while its thread lives."""
    th = site.starter.threads.get(site.rel(d))
    if th is not None and th.is_alive() and not RunDir(d).has_result():
        return "running", ""
    return run_kinds.run_state(d, run_kinds.detect_kind(d) or "")


@router.get("/play/{rel:path}", response_class=HTMLResponse)
def play_page(rel: str, seat: str = "", site: Site = Depends(get_site)):
    d = site.locate(rel)
    refused = _no_seat_here(site, d)
    return refused if refused is not None else _seat_page(site, d, seat)


def _no_seat_here(site: Site, d: Path) -> HTMLResponse | None:
    """The 404 page for a folder that is no game a person may hold a seat in (issue 57, E12):
    ``--runs`` itself (``/play/.``), a folder that holds no run, or a run of many games (a
    tournament is not "a game"); None for a game, or a folder this server or a runner is
    starting a game in (it has a ``run.lock`` or is this server's), whose page waits."""
    key = site.rel(d)
    if d == site.root or not d.is_dir():
        return site.page("error.html", 404, title="No game here",
                         message=f"{key or 'The runs directory'} is not a game: a seat's page is /play/RUN, for a game "
                                 "started from /play or with a human seat from a terminal.")
    kind = run_kinds.detect_kind(d)
    if kind is not None and not run_kinds.is_game(kind):
        rk = experiments.find(kind)
        what = rk.title if rk is not None and rk.title else f"{kind} run"
        return site.page("error.html", 404, title="Not a game",
                         message=f"{key} is a {what}, not a game: a person holds a seat in one game, and {key} has no "
                                 "human seat; its run page lists what it holds.")
    if (kind is None and key not in site.starter.threads and not (d / "human").exists()
            and not RunDir(d).lock.exists()):
        return site.page("error.html", 404, title="No game here",
                         message=f"{key} holds no game: a seat's page is /play/RUN, for a game started from /play "
                                 "or with a human seat from a terminal.")
    return None


def _seat_sig(site: Site, d: Path, seat: str) -> str:
    """What the seat page shows, in one string: a change makes the page reload itself."""
    seats = site.seats(d)
    err = site.starter.errors.get(site.rel(d), "")
    state = _seat_state(site, d)[0]
    if not seats:
        return f"none:{err}:{state}"
    v = read_view(d / "human" / (seat if seat in seats else seats[0]))
    p = v.get("pending") or {}
    return f"{len(v.get('messages') or [])}:{p.get('id')}:{v.get('finished')}:{state}:{err}"


@router.get("/api/seat/{rel:path}")
def seat_state(rel: str, seat: str = "", site: Site = Depends(get_site)):
    d = site.locate(rel)
    return JSONResponse({"sig": _seat_sig(site, d, seat), "state": _seat_state(site, d)[0]})


@router.post("/play/{rel:path}/answer")
async def play_answer(rel: str, request: Request, site: Site = Depends(get_site)):
    d = site.locate(rel)
    form = form_fields(await request.body())
    seat = form.get("seat", "")
    if seat not in site.seats(d):
        raise FileNotFoundError(f"{rel}: seat {seat!r}")
    state, reason = _seat_state(site, d)
    if state != "running":
        why = "it is over" if state == "finished" else f"it has stopped ({reason})"
        return _seat_page(site, d, seat, 409, note=f"Your answer was not sent: the game is not being played any more, {why}.")
    try:
        rid = int(form.get("id", ""))
    except ValueError:
        return _seat_page(site, d, seat, 400, note="Your answer was not sent: the form did not say which request it answers.")
    text = form.get("text", "")
    if len(text) > MAX_ANSWER:
        return _seat_page(site, d, seat, 400, note=f"Your answer was not sent: it is {len(text):,} characters long; "
                                                   f"an answer holds at most {MAX_ANSWER:,}.")
    try:
        submit_answer(d / "human" / seat, rid, text, target=form.get("target") or None)
    except ValueError as exc:
        return _seat_page(site, d, seat, 409, note=f"Your answer was not sent: {exc}")
    await asyncio.sleep(0.3)   # usually long enough for the game to take the answer and ask the next thing
    return RedirectResponse(f"/play/{quote(site.rel(d))}?seat={quote(seat)}", status_code=303)


def check_model_spec(spec: str) -> None:
    """Check a seat's model spec as :func:`mas_agents.llm.make_chat_model` reads it, without
    building the model: :func:`mas_agents.model_specs.check_spec` (one check for both), its missing file
    or bad type reported like a bad form.

    Raises:
        ValueError: in a sentence naming the spec and what is wrong or what is accepted.
    """
    try:
        check_spec(spec)
    except (FileNotFoundError, TypeError) as exc:
        raise ValueError(str(exc)) from exc


