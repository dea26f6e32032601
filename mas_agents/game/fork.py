"""Forking a recorded run (issue 59): what every game's fork shares, naming no game.

A fork plays a recorded game again up to an event of its ``events.jsonl`` (the fork point) exactly
as it went, every model call answered from the recording, then live from there on, with some
seats played by another agent. Three parts live here; the game's own part (a seat wrapper that
feeds a new agent the seat's observations while the recorded agent still acts) lives in the
game's folder, and ``mas fork`` (:mod:`mas_agents.eval.rerun.fork`) ties them together:

* :func:`fork_index` reads a fork point (``17``, ``round:2``) against the recorded events;
* :class:`ForkPlan` says, for each seat, which of its moves are replayed and which are live: a
  move is the event the game writes for one action of the seat (a WiS description or vote),
  preceded by the seat's private planning events of that action (its reasoning). A move whose
  event is at or past the fork point is live; the fork point moves back to the first event of
  a live move that began before it (:attr:`ForkPlan.at`), so every event before it is replayed;
* :class:`SwitchChat` and :func:`forking`: while inside, every model spec answers from the
  recording (as :func:`mas_agents.replayed_model.replaying` does) unless the call is made inside
  :func:`acting` ``(live=True)``: then the spec's live model answers. The switch is per thread
  (a context variable), so a round's votes, cast in parallel, replay and go live side by side.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from mas_agents.replayed_model import PREFIX, Recording, ReplayChat, make_replay_chat

__all__ = ["fork_index", "ForkPlan", "plan_fork", "acting", "SwitchChat", "Forking", "forking", "build_live"]

#: Whether a model call on this thread is live (inside :func:`acting` ``(True)``); else replayed.
_LIVE: ContextVar[bool] = ContextVar("mas_fork_live", default=False)


def fork_index(events: list[dict], at: str | int, *, run: Path | str = "the run") -> int:
    """The 0-based index into ``events`` that ``at`` names.

    Args:
        events: the recorded ``events.jsonl``, in order.
        at: an event index (``17`` or ``"17"``, 0-based) or ``"round:N"`` (the first event of
            round N). Events carry no id of their own (their ``step`` is their index once written).
        run: named in the error messages.

    Raises:
        ValueError: a malformed ``at``; an index past the last event; a round the recording does
            not hold. One line, naming the last reachable event (or round).
    """
    text = str(at).strip()
    last = len(events) - 1
    if last < 0:
        raise ValueError(f"{run} holds no events: nothing to fork from")
    if text.lower().startswith("round:"):
        raw = text.split(":", 1)[1].strip()
        if not raw.isdigit():
            raise ValueError(f"--at {text!r}: expected round:N with N a round number, e.g. round:2")
        n = int(raw)
        i = next((k for k, e in enumerate(events) if int(e.get("round", 0) or 0) == n), None)
        if i is None:
            top = max(int(e.get("round", 0) or 0) for e in events)
            raise ValueError(f"--at {text}: {run} has no round {n}; its last round is {top} "
                             f"(its events run 0..{last})")
        return i
    if not text.lstrip("-").isdigit():
        raise ValueError(f"--at {text!r}: expected an event index (0-based) or round:N")
    i = int(text)
    if not 0 <= i <= last:
        raise ValueError(f"--at {i}: {run} has events 0..{last}; the last step a fork can start from is {last}")
    return i


@dataclass
class ForkPlan:
    """Which moves of each seat are replayed and which are live.

    Attributes:
        requested: the fork point asked for (an event index).
        at: the fork point used: ``requested``, or the first event of a live move that began
            before it (its planning events), so every event before ``at`` is replayed.
        moves: seat -> ``[(first event, move event)]`` of each recorded move, in order (indices
            into the recorded events).
    """

    requested: int
    at: int
    moves: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def live(self, seat: str, k: int) -> bool:
        """Whether seat ``seat``'s ``k``-th move (0-based, in the order it is asked) is live:
        its recorded move event is at or past the fork point, or the recording has no such move."""
        moves = self.moves.get(seat, [])
        return k >= len(moves) or moves[k][1] >= self.requested

    def replayed_moves(self, seat: str) -> int:
        """How many of ``seat``'s moves come from the recording."""
        return sum(1 for _, m in self.moves.get(seat, []) if m < self.requested)


def plan_fork(events: list[dict], at: int, is_move: Callable[[dict], bool]) -> ForkPlan:
    """The :class:`ForkPlan` of forking ``events`` at index ``at``.

    Args:
        is_move: whether an event is a seat's move (one per action the game asks of its
            ``actor``: the game's part says which kinds).
    """
    moves: dict[str, list[tuple[int, int]]] = {}
    start = at
    for i, e in enumerate(events):
        if not is_move(e):
            continue
        seat = e.get("actor", "")
        first = i
        while (first > 0 and events[first - 1].get("phase") == "planning"
               and events[first - 1].get("actor") == seat):
            first -= 1
        moves.setdefault(seat, []).append((first, i))
        if first < at <= i:
            start = min(start, first)
    return ForkPlan(requested=at, at=start, moves=moves)


