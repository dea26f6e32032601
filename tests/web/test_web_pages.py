"""The web app's pages (issue 46's web items): a /play form with a bad model in a seat is refused
before anything starts, a start that fails is listed with its reason, an evaluation and its game
link to each other, pages come gzipped with a favicon, a run page says its progress once and
links each figure to its full size, MAgIC keys read as words, and a crawl from ``/`` over every
kind of run meets no answer other than 200 and no unrounded number."""

from __future__ import annotations

import re
import time
from pathlib import Path

from fastapi.testclient import TestClient

from mas_agents.rundir import write_json
from mas_agents.web.app import create_app
from tests.web.crawl import crawl
from tests.web.runs_fixture import wis_model


def test_play_refuses_a_seat_whose_model_is_not_one_and_starts_nothing(tmp_path):
    # the form plays only the server's own model (issue 57, E9): any other spec is refused alike
    root = tmp_path / "runs"
    client = TestClient(create_app(root, tmp_path / "none.sqlite", model=wis_model()))
    for agents, said in (("human,plain@foo:bar,plain", "the model 'foo:bar' is not one this server plays"),
                         ("human,plain@local:/no/such.gguf,plain", "the model 'local:/no/such.gguf' is not one this"),
                         ("human,plain@openai:,plain", "the model 'openai:' is not one this server plays")):
        r = client.post("/play", data={"agents": agents, "pair": "tea/coffee"}, follow_redirects=False)
        assert r.status_code == 400 and 'id="play-error"' in r.text, agents
        assert said in r.text.replace("&#39;", "'"), (agents, re.findall(r'id="play-error">(.*?)</p>', r.text))
    assert list(root.iterdir()) == []


def test_a_game_that_fails_to_start_is_listed_as_stopped_with_its_reason(tmp_path):
    root = tmp_path / "runs"
    client = TestClient(create_app(root, tmp_path / "none.sqlite", model="local:/no/such/model.gguf"))
    r = client.post("/play", data={"agents": "human,plain,plain", "pair": "tea/coffee"}, follow_redirects=False)
    loc = r.headers["location"]
    assert r.status_code == 303 and re.fullmatch(r"/play/spy-human-[0-9-]+-[0-9a-f]{4}", loc), loc   # not /play/play/
    rel = loc.removeprefix("/play/")
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60 and 'data-state="running"' in client.get("/").text:
        time.sleep(0.2)
    row = client.get("/").text.split(f'href="/run/{rel}"', 1)[1].split("</tr>", 1)[0]
    assert 'class="badge stopped"' in row and "GGUF file not found: /no/such/model.gguf" in row, row
    page = client.get(f"/run/{rel}")
    assert page.status_code == 200 and 'id="stopped-note"' in page.text


def test_an_evaluation_and_its_game_link_to_each_other(tmp_path):
    root = tmp_path / "runs"
    game, ev = root / "games" / "sin", root / "sin-eval"
    game.mkdir(parents=True)
    ev.mkdir()
    write_json(game / "config.json", {"kind": "mmg", "script": "Sin", "agent": "plain", "model": "local"})
    write_json(game / "result.json", {"outcome": {"victims": []}, "llm": {"calls": 3}, "invalid_actions": 0})
    write_json(ev / "config.json", {"kind": "wellplay-eval", "method": "session", "scripts": ["Sin"], "lang": "en",
                                    "model": "local", "seed": 0, "runs": 1, "shuffle": True, "scoring": "strict",
                                    "run": str(game)})
    write_json(ev / "result.json", {"method": "session", "weighted_score": 0.25, "accuracy": {}, "counts": {}})
    (ev / "answers.jsonl").write_text("")
    client = TestClient(create_app(root, tmp_path / "none.sqlite"))
    assert 'href="/eval/sin-eval" class="evaluation-link"' in client.get("/run/games/sin").text
    assert 'href="/run/games/sin" id="evaluated-link"' in client.get("/run/sin-eval").text
    assert 'href="/run/games/sin" id="evaluated-link"' in client.get("/eval/sin-eval").text
    # a relative --run (the runner's working directory) is found by its tail under --runs
    cfg = (ev / "config.json").read_text().replace(str(game), "elsewhere/runs/games/sin")
    (ev / "config.json").write_text(cfg)
    assert 'href="/eval/sin-eval" class="evaluation-link"' in client.get("/run/games/sin").text


