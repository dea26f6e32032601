"""PLAYER* sensors with fake models: one ``form`` call per reading pass, every option, malformed
lines, re-reading only on new evidence, events, resume.

The fake PLAYER* player (``star_rule``) lives in ``tests/fakes.py``, the toy agent (``star_agent``)
in ``tests/toy.py`` (Ann judges Bob, Cid and Dee about the death of Vic).
"""

from __future__ import annotations

from dataclasses import asdict

import pytest

from mas_agents.planners.base import ActionRequest
from mas_agents.planners.player_star import SENSORS, UNKNOWN, PlayerStarConfig, SensorNotes, batch_request, read_batch
from tests.fakes import star_rule
from tests.toy import star_agent, state_of

PAIRS = [("Bob", "Vic"), ("Cid", "Vic"), ("Dee", "Vic")]
ALL = list(SENSORS)


def _answer(event_content: str, actor: str = "Cid") -> dict:
    return {"kind": "answer", "actor": actor, "visible_to": ["*"], "round": 1, "content": event_content,
            "data": {"asker": "Bob", "question": "Where were you?"}}


# -- one call reads everything ---------------------------------------------------------------------
def test_one_pass_reads_every_sensor_on_every_pair_in_one_call():
    table = {"Bob": {"emotion": "Negative", "motivation": "Yes", "opportunity": "Yes", "information": "High"},
             "Cid": {"motivation": "No", "opportunity": "Yes", "information": "Low"}}
    passes = []
    agent, rec, chat = star_agent(star_rule(table, passes=passes))
    st = state_of(agent)
    out = read_batch(agent, st, PAIRS, round=1)
    assert rec.totals()["calls"] == 1 and len(passes) == 1
    assert passes[0] == [(s, c, "Vic") for c, _ in PAIRS for s in ALL]
    assert {c: {s: r.value for s, r in rs.items()} for (c, _), rs in out.items()} == {
        "Bob": {"emotion": "Negative", "motivation": "Yes", "opportunity": "Yes", "information": "High"},
        "Cid": {"emotion": "Neutral", "motivation": "No", "opportunity": "Yes", "information": "Low"},
        "Dee": {"emotion": "Neutral", "motivation": "No", "opportunity": "No", "information": "Medium"}}
    events = agent.drain_events()
    assert [e["kind"] for e in events] == ["sensor"] * 12
    ids = {tuple(e["llm_call_ids"]) for e in events}
    assert len(ids) == 1 and len(next(iter(ids))) == 1          # the 12 readings share the one call
    bob_motive = out[("Bob", "Vic")]["motivation"]
    assert events[1]["data"] == asdict(bob_motive) and events[1]["content"] == "motivation of Bob (victim Vic): Yes"
    assert bob_motive.evidence.startswith("query: Bob, Cid and Dee and Vic: ")
    assert "reason: I weigh what I know about each of them." in bob_motive.evidence
    prompt = str(chat.seen[0][-1].content)
    assert "Private assessment (not said aloud) of Bob, Cid and Dee in connection with the death of Vic." in prompt
    assert "Bob motive: <one of: Yes, No>" in prompt and "Dee information: <one of: High, Medium, Low>" in prompt
    assert agent.stats["malformed_form"] == 0


@pytest.mark.parametrize("sensor,value", [(s, v) for s, spec in SENSORS.items() for v in spec.choices])
def test_each_sensor_option_is_read_and_stored(sensor, value):
    agent, _, _ = star_agent(star_rule({"Bob": {sensor: value}}))
    st = state_of(agent)
    r = read_batch(agent, st, [("Bob", "Vic")], round=2, sensors=[sensor])[("Bob", "Vic")][sensor]
    assert (r.sensor, r.character, r.victim, r.value, r.round, r.epoch) == (sensor, "Bob", "Vic", value, 2, 0)
    assert st.latest(sensor, "Bob", "Vic") is r


@pytest.mark.parametrize("line,expected", [
    ("Bob emotion: negative", "Negative"),          # case-insensitive
    ("**Bob emotion:** Positive.", "Positive"),     # markdown and trailing punctuation
    ("Bob emotion: 2", "Neutral"),                  # its number in the options
])
def test_emotion_line_forms(line, expected):
    agent, _, _ = star_agent(lambda m: line)
    out = read_batch(agent, state_of(agent), [("Bob", "Vic")], round=1, sensors=["emotion"])
    assert out[("Bob", "Vic")]["emotion"].value == expected


