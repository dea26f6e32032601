"""The built-in action kinds, one :class:`mas_agents.planners.base.ActionKind` record each, and the helpers
a kind's functions are made of.

Every kind of move says here, in one place, how it is asked (the answer-format line that ends the
prompt), read (the strict parser: one tagged line such as ``Vote: <name>``, never a choice scraped
out of free prose), constrained (the llama.cpp GBNF grammar and the JSON schema of its reply, and
how a JSON reply is put back into the tagged lines) and budgeted (``max_tokens`` with and without a
thought line). The agent core dispatches through :func:`mas_agents.planners.base.action_kind`:
:func:`mas_agents.actions.parse_reply`, :mod:`mas_agents.grammar`, :func:`mas_agents.prompts.format_instruction`
and :func:`mas_agents.agents.completion_budget` import this module, so the built-in kinds are
registered before any of them runs.

A game with a new kind of move calls :func:`mas_agents.planners.base.register_kind` once, in its own
module; no module here changes. :func:`tagged_kind` makes the common shape, one tagged line::

    from mas_agents.action_kinds import tagged_kind
    from mas_agents.planners.base import register_kind

    register_kind(tagged_kind("accuse", "Accusation",
                              'End with a line "Accusation: ..." holding exactly one name from the list.',
                              value="choice", max_tokens_no_thought=24))

after which ``ActionRequest(kind="accuse", choices=[...])`` is prompted, parsed, constrained and
budgeted like a vote. Measured for
ARCHITECTURE.md: files touched to add an action kind, 5 before (``planners/base.py`` KINDS/TAGS,
``actions.parse_reply``, the two token tables of ``agents.py``, ``grammar.py``; ``prompts.FORMATS``
made it 6), 0 after (one registration in the game's own module).

The prompt texts, grammars and budgets are those of the code before this module (commit 531ad79;
``tests/mas_agents/test_action_kinds_registry.py`` compares them). The module is a little over 400
lines because it holds all eleven built-in kinds and the reading and grammar helpers they share:
having each kind whole in one place is its point.
"""

from __future__ import annotations

import re
import string
from typing import Any, Callable

from mas_agents.planners.base import ActionKind, ActionRequest, register_kind

LETTERS = string.ascii_lowercase

#: Bounds of a free-text utterance, in characters.
TEXT_MIN, TEXT_MAX = 10, 400


class ParseError(ValueError):
    """A model reply did not match the format its action kind requires."""


# ---------------------------------------------------------------------------------------------
# reading a reply


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s.strip().strip(".,;:!?\"'*`[]【】").strip()).casefold()


def tagged_field(text: str, tag: str) -> tuple[str, str]:
    """Find the LAST line starting with ``tag:`` and return ``(value, text before it)``.

    The value runs to the end of the reply (a multi-line answer is kept). Markdown emphasis
    around the tag (``**Vote:**``) is tolerated.

    Raises:
        ParseError: no such line.
    """
    pat = re.compile(rf"^[ \t>*_#-]*{re.escape(tag)}[ \t]*[*_]*[:：][*_]*[ \t]*", re.IGNORECASE | re.MULTILINE)
    matches = list(pat.finditer(text))
    if not matches:
        raise ParseError(f"no line starting with '{tag}:'")
    m = matches[-1]
    value = text[m.end():].strip()
    if not value:
        raise ParseError(f"'{tag}:' is empty")
    return value, text[: m.start()].strip()


