"""PLAYER* questioning: scores, the diminishing-value rule, tie-breaks, and the ask block."""

from __future__ import annotations

import pytest

from mas_agents.planners.base import ActionRequest
from mas_agents.planners.player_star import (
    PlayerStarConfig, Questioning, choose_target, information_weight, suspicion_score, target_scores, weakest_point,
)
from tests.fakes import star_rule
from tests.toy import star_agent, state_of

OTHERS = ["Bob", "Cid", "Dee"]


def ask_req(round=1, choices=OTHERS):
    return ActionRequest(kind="ask", actor="Ann", prompt="Choose one player to question:", choices=list(choices),
                         context={"round": round})


def ask_event(target, round=1):
    return {"kind": "ask", "actor": "Ann", "round": round, "visible_to": ["*"], "content": "?", "phase": "questioning",
            "data": {"target": target}}


# -- pure rules ------------------------------------------------------------------------------------
@pytest.mark.parametrize("profile,expected", [
    ({"motivation": "Yes", "opportunity": "Yes", "emotion": "Negative"}, 2.5),
    ({"motivation": "No", "opportunity": "No", "emotion": "Positive"}, 0.0),
    ({}, 1.25),                                                    # all unknown
    ({"motivation": "Yes", "opportunity": "unknown", "emotion": "Neutral"}, 1.75),
    ({"motivation": "No", "opportunity": "Yes", "emotion": "unknown"}, 1.25),
])
def test_suspicion_score(profile, expected):
    assert suspicion_score(profile) == pytest.approx(expected)


@pytest.mark.parametrize("value,weight", [("High", 1.0), ("Medium", 0.6), ("Low", 0.2), ("unknown", 0.6)])
def test_information_weight(value, weight):
    assert information_weight({"information": value}) == weight


def test_target_score_formula_and_diminishing_value():
    prof = {"Bob": {"Vic": {"motivation": "Yes", "opportunity": "Yes", "emotion": "Negative", "information": "High"}},
            "Cid": {"Vic": {"motivation": "Yes", "opportunity": "No", "emotion": "Neutral", "information": "Medium"}}}
    s0 = target_scores(["Bob", "Cid"], prof, {})
    assert s0["Bob"]["score"] == pytest.approx(2.5) and s0["Cid"]["score"] == pytest.approx(1.25 * 0.6)
    assert s0["Bob"]["victim"] == "Vic" and s0["Bob"]["asked"] == 0
    # every earlier question to the same character divides its value by (1 + n)
    for n in range(1, 5):
        s = target_scores(["Bob", "Cid"], prof, {"Bob": n})
        assert s["Bob"]["score"] == pytest.approx(2.5 / (1 + n)) and s["Bob"]["value"] == pytest.approx(2.5)
        assert s["Bob"]["score"] < target_scores(["Bob"], prof, {"Bob": n - 1})["Bob"]["score"]
        assert s["Cid"]["score"] == s0["Cid"]["score"]
    # Bob (2.5) stays first until asked 3 times: 2.5/4 = 0.625 < 0.75
    assert choose_target(target_scores(["Bob", "Cid"], prof, {"Bob": 2}), ["Bob", "Cid"]) == "Bob"
    assert choose_target(target_scores(["Bob", "Cid"], prof, {"Bob": 3}), ["Bob", "Cid"]) == "Cid"


def test_best_victim_is_used_for_multi_victim_cases():
    prof = {"Bob": {"V1": {"motivation": "No", "opportunity": "No"}, "V2": {"motivation": "Yes", "opportunity": "Yes"}}}
    s = target_scores(["Bob"], prof, {})
    assert s["Bob"]["victim"] == "V2" and s["Bob"]["suspicion"] == pytest.approx(2.25)


def test_ties_break_on_fewer_questions_then_seat_order():
    same = {"motivation": "Yes"}
    prof = {c: {"Vic": same} for c in OTHERS}
    order = ["Ann", "Dee", "Cid", "Bob"]   # seat order decides last
    assert choose_target(target_scores(OTHERS, prof, {}), order) == "Dee"
    # equal scores but different counts: the one asked less wins (scores 1.0/1 vs 2.0/2 tie)
    scores = {"Bob": {"score": 1.0, "asked": 1}, "Cid": {"score": 1.0, "asked": 0}}
    assert choose_target(scores, ["Bob", "Cid"]) == "Cid"
    with pytest.raises(ValueError):
        choose_target({}, order)


