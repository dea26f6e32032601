"""PLAYER* sensors with fake models: every option, malformed replies, caching, events, resume.

The fake PLAYER* player (``star_rule``) lives in ``tests/fakes.py``, the toy agent (``star_agent``)
in ``tests/toy.py``.
"""

from __future__ import annotations

from dataclasses import asdict

import pytest

from mas_agents.actions import ActionRequest
from planners.player_star import SENSORS, UNKNOWN, PlayerStarConfig, SensorNotes, read_sensor
from tests.fakes import star_rule
from tests.toy import star_agent, state_of


# -- every option of every sensor ------------------------------------------------------------------
@pytest.mark.parametrize("sensor,value", [(s, v) for s, spec in SENSORS.items() for v in spec.choices])
def test_each_sensor_option_is_read_stored_and_emitted(sensor, value):
    agent, rec, chat = star_agent(star_rule({"Bob": {sensor: value}}))
    st = state_of(agent)
    r = read_sensor(agent, st, sensor, "Bob", "Vic", round=1)
    assert (r.sensor, r.character, r.victim, r.value, r.round, r.epoch) == (sensor, "Bob", "Vic", value, 1, 0)
    assert len(r.call_ids) == 1 and rec.totals()["calls"] == 1
    assert r.evidence.startswith("query: ") and "Bob" in r.evidence
    assert "reason: I weigh what I know about Bob." in r.evidence
    assert st.latest(sensor, "Bob", "Vic") is r
    [ev] = agent.drain_events()
    assert ev["kind"] == "sensor" and ev["phase"] == "planning" and ev["visible_to"] == ["Ann"]
    assert ev["data"] == asdict(r) and ev["llm_call_ids"] == r.call_ids and ev["round"] == 1
    assert ev["content"] == f"{sensor} of Bob (victim Vic): {value}"
    # the prompt lists exactly this sensor's options and asks for the Choice line
    prompt = str(chat.seen[0][-1].content)
    assert "\n".join(f"{i + 1}. {c}" for i, c in enumerate(SENSORS[sensor].choices)) in prompt
    assert prompt.rstrip().endswith('"Choice: ..." holding exactly one option from the list.')


@pytest.mark.parametrize("reply,expected", [
    ("Choice: 3", "Negative"),            # by number
    ("Choice: negative", "Negative"),     # case-insensitive
    ("**Choice:** Positive.", "Positive"),  # markdown and trailing punctuation
])
def test_emotion_option_forms(reply, expected):
    agent, _, _ = star_agent(lambda m: reply)
    assert read_sensor(agent, state_of(agent), "emotion", "Bob", "Vic", round=1).value == expected


def test_malformed_reply_is_reprompted_once_then_accepted():
    replies = iter(["I think Bob had a motive, yes.", "Choice: Yes"])
    agent, rec, chat = star_agent(lambda m: next(replies))
    r = read_sensor(agent, state_of(agent), "motivation", "Bob", "Vic", round=2)
    assert r.value == "Yes" and len(r.call_ids) == 2 and rec.totals()["calls"] == 2
    assert "could not read your reply" in str(chat.seen[1][-1].content)
    assert agent.stats["malformed_choose"] == 1 and agent.stats["recovered_after_reprompt"] == 1


@pytest.mark.parametrize("replies", [
    ["Yes, Bob had a motive.", "Yes."],           # prose naming an option is never scraped
    ["Choice: Maybe", "Choice: Perhaps"],          # not an option
    ["Choice: 7", ""],                             # number out of range, then empty
])
def test_two_malformed_replies_give_unknown(replies):
    it = iter(replies)
    agent, rec, _ = star_agent(lambda m: next(it))
    r = read_sensor(agent, state_of(agent), "motivation", "Bob", "Vic", round=1)
    assert r.value == UNKNOWN and len(r.call_ids) == 2 and rec.totals()["calls"] == 2
    assert "reason" not in r.evidence
    assert agent.stats["invalid_choose"] == 1
    [ev] = agent.drain_events()
    assert ev["data"]["value"] == UNKNOWN


def test_reading_is_cached_per_epoch():
    log = []
    agent, rec, _ = star_agent(star_rule({"Bob": {"motivation": "Yes"}}, log=log))
    st = state_of(agent)
    a = read_sensor(agent, st, "motivation", "Bob", "Vic", round=1)
    b = read_sensor(agent, st, "motivation", "Bob", "Vic", round=1)
    assert a is b and rec.totals()["calls"] == 1 and len(agent.drain_events()) == 1
    read_sensor(agent, st, "motivation", "Cid", "Vic", round=1)   # another pair: a new call
    assert rec.totals()["calls"] == 2
    st.completed = 1                                               # a round ended: read afresh
    c = read_sensor(agent, st, "motivation", "Bob", "Vic", round=1)
    assert c is not a and c.epoch == 1 and rec.totals()["calls"] == 3
    assert log == [("motivation", "Bob", "Vic"), ("motivation", "Cid", "Vic"), ("motivation", "Bob", "Vic")]