def match_choice(value: str, choices: list[str]) -> str:
    """Map a stated choice to exactly one legal choice.

    Accepted: the full choice text, its number in the shown list (``2`` or ``2. Name``), or the
    part of a name before a parenthesis (``Han Chengwu`` for
    ``Han Chengwu (Han the Attendant ...)``), case-insensitively, with surrounding punctuation
    ignored. Only the first line of ``value`` is read.

    Raises:
        ParseError: nothing or more than one choice matches.
    """
    first = value.strip().splitlines()[0] if value.strip() else ""
    m = re.match(r"^\(?(\d+)\)?[.)]?\s*(.*)$", first.strip())
    if m and m.group(1):
        idx = int(m.group(1)) - 1
        if 0 <= idx < len(choices):
            rest = _norm(m.group(2))
            if not rest or _norm(choices[idx]).startswith(rest) or rest.startswith(_norm(choices[idx].split("(")[0])):
                return choices[idx]
        raise ParseError(f"choice number {m.group(1)} is not one of 1..{len(choices)}")
    v = _norm(first)
    exact = [c for c in choices if _norm(c) == v]
    if len(exact) == 1:
        return exact[0]
    short = [c for c in choices if "(" in c and _norm(c.split("(")[0]) == v]
    if len(short) == 1:
        return short[0]
    raise ParseError(f"{first!r} is not one of: {', '.join(choices)}")


_LETTERS_RE = re.compile(r"^\(?([a-z])\)?(?:\s*(?:,|and|&|/|\s)\s*\(?([a-z])\)?)*(?=$|[.):\s])", re.IGNORECASE)


def parse_letters(value: str, n_options: int, multi: bool) -> frozenset[str]:
    """Parse the letters of a multiple-choice answer such as ``b``, ``(b)``, ``b) Poisoned``,
    ``a, c``.

    Only the start of the first line is read: one letter (``multi=False``) or a list of
    letters separated by commas, spaces, "and", "/" (``multi=True``), each within the first
    ``n_options`` letters.

    Raises:
        ParseError: no letter at the start, a letter out of range, or several letters for a
            single-choice question.
    """
    first = value.strip().splitlines()[0].strip() if value.strip() else ""
    m = _LETTERS_RE.match(first)
    if not m:
        raise ParseError(f"answer {first[:60]!r} does not start with an option letter")
    letters = re.findall(r"(?<![a-z])([a-z])(?![a-z])", m.group(0).lower())
    legal = set(LETTERS[:n_options])
    bad = [x for x in letters if x not in legal]
    if bad:
        raise ParseError(f"letter(s) {', '.join(bad)} not among a..{LETTERS[n_options - 1]}")
    chosen = frozenset(letters)
    if not multi and len(chosen) != 1:
        raise ParseError("a single-choice question needs exactly one letter")
    return chosen


def form_fields(request: ActionRequest, text: str) -> tuple[dict[str, str], list[str], str]:
    """Read each field of a ``form`` reply on its own: the last line ``<tag>: <choice>`` per
    field, its choice matched strictly (:func:`match_choice`).

    Returns:
        ``(answers, errors, reasoning)``: tag -> choice for the fields given in format, one
        error per field that was not (``"<tag>: <why>"``), and the text before the first
        field's line.
    """
    answers: dict[str, str] = {}
    errors: list[str] = []
    reasoning = ""
    for i, (tag, choices) in enumerate(request.fields or []):
        try:
            value, before = tagged_field(text, tag)
            answers[tag] = match_choice(value, choices)
        except ParseError as exc:
            errors.append(f"{tag}: {exc}")
            continue
        if i == 0:
            reasoning = before
    return answers, errors, reasoning


def clean_free_text(value: str) -> str:
    """Drop a trailing tag block the model may append (``Vote: ...`` after an answer) and
    a pair of quotes around the whole text; keep the text otherwise as said."""
    cut = re.split(r"\n\s*(?:To|Question|Answer|Vote|Introduction|Description)\s*:", value, maxsplit=1)[0].strip()
    # a pair of quotes around the whole text only: a quote that closes a quotation at the end
    # ('my word is "Mali"') stays
    if len(cut) >= 2 and cut[0] == cut[-1] == '"' and '"' not in cut[1:-1]:
        cut = cut[1:-1].strip()
    return cut


# ---------------------------------------------------------------------------------------------
# grammar and schema pieces


