"""Integration: the embedded SmolLM2-135M plays a one-round game of "Sin", then is scored.

Runs the `mas` CLI in-process as the README does (minutes on 2 cores), with smaller retrieval
budgets for the murder-mystery prompts (:data:`SMALL_BUDGETS`): the same code path with about 600
prompt tokens a call instead of 1,500-1,700. At the defaults of then (800 script + 500 dialogue tokens) the
Sin game and its 43-question evaluation took 21 of the suite's 47 minutes on a 2-core machine like
CI's (480 s + 895 s of model calls); with these budgets 163 s + 278 s (2026-11-27,
``pytest --durations``); the defaults are now 4,000 + 4,000, at most 6,000 together (issue 48), sized for 8,192 tokens;
what happens when a prompt does not fit is tested in tests/mas_agents/test_remote.py and
tests/mas_agents/test_llm.py (the embedded model too).
"""

import json

import pytest
from typer.testing import CliRunner

from mas_agents.cli import app

# The games run on the real data ("Sin", the MAgIC settings) found as the CLI finds it: without
# it these tests are deselected (tests/conftest.py), never skipped.
pytestmark = [pytest.mark.integration, pytest.mark.realdata]

#: Tokens of retrieved script and dialogue per murder-mystery prompt in these tests (``mas mmg run``
#: and ``mas wellplay eval`` options; defaults 4,000 and 4,000, memory.MemorySettings).
SMALL_BUDGETS = ["--script-budget", "200", "--dialogue-budget", "100"]


def test_embedded_model_plays_one_round_of_sin_and_is_scored(tmp_path):
    runner = CliRunner()
    game = tmp_path / "sin"
    r = runner.invoke(app, ["mmg", "run", "--script", "Sin", "--rounds", "1", *SMALL_BUDGETS, "--out", str(game)])
    assert r.exit_code == 0, r.output
    res = json.loads((game / "result.json").read_text())
    assert res["finished"]
    assert res["roles"]["Chief Wang"] == "murderer"
    events = [json.loads(l) for l in (game / "events.jsonl").read_text().splitlines()]
    kinds = [e["kind"] for e in events]
    # every action either happened or is recorded as an invalid (abstained) action
    assert kinds.count("introduce") + sum(1 for e in events if e["kind"] == "invalid" and e["phase"] == "introduction") == 4
    assert kinds.count("ask") + kinds.count("answer") + sum(e["kind"] == "invalid" and e["phase"] == "questioning" for e in events) >= 4
    assert kinds.count("accuse") == 1
    v = res["outcome"]["victims"][0]
    assert v["victim"] == "Zhao Cishan" and v["murderers"] == ["Chief Wang"]
    assert sum(1 for c in v["votes"].values()) == 4 and "Chief Wang" not in [k for k, c in v["votes"].items() if c == k]
    calls = [json.loads(l) for l in (game / "llm_calls.jsonl").read_text().splitlines()]
    assert len(calls) == res["llm"]["calls"] >= 16
    assert all(c["input_tokens"] > 0 and c["ok"] for c in calls)
    assert "## Introductions" in (game / "transcript.md").read_text()

    ev = tmp_path / "eval"
    r = runner.invoke(app, ["wellplay", "eval", "--method", "session", "--run", str(game), *SMALL_BUDGETS,
                            "--out", str(ev)])
    assert r.exit_code == 0, r.output
    res = json.loads((ev / "result.json").read_text())
    assert {c: v["n"] for c, v in res["counts"].items()} == {"objective": 3, "reasoning": 20, "relation": 21}
    assert set(res["per_character"]) == {f"Sin / {n}" for n in ("Zhang Villager", "Chief Wang", "Officer Li", "Hu Investigate")}
    assert 0.0 <= res["weighted_score"] <= 1.0


