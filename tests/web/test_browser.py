"""The web app in a real headless Chromium (Debian's, driven by playwright): the runs list, a
murder-mystery replay with private events toggled, a Who-is-Spy replay, the leaderboard (every
database under --runs, intervals, games), an ablation report with its CSV tables, a whole
Who-is-Spy game played as the human seat against fake-model agents, a killed game shown as stopped
with a seat page that does not poll, bad addresses and forms answered with the error page, a run
directory outside --runs refused, and a ``<script>`` in an event shown as text.

Screenshots go to the test's temporary folder; ``MAS_UPDATE_SCREENSHOTS=1`` also copies them to
``docs/`` (the README's pictures)."""

from __future__ import annotations

import re
import time

import pytest

from tests.web.browser import chromium, need_chromium, serve, shot
from tests.web.runs_fixture import INJECTION

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


def test_runs_list_and_filters(page, tmp_path):
    base, pg = page
    pg.goto(base + "/")
    rows = pg.locator("#runs tbody tr")
    kinds = set(pg.locator("#runs tbody tr").evaluate_all("rs => rs.map(r => r.dataset.kind)"))
    assert {"mmg", "wis", "magic", "wis-tournament", "ablation"} <= kinds, kinds
    assert rows.count() >= 6
    assert pg.locator("#runs tr.kind-wis.finished .headline").first.inner_text().startswith(("civilians win", "spy win"))
    assert pg.locator('#runs tr[data-state="stopped"] .badge.stopped').count() >= 1      # spy-dead
    assert "is gone" in pg.locator('#runs tr[data-state="stopped"] .reason').first.inner_text()
    shot(pg, "web-runs.png", tmp_path)
    pg.select_option("select[name=kind]", "wis")
    pg.click("form.filters button")
    kinds = set(pg.locator("#runs tbody tr").evaluate_all("rs => rs.map(r => r.dataset.kind)"))
    assert kinds == {"wis"}      # the tournament's and the ablation's games are listed too
    assert pg.locator("#runs tbody tr").count() >= 7


def test_murder_mystery_replay_with_private_events(page, runs, tmp_path):
    base, pg = page
    pg.goto(base + "/replay/mmg-toy/run")
    sections = [t.lstrip("§ ").strip() for t in pg.locator("h2.section").all_inner_texts()]
    assert sections == ["Setup", "Introductions", "Round 1", "Round 2", "The vote (private ballots)", "The verdict"]
    private = pg.locator(".ev.private")
    assert private.count() > 10 and not private.first.is_visible()
    pg.check("#toggle-private")
    assert private.first.is_visible()
    sensors = pg.locator(".ev.private.k-sensor")
    assert sensors.count() > 0 and sensors.first.is_visible()
    assert pg.locator(".ev.private.k-suspect_list").count() > 0
    pg.select_option("#owner-filter", "Ann")
    shown = pg.locator(".ev.private:visible").evaluate_all("es => es.map(e => e.dataset.owner)")
    assert shown and set(shown) == {"Ann"}
    assert "murderer Bob" in pg.locator("#truth").inner_text()
    pg.select_option("#owner-filter", "")
    assert pg.locator(".ev.private.k-sensor table.readings").first.is_visible()
    pg.locator("h2.section", has_text="Round 1").evaluate("h => h.scrollIntoView()")
    shot(pg, "web-mmg-replay.png", tmp_path)
    pg.click("#calls-link")
    assert pg.locator("table.calls tbody tr").count() > 10


def test_who_is_spy_replay_and_its_call_log(page, tmp_path):
    base, pg = page
    pg.goto(base + "/replay/spy-kettle")
    assert "Who is Spy?" in pg.locator("h1").inner_text()
    assert pg.locator(".ev.k-describe").count() >= 4 and pg.locator(".ev.k-vote_result").count() >= 1
    assert "Words:" in pg.locator("#truth").inner_text() and "Teapot" in pg.locator("#truth").inner_text()
    shot(pg, "web-wis-replay.png", tmp_path)
    # the prompt and completion behind a description are one click away
    link = pg.locator(".ev.k-describe a.call").first
    call_id = link.get_attribute("href").rsplit("/", 1)[1]
    link.click()
    assert pg.url.endswith(f"/calls/spy-kettle/{call_id}") and pg.locator("#call-id").inner_text() == call_id
    shown = pg.locator("h1 small").inner_text()     # the id's distinguishing part: "call …001b"
    assert shown.startswith("call …") and call_id.endswith(shown.removeprefix("call …"))
    # the old round-by-round page is this replay now
    pg.goto(base + "/wis-replay/spy-kettle")
    assert pg.url == base + "/replay/spy-kettle" and pg.locator("#players-table tbody tr").count() == 4


