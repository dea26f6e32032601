"""Seats played by a person: Who is Spy's agent spec ``human`` and a murder-mystery character.

:class:`HumanSeat` is a :class:`mas_agents.graphs.wis.protocol_types.WisPlayer` whose ``interact`` waits for
a person's answer instead of a model's; :class:`HumanCharacter` stands in for an
:class:`mas_agents.agent.Agent` in the murder mystery (``mas mmg run --human NAME``). Both talk
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
re-prompt after an unreadable answer (``mas_agents.agent``: a malformed reply is re-prompted
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
from mas_agents.actions import parse_reply
from mas_agents.planners.base import TAGS, Action, ActionRequest
from mas_agents.kinds import ParseError
from mas_agents.agent import StatCounter
from mas_agents.events import is_visible
from mas_agents.graphs.wis.player import split_names
from mas_agents.graphs.wis.protocol_types import response
from mas_agents.graphs.wis.rules import GAME
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


class HumanSeat:
    """A seat whose answers come from a person through ``<root>/<seat>/`` files (module docstring).

    Args:
        root: the folder of the game's human seats (``<run>/human``); the seat's own folder is
            made when the ``start`` message names it.
        lang: ``"en"`` / ``"zh"`` (shown to the front end; the rules text comes from the game).
        poll: seconds between looks for an answer.

    ``interact`` blocks until the person answers, the speaking limit passes, or Ctrl-C
    (:data:`mas_agents.stop.STOP`, then :class:`mas_agents.stop.StopRequested`).
    """

    label = HUMAN

    def __init__(self, root: Path, lang: str = "en", poll: float = POLL_S):
        self.root = Path(root)
        self.lang = lang
        self.poll = poll
        self.name = ""
        self.word = ""
        self.dir: Path | None = None
        self.messages: list[dict[str, Any]] = []
        self.pending: dict[str, Any] | None = None
        self.finished = False
        self._seq = 0

    # -- protocol ----------------------------------------------------------------------------
    def perceive(self, req: dict[str, Any]) -> None:
        """Record one protocol message and rewrite ``view.json``."""
        status = req.get("status")
        if status == "start":
            self.name = (req.get("name") or req.get("message") or "").strip()
            self.dir = self.root / seat_dirname(self.name)
            self.dir.mkdir(parents=True, exist_ok=True)
            (self.dir / "answer.json").unlink(missing_ok=True)
            self.word, self.messages, self.pending, self.finished = "", [], None, False
        elif status == "distribution":
            self.word = req.get("word", "")
        else:
            self.messages.append({"status": status, "name": req.get("name", ""), "message": req.get("message", ""),
                                  "round": int(req.get("round", 0) or 0)})
            if status == "result":
                self.finished = True
        self._write()

    def interact(self, req: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Ask the person to describe (``round``) or vote (``vote``) and wait for the answer.

        Returns:
            ``{success, result, errMsg, meta}`` like a model player; ``timed_out: True`` when no
            readable answer came within ``timeout`` seconds (None: no limit).

        Raises:
            StopRequested: Ctrl-C while waiting.
        """
        status, rnd = req.get("status"), int(req.get("round", 0) or 0)
        if not self.name or self.dir is None:
            return response(None, success=False, err="no name: no start message gave this seat one")
        if status == "round":
            request = ActionRequest(kind="describe", actor=self.name, prompt="", game=GAME,
                                    context={"round": rnd, "word": self.word, "lang": self.lang})
        elif status == "vote":
            cands = [c for c in split_names(req.get("message", "")) if c != self.name]
            if not cands:
                return response(None, success=False, err="no candidates to vote for")
            request = ActionRequest(kind="vote", actor=self.name, prompt="", choices=cands, game=GAME,
                                    context={"round": rnd, "word": self.word, "lang": self.lang})
        else:
            return response(None, success=False, err=f"cannot interact on status {status!r}")
        t0 = time.monotonic()
        deadline = None if timeout is None else t0 + timeout
        errors: list[str] = []
        for attempt in (1, 2):   # one re-prompt after an unreadable answer, as for a model
            self._seq += 1
            left = None if deadline is None else max(0.0, deadline - time.monotonic())   # the limit runs from the first ask
            self.pending = {"id": self._seq, "kind": request.kind, "round": rnd, "choices": list(request.choices or []),
                            "error": errors[-1] if errors else None, "attempt": attempt, "limit_s": left,
                            "asked_at": time.time()}
            self._write()
            text = self._wait(self._seq, deadline)
            meta = {"call_ids": [], "attempts": attempt, "errors": list(errors), "seconds": time.monotonic() - t0,
                    "human": True}
            if text is None:
                self.pending = None
                self._write()
                return {**response(None, success=False, err=f"no answer within {timeout:g} s", meta=meta),
                        "timed_out": True}
            try:
                value, _ = parse_reply(request, f"{TAGS[request.kind]}: {text}")
            except ParseError as exc:
                errors.append(str(exc))
                continue
            self.pending = None
            self._write()
            return response(value, meta={**meta, "valid": True})
        self.pending = None
        self._write()
        return response(None, success=False, err="; ".join(errors), meta={**meta, "errors": errors, "valid": False})

    def close(self) -> None:
        """Nothing to release (the files stay as the record of what the person saw)."""

    # -- internals ---------------------------------------------------------------------------
    def _wait(self, request_id: int, deadline: float | None) -> str | None:
        ans = wait_answer(self.dir, request_id, deadline, self.poll)
        return None if ans is None else ans["text"]

    def _write(self) -> None:
        if self.dir is None:
            return
        write_json(self.dir / "view.json", {"seat": self.name, "word": self.word, "lang": self.lang,
                                            "messages": self.messages, "pending": self.pending,
                                            "finished": self.finished, "updated": time.time()})


