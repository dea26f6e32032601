"""Run state and bad input (issue 26, items 7 and 8): a run whose process is gone is "stopped", not
"running", and its pages stop polling; bad addresses, query values, routes and forms get the
styled error page with a plain sentence and a 4xx status."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def styled(r, status: int) -> str:
    """Assert ``r`` is the error page with ``status`` and a plain sentence; returns the sentence."""
    assert r.status_code == status, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("text/html"), r.headers["content-type"]
    for bad in ("Traceback", "invalid literal", '{"detail"', "embedded null byte", "File name too long",
                "Errno", "pydantic"):
        assert bad not in r.text, bad
    m = re.search(r'<h1 class="error-title">[^<]+</h1>\s*<p class="error">([^<]+)</p>', r.text)
    assert m, r.text[:500]
    return m.group(1)


# -- run state ----------------------------------------------------------------------------------

def test_marker_decides_running_and_stopped(runs, tmp_path):
    from mas_agents.rundir import marker_process, write_run_marker
    from mas_agents.web import run_kinds as web_kinds
    assert web_kinds.run_state(runs["live"], "wis") == ("running", "")
    state, why = web_kinds.run_state(runs["dead"], "wis")
    assert state == "stopped" and "is gone" in why
    assert web_kinds.run_state(runs["wis"], "wis") == ("finished", "")
    # a reused pid (another process's start time) is not taken for the run's process
    m = write_run_marker(tmp_path)
    assert marker_process(m) == (True, "")
    assert marker_process({**m, "proc_start": "1"})[0] is False
    assert marker_process({**m, "error": "ValueError: boom"}) == (False, "it failed: ValueError: boom")
    assert marker_process({**m, "host": "elsewhere"})[0] is None


def test_old_run_without_marker_is_stopped_unless_just_written(tmp_path):
    from mas_agents.web import run_kinds
    d = tmp_path / "old"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"kind": "wis"}))
    (d / "events.jsonl").write_text("")
    state, why = run_kinds.run_state(d, "wis")
    assert state == "running" and why.startswith("no process marker; last written")
    old = time.time() - run_kinds.FRESH_S - 5
    for p in (d, d / "config.json", d / "events.jsonl"):
        os.utime(p, (old, old))
    assert run_kinds.run_state(d, "wis") == ("stopped", "no process marker, and nothing written for 5 min")


def test_runner_marker_is_removed_on_success_and_keeps_the_error(tmp_path):
    from mas_agents.rundir import RUN_MARKER, marks_run, read_run_marker

    @marks_run
    def ok(out):
        assert read_run_marker(out)["pid"] == os.getpid()
        (out / "result.json").write_text("{}")

    @marks_run
    def fails(out):
        (out / "config.json").write_text("{}")
        raise ValueError("the model server is unreachable")

    @marks_run
    def refuses(out):
        raise ValueError("bad arguments")

    ok(tmp_path / "a")
    assert not (tmp_path / "a" / RUN_MARKER).exists()
    with pytest.raises(ValueError):
        fails(out=tmp_path / "b")
    assert read_run_marker(tmp_path / "b")["error"] == "ValueError: the model server is unreachable"
    with pytest.raises(ValueError):
        refuses(tmp_path / "c")
    assert not (tmp_path / "c").exists()              # a directory it created and left empty goes


def test_stopped_runs_are_listed_as_stopped_and_not_polled(client):
    page = client.get("/").text
    dead = re.search(r'<tr class="kind-wis (\w+)" data-kind="wis" data-state="\w+">\s*<td[^>]*><a href="/run/spy-dead"', page)
    assert dead and dead.group(1) == "stopped"
    assert re.search(r'<tr class="kind-wis running" data-kind="wis" data-state="running">\s*<td[^>]*><a href="/run/spy-live"', page)
    replay = client.get("/replay/spy-dead").text
    assert "data-live" not in replay and 'id="stopped-note"' in replay and 'id="live-badge"' not in replay
    assert client.get("/fragment/events/spy-dead?after=0").headers["x-finished"] == "1"
    assert 'data-live="/fragment/events/spy-live"' in client.get("/replay/spy-live").text


def test_play_page_of_a_run_without_a_human_seat_is_404_not_seating_forever(client):
    text = styled(client.get("/play/spy-kettle"), 404)
    assert "without a human seat" in text
    styled(client.get("/play/magic-game"), 404)


@contextmanager
def spy_play_process(out: Path):
    """A real ``mas spy play`` (this checkout's code, in a subprocess) with a human seat against a
    slow stub model server, playing into ``out``; yields the process once its game is seated."""
    from tests.mas_agents.test_remote import wis_reply
    from tests.stub_openai import StubServer

    with StubServer(latency_s=0.5, reply=wis_reply) as stub:
        env = {**os.environ, "OPENAI_BASE_URL": stub.base_url, "PYTHONPATH": str(REPO)}
        env.pop("OPENAI_API_KEY", None)
        proc = subprocess.Popen(
            [sys.executable, "-c", "from mas_agents.cli import app; app()", "spy", "play",
             "--agents", "human,plain@openai:stub,plain@openai:stub,plain@openai:stub", "--pair", "tea/coffee",
             "--speak-timeout", "600", "--out", str(out)],
            cwd=str(out.parent), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            t0 = time.monotonic()
            while not ((out / "run.lock").exists() and (out / "human" / "Player_1" / "view.json").is_file()
                       and (out / "config.json").exists()):
                assert proc.poll() is None, proc.stdout.read().decode()
                assert time.monotonic() - t0 < 60, "the game did not start"
                time.sleep(0.1)
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()


def kill(proc) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)


@pytest.mark.integration
def test_a_killed_spy_play_is_listed_as_stopped_and_its_seat_page_does_not_poll(tmp_path):
    """A real ``mas spy play`` with a human seat against a stub model server, killed with SIGKILL."""
    from fastapi.testclient import TestClient

    from mas_agents.web.app import create_app
    root = tmp_path / "runs"
    root.mkdir()
    out = root / "killed"
    c = TestClient(create_app(root, tmp_path / "none.sqlite"))
    with spy_play_process(out) as proc:
        assert json.loads((out / "run.lock").read_text())["pid"] == proc.pid
        row = re.search(r'data-state="(\w+)">\s*<td[^>]*><a href="/run/killed"', c.get("/").text)
        assert row.group(1) == "running"
        assert 'data-poll="/api/seat/killed' in c.get("/play/killed").text
        kill(proc)
    page = c.get("/").text
    row = re.search(r'data-state="(\w+)">\s*<td[^>]*><a href="/run/killed".*?<div class="reason">([^<]*)</div>', page, re.S)
    assert row.group(1) == "stopped" and f"its process {proc.pid} is gone" in row.group(2)
    seat = c.get("/play/killed")
    assert seat.status_code == 200 and "data-poll" not in seat.text and 'id="game-stopped"' in seat.text
    assert 'id="answer-form"' not in seat.text                   # nothing to answer: it would go nowhere
    assert c.get("/api/seat/killed").json()["state"] == "stopped"
    r = c.post("/play/killed/answer", data={"seat": "Player_1", "id": "1", "text": "hello"})
    assert r.status_code == 409 and "it has stopped" in r.text
    run = c.get("/run/killed").text
    assert 'id="stopped-note"' in run and "running</span>" not in run


# -- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("url", ["/run/" + "a" * 300, "/replay/x/" + "b" * 256, "/raw/" + "c" * 300 + "/config.json",
                                 "/play/" + "d" * 300, "/zip/" + "e" * 300, "/run/x%00y", "/replay/spy-kettle%00",
                                 "/raw/spy-kettle/config.json%00.png", "/calls/%00", "/leaderboard?db=a%00b"])
def test_overlong_or_nul_path_is_a_plain_400(client, url):
    text = styled(client.get(url), 400)
    assert "NUL" in text or "bytes long" in text


@pytest.mark.parametrize("url,name", [("/?nested=abc", "nested"), ("/replay/spy-kettle?private=yes", "private"),
                                      ("/fragment/events/spy-live?after=x", "after"), ("/csv/ablate?table=first", "table")])
def test_non_numeric_query_value_is_a_plain_400(client, url, name):
    text = styled(client.get(url), 400)
    assert text.startswith(f"In the address, {name}=") and "is not a whole number" in text


def test_api_routes_answer_json_errors(client):
    r = client.get("/api/progress/" + "a" * 300)
    assert r.status_code == 400 and "bytes long" in r.json()["error"]


def test_unknown_routes_and_methods_get_the_styled_page(client):
    text = styled(client.get("/no-such-page"), 404)
    assert text == "This server has no page at /no-such-page."
    styled(client.get("/run/no-such-run"), 404)
    styled(client.put("/play"), 405)


@pytest.mark.parametrize("form,says", [
    ({"pair": "a/a"}, "The two words of the pair must differ"),
    ({"pair": "Tea/tea"}, "The two words of the pair must differ"),
    ({"pair": "tea"}, "two words separated by a slash"),
    ({"pair": "/coffee"}, "two words separated by a slash"),
    ({"pair": "tea/coffee", "seed": "abc"}, "The seed must be a whole number; 'abc' is not one."),
    ({"pair": "tea/coffee", "seed": "1.5"}, "The seed must be a whole number"),
    ({"pair": "tea/coffee", "speak_timeout": "soon"}, "must be a number; 'soon' is not one"),
    ({"pair": "tea/coffee", "speak_timeout": "-3"}, "must be between 0 and 3600"),
    ({"pair": "tea/coffee", "speak_timeout": "nan"}, "must be between 0 and 3600"),
    ({"pair": "tea/coffee", "lang": "fr"}, "The language must be en or zh."),
    ({"pair": "tea/coffee", "agents": "human,plain"}, "A game has 3 to 9 seats; this one has 2."),
])
def test_play_form_validates_pair_and_numbers_in_plain_words(client, form, says):
    data = {"agents": "human,plain,plain", "seed": "0", "speak_timeout": "0", "lang": "en", **form}
    r = client.post("/play", data=data, follow_redirects=False)
    assert r.status_code == 400 and "invalid literal" not in r.text and "Traceback" not in r.text
    err = re.search(r'<p class="error" id="play-error">([^<]*)</p>', r.text).group(1)
    assert says.replace("'", "&#39;") in err, err


def test_error_in_the_address_is_not_shown(client):
    r = client.get("/play?error=" + "The server crashed: call 555-0100")
    assert r.status_code == 200 and "555-0100" not in r.text and 'id="play-error"' not in r.text
