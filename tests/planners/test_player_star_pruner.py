"""PLAYER* pruner: the rule, and the block shrinking / growing / shifting the suspect list."""

from __future__ import annotations

import pytest

from mas_agents.planners.base import ActionRequest
from mas_agents.planners.player_star import PlayerStarConfig, Pruner, decide_suspects, judge
from tests.fakes import star_rule
from tests.toy import star_agent, state_of

ORDER = ["Ann", "Bob", "Cid", "Dee"]
YY = {"motivation": "Yes", "opportunity": "Yes"}
NN = {"motivation": "No", "opportunity": "No"}


class Log:
    """The event list of a toy game driven by hand (Agent.observe takes the whole list)."""

    def __init__(self, agent):
        self.agent, self.events = agent, []

    def answer(self, actor, content, asker="Ann", round=1):
        self.events.append({"kind": "answer", "actor": actor, "round": round, "visible_to": ["*"], "content": content,
                            "phase": "questioning", "data": {"asker": asker, "question": "Where were you?"}})

    def end(self, round):
        self.events.append({"kind": "round_end", "actor": "game", "round": round, "visible_to": ["*"], "content": "",
                            "phase": "questioning", "data": {}})
        out = self.agent.end_round(round, self.events)
        self.events += out
        return out


def lists(events):
    return [e for e in events if e["kind"] == "suspect_list"]


# -- the rule --------------------------------------------------------------------------------------
@pytest.mark.parametrize("profile,was,keep", [
    ({**YY, "information": "Low"}, True, True),          # both facts: kept whatever the information value
    ({**YY, "information": "Low"}, False, True),
    ({"motivation": "Yes", "opportunity": "No", "information": "High"}, True, True),
    ({"motivation": "No", "opportunity": "Yes", "information": "Medium"}, False, True),
    ({"motivation": "Yes", "opportunity": "No", "information": "Low"}, True, False),
    ({"motivation": "unknown", "opportunity": "Yes", "information": "unknown"}, True, True),
    ({**NN, "information": "High"}, True, False),
    ({"motivation": "No", "opportunity": "unknown"}, True, True),    # unclear: unchanged
    ({"motivation": "No", "opportunity": "unknown"}, False, False),
    ({}, True, True),
    ({}, False, False),
])
def test_judge_table(profile, was, keep):
    assert judge(profile, was)[0] is keep


def test_decide_shrink_grow_shift_and_reasons():
    shrink = decide_suspects(["Bob", "Cid", "Dee"], {"Bob": YY, "Cid": NN, "Dee": NN}, ORDER, me="Ann")
    assert shrink.new == ["Bob"] and shrink.removed == ["Cid", "Dee"] and shrink.added == [] and shrink.changed
    assert shrink.reason() == "removed Cid (no motive, no opportunity); removed Dee (no motive, no opportunity)"
    grow = decide_suspects(["Bob"], {"Bob": YY, "Dee": {"motivation": "Yes"}}, ORDER, me="Ann")
    assert grow.new == ["Bob", "Dee"] and grow.added == ["Dee"] and grow.reason() == "added Dee (motive)"
    shift = decide_suspects(["Bob"], {"Bob": NN, "Cid": {"opportunity": "Yes"}}, ORDER, me="Ann")
    assert shift.new == ["Cid"] and shift.removed == ["Bob"] and shift.added == ["Cid"]
    same = decide_suspects(["Bob", "Cid"], {"Bob": YY, "Cid": {"opportunity": "Yes"}}, ORDER, me="Ann")
    assert not same.changed and same.reason() == "unchanged"


def test_decide_never_empty_keeps_the_top_scorers():
    d = decide_suspects(["Bob", "Cid", "Dee"],
                        {"Bob": {**NN, "emotion": "Negative"}, "Cid": {**NN, "emotion": "Negative"},
                         "Dee": {**NN, "emotion": "Positive"}}, ORDER, me="Ann")
    assert d.new == ["Bob", "Cid"] and d.fallback and "most suspicious were kept" in d.reason()
    lone = decide_suspects(["Dee"], {"Dee": NN}, ORDER, me="Ann")
    assert lone.new == ["Dee"] and lone.fallback and not lone.changed