class HumanCharacter:
    """A murder-mystery character played by a person, in place of its :class:`Agent`
    (``graphs/mmg/graph.py`` calls ``observe``, ``act``, ``drain_events``, ``end_round`` and reads
    ``persona``, ``spec`` and ``stats``).

    Args:
        persona: the character (:func:`mas_agents.graphs.mmg.players.persona_for`): its script and goals are
            shown to the person, as its agent would have them.
        root: ``<run>/human``; the character's folder is ``root/<seat_dirname(name)>``.
        poll: seconds between looks for an answer.

    ``act`` shows the request (the game's prompt and choices) and waits, without a time limit (the
    murder mystery has none), for the answer; the answer is read by the models' strict parser
    (:func:`mas_agents.actions.parse_reply` of ``Introduction:`` / ``To:`` + ``Question:`` /
    ``Answer:`` / ``Vote:``) with one re-prompt, and an unreadable second answer is an invalid
    action, as for an agent (``mas_agents/agent.py``).
    """

    spec = HUMAN

    def __init__(self, persona: Any, root: Path, poll: float = POLL_S):
        self.persona = persona
        self.dir = Path(root) / seat_dirname(persona.name)
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "answer.json").unlink(missing_ok=True)
        self.poll = poll
        self.stats = StatCounter()     # counted per graph step like an agent's (a resume keeps them)
        self.stats.owner = persona.name
        self.messages: list[dict[str, Any]] = []
        self.pending: dict[str, Any] | None = None
        self._seen = 0
        self._seq = 0
        self._write()

    @property
    def name(self) -> str:
        return self.persona.name

    def observe(self, events: list[dict[str, Any]]) -> int:
        """Show the person the events visible to this character that it has not seen yet."""
        added = 0
        for ev in events[self._seen:]:
            if is_visible(ev, self.name):
                self.messages.append({"actor": ev.get("actor", ""), "kind": ev.get("kind", ""),
                                      "content": ev.get("content", ""), "round": ev.get("round", 0),
                                      "target": (ev.get("data") or {}).get("target")})
                added += 1
        self._seen = len(events)
        if added:
            self._write()
        return added

    def drain_events(self) -> list[dict[str, Any]]:
        return []

    def end_round(self, round: int, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.observe(events)
        return []

    def act(self, request: ActionRequest, *, phase: str | None = None):
        """Ask the person for ``request`` (introduce, ask, answer, vote) and return the :class:`Action`.

        Raises:
            StopRequested: Ctrl-C while waiting.
        """
        errors: list[str] = []
        raw = ""
        for attempt in (1, 2):
            self._seq += 1
            self.pending = {"id": self._seq, "kind": request.kind, "prompt": request.prompt,
                            "choices": list(request.choices or []), "error": errors[-1] if errors else None,
                            "attempt": attempt, "limit_s": None, "asked_at": time.time()}
            self._write()
            ans = wait_answer(self.dir, self._seq, None, self.poll)
            raw = ans["text"]
            reply = (f"To: {ans.get('target') or ''}\n{TAGS['ask']}: {raw}" if request.kind == "ask"
                     else f"{TAGS.get(request.kind, 'Answer')}: {raw}")
            try:
                value, _ = parse_reply(request, reply)
            except ParseError as exc:
                errors.append(str(exc))
                self.stats[f"malformed_{request.kind}"] += 1
                continue
            self.pending = None
            self._write()
            if attempt == 2:
                self.stats["recovered_after_reprompt"] += 1
            return Action(kind=request.kind, actor=self.name, value=value, raw=reply, attempts=attempt, errors=errors)
        self.pending = None
        self._write()
        self.stats[f"invalid_{request.kind}"] += 1
        return Action(kind=request.kind, actor=self.name, value=None, raw=raw, valid=False, attempts=2, errors=errors)

    def _write(self) -> None:
        p = self.persona
        write_json(self.dir / "view.json", {
            "game": "mmg", "seat": p.name, "title": p.title, "role": p.role, "script": p.script, "goals": p.goals,
            "players": list(p.players), "victims": list(p.victims), "messages": self.messages,
            "pending": self.pending, "finished": any(m["kind"] == "accuse" for m in self.messages),
            "updated": time.time()})
