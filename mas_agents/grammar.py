"""Reply grammars: the answer format of an action request as a llama.cpp GBNF grammar, or as a
JSON schema whose object is rendered back into the same tagged lines.

Local GGUF models (``local``, ``local:/path.gguf``) decode under the GBNF grammar (llama.cpp
constrained decoding), so the *format* of the reply is guaranteed (an optional one-line thought,
then the tagged line with a legal choice) while its *content* is still the model's choice.
The embedded SmolLM2-135M rarely follows a format from the prompt alone (a one-off probe on a
"Sin" vote prompt: 0 of 2 replies parsed without a grammar, 3 of 3 with it; a 3-round "Sin" game
under the grammar had 0 invalid actions), which would make most actions abstentions. Remote
servers get the same format in their own structured-output dialect (:class:`ReplyFormat`,
:mod:`mas_agents.remote`). Every reply, constrained or not, still goes through the strict parser
in :mod:`mas_agents.actions` (a reply cut off by ``max_tokens`` can still fail).
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


# ---------------------------------------------------------------------------------------------
# the same reply format for remote servers: GBNF, or a JSON schema whose object is rendered back
# into the tagged lines (so the strict parser reads exactly what it reads from a local model)

def _field_key(tag: str) -> str:
    """JSON key of a tagged line (``"Vote"`` -> ``"vote"``)."""
    return tag.lower()


def _letter_sets(n: int, multi: bool) -> list[str]:
    """Legal mcq answers as the parser reads them: one letter, or (``multi``) two in order."""
    letters = list(LETTERS[:n])
    if not multi:
        return letters
    return letters + [f"{a}, {b}" for i, a in enumerate(letters) for b in letters[i + 1:]]


def _text_schema(lo: int, hi: int) -> dict:
    # one line of lo..hi characters as a pattern: OpenAI's strict mode takes ``pattern`` but not
    # minLength/maxLength
    return {"type": "string", "pattern": f"^[^\\n]{{{lo},{hi}}}$"}


def reply_schema(request: ActionRequest, think: bool = True) -> dict:
    """JSON schema of the reply of ``request``: the same fields and limits as
    :func:`reply_grammar` (a thought of at most :data:`THOUGHT_CHARS` characters when ``think``,
    then one property per tagged line, choices as ``enum``), every property required, no others.

    Used for servers that take OpenAI's ``response_format: {"type": "json_schema"}`` but no
    grammar; :func:`render_json_reply` turns the object back into the tagged lines.

    Raises:
        ValueError: as :func:`reply_grammar` (no choices, unknown kind).
    """
    props: dict[str, dict] = {}
    if think:
        props["thought"] = _text_schema(1, THOUGHT_CHARS)
    kind = request.kind
    if kind in ("vote", "ask", "choose") and not request.choices:
        raise ValueError(f"a {kind} request needs choices")
    if kind in ("introduce", "answer", "describe"):
        props[_field_key(TAGS[kind])] = _text_schema(TEXT_MIN, TEXT_MAX)
    elif kind == "ask":
        props["to"] = {"type": "string", "enum": list(request.choices)}
        props["question"] = _text_schema(TEXT_MIN, TEXT_MAX)
    elif kind in ("vote", "choose"):
        props[_field_key(TAGS[kind])] = {"type": "string", "enum": list(request.choices)}
    elif kind == "mcq":
        n = len(request.choices or [])
        if n < 1:
            raise ValueError("an mcq request needs options")
        props["answer"] = {"type": "string", "enum": _letter_sets(n, request.multi)}
    elif kind == "guess":
        props["guess"] = _text_schema(1, 40)
    elif kind == "contribute":
        props["contribution"] = {"type": "integer", "minimum": 0, "maximum": 100}
    elif kind == "propose":
        names = [n for n, _ in request.fields or []]
        props["proposal"] = {"type": "object", "additionalProperties": False, "required": names,
                             "properties": {n: {"type": "integer", "minimum": 0, "maximum": 100} for n in names}}
    elif kind == "form":
        for tag, choices in request.fields or []:
            props[tag] = {"type": "string", "enum": list(choices)}
    else:
        raise ValueError(f"no reply schema for action kind {kind!r}")
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def _one_line(value: object) -> str:
    return " ".join(str(value).split())


def render_json_reply(request: ActionRequest, think: bool, text: str) -> str:
    """The tagged lines of a JSON reply that matches :func:`reply_schema`, or ``text`` unchanged.

    Only an object with exactly the schema's keys is rendered (values are put on their lines as
    they are; the strict parser then judges them, e.g. a name outside the choices). Anything else
    (not JSON, missing or extra keys) is returned as it came, so the parser rejects it and the
    usual re-prompt follows: nothing is ever picked out of free text.
    """
    import json

    try:
        obj = json.loads(text)
    except (ValueError, TypeError):
        return text
    schema = reply_schema(request, think)
    if not isinstance(obj, dict) or set(obj) != set(schema["properties"]):
        return text
    lines = [_one_line(obj["thought"])] if think else []
    kind = request.kind
    if kind == "ask":
        lines += [f"To: {_one_line(obj['to'])}", f"{TAGS['ask']}: {_one_line(obj['question'])}"]
    elif kind == "propose":
        shares = obj["proposal"]
        if not isinstance(shares, dict):
            return text
        lines.append(f"{TAGS['propose']}: " + ", ".join(f"{n}: {_one_line(shares.get(n))}%" for n, _ in request.fields or []))
    elif kind == "form":
        lines += [f"{tag}: {_one_line(obj[tag])}" for tag, _ in request.fields or []]
    else:
        lines.append(f"{TAGS[kind]}: {_one_line(obj[_field_key(TAGS[kind])])}")
    return "\n".join(lines)


class ReplyFormat:
    """The reply format of one action request, in every dialect a model may decode it under.

    Args:
        request: the action request.
        think: whether a one-line thought comes before the tagged line(s).

    ``gbnf()`` is the llama.cpp grammar (local models, llama.cpp / llama-cpp-python servers, and
    xgrammar-based servers); ``schema()`` the JSON schema (OpenAI-style ``response_format``);
    ``render(text)`` maps a JSON reply back to the tagged lines.
    """

    def __init__(self, request: ActionRequest, think: bool):
        self.request = request
        self.think = think

    def gbnf(self) -> str:
        """GBNF text (:func:`reply_grammar`)."""
        return reply_grammar(self.request, self.think)

    def schema(self) -> dict:
        """JSON schema (:func:`reply_schema`)."""
        return reply_schema(self.request, self.think)

    def render(self, text: str) -> str:
        """Tagged lines of a JSON reply (:func:`render_json_reply`)."""
        return render_json_reply(self.request, self.think, text)
