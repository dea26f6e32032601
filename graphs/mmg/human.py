"""A murder-mystery character played by a person (``mas mmg run --human NAME``): the files it shares with a front end are described in :mod:`mas_agents.game.human`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from mas_agents.actions import parse_reply
from mas_agents.agents import StatCounter
from mas_agents.events import is_visible
from mas_agents.game.human import HUMAN, POLL_S, seat_dirname, wait_answer
from mas_agents.action_kinds import ParseError
from mas_agents.planners.base import TAGS, Action, ActionRequest
from mas_agents.rundir import write_json


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
    action, as for an agent (``mas_agents/agents.py``).
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