def test_replay_round_anchor_and_seen_by(page, runs, tmp_path):
    base, pg = page
    pg.goto(base + "/replay/spy-kettle")
    # a round's anchor: the link beside its heading, and the page targets and shows that round
    pg.click("#round-nav a[href='#end']")
    assert pg.url.endswith("#end") and pg.evaluate("document.querySelector(':target').id") == "end"
    # scrolled to it: at the top of the window, or as far as the page goes
    assert pg.locator("#end").is_visible() and pg.evaluate(
        "document.getElementById('end').getBoundingClientRect().top < 200 || (window.scrollY > 0 && "
        "window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2)")
    # a shared link to one turn opens at that turn
    pg.goto(base + "/replay/spy-kettle#ev-8")
    assert pg.evaluate("document.querySelector(':target').id") == "ev-8"
    box = pg.evaluate("(() => { const r = document.getElementById('ev-8').getBoundingClientRect(); "
                      "return [r.top, r.bottom, window.innerHeight]; })()")
    assert 0 <= box[0] and box[1] <= box[2], box            # in the window
    assert pg.locator("#ev-8 a.ev-link").get_attribute("href") == "#ev-8"
    # seen by: Player 3's own word stays, the other seats' words (private to them) disappear,
    # the public descriptions stay
    pg.goto(base + "/replay/spy-kettle?private=1")
    words = pg.locator(".ev.k-word")
    assert words.count() == 4 and all(words.nth(i).is_visible() for i in range(4))
    pg.select_option("#seen-by", "Player 3")
    assert "seen_by=Player+3" in pg.url or "seen_by=Player%203" in pg.url
    shown = pg.locator(".ev.k-word:visible").evaluate_all("es => es.map(e => e.dataset.vis)")
    assert shown == ["Player 3"]
    assert pg.locator(".ev.k-describe:visible").count() == 4 and pg.locator(".ev.k-vote_result").is_visible()
    assert pg.locator(".ev.k-vote:visible").evaluate_all("es => es.map(e => e.dataset.actor)") == ["Player 3"]
    assert "Showing what Player 3 could see" in pg.locator("#seen-note").inner_text()
    # the address keeps the filter: reloaded, the server applies it
    pg.reload()
    assert pg.locator(".ev.k-word:visible").count() == 1 and pg.locator("#seen-by").input_value() == "Player 3"
    pg.select_option("#seen-by", "")
    assert pg.locator(".ev.k-word:visible").count() == 4
    # an unknown seat: the styled 400 page
    resp = pg.goto(base + "/replay/spy-kettle?seen_by=Player%209")
    assert resp.status == 400 and "its seats are Player 1" in pg.locator("main").inner_text()


def test_chinese_magic_and_stopped_replays(site, real_data_root, tmp_path):
    from mas_agents.web.app import create_app
    from tests.web.browser import serve
    from tests.web.replay_runs import build_extra
    extra = build_extra(tmp_path / "runs", real_data_root)
    _, ctx = site
    with serve(create_app(tmp_path / "runs", None)) as base:
        pg = ctx.new_page()
        try:
            pg.goto(base + "/replay/spy-zh")
            heads = pg.locator("#events h2, #events h3, .replay > h1, #players h2, #truth h2").all_inner_texts()
            assert "第1轮" in " ".join(heads) and not any("Round" in h or "Setup" in h for h in heads)
            assert "犯规（重复了之前的描述）" in pg.locator(".ev.k-foul").inner_text()
            shot(pg, "web-wis-zh-replay.png", tmp_path, publish=False)
            rel = extra["cham"].relative_to(tmp_path / "runs").as_posix()
            pg.goto(f"{base}/replay/{rel}?private=1")
            assert pg.locator("#events h2").count() == 4 and pg.locator("#events h3").count() == 0
            assert "chameleon wins" in pg.locator(".ev.k-outcome").inner_text()
            assert pg.locator(".ev.k-belief_table table.readings").count() >= 1
            pg.locator(".ev.k-belief_table table.readings").last.scroll_into_view_if_needed()
            shot(pg, "web-magic-replay.png", tmp_path, publish=False)
        finally:
            pg.close()