def literal(s: str) -> str:
    """A GBNF string literal."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def alternatives(options: list[str]) -> str:
    """A GBNF alternation of the literal ``options``."""
    return " | ".join(literal(o) for o in options)


def text_schema(lo: int, hi: int) -> dict:
    """JSON schema of one line of ``lo..hi`` characters, as a pattern: OpenAI's strict mode takes
    ``pattern`` but not minLength/maxLength."""
    return {"type": "string", "pattern": f"^[^\\n]{{{lo},{hi}}}$"}


def letter_sets(n: int, multi: bool) -> list[str]:
    """Legal mcq answers as the parser reads them: one letter, or (``multi``) two in order."""
    letters = list(LETTERS[:n])
    if not multi:
        return letters
    return letters + [f"{a}, {b}" for i, a in enumerate(letters) for b in letters[i + 1:]]


def one_line(value: object) -> str:
    """``value`` as one line (runs of whitespace, line breaks included, become one space)."""
    return " ".join(str(value).split())


# ---------------------------------------------------------------------------------------------
# the common shapes of a kind


def _reads_text(tag: str) -> Callable[[ActionRequest, str], tuple[Any, str]]:
    def parse(request: ActionRequest, text: str) -> tuple[Any, str]:
        value, reasoning = tagged_field(text, tag)
        return clean_free_text(value), reasoning
    return parse


def _reads_choice(tag: str) -> Callable[[ActionRequest, str], tuple[Any, str]]:
    def parse(request: ActionRequest, text: str) -> tuple[Any, str]:
        value, reasoning = tagged_field(text, tag)
        return match_choice(value, request.choices or []), reasoning
    return parse


def tagged_kind(name: str, tag: str, instruction: str, *, value: str = "text", **more: Any) -> ActionKind:
    """An :class:`ActionKind` whose reply is one tagged line ``<tag>: <value>``, the shape of most
    kinds: ``value="text"`` (an utterance of ``TEXT_MIN..TEXT_MAX`` characters, trailing tag
    lines and surrounding quotes dropped) or ``value="choice"`` (exactly one of the request's
    choices, by name or number; a forced move when one is left). ``more`` overrides any other
    field (``parse``, ``grammar``, ``max_tokens_no_thought``...).

    Raises:
        ValueError: ``value`` is neither ``"text"`` nor ``"choice"``.
    """
    if value == "text":
        base: dict[str, Any] = dict(
            parse=_reads_text(tag),
            grammar=lambda r: (f"{literal(tag + ': ')} text", []),
            schema=lambda r: {tag.lower(): text_schema(TEXT_MIN, TEXT_MAX)})
    elif value == "choice":
        base = dict(
            parse=_reads_choice(tag), forced=True, needs_choices=True,
            grammar=lambda r: (f"{literal(tag + ': ')} name", [f"name ::= {alternatives(r.choices)}"]),
            schema=lambda r: {tag.lower(): {"type": "string", "enum": list(r.choices)}})
    else:
        raise ValueError(f"tagged_kind {name!r}: value {value!r} is neither 'text' nor 'choice'")
    return ActionKind(**{"name": name, "tag": tag, "instruction": lambda r: instruction, **base, **more})


# ---------------------------------------------------------------------------------------------
# the kinds that are not one plain tagged line


def _parse_ask(request: ActionRequest, text: str) -> tuple[Any, str]:
    question, before = tagged_field(text, "Question")
    target_text, reasoning = tagged_field(before, "To")
    target = match_choice(target_text, request.choices or [])
    return {"target": target, "question": clean_free_text(question)}, reasoning


def _parse_mcq(request: ActionRequest, text: str) -> tuple[Any, str]:
    value, reasoning = tagged_field(text, "Answer")
    return parse_letters(value, len(request.choices or []), request.multi), reasoning


def _mcq_instruction(request: ActionRequest) -> str:
    if request.multi:
        return 'End with a line "Answer: ..." holding the letters of your choices, at most two, separated by a comma.'
    return 'End with a line "Answer: ..." holding the letter of the correct option.'


def _mcq_options(request: ActionRequest) -> int:
    n = len(request.choices or [])
    if n < 1:
        raise ValueError("an mcq request needs options")
    return n


def _mcq_grammar(request: ActionRequest) -> tuple[str, list[str]]:
    n = _mcq_options(request)
    body = f'{literal("Answer: ")} letter' + (' (", " letter)?' if request.multi else "")
    return body, [f"letter ::= [{LETTERS[0]}-{LETTERS[n - 1]}]"]


def _parse_guess(request: ActionRequest, text: str) -> tuple[Any, str]:
    value, reasoning = tagged_field(text, "Guess")
    first = value.splitlines()[0].strip().strip('"').strip()
    if not first:
        raise ParseError("'Guess:' is empty")
    return first, reasoning


def _parse_contribute(request: ActionRequest, text: str) -> tuple[Any, str]:
    value, reasoning = tagged_field(text, "Contribution")
    m = re.match(r"^\$?\s*(\d+)\b", value.strip())
    if not m:
        raise ParseError(f"contribution {value[:40]!r} is not a whole number")
    amount = int(m.group(1))
    if request.max_value is not None and amount > request.max_value:
        raise ParseError(f"contribution {amount} is more than the {request.max_value} you have left")
    return amount, reasoning


def _share_names(request: ActionRequest) -> list[str]:
    return [n for n, _ in request.fields or []]


def _parse_propose(request: ActionRequest, text: str) -> tuple[Any, str]:
    value, reasoning = tagged_field(text, "Proposal")
    shares = []
    for n in _share_names(request):
        m = re.search(rf"{re.escape(n)}\s*[:=]?\s*(\d+(?:\.\d+)?)\s*%", value, re.IGNORECASE)
        if not m:
            raise ParseError(f"no percentage for {n!r} in {value[:80]!r}")
        shares.append(float(m.group(1)))
    if abs(sum(shares) - 100) > 0.5:
        raise ParseError(f"the shares sum to {sum(shares):g}, not 100")
    return tuple(shares), reasoning


def _propose_instruction(request: ActionRequest) -> str:
    # placeholders, not numbers: the embedded model copied a numeric example verbatim, so
    # every player proposed the same split and every negotiation "agreed" in round 1
    example = ", ".join(f"{n}: <{chr(97 + i)}>%" for i, n in enumerate(_share_names(request)))
    return f'End with a line "Proposal: {example}" with your own numbers (they must sum to 100).'


def _propose_grammar(request: ActionRequest) -> tuple[str, list[str]]:
    parts = ' ", " '.join(f'{literal(n + ": ")} pct "%"' for n in _share_names(request))
    return f'{literal("Proposal: ")} {parts}', ['pct ::= [0-9] | [1-9] [0-9] | "100"']


def _propose_schema(request: ActionRequest) -> dict[str, dict]:
    names = _share_names(request)
    return {"proposal": {"type": "object", "additionalProperties": False, "required": names,
                         "properties": {n: {"type": "integer", "minimum": 0, "maximum": 100} for n in names}}}


def _propose_render(request: ActionRequest, obj: dict) -> list[str] | None:
    shares = obj["proposal"]
    if not isinstance(shares, dict):
        return None
    return ["Proposal: " + ", ".join(f"{n}: {one_line(shares.get(n))}%" for n in _share_names(request))]


def _parse_form(request: ActionRequest, text: str) -> tuple[Any, str]:
    answers, errors, reasoning = form_fields(request, text)
    if errors:
        more = f" (and {len(errors) - 1} more field(s))" if len(errors) > 1 else ""
        raise ParseError(errors[0] + more)
    return answers, reasoning


def _form_instruction(request: ActionRequest) -> str:
    lines = "\n".join(f"{tag}: <one of: {', '.join(choices)}>" for tag, choices in request.fields or [])
    return f"End with exactly these lines, one answer each:\n{lines}"


def _form_grammar(request: ActionRequest) -> tuple[str, list[str]]:
    rules, lines = [], []
    for i, (tag, choices) in enumerate(request.fields or []):
        rules.append(f"f{i} ::= {alternatives(choices)}")
        lines.append(f'{literal(tag + ": ")} f{i}')
    return ' "\\n" '.join(lines), rules


def _form_extra_tokens(request: ActionRequest) -> int:
    # each field's "<tag>: <longest choice>" line at one token per 3 characters: a batched reading
    # pass has a line per (character, sensor); with the fixed budget alone, 15 clue lines were cut
    # at 96 tokens (finish_reason "length"), re-prompted, cut again, and read as "unknown"
    lines = sum(len(tag) + 2 + max((len(c) for c in choices), default=0) + 1 for tag, choices in request.fields or [])
    return -(-lines // 3)


_NUM_RULE = 'num ::= [0-9] | [1-9] [0-9] | "100"'

#: The built-in kinds, in :data:`mas_agents.planners.base.BUILTIN_KINDS` order. Budgets in tokens: 256 with a
#: thought line for every kind (the grammar's thought line, ``mas_agents.grammar.THOUGHT_CHARS``
#: characters, must fit even at one token per character); without one, a description is at most
#: 400 characters (Who is Spy), a vote one name.
BUILTIN = (
    tagged_kind("introduce", "Introduction", 'End with a line "Introduction: ..." holding what you say to everyone.'),
    ActionKind(
        name="ask", tag="Question", parse=_parse_ask, needs_choices=True,
        instruction=lambda r: 'End with two lines: "To: ..." with the name of the player you question, then "Question: ..." with your question.',
        grammar=lambda r: (f'"To: " name "\\n" {literal("Question: ")} text', [f"name ::= {alternatives(r.choices)}"]),
        schema=lambda r: {"to": {"type": "string", "enum": list(r.choices)}, "question": text_schema(TEXT_MIN, TEXT_MAX)},
        render=lambda r, obj: [f"To: {one_line(obj['to'])}", f"Question: {one_line(obj['question'])}"]),
    tagged_kind("answer", "Answer", 'End with a line "Answer: ..." holding what you say in reply.'),
    tagged_kind("vote", "Vote", 'End with a line "Vote: ..." holding exactly one name from the list.', value="choice",
                max_tokens_no_thought=24),
    ActionKind(
        name="mcq", tag="Answer", parse=_parse_mcq, instruction=_mcq_instruction, lettered=True,
        grammar=_mcq_grammar, schema=lambda r: {"answer": {"type": "string", "enum": letter_sets(_mcq_options(r), r.multi)}},
        max_tokens_no_thought=16),
    tagged_kind("describe", "Description", 'End with a line "Description: ..." holding your description (never the word itself).'),
    ActionKind(
        name="guess", tag="Guess", parse=_parse_guess,
        instruction=lambda r: 'End with a line "Guess: ..." holding only the word you guess.',
        grammar=lambda r: (f'{literal("Guess: ")} word', ["word ::= [^\\n]{1,40}"]),
        schema=lambda r: {"guess": text_schema(1, 40)}, max_tokens_no_thought=24),
    ActionKind(
        name="propose", tag="Proposal", parse=_parse_propose, instruction=_propose_instruction,
        grammar=_propose_grammar, schema=_propose_schema, render=_propose_render, max_tokens_no_thought=48),
    tagged_kind("choose", "Choice", 'End with a line "Choice: ..." holding exactly one option from the list.', value="choice",
                max_tokens_no_thought=24),
    ActionKind(
        name="contribute", tag="Contribution", parse=_parse_contribute,
        instruction=lambda r: 'End with a line "Contribution: ..." holding one whole number.',
        grammar=lambda r: (f'{literal("Contribution: ")} num', [_NUM_RULE]),
        schema=lambda r: {"contribution": {"type": "integer", "minimum": 0, "maximum": 100}}, max_tokens_no_thought=16),
    ActionKind(
        name="form", tag=None, parse=_parse_form, instruction=_form_instruction, grammar=_form_grammar,
        schema=lambda r: {tag: {"type": "string", "enum": list(choices)} for tag, choices in r.fields or []},
        render=lambda r, obj: [f"{tag}: {one_line(obj[tag])}" for tag, _ in r.fields or []],
        max_tokens_no_thought=96, extra_tokens=_form_extra_tokens,
        partial=lambda r, text: form_fields(r, text)[0]),
)

for _kind in BUILTIN:
    register_kind(_kind, replace=True)
