import pytest

from mas_agents.planners.base import ActionRequest
from mas_agents.grammar import reply_grammar

llama_cpp = pytest.importorskip("llama_cpp")

NAMES = ["Chief Wang", 'Mr. "Quote" Back\\slash', "Han Chengwu (Han the Attendant)"]


@pytest.mark.parametrize("req", [
    ActionRequest(kind="introduce", actor="X", prompt="p"),
    ActionRequest(kind="answer", actor="X", prompt="p"),
    ActionRequest(kind="ask", actor="X", prompt="p", choices=NAMES),
    ActionRequest(kind="vote", actor="X", prompt="p", choices=NAMES),
    ActionRequest(kind="choose", actor="X", prompt="p", choices=["Yes", "No"]),
    ActionRequest(kind="mcq", actor="X", prompt="p", choices=["x", "y", "z"]),
    ActionRequest(kind="mcq", actor="X", prompt="p", choices=["x", "y", "z", "w", "v"], multi=True),
])
def test_every_mmg_grammar_compiles_in_llama_cpp(req):
    g = reply_grammar(req)
    llama_cpp.LlamaGrammar.from_string(g, verbose=False)  # raises on a syntax error


def test_vote_grammar_lists_exactly_the_choices_escaped():
    g = reply_grammar(ActionRequest(kind="vote", actor="X", prompt="p", choices=NAMES))
    assert 'name ::= "Chief Wang" | "Mr. \\"Quote\\" Back\\\\slash" | "Han Chengwu (Han the Attendant)"' in g
    assert 'root ::= think "Vote: " name' in g


def test_mcq_letters_follow_option_count():
    g = reply_grammar(ActionRequest(kind="mcq", actor="X", prompt="p", choices=["x", "y", "z"]))
    assert "letter ::= [a-c]" in g and "(\", \" letter)?" not in g
    g = reply_grammar(ActionRequest(kind="mcq", actor="X", prompt="p", choices=list("vwxyz"), multi=True))
    assert "letter ::= [a-e]" in g and "(\", \" letter)?" in g


def test_choice_kinds_need_choices():
    with pytest.raises(ValueError):
        reply_grammar(ActionRequest(kind="vote", actor="X", prompt="p", choices=[]))


def test_thought_line_fits_every_completion_budget_at_one_token_per_char():
    from mas_agents.agents import MAX_TOKENS
    from mas_agents.grammar import THOUGHT_CHARS
    # thought + newline + the longest tag ("Introduction: ") and a few tokens of the value
    assert THOUGHT_CHARS + 1 + len("Introduction: ") + 16 <= min(MAX_TOKENS.values())


@pytest.mark.parametrize("req", [
    ActionRequest(kind="form", actor="P", prompt="x", fields=[("Suspect", ["Player 1", "Player 2"]), ("B", ["x", "y"])]),
    ActionRequest(kind="propose", actor="P", prompt="x", fields=[("Airline A", []), ("Airline B", []), ("Airline C", [])]),
    ActionRequest(kind="contribute", actor="P", prompt="x", max_value=40),
    ActionRequest(kind="guess", actor="P", prompt="x"),
    ActionRequest(kind="describe", actor="P", prompt="x"),
])
def test_new_kinds_have_grammars_llama_cpp_accepts(req):
    from llama_cpp import LlamaGrammar
    for think in (True, False):
        LlamaGrammar.from_string(reply_grammar(req, think=think), verbose=False)
