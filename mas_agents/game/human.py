"""Seats played by a person: the files a front end and a game's person seat share.

Each game that seats a person has its own seat in its folder (:class:`mas_agents.graphs.wis.human.HumanSeat`, :class:`mas_agents.graphs.mmg.human.HumanCharacter`); this module holds what they share. :class:`~mas_agents.graphs.wis.human.HumanSeat` is a :class:`mas_agents.graphs.wis.protocol_types.WisPlayer` whose ``interact`` waits for
a person's answer instead of a model's; :class:`~mas_agents.graphs.mmg.human.HumanCharacter` stands in for an
:class:`mas_agents.agents.Agent` in the murder mystery (``mas mmg run --human NAME``). Both talk
to the person through two files in the game's run directory, so any front end that can read and
write there can host the seat: ``mas serve`` shows it in the browser (``/play/<run>``), whether
the game was started from the browser or from the command line.

Files, in ``<run>/human/<seat>/`` (``<seat>`` = the player's name with every character that is
not a letter, digit, ``-`` or ``_`` replaced by ``_``, e.g. ``Player_1``):

``view.json`` (written by the seat, atomically, after every message)::

    {"seat": "Player 1", "word": "tea", "lang": "en",
     "messages": [{"status", "name", "message", "round"}, ...],   # every protocol message the seat got
     "pending": null | {"id": 3, "kind": "describe"|"vote", "round": 1, "choices": [...],
                        "error": null | "why the last answer was not read", "attempt": 1|2,
                        "limit_s": 120.0 | null, "asked_at": <unix seconds>},
     "finished": false, "updated": <unix seconds>}

``answer.json`` (written by the front end with :func:`submit_answer`)::

    {"id": 3, "text": "a hot drink", "target": null}     # target: whom an ``ask`` addresses

A murder-mystery character's ``view.json`` has ``"game": "mmg"``, its ``script`` and ``goals``
(the character's own, as its agent would get them), ``players``, ``victims``, ``messages`` = the
events visible to it (``{"actor", "kind", "content", "round"}``: what ``visible_events`` gives its
agent, PLAYER* Appendix A.2), and a ``pending`` request with ``kind`` introduce / ask / answer /
vote, the game's ``prompt`` and ``choices``.

What the person sees is exactly what the protocol gives the seat (the same messages an agent's
:class:`mas_agents.graphs.wis.player.AgentWisPlayer` reads: start, word, host lines, descriptions, votes, vote
results, the end), never another player's word or role. What the person answers goes through the
same strict parser as a model's reply (:func:`mas_agents.actions.parse_reply` of ``Description:
<text>`` / ``Vote: <text>``, so a vote may be a listed name or its number), with the same one
re-prompt after an unreadable answer (``mas_agents.agents``: a malformed reply is re-prompted
once); the judge then applies the same fouls (own word, repeat, no valid description, too late:
WiS §3.1, :mod:`mas_agents.graphs.wis.rules`). An answer later than the speaking limit is reported as timed
out, which the judge counts as a timeout foul (a late vote as an abstention).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from mas_agents.stop import STOP, StopRequested
from mas_agents.rundir import read_json, write_json

#: The agent spec of a human seat (``mas spy play --agents human,plain,...``).
HUMAN = "human"
#: Seconds a person has to describe or vote when the command gives no limit of its own: the
#: paper's 10 s (WiS §3.1) is a model's limit; a person typing needs minutes.
HUMAN_SPEAK_TIMEOUT = 120.0
#: How often the seat looks for an answer file (seconds).
POLL_S = 0.1


def seat_dirname(name: str) -> str:
    """The folder name of seat ``name`` under ``<run>/human/`` (``Player 1`` -> ``Player_1``).

    Raises:
        ValueError: an empty name.
    """
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", name.strip())
    if not safe:
        raise ValueError("a human seat needs a name")
    return safe


def human_seats(run_dir: Path) -> list[Path]:
    """The seat folders of ``run_dir`` that hold a ``view.json``, sorted by name."""
    root = Path(run_dir) / "human"
    if not root.is_dir():
        return []
    return sorted(d for d in root.iterdir() if d.is_dir() and (d / "view.json").is_file())


def read_view(seat_dir: Path) -> dict[str, Any]:
    """The seat's ``view.json`` (see the module docstring).

    Raises:
        FileNotFoundError: the seat has written no view yet. ValueError: invalid JSON.
    """
    return read_json(Path(seat_dir) / "view.json")


def submit_answer(seat_dir: Path, request_id: int, text: str, target: str | None = None) -> None:
    """Hand the person's answer to request ``request_id`` to the seat (writes ``answer.json``).

    Args:
        text: the description, vote, introduction, question or answer as typed or chosen.
        target: whom a murder-mystery question is for (``ask`` only).

    Raises:
        FileNotFoundError: no such seat. ValueError: the seat is not waiting for request
            ``request_id`` (answered already, timed out, or never asked), or ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise ValueError("the answer must be text")
    view = read_view(seat_dir)
    pending = view.get("pending")
    if not pending or pending.get("id") != int(request_id):
        raise ValueError(f"seat {view.get('seat')!r} is not waiting for answer {request_id} "
                         f"(pending: {pending.get('id') if pending else 'nothing'})")
    write_json(Path(seat_dir) / "answer.json", {"id": int(request_id), "text": text, "target": target})


def wait_answer(seat_dir: Path, request_id: int, deadline: float | None, poll: float = POLL_S) -> dict | None:
    """Wait for ``answer.json`` of request ``request_id`` in ``seat_dir`` (removing it); None when
    ``deadline`` (``time.monotonic()`` seconds) passes first. Answers to other ids are dropped.

    Raises:
        StopRequested: Ctrl-C (:data:`mas_agents.stop.STOP`) while waiting.
    """
    path = Path(seat_dir) / "answer.json"
    while deadline is None or time.monotonic() < deadline:
        if STOP.is_set():
            raise StopRequested("stopped while waiting for a person's answer")
        if path.is_file():
            try:
                ans = read_json(path)
            except ValueError:   # half-written by another writer: look again
                ans = None
            if isinstance(ans, dict):
                path.unlink(missing_ok=True)
                if ans.get("id") == request_id and isinstance(ans.get("text"), str):
                    return ans
        time.sleep(poll)
    return None
