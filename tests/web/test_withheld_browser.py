"""Issue 57 in a real headless Chromium: while a game started from ``/play`` with a human seat is
played, its private replay, its ``/raw`` config and its zip answer 403 and its public replay shows
only what the seat sees; when it has ended they are served (E4). The runs list fits a 390 px
phone (E15). Screenshots go to the test's temporary folder."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import pytest

from tests.web.browser import chromium, need_chromium, serve, shot

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def site(runs):
    need_chromium()
    from mas_agents.web.app import create_app
    from tests.web.runs_fixture import wis_model
    app = create_app(runs["root"], runs["db"], model=wis_model())
    with serve(app) as base, chromium() as ctx:
        yield base, ctx


@pytest.fixture
def page(site):
    base, ctx = site
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield base, pg
    pg.close()
    assert not errors, f"JavaScript errors: {errors}"


def _play_to_the_end(pg, limit_s: float = 120) -> None:
    """Answer the seat's requests (a description, then the first vote option) until the game ends."""
    last, n, t0 = None, 0, time.monotonic()
    while time.monotonic() - t0 < limit_s:
        pg.wait_for_selector("#answer-text, #answer-vote, #game-over", timeout=30000)
        if pg.locator("#game-over").count():
            return
        rid = pg.locator("input[name=id]").get_attribute("value")
        if rid == last:
            pg.wait_for_timeout(300)
            pg.reload()
            continue
        if pg.locator("#answer-text").count():
            n += 1
            pg.fill("#answer-text", f"found in a kitchen, take {n}")
        else:
            pg.select_option("#answer-vote", pg.locator("#answer-vote option").all_inner_texts()[0])
        last = rid
        pg.click("#answer-send")
    raise AssertionError("the game did not end")


def test_a_running_human_seat_game_is_withheld_until_it_ends(page, tmp_path):
    base, pg = page
    pg.goto(base + "/play")
    pg.fill("input[name=agents]", "human,plain,plain,plain")
    pg.fill("input[name=pair]", "Kettle/Teapot")
    pg.fill("input[name=speak_timeout]", "60")
    pg.click("#new-game button")
    pg.wait_for_selector("#you", timeout=20000)
    mine = pg.locator("#my-word").inner_text()
    other = "Teapot" if mine == "Kettle" else "Kettle"
    run = urlsplit(pg.url).path.removeprefix("/play/")
    seat_url = pg.url
    # while it is played: every view and file holding what the seat may not see is withheld
    for path in (f"/replay/{run}?private=1", f"/raw/{run}/config.json", f"/raw/{run}/events.jsonl", f"/zip/{run}",
                 f"/calls/{run}", f"/replay/{run}?seen_by=Player%202"):
        r = pg.request.get(base + path)
        assert r.status == 403 and other not in r.text(), (path, r.status)
    resp = pg.goto(base + f"/replay/{run}?private=1")
    assert resp.status == 403 and pg.locator("h1.error-title").inner_text() == "Withheld while the game is played"
    shot(pg, "web-withheld-403.png", tmp_path, publish=False)
    resp = pg.goto(base + f"/replay/{run}")             # the seat's own view of it is fine
    assert resp.status == 200 and pg.locator("#withheld-note").is_visible()
    assert other not in pg.content() and pg.locator("a[href^='/calls/']").count() == 0
    shot(pg, "web-withheld-replay.png", tmp_path, publish=False)
    pg.goto(seat_url)
    _play_to_the_end(pg)
    # ended: everything is served
    cfg = pg.request.get(base + f"/raw/{run}/config.json")
    assert cfg.status == 200 and cfg.json()["pair"] == {"civilian": "Kettle", "spy": "Teapot"}
    assert pg.request.get(base + f"/zip/{run}").status == 200
    resp = pg.goto(base + f"/replay/{run}?private=1")
    assert resp.status == 200 and other in pg.content() and pg.locator("#truth").count() == 1


def test_the_runs_list_fits_a_phone(page, tmp_path):
    base, pg = page
    pg.set_viewport_size({"width": 390, "height": 844})
    for path in ("/", "/run/tour", "/replay/spy-kettle", "/report/ablate", "/play"):
        pg.goto(base + path)
        width = pg.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, (path, width)          # the runs list was 716 px wide
    pg.goto(base + "/")
    shot(pg, "web-runs-390.png", tmp_path, publish=False)
