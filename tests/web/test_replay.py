"""Replays from events.jsonl alone (mas_agents/web/replay_rows.py): grouping by round and phase, the
"seen by" rule, the players panel, the sentences in the game's language, the routes' answers to bad
input, and the openskill rating."""

import re

import pytest

from mas_agents.graphs.wis import rating
from mas_agents.web import replay_rows as rp
from mas_agents.web import views
from mas_agents.web import panel as web_panel
from tests.web.replay_runs import build_extra


@pytest.fixture(scope="module")
def extra(tmp_path_factory, real_data_root):
    """A Chinese Who-is-Spy game and a one-round MAgIC Chameleon game (tests/web/replay_runs.py)."""
    return build_extra(tmp_path_factory.mktemp("replay") / "runs", real_data_root)


def _load(d):
    import json
    ev = rp.load_events(d / "events.jsonl")
    cfg = json.loads((d / "config.json").read_text())
    return ev, cfg


def test_murder_mystery_grouped_by_round_then_phase_with_reading_tables(runs):
    events = rp.load_events(runs["mmg"] / "events.jsonl")
    game = views.game_of(events)
    assert game == "mmg"
    rows = rp.rows(events, game)
    groups = list(dict.fromkeys((r.group, r.group_title) for r in rows))
    assert groups == [("setup", "Setup"), ("intro", "Introductions"), ("r1", "Round 1"), ("r2", "Round 2"),
                      ("vote", "The vote (private ballots)"), ("end", "The verdict")]
    r1 = [r for r in rows if r.group == "r1"]
    assert list(dict.fromkeys(r.phase_title for r in r1)) == ["Questions and answers",
                                                            "After the round: what each player concluded"]
    # the plan for round 1's first question (round 1, written before it) opens round 1
    first = next(r for r in rows if r.kind == "target_choice")
    assert first.group == "r1" and first.text == "Ann decides to question Bob about Vic (score 0.75)."
    # PLAYER*'s readings after round 1: one table per reader (3 PLAYER* seats), 12 readings each
    sensors = [r for r in r1 if r.kind == "sensor"]
    assert [r.actor for r in sensors] == ["Ann", "Cid", "Dee"]
    ann = sensors[0]
    assert ann.private and ann.owner == "Ann" and len(ann.steps) == 12 and ann.steps == list(range(21, 33))
    assert ann.table.caption == "Ann's sensor readings, round 1 (victim Vic)"
    assert ann.table.headers == ["Character", "emotion", "motivation", "opportunity", "information"]
    assert ann.table.rows[0] == ["Bob", "Negative", "Yes", "Yes", "High"]
    # every event keeps its step: the rows together cover every event once
    assert sorted(s for r in rows for s in r.steps) == [e["step"] for e in events]
    ask = next(r for r in rows if r.kind == "ask")
    assert not ask.private and ask.text == "Ann asks Bob: «Where were you that night?»" and ask.calls
    accuse = next(r for r in rows if r.kind == "accuse")
    assert accuse.text == "For the murder of Vic, the vote accuses Bob (Bob 3, Ann 1). The murderer was Bob: correct."
    truth = rp.truth(events, game)
    assert truth[0].startswith("Victim Vic: murderer Bob") and "Bob: murderer (plain)" in truth[1]


def test_rows_fetched_later_continue_the_groups(runs):
    events = rp.load_events(runs["mmg"] / "events.jsonl")
    whole = rp.rows(events, "mmg")
    tail = rp.rows(events, "mmg", start=33)
    after = [r for r in whole if r.step >= 33]
    assert [r.step for r in tail] == [r.step for r in after]
    assert [(r.group, r.phase) for r in tail] == [(r.group, r.phase) for r in after]
    assert rp.heading_before(events, "mmg", 33) == ("r1", "r1/_after")
    assert rp.heading_before(events, "mmg", 0) == ("", "")


