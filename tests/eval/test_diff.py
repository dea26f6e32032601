"""``mas diff RUN_A RUN_B`` (issue 59 item 2): a run and its rerun are identical; two seeds of a
Who-is-Spy game part at the game's own draw, then at a seat's move with its calls and their
prompt and completion diffs; a seat that answers otherwise is named with its calls (a re-prompt
only one run made too); a MAgIC pair whose moves differ shows the completion and the per-seat
totals; configurations that differ are listed; bad input is one ``error:`` line, exit 1. Games
are played by the fakes of tests/fakes.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mas_agents.cli import app
from mas_agents.eval.rerun.diff import DiffError, diff_runs
from mas_agents.eval.rerun.execute import rerun
from mas_agents.game.runner import run
from tests.fakes import RuleChat, magic_player, wis_player

PAIR = {"civilian": "tea", "spy": "coffee"}
AGENTS = ["plain", "plain+reasoning", "plain", "plain"]


def _wis(out: Path, seed: int, rule=None) -> Path:
    run("wis", out, model=RuleChat(rule=rule or wis_player()), agents=AGENTS, pair=PAIR, seed=seed)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("diff")
    return {"s0": _wis(d / "s0", 0), "s1": _wis(d / "s1", 1), "s3": _wis(d / "s3", 3),
            "s3-garbage": _wis(d / "s3g", 3, wis_player(garbage_for=("Player 3",)))}


def _cli(*args: str):
    return CliRunner().invoke(app, ["diff", *args])


def test_a_run_and_its_rerun_are_identical(runs, tmp_path):
    assert rerun(runs["s3"], tmp_path / "again").status == "identical"
    d = diff_runs(runs["s3"], tmp_path / "again")
    assert d.identical and d.config == [] and d.event is None and d.result == [] and d.metrics == []
    r = _cli(str(runs["s3"]), str(tmp_path / "again"))
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[2] == ("identical (wis: same configuration, events and result.json; clock keys "
                                        "and call ids set aside)")
    j = json.loads(_cli(str(runs["s3"]), str(tmp_path / "again"), "--json").stdout)
    assert j["identical"] is True and j["event"] is None and j["kind"] == "wis"


def test_two_seeds_differ_at_the_draw_then_at_a_seats_move_with_its_calls(runs):
    d = diff_runs(runs["s0"], runs["s1"])
    assert not d.identical
    assert [(c.field, c.a, c.b) for c in d.config] == [("seed", 0, 1), ("spy_seat", 3, 1), ("first_speaker", 3, 0)]
    # the first event that differs is the game's own (the seed's draw): no model call made it
    assert (d.event.index, d.event.path, d.event.a, d.event.b) == (0, "data.first_speaker", "Player 4", "Player 1")
    assert d.event.calls == []
    m = d.model_event
    assert m.index == 6 and m.event_a == {"kind": "describe", "actor": "Player 4", "round": 1}
    assert m.event_b == {"kind": "describe", "actor": "Player 1", "round": 1}
    [p] = m.calls
    assert (p.a["actor"], p.a["purpose"], p.b["actor"], p.b["purpose"]) == ("Player 4", "describe#1", "Player 1",
                                                                            "describe#1")
    assert p.message == "2 (user)"
    lines = p.prompt_diff.splitlines()
    assert lines[0] == f"--- A (call {p.a['call_id']})" and lines[1] == f"+++ B (call {p.b['call_id']})"
    assert '-You are Player 4. Your word is "coffee". If the others\' descriptions do not fit your word, you may be ' \
           'the spy: then describe vaguely so you blend in.' in lines
    assert any(x.startswith('+You are Player 1. Your word is "tea".') for x in lines)
    assert p.completion_diff.splitlines()[-2:] == ["-Description: hint-247 from Player 4 in round 1",
                                                    "+Description: hint-902 from Player 1 in round 1"]
    # the outcome first, then the other result.json fields; the re-scored per-seat values
    assert d.result[0].field == "outcome" and d.result[0].a["spy"] == "Player 4" and d.result[0].b["spy"] == "Player 2"
    assert {c.field for c in d.result} >= {"seed", "scores", "eliminated", "players"}
    assert "game_id" not in {c.field for c in d.result}
    assert d.metrics_from == "rescore"
    scores = {c.key: (c.a, c.b) for c in d.metrics if c.field == "scores"}
    assert scores == {"Player 2": (5.0, -3.0), "Player 4": (-3.0, 5.0)}
    assert ("outcome.spy", "Player 4", "Player 2") in [(c.field, c.a, c.b) for c in d.metrics]
    text = d.text()
    assert "the configurations differ (config.json):\n  seed: was 0, now 1\n" in text
    assert ("first difference (events.jsonl): event 0 (start by game, round 0): data.first_speaker was \"Player 4\", "
            "now \"Player 1\"\n  no model call made it") in text
    assert "first difference a model call made: event 6 (describe by Player 4 in A, describe by Player 1 in B" in text
    assert "  scores[Player 2]: was 5.0, now -3.0" in text


def test_a_seat_that_answers_otherwise_is_named_with_its_calls_and_the_reprompt(runs):
    d = diff_runs(runs["s3"], runs["s3-garbage"])
    assert d.config == []
    assert (d.event.index, d.event.path, d.event.event_a["actor"]) == (7, "content", "Player 3")
    assert (d.event.a, d.event.b) == ("hint-902 from Player 3 in round 1", "")
    first, again = d.event.calls
    assert first.a["purpose"] == first.b["purpose"] == "describe#1"
    assert first.message is None and first.prompt_diff == ""          # same prompt, other answer
    assert first.completion_diff.splitlines()[-2:] == ["-Description: hint-902 from Player 3 in round 1", "+la la la"]
    assert again.a is None and again.b["purpose"] == "describe#2" and again.note == "only B made this call"
    scores = {c.key: (c.a, c.b) for c in d.metrics if c.field == "scores"}
    assert scores["Player 3"] == (5.0, 0.0)
    assert [c for c in d.result if c.field == "invalid_actions"][0].b == 1
    text = d.text()
    assert "same configuration (config.json)" in text and "    prompt: the same" in text
    assert "  - A: none; B: Player 3 describe#2" in text


def test_a_magic_pair_shows_the_move_its_completion_and_the_per_seat_totals(tmp_path, real_data_root):
    from mas_agents.graphs.magic.dataset import load_setting
    outs = {}
    for move in ("defect", "cooperate"):
        outs[move] = tmp_path / move
        run("magic", outs[move], model=RuleChat(rule=magic_player(pd_move=move)), scenario="prisoners_dilemma",
            setting=load_setting(real_data_root, "prisoners_dilemma", 0), side="test_seat", challenger="plain",
            defender="plain")
    d = diff_runs(outs["defect"], outs["cooperate"])
    assert d.config == [] and d.kind == "magic"
    assert (d.event.path, d.event.a, d.event.b) == ("content", "defect", "cooperate")
    assert d.event.event_a == {"kind": "pd_choice", "actor": "Player 1", "round": 1}
    [p] = d.event.calls
    assert p.prompt_diff == "" and p.completion_diff.splitlines()[-2:] == ["-Choice: defect", "+Choice: cooperate"]
    totals = {c.key: (c.a, c.b) for c in d.metrics if c.field == "outcome.totals"}
    assert totals == {"Player 1": (5, 15), "Player 2": (5, 15), "Player 3": (5, 15)}


def test_configurations_that_differ_are_listed_even_when_the_events_agree(runs, tmp_path):
    b = tmp_path / "b"
    shutil.copytree(runs["s3"], b)
    cfg = json.loads((b / "config.json").read_text())
    cfg.update(speak_timeout=30.0, versions={"mas-agents": "9"}, game_id="other", extra={"x": 1})
    (b / "config.json").write_text(json.dumps(cfg))
    d = diff_runs(runs["s3"], b)
    # versions and the run's name are no part of a configuration
    assert [(c.field, c.a, c.b) for c in d.config] == [("speak_timeout", 10.0, 30.0), ("extra", "(absent)", {"x": 1})]
    assert d.event is None and d.result == [] and not d.identical
    assert "the configurations differ (config.json):\n  speak_timeout: was 10.0, now 30.0" in d.text()
    assert "events identical (events.jsonl)" in d.text()


def _one_error_line(r) -> str:
    assert r.exit_code == 1, r.output
    assert "Traceback" not in r.output and r.stdout == ""
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


def test_bad_input_is_one_line_naming_the_file_and_exit_1(runs, tmp_path):
    a = str(runs["s3"])
    line = _one_error_line(_cli(a, str(tmp_path / "nothing")))
    assert f"{tmp_path / 'nothing' / 'config.json'}: no such directory" in line
    (tmp_path / "empty").mkdir()
    assert f"{tmp_path / 'empty' / 'config.json'}: no such file" in _one_error_line(_cli(str(tmp_path / "empty"), a))
    other = tmp_path / "magic"
    other.mkdir()
    (other / "config.json").write_text(json.dumps({"kind": "magic"}))
    line = _one_error_line(_cli(a, str(other)))
    assert f"{other / 'config.json'}: a 'magic' run" in line and "runs of different kinds" in line
    no_events = tmp_path / "no-events"
    shutil.copytree(runs["s3"], no_events)
    (no_events / "events.jsonl").unlink()
    assert f"{no_events / 'events.jsonl'}: no such file" in _one_error_line(_cli(a, str(no_events)))
    bad = tmp_path / "bad"
    shutil.copytree(runs["s3"], bad)
    (bad / "events.jsonl").write_text("{not json\n")
    assert f"{bad / 'events.jsonl'}:1:" in _one_error_line(_cli(str(bad), a))
    (bad / "config.json").write_text("[1, 2]")
    assert f"{bad / 'config.json'}: not a run's config.json" in _one_error_line(_cli(str(bad), a))
    with pytest.raises(DiffError):
        diff_runs(tmp_path / "nothing", runs["s3"])
