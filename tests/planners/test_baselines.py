"""The PLAYER* baselines (werewolf, ocot, thinkthrice) with fake chat models.

Call sequences are read from the call recorder (``CallRecorder(None).calls()`` purposes, in
order); prompts from the fake model's ``seen`` list; decisions from the private planning events
the blocks queue with ``agent.emit``.
"""

import json
from collections import Counter

import pytest

from functools import partial

from mas_agents.graphs.mmg.session import run_game
from mas_agents.planners.base import ActionRequest
from mas_agents.specs import build_agent
from mas_agents.planners.baselines import (FACTORIES, TEMPLATES, ObjectiveCoT, ThinkThrice, Werewolf, ocot_blocks,
                                split_objectives, template_choices, thinkthrice_blocks, werewolf_blocks)
from mas_agents.planners.cot import ChainOfThought
from tests.fakes import polite_player, unrecognised
from tests.toy import make_agent as toy_agent, toy_runtime

PLAYERS = ["Ann", "Bob", "Cid"]
SCRIPT = ("You are Ann, the baker. At eight you baked bread. At nine you saw Bob near the well with a "
          "knife. At ten you went to bed. Cid was asleep all evening.")


def last(messages) -> str:
    return str(messages[-1].content)


def fake(choice="Choice: 1", answer="Answer: I saw Bob at the well at nine.",
         revision="Answer: At nine I saw Bob at the well with a knife.", relevance="At nine - I saw Bob at the well.",
         think=None):
    """A scripted player. ``think`` maps a prompt marker to a reply for free-text calls."""
    think = dict(think or {})

    def rule(messages):
        text = last(messages)
        if '"Choice: ..."' in text:
            return choice
        if '"To: ..."' in text:
            return "I should ask Bob.\nTo: Bob\nQuestion: Where were you at nine?"
        if "what you say in reply" in text:   # the answer call or its re-prompt
            return revision if any("You answered:" in str(m.content) for m in messages) else answer
        if '"Vote: ..."' in text:
            return "Vote: Bob"
        if "Copy out the timeline lines" in text:
            return relevance
        if "write your own timeline" in text:
            return "8pm - I baked bread.\n9pm - I saw Bob at the well.\n10pm - I went to bed."
        for marker, reply in think.items():
            if marker in text:
                return reply
        if "reflect privately" in text or "One of your objectives in this game" in text:
            return "A private thought."
        raise unrecognised("baselines fake", messages)
    return rule


#: Ann of the toy game with a longer script (a timeline to copy from), three players.
make_agent = partial(toy_agent, players=PLAYERS, script=SCRIPT, goals="Find the killer of Vic.", dialogue_budget=40)


def purposes(rec):
    return [c.purpose for c in rec.calls()]


def ask_req():
    return ActionRequest(kind="ask", actor="Ann", choices=["Bob", "Cid"], context={"round": 1},
                         prompt="Round 1 of 1 of questioning. Choose one player to question. Players you can ask:",
                         query="Who killed Vic? suspicious, motive, alibi, last seen")


def answer_req(question="Where were you at nine?"):
    return ActionRequest(kind="answer", actor="Ann", prompt=f'Bob asks you: «{question}»\nAnswer Bob.',
                         query=question, context={"round": 1, "asker": "Bob", "target": "Ann", "question": question})


def vote_req():
    return ActionRequest(kind="vote", actor="Ann", prompt="Who killed Vic?", choices=["Bob", "Cid"],
                         context={"victim": "Vic"})


def prompts_of(chat):
    return [last(m) for m in chat.seen]


# -- factories --------------------------------------------------------------------------------
def test_factories_build_fresh_blocks_ending_with_cot():
    for name, factory in FACTORIES.items():
        a, b = factory(), factory()
        assert isinstance(a[-1], ChainOfThought) and len(a) == 2
        assert a[0] is not b[0] and a[0].name == name
    assert isinstance(werewolf_blocks()[0], Werewolf)
    assert isinstance(ocot_blocks()[0], ObjectiveCoT)
    assert isinstance(thinkthrice_blocks()[0], ThinkThrice)


# -- werewolf ---------------------------------------------------------------------------------
def test_werewolf_has_ten_templates_as_choices():
    choices = template_choices("Vic")
    assert len(TEMPLATES) == 10 == len(set(choices))
    assert all("{victim}" not in c for c in choices) and any("Vic" in c for c in choices)


