"""A person's seat in a game: the form that starts one (``/play``: the form of the first game whose
view has one, :attr:`mas_agents.eval.game_view.GameView.play`; Who is Spy's), the seat's page (``/play/{rel}``:
what that player sees, and the answer form, from the game's ``_play_<kind>.html``), its state for
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

from mas_agents.eval import games as game_registry
from mas_agents.eval.game_view import PlayForm
from mas_agents.eval.runs.human import read_view, submit_answer
from mas_agents.llm import check_spec
from mas_agents.web import runs as rs
from mas_agents.web.site import HERE, Site, form_fields, get_site

router = APIRouter()


class GameStarter:
    """Starts games with a person's seat in background threads and remembers their errors.

    Args:
        model: the default model of the agents' seats (a spec such as ``local``, or a chat model
            object in tests).
        data_root: the datasets root (a game may draw from it what the form leaves empty, e.g. a
            word pair; None: the form must give it).
    """

    #: At most this many games' errors are kept (the oldest dropped first): a long-lived server
    #: must not grow without limit; a dropped one is still in the run's ``run.lock``
    #: (:func:`mas_agents.rundir.marks_run`), which the seat page then reads.
    MAX_ERRORS = 256

    def __init__(self, model: Any, data_root: Path | None):
        self.model = model
        self.data_root = data_root
        self.errors: dict[str, str] = {}
        #: the threads of the games still being played (a finished one is dropped at the next start)
        self.threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()

    def start(self, out: Path, key: str, play: PlayForm, **arguments: Any) -> None:
        """Play the game of ``play`` with ``arguments`` (its ``check``'s) into ``out`` in a daemon
        thread (its error, if any, under ``key``; at most :attr:`MAX_ERRORS` kept)."""
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
            self.threads[key] = th
        th.start()


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
    """A seat's page, with what the game's seat page needs (:attr:`mas_agents.eval.game_view.GameView.seat_page`)."""
    extra = game_registry.view_of(ctx.get("kind") or "").seat_page
    return site.page(name, status, **{**extra, **ctx})


@router.get("/play", response_class=HTMLResponse)
def play_form(site: Site = Depends(get_site)):
    return _form_page(site)


@router.post("/play")
async def play_start(request: Request, site: Site = Depends(get_site)):
    form = form_fields(await request.body())
    found = playable()
    if found is None:
        return _form_page(site)
    play = found[1]
    try:
        game = play.check(form, site.starter.data_root, check_model_spec)
    except ValueError as exc:
        # shown by this handler, with the form as it was filled (never through the address)
        return _form_page(site, 400, error=str(exc), form=form)
    out = new_run_dir(site.root, play.folder)
    key = site.rel(out)
    site.starter.start(out, key, play, **game)
    return RedirectResponse(f"/play/{quote(key)}", status_code=303)


def _seat_page(site: Site, d: Path, seat: str, status: int = 200, note: str = "") -> HTMLResponse:
    key = site.rel(d)
    seats = site.seats(d)
    state, reason = _seat_state(site, d)
    sig = _seat_sig(site, d, seat)   # read before the view: a change after it reloads the page
    err = site.starter.errors.get(key)
    if not seats:
        if err or state != "running":
            if not err and not (d / "human").exists() and rs.detect_kind(d) is not None:
                return site.page("error.html", 404, title="No human seat",
                                 message=f"{key} is a game without a human seat; watch it on its replay page.")
            return _page(site, "play.html", status, rel=key, seat="", view=None, seats=[], error=err, waiting=False,
                         sig=sig, state=state, reason=reason, note=note)
        return _page(site, "play.html", status, rel=key, seat="", view=None, seats=[], error=None, waiting=True,
                     sig=sig, state=state, reason=reason, note=note)
    seat = seat if seat in seats else seats[0]
    view = read_view(d / "human" / seat)
    # the seat's view names its game (a character's), else the run does, else it is one this page starts
    game = game_registry.find(view.get("game") or rs.detect_kind(d) or (playable() or ("", None))[0])
    kind = game.kind if game is not None else ""
    seat_template = f"_play_{kind}.html" if (HERE / "templates" / f"_play_{kind}.html").is_file() else "_play_none.html"
    return _page(site, "play.html", status, rel=key, seat=seat, view=view, seats=seats, error=err, waiting=False,
                 finished=(d / "result.json").exists(), sig=sig, state=state, reason=reason, note=note,
                 game_title=game.title if game is not None else "", seat_template=seat_template, kind=kind)


def _seat_state(site: Site, d: Path) -> tuple[str, str]:
    """The game's state; a game this server is starting is running while its thread lives."""
    th = site.starter.threads.get(site.rel(d))
    if th is not None and th.is_alive() and not (d / "result.json").exists():
        return "running", ""
    return rs.run_state(d, rs.detect_kind(d) or "")


@router.get("/play/{rel:path}", response_class=HTMLResponse)
def play_page(rel: str, seat: str = "", site: Site = Depends(get_site)):
    return _seat_page(site, site.locate(rel), seat)


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
    try:
        submit_answer(d / "human" / seat, rid, form.get("text", ""), target=form.get("target") or None)
    except ValueError as exc:
        return _seat_page(site, d, seat, 409, note=f"Your answer was not sent: {exc}")
    await asyncio.sleep(0.3)   # usually long enough for the game to take the answer and ask the next thing
    return RedirectResponse(f"/play/{quote(site.rel(d))}?seat={quote(seat)}", status_code=303)


def check_model_spec(spec: str) -> None:
    """Check a seat's model spec as :func:`mas_agents.llm.make_chat_model` reads it, without
    building the model: :func:`mas_agents.llm.check_spec` (one check for both), its missing file
    or bad type reported like a bad form.

    Raises:
        ValueError: in a sentence naming the spec and what is wrong or what is accepted.
    """
    try:
        check_spec(spec)
    except (FileNotFoundError, TypeError) as exc:
        raise ValueError(str(exc)) from exc


