"""Typed action requests and strict parsing of model replies.

A game node asks an agent for one :class:`ActionRequest`; the agent answers with an
:class:`Action` holding the parsed value and the raw model text (the request and action types are the
block contract, :mod:`planners.base`). Parsing is strict: each kind expects one tagged line (``Vote: <name>``,
``Answer: <letter>``...). A reply that does not parse raises :class:`ParseError`; the agent
re-prompts once and then records an invalid action (abstain). A legal move is never scraped out
of free prose: a name merely *mentioned* somewhere in a reply is not a vote.
"""

from __future__ import annotations

import re
import string
from typing import Any

from planners.base import TAGS, Action, ActionRequest  # noqa: F401  (Action, ActionRequest: the contract, re-exported)

LETTERS = string.ascii_lowercase


class ParseError(ValueError):
    """A model reply did not match the format its action kind requires."""


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


def parse_reply(request: ActionRequest, text: str) -> tuple[Any, str]:
    """Parse a model reply for ``request``; return ``(value, reasoning)``.

    Formats (the prompts in :mod:`mas_agents.prompts` ask for exactly these):
        introduce: ``Introduction: <text>``
        ask:       ``To: <name>`` then ``Question: <text>`` (name from ``choices``)
        answer:    ``Answer: <text>``
        vote:      ``Vote: <name>`` (from ``choices``)
        mcq:       ``Answer: <letter>`` or, when ``multi``, ``Answer: <letter>, <letter>``
        choose:    ``Choice: <option>`` (from ``choices``; planner blocks use it for sensor
                   readings and other internal choices)
        describe:  ``Description: <text>`` (Who is Spy: a clue about one's word)
        guess:     ``Guess: <word>`` (the first line of the value)
        contribute: ``Contribution: <whole number>`` (0 .. ``max_value``)
        propose:   ``Proposal: Airline A: 40%, Airline B: 30%, Airline C: 30%`` (one percentage
                   per name in ``fields``, summing to 100 ± 0.5: a split that does not is
                   malformed and gets the usual re-prompt)
        form:      one ``<tag>: <choice>`` line per field, in order


    Raises:
        ParseError: the reply does not follow the format.
    """
    kind = request.kind
    if kind == "ask":
        question, before = tagged_field(text, TAGS["ask"])
        target_text, reasoning = tagged_field(before, "To")
        target = match_choice(target_text, request.choices or [])
        return {"target": target, "question": _clean_free_text(question)}, reasoning
    if kind in ("introduce", "answer", "describe"):
        value, reasoning = tagged_field(text, TAGS[kind])
        return _clean_free_text(value), reasoning
    if kind in ("vote", "choose"):
        value, reasoning = tagged_field(text, TAGS[kind])
        return match_choice(value, request.choices or []), reasoning
    if kind == "mcq":
        value, reasoning = tagged_field(text, TAGS["mcq"])
        return parse_letters(value, len(request.choices or []), request.multi), reasoning
    if kind == "guess":
        value, reasoning = tagged_field(text, TAGS["guess"])
        first = value.splitlines()[0].strip().strip('"').strip()
        if not first:
            raise ParseError("'Guess:' is empty")
        return first, reasoning
    if kind == "contribute":
        value, reasoning = tagged_field(text, TAGS["contribute"])
        m = re.match(r"^\$?\s*(\d+)\b", value.strip())
        if not m:
            raise ParseError(f"contribution {value[:40]!r} is not a whole number")
        amount = int(m.group(1))
        if request.max_value is not None and amount > request.max_value:
            raise ParseError(f"contribution {amount} is more than the {request.max_value} you have left")
        return amount, reasoning
    if kind == "propose":
        value, reasoning = tagged_field(text, TAGS["propose"])
        names = [n for n, _ in request.fields or []]
        shares = []
        for n in names:
            m = re.search(rf"{re.escape(n)}\s*[:=]?\s*(\d+(?:\.\d+)?)\s*%", value, re.IGNORECASE)
            if not m:
                raise ParseError(f"no percentage for {n!r} in {value[:80]!r}")
            shares.append(float(m.group(1)))
        if abs(sum(shares) - 100) > 0.5:
            raise ParseError(f"the shares sum to {sum(shares):g}, not 100")
        return tuple(shares), reasoning
    if kind == "form":
        answers, errors, reasoning = form_fields(request, text)
        if errors:
            more = f" (and {len(errors) - 1} more field(s))" if len(errors) > 1 else ""
            raise ParseError(errors[0] + more)
        return answers, reasoning
    raise ParseError(f"no parser for action kind {kind!r}")


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


def _clean_free_text(value: str) -> str:
    """Drop a trailing tag block the model may append (``Vote: ...`` after an answer) and
    a pair of quotes around the whole text; keep the text otherwise as said."""
    cut = re.split(r"\n\s*(?:To|Question|Answer|Vote|Introduction|Description)\s*:", value, maxsplit=1)[0].strip()
    # a pair of quotes around the whole text only: a quote that closes a quotation at the end
    # ('my word is "Mali"') stays
    if len(cut) >= 2 and cut[0] == cut[-1] == '"' and '"' not in cut[1:-1]:
        cut = cut[1:-1].strip()
    return cut
