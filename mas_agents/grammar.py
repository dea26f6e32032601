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

from mas_agents.action_kinds import TEXT_MAX, TEXT_MIN, one_line, text_schema
from mas_agents.planners.base import ActionKind, ActionRequest, action_kind

#: Longest private thought line, in characters (keeps chain-of-thought short on small models).
#: It must fit in the smallest completion budget even at one token per character (gibberish
#: and CJK text tokenise that way), or the reply is cut before its tagged line: at 300 with a
#: 128-token vote budget, 3 of 4 votes in a 1-round ocot game on SmolLM2 were lost that way.
THOUGHT_CHARS = 200


def _kind_for(request: ActionRequest, what: str) -> ActionKind:
    """The registered kind of ``request``, checked for the choices its format needs.

    Raises:
        ValueError: no kind of that name, a kind without ``what`` (``"grammar"`` or ``"schema"``),
            or a choice kind whose request has no choices.
    """
    try:
        kind = action_kind(request.kind)
    except ValueError:
        raise ValueError(f"no reply {what} for action kind {request.kind!r}") from None
    if kind.needs_choices and not request.choices:
        raise ValueError(f"a {request.kind} request needs choices")
    if getattr(kind, what) is None:
        raise ValueError(f"no reply {what} for action kind {request.kind!r}")
    return kind


def reply_grammar(request: ActionRequest, think: bool = True) -> str:
    """GBNF text for the reply format of ``request`` (see :func:`mas_agents.actions.parse_reply`):
    an optional thought line, then the kind's registered grammar
    (:attr:`mas_agents.planners.base.ActionKind.grammar`).

    Args:
        request: the action request (its kind, choices and ``multi`` flag fix the grammar).
        think: allow one line of thought before the tagged line (chain-of-thought).

    Raises:
        ValueError: a choice action with no choices, or a kind with no grammar.
    """
    kind = _kind_for(request, "grammar")
    head = 'root ::= think ' if think else "root ::= "
    rules = []
    if think:
        rules.append(f'think ::= [^\\n] [^\\n]{{0,{THOUGHT_CHARS}}} "\\n"')
    rules.append(f"text ::= [^\\n]{{{TEXT_MIN},{TEXT_MAX}}}")
    body, more = kind.grammar(request)
    return "\n".join([head + body] + rules + list(more)) + "\n"


# ---------------------------------------------------------------------------------------------
# the same reply format for remote servers: GBNF, or a JSON schema whose object is rendered back
# into the tagged lines (so the strict parser reads exactly what it reads from a local model)

def reply_schema(request: ActionRequest, think: bool = True) -> dict:
    """JSON schema of the reply of ``request``: the same fields and limits as
    :func:`reply_grammar` (a thought of at most :data:`THOUGHT_CHARS` characters when ``think``,
    then one property per tagged line, choices as ``enum``: the kind's registered
    :attr:`mas_agents.planners.base.ActionKind.schema`), every property required, no others.

    Used for servers that take OpenAI's ``response_format: {"type": "json_schema"}`` but no
    grammar; :func:`render_json_reply` turns the object back into the tagged lines.

    Raises:
        ValueError: as :func:`reply_grammar` (no choices, unknown kind).
    """
    kind = _kind_for(request, "schema")
    props: dict[str, dict] = {}
    if think:
        props["thought"] = text_schema(1, THOUGHT_CHARS)
    props.update(kind.schema(request))
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def render_json_reply(request: ActionRequest, think: bool, text: str) -> str:
    """The tagged lines of a JSON reply that matches :func:`reply_schema`, or ``text`` unchanged.

    Only an object with exactly the schema's keys is rendered (values are put on their lines as
    they are; the strict parser then judges them, e.g. a name outside the choices). Anything else
    (not JSON, missing or extra keys, an object the kind's ``render`` refuses) is returned as it
    came, so the parser rejects it and the usual re-prompt follows: nothing is ever picked out of
    free text.
    """
    import json

    try:
        obj = json.loads(text)
    except (ValueError, TypeError):
        return text
    schema = reply_schema(request, think)
    if not isinstance(obj, dict) or set(obj) != set(schema["properties"]):
        return text
    kind = action_kind(request.kind)
    if kind.render is not None:
        lines = kind.render(request, obj)
        if lines is None:
            return text
    else:
        lines = [f"{kind.tag}: {one_line(obj[str(kind.tag).lower()])}"]
    return "\n".join(([one_line(obj["thought"])] if think else []) + list(lines))


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
