"""Reply grammars: the answer format of an action request as a llama.cpp GBNF grammar.

Local GGUF models (``local``, ``local:/path.gguf``) decode under this grammar (llama.cpp
constrained decoding), so the *format* of the reply is guaranteed (an optional one-line thought,
then the tagged line with a legal choice) while its *content* is still the model's choice.
The embedded SmolLM2-135M rarely follows a format from the prompt alone (a one-off probe on a
"Sin" vote prompt: 0 of 2 replies parsed without a grammar, 3 of 3 with it; a 3-round "Sin" game
under the grammar had 0 invalid actions), which would make most actions abstentions. Remote models get the same format in the prompt and no grammar.
Every reply, constrained or not, still goes through the strict parser in
:mod:`mas_agents.actions` (a reply cut off by ``max_tokens`` can still fail).
"""

from __future__ import annotations

from mas_agents.actions import LETTERS, TAGS, ActionRequest

#: Longest private thought line, in characters (keeps chain-of-thought short on small models).
#: It must fit in the smallest completion budget even at one token per character (gibberish
#: and CJK text tokenise that way), or the reply is cut before its tagged line: at 300 with a
#: 128-token vote budget, 3 of 4 votes in a 1-round ocot game on SmolLM2 were lost that way.
THOUGHT_CHARS = 200
#: Bounds of a free-text utterance, in characters.
TEXT_MIN, TEXT_MAX = 10, 400


def _lit(s: str) -> str:
    """A GBNF string literal."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _alternatives(options: list[str]) -> str:
    return " | ".join(_lit(o) for o in options)


def reply_grammar(request: ActionRequest, think: bool = True) -> str:
    """GBNF text for the reply format of ``request`` (see :func:`mas_agents.actions.parse_reply`).

    Args:
        request: the action request (its kind, choices and ``multi`` flag fix the grammar).
        think: allow one line of thought before the tagged line (chain-of-thought).

    Raises:
        ValueError: a choice action with no choices, or a kind with no grammar.
    """
    head = 'root ::= think ' if think else "root ::= "
    rules = []
    if think:
        rules.append(f'think ::= [^\\n] [^\\n]{{0,{THOUGHT_CHARS}}} "\\n"')
    rules.append(f"text ::= [^\\n]{{{TEXT_MIN},{TEXT_MAX}}}")
    kind = request.kind
    if kind in ("vote", "ask", "choose") and not request.choices:
        raise ValueError(f"a {kind} request needs choices")
    if kind == "introduce":
        body = f'{_lit(TAGS["introduce"] + ": ")} text'
    elif kind in ("answer", "describe"):
        body = f'{_lit(TAGS[kind] + ": ")} text'
    elif kind == "ask":
        rules.append(f"name ::= {_alternatives(request.choices)}")
        body = f'"To: " name "\\n" {_lit(TAGS["ask"] + ": ")} text'
    elif kind in ("vote", "choose"):
        rules.append(f"name ::= {_alternatives(request.choices)}")
        body = f'{_lit(TAGS[kind] + ": ")} name'
    elif kind == "mcq":
        n = len(request.choices or [])
        if n < 1:
            raise ValueError("an mcq request needs options")
        rules.append(f"letter ::= [{LETTERS[0]}-{LETTERS[n - 1]}]")
        body = f'{_lit(TAGS["mcq"] + ": ")} letter' + (' (", " letter)?' if request.multi else "")
    elif kind == "guess":
        rules.append('word ::= [^\\n]{1,40}')
        body = f'{_lit(TAGS["guess"] + ": ")} word'
    elif kind == "contribute":
        rules.append('num ::= [0-9] | [1-9] [0-9] | "100"')
        body = f'{_lit(TAGS["contribute"] + ": ")} num'
    elif kind == "propose":
        names = [n for n, _ in request.fields or []]
        rules.append('pct ::= [0-9] | [1-9] [0-9] | "100"')
        parts = ' ", " '.join(f'{_lit(n + ": ")} pct "%"' for n in names)
        body = f'{_lit(TAGS["propose"] + ": ")} {parts}'
    elif kind == "form":
        lines = []
        for i, (tag, choices) in enumerate(request.fields or []):
            rules.append(f"f{i} ::= {_alternatives(choices)}")
            lines.append(f'{_lit(tag + ": ")} f{i}')
        body = ' "\\n" '.join(lines)
    else:
        raise ValueError(f"no reply grammar for action kind {kind!r}")
    return "\n".join([head + body] + rules) + "\n"
