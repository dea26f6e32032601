"""What the Who is Spy? graph runs on: the graph state (:class:`WisState`), the game's runtime outside
the state (:class:`WisRuntime`: seats, roles, words, players through the WiS protocol, time limits)
and the judge's texts (:data:`HOST`). Split from :mod:`mas_agents.graphs.wis.graph` (issue 51
item 6).
"""

from __future__ import annotations

import logging
import operator
import time
from dataclasses import dataclass, field
from typing import Annotated, Callable, TypedDict

from mas_agents.errors import RunStopped
from mas_agents.graphs.wis import rules as rules
from mas_agents.graphs.wis.protocol_types import WisPlayer, request

__all__ = ["HOST", "WisRuntime", "WisState"]

log = logging.getLogger(__name__)


class WisState(TypedDict, total=False):
    """Graph state (JSON-able).

    events: every event so far (``operator.add`` reducer).
    round: the current round (1-based).
    alive: alive players in seat order.
    order: this round's speaking order; turn: index of the next speaker in it.
    descriptions: this round's descriptions so far (see :mod:`mas_agents.graphs.wis.rules`, game record).
    shown: every description text shown so far in the game (for the repeat foul).
    votes: vote records ``{round, voter, target, valid}`` of all rounds (parallel branches add).
    rounds: finished round records; eliminated: name -> {round, by}.
    end: the end reason once the game is over.
    """

    events: Annotated[list[dict], operator.add]
    round: int
    alive: list[str]
    order: list[str]
    turn: int
    descriptions: list[dict]
    shown: list[str]
    votes: Annotated[list[dict], operator.add]
    rounds: list[dict]
    eliminated: dict[str, dict]
    end: str | None


@dataclass
class WisRuntime:
    """Everything a game needs that is not state.

    Attributes:
        seats: player names in seat order.
        roles: name -> ``"spy"`` / ``"civilian"``; words: name -> word.
        players: name -> :class:`~mas_agents.graphs.wis.protocol_types.WisPlayer`.
        first: the first speaker (drawn at random by the session).
        lang: ``"en"`` / ``"zh"``.
        speak_timeout: seconds a player has to describe (WiS §3.1: 10 s by default); ``None`` = no
            limit (used by ablations, where a block's extra model calls must not become fouls).
        vote_timeout: seconds a remote player has to vote (the HTTP wait); a later vote is an
            abstention, counted in ``stats["vote_timeouts"]``. The paper and the platform state a
            limit for speeches only (the platform's example-agent page: a speech after 10 s counts
            as none); we give votes the same 10 s by default, so an agent paced for the platform
            fits, and a dead agent cannot hold the table. Local seats' votes are not timed: the
            votes are cast in parallel, and local seats sharing a model queue behind one another.
            ``None`` = no limit.
        max_rounds: rounds before the spy wins (3).
        publish: called with each move's events as soon as the move is made inside the speaking
            step (the session runner's :attr:`mas_agents.game.contract.Table.watch` sets it); None: nothing.
    """

    seats: list[str]
    roles: dict[str, str]
    words: dict[str, str]
    players: dict[str, WisPlayer]
    first: str
    lang: str = "en"
    speak_timeout: float | None = 10.0
    vote_timeout: float | None = 10.0
    max_rounds: int = rules.MAX_ROUNDS
    stats: dict[str, int] = field(default_factory=lambda: {"invalid_actions": 0, "timeouts": 0, "vote_timeouts": 0})
    publish: Callable[[list[dict]], None] | None = None

    def __post_init__(self) -> None:
        rules.check_players(len(self.seats))
        if sorted(self.roles) != sorted(self.seats) or list(self.roles.values()).count("spy") != 1:
            raise ValueError("roles must name every seat and exactly one spy")
        missing = [p for p in self.seats if p not in self.players]
        if missing:
            raise ValueError(f"no player for seat(s): {', '.join(missing)}")

    @property
    def spy(self) -> str:
        return next(p for p, r in self.roles.items() if r == "spy")

    def broadcast(self, status: str, *, name: str = "", message: str = "", round: int = 0) -> None:
        """Send one announcement to every seated player (eliminated players keep listening)."""
        for p in self.seats:
            try:
                self.players[p].perceive(request(status, name=name, message=message, round=round))
            except RunStopped:  # our model server is down: the run stops (one line, no traceback)
                raise
            except Exception:  # a broken player must not stop the game
                log.exception("%s: perceive(%s) failed", p, status)

    def interact(self, name: str, status: str, *, message: str, round: int) -> tuple[dict, float]:
        """Ask ``name`` to act; returns ``(response, seconds)`` (wall time of the whole answer,
        the agent's own extra model calls included)."""
        t0 = time.monotonic()
        # No catch-all: a remote player reports its own failures as success=False (a foul or an
        # abstention, as on the WiS platform); an exception from a local player is a model or
        # transport failure of ours, which aborts the game instead of being scored as a foul.
        limit = self.vote_timeout if status == "vote" else self.speak_timeout
        resp = self.players[name].interact(request(status, name=name, message=message, round=round,
                                                   word=self.words[name]), timeout=limit)
        return resp, time.monotonic() - t0

    def step_bound(self) -> int:
        """An upper bound on graph steps, for ``recursion_limit``: LangGraph's input step, set-up,
        two steps a round (speaking, voting) and the finish."""
        return 3 + 2 * self.max_rounds


#: What the judge says, in the game's language. ``players`` is followed by the seat names joined
#: with ", " (the line a player reads the table from); ``turn`` is the message of a ``round``
#: interact (the request to describe).
HOST = {
    "en": {
        "rules": ("A game of Who is Spy begins with {n} players. Every player has a secret word; all share "
                  "one word except the spy, whose word is different but related. Each round every player "
                  "describes their word in one sentence (at most {chars} characters), without saying it and "
                  "without repeating an earlier description; then everyone votes for the player they think "
                  "is the spy, and the player with the most votes is out."),
        "players": "Players: ",
        "turn": "Your turn: describe your word.",
        "round": "Round {round} begins. Speaking order: {order}.",
        "foul": "{player} {text} and is eliminated by the judge.",
    },
    "zh": {
        "rules": ("“谁是卧底”游戏开始，共{n}名玩家。每位玩家有一个秘密词语；除卧底外所有人的词语相同，卧底的词语与之相关但不同。"
                  "每一轮每位玩家用一句话（不超过{chars}个字）描述自己的词语，不能说出词语本身，也不能重复之前的描述；"
                  "然后所有人投票选出卧底，得票最多者出局。"),
        "players": "玩家：",
        "turn": "轮到你了：请描述你的词语。",
        "round": "第{round}轮开始。发言顺序：{order}。",
        "foul": "{player}犯规（{foul}），被裁判淘汰。",
    },
}
