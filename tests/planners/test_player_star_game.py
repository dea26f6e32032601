"""A whole murder-mystery game with PLAYER* agents on fake models (no real LLM)."""

from __future__ import annotations

import json

from mas_agents.graphs.mmg.session import run_game
from mas_agents.agents import Agent
from mas_agents.memory import VectorMemory
from mas_agents.planners.player_star import find_state, player_star_blocks
from tests.fakes import polite_player, star_rule
from tests.toy import TOY_MURDERER, TOY_PLAYERS as PLAYERS, toy_runtime

#: The toy game's scripts, with a debt and a family tie for the relationship map.
SCRIPTS = {
    "Ann": "You are Ann, the baker. You saw Bob near the well at nine. Bob owed Vic money.",
    "Cid": "You are Cid, the priest. You were praying all evening. Dee is your sister.",
}
#: What every PLAYER* agent's sensors read: Bob has motive and opportunity, the others neither.
TABLE = {"Bob": {"emotion": "Negative", "motivation": "Yes", "opportunity": "Yes", "information": "High"}}
#: Each PLAYER* agent would vote for an innocent if its choices were not restricted.
WOULD_VOTE = {"Ann": "Cid", "Cid": "Dee", "Dee": "Ann"}
STAR = ["Ann", "Cid", "Dee"]


def make_runtime(tmp_path, rounds=2):
    """The toy game: Bob (the murderer) plays the fixed plain agent (PLAYER* §4.1), the others PLAYER*."""
    rules = {p: star_rule(TABLE, vote_for=WOULD_VOTE[p]) for p in STAR}
    rules[TOY_MURDERER] = polite_player(vote_for="Ann")

    def build(persona, model, emb, settings):
        if persona.role == "murderer":
            return None
        mem = VectorMemory(emb)
        mem.add_script(persona.script)
        return Agent(persona, model, mem, player_star_blocks(), settings, spec="player_star")

    return toy_runtime(tmp_path, rules, rounds=rounds, build=build, scripts=SCRIPTS)


def test_player_star_game_logs_planning_and_restricts_votes(tmp_path):
    rt, rec, out = make_runtime(tmp_path)
    res = run_game(rt, out, rec, {"model": "fake", "seed": 0})
    events = [json.loads(l) for l in (out / "events.jsonl").read_text().splitlines()]
    transcript = (out / "transcript.md").read_text()

    for p in STAR:
        mine = [e for e in events if e["actor"] == p and e["phase"] == "planning"]
        kinds = {e["kind"] for e in mine}
        assert {"sensor", "target_choice", "suspect_list", "relations"} <= kinds
        assert all(e["visible_to"] == [p] for e in mine)
        # every question is preceded by a target choice naming the same target
        asks = [i for i, e in enumerate(events) if e["kind"] == "ask" and e["actor"] == p]
        assert len(asks) == 2
        for i in asks:
            tc = max((j for j, e in enumerate(events[:i]) if e["actor"] == p and e["kind"] == "target_choice"))
            assert events[tc]["data"]["target"] == events[i]["data"]["target"]
        # the pruner cut the list to Bob after round 1, once, and never again
        changes = [e for e in mine if e["kind"] == "suspect_list"]
        assert len(changes) == 1 and changes[0]["round"] == 1
        others = [c for c in PLAYERS if c != p]
        assert changes[0]["data"]["old"] == others and changes[0]["data"]["new"] == ["Bob"]
        assert find_state(rt.agents[p]).suspects == {"Vic": ["Bob"]}
        # round 2's question goes to Bob, the only suspect
        assert events[asks[1]]["data"]["target"] == "Bob"
        # sensor events carry the reading and its call ids, which exist in llm_calls.jsonl
        s = [e for e in mine if e["kind"] == "sensor"][0]
        assert set(s["data"]) >= {"sensor", "character", "victim", "value", "round", "evidence", "call_ids"}
        assert s["llm_call_ids"] == s["data"]["call_ids"] and len(s["llm_call_ids"]) == 1

    # votes: restricted to the suspect list, so Bob, although each would vote for an innocent
    votes = {e["actor"]: e["data"]["choice"] for e in events if e["kind"] == "vote"}
    assert votes == {"Ann": "Bob", "Cid": "Bob", "Dee": "Bob", "Bob": "Ann"}
    v = res["outcome"]["victims"][0]
    assert v["accused"] == "Bob" and v["correct"] and res["invalid_actions"] == 0

    # the planning events reach the transcript
    assert "*Ann (private sensor): motivation of Bob (victim Vic): Yes*" in transcript
    assert "*Ann (private target_choice): questions " in transcript
    assert "*Ann (private suspect_list): suspects for Vic: Bob, Cid, Dee -> Bob" in transcript
    assert "*Cid (private relations): relationship map after round 1" in transcript

    # the murderer (plain) has no PLAYER* state and emits no planning events
    assert find_state(rt.agents["Bob"]) is None
    assert not [e for e in events if e["actor"] == "Bob" and e["phase"] == "planning"]