def test_without_readings_the_rule_cycles_through_the_suspects():
    asked: dict[str, int] = {}
    picks = []
    for _ in range(7):
        t = choose_target(target_scores(OTHERS, {}, asked, use_readings=False), ["Ann"] + OTHERS)
        picks.append(t)
        asked[t] = asked.get(t, 0) + 1
    assert picks == ["Bob", "Cid", "Dee", "Bob", "Cid", "Dee", "Bob"]


@pytest.mark.parametrize("profile,needle", [
    ({"opportunity": "Yes", "motivation": "Yes"}, "where Bob was"),
    ({"opportunity": "No", "motivation": "Yes"}, "stood to gain"),
    ({"opportunity": "unknown", "motivation": "No"}, "whereabouts when Vic died"),
    ({"opportunity": "No", "motivation": "unknown"}, "connected to Vic"),
    ({"opportunity": "No", "motivation": "No"}, "does not fit"),
])
def test_weakest_point_order(profile, needle):
    assert needle in weakest_point("Bob", "Vic", profile)


# -- the block -------------------------------------------------------------------------------------
NO_PRUNER = PlayerStarConfig(pruner=False)


def test_ask_targets_the_most_suspicious_and_overrides_the_models_pick():
    passes = []
    table = {"Dee": {"motivation": "Yes", "opportunity": "Yes", "emotion": "Negative"}}
    agent, rec, chat = star_agent(star_rule(table, passes=passes), config=NO_PRUNER)  # the fake asks the FIRST listed
    act = agent.act(ask_req())
    assert act.value["target"] == "Dee"
    # without a pruner the block reads itself: one pass (4 sensors x 3 suspects), then the ask
    assert passes == [[(s, c, "Vic") for c in OTHERS for s in ("emotion", "motivation", "opportunity", "information")]]
    assert rec.totals()["calls"] == 2
    ask_prompt = str(chat.seen[-1][-1].content)
    assert "Choose one player to question:\n1. Dee\n\n" in ask_prompt          # narrowed to the target
    assert "Your private notes on Dee regarding the death of Vic" in ask_prompt
    assert "motive Yes; opportunity Yes" in ask_prompt
    assert "weakest point of their story: where Dee was" in ask_prompt and "Mention Vic by name" in ask_prompt
    events = agent.drain_events()
    assert [e["kind"] for e in events] == ["sensor"] * 12 + ["target_choice"]
    tc = events[-1]
    assert tc["data"]["target"] == "Dee" and tc["data"]["victim"] == "Vic" and tc["round"] == 1
    assert tc["data"]["scores"]["Dee"]["score"] == pytest.approx(2.5 * 0.6)
    assert tc["data"]["scores"]["Bob"]["score"] == pytest.approx(0.25 * 0.6)
    assert tc["data"]["suspects"] == {"Vic": OTHERS} and tc["visible_to"] == ["Ann"]


def test_with_the_pruner_the_ask_reads_nothing_and_uses_the_pruners_readings():
    table = {"Dee": {"motivation": "Yes", "opportunity": "Yes"}}
    agent, rec, _ = star_agent(star_rule(table))
    assert agent.act(ask_req()).value["target"] == "Bob"     # round 1: no readings yet, seat order
    assert rec.totals()["calls"] == 1
    agent.end_round(1, [{"kind": "round_end", "actor": "game", "round": 1, "visible_to": ["*"], "content": "",
                         "data": {}, "phase": "questioning"}])
    assert rec.totals()["calls"] == 2                        # the pruner's one pass
    assert agent.act(ask_req(round=2)).value["target"] == "Dee"
    assert rec.totals()["calls"] == 3                        # the ask only


def test_asking_again_lowers_the_score_and_moves_to_the_next_suspect():
    table = {c: {"motivation": "Yes", "opportunity": "Yes"} for c in ("Bob", "Dee")}
    agent, rec, _ = star_agent(star_rule(table), config=NO_PRUNER)
    first = agent.act(ask_req())
    assert first.value["target"] == "Bob"                  # tie with Dee: seat order
    agent.observe([ask_event("Bob")])                      # the game logs Ann's question to Bob
    calls = rec.totals()["calls"]
    second = agent.act(ask_req())
    assert second.value["target"] == "Dee"
    assert rec.totals()["calls"] == calls + 1              # nothing heard since: no reading, only the ask
    tcs = [e for e in agent.drain_events() if e["kind"] == "target_choice"]
    assert tcs[1]["data"]["scores"]["Bob"]["asked"] == 1
    assert tcs[1]["data"]["scores"]["Bob"]["score"] == pytest.approx(tcs[0]["data"]["scores"]["Bob"]["score"] / 2)