@pytest.mark.parametrize("pick", [1, 3, 10])
def test_werewolf_ask_chooses_a_template_that_reaches_the_question_prompt(pick):
    agent, rec, chat = make_agent(fake(choice=f"Choice: {pick}"), werewolf_blocks())
    act = agent.act(ask_req(), phase="gameplay")
    assert act.valid and act.value == {"target": "Bob", "question": "Where were you at nine?"}
    assert purposes(rec) == ["choose#1", "ask#1"]
    choose_prompt, ask_prompt = prompts_of(chat)
    assert all(c in choose_prompt for c in template_choices("Vic"))
    chosen = TEMPLATES[pick - 1][1].format(victim="Vic")
    assert f"Base your question on: {chosen}" in ask_prompt
    others = [t[1].format(victim="Vic") for i, t in enumerate(TEMPLATES) if i != pick - 1]
    assert not any(o in ask_prompt for o in others)
    (ev,) = agent.drain_events()
    assert ev["kind"] == "werewolf_template" and ev["visible_to"] == ["Ann"] and ev["round"] == 1
    assert ev["data"] == {"label": TEMPLATES[pick - 1][0], "template": chosen, "valid": True}
    assert ev["llm_call_ids"] == [rec.calls()[0].call_id]


def test_werewolf_choice_by_label_is_accepted():
    agent, rec, chat = make_agent(fake(choice="Choice: Secrets"), werewolf_blocks())
    agent.act(ask_req())
    assert "Base your question on: What do you know about Vic's private life" in prompts_of(chat)[-1]


def test_werewolf_unreadable_choice_asks_without_a_template():
    agent, rec, chat = make_agent(fake(choice="I like all of them"), werewolf_blocks())
    act = agent.act(ask_req())
    assert act.valid
    assert purposes(rec) == ["choose#1", "choose#2", "ask#1"]
    assert "Base your question on" not in prompts_of(chat)[-1]
    (ev,) = agent.drain_events()
    assert ev["data"]["valid"] is False and ev["data"]["template"] is None and len(ev["llm_call_ids"]) == 2


def test_werewolf_answer_reflects_first_and_the_reflection_reaches_the_answer():
    rule = fake(think={"reflect privately": "Bob wants my alibi; I saw him at the well, I must say so."})
    agent, rec, chat = make_agent(rule, werewolf_blocks())
    act = agent.act(answer_req())
    assert act.valid and act.value == "I saw Bob at the well at nine."
    assert purposes(rec) == ["werewolf.reflect", "answer#1"]
    reflect_prompt, answer_prompt = prompts_of(chat)
    assert 'Bob asks you: «Where were you at nine?»' in reflect_prompt and "Bob near the well with a knife" in reflect_prompt
    assert "Bob wants my alibi; I saw him at the well, I must say so." in answer_prompt
    (ev,) = agent.drain_events()
    assert ev["kind"] == "werewolf_reflection" and ev["data"]["asker"] == "Bob"
    assert ev["llm_call_ids"] == [rec.calls()[0].call_id]


def test_werewolf_leaves_vote_and_introduce_alone():
    agent, rec, chat = make_agent(fake(), werewolf_blocks())
    agent.act(vote_req())
    assert purposes(rec) == ["vote#1"] and agent.drain_events() == []
    assert "think step by step" in prompts_of(chat)[0]   # chain-of-thought still applies


# -- ocot -------------------------------------------------------------------------------------
GOALS4 = "1. Find the killer of Vic. (10 points)\n2. Hide your debt to Bob. (5 points)\n3. Protect Cid.\n4. Get the money."


