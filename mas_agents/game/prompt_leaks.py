"""What a seat's prompts hold that they must not: another seat's hidden information (d. of
:mod:`mas_agents.game.conformance_kit`) and a forged line outside a quoted utterance (e.). Read
from one finished game directory: ``events.jsonl``, ``llm_calls.jsonl`` and the prompt log
(``llm_prompts.jsonl[.gz]``, :func:`mas_agents.prompt_log.read_prompts`). No model, no pytest.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mas_agents.events import read_events
from mas_agents.game.fake_chat import FORGED
from mas_agents.prompt_log import read_prompts
from mas_agents.utterance import unquoted

__all__ = ["MIN_LEAK_CHARS", "MIN_VALUE_CHARS", "hidden_leaks", "hidden_value_leaks", "forged_lines"]


def _calls_and_prompts(game: Path, what: str) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The call log's rows and the prompt log (by call id) of ``game``.

    Raises:
        AssertionError: calls were made but the game recorded no prompts (``record_prompts`` off).
    """
    calls = [json.loads(line) for line in (game / "llm_calls.jsonl").read_text(encoding="utf-8").splitlines()
             if line.strip()]
    prompts = read_prompts(game)
    if calls and not prompts:
        raise AssertionError(f"{game}: no prompt log to check {what}")
    return calls, prompts


#: Shortest line of an event's content that :func:`hidden_leaks` looks for (shorter ones, such
#: as a player's name, are in every prompt anyway).
MIN_LEAK_CHARS = 16


def hidden_leaks(game: Path) -> list[str]:
    """Lines of hidden event content that a seat's prompt holds: for every event whose
    ``visible_to`` does not include ``"*"``, each line of its ``content`` at least
    :data:`MIN_LEAK_CHARS` long, and every seat that made a model call but is neither in that
    ``visible_to`` nor the event's actor, a prompt of that seat (system and user messages, from
    the prompt log) holding the line is a leak, unless the line was not news: it is in a prompt
    made before the event (any seat's: the game's own wording, a listed option), or in the content
    of an event that seat may see (said to it another way).

    Then the short leaks a line misses (a word, a role alone): :func:`hidden_value_leaks`.

    Returns one line per leak (the seat, the call, the line or value, the event); ``[]`` when none.

    Raises:
        AssertionError: the game recorded no prompts (``record_prompts`` off): nothing to read.
    """
    calls, prompts = _calls_and_prompts(game, "hidden information against")
    at = {c["call_id"]: i for i, c in enumerate(calls)}
    texts = ["\n".join(str(m.get("content", "")) for m in (prompts.get(c["call_id"], {}).get("messages") or [])
                       if m.get("role") != "assistant") for c in calls]
    by_seat: dict[str, list[int]] = {}
    for i, c in enumerate(calls):
        by_seat.setdefault(str(c.get("actor")), []).append(i)
    events = read_events(game / "events.jsonl")
    seen = {s: "\n".join(str(e.get("content") or "") for e in events
                         if "*" in (e.get("visible_to") or []) or s in (e.get("visible_to") or []))
            for s in by_seat}
    leaks = []
    now = -1                       # the last call made by the time of the event
    for e in events:
        mine = [at[c] for c in e.get("llm_call_ids") or [] if c in at]
        now = max([now, *mine])
        shown: set[Any] = set(e.get("visible_to") or []) | {e.get("actor")}
        if "*" in shown:
            continue
        for line in {ln.strip() for ln in str(e.get("content") or "").splitlines()}:
            if len(line) < MIN_LEAK_CHARS:
                continue
            for seat, idx in by_seat.items():
                if seat in shown or line in seen[seat]:
                    continue
                hit = next((i for i in idx if line in texts[i]), None)
                if hit is None or any(line in texts[i] for i in range(now + 1)):
                    continue
                leaks.append(f"{seat}'s prompt (call {calls[hit]['call_id']}) holds {line[:80]!r} of event "
                             f"{e.get('step')} ({e.get('kind')}, visible to {sorted(shown - {None})})")
    return leaks + hidden_value_leaks(events, calls, texts, by_seat, at)


#: Shortest ``data`` string value that :func:`hidden_value_leaks` looks for (a word such as "spy").
MIN_VALUE_CHARS = 3


def _strings(v: Any) -> set[str]:
    """The string values in ``v`` (an event's ``data``: dicts and lists walked), stripped."""
    if isinstance(v, str):
        return {v.strip()}
    if isinstance(v, dict):
        return set().union(*(_strings(x) for x in v.values()))
    if isinstance(v, (list, tuple)):
        return set().union(*(_strings(x) for x in v))
    return set()