def test_from_an_event_to_its_prompt_and_completion_and_back(page, runs, tmp_path):
    from mas_agents.prompt_log import read_prompts
    base, pg = page
    prompts = read_prompts(runs["wis"])
    pg.goto(base + "/replay/spy-kettle")
    ev = pg.locator(".ev.k-describe").nth(1)
    ev.locator("a.call").click()
    call_id = pg.url.rsplit("/", 1)[1]
    rec = prompts[call_id]
    # the messages as sent and the raw completion, as recorded
    assert pg.locator("section.msg pre.text").all_inner_texts() == [m["content"] for m in rec["messages"]]
    assert pg.locator("#completion").inner_text() == rec["completion"]
    assert pg.locator("#parsed").count() == 1
    structured = pg.locator("details#structured")
    if structured.count():
        assert not structured.evaluate("d => d.open")          # collapsed until asked
    shot(pg, "web-call.png", tmp_path)
    # back to the event that cites it
    pg.locator("a.event-link").first.click()
    assert "/replay/spy-kettle" in pg.url and pg.url.endswith("#ev-" + pg.url.split("#ev-")[1])
    assert pg.locator("#ev-" + pg.url.split("#ev-")[1] + " a.call").get_attribute("href").endswith(call_id)
    # the call list: filtered by actor, searched, one unreadable reply re-prompted
    pg.goto(base + "/calls/pp-sin")
    width = pg.evaluate("document.documentElement.scrollWidth")
    assert width <= pg.viewport_size["width"], width                       # the table fits the page
    assert pg.locator("#calls tbody tr").count() == len(read_prompts(runs["eval"]))
    pg.check("input[name=failed]")
    pg.click("#call-filters button")
    assert "failed=1" in pg.url
    failed = pg.locator("#calls tbody tr.failed")
    assert failed.count() == pg.locator("#calls tbody tr").count() >= 1
    assert "unreadable" in failed.first.inner_text()
    shot(pg, "web-calls.png", tmp_path)
    failed.first.locator("td.id a").click()
    assert "window.__pwned" in pg.locator("#completion").inner_text()          # shown as text
    assert pg.evaluate("window.__pwned === undefined")
    pg.locator("a.reprompted-by").click()
    assert pg.locator("a.reprompt-of").count() == 1 and pg.locator("#parsed").count() == 1


def test_wellplay_evaluation_view(page, runs, tmp_path):
    import json
    base, pg = page
    res = json.loads((runs["eval"] / "result.json").read_text())
    pg.goto(base + "/run/pp-sin")
    pg.click("#eval-link")
    assert "/eval/pp-sin" in pg.url
    for cat, cnt in res["counts"].items():
        cells = pg.locator(f'#totals tr[data-category="{cat}"] td').all_inner_texts()
        assert cells[:3] == [cat, str(cnt["n"]), str(cnt["correct"])]
    assert pg.locator("#scores tbody tr").count() == 3          # this run, always_a, random
    first = pg.locator("#questions li.q").first
    assert first.locator("tr.chosen").count() >= 1 and first.locator("tr.key").count() >= 1
    assert pg.evaluate("document.documentElement.scrollWidth") <= pg.viewport_size["width"]
    shot(pg, "web-eval.png", tmp_path, publish=False)   # WellPlay's questions: no licence, never in docs/
    pg.select_option("select[name=result]", "wrong")
    pg.click("#eval-filters button")
    verdicts = set(pg.locator("#questions li.q").evaluate_all("qs => qs.map(q => q.dataset.outcome)"))
    assert verdicts <= {"wrong", "abstained"} and verdicts
    pg.locator("#questions li.q a.call").first.click()
    assert "/calls/pp-sin/" in pg.url and pg.locator("section.msg").count() >= 2