def test_player_star_agents_play_one_round_of_sin(tmp_path):
    runner = CliRunner()
    game = tmp_path / "ps"
    r = runner.invoke(app, ["mmg", "run", "--script", "Sin", "--agent", "player_star", "--rounds", "1", *SMALL_BUDGETS,
                            "--out", str(game)])
    assert r.exit_code == 0, r.output
    res = json.loads((game / "result.json").read_text())
    assert res["finished"] and res["agents"]["Chief Wang"] == "plain"   # the murderer keeps the fixed framework
    assert {res["agents"][n] for n in ("Zhang Villager", "Officer Li", "Hu Investigate")} == {"player_star"}
    events = [json.loads(l) for l in (game / "events.jsonl").read_text().splitlines()]
    planning = [e for e in events if e["phase"] == "planning"]
    kinds = {e["kind"] for e in planning}
    assert {"sensor", "target_choice"} <= kinds
    assert {e["actor"] for e in planning} == {"Zhang Villager", "Officer Li", "Hu Investigate"}
    # each PLAYER* asker questioned the target its questioning block chose
    for e in events:
        if e["kind"] == "target_choice":
            ask = next(x for x in events[events.index(e):] if x["kind"] in ("ask", "invalid") and x["actor"] == e["actor"])
            if ask["kind"] == "ask":
                assert ask["data"]["target"] == e["data"]["target"]
    calls = [json.loads(l) for l in (game / "llm_calls.jsonl").read_text().splitlines()]
    # one reading pass (a form call) per PLAYER* agent after the round; its readings share the call
    passes = [c for c in calls if c["purpose"].startswith("sensors#")]
    assert len({c["actor"] for c in passes}) == 3
    sensor_ids = {i for e in events if e["kind"] == "sensor" for i in e["llm_call_ids"]}
    assert sensor_ids <= {c["call_id"] for c in passes}
    t = (game / "transcript.md").read_text()
    assert "(private sensor)" in t and "(private target_choice)" in t


def test_embedded_model_plays_who_is_spy_and_the_replay_shows_it(tmp_path):
    runner = CliRunner()
    out = tmp_path / "spy"
    r = runner.invoke(app, ["spy", "play", "--agents", "plain,plain+reasoning", "--pair", "Tea/Coffee", "--seed", "3",
                            "--out", str(out)])
    assert r.exit_code == 0, r.output
    rec = json.loads((out / "result.json").read_text())
    assert sum(rec["scores"].values()) == pytest.approx(12)
    assert rec["outcome"]["winner"] in ("spy", "civilians") and len(rec["players"]) == 6
    html = (out / "replay.html").read_text()
    for rnd in rec["rounds"]:
        for d in rnd["descriptions"]:
            if d["text"]:
                import html as _h

                from mas_agents.utterance import quote
                assert _h.escape(quote(d["text"])) in html     # one quoted utterance (issue 57)
    calls = [json.loads(l) for l in (out / "llm_calls.jsonl").read_text().splitlines()]
    assert len(calls) == rec["llm"]["calls"] >= 6


def test_embedded_model_plays_a_prisoners_dilemma_with_the_pgm_block(tmp_path):
    runner = CliRunner()
    out = tmp_path / "magic"
    r = runner.invoke(app, ["magic", "run", "--scenario", "prisoners_dilemma", "--challenger", "plain+pgm",
                            "--defender", "plain", "--settings", "0", "--out", str(out)])
    assert r.exit_code == 0, r.output
    res = json.loads((out / "result.json").read_text())
    assert res["metrics"]["rationality"] is not None and 0 <= res["metrics"]["rationality"] <= 1
    events = [json.loads(l) for l in (out / "games" / "prisoners_dilemma-test_seat-s00" / "events.jsonl").read_text().splitlines()]
    assert sum(e["kind"] == "pd_reveal" for e in events) == 5
    assert any(e["kind"] == "belief_table" for e in events)   # the pgm block logged its predictions
    assert (out / "radar.png").exists() and "ours: plain+pgm" in (out / "report.md").read_text()