@pytest.mark.parametrize("goals,cap,expected", [
    (GOALS4, 3, ["Find the killer of Vic.", "Hide your debt to Bob.", "Protect Cid."]),
    (GOALS4, 1, ["Find the killer of Vic."]),
    ("1. Find the killer of Vic.\n2. Hide your debt to Bob.", 3, ["Find the killer of Vic.", "Hide your debt to Bob."]),
    ("", 3, ["Find out who killed Vic."]),
])
def test_ocot_reflects_once_per_objective_capped_then_asks(goals, cap, expected):
    seen_objectives = []

    def on_think(messages):
        text = last(messages)
        if "One of your objectives in this game:" in text:
            obj = text.split("One of your objectives in this game: ")[1].splitlines()[0]
            seen_objectives.append(obj)
            return f"About '{obj}': I still need Bob's alibi."
        return fake()(messages)

    agent, rec, chat = make_agent(on_think, [ObjectiveCoT(max_objectives=cap), ChainOfThought()], goals=goals)
    act = agent.act(ask_req())
    assert act.valid
    assert purposes(rec) == [f"ocot.objective#{k}" for k in range(1, len(expected) + 1)] + ["ask#1"]
    assert seen_objectives == expected
    ask_prompt = prompts_of(chat)[-1]
    for k, obj in enumerate(expected, 1):
        assert f"Objective {k}: {obj}\nYour thought: About '{obj}': I still need Bob's alibi." in ask_prompt
    (ev,) = agent.drain_events()
    assert ev["kind"] == "ocot_reflection" and ev["data"]["objectives"] == expected
    assert len(ev["data"]["reflections"]) == len(expected)
    assert ev["llm_call_ids"] == [c.call_id for c in rec.calls()[:-1]]


def test_ocot_default_cap_is_three():
    agent, rec, _ = make_agent(fake(), ocot_blocks(), goals=GOALS4)
    agent.act(ask_req())
    assert purposes(rec) == ["ocot.objective#1", "ocot.objective#2", "ocot.objective#3", "ask#1"]


def test_ocot_answers_and_votes_by_default():
    agent, rec, _ = make_agent(fake(), ocot_blocks(), goals=GOALS4)
    agent.act(answer_req())
    agent.act(vote_req())
    assert purposes(rec) == ["answer#1", "vote#1"] and agent.drain_events() == []


def test_ocot_rejects_a_zero_cap():
    with pytest.raises(ValueError, match="max_objectives"):
        ObjectiveCoT(max_objectives=0)


@pytest.mark.parametrize("goals,expected", [
    ("1. Hide the debt. (2 points)\n2. Find the killer. (5 points)", ["Hide the debt.", "Find the killer."]),
    ("① You are not the murderer, clear your name. (10 points) \\ n ② Find the money. (20 points)",
     ["You are not the murderer, clear your name.", "Find the money."]),
    ("Tip: \\ n1. Do not reveal the gambling. \\N2. Stay calm.", ["Do not reveal the gambling.", "Stay calm."]),
    ("[Things You Cannot Disclose] \\ n You Have Been to the Crime Scene \\ n The Truth 15 Years Ago",
     ["You Have Been to the Crime Scene", "The Truth 15 Years Ago"]),
    ("You are not the murderer, please clear the suspicion.", ["You are not the murderer, please clear the suspicion."]),
    ("Pay the 2.5 million debt.", ["Pay the 2.5 million debt."]),
    ("", []),
])
def test_split_objectives_handles_wellplay_shapes(goals, expected):
    assert split_objectives(goals) == expected


# -- thinkthrice ------------------------------------------------------------------------------
TT_FIRST = ["thinkthrice.timeline", "thinkthrice.relevance", "answer#1", "choose#1"]


def tt_agent(**kw):
    agent, rec, chat = make_agent(fake(**kw), thinkthrice_blocks())
    return agent, rec, chat


def check_event(agent):
    evs = [e for e in agent.drain_events() if e["kind"] == "thinkthrice_check"]
    assert len(evs) == 1
    return evs[0]


def test_thinkthrice_revises_when_the_check_says_facts_are_missing():
    agent, rec, chat = tt_agent(choice="Choice: No")
    act = agent.act(answer_req())
    assert purposes(rec) == TT_FIRST + ["answer#1"]
    assert act.valid and act.value == "At nine I saw Bob at the well with a knife."
    assert act.call_ids == [c.call_id for c in rec.calls()]   # every call of the procedure
    timeline_p, relevance_p, draft_p, check_p, revision_p = prompts_of(chat)
    assert "Bob near the well with a knife" in timeline_p                    # script excerpts feed the timeline
    assert "9pm - I saw Bob at the well." in relevance_p and "Where were you at nine?" in relevance_p
    assert "At nine - I saw Bob at the well." in draft_p        # relevant lines reach the draft
    assert '«I saw Bob at the well at nine.»' in check_p and "1. Yes\n2. No" in check_p
    assert 'You answered: «I saw Bob at the well at nine.»' in revision_p
    assert "At nine - I saw Bob at the well." in revision_p
    evs = agent.drain_events()
    assert [e["kind"] for e in evs] == ["thinkthrice_timeline", "thinkthrice_check"]
    assert evs[1]["data"]["check"] == "missing" and evs[1]["data"]["revised"] is True
    assert evs[1]["data"]["draft"] == "I saw Bob at the well at nine."


