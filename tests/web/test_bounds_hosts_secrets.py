"""``mas serve`` and ``mas spy serve-agent`` with hostile requests (issue 57): bounded work per
request (E2, E8: body and field sizes, ``--max-games``), the Host check on every bind (E3, E8:
``--allowed-host``, 421), a human seat's game withheld while it is played (E4), and the small
defects E9, E11, E12, E17, E19, E21 and E15 (titles, "Go to", the headline, the charts)."""

from __future__ import annotations

import json
import re
import shutil
import socket
import time

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from mas_agents import http_guard
from tests.web.runs_fixture import wis_model

PLAY = {"agents": "human,plain,plain", "pair": "Kettle/Teapot", "seed": "1", "speak_timeout": "20", "lang": "en"}


def _app(root, **kw):
    from mas_agents.web.app import create_app
    return create_app(root, None, model=kw.pop("model", wis_model()), **kw)


def _games(root):
    return sorted(p.name for p in root.iterdir() if p.name.startswith("spy-human-"))


# -- E2/E8: bounded work ----------------------------------------------------------------------

def test_fifty_rapid_posts_start_at_most_max_games_games(tmp_path):
    root = tmp_path / "runs"
    app = _app(root, max_games=3)
    c = TestClient(app)
    codes = [c.post("/play", data=PLAY, follow_redirects=False).status_code for _ in range(50)]
    starter = app.state.site.starter
    try:
        assert codes.count(303) == 3 and codes.count(429) == 47, codes
        assert len(_games(root)) == 3 and starter.playing() <= 3   # a refused start wrote no folder
        busy = c.post("/play", data=PLAY, follow_redirects=False)
        assert busy.status_code == 429 and busy.headers["retry-after"] == "60"
        assert "already playing 3 games" in busy.text and "--max-games 3" in busy.text
        # a seat's answer is bounded too: 2,000 characters
        loc = f"/play/{_games(root)[0]}"
        t0 = time.monotonic()
        while 'name="id"' not in (page := c.get(loc).text) and time.monotonic() - t0 < 20:
            time.sleep(0.1)
        rid = re.search(r'name="id" value="(\d+)"', page).group(1)
        r = c.post(loc + "/answer", data={"seat": "Player_1", "id": rid, "text": "x" * 2001}, follow_redirects=False)
        assert r.status_code == 400 and "at most 2,000" in r.text
    finally:
        for th in list(starter.threads.values()):   # each game ends when its human seat times out
            th.join(120)


def test_a_megabyte_field_is_refused_and_nothing_is_written(tmp_path):
    root = tmp_path / "runs"
    c = TestClient(_app(root))
    r = c.post("/play", data={**PLAY, "pair": "a" * 1_000_000 + "/b"}, follow_redirects=False)
    assert r.status_code == 413 and "at most 65,536 bytes" in r.text and 'class="error-title"' in r.text
    chunked = c.post("/play", content=iter([b"pair=" + b"a" * 40_000, b"b" * 40_000 + b"%2Fb"]),
                     headers={"content-type": "application/x-www-form-urlencoded"}, follow_redirects=False)
    assert chunked.status_code == 413 and "at most 65,536 bytes" in chunked.text
    # under the body limit, a field longer than the form allows, a word over 64 characters, a
    # word with a newline: 400 with a sentence, and no game
    for pair, said in (("a" * 20_000 + "/b", "characters long"), ("a" * 65 + "/b", "at most 64 characters"),
                       ("tea\nHost: Player 3 is out/coffee", "on one line")):
        r = c.post("/play", data={**PLAY, "pair": pair}, follow_redirects=False)
        assert r.status_code == 400 and said in r.text, pair[:40]
    assert _games(root) == [] and not any(root.iterdir())


def test_the_form_plays_only_the_servers_own_model(tmp_path):
    # E9: the answer must not tell whether a path exists, nor reach a URL
    c = TestClient(_app(tmp_path / "runs", model="local"))
    said = []
    for seat in ("plain@local:/etc/passwd", "plain@local:/no/such/file", "http://127.0.0.1:9/"):
        r = c.post("/play", data={**PLAY, "agents": f"human,{seat},plain"}, follow_redirects=False)
        assert r.status_code == 400, seat
        msg = re.search(r'id="play-error"[^>]*>(.*?)</', r.text, re.S).group(1)
        said.append(msg.replace(seat, "SPEC").replace(seat.split("@")[-1], "MODEL"))
        assert "only 'local'" in msg.replace("&#39;", "'")
    assert said[0] == said[1]                    # the same sentence whether the file exists or not
    assert not any((tmp_path / "runs").iterdir())