def test_leaderboard_overall_and_per_tournament(page, runs, tmp_path):
    base, pg = page
    pg.goto(base + "/leaderboard")
    assert str(runs["db"]) in pg.locator("#db-path").inner_text()          # says which database it shows
    dbs = pg.locator("#db-select option").evaluate_all("os => os.map(o => o.value)")
    assert dbs == ["--db", "ablate/spy/wis.sqlite", "spy-tour-db/wis.sqlite"]
    agents = pg.locator("#leaderboard tbody tr td:nth-child(2)").all_inner_texts()
    assert set(agents) >= {"plain", "plain+reasoning"}
    assert re.search(r"\[\d+, \d+\] \d+/\d+", pg.locator("#leaderboard tbody tr").first.inner_text())
    assert pg.locator("#rating tbody tr").count() == 2
    shot(pg, "web-leaderboard.png", tmp_path)
    tid = pg.locator("select[name=tournament] option").nth(1).get_attribute("value")
    pg.select_option("select[name=tournament]", tid)
    pg.click("form.filters button")
    assert f"tournament {tid}" in pg.locator("#scope").inner_text()
    # the database inside --runs (mas spy tournament --db), picked from the list
    pg.select_option("#db-select", "spy-tour-db/wis.sqlite")
    pg.select_option("select[name=tournament]", "")
    pg.click("form.filters button")
    assert str(runs["db_in"]) in pg.locator("#db-path").inner_text()
    # an agent's row leads to its games, and a game to its replay
    pg.click("#leaderboard tbody tr td:nth-child(2) a >> text=plain+reasoning")
    assert "Games of plain+reasoning" in pg.locator("h2#games").inner_text()
    pg.locator("#games-table tbody tr td a").first.click()
    assert pg.locator(".ev.k-describe").count() >= 1


def test_ablation_report_with_figures(page, tmp_path):
    base, pg = page
    pg.goto(base + "/run/ablate")
    pg.click("#report-link")
    assert pg.locator("#report h1").inner_text().startswith("Ablation")
    assert "includes 0" in pg.locator("#report").inner_text() or "n=2" in pg.locator("#report").inner_text()
    img = pg.locator("#report img").first
    img.scroll_into_view_if_needed()
    pg.wait_for_function("() => [...document.images].every(i => i.complete)")
    assert img.evaluate("i => i.naturalWidth") > 100
    shot(pg, "web-ablation-report.png", tmp_path)
    # each table has its CSV beside it
    href = pg.locator("#report a.csv-link").first.get_attribute("href")
    resp = pg.request.get(base + href)
    assert resp.ok and resp.headers["content-type"].startswith("text/csv") and "," in resp.text()


def test_a_run_outside_runs_is_refused(page, runs):
    base, pg = page
    for path in ("/run/escape", "/replay/escape", "/run/..%2Foutside", "/raw/..%2Fwis.sqlite",
                 "/replay/%2Fetc"):
        resp = pg.goto(base + path)
        assert resp.status == 403, (path, resp.status)
        assert pg.locator("h1").inner_text() == "Refused"
    assert pg.goto(base + "/replay/spy-kettle").status == 200


def test_script_in_an_event_renders_as_text(page):
    base, pg = page
    pg.goto(base + "/replay/spy-injected")
    first = pg.locator(".ev.k-describe .text").first
    assert INJECTION in first.inner_text()
    assert pg.evaluate("() => window.__pwned === undefined")
    assert pg.locator(".ev img").count() == 0


def test_live_game_shows_new_events_as_they_are_written(page, runs):
    import shutil
    base, pg = page
    live = runs["root"] / "spy-live-browser"
    live.mkdir()
    shutil.copy(runs["wis"] / "config.json", live / "config.json")
    lines = (runs["wis"] / "events.jsonl").read_text().splitlines()
    (live / "events.jsonl").write_text("\n".join(lines[:5]) + "\n")
    pg.goto(base + "/replay/spy-live-browser")
    assert pg.locator("#live-badge").is_visible()
    n0 = pg.locator("#events .ev").count()
    with (live / "events.jsonl").open("a") as fh:
        fh.write("\n".join(lines[5:12]) + "\n")
    pg.wait_for_function(f"() => document.querySelectorAll('#events .ev').length > {n0}", timeout=10000)
    shutil.copy(runs["wis"] / "events.jsonl", live / "events.jsonl")
    shutil.copy(runs["wis"] / "result.json", live / "result.json")
    pg.wait_for_selector("#truth", timeout=10000)


