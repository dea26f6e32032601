"""Replays (``/replay/{rel}``), their live rows (``/fragment/events/{rel}``) and the old
Who-is-Spy address (``/wis-replay/{rel}``, redirected). Every game is replayed the same way, from
its ``events.jsonl`` and its ``GameDef.view`` (:mod:`mas_agents.web.replay_rows`)."""

from __future__ import annotations

import dataclasses
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from mas_agents.game import contract as game_registry
from mas_agents.web import replay_rows as rp
from mas_agents.web import panel as web_panel
from mas_agents.web import views
from mas_agents.web import paths
from mas_agents.web import runs as rs
from mas_agents.game import experiments
from mas_agents.web import run_kinds
from mas_agents.web.site import Site, as_dict, get_site, short
from mas_agents.rundir import EVENTS_FILE, RunDir

router = APIRouter()


def game_title(game: str, lang: str, kind: str) -> str:
    """The replay's heading: the run kind's title (a WellPlay evaluation), else the game's name in
    ``lang`` (:attr:`mas_agents.game.view.GameView.names`), else its ``GameDef.title``, else ``game``."""
    rk = experiments.find(kind)
    if rk is not None and rk.title:
        return rk.title
    registered = game_registry.find(game)
    named = game_registry.view_of(game).names
    return named.get(lang) or (registered.title if registered else "") or game or kind or "Game"


def variant_title(game: str, lang: str, variant: str) -> str:
    """The name of a game's variant (MAgIC's scenario) beside its title: the view's
    ``titles[lang]["v_<variant>"]`` (``Prisoner's Dilemma``), else the key with spaces, capitalised."""
    if not variant:
        return ""
    titles = game_registry.view_of(game).titles
    named = (titles.get(lang) or {}).get(f"v_{variant}") or (titles.get("en") or {}).get(f"v_{variant}")
    text = variant.replace("_", " ")
    return named or text[:1].upper() + text[1:]


@router.get("/replay/{rel:path}", response_class=HTMLResponse)
def replay_page(request: Request, rel: str, private: int = 0, seen_by: str = "", site: Site = Depends(get_site)):
    d = site.locate(rel)
    kind = run_kinds.detect_kind(d) or ""
    rk = experiments.find(kind)
    if rk is not None and rk.evaluation and not RunDir(d).events.exists():
        # an evaluation writes its events when a run of it ends: until then its progress is
        # on the evaluation page, which follows it
        return RedirectResponse("/eval/" + quote(site.rel(d), safe="/"), status_code=303)
    events = rp.load_events(RunDir(d).events)
    if not events and not RunDir(d).has_config():
        raise FileNotFoundError(f"{rel}/{EVENTS_FILE}")
    game = views.game_of(events, kind)
    cfg, res = as_dict(paths.read_json(RunDir(d).config)), as_dict(paths.read_json(RunDir(d).result))
    lang, scenario = views.lang_of(events, game, cfg), views.variant_of(events, game, cfg)
    finished = RunDir(d).has_result()
    state, reason = run_kinds.run_state(d, kind)
    ended = finished or any(e.get("kind") in ("outcome", "accuse") for e in events)
    humans = site.withheld(d)
    if humans is not None:
        # a game being played with a person in it: only what that seat sees (issue 57, E4)
        if private or (seen_by and seen_by not in humans):
            site.check_open(d)
        seen_by, private, ended = (humans[0] if len(humans) == 1 else ""), 0, False
    panel = web_panel.players_panel(events, game, cfg, res, reveal=ended or bool(private), lang=lang,
                             stopped=state == "stopped" and not ended)
    players = [s.name for s in panel] or views.players_of(events)
    if seen_by and seen_by not in players:
        return site.problem(request, 400, "Bad address",
                            f"This game has no seat {short(seen_by, 60)!r} for ?seen_by=; its seats are "
                            f"{', '.join(players) or 'none yet'}.")
    rows = _seen_rows(rp.rows(events, game, lang=lang, scenario=scenario), humans)
    groups = list(dict.fromkeys((r.group, r.group_title) for r in rows))
    # groups of private events only (MAgIC's setup): hidden in "Go to" while private events are
    private_groups = {g for g, _ in groups} - {r.group for r in rows if "*" in r.visible_to}
    calls, tot = rp.load_calls(RunDir(d).calls)
    hidden = any(s.hidden for s in panel)
    return site.page("replay.html", rel=site.rel(d), game=game, game_title=game_title(game, lang, kind),
                     scenario_title=variant_title(game, lang, scenario), private_groups=private_groups, withheld=humans,
                     evaluation=rk is not None and rk.evaluation, rows=rows, lang=lang, scenario=scenario,
                     players=players, panel=panel, groups=groups, seen=seen_by,
                     n_seen=sum(1 for r in rows if "*" in r.visible_to or seen_by in r.visible_to),
                     hidden_note="The roles of a hidden-role game are shown when it has ended, or on the private "
                                 "view (show private)." if hidden else "",
                     truth=rp.truth(events, game, lang, scenario) if humans is None else [], finished=finished, state=state, reason=reason,
                     show_private=bool(private), n_events=len(events), calls_total=tot, wall_s=res.get("wall_time_s"),
                     run=rs.describe(site.root, d, kind) if kind else None, seats=site.seats(d))


@router.get("/fragment/events/{rel:path}", response_class=HTMLResponse)
def events_fragment(rel: str, after: int = 0, site: Site = Depends(get_site)):
    d = site.locate(rel)
    events = rp.load_events(RunDir(d).events)
    kind = run_kinds.detect_kind(d) or ""
    game = views.game_of(events, kind)
    cfg = as_dict(paths.read_json(RunDir(d).config))
    lang, scenario = views.lang_of(events, game, cfg), views.variant_of(events, game, cfg)
    start = max(0, min(after, len(events)))
    prev_group, prev_phase = rp.heading_before(events, game, start, lang)
    humans = site.withheld(d)
    html = site.env.get_template("_rows.html").render(rows=_seen_rows(rp.rows(events, game, start, lang, scenario), humans),
                                                      prev_group=prev_group, prev_phase=prev_phase,
                                                      seen=humans[0] if humans and len(humans) == 1 else "",
                                                      rel=site.rel(d))
    resp = HTMLResponse(html)
    resp.headers["X-Next"] = str(len(events))
    state = run_kinds.run_state(d, kind)[0]
    resp.headers["X-State"] = state
    resp.headers["X-Finished"] = "0" if state == "running" else "1"   # the client stops polling
    return resp


def _seen_rows(rows: list[rp.Row], humans: list[str] | None) -> list[rp.Row]:
    """``rows`` as they are (``humans`` None), or, while a game with a person in it is played
    (:meth:`mas_agents.web.site.Site.withheld`), only the rows its human seat sees (public ones
    and those shown to it; only public ones when it has several or none yet), without links to
    the prompts (withheld too)."""
    if humans is None:
        return rows
    seat = humans[0] if len(humans) == 1 else None
    return [dataclasses.replace(r, calls=[]) for r in rows if "*" in r.visible_to or (seat and seat in r.visible_to)]


@router.get("/wis-replay/{rel:path}")
def wis_replay(rel: str, site: Site = Depends(get_site)):
    # the Who-is-Spy page is the replay now; old links land there
    d = site.locate(rel)
    return RedirectResponse("/replay/" + quote(site.rel(d), safe="/"), status_code=301)