def test_only_suspects_are_candidates():
    agent, _, _ = star_agent(star_rule({"Dee": {"motivation": "Yes"}}))
    st = state_of(agent)
    st.suspects["Vic"] = ["Cid"]
    act = agent.act(ask_req())
    assert act.value["target"] == "Cid"
    tc = [e for e in agent.drain_events() if e["kind"] == "target_choice"][0]
    assert list(tc["data"]["scores"]) == ["Cid"]


def test_each_agent_plans_from_its_own_memory():
    def table_from_prompt_rule():
        # the fake says "motive Yes" only when the excerpt the agent retrieved says "<X> hated Vic"
        base = star_rule()

        def rule(messages):
            text = str(messages[1].content)
            if "End with exactly these lines" in text:
                import re as _re
                tags = _re.findall(r"^(\w+) (emotion|motive|opportunity|information): <one of: (.+)>$", text, _re.M)
                return "\n".join(f"{c} {label}: " + (("Yes" if f"{c} hated Vic" in text else "No") if label == "motive"
                                                      else opts.split(", ")[-1]) for c, label, opts in tags)
            return base(messages)
        return rule

    ann, _, _ = star_agent(table_from_prompt_rule(), script="You are Ann. Dee hated Vic. Bob loved Vic.", config=NO_PRUNER)
    cid, _, _ = star_agent(table_from_prompt_rule(), name="Cid", script="You are Cid. Bob hated Vic. Dee loved Vic.",
                           players=["Ann", "Bob", "Cid", "Dee"], config=NO_PRUNER)
    assert ann.act(ask_req()).value["target"] == "Dee"
    assert cid.act(ActionRequest(kind="ask", actor="Cid", prompt="Ask:", choices=["Ann", "Bob", "Dee"],
                                 context={"round": 1})).value["target"] == "Bob"


def test_sensors_off_means_no_sensor_calls_and_round_robin():
    cfg = PlayerStarConfig(sensors=False, pruner=False, relations=False)
    agent, rec, chat = star_agent(star_rule({"Dee": {"motivation": "Yes"}}), config=cfg)
    picks, log = [], []
    for i in range(4):
        picks.append(agent.act(ask_req()).value["target"])
        log.append(ask_event(picks[-1]))
        agent.observe(log)                                 # observe() takes the whole event list so far
    assert picks == ["Bob", "Cid", "Dee", "Bob"]
    assert rec.totals()["calls"] == 4
    assert "Your private notes" not in str(chat.seen[-1][-1].content)


def test_without_pruner_the_ask_reads_again_only_after_news():
    cfg = PlayerStarConfig(pruner=False, relations=False)
    passes = []
    agent, rec, _ = star_agent(star_rule(passes=passes), config=cfg)
    agent.act(ask_req(round=1))
    assert rec.totals()["calls"] == 2                      # one pass + the ask
    log = [{"kind": "round_end", "actor": "game", "round": 1, "visible_to": ["*"], "content": "",
            "data": {}, "phase": "questioning"}]
    agent.end_round(1, log)
    assert rec.totals()["calls"] == 2                      # no pruner: nothing at round end
    agent.act(ask_req(round=2))
    assert rec.totals()["calls"] == 3                      # nothing heard since: only the ask
    agent.observe(log + [{"kind": "answer", "actor": "Cid", "visible_to": ["*"], "round": 2, "content": "I slept.",
                          "data": {"asker": "Bob", "question": "Where were you?"}}])   # the whole log so far
    agent.act(ask_req(round=2))
    assert rec.totals()["calls"] == 5                      # Cid was heard: a pass on Cid, then the ask
    assert {c for _, c, _ in passes[-1]} == {"Cid"}


def test_other_requests_are_left_alone():
    agent, rec, _ = star_agent(star_rule())
    q = next(b for b in agent.blocks if isinstance(b, Questioning))
    for kind in ("vote", "answer", "introduce", "choose", "mcq"):
        choices = ["Bob"] if kind in ("vote", "choose", "mcq") else None
        req = ActionRequest(kind=kind, actor="Ann", prompt="x", choices=choices)
        assert q.contribute(agent, req) is None
    assert rec.totals()["calls"] == 0
