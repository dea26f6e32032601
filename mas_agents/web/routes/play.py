"""A person's seat in a Who-is-Spy game: the form that starts one (``/play``), the seat's page
(``/play/{rel}``: what that player sees, and the answer form), its state for the page's polling
(``/api/seat/{rel}``) and the answer (``POST /play/{rel}/answer``). Games are started in
background threads of this server (:class:`GameStarter`)."""

from __future__ import annotations

import asyncio
import os
import random
import threading
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse

from eval import games as game_registry
from eval.datasets.wis import load_pairs
from eval.runs.human import HUMAN, read_view, submit_answer
from eval.runs.wis_session import GAME_DEF as STARTS
from eval.runs.wis_session import play_game
from graphs.wis import rules as wis_rules
from mas_agents.llm import CLI_SPEC_FORMS
from mas_agents.specs import is_remote, parse_spec, split_model
from mas_agents.web import runs as rs
from mas_agents.web.site import HERE, Site, form_fields, get_site, number, short

router = APIRouter()


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
        def run() -> None:
            try:
                play_game(out, agents=agents, pair=pair, lang=lang, model=self.model, seed=seed,
                          speak_timeout=speak_timeout)
            except BaseException as exc:   # shown on the seat page; the server goes on
                self.errors[key] = f"{type(exc).__name__}: {exc}"

        th = threading.Thread(target=run, name=f"wis-{key}", daemon=True)
        self.threads[key] = th
        th.start()


def _model_name(site: Site) -> str:
    return str(site.model if isinstance(site.model, str) else type(site.model).__name__)


def _page(site: Site, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
    """A page of this family (the answer form's limit: the longest description, by language)."""
    return site.page(name, status, max_chars=wis_rules.MAX_CHARS, **ctx)


@router.get("/play", response_class=HTMLResponse)
def play_form(site: Site = Depends(get_site)):
    return _page(site, "play_new.html", error="", form={}, model=_model_name(site))


@router.post("/play")
async def play_start(request: Request, site: Site = Depends(get_site)):
    form = form_fields(await request.body())
    try:
        game = _check_game(form, site.starter.data_root)
    except ValueError as exc:
        # shown by this handler, with the form as it was filled (never through the address)
        return _page(site, "play_new.html", 400, error=str(exc), form=form, model=_model_name(site))
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    # directly under --runs: its seat is /play/spy-human-..., its run /run/spy-human-...
    out = site.root / f"spy-human-{stamp}-{random.Random().randrange(16**4):04x}"
    out.mkdir(parents=True)
    key = site.rel(out)
    site.starter.start(out, key, **game)
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
    game = game_registry.find(view.get("game") or rs.detect_kind(d) or STARTS.kind)
    kind = game.kind if game is not None else ""
    seat_template = f"_play_{kind}.html" if (HERE / "templates" / f"_play_{kind}.html").is_file() else "_play_none.html"
    return _page(site, "play.html", status, rel=key, seat=seat, view=view, seats=seats, error=err, waiting=False,
                 finished=(d / "result.json").exists(), sig=sig, state=state, reason=reason, note=note,
                 game_title=game.title if game is not None else "", seat_template=seat_template)


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


def _check_game(form: dict[str, str], data_root: Path | None) -> dict[str, Any]:
    """The game a ``/play`` form asks for, as keyword arguments of :meth:`GameStarter.start`.

    Raises:
        ValueError: in a plain sentence (seats, agents, language, seed, time limit, word pair).
    """
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
                raise ValueError(f"The seat {short(a, 60)!r} is not an agent this project knows ({exc}).") from None
    lang = form.get("lang", "en")
    if lang not in ("en", "zh"):
        raise ValueError("The language must be en or zh.")
    seed = number(form, "seed", "seed")
    limit = number(form, "speak_timeout", "time to answer (in seconds)", float, 0, 3600) or None
    text = form.get("pair", "").strip()
    if text:
        parts = [p.strip() for p in text.split("/")]
        if len(parts) != 2 or not all(parts):
            raise ValueError("The word pair must be two words separated by a slash, the civilians' word first: "
                             "tea/coffee.")
        if parts[0].casefold() == parts[1].casefold():
            raise ValueError(f"The two words of the pair must differ; both are {short(parts[0], 40)!r}.")
        pair = {"civilian": parts[0], "spy": parts[1]}
    else:
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
    s = spec.strip()
    if s == "local":
        return
    if s.startswith("local:"):
        path = Path(s[len("local:"):].strip()).expanduser()
        if not path.is_file():
            raise ValueError(f"model {short(spec, 60)!r}: no GGUF file at {short(str(path), 80)}")
        return
    if s.startswith("openai:"):
        if not s[len("openai:"):].strip():
            raise ValueError(f"model {short(spec, 60)!r}: no model name after 'openai:'")
        if not (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")):
            raise ValueError(f"model {short(spec, 60)!r}: this server has neither OPENAI_API_KEY nor "
                             "OPENAI_BASE_URL set")
        return
    raise ValueError(f"unknown model {short(spec, 60)!r}; accepted: {', '.join(CLI_SPEC_FORMS)}")