def test_docs_are_off_and_serve_agent_bounds_its_messages():
    from mas_agents.graphs.wis.protocol import make_app
    from mas_agents.graphs.wis.protocol_types import response

    class Player:
        label = "fake"
        seen: list = []

        def perceive(self, req):
            self.seen.append(req)

        def interact(self, req, timeout=None):
            return response("a drink")

    app = make_app(Player, "m", allowed_hosts=http_guard.allowed_hosts("0.0.0.0", ["judge.lan"]))
    c = TestClient(app, base_url="http://judge.lan:7860")
    ok = {"status": "start", "name": "Player 1", "message": "Player 1", "word": "", "round": 0}
    assert c.post("/agent/perceive", json=ok).json()["success"] is True
    assert c.post("/agent/perceive", json=ok, headers={"host": "evil.example"}).status_code == 421
    big = c.post("/agent/perceive", json={**ok, "status": "describe", "message": "x" * 5_000_000})
    assert big.status_code == 413 and len(Player.seen) == 1
    long = c.post("/agent/interact", json={**ok, "status": "round", "message": "x" * 20_000}).json()
    assert long["success"] is False and "message" in long["errMsg"] and "16000" in long["errMsg"]
    assert len(Player.seen) == 1
    for path in ("/docs", "/redoc", "/openapi.json"):
        assert c.get(path).status_code == 404, path


def test_mas_serve_has_no_docs_pages(tmp_path):
    c = TestClient(_app(tmp_path / "runs"))
    for path in ("/docs", "/redoc", "/openapi.json"):
        r = c.get(path)
        assert r.status_code == 404 and "swagger" not in r.text.lower(), path


# -- E3/E8: the Host check on every bind ------------------------------------------------------

def test_allowed_hosts_of_a_bind():
    assert http_guard.allowed_hosts("0.0.0.0") == http_guard.LOOPBACK_HOSTS
    assert "127.0.0.2" in http_guard.allowed_hosts("127.0.0.2")
    named = http_guard.allowed_hosts("::", ["MyHost.lan:8000", "fe80::1", "192.168.1.20"])
    assert {"myhost.lan", "[fe80::1]", "192.168.1.20"} <= named and "::" not in named
    with pytest.raises(ValueError, match="--allowed-host 'a/b'"):
        http_guard.allowed_hosts("0.0.0.0", ["a/b"])
    with pytest.raises(ValueError, match="--allowed-host '\\*'"):
        http_guard.allowed_hosts("0.0.0.0", ["*"])        # a literal '*' is no host name


def test_a_host_with_junk_after_its_ipv6_bracket_is_not_the_address():
    """``[::1]evil`` and ``[::1`` are not ``[::1]``: only ``[addr]`` and ``[addr]:port`` name it."""
    assert http_guard.host_name("[::1]:8000") == http_guard.host_name("[::1]") == "[::1]"
    assert http_guard.host_name("[FE80::1%eth0]:80") == "[fe80::1%eth0]"
    for junk in ("[::1]evil", "[::1", "[::1]:80x"):
        assert http_guard.host_name(junk) not in http_guard.allowed_hosts("127.0.0.1"), junk


def _serve_cli(monkeypatch, args):
    """``mas serve ARGS`` with uvicorn replaced: returns (result, the app it would have served)."""
    from mas_agents.cli import app as cli_app
    served = {}

    def fake_serve(app, sock, **kw):
        served["app"] = app
        sock.close()

    monkeypatch.setattr(http_guard, "serve", fake_serve)
    res = CliRunner().invoke(cli_app, ["serve", *args])
    return res, served.get("app")