def test_a_missing_line_reprompts_the_form_once_then_accepts_it():
    replies = iter(["Bob motive: Yes", "Bob motive: Yes\nBob opportunity: No"])
    agent, rec, chat = star_agent(lambda m: next(replies))
    out = read_batch(agent, state_of(agent), [("Bob", "Vic")], round=1, sensors=["motivation", "opportunity"])
    assert {s: r.value for s, r in out[("Bob", "Vic")].items()} == {"motivation": "Yes", "opportunity": "No"}
    assert rec.totals()["calls"] == 2 and len(out[("Bob", "Vic")]["motivation"].call_ids) == 2
    assert "Bob opportunity" in str(chat.seen[1][-1].content)       # the re-prompt names the missing line
    assert agent.stats["malformed_form"] == 1 and agent.stats["recovered_after_reprompt"] == 1


def test_lines_unreadable_after_the_reprompt_are_unknown_and_the_rest_kept():
    agent, rec, _ = star_agent(star_rule({"Bob": {"motivation": "Yes"}, "Cid": {"opportunity": "Yes"}},
                                         garble=("Bob opportunity", "Cid emotion")))
    out = read_batch(agent, state_of(agent), PAIRS, round=1)
    assert rec.totals()["calls"] == 2
    values = {(c, s): r.value for (c, _), rs in out.items() for s, r in rs.items()}
    assert values[("Bob", "opportunity")] == UNKNOWN and values[("Cid", "emotion")] == UNKNOWN
    assert values[("Bob", "motivation")] == "Yes" and values[("Cid", "opportunity")] == "Yes"
    assert sum(v == UNKNOWN for v in values.values()) == 2
    assert agent.stats["invalid_form"] == 1 and agent.stats["unknown_form_fields"] == 2
    assert "reason" not in out[("Bob", "Vic")]["motivation"].evidence


@pytest.mark.parametrize("replies", [
    ["Bob had a motive, yes.", "Yes, I think so."],     # prose naming an option is never scraped
    ["Bob motive: Maybe", "Bob motive: Perhaps"],        # not an option
    ["Bob motive: 7", ""],                               # number out of range, then empty
])
def test_two_malformed_replies_give_unknown(replies):
    it = iter(replies)
    agent, rec, _ = star_agent(lambda m: next(it))
    out = read_batch(agent, state_of(agent), [("Bob", "Vic")], round=1, sensors=["motivation"])
    assert out[("Bob", "Vic")]["motivation"].value == UNKNOWN and rec.totals()["calls"] == 2
    [ev] = agent.drain_events()
    assert ev["data"]["value"] == UNKNOWN


def test_several_victims_get_their_own_lines():
    req = batch_request([("Bob", "Vic"), ("Bob", "Wil")], ["motivation"], actor="Ann")
    assert [t for t, _ in req.fields] == ["Bob motive (Vic)", "Bob motive (Wil)"]
    assert "death of Vic and Wil" in req.prompt and req.context["private"] is True
    with pytest.raises(ValueError, match="at least one pair"):
        batch_request([], ["motivation"])


# -- what is re-read ---------------------------------------------------------------------------------
def test_only_pairs_with_new_dialogue_are_read_again():
    passes = []
    agent, rec, _ = star_agent(star_rule({}, passes=passes))
    st = state_of(agent)
    read_batch(agent, st, PAIRS, round=1)
    assert not any(st.has_news(c, v) for c, v in PAIRS)
    agent.observe([_answer("I was asleep; Dee saw me.", actor="Cid")])   # news of Cid and Dee, not Bob
    assert [p for p in PAIRS if st.has_news(*p)] == [("Cid", "Vic"), ("Dee", "Vic")]
    pruner = next(b for b in agent.blocks if type(b).__name__ == "Pruner")
    pruner.on_round_end(agent, 1)
    assert rec.totals()["calls"] == 2 and {c for _, c, _ in passes[1]} == {"Cid", "Dee"}
    pruner.on_round_end(agent, 2)                                        # nothing new: no call
    assert rec.totals()["calls"] == 2


