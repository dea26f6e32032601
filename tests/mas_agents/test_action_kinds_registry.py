"""Action kinds as data (issue 51 item 3): each kind is one registered ``ActionKind`` record.

The built-in kinds must ask, read, constrain and budget exactly as the code before the registry
did (commit 531ad79: its tables are written out below, and ``tests/data/action_kinds_531ad79.json``
holds what its prompts, parser, grammars and schemas made of a set of requests and replies,
captured by :func:`snapshot` run on that commit's modules); and a kind a test registers plays
through an agent with no edit of any core module.
"""

import json
from pathlib import Path

import pytest

from mas_agents.actions import parse_reply
from mas_agents.planners.base import ActionRequest
from mas_agents.action_kinds import ParseError
from mas_agents.agents import MAX_TOKENS, MAX_TOKENS_NO_THOUGHT, completion_budget
from mas_agents.grammar import ReplyFormat, reply_grammar, reply_schema, render_json_reply
from mas_agents.prompts import format_choices, format_instruction

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "action_kinds_531ad79.json"

# ---- the tables of 531ad79 (planners/base.py KINDS/TAGS, agent.py MAX_TOKENS*, FORCED_KINDS, prompts.FORMATS)
OLD_KINDS = ("introduce", "ask", "answer", "vote", "mcq", "describe", "guess", "propose", "choose", "contribute", "form")
OLD_TAGS = {"introduce": "Introduction", "ask": "Question", "answer": "Answer", "vote": "Vote", "mcq": "Answer",
            "choose": "Choice", "describe": "Description", "guess": "Guess", "propose": "Proposal",
            "contribute": "Contribution"}
OLD_MAX_TOKENS = {k: 256 for k in OLD_KINDS}
OLD_MAX_TOKENS_NO_THOUGHT = {"describe": 128, "vote": 24, "choose": 24, "mcq": 16, "guess": 24, "propose": 48,
                             "contribute": 16, "form": 96}       # others: .get(kind, 128)
OLD_FORCED = ("vote", "choose")
OLD_FORMATS = {
    "introduce": 'End with a line "Introduction: ..." holding what you say to everyone.',
    "ask": 'End with two lines: "To: ..." with the name of the player you question, then "Question: ..." with your question.',
    "answer": 'End with a line "Answer: ..." holding what you say in reply.',
    "vote": 'End with a line "Vote: ..." holding exactly one name from the list.',
    "mcq": 'End with a line "Answer: ..." holding the letter of the correct option.',
    "choose": 'End with a line "Choice: ..." holding exactly one option from the list.',
    "describe": 'End with a line "Description: ..." holding your description (never the word itself).',
    "guess": 'End with a line "Guess: ..." holding only the word you guess.',
    "contribute": 'End with a line "Contribution: ..." holding one whole number.',
}

NAMES = ["Chief Wang", "Han Chengwu (Han the Attendant)", "Ann"]
REQUESTS = {
    "introduce": dict(kind="introduce"),
    "ask": dict(kind="ask", choices=NAMES),
    "answer": dict(kind="answer"),
    "vote": dict(kind="vote", choices=NAMES),
    "mcq": dict(kind="mcq", choices=["Poison", "Knife", "Rope"]),
    "mcq_multi": dict(kind="mcq", choices=["Poison", "Knife", "Rope", "Gun"], multi=True),
    "describe": dict(kind="describe"),
    "guess": dict(kind="guess"),
    "propose": dict(kind="propose", fields=[("Airline A", []), ("Airline B", []), ("Airline C", [])]),
    "choose": dict(kind="choose", choices=["Specific", "Vague"]),
    "contribute": dict(kind="contribute", max_value=20),
    "form": dict(kind="form", fields=[("Player 2 Specific", ["Yes", "No"]), ("Player 3 Fit", ["High", "Low", "unknown"])]),
}
REPLIES = {
    "introduce": ["I think.\nIntroduction: Hello all, I am Ann.\nVote: Bob", "nothing", "**Introduction:** \"Quoted hi\""],
    "ask": ["hmm\nTo: 2\nQuestion: where were you?", "To: Ann\nQuestion: x", "Question: no to", "To: Zed\nQuestion: where?"],
    "answer": ["Answer: I was home.", "Answer:"],
    "vote": ["Vote: Chief Wang", "Vote: 2", "Vote: Han Chengwu", "Vote: Bob", "I vote Ann"],
    "mcq": ["Answer: b) Knife", "Answer: d", "Answer: a, b", "Answer: none"],
    "mcq_multi": ["Answer: a, c", "Answer: a and d", "Answer: e"],
    "describe": ["Description: it is hot\nVote: x", "Description: \"a drink\""],
    "guess": ["Guess: \"coffee\"\nmore", "Guess:  "],
    "propose": ["Proposal: Airline A: 40%, Airline B: 30%, Airline C: 30%",
                "Proposal: Airline A: 40%, Airline B: 40%, Airline C: 30%", "Proposal: A 10"],
    "choose": ["Choice: Vague", "Choice: 1", "Choice: maybe"],
    "contribute": ["Contribution: $15", "Contribution: 25", "Contribution: lots"],
    "form": ["ok\nPlayer 2 Specific: Yes\nPlayer 3 Fit: Low", "Player 2 Specific: maybe\nPlayer 3 Fit: High"],
}
JSON_REPLIES = {
    "introduce": {"thought": "t", "introduction": "hello there all"},
    "ask": {"thought": "t", "to": "Ann", "question": "where were you?"},
    "vote": {"thought": "t", "vote": "Ann"},
    "mcq": {"thought": "t", "answer": "b"},
    "propose": {"thought": "t", "proposal": {"Airline A": 50, "Airline B": 25, "Airline C": 25}},
    "form": {"thought": "t", "Player 2 Specific": "Yes", "Player 3 Fit": "High"},
    "contribute": {"thought": "t", "contribution": 5},
    "guess": {"thought": "t", "guess": "tea"},
}