def test_thinkthrice_keeps_the_draft_when_the_check_passes():
    agent, rec, _ = tt_agent(choice="Choice: Yes")
    act = agent.act(answer_req())
    assert purposes(rec) == TT_FIRST
    assert act.valid and act.value == "I saw Bob at the well at nine." and len(act.call_ids) == 4
    ev = check_event(agent)
    assert ev["data"]["check"] == "complete" and ev["data"]["revised"] is False


def test_thinkthrice_malformed_check_is_unknown_and_not_revised():
    agent, rec, _ = tt_agent(choice="Hmm, maybe, it depends.")
    act = agent.act(answer_req())
    assert purposes(rec) == TT_FIRST + ["choose#2"]   # re-prompted once, then unreadable
    assert act.valid and act.value == "I saw Bob at the well at nine."
    ev = check_event(agent)
    assert ev["data"]["check"] == "unknown" and ev["data"]["revised"] is False
    assert agent.stats["invalid_choose"] == 1


def test_thinkthrice_skips_the_check_when_nothing_in_the_timeline_is_relevant():
    agent, rec, chat = tt_agent(relevance="NONE", choice="Choice: No")
    act = agent.act(answer_req("Do you like bread?"))
    assert purposes(rec) == ["thinkthrice.timeline", "thinkthrice.relevance", "answer#1"]
    assert act.valid and "nothing that bears on this question" in prompts_of(chat)[-1]
    assert check_event(agent)["data"]["check"] == "skipped"


def test_thinkthrice_extracts_the_timeline_once_per_agent():
    agent, rec, _ = tt_agent(choice="Choice: Yes")
    agent.act(answer_req())
    agent.act(answer_req("Who did you see?"))
    assert purposes(rec) == TT_FIRST + ["thinkthrice.relevance", "answer#1", "choose#1"]
    assert [e["kind"] for e in agent.drain_events()].count("thinkthrice_timeline") == 1
    assert agent.blocks[0].timeline.startswith("8pm - I baked bread.")


def test_thinkthrice_refresh_timeline_reextracts():
    agent, rec, _ = make_agent(fake(choice="Choice: Yes"), [ThinkThrice(refresh_timeline=True), ChainOfThought()])
    agent.act(answer_req())
    agent.act(answer_req())
    assert purposes(rec) == TT_FIRST + TT_FIRST


def test_thinkthrice_unreadable_draft_is_returned_invalid_without_a_check():
    agent, rec, _ = tt_agent(answer="I would rather not say.", choice="Choice: No")
    act = agent.act(answer_req())
    assert purposes(rec) == ["thinkthrice.timeline", "thinkthrice.relevance", "answer#1", "answer#2"]
    assert not act.valid and act.value is None and len(act.errors) == 2 and len(act.call_ids) == 4
    assert check_event(agent)["data"]["check"] == "no_draft"


def test_thinkthrice_unreadable_revision_keeps_the_draft():
    agent, rec, _ = tt_agent(choice="Choice: No", revision="rambling without the tag")
    act = agent.act(answer_req())
    assert purposes(rec) == TT_FIRST + ["answer#1", "answer#2"]
    assert act.valid and act.value == "I saw Bob at the well at nine."
    assert len(act.errors) == 2 and act.attempts == 3 and len(act.call_ids) == 6
    ev = check_event(agent)
    assert ev["data"]["check"] == "missing" and ev["data"]["revised"] is False


def test_thinkthrice_asks_and_votes_by_default():
    agent, rec, _ = tt_agent()
    agent.act(ask_req())
    agent.act(vote_req())
    assert purposes(rec) == ["ask#1", "vote#1"] and agent.drain_events() == []


# -- one-round toy games ----------------------------------------------------------------------
#: A phrase of each private free-text reflection the baselines ask for (werewolf answer
#: reflection, ocot objective reflection, thinkthrice timeline and relevance).
REFLECTIONS = ("reflect privately", "One of your objectives in this game", "write your own timeline",
               "Copy out the timeline lines")