def test_unknown_does_not_hide_an_earlier_value():
    answers = iter(["Bob opportunity: Yes", "junk", "junk"])
    agent, _, _ = star_agent(lambda m: next(answers))
    st = state_of(agent)
    read_batch(agent, st, [("Bob", "Vic")], round=1, sensors=["opportunity"])
    st.completed = 1
    later = read_batch(agent, st, [("Bob", "Vic")], round=2, sensors=["opportunity"])[("Bob", "Vic")]["opportunity"]
    assert later.value == UNKNOWN
    assert st.latest("opportunity", "Bob", "Vic").value == "Yes"
    assert st.profile("Bob", "Vic")["opportunity"] == "Yes"
    assert st.profile("Cid", "Vic") == {s: UNKNOWN for s in SENSORS}


# -- prompts ------------------------------------------------------------------------------------------
def test_prompt_uses_the_agents_own_script():
    ann, _, ann_chat = star_agent(star_rule())
    cid, _, cid_chat = star_agent(star_rule(), name="Cid", script="You are Cid, the priest. You prayed all evening.")
    read_batch(ann, state_of(ann), [("Bob", "Vic")], round=1)
    read_batch(cid, state_of(cid), [("Bob", "Vic")], round=1)
    ann_prompt, cid_prompt = str(ann_chat.seen[0][-1].content), str(cid_chat.seen[0][-1].content)
    assert "You saw Bob near the well" in ann_prompt and "prayed" not in ann_prompt
    assert "prayed all evening" in cid_prompt and "near the well" not in cid_prompt
    assert "murderer may have lied" in ann_prompt


def test_murderer_prompt_asks_to_judge_as_an_innocent():
    agent, _, chat = star_agent(star_rule(), role="murderer")
    read_batch(agent, state_of(agent), [("Bob", "Vic")], round=1)
    assert "judge as an innocent player would" in str(chat.seen[0][-1].content)


def test_prompt_carries_the_relationship_map():
    agent, _, chat = star_agent(star_rule())
    read_batch(agent, state_of(agent), [("Bob", "Vic")], round=1)
    assert "- Bob: Bob – Vic: money" in str(chat.seen[0][-1].content)


def test_config_validation():
    with pytest.raises(ValueError, match="unknown sensor"):
        PlayerStarConfig(sensor_list=("emotion", "astrology"))
    with pytest.raises(ValueError, match="max_suspects"):
        PlayerStarConfig(max_suspects=0)


# -- votes and resume ------------------------------------------------------------------------------------
def test_vote_context_lists_readings_of_read_characters():
    agent, _, _ = star_agent(star_rule({"Bob": {"motivation": "Yes"}}))
    st = state_of(agent)
    read_batch(agent, st, [("Bob", "Vic")], round=1, sensors=["motivation"])
    block = next(b for b in agent.blocks if isinstance(b, SensorNotes))
    req = ActionRequest(kind="vote", actor="Ann", prompt="Vote", choices=["Bob", "Cid", "Dee"],
                        context={"victim": "Vic"})
    c = block.contribute(agent, req)
    assert "Bob: your feeling towards them unknown; motive Yes; opportunity unknown" in c.context
    assert "Cid:" not in c.context and c.choices is None
    assert block.contribute(agent, ActionRequest(kind="ask", actor="Ann", prompt="q", choices=["Bob"])) is None


def test_resumed_agent_rebuilds_readings_suspects_and_freshness_from_its_events():
    agent, rec0, _ = star_agent(star_rule({"Bob": {"motivation": "Yes", "opportunity": "Yes"}}))
    end = [{"kind": "round_end", "actor": "game", "round": 1, "visible_to": ["*"], "content": "", "data": {},
            "phase": "questioning"}]
    events = end + agent.end_round(1, end)
    old = state_of(agent)
    assert [e["kind"] for e in events].count("sensor") == 12 and rec0.totals()["calls"] == 1
    assert old.suspects["Vic"] == ["Bob"]
    fresh, rec, _ = star_agent(lambda m: (_ for _ in ()).throw(AssertionError("no model call expected")))
    fresh.observe(events)
    st = state_of(fresh)
    assert st.suspects == {"Vic": ["Bob"]} and st.completed == 1
    assert {k: r.value for k, r in st.readings.items()} == {k: r.value for k, r in old.readings.items()}
    assert not any(st.has_news(c, v) for c, v in PAIRS)     # read since the last news: not read again
    assert rec.totals()["calls"] == 0
