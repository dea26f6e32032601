"""The web app's pages through FastAPI's test client (no browser): what each page shows, what it
refuses, escaping, live fragments, the leaderboard, and a human seat played over HTTP."""

import re
import time
from markupsafe import escape   # what Jinja2 autoescaping writes

from tests.web.runs_fixture import INJECTION


def test_runs_list_filters_and_security_headers(client):
    r = client.get("/")
    assert r.status_code == 200
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"
    assert 'href="/run/tour"' in r.text and 'href="/replay/spy-kettle"' in r.text
    assert "/run/tour/games/g0000" not in r.text           # nested runs only on request
    nested = client.get("/?nested=1").text
    assert "/run/tour/games/g0000" in nested
    wis = client.get("/?kind=wis").text
    assert 'data-kind="mmg"' not in wis and 'data-kind="wis"' in wis
    assert 'data-kind="mmg"' in client.get("/?agent=player_star").text


def test_murder_mystery_replay_has_private_events_hidden_until_asked(client):
    r = client.get("/replay/mmg-toy/run")
    assert r.status_code == 200
    assert re.search(r'<body class="\s*">', r.text)           # private events hidden by CSS
    assert 'class="ev k-sensor private"' in r.text and "Round 2</h2>" in r.text
    assert '<body class="show-private">' in client.get("/replay/mmg-toy/run?private=1").text
    assert "LLM calls: " in r.text and 'id="truth"' in r.text


def test_event_text_is_escaped_everywhere(client, runs):
    for url in ("/replay/spy-injected", "/fragment/events/spy-injected?after=0"):
        html = client.get(url).text
        assert "<script>window.__pwned" not in html and "<img src=x" not in html
        assert str(escape(INJECTION)) in html
    # the WiS round-by-round replay page escapes it too
    html = client.get("/wis-replay/spy-injected").text
    assert "<script>window.__pwned" not in html


def test_paths_outside_runs_are_refused(client):
    for url in ("/run/escape", "/replay/escape", "/calls/escape", "/report/escape", "/raw/escape/config.json",
                "/run/..%2Foutside", "/raw/..%2Fwis.sqlite", "/replay/%2Fetc", "/play/escape",
                "/fragment/events/escape"):
        r = client.get(url)
        assert r.status_code == 403, (url, r.status_code)
    assert client.get("/raw/spy-kettle/transcript.html").status_code == 404   # not a served type
    r = client.get("/raw/spy-kettle/config.json")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")


def test_live_fragment_continues_from_a_step(client, runs):
    r = client.get("/replay/spy-live")
    assert 'data-live="/fragment/events/spy-live"' in r.text and 'id="live-badge"' in r.text
    f = client.get("/fragment/events/spy-live?after=3")
    assert f.headers["x-next"] == "8" and f.headers["x-finished"] == "0"
    assert f.text.count('class="ev ') == 5 and 'data-step="3"' in f.text
    assert client.get("/fragment/events/spy-live?after=8").text.strip() == ""
    assert client.get("/fragment/events/spy-kettle?after=0").headers["x-finished"] == "1"


def test_calls_report_and_run_pages(client):
    calls = client.get("/calls/spy-kettle").text
    assert calls.count('<tr id="call-') > 4
    rep = client.get("/report/ablate")
    assert rep.status_code == 200 and "<table>" in rep.text and 'src="/raw/ablate/spy.png"' in rep.text
    png = client.get("/raw/ablate/spy.png")
    assert png.status_code == 200 and png.headers["content-type"] == "image/png" and png.content[:4] == b"\x89PNG"
    run = client.get("/run/tour").text
    assert "2 of 2 games finished" in run and "/run/tour/games/g0001" in run
    assert 'id="report-link"' in client.get("/run/ablate").text
    assert client.get("/report/spy-kettle").status_code == 404


def test_report_markdown_drops_raw_html_and_outside_images(tmp_path):
    from mas_agents.web.routes.reports import render_markdown
    d = tmp_path / "r"
    d.mkdir()
    html, used = render_markdown("# T\n\n<script>x()</script>\n\n![a](fig.png) ![b](../../secret.png) "
                                 "![c](http://example.org/x.png)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", "r", d)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert 'src="/raw/r/fig.png"' in html and "secret" not in html.split('alt="b"')[0].rsplit("<img", 1)[-1]
    assert 'src=""' in html and "<table>" in html and used == {"fig.png"}


def test_report_links_to_a_sub_run_report_open_its_page_and_never_leave_the_run(tmp_path):
    """``mas reproduce all`` links its three reports (``magic/report.md``); the link now opens the
    sub-run's report page, a file opens under /raw/, and a link out of the run goes nowhere."""
    from mas_agents.web.routes.reports import render_markdown
    (tmp_path / "magic").mkdir()
    (tmp_path / "magic" / "report.md").write_text("# m")
    html, _ = render_markdown("[m](magic/report.md) [f](data.csv) [out](../../etc/passwd) [w](https://example.org/)",
                              "runs/all", tmp_path)
    assert '<a href="/report/runs/all/magic">m</a>' in html
    assert '<a href="/raw/runs/all/data.csv">f</a>' in html
    assert '<a href="#">out</a>' in html and '<a href="https://example.org/">w</a>' in html