def _shown(value):
    return repr(sorted(value)) if isinstance(value, frozenset) else repr(value)


def snapshot() -> dict:
    """What the agent core makes of :data:`REQUESTS` and :data:`REPLIES`: choice list, format line,
    budgets, GBNF and JSON schema (with and without a thought), parses, JSON rendering, and the
    errors of choice requests without choices. Uses only names that 531ad79 had."""
    out: dict = {}
    for key, kw in REQUESTS.items():
        req = ActionRequest(actor="Ann", prompt="p", **kw)
        d = out[key] = {"choices": format_choices(req), "instruction": format_instruction(req)}
        for think in (True, False):
            d[f"budget_{think}"] = completion_budget(req, think)
            d[f"gbnf_{think}"] = reply_grammar(req, think)
            schema = reply_schema(req, think)
            d[f"schema_{think}"] = schema
            d[f"schema_order_{think}"] = list(schema["properties"])
        d["parses"] = []
        for reply in REPLIES[key]:
            try:
                value, why = parse_reply(req, reply)
                d["parses"].append(["ok", _shown(value), why])
            except ParseError as exc:
                d["parses"].append(["error", str(exc)])
        d["render"] = render_json_reply(req, True, json.dumps(JSON_REPLIES.get(key, {"thought": "t", "x": 1})))
        d["render_bad"] = render_json_reply(req, True, "not json")
    for kind in ("vote", "ask", "choose", "mcq"):
        req = ActionRequest(kind=kind, actor="Ann", prompt="p", choices=["x"])
        req.choices = [] if kind != "ask" else None
        errors = []
        for make in (reply_grammar, reply_schema):
            try:
                make(req, True)
                errors.append(None)
            except ValueError as exc:
                errors.append(str(exc))
        out[f"no_choices_{kind}"] = errors
    return out


def test_builtin_kinds_tables_equal_those_of_531ad79():
    from mas_agents.planners.base import KINDS, TAGS, action_kind
    assert tuple(KINDS) == OLD_KINDS
    assert dict(TAGS) == OLD_TAGS
    assert dict(MAX_TOKENS) == OLD_MAX_TOKENS
    assert {k: MAX_TOKENS_NO_THOUGHT[k] for k in OLD_KINDS} == {k: OLD_MAX_TOKENS_NO_THOUGHT.get(k, 128) for k in OLD_KINDS}
    assert tuple(k for k in OLD_KINDS if action_kind(k).forced) == OLD_FORCED
    for kind, line in OLD_FORMATS.items():
        req = ActionRequest(kind=kind, actor="Ann", prompt="p", choices=["x", "y"] if kind in ("ask", "vote", "choose", "mcq") else None)
        assert format_instruction(req) == line


def test_builtin_kinds_ask_read_constrain_and_budget_as_531ad79_did():
    import dataclasses

    from mas_agents.planners.base import action_kind, register_kind
    assert snapshot() == json.loads(SNAPSHOT.read_text())
    # and it is the registered record that answers: a replaced vote record changes the prompt line,
    # the budget and the forced move at once
    vote = action_kind("vote")
    register_kind(dataclasses.replace(vote, instruction=lambda r: "Say a name.", max_tokens_no_thought=5, forced=False),
                  replace=True)
    try:
        req = ActionRequest(kind="vote", actor="Ann", prompt="p", choices=["Bob"])
        assert format_instruction(req) == "Say a name." and completion_budget(req, False) == 5
        assert not action_kind("vote").forced
    finally:
        register_kind(vote, replace=True)
    assert format_instruction(req) == OLD_FORMATS["vote"] and completion_budget(req, False) == 24


