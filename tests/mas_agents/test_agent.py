"""Agent logic with fake models: blocks, re-prompt, abstention, memory ingestion."""

from dataclasses import dataclass
from functools import partial

from mas_agents.planners.base import Action, ActionRequest, Contribution
from mas_agents.planners.cot import ChainOfThought
from tests.fakes import polite_player
from tests.toy import make_agent as toy_agent

PLAYERS = ["Ann", "Bob", "Cid"]

#: Ann of the toy game, three players, small budgets; her memory holds more than her persona script.
make_agent = partial(toy_agent, players=PLAYERS, script="You are Ann.",
                     memory_script="You are Ann. You saw Bob with a knife at nine. Cid was asleep.",
                     script_budget=50, dialogue_budget=50)


def vote_req():
    return ActionRequest(kind="vote", actor="Ann", prompt="Who killed Vic?", choices=["Bob", "Cid"])


def test_prompt_holds_script_excerpt_choices_format_and_cot():
    agent, _, _ = make_agent(polite_player(), [ChainOfThought()])
    sys_msg, user = agent.messages(vote_req(), [ChainOfThought().contribute(agent, vote_req())])
    assert "You are Ann" in sys_msg.content and "not a murderer" in sys_msg.content
    assert "Bob with a knife" in user.content
    assert "1. Bob\n2. Cid" in user.content
    assert "think step by step" in user.content
    assert user.content.rstrip().endswith('"Vote: ..." holding exactly one name from the list.')


def test_murderer_prompt_allows_lying():
    agent, _, _ = make_agent(polite_player(), role="murderer")
    sys_msg, _ = agent.messages(vote_req())
    assert "murderer of Vic" in sys_msg.content and "never admit" in sys_msg.content


@dataclass
class FixedVote:
    name: str = "fixed"

    def contribute(self, agent, request):
        return Contribution(action=Action(kind="vote", actor=agent.name, value="Cid", raw="", call_ids=[]))


@dataclass
class OnlyCid:
    name: str = "only_cid"

    def contribute(self, agent, request):
        return Contribution(choices=["Cid"], context="Suspect list: Cid")


@dataclass
class NotBob:
    name: str = "not_bob"

    def contribute(self, agent, request):
        return Contribution(choices=["Cid", "Dan"], context="Suspect list: Cid, Dan")


def vote_req3():
    return ActionRequest(kind="vote", actor="Ann", prompt="Who killed Vic?", choices=["Bob", "Cid", "Dan"])


def test_block_action_skips_the_model():
    agent, rec, _ = make_agent(lambda m: (_ for _ in ()).throw(AssertionError("model called")), [FixedVote()])
    act = agent.act(vote_req())
    assert act.value == "Cid" and rec.totals()["calls"] == 0


def test_block_narrows_choices_without_touching_the_request():
    seen = []
    agent, _, _ = make_agent(lambda m: (seen.append(str(m[-1].content)), "Vote: Dan")[1], [NotBob()])
    req = vote_req3()
    act = agent.act(req)
    assert act.value == "Dan"
    assert "1. Cid\n2. Dan" in seen[0] and "Bob" not in seen[0].split("Who killed Vic?")[1]
    assert "Suspect list: Cid, Dan" in seen[0]
    assert req.choices == ["Bob", "Cid", "Dan"]


def test_one_legal_choice_left_is_a_forced_move_without_a_call():
    agent, rec, _ = make_agent(lambda m: (_ for _ in ()).throw(AssertionError("model called")), [OnlyCid()])
    act = agent.act(vote_req())
    assert (act.value, act.valid, act.attempts, act.call_ids) == ("Cid", True, 0, [])
    single = agent.act(ActionRequest(kind="choose", actor="Ann", prompt="Pick", choices=["only"]))
    assert single.value == "only" and rec.totals()["calls"] == 0
    assert agent.stats == {"forced_vote": 1, "forced_choose": 1}
    # free-text and mcq requests are never forced, even with one option
    agent2, rec2, _ = make_agent(lambda m: "Answer: a")
    assert agent2.act(ActionRequest(kind="mcq", actor="Ann", prompt="Q?", choices=["yes"])).value == frozenset("a")
    assert rec2.totals()["calls"] == 1


@dataclass
class Reader:
    """A block that takes one private reading before every vote."""
    name: str = "reader"

    def contribute(self, agent, request):
        if request.kind != "vote":
            return None
        agent.choose("Is Bob nervous?", ["yes", "no"], purpose="reader")
        return None


def test_private_readings_get_no_contribution_from_other_blocks():
    seen = []
    agent, rec, _ = make_agent(lambda m: (seen.append(str(m[-1].content)),
                                       "Choice: yes" if "nervous" in str(m[-1].content) else "Vote: Cid")[1],
                            [Reader(), NotBob()])
    assert agent.act(vote_req3()).value == "Cid"
    reading, vote = seen
    assert "Suspect list" not in reading and "1. yes\n2. no" in reading   # OnlyCid kept out of the reading
    assert "Suspect list: Cid, Dan" in vote
    assert [c.purpose for c in rec.calls()] == ["reader#1", "vote#1"]