def test_leaderboard_columns_and_ratings(client, runs):
    from mas_agents.graphs.wis.leaderboard import Leaderboard
    board = Leaderboard(runs["db"])
    r = client.get("/leaderboard").text
    for h in ("rank score", "win spy", "win civilian", "vote acc", "foul rate", "avg survival"):
        assert f"<th>{h}</th>" in r
    m = {x["agent"]: x for x in board.metrics()}
    assert f"<td>{m['plain']['rank_score']:.1f}</td>" in r
    assert r.count("<tr><td>plain") >= 2                        # in both tables
    tid = board.tournaments()[0]["id"]
    one = client.get(f"/leaderboard?tournament={tid}").text
    assert f"tournament {tid}" in one


def test_cross_origin_post_is_refused(client):
    for headers in ({"Origin": "http://evil.example"}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"}):
        r = client.post("/play", data={"agents": "human,plain,plain"}, headers=headers, follow_redirects=False)
        assert r.status_code == 403, headers


def test_play_form_refuses_bad_games(client):
    for agents in ("plain,plain,plain", "human,human,plain", "human,plain", "human,nope,plain"):
        r = client.post("/play", data={"agents": agents, "pair": "tea/coffee"}, follow_redirects=False)
        assert r.status_code == 400 and 'id="play-error"' in r.text, agents
        assert f'value="{agents}"' in r.text          # the form comes back as it was filled


def test_a_human_seat_over_http(client, runs):
    r = client.post("/play", data={"agents": "plain,human,plain", "pair": "Kettle/Teapot", "seed": "3",
                                   "speak_timeout": "30", "lang": "en"}, follow_redirects=False)
    loc = r.headers["location"]
    assert r.status_code == 303 and loc.startswith("/play/spy-human-")
    t0, answered = time.monotonic(), 0
    while time.monotonic() - t0 < 30:
        page = client.get(loc).text
        if 'id="game-over"' in page:
            break
        m = re.search(r'name="id" value="(\d+)"', page)
        if not m:
            time.sleep(0.05)
            continue
        assert "Teapot" not in page or "Kettle" not in page   # only this seat's word is shown
        text = re.search(r'<option value="([^"]+)"', page).group(1) if 'id="answer-vote"' in page \
            else f"it whistles, take {answered}"
        client.post(loc + "/answer", data={"seat": "Player_2", "id": m.group(1), "text": text})
        answered += 1
    assert 'id="game-over"' in client.get(loc).text and answered >= 1
    run = loc.removeprefix("/play/")
    replay = client.get(f"/replay/{run}").text
    assert "Player 2: «it whistles, take 0»" in replay
    # an answer after the end is refused on the page that says so (409), not written
    r = client.post(loc + "/answer", data={"seat": "Player_2", "id": "1", "text": "late"}, follow_redirects=False)
    assert r.status_code == 409 and 'id="answer-note"' in r.text and "the game is not being played any more" in r.text


def test_a_murder_mystery_character_over_http(client, runs):
    import threading

    from mas_agents.graphs.mmg.human import HumanCharacter
    from mas_agents.graphs.mmg.session import run_game
    from tests.fakes import polite_player
    from tests.toy import toy_runtime
    rt, rec, out = toy_runtime(runs["root"] / "mmg-human", polite_player(vote_for="Bob"), rounds=1)
    rt.agents["Cid"] = HumanCharacter(rt.agents["Cid"].persona, out / "human", poll=0.01)
    th = threading.Thread(target=run_game, args=(rt, out, rec, {"kind": "mmg", "model": "fake", "seed": 0}),
                          daemon=True)
    th.start()
    loc = "/play/mmg-human/run"
    kinds, t0 = [], time.monotonic()
    while time.monotonic() - t0 < 30 and th.is_alive():
        page = client.get(loc).text
        m = re.search(r'name="id" value="(\d+)"', page)
        if not m:
            time.sleep(0.05)
            continue
        assert "You play <b>Cid</b>" in page and "Your script and goals" in page
        if 'id="answer-target"' in page:
            kinds.append("ask")
            target = re.findall(r'<option value="([^"]+)"', page)[0]
            data = {"target": target, "text": "<b>where</b> were you?"}
        elif 'id="answer-vote"' in page:
            kinds.append("vote")
            data = {"text": "Bob"}
        else:
            kinds.append("text")
            data = {"text": "I am Cid, the priest."}
        client.post(loc + "/answer", data={"seat": "Cid", "id": m.group(1), **data})
    th.join(10)
    assert not th.is_alive() and "ask" in kinds and kinds[-1] == "vote"
    page = client.get(loc).text
    assert 'id="game-over"' in page and "&lt;b&gt;where&lt;/b&gt; were you?" in page
    replay = client.get("/replay/mmg-human/run").text
    assert "Cid asks Ann: «&lt;b&gt;where&lt;/b&gt; were you?»" in replay


def test_a_loopback_server_refuses_other_host_names(runs):
    from fastapi.testclient import TestClient

    from mas_agents.web.app import create_app
    from mas_agents.http_guard import LOOPBACK_HOSTS
    c = TestClient(create_app(runs["root"], runs["db"], allowed_hosts=LOOPBACK_HOSTS))
    assert c.get("/", headers={"host": "127.0.0.1:8000"}).status_code == 200
    assert c.get("/", headers={"host": "[::1]:8000"}).status_code == 200
    assert c.get("/", headers={"host": "evil.example:8000"}).status_code == 421