def test_unknown_does_not_hide_an_earlier_value():
    answers = iter(["Choice: Yes", "junk", "junk"])
    agent, _, _ = star_agent(lambda m: next(answers))
    st = state_of(agent)
    read_sensor(agent, st, "opportunity", "Bob", "Vic", round=1)
    st.completed = 1
    later = read_sensor(agent, st, "opportunity", "Bob", "Vic", round=2)
    assert later.value == UNKNOWN
    assert st.latest("opportunity", "Bob", "Vic").value == "Yes"
    assert st.profile("Bob", "Vic")["opportunity"] == "Yes"
    assert st.profile("Cid", "Vic") == {s: UNKNOWN for s in SENSORS}


def test_prompt_uses_the_agents_own_script_and_names_the_pair():
    ann, _, ann_chat = star_agent(star_rule())
    cid, _, cid_chat = star_agent(star_rule(), name="Cid", script="You are Cid, the priest. You prayed all evening.")
    read_sensor(ann, state_of(ann), "opportunity", "Bob", "Vic", round=1)
    read_sensor(cid, state_of(cid), "opportunity", "Bob", "Vic", round=1)
    ann_prompt, cid_prompt = str(ann_chat.seen[0][-1].content), str(cid_chat.seen[0][-1].content)
    assert "You saw Bob near the well" in ann_prompt and "prayed" not in ann_prompt
    assert "prayed all evening" in cid_prompt and "near the well" not in cid_prompt
    assert "of Bob in connection with the death of Vic" in ann_prompt and "murderer may have lied" in ann_prompt


def test_murderer_prompt_asks_to_judge_as_an_innocent():
    agent, _, chat = star_agent(star_rule(), role="murderer")
    read_sensor(agent, state_of(agent), "emotion", "Bob", "Vic", round=1)
    assert "judge as an innocent player would" in str(chat.seen[0][-1].content)


def test_motivation_prompt_carries_the_relationship_map():
    agent, _, chat = star_agent(star_rule())
    read_sensor(agent, state_of(agent), "motivation", "Bob", "Vic", round=1)
    assert 'Bob – Vic: money' in str(chat.seen[0][-1].content)


def test_config_validation():
    with pytest.raises(ValueError, match="unknown sensor"):
        PlayerStarConfig(sensor_list=("emotion", "astrology"))
    with pytest.raises(ValueError, match="max_suspects"):
        PlayerStarConfig(max_suspects=0)


def test_vote_context_lists_readings_of_read_characters():
    agent, _, _ = star_agent(star_rule({"Bob": {"motivation": "Yes"}}))
    st = state_of(agent)
    read_sensor(agent, st, "motivation", "Bob", "Vic", round=1)
    block = next(b for b in agent.blocks if isinstance(b, SensorNotes))
    req = ActionRequest(kind="vote", actor="Ann", prompt="Vote", choices=["Bob", "Cid", "Dee"],
                        context={"victim": "Vic"})
    c = block.contribute(agent, req)
    assert "Bob: your feeling towards them unknown; motive Yes; opportunity unknown" in c.context
    assert "Cid:" not in c.context and c.choices is None
    assert block.contribute(agent, ActionRequest(kind="ask", actor="Ann", prompt="q", choices=["Bob"])) is None


def test_resumed_agent_rebuilds_readings_and_suspects_from_its_events():
    agent, _, _ = star_agent(star_rule({"Bob": {"motivation": "Yes", "opportunity": "Yes"}}))
    end = [{"kind": "round_end", "actor": "game", "round": 1, "visible_to": ["*"], "content": "", "data": {},
            "phase": "questioning"}]
    events = end + agent.end_round(1, end)
    old = state_of(agent)
    assert [e["kind"] for e in events].count("sensor") == 12
    assert old.suspects["Vic"] == ["Bob"]
    fresh, rec, _ = star_agent(lambda m: (_ for _ in ()).throw(AssertionError("no model call expected")))
    fresh.observe(events)
    st = state_of(fresh)
    assert st.suspects == {"Vic": ["Bob"]} and st.completed == 1
    assert {k: r.value for k, r in st.readings.items()} == {k: r.value for k, r in old.readings.items()}
    assert rec.totals()["calls"] == 0


def test_sensors_on_one_pair_share_the_prompt_prefix():
    """Speed: readings on one (character, victim) pair differ only after the retrieved excerpts,
    so a prefix-caching backend evaluates just the short sensor question again."""
    agent, rec, chat = star_agent(star_rule({}))
    agent.observe([{"kind": "answer", "actor": "Cid", "visible_to": ["*"], "round": 1, "content": "I was asleep.",
                    "data": {"asker": "Bob", "question": "Where were you?"}}])
    st = state_of(agent)
    read_sensor(agent, st, "motivation", "Bob", "Vic", round=1)
    read_sensor(agent, st, "opportunity", "Bob", "Vic", round=1)
    first, second = (str(m[-1].content) for m in chat.seen[-2:])
    head = "Private assessment"
    assert first.index(head) == second.index(head) > 0
    assert first[: first.index(head)] == second[: second.index(head)]
    assert first != second