def test_seen_by_is_what_the_game_let_the_seat_observe(runs):
    events = rp.load_events(runs["wis"] / "events.jsonl")
    by_kind = lambda k: [e for e in events if e["kind"] == k]   # noqa: E731
    words = {e["data"]["player"]: e for e in by_kind("word")}
    assert rp.seen_by(words["Player 1"], "Player 1") and not rp.seen_by(words["Player 3"], "Player 1")
    assert all(rp.seen_by(e, "Player 1") for e in by_kind("describe") + by_kind("vote_result"))
    votes = {e["actor"]: e for e in by_kind("vote")}
    assert rp.seen_by(votes["Player 1"], "Player 1") and not rp.seen_by(votes["Player 2"], "Player 1")
    # the harness's own records (MAgIC's ground truth, self-awareness answers) are seen by no seat
    m = rp.load_events(runs["magic"] / "events.jsonl")
    sa = next(e for e in m if e["kind"] == "self_awareness")
    assert sa["actor"] == "Player 1" and not rp.seen_by(sa, "Player 1")
    assert not rp.seen_by(m[0], "Player 1") and m[0]["kind"] == "setup"


def test_who_is_spy_sentences_players_panel_and_truth(runs):
    events, cfg = _load(runs["wis"])
    assert views.game_of(events) == "wis" and views.lang_of(events, "wis", cfg) == "en"
    rows = rp.rows(events, "wis")
    assert list(dict.fromkeys(r.group for r in rows)) == ["setup", "r1", "end"]
    assert list(dict.fromkeys(r.phase_title for r in rows if r.group == "r1")) == ["Descriptions", "The vote"]
    text = {r.kind: r.text for r in rows}
    assert text["word"] == "Player 4 gets the word “Kettle”."
    assert text["round_start"] == "Round 1 begins. Speaking order: Player 1, Player 2, Player 3, Player 4."
    assert text["vote_result"] == ("Player 3 is voted out (votes received: Player 3 3, Player 1 1). Votes: "
                                   "Player 1 → Player 3, Player 2 → Player 3, Player 3 → Player 1, Player 4 → Player 3.")
    assert text["outcome"] == ("Game over after round 1: the civilians win (the spy was voted out). "
                               "The spy was Player 3.")
    assert next(r.text for r in rows if r.kind == "vote") == "Player 1 votes for Player 3."
    assert next(r.text for r in rows if r.kind == "reasoning") == "Player 2 thinks before voting: «I compare the hints.»"
    for r in rows:   # no raw key, no Python dict
        assert "_" not in r.text and "{'" not in r.text, r.text
    hidden = web_panel.players_panel(events[:10], "wis", cfg, None, reveal=False)
    assert [(s.seat, s.name, s.agent, s.role, s.hidden) for s in hidden][:2] == [
        (1, "Player 1", "plain", "", True), (2, "Player 2", "plain+reasoning", "", True)]
    shown = web_panel.players_panel(events, "wis", cfg, None, reveal=True)
    assert [s.role for s in shown] == ["civilian", "civilian", "spy", "civilian"] and shown[0].model == "RuleChat"
    assert rp.truth(events, "wis")[0] == "The spy was Player 3; the civilians win (the spy was voted out)."
    assert "Words: Player 1: Kettle" in rp.truth(events, "wis")[-1]


def test_chinese_replay_is_chinese_throughout(extra):
    events, cfg = _load(extra["zh"])
    lang = views.lang_of(events, "wis", cfg)
    assert lang == "zh"
    rows = rp.rows(events, "wis", lang=lang)
    titles = {r.group_title for r in rows} | {r.phase_title for r in rows if r.phase_title}
    assert {"准备", "第1轮", "描述", "裁判", "投票", "游戏结束"} <= titles
    for t in titles:
        assert not re.search(r"[A-Za-z]", t), t
    foul = next(r for r in rows if r.kind == "foul")
    assert foul.text == "Player 4 犯规（重复了之前的描述），被裁判淘汰。"   # not 犯规（repeat）
    assert next(r.text for r in rows if r.kind == "word") == "Player 1 拿到的词语是“苹果”。"
    vr = next(r.text for r in rows if r.kind == "vote_result")
    assert vr.startswith("Player 2 被投票出局（得票：Player 2 2票") and "Votes" not in vr
    for r in rows:
        assert not re.search(r"[A-Za-z]{3,}", r.text.replace("Player", "")), r.text
    assert rp.truth(events, "wis", lang)[0] == "卧底是 Player 2；平民获胜（卧底被投票出局）。"