def test_sensor_calls_per_ask_and_round_end(tmp_path):
    """Model calls of a PLAYER* agent in a 4-player, 1-victim game (no malformed replies)."""
    rt, rec, out = make_runtime(tmp_path)
    run_game(rt, out, rec, {})
    events = [json.loads(l) for l in (out / "events.jsonl").read_text().splitlines()]
    calls = [json.loads(l) for l in (out / "llm_calls.jsonl").read_text().splitlines()]
    for p in STAR:
        sensors = [e for e in events if e["actor"] == p and e["kind"] == "sensor"]
        by_epoch = {}
        for e in sensors:
            by_epoch[e["data"]["epoch"]] = by_epoch.get(e["data"]["epoch"], 0) + 1
        # round-1 ask: no reading (the pruner reads after each round); end of round 1: one pass,
        # 4 sensors x 3 suspects; round-2 ask and the vote: nothing
        assert 0 not in by_epoch and by_epoch[1] == 12
        # end of round 2: Bob's 4 sensors + 4 per outsider heard from or about in round 2: in
        # round 2 only Bob (x3) and Ann (asked by Bob) answered, so Cid and Dee re-check Ann
        assert by_epoch[2] == {"Ann": 4, "Cid": 8, "Dee": 8}[p]
        mine = [c for c in calls if c["actor"] == p]
        passes = [c for c in mine if c["purpose"].startswith("sensors#")]
        assert len(passes) == 2                                   # one call per round end
        assert {tuple(e["llm_call_ids"]) for e in sensors} == {(c["call_id"],) for c in passes}
        # the vote costs a call unless the suspect list is down to one: then it is a forced move
        final = [e["data"]["new"] for e in events if e["actor"] == p and e["kind"] == "suspect_list"][-1]
        vote = next(e for e in events if e["actor"] == p and e["kind"] == "vote")
        if len(final) == 1:
            assert vote["data"]["choice"] == final[0] and vote["llm_call_ids"] == []
        answers = sum(1 for e in events if e["kind"] == "answer" and e["actor"] == p)
        assert len(mine) - len(passes) == 1 + 2 + (len(final) > 1) + answers
    assert sorted(len([e for e in events if e["actor"] == p and e["kind"] == "suspect_list"][-1]["data"]["new"])
                  for p in STAR) == [1, 1, 1]   # all forced here (a vote with two suspects: test_player_star_pruner)
    # Ann: in round 2 only Bob (x3, questioned by everyone) and Ann (by Bob) answered, so no outsider
    # of Ann's was heard from: Bob's 4 readings at the end of round 2
    ann = [e for e in events if e["actor"] == "Ann" and e["kind"] == "sensor" and e["data"]["epoch"] == 2]
    assert len(ann) == 4 and {e["data"]["character"] for e in ann} == {"Bob"}