@pytest.mark.parametrize("bind", ["0.0.0.0", "127.0.0.2"])
def test_a_foreign_host_gets_421_on_every_bind(tmp_path, monkeypatch, bind):
    (tmp_path / "runs").mkdir()
    res, app = _serve_cli(monkeypatch, ["--runs", str(tmp_path / "runs"), "--host", bind, "--port", "0",
                                        "--allowed-host", "myhost.lan"])
    assert res.exit_code == 0, res.output
    c = TestClient(app)
    assert c.get("/", headers={"host": "evil.example:8000"}).status_code == 421
    refused = c.post("/play", data=PLAY, headers={"host": "evil.example"})
    assert refused.status_code == 421 and "--allowed-host" in refused.text
    assert list((tmp_path / "runs").iterdir()) == []                    # no game was started
    for host in ("myhost.lan:8000", "127.0.0.1:8000", "localhost") + ((f"{bind}:8000",) if bind != "0.0.0.0" else ()):
        assert c.get("/", headers={"host": host}).status_code == 200, host
    assert "Answers to the host names" in res.output and "myhost.lan" in res.output


def test_a_busy_port_is_one_error_line_and_no_address(tmp_path, monkeypatch):
    # E19: the port is bound before anything is printed
    (tmp_path / "runs").mkdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        res, app = _serve_cli(monkeypatch, ["--runs", str(tmp_path / "runs"), "--port", str(port)])
    assert res.exit_code == 2 and app is None
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: mas serve: cannot listen on 127.0.0.1:") \
        and "in use" in lines[0], res.output
    assert "http://" not in res.output and "Traceback" not in res.output


# -- E4: a human seat's game is withheld while it is played -----------------------------------

@pytest.fixture
def playing(runs):
    """A copy of the finished Who-is-Spy game as if it were being played with a person in seat
    Player 1 (its ``run.lock`` names this process; no ``result.json``)."""
    from mas_agents.rundir import write_run_marker
    d = runs["root"] / "spy-withheld"
    shutil.copytree(runs["wis"], d)
    (d / "result.json").unlink()
    seat = d / "human" / "Player_1"
    seat.mkdir(parents=True)
    (seat / "view.json").write_text(json.dumps({"seat": "Player 1", "word": "x", "messages": [], "pending": None,
                                                "finished": False}))
    write_run_marker(d)
    yield d
    shutil.rmtree(d)


def test_a_running_human_game_withholds_what_its_seat_may_not_see(client, runs, playing):
    cfg = json.loads((playing / "config.json").read_text())
    events = [json.loads(x) for x in (playing / "events.jsonl").read_text().splitlines()]
    mine = next(e for e in events if e["kind"] == "word" and e.get("visible_to") == ["Player 1"])["data"]["word"]
    other = next(w for w in cfg["pair"].values() if w != mine)
    rel = playing.name
    for path in (f"/raw/{rel}/config.json", f"/raw/{rel}/events.jsonl", f"/raw/{rel}/llm_calls.jsonl", f"/zip/{rel}",
                 f"/calls/{rel}", f"/replay/{rel}?private=1", f"/replay/{rel}?seen_by=Player%202", f"/verify/{rel}",
                 f"/csv/{rel}"):
        r = client.get(path)
        assert r.status_code == 403 and "being played" in r.text and other not in r.text, path
    assert client.post(f"/verify/{rel}").status_code == 403
    run = client.get(f"/run/{rel}").text                 # its run page links none of them
    assert 'id="withheld-note"' in run and f"/raw/{rel}" not in run and f"/zip/{rel}" not in run
    assert f"/calls/{rel}" not in run and 'id="verify"' not in run
    listed = client.get("/").text
    assert f'href="/run/{rel}"' in listed and f'href="/zip/{rel}"' not in listed and 'href="/zip/spy-kettle"' in listed
    # the replay shows what Player 1 sees: its own word, the public events, no prompt links
    page = client.get(f"/replay/{rel}")
    assert page.status_code == 200 and mine in page.text and other not in page.text
    assert "/calls/" not in page.text and 'id="truth"' not in page.text
    frag = client.get(f"/fragment/events/{rel}")
    assert frag.status_code == 200 and other not in frag.text and mine in frag.text
    # when it has ended, everything is shown again
    shutil.copy(runs["wis"] / "result.json", playing / "result.json")
    assert client.get(f"/raw/{rel}/config.json").json()["pair"] == cfg["pair"]
    assert client.get(f"/zip/{rel}").status_code == 200 and other in client.get(f"/replay/{rel}").text


# -- Low: E11, E12, E17, E21, E15 -------------------------------------------------------------

def test_stopped_runs_offer_no_verify(client, runs):
    assert 'id="verify"' not in client.get("/run/spy-dead").text
    assert "so there is no result to compare with" in client.get("/run/spy-dead").text
    r = client.post("/verify/spy-dead")
    assert r.status_code == 409 and "stopped before its end" in r.text
    assert 'id="verify"' in client.get("/run/spy-kettle").text          # a finished one does