def test_one_round_chameleon_has_four_headings_and_sentences(extra):
    events, cfg = _load(extra["cham"])
    scen = views.scenario_of(events, cfg)
    assert scen == "chameleon" and views.hidden_roles("magic", events, cfg)
    rows = rp.rows(events, "magic", scenario=scen)
    assert list(dict.fromkeys(r.group_title for r in rows)) == ["Setup", "Round 1", "The vote", "Outcome"]
    assert not any(r.phase_title for r in rows)       # one phase per group: no phase headings at all
    # the pgm seat's belief tables (round 0, written in the middle of round 1) stay in round 1
    bt = [r for r in rows if r.kind == "belief_table"]
    assert {r.group for r in bt[:-1]} == {"r1"} and bt[-1].group == "vote"
    last = bt[-1]
    assert last.text.startswith("Player 3's Bayesian-network belief about who holds the hidden role (2 observations)")
    assert last.table.headers == ["Player", "P(holds the hidden role)", "Suspected by (as predicted)"]
    assert [row[0] for row in last.table.rows] == ["Player 3", "Player 1", "Player 2"]
    reading = next(r for r in rows if r.kind == "pgm_reading")
    assert reading.table.rows == [["Player 1", "a clue from Player 1 in round 1", "fits"],
                                  ["Player 2", "a clue from Player 2 in round 1", "fits"]]
    belief = next(r for r in rows if r.kind == "belief")
    assert belief.table.rows == [["Player 1 (its own answer)", "Player 2"], ["Player 2", "Player 2"],
                                 ["Player 3", "Player 2"]]
    outcome = next(r for r in rows if r.kind == "outcome")
    assert outcome.text == "The vote accused Player 1, who is not the chameleon: the chameleon wins."
    assert rp.truth(events, "magic", scenario=scen)[-1] == outcome.text
    panel = web_panel.players_panel(events, "magic", cfg, None, reveal=False)
    assert [(s.agent, s.role, s.hidden) for s in panel] == [("plain", "", True), ("plain", "", True),
                                                           ("plain+pgm", "", True)]
    assert [s.role for s in web_panel.players_panel(events, "magic", cfg, None, reveal=True)] == [
        "not the chameleon", "not the chameleon", "the chameleon"]


def test_murder_mystery_panel_hides_the_murderers_agent_until_the_end(runs):
    import json
    events = rp.load_events(runs["mmg"] / "events.jsonl")
    cfg = json.loads((runs["mmg"] / "config.json").read_text())
    res = json.loads((runs["mmg"] / "result.json").read_text())
    live = web_panel.players_panel(events[:20], "mmg", cfg, None, reveal=False)
    assert {s.agent for s in live} == {"player_star (the murderer: plain)"} and not any(s.role for s in live)
    done = web_panel.players_panel(events, "mmg", cfg, res, reveal=True)
    assert [(s.name, s.agent, s.role) for s in done][:2] == [("Ann", "player_star", "civilian"),
                                                            ("Bob", "plain", "murderer")]


def test_replay_page_seen_by_anchors_and_bad_input(client):
    html = client.get("/replay/spy-kettle?seen_by=Player%201").text
    # Player 3's word is private to Player 3: marked unseen; Player 1's own word and the public events seen
    assert re.search(r'id="ev-3" class="ev k-word private unseen"', html)
    assert re.search(r'id="ev-1" class="ev k-word private seen"', html)
    assert re.search(r'id="ev-6" class="ev k-describe seen"', html)
    assert 'id="r1"' in html and 'href="#r1"' in html and 'href="#ev-6"' in html
    assert '<option value="Player 1" selected>' in html and 'id="players-table"' in html
    for bad in ("/replay/spy-kettle?seen_by=Nobody", "/replay/spy-kettle?private=abc"):
        r = client.get(bad)
        assert r.status_code == 400 and 'class="error' in r.text or "Bad address" in r.text, bad
    assert "its seats are Player 1, Player 2, Player 3, Player 4" in client.get("/replay/spy-kettle?seen_by=9").text
    r = client.get("/wis-replay/spy-kettle", follow_redirects=False)
    assert r.status_code == 301 and r.headers["location"] == "/replay/spy-kettle"
    assert client.get("/wis-replay/escape").status_code == 403


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
