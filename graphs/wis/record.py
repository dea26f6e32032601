"""The Who is Spy? game record as the replay reads it: the fields it must have (:data:`REQUIRED`,
:func:`validate`) and the record of a game that stopped before its end, rebuilt from its events
(:func:`record_from_events`). Split from :mod:`mas_agents.graphs.wis.replay_html` (issue 51
item 6).
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["REQUIRED", "record_from_events", "validate"]

#: Fields a record must have to be replayed. ``outcome`` and ``scores`` may be missing
#: (e.g. a game cut short); the page then says they were not recorded.
REQUIRED = ("game_id", "players", "rounds")


def validate(record: Any, source: str = "record") -> None:
    """Raise ValueError (naming ``source``) unless ``record`` can be replayed."""
    if not isinstance(record, dict):
        raise ValueError(f"{source}: expected a JSON object, got {type(record).__name__}")
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise ValueError(f"{source}: missing required field(s): {', '.join(missing)}")
    if not isinstance(record["players"], list) or not all(
            isinstance(p, dict) and "name" in p for p in record["players"]):
        raise ValueError(f"{source}: 'players' must be a list of objects with a 'name'")
    if not isinstance(record["rounds"], list) or not all(isinstance(r, dict) for r in record["rounds"]):
        raise ValueError(f"{source}: 'rounds' must be a list of objects")
    for key in ("outcome", "scores", "eliminated"):
        if record.get(key) is not None and not isinstance(record[key], dict):
            raise ValueError(f"{source}: '{key}' must be an object")



def record_from_events(events: list[dict], config: Mapping[str, Any] | None = None,
                       game_id: str = "") -> dict:
    """The game record of a game that stopped before its end, rebuilt from its ``events.jsonl``
    (the events of :mod:`mas_agents.graphs.wis.graph`: ``start``, ``word``, ``round_start``, ``describe``,
    ``foul``, ``vote_result``) and its ``config.json`` (``agents``, ``pair``, ``spy_seat``,
    ``game_id``; each optional).

    Returns:
        A record with the fields :func:`validate` needs and the rounds played so far; the last
        round, when its vote was not counted, carries ``"stopped": "speaking"`` (the descriptions
        given so far) or ``"voting"`` (all given and judged); no ``outcome`` and no ``scores``,
        and ``"stopped": True``.

    Raises:
        ValueError: there is no ``start`` event (the game never began).
    """
    config = config or {}
    start = next((e for e in events if e.get("kind") == "start"), None)
    if start is None:
        raise ValueError("no 'start' event: the game never began")
    data = start.get("data") or {}
    seats = [str(p) for p in data.get("seats") or []]
    agents = list(config.get("agents") or [])
    pair = dict(config.get("pair") or {})
    words = {e["data"].get("player"): e["data"].get("word") for e in events
             if e.get("kind") == "word" and isinstance(e.get("data"), dict)}
    spy_seat = config.get("spy_seat")

    def role(i: int, name: str) -> str:
        if isinstance(spy_seat, int):
            return "spy" if i == spy_seat else "civilian"
        if pair.get("spy") is not None and words.get(name) is not None:
            return "spy" if words[name] == pair["spy"] and pair["spy"] != pair.get("civilian") else "civilian"
        return "?"

    players = [{"name": p, "seat": i, "agent": agents[i] if i < len(agents) else "", "role": role(i, p),
                "word": words.get(p, "")} for i, p in enumerate(seats)]
    alive = list(seats)
    eliminated: dict[str, dict] = {}
    rounds: list[dict] = []
    for e in events:
        kind, d = e.get("kind"), e.get("data") or {}
        if kind == "round_start":
            rounds.append({"round": e.get("round"), "order": list(d.get("order") or []), "descriptions": [],
                           "fouled": [], "votes": {}, "vote_counts": {}, "voted_out": None, "alive_after": None})
        elif not rounds:
            continue
        elif kind == "describe":
            rounds[-1]["descriptions"].append({"player": e.get("actor"), "text": e.get("content") or "",
                                               "foul": d.get("foul"), "seconds": d.get("seconds")})
        elif kind == "foul":
            p = d.get("player")
            rounds[-1]["fouled"].append(p)
            eliminated[p] = {"round": e.get("round"), "by": "foul"}
            alive = [a for a in alive if a != p]
            rounds[-1]["alive_after"] = list(alive)
        elif kind == "vote_result":
            out = d.get("out")
            rounds[-1].update(votes=dict(d.get("votes") or {}), vote_counts=dict(d.get("counts") or {}), voted_out=out)
            if out:
                eliminated[out] = {"round": e.get("round"), "by": "vote"}
                alive = [a for a in alive if a != out]
            rounds[-1]["alive_after"] = list(alive)
    if rounds and not any(e.get("kind") == "vote_result" and e.get("round") == rounds[-1]["round"] for e in events):
        # the judge rules in the step that ends the descriptions: all given = judged, vote not counted
        last = rounds[-1]
        last["stopped"] = "speaking" if len(last["descriptions"]) < len(last["order"]) else "voting"
    record = {"game_id": str(config.get("game_id") or game_id), "lang": data.get("lang") or config.get("lang", "en"),
              "pair": pair, "players": players, "first_speaker": data.get("first_speaker"),
              "rounds": rounds, "eliminated": eliminated, "stopped": True}
    if config.get("seed") is not None:
        record["seed"] = config["seed"]
    return record