def test_play_who_is_spy_as_the_human_seat_to_the_end(page, tmp_path):
    base, pg = page
    pg.goto(base + "/play")
    pg.fill("input[name=agents]", "human,plain,plain,plain")
    pg.fill("input[name=pair]", "Kettle/Teapot")
    pg.fill("input[name=speak_timeout]", "60")
    pg.click("#new-game button")
    pg.wait_for_selector("#you", timeout=20000)
    my_word = pg.locator("#my-word").inner_text()
    assert my_word in ("Kettle", "Teapot")
    described = voted = 0
    last_id = None
    t0 = time.monotonic()
    while time.monotonic() - t0 < 90:
        pg.wait_for_selector("#answer-text, #answer-vote, #game-over", timeout=30000)
        if pg.locator("#game-over").count():
            break
        rid = pg.locator("input[name=id]").get_attribute("value")
        if rid == last_id:          # the game has not taken the answer yet
            pg.wait_for_timeout(300)
            pg.reload()
            continue
        if pg.locator("#answer-text").count():
            if described == 0:
                shot(pg, "web-play.png", tmp_path)
            pg.fill("#answer-text", f"something found in a kitchen, take {described + 1}")
            described += 1
        else:
            options = pg.locator("#answer-vote option").all_inner_texts()
            assert "Player 1" not in options and len(options) >= 2
            pg.select_option("#answer-vote", options[0])
            voted += 1
        last_id = rid
        pg.click("#answer-send")
    assert pg.locator("#game-over").count() == 1, "the game did not end"
    assert described >= 1
    text = pg.locator("#messages").inner_text()
    assert "Player 1: «something found in a kitchen, take 1»" in text
    # the other players' words were never shown to this seat before the end
    other = "Teapot" if my_word == "Kettle" else "Kettle"
    before_end = text.split("Game over")[0]
    assert other not in before_end
    pg.click("#game-over a")
    assert pg.locator(".ev.k-describe").filter(has_text="take 1").count() == 1
    assert re.search(r"the (civilians win|spy wins) \(", pg.locator("#truth").inner_text())


def test_a_killed_game_is_stopped_and_its_seat_page_does_not_poll(page, runs, tmp_path):
    from tests.web.test_state_and_input import kill, spy_play_process
    base, pg = page
    out = runs["root"] / "spy-killed"
    with spy_play_process(out) as proc:
        pg.goto(base + "/play/spy-killed")
        assert pg.locator("#seat-page").get_attribute("data-poll")       # playing: polled
        kill(proc)
    polls: list[str] = []
    pg.on("request", lambda r: polls.append(r.url) if "/api/seat/" in r.url else None)
    pg.wait_for_selector("#game-stopped", timeout=10000)                 # the open page notices and reloads once
    polls.clear()
    pg.wait_for_timeout(2500)
    assert polls == [], polls                                             # and then polls no more
    assert pg.locator("#answer-form").count() == 0
    shot(pg, "web-play-stopped.png", tmp_path)
    pg.goto(base + "/?kind=wis")
    row = pg.locator('#runs tr:has(a[href="/run/spy-killed"])')
    assert row.get_attribute("data-state") == "stopped" and f"process {proc.pid} is gone" in row.inner_text()
    row.scroll_into_view_if_needed()
    shot(pg, "web-runs-stopped.png", tmp_path)


@pytest.mark.parametrize("path,status", [("/run/" + "a" * 300, 400), ("/replay/spy-kettle%00", 400),
                                         ("/?nested=abc", 400), ("/no-such-page", 404),
                                         ("/calls/spy-kettle/no-such-call", 404), ("/calls/pp-sin?page=two", 400),
                                         ("/eval/pp-sin?page=x", 400), ("/eval/spy-kettle", 404)])
def test_bad_addresses_get_the_error_page(page, path, status, tmp_path):
    base, pg = page
    resp = pg.goto(base + path)
    assert resp.status == status
    assert pg.locator("h1.error-title").count() == 1
    text = pg.locator("p.error").inner_text()
    assert text and "Traceback" not in pg.content() and "detail" not in text
    if path == "/?nested=abc":
        shot(pg, "web-error.png", tmp_path)


def test_play_form_shows_a_plain_sentence_for_a_bad_pair(page, tmp_path):
    base, pg = page
    pg.goto(base + "/play")
    pg.fill("input[name=pair]", "a/a")
    pg.fill("input[name=seed]", "abc")
    pg.click("#new-game button")
    err = pg.locator("#play-error").inner_text()
    assert err.startswith("The game was not started.") and "invalid literal" not in err
    assert pg.locator("input[name=pair]").input_value() == "a/a"           # the form is kept
    shot(pg, "web-play-error.png", tmp_path)
