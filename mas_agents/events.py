"""Game events: the one record every game step leaves behind.

Every game node appends events; an agent's observation is built only from the events visible
to it, and every metric is computed from events, so any run can be re-scored from its
``events.jsonl``.

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

Kinds every game shares have one payload shape each, built here (:func:`vote_result_data`);
a game's own kinds and payloads are documented beside its rules (``graphs/<game>/events.py`` or
its ``graph.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, TypedDict

from mas_agents import appender, jsonl
from mas_agents.rundir import read_jsonl, write_jsonl, write_lines

EVERYONE = "*"

#: The version of the events format above, written to every game's ``config.json`` as
#: ``events_format`` (:func:`mas_agents.game.runner.run`); a run without the field has format 1.
#: Raise it when an event's keys or a shared payload change meaning, so that re-scoring an older
#: run (``mas rerun --rescore``) reads it or refuses it with the version it needs.
EVENTS_FORMAT = 1


class VoteResult(TypedDict):
    """The one payload of a ``vote_result`` event, in every game.

    Attributes:
        votes: voter -> the name voted for, or None (abstained / unreadable); ``{}`` when the
            observer was not shown the ballots (a WiS protocol player hears only who is out).
        counts: name -> valid votes received (``{}`` when not shown).
        out: the player voted out / accused, or None (a tie, or no valid vote).
        tie: True when the top count was shared (no one out because of it).
    """

    votes: dict[str, str | None]
    counts: dict[str, int]
    out: str | None
    tie: bool


def vote_result_data(out: str | None, *, votes: Mapping[str, str | None] | None = None,
                     counts: Mapping[str, int] | None = None, tie: bool | None = None) -> VoteResult:
    """Build the :class:`VoteResult` payload (names as str, counts as int).

    Args:
        out: the player voted out / accused, or None.
        votes: voter -> target or None; counts: name -> votes received (``{}`` when not shown).
        tie: default "no one out although someone got a vote" (plurality with a shared top:
            WiS §3.1, MAgIC §3; the murder mystery's per-victim accusation is its own ``accuse``
            event).

    Raises:
        ValueError, TypeError: a count that is not a whole number.
    """
    counts = {str(k): int(v) for k, v in (counts or {}).items()}
    if tie is None:
        tie = out is None and any(v > 0 for v in counts.values())
    return {"votes": dict(votes or {}), "counts": counts, "out": out, "tie": bool(tie)}


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


def follow_events(path: Path, states: Iterable[Mapping[str, Any]],
                  watch: Callable[[Callable[[list[dict[str, Any]]], None]], None] | None = None) -> dict[str, Any]:
    """Write a game's events to ``path`` as its graph produces them, then whole at the end.

    ``states`` is the graph's stream of full states (LangGraph ``stream_mode="values"``), whose
    ``events`` list only grows (the ``operator.add`` reducer): each state's new events are
    appended, numbered by position as :func:`write_events` numbers them, so a game in progress can
    be watched (``mas serve``); a reader may see a half-written last line. At the end the file is
    rewritten atomically by :func:`write_events`.

    ``watch`` (a game's :attr:`mas_agents.game.contract.Table.watch`) is called once, before the first state,
    with ``publish(events)``: a game whose step makes several moves (the WiS round's descriptions)
    publishes each move's events as it is made, so a watcher sees every move, not every step. The
    events published during a step must be the first events that step adds to the state, in the
    same order; the state's events past them are appended when the step ends.

    The final rewrite reuses the lines already encoded when the events published are the
    state's events (the same objects, or equal), else encodes the state's events again.

    Returns:
        The last state (``{}`` when the stream was empty).
    """
    path = Path(path)
    state: Mapping[str, Any] = {}
    shown: list[dict[str, Any]] = []    # the events published, in order
    chunks: list[str] = []              # their lines, as appended
    appender.sync()     # a replayed game's earlier lines are not appended after this start
    path.write_text("", encoding="utf-8")

    def publish(events: list[dict[str, Any]]) -> None:
        if events:
            n = len(shown)
            text = "".join(jsonl.line({**e, "step": n + i}) + "\n" for i, e in enumerate(events))
            # queued to the process's writer thread (no descriptor held per game, no system call
            # on this thread); the rewrite below waits for it before replacing the file
            appender.append(path, text)
            shown.extend(events)
            chunks.append(text)

    if watch is not None:
        watch(publish)
    for state in states:
        events = state.get("events", [])
        if len(events) > len(shown):
            publish(events[len(shown):])
    final = list(state.get("events", []))
    if len(final) == len(shown) and all(a is b or a == b for a, b in zip(final, shown)):
        write_lines(path, "".join(chunks))
    else:
        write_events(path, final)
    return dict(state)


def read_events(path: Path) -> list[dict[str, Any]]:
    """Read an ``events.jsonl`` file.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: a line is not valid JSON (the message names the file and line).
    """
    return [e for _, e in read_jsonl(path, "a JSON event")]