def test_reprompt_then_abstain_and_counters():
    replies = iter(["rambling", "Vote: Bob", "rambling", "still rambling"])
    agent, rec, _ = make_agent(lambda m: next(replies))
    first = agent.act(vote_req())
    assert first.valid and first.value == "Bob" and first.attempts == 2 and len(first.errors) == 1
    second = agent.act(vote_req())
    assert not second.valid and second.value is None and second.attempts == 2
    assert agent.stats == {"malformed_vote": 3, "recovered_after_reprompt": 1, "invalid_vote": 1}
    assert rec.totals()["calls"] == 4


def test_observe_ingests_visible_dialogue_once():
    agent, _, _ = make_agent(polite_player())
    events = [
        {"kind": "introduce", "actor": "Bob", "visible_to": ["*"], "content": "I am Bob.", "data": {"valid": True}},
        {"kind": "vote", "actor": "Cid", "visible_to": ["Cid"], "content": "votes Bob", "data": {}},
        {"kind": "answer", "actor": "Cid", "visible_to": ["*"], "content": "Asleep.", "round": 1,
         "data": {"asker": "Bob", "question": "Where were you?"}},
    ]
    assert agent.observe(events) == 2
    assert agent.observe(events) == 0
    texts = [c.text for c in agent.memory.all_chunks("dialogue")]
    assert texts == ["Bob introduced themselves: «I am Bob.»",
                     "Bob asked Cid: «Where were you?»\nCid answered: «Asleep.»"]


def test_the_game_says_which_events_are_dialogue():
    """The agent core holds no game's vocabulary: an agent keeps the kinds its game declares
    (GameInfo.dialogue), none when the game declares none, and any kind a game opts in to."""
    import dataclasses

    from mas_agents.graphs.mmg.rules import GAME as MMG
    from mas_agents.graphs.wis.rules import GAME as WIS
    from mas_agents.planners.base import UNSPECIFIED

    assert MMG.dialogue == {"introduce", "answer"} and WIS.dialogue == frozenset()
    assert UNSPECIFIED.dialogue == {"introduce", "answer"}      # what mas.node's speak/answer decisions remember
    events = [
        {"kind": "introduce", "actor": "Bob", "visible_to": ["*"], "content": "I am Bob.", "data": {"valid": True}},
        {"kind": "describe", "actor": "Cid", "visible_to": ["*"], "content": "It is sweet.", "data": {}},
    ]
    quiet, _, _ = make_agent(polite_player())
    quiet.game = WIS
    assert quiet.observe(events) == 0 and quiet.memory.all_chunks("dialogue") == []
    talkative, _, _ = make_agent(polite_player())
    talkative.game = dataclasses.replace(WIS, dialogue=frozenset({"describe"}))
    assert talkative.observe(events) == 1
    assert [c.text for c in talkative.memory.all_chunks("dialogue")] == ["Cid: «It is sweet.»"]


def test_think_is_one_unparsed_call_with_memory():
    seen = []
    agent, rec, _ = make_agent(lambda m: (seen.append(str(m[-1].content)), "Bob lied about nine.")[1])
    text, cid = agent.think("Reflect on Bob.", purpose="reflect", query="Bob knife")
    assert text == "Bob lied about nine." and rec.totals()["calls"] == 1
    assert "Bob with a knife" in seen[0] and seen[0].endswith("Reflect on Bob.")
    assert rec.calls()[0].purpose == "reflect"


def test_a_form_reply_gets_room_for_every_line():
    """A batched reading pass answers one line per field: the completion cap grows with the form
    (15 clue lines were cut at the fixed 96 tokens on a real server, and read as unknown)."""
    from mas_agents.agents import MAX_TOKENS_NO_THOUGHT, completion_budget
    opts = ["Specific", "Somewhat", "Vague"]
    one = ActionRequest(kind="form", actor="Ann", prompt="p", fields=[("Player 3 Specific", opts)])
    many = ActionRequest(kind="form", actor="Ann", prompt="p",
                         fields=[(f"Player {i} Specific", opts) for i in range(2, 17)])
    line = len("Player 3 Specific") + 2 + len("Somewhat") + 1          # 28 characters -> 10 tokens
    assert completion_budget(one, False) == MAX_TOKENS_NO_THOUGHT["form"] + 10
    # lines of 28 characters for players 2-9, 29 for players 10-16: 8 * 28 + 7 * 29 = 427 -> 143 tokens
    assert line == 28 and completion_budget(many, False) == MAX_TOKENS_NO_THOUGHT["form"] + 143
    assert completion_budget(vote_req(), False) == MAX_TOKENS_NO_THOUGHT["vote"]     # other kinds unchanged
    # and the call is sent with it (a request naming no game thinks first: the 256-token base)
    seen = []
    agent, rec, _ = make_agent(lambda m: "\n".join(f"Player {i} Specific: Vague" for i in range(2, 17)))
    agent.model.chat = (lambda orig: (lambda *a, **kw: (seen.append(kw["max_tokens"]), orig(*a, **kw))[1]))(agent.model.chat)
    act = agent.act(many)
    assert act.valid and seen == [256 + 143]