def test_decide_never_self_and_cap():
    d = decide_suspects(["Ann", "Bob", "Cid", "Dee"], {"Ann": YY, "Bob": YY, "Cid": YY, "Dee": {"motivation": "Yes"}},
                        ORDER, me="Ann", max_suspects=2)
    assert "Ann" not in d.new and d.new == ["Bob", "Cid"] and d.capped == ["Dee"]
    assert "removed Dee (over the max_suspects cap)" in d.reason()
    only_me = decide_suspects(["Bob"], {"Ann": YY}, ORDER, me="Ann")
    assert only_me.new == ["Bob"]
    nobody = decide_suspects(["Ann"], {"Ann": YY}, ORDER, me="Ann")     # degenerate: no other character
    assert nobody.new == [] and not nobody.fallback


# -- the block -------------------------------------------------------------------------------------
def test_round_end_shrinks_with_one_event_and_one_call():
    log_calls = []
    agent, rec, _ = star_agent(star_rule({"Bob": {**YY, "information": "High"}}, log=log_calls))
    game = Log(agent)
    out = game.end(1)
    assert rec.totals()["calls"] == 1                        # one pass: 4 sensors x 3 suspects, 1 victim
    assert sorted(log_calls) == sorted((s, c, "Vic") for c in ("Bob", "Cid", "Dee")
                                       for s in ("emotion", "motivation", "opportunity", "information"))
    [ev] = lists(out)
    assert ev["data"]["old"] == ["Bob", "Cid", "Dee"] and ev["data"]["new"] == ["Bob"]
    assert ev["data"]["removed"] == ["Cid", "Dee"] and ev["data"]["added"] == [] and ev["round"] == 1
    assert ev["data"]["reason"].startswith("removed Cid (no motive, no opportunity)")
    assert ev["visible_to"] == ["Ann"] and ev["phase"] == "planning"
    assert state_of(agent).suspects == {"Vic": ["Bob"]}
    # a second pass with the same readings changes nothing and says nothing
    out2 = game.end(2)
    assert lists(out2) == []
    # nobody was heard from or about since: nothing is read again
    assert rec.totals()["calls"] == 1


def test_grow_then_shift_when_new_information_overturns_judgement():
    table = {"Bob": {**YY}}
    agent, rec, _ = star_agent(star_rule(lambda: table))
    game = Log(agent)
    game.end(1)
    assert state_of(agent).suspects["Vic"] == ["Bob"]
    # round 2: Dee speaks (news) and now looks guilty; Cid is silent
    table["Dee"] = {"opportunity": "Yes", "information": "High"}
    game.answer("Dee", "I was in the cellar when Vic screamed.", round=2)
    calls = rec.totals()["calls"]
    out = game.end(2)
    # one pass, on Dee only: Bob and Cid were not heard from or about since their readings
    assert rec.totals()["calls"] - calls == 1
    assert {(e["data"]["character"], e["round"]) for e in out if e["kind"] == "sensor"} == {("Dee", 2)}
    [grow] = lists(out)
    assert grow["data"]["old"] == ["Bob"] and grow["data"]["new"] == ["Bob", "Dee"]
    assert grow["data"]["added"] == ["Dee"] and "added Dee (opportunity)" in grow["data"]["reason"]
    # round 3: Bob is cleared and Cid, mentioned in an answer, turns out to have a motive
    table["Bob"] = dict(NN)
    table["Cid"] = {"motivation": "Yes", "information": "Medium"}
    game.answer("Bob", "Cid argued with Vic that night.", asker="Ann", round=3)
    out = game.end(3)
    [shift] = lists(out)
    assert shift["data"]["old"] == ["Bob", "Dee"] and shift["data"]["new"] == ["Cid", "Dee"]
    assert shift["data"]["removed"] == ["Bob"] and shift["data"]["added"] == ["Cid"]
    assert "removed Bob (no motive, no opportunity)" in shift["data"]["reason"]
    # one event per change, and the list is never empty and never holds Ann
    all_lists = lists(game.events)
    assert len(all_lists) == 3
    assert all(e["data"]["new"] and "Ann" not in e["data"]["new"] for e in all_lists)


def test_outsider_recheck_that_stays_no_adds_nothing_and_costs_one_call():
    agent, rec, _ = star_agent(star_rule({"Bob": YY}))
    game = Log(agent)
    game.end(1)
    game.answer("Cid", "I was praying.", round=2)
    calls = rec.totals()["calls"]
    out = game.end(2)
    assert lists(out) == []
    assert rec.totals()["calls"] - calls == 1
    assert {e["data"]["character"] for e in out if e["kind"] == "sensor"} == {"Cid"}


