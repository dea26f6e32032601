"""``mas rerun`` (issue 50): a recorded run re-executed on its recording is identical; a changed
prompt sentence is reported with the call and the diff; a changed rule with the first event
that differs; ``--rescore`` recomputes the scores from the events and refuses an unknown events
format. Games here are played by the fakes of tests/fakes.py (the recorded real-model runs are
tests/eval/test_rerun_recorded.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mas_agents.eval.rerun.execute import rerun, rerun_cells
from mas_agents.eval.rerun.rescore import EventsFormatError, rescore_run
from mas_agents.game.runner import run
from mas_agents.cli import app
from tests.fakes import RuleChat, magic_player, wis_player

PAIR = {"civilian": "tea", "spy": "coffee"}


@pytest.fixture(scope="module")
def wis_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rec") / "wis"
    run("wis", out, model=RuleChat(rule=wis_player()), agents=["plain", "plain+reasoning", "plain", "plain"],
        pair=PAIR, seed=3)
    return out


def test_a_rerun_of_a_fresh_game_is_identical_and_writes_the_same_files(wis_run, tmp_path):
    o = rerun(wis_run, tmp_path / "again")
    assert o.status == "identical" and o.calls == len((wis_run / "llm_calls.jsonl").read_text().splitlines())
    assert o.text() == f"{wis_run}: identical ({o.calls} calls replayed)"
    # the call log answers as recorded: the same actors, purposes, tokens, in the same count
    keys = ("actor", "purpose", "model", "input_tokens", "output_tokens", "ok")
    old = sorted(tuple(json.loads(x)[k] for k in keys) for x in (wis_run / "llm_calls.jsonl").read_text().splitlines())
    new = sorted(tuple(json.loads(x)[k] for k in keys) for x in (tmp_path / "again" / "llm_calls.jsonl").read_text().splitlines())
    assert new == old
    cfg = json.loads((tmp_path / "again" / "config.json").read_text())
    assert cfg["models"] == ["RuleChat"] and cfg["events_format"] == 1


def test_an_edited_prompt_sentence_is_reported_with_the_call_and_the_diff(wis_run, monkeypatch, tmp_path):
    from mas_agents.graphs.wis import player
    task = player.TASKS["en"]["describe"]
    monkeypatch.setitem(player.TASKS["en"], "describe", task.replace("in one short sentence", "in one brief sentence"))
    o = rerun(wis_run, tmp_path / "rerun")
    assert o.status == "prompt"
    assert "is not in the recording: message 2 (user) differs from the nearest recorded request" in o.detail
    assert "(describe#1)" in o.detail
    minus = [x for x in o.detail.splitlines() if x.startswith("-Round 1: it is your turn.")]
    plus = [x for x in o.detail.splitlines() if x.startswith("+Round 1: it is your turn.")]
    assert len(minus) == len(plus) == 1 and "in one short sentence" in minus[0] and "in one brief sentence" in plus[0]
    assert f"the rerun is kept in {o.out}" in o.text()


def test_a_changed_rule_is_reported_as_the_first_event_that_differs(wis_run, monkeypatch, tmp_path):
    from mas_agents.graphs.wis import rules
    real = rules.game_scores
    monkeypatch.setattr(rules, "game_scores", lambda *a, **k: {p: s + 1 for p, s in real(*a, **k).items()})
    o = rerun(wis_run, tmp_path / "rerun")
    assert o.status == "events"
    # the outcome event's text (its first field that differs) names the scores, now one point more
    assert o.detail.startswith("event ") and "(outcome by game, round " in o.detail and ": content was " in o.detail
    was, now = o.detail.split(": content was ", 1)[1].split(", now ", 1)
    assert "Scores: Player 1 5" in was and "Scores: Player 1 6" in now


def test_rerun_cli_says_identical_or_differs_with_exit_codes(wis_run, monkeypatch, tmp_path):
    r = CliRunner().invoke(app, ["rerun", str(wis_run)])
    assert r.exit_code == 0 and "identical" in r.output
    from mas_agents.graphs.wis import player
    monkeypatch.setitem(player.TASKS["en"], "vote", "Round {round}: vote for the spy. Choose one of:")
    r = CliRunner().invoke(app, ["rerun", str(wis_run), "--out", str(tmp_path / "rerun")])
    assert r.exit_code == 1 and "differs (prompt)" in r.output and "(vote#1)" in r.output
    assert "+Round 1: vote for the spy. Choose one of:" in r.output


def test_every_cell_of_a_magic_bench_reruns_identical_and_rescores(tmp_path, real_data_root):
    from mas_agents.graphs.magic.bench import MagicBenchConfig, run_magic
    out = tmp_path / "mg"
    run_magic(MagicBenchConfig(data_root=real_data_root, out=out, scenarios=["chameleon", "prisoners_dilemma"],
                               challenger="plain", defender="plain", settings="0", model=RuleChat(rule=magic_player())))
    outcomes = rerun_cells(out, data_root=real_data_root)
    assert [o.run.name for o in outcomes] == ["chameleon-chameleon-s00", "chameleon-non_chameleon-s00",
                                              "prisoners_dilemma-test_seat-s00"]
    assert all(o.identical for o in outcomes) and all(o.calls > 0 for o in outcomes)
    [r] = rescore_run(out)
    assert r.same and r.checked == ("metrics", "per_scenario", "components", "counts")


def test_rescore_recomputes_from_events_and_names_a_tampered_field(wis_run, tmp_path):
    import shutil
    [r] = rescore_run(wis_run)
    assert r.same and r.checked == ("eliminated", "scores", "outcome", "rounds")
    d = tmp_path / "tampered"
    shutil.copytree(wis_run, d)
    res = json.loads((d / "result.json").read_text())
    p = next(iter(res["scores"]))
    res["scores"][p] += 1
    (d / "result.json").write_text(json.dumps(res))
    [r] = rescore_run(d)
    assert not r.same and r.detail.startswith("scores: result.json has ")
    r = CliRunner().invoke(app, ["rerun", "--rescore", str(d)])
    assert r.exit_code == 1 and "scores: result.json has" in r.output


def test_rescore_refuses_an_events_format_it_does_not_read(wis_run, tmp_path):
    import shutil
    d = tmp_path / "future"
    shutil.copytree(wis_run, d)
    cfg = json.loads((d / "config.json").read_text())
    (d / "config.json").write_text(json.dumps({**cfg, "events_format": 7}))
    with pytest.raises(EventsFormatError, match="events format 7; this version of mas-agents reads format 1"):
        rescore_run(d)
    r = CliRunner().invoke(app, ["rerun", "--rescore", str(d)])
    assert r.exit_code == 2
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "events format 7" in lines[0]


def test_a_run_that_is_no_game_or_has_no_config_is_refused_in_one_line(tmp_path):
    r = CliRunner().invoke(app, ["rerun", str(tmp_path / "nothing")])
    assert r.exit_code == 2 and r.output.strip().startswith("error: RUN_DIR") and len(r.output.strip().splitlines()) == 1


def test_the_web_zip_of_a_run_holds_what_a_rerun_needs(wis_run, tmp_path):
    import io
    import shutil
    import zipfile

    from fastapi.testclient import TestClient

    from mas_agents.web.app import create_app
    root = tmp_path / "runs"
    shutil.copytree(wis_run, root / "g1")
    data = TestClient(create_app(root, tmp_path / "none.sqlite")).get("/zip/g1").content
    zipfile.ZipFile(io.BytesIO(data)).extractall(tmp_path / "unzipped")
    o = rerun(tmp_path / "unzipped" / "g1", tmp_path / "again")
    assert o.status == "identical", o.text()


def test_seats_no_recording_can_play_are_refused():
    from mas_agents.eval.rerun.execute import params_of
    from mas_agents.replayed_model import NotReplayable
    with pytest.raises(NotReplayable, match="seat\\(s\\) http://127.0.0.1:9/agent are no model of ours"):
        params_of({"kind": "wis", "agents": ["plain", "plain", "http://127.0.0.1:9/agent"], "pair": PAIR}, None)
    with pytest.raises(NotReplayable, match="a person played 'Officer Li'"):
        params_of({"kind": "mmg", "human": "Officer Li", "script": "Sin"}, None)
    with pytest.raises(NotReplayable, match="kind 'nope' is no registered game"):
        params_of({"kind": "nope"}, None)


def test_the_run_page_says_whether_the_run_can_be_replayed(wis_run, tmp_path):
    import shutil

    from fastapi.testclient import TestClient

    from mas_agents.web.app import create_app
    root = tmp_path / "runs"
    shutil.copytree(wis_run, root / "ok")
    shutil.copytree(wis_run, root / "bare")
    (root / "bare" / "llm_prompts.jsonl.gz").unlink()
    cfg = json.loads((root / "bare" / "config.json").read_text())
    (root / "bare" / "config.json").write_text(json.dumps({**cfg, "record_prompts": False}))
    c = TestClient(create_app(root, tmp_path / "none.sqlite"))
    ok, bare = c.get("/run/ok").text, c.get("/run/bare").text
    assert 'id="replayable">Replayable without its model' in ok and "<code>mas rerun RUNS/ok</code>" in ok
    assert 'id="replayable">Not replayable: its prompts were not recorded (--no-record-prompts).' in bare


def test_the_verify_action_reruns_the_run_and_shows_the_outcome(wis_run, tmp_path):
    import shutil

    from fastapi.testclient import TestClient

    from mas_agents.web.app import create_app
    root = tmp_path / "runs"
    shutil.copytree(wis_run, root / "ok")
    shutil.copytree(wis_run, root / "bare")
    (root / "bare" / "llm_prompts.jsonl.gz").unlink()
    c = TestClient(create_app(root, tmp_path / "none.sqlite"))
    assert 'action="/verify/ok"' in c.get("/run/ok").text
    before = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    r = c.post("/verify/ok")
    assert r.status_code == 200 and "<h1>ok: identical</h1>" in r.text and "identical (" in r.text
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == before   # nothing written under --runs
    r = c.post("/verify/bare")
    assert r.status_code == 409 and "bare: it has no prompt log" in r.text


def test_a_get_of_the_verify_address_shows_its_button_and_reexecutes_nothing(wis_run, tmp_path):
    import shutil

    from fastapi.testclient import TestClient

    from mas_agents.web.app import create_app
    root = tmp_path / "runs"
    shutil.copytree(wis_run, root / "ok")
    r = TestClient(create_app(root, tmp_path / "none.sqlite")).get("/verify/ok")
    assert r.status_code == 200 and "<h1>Verify ok</h1>" in r.text and 'method="post" action="/verify/ok"' in r.text
    assert "identical" not in r.text.split("<h1>")[1].split("</h1>")[0]
