"""Replays from events.jsonl alone (mas_agents/web/replay.py) and the openskill rating."""

import json

from mas_agents.web import rating
from mas_agents.web import replay as rp


def test_murder_mystery_rows_sections_private_events_and_truth(runs):
    events = rp.load_events(runs["mmg"] / "events.jsonl")
    game = rp.game_of(events)
    assert game == "mmg"
    rows = rp.rows(events, game)
    sections = list(dict.fromkeys(r.section for r in rows))
    assert sections[:4] == ["Setup", "Introductions", "Round 1", "Round 2"]
    assert sections[-2:] == ["The vote (private ballots)", "The truth"]
    private = [r for r in rows if r.private]
    assert {r.kind for r in private} >= {"script", "sensor", "target_choice", "suspect_list", "relations", "vote"}
    sensor = next(r for r in private if r.kind == "sensor")
    assert sensor.owner == sensor.actor and json.loads(sensor.details)["sensor"] in ("emotion", "motivation",
                                                                                      "opportunity", "information")
    ask = next(r for r in rows if r.kind == "ask")
    assert not ask.private and " asks " in ask.text and ask.calls
    truth = rp.truth(events, game)
    assert truth[0].startswith("Victim Vic: murderer Bob") and "Bob: murderer (plain)" in truth[1]


def test_rows_fetched_later_continue_the_sections(runs):
    events = rp.load_events(runs["mmg"] / "events.jsonl")
    whole = rp.rows(events, "mmg")
    tail = rp.rows(events, "mmg", start=10)
    assert [r.step for r in tail] == [r.step for r in whole[10:]]
    assert [r.section for r in tail] == [r.section for r in whole[10:]]


def test_who_is_spy_and_magic_rows(runs):
    events = rp.load_events(runs["wis"] / "events.jsonl")
    assert rp.game_of(events) == "wis"
    rows = rp.rows(events, "wis")
    words = [r for r in rows if r.kind == "word"]
    assert words and all(r.private and r.owner == json.loads(r.details)["player"] for r in words)
    assert any(r.kind == "vote_result" and "counts" in r.details for r in rows)
    assert "Words: Player 1: Kettle" in rp.truth(events, "wis")[-1]
    m = rp.load_events(runs["magic"] / "events.jsonl")
    assert rp.game_of(m) == "magic"
    mrows = rp.rows(m, "magic")
    assert [r.section for r in mrows][:2] == ["Setup", "Setup"] and "Clues, round 1" in {r.section for r in mrows}
    belief = next(r for r in mrows if r.kind == "belief")
    assert belief.private and "suspects Player 2" in belief.text
    sa = next(r for r in mrows if r.kind == "self_awareness")
    assert sa.private and sa.owner == "game"
    assert rp.truth(m, "magic")[0].startswith("Roles: Player 1: civilian")


def test_a_half_written_last_line_is_skipped(tmp_path):
    p = tmp_path / "events.jsonl"
    p.write_text('{"step": 0, "kind": "start", "content": "x", "visible_to": ["*"]}\n{"step": 1, "ki')
    assert [e["step"] for e in rp.load_events(p)] == [0]
    assert rp.load_events(tmp_path / "missing.jsonl") == []


def test_call_log_totals(runs):
    calls, tot = rp.load_calls(runs["wis"] / "llm_calls.jsonl")
    assert tot["calls"] == len(calls) > 0 and tot["input_tokens"] == sum(c["input_tokens"] for c in calls)


def _game(scores, agents):
    return {"players": [{"name": f"P{i}", "agent": a} for i, a in enumerate(agents)],
            "scores": {f"P{i}": s for i, s in enumerate(scores)}}


def test_rating_ranks_the_stronger_agent_first_and_skips_one_agent_tables():
    games = [_game([12, 0, 0, 0], ["strong", "weak", "weak", "weak"])] * 5 + [_game([3, 3, 3, 3], ["weak"] * 4)]
    r = rating.ratings(games)
    assert r["rated"] == 5 and r["skipped"] == 1
    assert [x["agent"] for x in r["rows"]] == ["strong", "weak"]
    strong, weak = r["rows"]
    assert strong["mu"] > 25 > weak["mu"] and strong["sigma"] < 25 / 3 and strong["games"] == 5
    # a seat group counts by its mean score: doubling the weak agent's seats changes nothing
    again = rating.ratings([_game([12, 0, 0, 0, 0, 0], ["strong"] + ["weak"] * 5)] * 5)
    assert abs(again["rows"][0]["mu"] - strong["mu"]) < 1e-9