def test_never_empty_falls_back_to_top_scorers():
    table = {"Bob": {"emotion": "Negative"}, "Cid": {"emotion": "Positive"}, "Dee": {"emotion": "Neutral"}}
    agent, _, _ = star_agent(star_rule(table))            # everyone: no motive, no opportunity
    out = Log(agent).end(1)
    [ev] = lists(out)
    assert ev["data"]["new"] == ["Bob"] and ev["data"]["fallback"] is True


def test_self_is_never_a_suspect_even_if_the_model_says_yes():
    everyone = {c: {**YY, "information": "High"} for c in ORDER}
    agent, _, _ = star_agent(star_rule(everyone))
    out = Log(agent).end(1)
    assert lists(out) == []                                 # every other character stays: no change
    st = state_of(agent)
    assert st.suspects["Vic"] == ["Bob", "Cid", "Dee"]
    assert not any(e["data"]["character"] == "Ann" for e in out if e["kind"] == "sensor")


def test_max_suspects_caps_the_list():
    table = {"Bob": {**YY, "emotion": "Negative"}, "Cid": {**YY}, "Dee": {"motivation": "Yes"}}
    agent, _, _ = star_agent(star_rule(table), config=PlayerStarConfig(max_suspects=1))
    [ev] = lists(Log(agent).end(1))
    assert ev["data"]["new"] == ["Bob"]


def test_two_victims_are_pruned_separately():
    table = {"Bob": {"motivation": "Yes"}}
    agent, rec, _ = star_agent(star_rule(table), victims=("V1", "V2"))
    out = Log(agent).end(1)
    assert rec.totals()["calls"] == 1                       # both victims in one pass (24 lines)
    assert sum(e["kind"] == "sensor" for e in out) == 24
    assert [(e["data"]["victim"], e["data"]["new"]) for e in lists(out)] == [("V1", ["Bob"]), ("V2", ["Bob"])]


def test_vote_is_restricted_to_the_suspect_list():
    table = {"Bob": {**YY, "information": "High"}, "Dee": {**YY, "information": "High"}}
    agent, rec, chat = star_agent(star_rule(table, vote_for="Cid"))   # would vote Cid if it could
    Log(agent).end(1)
    calls = rec.totals()["calls"]
    vote = agent.act(ActionRequest(kind="vote", actor="Ann", prompt="Who killed Vic? Vote:",
                                   choices=["Bob", "Cid", "Dee"], context={"victim": "Vic"}))
    assert vote.value == "Bob" and rec.totals()["calls"] == calls + 1    # no sensor call at the vote
    prompt = str(chat.seen[-1][-1].content)
    assert "Who killed Vic? Vote:\n1. Bob\n2. Dee\n\n" in prompt
    assert ("Your suspect list for the death of Vic after 1 round(s) of questioning: "
            "Bob (motive and opportunity), Dee (motive and opportunity)") in prompt
    assert ("Dee: your feeling towards them Neutral; motive Yes; opportunity Yes; "
            "information value of more questions High") in prompt


def test_a_suspect_list_of_one_decides_the_vote_without_a_call():
    """The refinement saves the vote's call when one suspect is left (§4, Table A5)."""
    agent, rec, _ = star_agent(star_rule({"Dee": {**YY, "information": "High"}}, vote_for="Cid"))
    Log(agent).end(1)
    calls = rec.totals()["calls"]
    vote = agent.act(ActionRequest(kind="vote", actor="Ann", prompt="Who killed Vic? Vote:",
                                   choices=["Bob", "Cid", "Dee"], context={"victim": "Vic"}))
    assert (vote.value, vote.attempts, rec.totals()["calls"]) == ("Dee", 0, calls)
    assert agent.stats["forced_vote"] == 1
    pr = next(b for b in agent.blocks if isinstance(b, Pruner))
    other = pr.contribute(agent, ActionRequest(kind="vote", actor="Ann", prompt="x", choices=["Bob"],
                                               context={"victim": "Vic"}))
    assert other is None                                    # no suspect among the choices: no narrowing


def test_pruner_off_leaves_votes_open():
    agent, _, chat = star_agent(star_rule(vote_for="Cid"), config=PlayerStarConfig(pruner=False))
    Log(agent).end(1)
    vote = agent.act(ActionRequest(kind="vote", actor="Ann", prompt="Vote:", choices=["Bob", "Cid", "Dee"],
                                   context={"victim": "Vic"}))
    assert vote.value == "Cid"
