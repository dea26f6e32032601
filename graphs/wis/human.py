"""Who is Spy's seat played by a person (agent spec ``human``): the files it shares with a front end are described in :mod:`mas_agents.game.human`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from mas_agents.actions import parse_reply
from mas_agents.game.human import HUMAN, POLL_S, seat_dirname, wait_answer
from mas_agents.graphs.wis.player import split_names
from mas_agents.graphs.wis.protocol_types import response
from mas_agents.graphs.wis.rules import GAME
from mas_agents.action_kinds import ParseError
from mas_agents.planners.base import TAGS, ActionRequest
from mas_agents.rundir import write_json


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