# ---------------------------------------------------------------------------------------------
# a new kind: one registration, no edit of the agent core


@pytest.fixture
def bid_kind():
    """A ``bid`` kind: ``Bid: <whole number>`` of at most ``max_value``, registered for one test."""
    from mas_agents.action_kinds import literal, tagged_field
    from mas_agents.planners.base import ActionKind, register_kind, unregister_kind

    def parse(request, text):
        value, reasoning = tagged_field(text, "Bid")
        if not value.strip().isdigit():
            raise ParseError(f"bid {value!r} is not a whole number")
        amount = int(value)
        if request.max_value is not None and amount > request.max_value:
            raise ParseError(f"bid {amount} is over {request.max_value}")
        return amount, reasoning

    kind = register_kind(ActionKind(
        name="bid", tag="Bid", parse=parse,
        instruction=lambda r: f'End with a line "Bid: ..." holding a whole number from 0 to {r.max_value}.',
        grammar=lambda r: (f'{literal("Bid: ")} digits', ["digits ::= [0-9]{1,3}"]),
        schema=lambda r: {"bid": {"type": "integer", "minimum": 0, "maximum": r.max_value}},
        max_tokens=300, max_tokens_no_thought=12))
    yield kind
    unregister_kind("bid")


def test_a_registered_kind_plays_through_an_agent_with_a_fake_model(bid_kind):
    from mas_agents.planners.base import KINDS, TAGS
    from tests.toy import make_agent

    assert "bid" in KINDS and TAGS["bid"] == "Bid" and MAX_TOKENS["bid"] == 300
    seen_budgets, prompts = [], []

    def rule(messages):
        prompts.append(messages[-1].content)
        # the first reply is over the limit (a re-prompt), the second a legal bid
        return "I want it badly.\nBid: 99" if len(prompts) == 1 else "Fine.\nBid: 7"

    agent, rec, _ = make_agent(rule)
    agent.model.chat = (lambda orig: (lambda *a, **kw: (seen_budgets.append(kw["max_tokens"]), orig(*a, **kw))[1]))(agent.model.chat)
    action = agent.act(ActionRequest(kind="bid", actor="Ann", prompt="The auction of the knife is open.", max_value=10))
    assert action.valid and action.value == 7 and action.reasoning == "Fine."
    assert action.attempts == 2 and action.errors == ["bid 99 is over 10"]
    assert prompts[0].rstrip().endswith('End with a line "Bid: ..." holding a whole number from 0 to 10.')
    assert seen_budgets == [300, 300]                     # the murder mystery thinks first: max_tokens
    assert agent.stats == {"malformed_bid": 1, "recovered_after_reprompt": 1}
    assert rec.totals()["calls"] == 2

    req = ActionRequest(kind="bid", actor="Ann", prompt="p", max_value=10)
    assert completion_budget(req, False) == 12
    fmt = ReplyFormat(req, think=False)
    assert fmt.gbnf() == 'root ::= "Bid: " digits\ntext ::= [^\\n]{10,400}\ndigits ::= [0-9]{1,3}\n'
    assert fmt.schema()["properties"] == {"bid": {"type": "integer", "minimum": 0, "maximum": 10}}
    assert fmt.render('{"bid": 4}') == "Bid: 4"           # the default rendering: <tag>: <value>
    assert parse_reply(req, fmt.render('{"bid": 4}')) == (4, "")


def test_a_kind_without_a_grammar_is_refused_for_a_constrained_model_and_unregistered_kinds_stay_unknown(bid_kind):
    from mas_agents.planners.base import ActionKind, register_kind, unregister_kind
    register_kind(ActionKind(name="shout", tag="Shout", parse=lambda r, t: (t, ""), instruction=lambda r: "Shout."))
    try:
        with pytest.raises(ValueError, match="no reply grammar for action kind 'shout'"):
            reply_grammar(ActionRequest(kind="shout", actor="Ann", prompt="p"))
    finally:
        unregister_kind("shout")
    with pytest.raises(ValueError, match="unknown action kind 'shout'"):
        ActionRequest(kind="shout", actor="Ann", prompt="p")


def test_register_kind_refuses_a_second_kind_of_one_name_and_a_bad_tag(bid_kind):
    from mas_agents.planners.base import ActionKind, register_kind
    with pytest.raises(ValueError, match="'bid' is already registered"):
        register_kind(bid_kind)
    with pytest.raises(ValueError, match="must be a non-empty word"):
        register_kind(ActionKind(name="bad", tag="Bid:", parse=lambda r, t: (t, ""), instruction=lambda r: ""))