@contextmanager
def acting(live: bool) -> Iterator[None]:
    """Within the block, this thread's model calls are live (``True``) or replayed."""
    token = _LIVE.set(live)
    try:
        yield
    finally:
        _LIVE.reset(token)


@dataclass
class _Counts:
    """The calls a fork's models answered, by where from (thread-safe)."""

    live: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add_live(self) -> None:
        with self._lock:
            self.live += 1


class SwitchChat(BaseChatModel):
    """A model spec's chat model in a fork: the recording's answer (``replay``, a
    :class:`mas_agents.replayed_model.ReplayChat`) unless the call is made inside :func:`acting`
    ``(True)``, then the live model's (``live``: built by :func:`build_live` or a test's builder).

    A live call gets the reply format in the live model's own form (its ``constrain``, e.g. the
    embedded model's grammar, which the call log then records as for any call) and the reply cap
    when the live model takes one.
    """

    replay: Any
    live: Any = None
    counts: Any = None
    spec: str = ""
    max_tokens: int | None = None

    @property
    def _llm_type(self) -> str:
        return "fork-switch"

    def constrain(self, fmt: Any) -> dict:
        """Invoke kwargs carrying the reply format ``fmt`` (given to whichever model answers)."""
        return {"reply_format": fmt}

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        if not _LIVE.get():
            return self.replay._generate(messages, stop, run_manager, **kwargs)
        if self.live is None:
            raise RuntimeError(f"fork: no live model for {self.spec!r}")
        fmt = kwargs.pop("reply_format", None)
        cap = kwargs.pop("max_tokens", None)
        extra: dict[str, Any] = {}
        hook = getattr(self.live, "constrain", None)
        if fmt is not None and hook is not None:
            extra.update(hook(fmt))
        if cap is not None and "max_tokens" in (getattr(type(self.live), "model_fields", None) or {}):
            extra["max_tokens"] = cap
        if self.counts is not None:
            self.counts.add_live()
        if stop is not None:
            extra["stop"] = stop
        reply = self.live.invoke(messages, **extra)
        meta = dict(getattr(reply, "response_metadata", None) or {})
        if "grammar" in extra:       # recorded as AccountedModel records a grammar-constrained call
            meta.setdefault("structured", "grammar")
            meta.setdefault("structured_fields", {"grammar": str(extra["grammar"])})
        if "max_tokens" in extra:
            meta.setdefault("max_tokens", extra["max_tokens"])
        msg = AIMessage(content=reply.content, usage_metadata=getattr(reply, "usage_metadata", None),
                        response_metadata=meta)
        return ChatResult(generations=[ChatGeneration(message=msg)])


def build_live(spec: str, **settings: Any) -> BaseChatModel:
    """The live chat model of ``spec`` as :func:`mas_agents.llm.make_chat_model` builds it without
    a fork's override (called while the run's seats build their models, before the game starts).

    Raises:
        ValueError: an unknown spec, e.g. the class name a run played on a test's model object
            records (the message names the spec). FileNotFoundError: as
            :func:`mas_agents.llm.make_chat_model`.
    """
    from mas_agents import llm, model_specs
    prev = model_specs.set_spec_override(None)
    try:
        return llm.make_chat_model(spec, **settings)
    except ValueError as exc:
        raise ValueError(f"the live model {spec!r} cannot be built ({exc}): after the fork "
                         f"point every seat plays live on its model") from None
    finally:
        model_specs.set_spec_override(prev)


@dataclass
class Forking:
    """What :func:`forking` yields: the recording (``recording.records``' ``used`` marks the
    calls replayed) and the live call count."""

    recording: Recording
    counts: _Counts

    @property
    def replayed(self) -> int:
        """Model calls answered from the recording so far."""
        return sum(1 for r in self.recording.records if r.used)

    @property
    def live(self) -> int:
        """Model calls answered live so far."""
        return self.counts.live


@contextmanager
def forking(run: str | Path, live: Callable[..., BaseChatModel] | None = None) -> Iterator[Forking]:
    """While inside, every model spec string builds a :class:`SwitchChat` answering from
    ``run``'s recording the calls recorded for that spec (its
    :func:`mas_agents.model_specs.model_label`), or live inside :func:`acting` ``(True)``.
    Process-wide, not reentrant (as :func:`mas_agents.replayed_model.replaying`).

    Args:
        live: ``live(spec, temperature=, max_tokens=, seed=, n_ctx=)`` builds a spec's live
            model (None: :func:`build_live`); called once per distinct spec, before the game.

    Raises:
        NotReplayable, ValueError: see :class:`mas_agents.replayed_model.Recording` (before anything runs).
    """
    from mas_agents import model_specs

    rec = Recording(Path(run).expanduser().resolve())
    counts = _Counts()
    builder = live or build_live

    def factory(spec: str, **settings: Any) -> BaseChatModel:
        if spec.startswith(PREFIX):
            return make_replay_chat(spec, **settings)
        return SwitchChat(replay=ReplayChat(recording=rec, label=model_specs.model_label(spec), spec=spec),
                          live=builder(spec, **settings), counts=counts, spec=spec)

    prev = model_specs.set_spec_override(factory)
    try:
        yield Forking(recording=rec, counts=counts)
    finally:
        model_specs.set_spec_override(prev)