def test_pages_are_gzipped_and_have_a_favicon(tmp_path):
    root = tmp_path / "runs"
    for i in range(30):     # a runs list long enough to be worth compressing
        (root / f"g{i:02d}").mkdir(parents=True)
        write_json(root / f"g{i:02d}" / "config.json", {"kind": "wis", "agents": ["plain"] * 4, "model": "local"})
    client = TestClient(create_app(root, tmp_path / "none.sqlite"))
    r = client.get("/", headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and r.headers.get("content-encoding") == "gzip" and "g29" in r.text
    assert r.headers["Content-Security-Policy"]            # the guard's headers survive compression
    assert '<link rel="icon" href="/static/favicon.svg"' in r.text
    for url in ("/static/favicon.svg", "/favicon.ico"):
        f = client.get(url)
        assert f.status_code == 200 and f.headers["content-type"].startswith("image/svg+xml") and b"<svg" in f.content


def test_run_pages_say_progress_once_and_link_figures_and_magic_reads_as_words(runs):
    client = TestClient(create_app(runs["root"], runs["db"], model=wis_model()))
    tour = client.get("/run/tour").text
    text = re.sub(r"<[^>]+>", " ", tour)
    assert len(re.findall(r"\b2 (of 2 )?games finished", text)) == 1, text[:800]
    assert "<h2>Files</h2>" not in tour or 'id="files"><li>' in tour      # never an empty Files heading
    ablate = client.get("/run/ablate").text
    figs = re.findall(r'<figure><a href="(/raw/ablate/[^"]+\.png)"[^>]*><img src="\1"', ablate)
    assert figs, ablate[:2000]
    for page in ("/run/spy-kettle", "/run/ablate", "/run/tour", "/"):
        assert "/wis-replay/" not in client.get(page).text, page
    home = client.get("/?nested=1").text
    assert "Undercover, setting 0, the challenger plays a civilian. " in home
    assert not re.search(r"\b(non_chameleon|test_seat|cost_sharing|prisoners_dilemma|public_good)\b",
                         re.sub(r'(href|src|data-[a-z]+)="[^"]*"', "", home))


def test_magic_bench_deception_is_in_percent_like_the_reports(tmp_path):
    from mas_agents.stats import Estimate
    root = tmp_path / "runs"
    d = root / "bench"
    d.mkdir(parents=True)
    write_json(d / "config.json", {"kind": "magic-bench", "challenger": "plain+pgm", "defender": "plain",
                                   "scenarios": ["chameleon"], "model": "local"})
    write_json(d / "result.json", {"metrics": {"win_rate": 0.5, "deception": 0.5},
                                   "intervals": {"deception": Estimate(0.5, 0.25, 0.75, 4).to_dict()}})
    html = TestClient(create_app(root, tmp_path / "none.sqlite")).get("/").text
    assert "deception 50.0 % [25.0, 75.0] (n=4 settings)" in html and "0.50" not in html


def test_a_crawl_from_the_runs_list_meets_only_200_and_rounded_numbers(runs):
    client = TestClient(create_app(runs["root"], runs["db"], model=wis_model()))
    found = crawl(client, limit=700, per_prefix=25)
    assert len(found.status) > 150, len(found.status)
    # the fixture's spy-live and spy-dead (and the browser tests' copies of them) hold a game's
    # events without its call log (a real game logs each call before the event citing it): their
    # replays' call links have nothing to open
    bad = {u: v for u, v in found.bad().items()
           if not (v[0] == 404 and re.match(r"/calls/spy-(live|dead)[\w-]*/[0-9a-f]{32}$", u))}
    assert not bad, bad
    assert not [u for u in found.status if u.startswith("/wis-replay/")]
    assert not found.decimals, found.decimals
    kinds = {u.split("/")[1] for u in found.status}
    assert {"run", "replay", "calls", "eval", "report", "raw", "zip", "leaderboard", "play", "static"} <= kinds, kinds
