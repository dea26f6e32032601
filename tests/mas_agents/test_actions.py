import pytest

from mas_agents.actions import parse_reply
from mas_agents.planners.base import ActionRequest
from mas_agents.action_kinds import ParseError, match_choice, parse_letters

NAMES = ["Zhang Villager", "Chief Wang", "Han Chengwu (Han the Attendant or Han the Crew Member)"]


def req(kind, choices=None, multi=False):
    return ActionRequest(kind=kind, actor="X", prompt="p", choices=choices, multi=multi)


@pytest.mark.parametrize("text,expected", [
    ("Vote: Chief Wang", "Chief Wang"),
    ("I think so.\nVote: chief wang.", "Chief Wang"),
    ("**Vote:** 2", "Chief Wang"),
    ("Vote: 2. Chief Wang", "Chief Wang"),
    ("Vote: Han Chengwu", NAMES[2]),
])
def test_vote_accepts_names_and_numbers(text, expected):
    assert parse_reply(req("vote", NAMES), text)[0] == expected


@pytest.mark.parametrize("text", [
    "I suspect Chief Wang did it.",          # a name in prose is not a vote
    "Vote: the chief",                       # not a choice
    "Vote: 7",                               # out of range
    "Vote:",                                 # empty
    "Vote: Wang",                            # partial name
])
def test_vote_rejects_prose_and_unknown(text):
    with pytest.raises(ParseError):
        parse_reply(req("vote", NAMES), text)


def test_last_tag_wins_and_reasoning_is_kept():
    value, reasoning = parse_reply(req("vote", NAMES), "Vote: Zhang Villager\nOn second thought...\nVote: Chief Wang")
    assert value == "Chief Wang"
    assert "second thought" in reasoning


def test_ask_needs_target_and_question():
    v, _ = parse_reply(req("ask", NAMES), "hmm\nTo: Zhang Villager\nQuestion: Where were you at 9pm?")
    assert v == {"target": "Zhang Villager", "question": "Where were you at 9pm?"}
    with pytest.raises(ParseError):
        parse_reply(req("ask", NAMES), "Question: Where were you?")
    with pytest.raises(ParseError):
        parse_reply(req("ask", NAMES), "To: Nobody\nQuestion: Where were you?")


def test_free_text_answer_drops_trailing_tags():
    v, _ = parse_reply(req("answer"), "Answer: I was home.\nVote: Chief Wang")
    assert v == "I was home."
    with pytest.raises(ParseError):
        parse_reply(req("answer"), "I was home.")


@pytest.mark.parametrize("value,multi,expected", [
    ("b", False, {"b"}), ("(b)", False, {"b"}), ("B) Poisoned", False, {"b"}), ("c.", False, {"c"}),
    ("a, c", True, {"a", "c"}), ("a and d", True, {"a", "d"}), ("b", True, {"b"}),
])
def test_letters(value, multi, expected):
    assert parse_letters(value, 4, multi) == frozenset(expected)


@pytest.mark.parametrize("value,multi", [
    ("e", False),            # out of range for 4 options
    ("a, c", False),         # two letters on single choice
    ("The answer is b", False),
    ("", False),
    ("Poisoned", False),
])
def test_letters_rejects(value, multi):
    with pytest.raises(ParseError):
        parse_letters(value, 4, multi)


def test_match_choice_ambiguity_is_an_error():
    with pytest.raises(ParseError):
        match_choice("A", ["A", "a"])


def test_unknown_kind_rejected():
    with pytest.raises(ValueError):
        ActionRequest(kind="dance", actor="X", prompt="p")


def test_choose_reads_one_option():
    r = req("choose", ["Positive", "Neutral", "Negative"])
    assert parse_reply(r, "They sound calm.\nChoice: Neutral")[0] == "Neutral"
    assert parse_reply(r, "Choice: 3")[0] == "Negative"
    with pytest.raises(ParseError):
        parse_reply(r, "Choice: happy")


def test_form_propose_contribute_guess_parse_strictly():
    from mas_agents.actions import parse_reply
    from mas_agents.planners.base import ActionRequest
    from mas_agents.action_kinds import ParseError
    form = ActionRequest(kind="form", actor="P", prompt="x",
                         fields=[("Suspect", ["Player 1", "Player 2"]), ("Player 1 suspects", ["Player 2", "Player 3"])])
    assert parse_reply(form, "ok\nSuspect: Player 2\nPlayer 1 suspects: Player 3")[0] == {
        "Suspect": "Player 2", "Player 1 suspects": "Player 3"}
    with pytest.raises(ParseError):
        parse_reply(form, "Suspect: Player 2")                       # a field is missing
    with pytest.raises(ParseError):
        parse_reply(form, "Suspect: Player 9\nPlayer 1 suspects: Player 3")
    prop = ActionRequest(kind="propose", actor="P", prompt="x", fields=[("Airline A", []), ("Airline B", []), ("Airline C", [])])
    assert parse_reply(prop, "Proposal: Airline A: 50%, Airline B: 25.5%, Airline C: 24.5%")[0] == (50.0, 25.5, 24.5)
    with pytest.raises(ParseError, match="Airline C"):
        parse_reply(prop, "Proposal: Airline A: 50%, Airline B: 50%")
    with pytest.raises(ParseError, match="sum to 80, not 100"):
        parse_reply(prop, "Proposal: Airline A: 10%, Airline B: 25%, Airline C: 45%")
    con = ActionRequest(kind="contribute", actor="P", prompt="x", max_value=30)
    assert parse_reply(con, "Contribution: 30")[0] == 30
    with pytest.raises(ParseError, match="more than the 30"):
        parse_reply(con, "Contribution: 31")
    with pytest.raises(ParseError, match="whole number"):
        parse_reply(con, "Contribution: some")
    g = ActionRequest(kind="guess", actor="P", prompt="x")
    assert parse_reply(g, 'Thinking.\nGuess: "Grape"\nmore')[0] == "Grape"
    with pytest.raises(ValueError, match="needs fields"):
        ActionRequest(kind="form", actor="P", prompt="x")


@pytest.mark.parametrize("text,expected", [
    ('Description: "A big body of salt water."', "A big body of salt water."),
    ('Description: It is where "Nemo" lives', 'It is where "Nemo" lives'),
    ('Description: Your secret word is "Mali"', 'Your secret word is "Mali"'),   # seen from a real server
    ('Description: "Calm" one day, "wild" the next', '"Calm" one day, "wild" the next'),
])
def test_free_text_drops_only_a_pair_of_quotes_around_the_whole_text(text, expected):
    assert parse_reply(req("describe"), text)[0] == expected