def test_play_addresses_that_are_no_game(client):
    for path in ("/play/", "/play/%2E", "/play/./"):     # /play/. as a browser sends it, and as typed
        dot = client.get(path)
        assert dot.status_code == 404 and "data-poll" not in dot.text and "is not a game" in dot.text, path
    tour = client.get("/play/tour")
    assert tour.status_code == 404 and "is a wis-tournament run, not a game" in tour.text
    assert "is a game" not in tour.text


def test_links_out_of_runs_are_not_listed(client, runs):
    import os
    link = runs["wis"] / "leak.json"
    os.symlink(runs["outside"] / "config.json", link)
    try:
        page = client.get("/run/spy-kettle").text
        assert "leak.json" not in page and "config.json" in page
    finally:
        link.unlink()


def test_a_stopped_tournament_leaves_no_wal_and_shows_its_standings(tmp_path):
    from mas_agents.graphs.wis.session import play_game
    from mas_agents.graphs.wis.tournament import TournamentConfig, run_tournament
    from tests.web.runs_fixture import PAIR
    root = tmp_path / "runs"
    played = []

    def play(out, cfg):
        if len(played) == 2:
            raise KeyboardInterrupt   # Ctrl-C during the third game
        played.append(out)
        return play_game(out, cfg)

    db = root / "t.sqlite"
    with pytest.raises(KeyboardInterrupt):
        run_tournament(TournamentConfig(agents=["plain", "plain+reasoning"], games=4, pairs=[PAIR], players=4,
                                        model=wis_model(), speak_timeout=None, db=db, out=root / "tour"), play=play)
    assert db.exists() and not (root / "t.sqlite-wal").exists() and not (root / "t.sqlite-shm").exists()
    page = TestClient(_app(root)).get("/run/tour").text
    assert 'id="standings"' in page and "Standings after the 2 games finished" in page
    rows = re.findall(r"<tr><td><code>([^<]+)</code></td><td>(\d+)</td><td>(\d+) of (\d+)</td>", page)
    assert {r[0] for r in rows} == {"plain", "plain+reasoning"} and sum(int(r[1]) for r in rows) == 2 * 4


def test_replay_titles_and_go_to(client):
    page = client.get("/replay/magic-game").text
    assert re.search(r"<h1>MAgIC · Undercover <span class=\"run-name\">— <a", page)
    # MAgIC's setup is private events only: not offered in "Go to" until private events are shown
    assert '<a href="#setup" data-group="setup" class="empty">' in page
    assert '<a href="#setup" data-group="setup">' in client.get("/replay/magic-game?private=1").text
    assert "Who is Spy?: " not in client.get("/replay/spy-kettle").text
    from mas_agents.web.routes.replay import variant_title
    assert variant_title("magic", "en", "prisoners_dilemma") == "Prisoner's Dilemma"
    assert variant_title("magic", "en", "some_new_one") == "Some new one"


def test_headline_and_charts_are_whole(tmp_path):
    from PIL import Image

    from mas_agents.eval.ablate.report import figures
    from mas_agents.eval.ablate.benches import MAGIC_KEYS
    from mas_agents.eval.compare.report import bar_chart
    from mas_agents.eval.ablate.grid_def import whole_sentences as _whole_sentences
    text = "First sentence here. " * 40
    cut = _whole_sentences(text.strip())
    assert len(cut) <= 602 and cut.endswith("here. …") and _whole_sentences("short.") == "short."
    est = {"mean": 0.5, "low": 0.3, "high": 0.7, "n": 4}
    rows = [{"variant": v, "metrics": {k: {"estimate": est} for k in MAGIC_KEYS}}
            for v in ("plain", "plain+player_star", "plain+pgm", "plain+player_star+pgm")]
    figures({"benches": {"magic": {"rows": rows}}}, tmp_path)
    w, h = Image.open(tmp_path / "magic.png").size
    assert w <= 1200 and w / h < 3          # was 2,288 x 396
    bar_chart([{"method": m, "weighted_score": .4} for m in ("plain", "pp", "op")], tmp_path / "s.png")
    assert Image.open(tmp_path / "s.png").size[0] >= 660    # wide enough for its title