def _has(value: str, text: str) -> bool:
    """Whether ``value`` occurs in ``text`` as whole words (case-insensitive; "apple" not in "pineapple")."""
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE) is not None


def hidden_value_leaks(events: list[dict[str, Any]], calls: list[dict[str, Any]], texts: list[str], by_seat: dict[str, list[int]],
                       at: dict[str, int]) -> list[str]:
    """The short leak that :func:`hidden_leaks`'s line check misses: a ``data`` string value of a
    hidden event (a WiS word, a role: at least :data:`MIN_VALUE_CHARS` long), found as whole words
    in the prompt of a seat that made a model call and is neither in the event's ``visible_to``
    nor its actor.

    The rule for what a seat may legitimately have in its prompt, so that a value found there is
    no leak:

    * the value is in the content or ``data`` of an event the seat may see (a public event, one
      shown to it, its own) logged before that prompt: e.g. two civilians dealt the same word, a
      word said aloud (a word revealed at the game's end does not excuse an earlier prompt);
    * it is a seat's name (the actors of the events: the table is public);
    * it is the game's wording: in any prompt made before the event (as in :func:`hidden_leaks`),
      or in a prompt line that every seat which called the model had (the rules text, the list of
      roles; a game's fixed text is the same for every seat, a seat's secret is not).

    Known limit: a value that the game writes into one line of every seat's prompt looks like
    the game's wording and is not reported.

    Args:
        events: the game's events in order; calls: the call log rows in order (``call_id``,
        ``actor``); texts: each call's prompt (system and user messages); by_seat: each seat's
        call indices; at: ``call_id`` -> index.

    Returns one line per (seat, value, event); ``[]`` when none.
    """
    names = {str(e.get("actor")) for e in events if e.get("actor")}
    lines_of = {s: {ln.strip() for i in idx for ln in texts[i].splitlines() if ln.strip()} for s, idx in by_seat.items()}
    common = "\n".join(set.intersection(*lines_of.values())) if len(lines_of) > 1 else ""
    when, now = [], -1             # per event: the last call made by its time (it is news from the next call on)
    for e in events:
        now = max([now, *(at[c] for c in e.get("llm_call_ids") or [] if c in at)])
        when.append(now)

    def told(seat: str, value: str, call: int) -> bool:
        """Whether an event the seat may see, logged before its call ``call``, holds ``value``."""
        return any(when[k] < call and ("*" in (v.get("visible_to") or []) or seat in (v.get("visible_to") or [])
                                       or v.get("actor") == seat)
                   and _has(value, str(v.get("content") or "") + "\n" + "\n".join(_strings(v.get("data"))))
                   for k, v in enumerate(events))

    leaks, found = [], set()
    for k, e in enumerate(events):
        shown: set[Any] = set(e.get("visible_to") or []) | {e.get("actor")}
        if "*" in shown:
            continue
        for value in sorted(_strings(e.get("data"))):
            if len(value) < MIN_VALUE_CHARS or value in names or _has(value, common) \
                    or any(_has(value, texts[i]) for i in range(when[k] + 1)):
                continue
            for seat, idx in by_seat.items():
                if seat in shown or (seat, value) in found:
                    continue
                hit = next((i for i in idx if _has(value, texts[i]) and not told(seat, value, i)), None)
                if hit is not None:
                    found.add((seat, value))
                    leaks.append(f"{seat}'s prompt (call {calls[hit]['call_id']}) holds {value[:80]!r} of event "
                                 f"{e.get('step')} ({e.get('kind')} data, visible to {sorted(shown - {None})})")
    return leaks



def forged_lines(game: Path) -> tuple[list[str], int]:
    """The lines of a game's prompts (system and user messages, from the prompt log) that hold a
    forged line (:data:`mas_agents.game.fake_chat.FORGED`) outside every quoted utterance
    (:func:`mas_agents.utterance.unquoted`): a seat's words that left their quotation and may pass
    for the host (``Host:``), a judge (``Judge:``) or another seat (a line starting with its
    name). Returns ``(one line per such prompt line: the seat, the call, the line; the number of
    prompts holding a forgery inside a quotation)`` (the second says the forgeries reached the
    other seats at all)."""
    calls, prompts = _calls_and_prompts(game, "for forged lines")
    out, quoted = [], 0
    for c in calls:
        text = "\n".join(str(m.get("content", "")) for m in (prompts.get(c["call_id"], {}).get("messages") or [])
                         if m.get("role") != "assistant")
        bad = [line for line in text.splitlines() if FORGED in unquoted(line)]
        out += [f"{c.get('actor')}'s prompt (call {c['call_id']}) holds a forged line: {line[:160]!r}" for line in bad]
        quoted += FORGED in text and not bad
    return out, quoted


