"""The WiS agent protocol: the messages a Who-is-Spy game exchanges with a player.

The WiS platform's example agents (whoisspy.ai) are HTTP services with
``POST /agent/init``, ``/agent/getModelName``, ``/agent/checkHealth``, ``/agent/perceive`` and
``/agent/interact``. Requests are ``{message, name, status, word, round}``; responses
``{success, result, errMsg}``. Our game talks to *every* player, local or remote, through the
same two calls, so an agent written for the WiS platform plays on ours and ours on theirs.

Messages the game sends, in order (``name`` = the player addressed, unless said otherwise), as the
agents built on the platform's published SDK expect them (spy-agent-build-sdk 0.0.29: its
``AgentReq`` model and example agent). Before the game every remote agent must answer
``checkHealth`` and ``init`` with success, or it is not seated.

==========================  =========================================================================
perceive ``start``          ``name`` = your name, ``message`` = your name too (SDK agents read it
                            there)
perceive ``distribution``   ``word`` = your word
perceive ``round`` (0)      ``name`` = "": the rules; then ``name`` = "": the table,
                            ``Players: A, B, C`` (``玩家：A, B, C`` in a Chinese game)
perceive ``round``          ``name`` = "" and ``message`` = a host announcement (round start, fouls),
                            or ``name`` = a speaker and ``message`` = their (truncated) description
                            on one line (line breaks folded: :func:`mas_agents.utterance.fold`)
interact ``round``          your turn to describe (``message``: the request, in the game's
                            language); reply ``result`` = the description
interact ``vote``           ``message`` = comma-separated candidate names, never the voter; reply
                            ``result`` = one name (anything else is an abstention)
perceive ``vote``           ``name`` = a voter, ``message`` = whom they voted for ("" = abstained)
perceive ``vote_result``    ``name`` and ``message`` = the player voted out, or "" when no one was
perceive ``result``         ``message`` = the end of the game (winner, words, scores)
==========================  =========================================================================

Known from the SDK: the routes, the request and response fields, the six statuses, where its
example agent reads its name, word, speeches, votes and the eliminated player, what ``init`` and
``checkHealth`` answer. Inferred (the SDK has no judge): that ``message`` of a vote request lists
the candidates comma-separated (the example agent splits it so, and drops its own name, so a
platform list may hold the voter: our served agent drops itself too), and the order above.

A local player may add a ``meta`` key to its interact response (LLM call ids, whether the reply
parsed, its reasoning); the game logs it and ignores it for remote players.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

STATUSES = ("start", "distribution", "round", "vote", "vote_result", "result")


def request(status: str, *, name: str = "", message: str = "", word: str = "", round: int = 0) -> dict[str, Any]:
    """One protocol request dict.

    Raises:
        ValueError: unknown status.
    """
    if status not in STATUSES:
        raise ValueError(f"unknown WiS status {status!r}; expected one of {', '.join(STATUSES)}")
    return {"status": status, "name": name, "message": message, "word": word, "round": int(round)}


def response(result: Any = None, *, success: bool = True, err: str | None = None, **extra: Any) -> dict[str, Any]:
    """One protocol response dict ``{success, result, errMsg}`` (+ optional ``meta``)."""
    return {"success": success, "result": result, "errMsg": err, **extra}


@runtime_checkable
class WisPlayer(Protocol):
    """Anything that can sit at a WiS table: a local agent or a remote WiS-protocol service.

    Attributes:
        label: what plays (an agent spec such as ``plain+reasoning`` or a URL), for the record.
    """

    label: str

    def perceive(self, req: dict[str, Any]) -> None:
        """Take in one announcement (see the module table). Must not raise on unknown content."""
        ...

    def interact(self, req: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Answer a ``round`` (describe) or ``vote`` request with ``{success, result, errMsg}``.

        ``timeout`` (seconds) is the limit of this answer (speaking or voting); remote players
        are cut off at it. A local player's description is timed by the game (its wall time); a
        local vote is not timed (votes run in parallel and local seats queue on a shared model).
        """
        ...
