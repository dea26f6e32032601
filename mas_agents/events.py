"""Game events: the one record every game step leaves behind.

Every game node appends events; an agent's observation is built only from the events visible
to it, and every metric is computed from events, so any run can be re-scored from its
``events.jsonl`` (DESIGN.md, "Core contracts: Events").

An event is a plain JSON-able dict (it lives in LangGraph state, which is snapshotted every
step) with the keys::

    step          int    position in the run's event list (assigned when the run is written)
    phase         str    e.g. "setup", "introduction", "questioning", "voting", "outcome"
    round         int    questioning round (1-based), 0 outside rounds
    actor         str    character name, or "game" for the game master
    kind          str    e.g. "script", "introduce", "ask", "answer", "vote", "accuse", "invalid"
    content       str    what was said or done, as the visible text
    visible_to    list   names that can see it; ["*"] = everyone
    llm_call_ids  list   ids of the LLM calls (llm_calls.jsonl) that produced it
    data          dict   structured payload (target, victim, choice, valid flag, ...)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from mas_agents.rundir import read_jsonl, write_jsonl

EVERYONE = "*"


def make_event(
    *,
    phase: str,
    actor: str,
    kind: str,
    content: str,
    visible_to: Iterable[str] = (EVERYONE,),
    round: int = 0,
    llm_call_ids: Iterable[str] = (),
    data: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Build one event dict (see the module docstring for the fields).

    ``step`` is left at -1 and assigned by :func:`number_events` when the run is written,
    because simultaneous nodes (LangGraph ``Send`` fan-out) cannot agree on a counter.
    """
    return {
        "step": -1,
        "phase": phase,
        "round": int(round),
        "actor": actor,
        "kind": kind,
        "content": content,
        "visible_to": list(visible_to),
        "llm_call_ids": list(llm_call_ids),
        "data": dict(data or {}),
    }


def is_visible(event: dict[str, Any], viewer: str) -> bool:
    """True if ``viewer`` (a character name) may see ``event``."""
    vis = event.get("visible_to") or []
    return EVERYONE in vis or viewer in vis


def visible_events(events: Iterable[dict[str, Any]], viewer: str) -> list[dict[str, Any]]:
    """The events ``viewer`` may see, in order."""
    return [e for e in events if is_visible(e, viewer)]


def number_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return copies of ``events`` with ``step`` = position in the list (0-based)."""
    return [{**e, "step": i} for i, e in enumerate(events)]


def write_events(path: Path, events: list[dict[str, Any]]) -> None:
    """Write ``events`` (numbered) to ``path`` as JSON lines, replacing the file atomically."""
    write_jsonl(path, number_events(events))


def read_events(path: Path) -> list[dict[str, Any]]:
    """Read an ``events.jsonl`` file.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: a line is not valid JSON (the message names the file and line).
    """
    return [e for _, e in read_jsonl(path, "a JSON event")]
