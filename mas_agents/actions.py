"""Typed action requests and strict parsing of model replies.

A game node asks an agent for one :class:`ActionRequest`; the agent answers with an
:class:`Action` holding the parsed value and the raw model text (the request and action types are the
block contract, :mod:`mas_agents.planners.base`). Parsing is strict: each kind expects one tagged line (``Vote: <name>``,
``Answer: <letter>``...). A reply that does not parse raises :class:`ParseError`; the agent
re-prompts once and then records an invalid action (abstain). A legal move is never scraped out
of free prose: a name merely *mentioned* somewhere in a reply is not a vote.

How each kind is read is its :class:`mas_agents.planners.base.ActionKind` record's ``parse`` (the built-in
kinds and the reading helpers: :mod:`mas_agents.action_kinds`).
"""

from __future__ import annotations

from typing import Any

from mas_agents.action_kinds import ParseError, clean_free_text
from mas_agents.planners.base import ActionRequest, action_kind

_clean_free_text = clean_free_text


def parse_reply(request: ActionRequest, text: str) -> tuple[Any, str]:
    """Parse a model reply for ``request``; return ``(value, reasoning)``: the kind's registered
    parser (:attr:`mas_agents.planners.base.ActionKind.parse`).

    Formats of the built-in kinds (the prompts in :mod:`mas_agents.prompts` ask for exactly these):
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
        ParseError: the reply does not follow the format, or no kind ``request.kind`` is registered.
    """
    try:
        kind = action_kind(request.kind)
    except ValueError:
        raise ParseError(f"no parser for action kind {request.kind!r}") from None
    return kind.parse(request, text)
