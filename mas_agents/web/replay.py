"""Replays from ``events.jsonl`` alone: display rows for the three games, and the call log.

An event (``mas_agents/events.py``) is ``{step, phase, round, actor, kind, content, visible_to,
llm_call_ids, data}``; a private event has ``visible_to`` other than ``["*"]`` (a player's own
planning: ``[actor]``; the harness's own records: ``["game"]``). :func:`rows` turns events into
:class:`Row` objects the templates render, grouped into sections by :func:`section_of`:

* murder mystery (PLAYER* Appendix A.2, ``graphs/mmg/graph.py``): setup, introductions, questions
  and answers by round, the private votes, the accusation with the truth; private planning
  events of PLAYER* and ``pgm`` (sensor readings, target choices, suspect lists, relation maps,
  beliefs) carry their data;
* Who is Spy (WiS §3.1, ``graphs/wis/graph.py``): words (private), each round's descriptions with
  fouls, votes (private until the tally), vote results, the outcome;
* MAgIC (``graphs/magic/graph.py``, ``graphs/magic/events.py``): clues, guesses, proposals and
  their votes, moves and their reveals, belief questionnaires and self-awareness answers
  (private), the outcome.

Text is never marked safe here: the templates escape every field (agents write prompt
injections on purpose).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mas_agents.events import EVERYONE

#: Kinds rendered as the game's headline moments (bold, own colour).
_MAJOR = {"accuse", "outcome", "vote_result", "foul", "guess", "pd_reveal", "pg_reveal"}


@dataclass
class Row:
    """One event as the replay shows it.

    Attributes:
        step: the event's ``step``. section: the heading it belongs under.
        actor, kind, round: as in the event. text: the line to show (plain text, escaped later).
        private: not visible to everyone. owner: whose private event (``visible_to`` joined).
        css: extra CSS classes (``major``, ``foul``...). details: pretty JSON of ``data`` worth
        showing (private planning payloads, vote counts), or "". calls: LLM call ids.
    """

    step: int
    section: str
    actor: str
    kind: str
    round: int
    text: str
    private: bool = False
    owner: str = ""
    css: str = ""
    details: str = ""
    calls: list[str] = field(default_factory=list)


def load_events(path: Path) -> list[dict[str, Any]]:
    """The events of ``path``, tolerating a half-written last line (a game in progress appends
    to the file while it is read); other malformed lines are skipped. Missing file: []."""
    path = Path(path)
    if not path.is_file():
        return []
    out = []
    # split on "\n" only: str.splitlines() also splits on U+2028/U+2029/U+0085, which JSON text
    # written with ensure_ascii=False holds unescaped, and would break (hide) such an event
    for line in path.read_text(encoding="utf-8", errors="replace").split("\n"):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if isinstance(e, dict):
            out.append(e)
    return out


def game_of(events: list[dict[str, Any]], kind_hint: str = "") -> str:
    """``"mmg"``, ``"wis"`` or ``"magic"``: ``kind_hint`` when it is one, else from the kinds."""
    if kind_hint in ("mmg", "wis", "magic"):
        return kind_hint
    kinds = {e.get("kind") for e in events}
    if kinds & {"describe", "word"}:
        return "wis"
    if kinds & {"clue", "proposal", "pd_choice", "contribution", "self_awareness"}:
        return "magic"
    return "mmg"


def section_of(game: str, e: dict[str, Any]) -> str:
    """The heading an event belongs under in a replay of ``game``."""
    phase, rnd = e.get("phase", ""), int(e.get("round") or 0)
    if game == "mmg":
        if phase == "setup":
            return "Setup"
        if phase == "introduction":
            return "Introductions"
        if phase in ("questioning", "planning") and rnd > 0:
            return f"Round {rnd}"
        if phase == "planning":
            return "Planning before the questions"
        if phase == "voting":
            return "The vote (private ballots)"
        return "The truth" if phase == "outcome" else phase.capitalize()
    if game == "wis":
        if phase == "setup":
            return "Setup"
        if phase == "outcome":
            return "Outcome"
        return f"Round {rnd}" if rnd else phase.capitalize()
    # MAgIC
    if phase == "setup":
        return "Setup"
    if phase == "outcome":
        return "Outcome"
    label = {"clues": "Clues", "negotiation": "Negotiation", "moves": "Moves", "voting": "Vote", "guess": "Guess",
             "planning": "Planning", "gameplay": "Planning"}.get(phase, phase.capitalize())
    return f"{label}, round {rnd}" if rnd else label


def _text(game: str, e: dict[str, Any]) -> str:
    k, a, c, d = e.get("kind"), e.get("actor", ""), str(e.get("content") or ""), e.get("data") or {}
    if game == "mmg":
        if k == "introduce":
            return f"{a} introduces themself: {c}"
        if k == "ask":
            return f"{a} asks {d.get('target', '?')}: {d.get('question') or c}"
        if k == "answer":
            return f"{a} answers {d.get('asker', '')}: {c}"
        if k == "vote":
            return f"{a} {c}" if c else f"{a} votes {d.get('choice') or 'nobody (abstained)'}"
    if game == "wis":
        if k == "describe":
            return f"{a}: {c}" if c else f"{a}: (no description)"
        if k == "vote":
            return f"{a} votes for {d.get('target') or 'nobody (abstained)'}"
    if game == "magic":
        if k == "clue":
            return f"{a} gives the clue: {c}"
        if k in ("proposal", "proposal_vote", "pd_choice", "contribution"):
            label = {"proposal": "proposes", "proposal_vote": "votes for the proposal of", "pd_choice": "chooses",
                     "contribution": "contributes"}[k]
            return f"{a} {label} {c}"
        if k == "belief":
            pred = d.get("predicted") or {}
            return (f"{a}'s beliefs: suspects {d.get('suspect') or '(no answer)'}; thinks "
                    + ", ".join(f"{p} suspects {s or '?'}" for p, s in pred.items()))
        if k == "self_awareness":
            return f"{a} says: {c}" + ("" if d.get("correct") is None else (" (right)" if d.get("correct") else " (wrong)"))
        if k == "vote":
            return f"{a} votes for {d.get('target') or c or 'nobody'}"
    if a and a != "game" and k not in ("start", "script", "word"):
        return f"{a} [{k}]: {c}"
    return c


def _details(e: dict[str, Any], private: bool) -> str:
    d = dict(e.get("data") or {})
    for noisy in ("reasoning", "call_ids", "raw"):
        if noisy in d and not private:
            d.pop(noisy)
    if not d or (not private and e.get("kind") not in ("vote_result", "accuse", "outcome", "pd_reveal", "pg_reveal")):
        return ""
    return json.dumps(d, ensure_ascii=False, indent=1, default=str)[:6000]


def rows(events: list[dict[str, Any]], game: str, start: int = 0) -> list[Row]:
    """Display rows of ``events[start:]`` (see :class:`Row`). Section headings are computed with
    the events before ``start`` in view, so rows fetched later (live) continue the sections."""
    out = []
    for e in events[start:]:
        vis = e.get("visible_to") or []
        private = EVERYONE not in vis
        k = str(e.get("kind") or "")
        css = " ".join(x for x in ("major" if k in _MAJOR else "", "foul" if (e.get("data") or {}).get("foul") else "",
                                   f"k-{k}") if x)
        out.append(Row(step=int(e.get("step", len(out) + start)), section=section_of(game, e),
                       actor=str(e.get("actor", "")), kind=k, round=int(e.get("round") or 0), text=_text(game, e),
                       private=private, owner=", ".join(map(str, vis)) if private else "", css=css,
                       details=_details(e, private), calls=[str(x) for x in e.get("llm_call_ids") or []]))
    return out


def players_of(events: list[dict[str, Any]]) -> list[str]:
    """The players of a game, in the order the events first name them as an actor or owner."""
    names: dict[str, None] = {}
    for e in events:
        for n in [e.get("actor")] + list(e.get("visible_to") or []):
            if n and n not in ("game", EVERYONE):
                names.setdefault(str(n), None)
    return list(names)


def truth(events: list[dict[str, Any]], game: str) -> list[str]:
    """What the game hid, as lines for the end of a replay: the murderer(s) and roles, the
    words and the spy, the MAgIC roles and secret; [] while the game has not ended."""
    lines: list[str] = []
    ended = any(e.get("kind") in ("accuse", "outcome") for e in events)
    if not ended:
        return lines
    if game == "mmg":
        for e in events:
            if e.get("kind") == "accuse":
                d = e.get("data") or {}
                lines.append(f"Victim {d.get('victim')}: murderer {', '.join(d.get('murderers') or [])}; "
                             f"the vote accused {d.get('accused') or 'no one'} "
                             f"({'correct' if d.get('correct') else 'wrong'}).")
        # a script event is the game's, shown to its character only (visible_to = [character])
        roles = [f"{(e.get('visible_to') or ['?'])[0]}: {(e.get('data') or {}).get('role')} "
                 f"({(e.get('data') or {}).get('agent', '')})" for e in events if e.get("kind") == "script"]
        if roles:
            lines.append("Roles: " + "; ".join(roles))
    elif game == "wis":
        words = [f"{(e.get('data') or {}).get('player')}: {(e.get('data') or {}).get('word')}"
                 for e in events if e.get("kind") == "word"]
        oc = next((e.get("data") or {} for e in events if e.get("kind") == "outcome"), {})
        if oc:
            lines.append(f"The spy was {oc.get('spy')}; winner: {oc.get('winner')} ({oc.get('end_reason')}).")
            lines.append("Scores: " + ", ".join(f"{p} {s:g}" if isinstance(s, (int, float)) else f"{p} {s}"
                                                for p, s in (oc.get("scores") or {}).items()))
        if words:
            lines.append("Words: " + "; ".join(words))
    else:
        setup = next((e.get("data") or {} for e in events if e.get("kind") == "setup"), {})
        if setup.get("roles"):
            lines.append("Roles: " + "; ".join(f"{p}: {r}" for p, r in setup["roles"].items()))
        secret = {k: setup[k] for k in ("topic", "code", "civilian_word", "undercover_word") if k in setup}
        if secret:
            lines.append("Secret: " + ", ".join(f"{k} {v}" for k, v in secret.items()))
        oc = next((e for e in events if e.get("kind") == "outcome"), None)
        if oc:
            lines.append(f"Outcome: {oc.get('content') or json.dumps(oc.get('data'), ensure_ascii=False)}")
    return lines


def load_calls(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The call log of a run and its totals ``{calls, input_tokens, output_tokens, latency_s,
    retries, failures}``; a missing file gives ``([], zeros)``."""
    calls = load_events(path)   # the same tolerant JSON-lines reading
    tot = {"calls": len(calls), "input_tokens": sum(int(c.get("input_tokens") or 0) for c in calls),
           "output_tokens": sum(int(c.get("output_tokens") or 0) for c in calls),
           "latency_s": round(sum(float(c.get("latency_s") or 0) for c in calls), 3),
           "retries": sum(int(c.get("retries") or 0) for c in calls),
           "failures": sum(1 for c in calls if c.get("ok") is False)}
    return calls, tot
