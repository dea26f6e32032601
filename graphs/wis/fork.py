"""Who is Spy?'s part of a fork (``mas fork``, :mod:`mas_agents.game.fork`): the seats of a game
forked from a recorded one.

Every seat is a :class:`ForkSeat` around the players the game's own factory builds
(:class:`mas_agents.graphs.wis.session.PlayerFactory`). Its moves (``interact``: a description or
a vote, one event each) up to the fork point are made by the seat's recorded agent with every
call replayed; from the fork point on, live: by the same agent for an unchanged seat, by the new
agent (:attr:`ForkSeat.after`) for a changed one. A changed seat's new agent hears every
announcement the seat hears from the start (``perceive``), so when it first acts it has read the
whole game as the seat saw it: its history, and its agent's blocks warmed through
``Agent.observe`` (each block's ``on_event``), with no model call.
"""

from __future__ import annotations

from typing import Any, Mapping

from mas_agents.game.fork import ForkPlan, acting
from mas_agents.game.seats import Seats
from mas_agents.graphs.wis.session import PlayerFactory

__all__ = ["MOVE_KINDS", "is_move", "seat_names", "ForkSeat", "fork_players"]

#: The event kinds of a seat's move (one ``interact`` each).
MOVE_KINDS = ("describe", "vote")


def is_move(event: dict) -> bool:
    """Whether ``event`` is a seat's move: its description or its vote."""
    return event.get("kind") in MOVE_KINDS and event.get("phase") in ("speaking", "voting")


def seat_names(config: Mapping[str, Any]) -> list[str]:
    """The seats of a recorded WiS game (``Player 1..N``, from its ``agents``)."""
    return [f"Player {i + 1}" for i in range(len(config.get("agents") or []))]


class ForkSeat:
    """One seat of a forked WiS game (a :class:`mas_agents.graphs.wis.protocol_types.WisPlayer`).

    Args:
        seat: its name (``Player 2``).
        before: the player of the seat's recorded agent: it makes the replayed moves (and all
            moves when ``after`` is None).
        after: the new agent's player (a changed seat), or None.
        plan: which moves are replayed.
    """

    def __init__(self, seat: str, before: Any, after: Any, plan: ForkPlan):
        self.seat, self.before, self.after, self.plan = seat, before, after, plan
        self.label = (after or before).label
        self.moves = 0
        self.switched = False

    def perceive(self, req: dict[str, Any]) -> None:
        """Every announcement to the recorded agent's player while it may still act, and to the
        new agent's player from the start."""
        if not self.switched:
            self.before.perceive(req)
        if self.after is not None:
            self.after.perceive(req)

    def interact(self, req: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """The seat's next move: replayed by the recorded agent before the fork point, live after
        (by the new agent for a changed seat)."""
        live = self.plan.live(self.seat, self.moves)
        self.moves += 1
        player = self.before
        if live and self.after is not None:
            if not self.switched:          # what the seat said so far (the served agent's guard reads it)
                self.after.said = list(getattr(self.before, "said", []))
                self.switched = True
            player = self.after
        with acting(live):
            return player.interact(req, timeout=timeout)

    def close(self) -> None:
        for p in (self.before, self.after):
            closer = getattr(p, "close", None)
            if closer:
                closer()


def fork_players(seats: Seats, *, recorded: list[str], now: list[str], roles: Mapping[str, str], lang: str,
                 speak_timeout: float | None, plan: ForkPlan) -> dict[str, ForkSeat]:
    """The :class:`ForkSeat` of every seat, for the game's ``players`` parameter.

    Args:
        seats: the run's seats (their models answer through the fork's switch).
        recorded: the recorded seat specs, in seat order; now: the fork's (a changed seat's new
            spec where it differs).
        roles: seat -> ``spy`` / ``civilian`` (from the recorded ``spy_seat``).

    Raises:
        ValueError: an unknown block in a spec; a seat that is no model of ours (a URL, ``human``).
    """
    factory = PlayerFactory(seats, lang=lang, speak_timeout=speak_timeout)
    out: dict[str, ForkSeat] = {}
    for i, (old, new) in enumerate(zip(recorded, now)):
        seat = f"Player {i + 1}"
        before = factory(old, roles[seat])
        after = factory(new, roles[seat]) if new != old else None
        if after is not None:
            build = before.make_agent

            def make_agent(persona: Any, build: Any = build, seat: str = seat, spec: str = new) -> Any:
                agent = build(persona)
                seats.seat(seat, spec)         # the seat plays the new spec: config.json records it
                return agent

            before.make_agent = make_agent
        out[seat] = ForkSeat(seat, before, after, plan)
    return out