def game_rule(choice):
    """The polite player (votes Bob), ``choice`` on every private choice, and one fixed sentence
    for every private reflection; anything else is an unrecognised prompt."""
    base = polite_player(vote_for="Bob")

    def rule(messages):
        text = last(messages)
        if '"Choice: ..."' in text:
            return choice
        if any(r in text for r in REFLECTIONS):
            return "I recall the evening at the well."
        return base(messages)
    return rule


def play(tmp_path, factory, choice, goals="Find the killer."):
    """The toy game, one round; every player but the murderer plays the baseline ``factory``."""
    def build(persona, model, emb, settings):
        agent = build_agent(persona, "plain", model, emb, settings)
        if persona.role != "murderer":      # the murderer keeps the fixed framework
            agent.blocks = factory()
        return agent

    rt, rec, out = toy_runtime(tmp_path, game_rule(choice), rounds=1, questions=1, goals=goals, build=build)
    res = run_game(rt, out, rec, {"model": "fake"})
    events = [json.loads(l) for l in (out / "events.jsonl").read_text().splitlines()]
    return res, events, rec


def calls_per_phase(events, rec):
    """Unique model calls per game phase; a planning event counts toward the phase of the next
    action event of the same actor. Also checks that every recorded call is cited by an event."""
    ids = {}
    for i, e in enumerate(events):
        phase = e["phase"]
        if phase == "planning":
            phase = next(x["phase"] for x in events[i + 1:] if x["phase"] != "planning" and x["actor"] == e["actor"])
        ids.setdefault(phase, set()).update(e["llm_call_ids"])
    cited = set().union(*ids.values())
    assert cited == {c.call_id for c in rec.calls()}
    return {k: len(v) for k, v in ids.items() if v}


def test_werewolf_toy_game(tmp_path):
    # Ann asks Bob; Bob (plain murderer), Cid and Dee ask Ann: Ann answers three times.
    res, events, rec = play(tmp_path, werewolf_blocks, "Choice: 1")
    assert res["finished"] and res["invalid_actions"] == 0
    assert Counter(purposes(rec)) == {"introduce#1": 4, "choose#1": 3, "ask#1": 4, "werewolf.reflect": 3,
                                      "answer#1": 4, "vote#1": 4}
    assert calls_per_phase(events, rec) == {"introduction": 4, "questioning": 3 * 2 + 1 + 1 + 3 * 2, "voting": 4}
    kinds = Counter(e["kind"] for e in events if e["phase"] == "planning")
    assert kinds == {"werewolf_template": 3, "werewolf_reflection": 3}
    assert all(e["visible_to"] == [e["actor"]] for e in events if e["phase"] == "planning")


def test_ocot_toy_game(tmp_path):
    goals = "1. Find the killer. 2. Hide your debt. 3. Protect the village. 4. Get the money."
    res, events, rec = play(tmp_path, ocot_blocks, "Choice: 1", goals=goals)
    assert res["finished"] and res["invalid_actions"] == 0
    assert Counter(purposes(rec)) == {"introduce#1": 4, "ocot.objective#1": 3, "ocot.objective#2": 3,
                                      "ocot.objective#3": 3, "ask#1": 4, "answer#1": 4, "vote#1": 4}
    assert calls_per_phase(events, rec) == {"introduction": 4, "questioning": 3 * 4 + 1 + 4, "voting": 4}
    assert Counter(e["kind"] for e in events if e["phase"] == "planning") == {"ocot_reflection": 3}


def test_thinkthrice_toy_game(tmp_path):
    # every check says "No": Ann's first answer costs 5 calls (timeline once), the next two 4 each
    res, events, rec = play(tmp_path, thinkthrice_blocks, "Choice: No")
    assert res["finished"] and res["invalid_actions"] == 0
    assert Counter(purposes(rec)) == {"introduce#1": 4, "ask#1": 4, "thinkthrice.timeline": 1,
                                      "thinkthrice.relevance": 3, "choose#1": 3, "answer#1": 1 + 3 * 2,
                                      "vote#1": 4}
    assert calls_per_phase(events, rec) == {"introduction": 4, "questioning": 4 + 1 + 5 + 4 + 4, "voting": 4}
    checks = [e for e in events if e["kind"] == "thinkthrice_check"]
    assert len(checks) == 3 and all(e["data"]["revised"] for e in checks)
    answers = [e for e in events if e["kind"] == "answer" and e["actor"] == "Ann"]
    assert [len(e["llm_call_ids"]) for e in answers] == [5, 4, 4]
