"""The message sequence our judge owes each seat (the spec of issue 16), as a checker.

:func:`expected_requests` derives, from a finished game's ``result.json`` record, what one seat
must have received, in order:

1. ``POST /agent/checkHealth``, then ``/agent/init`` (remote seats, before the game);
2. perceive ``start``: ``name`` = ``message`` = the seat's name (SDK agents take their name from
   ``message``: ``agent_build_sdk/example/spy_agent.py``, ``SpyAgent.perceive``);
3. perceive ``distribution``: ``name`` = the seat, ``word`` = its word;
4. perceive ``round``, round 0, ``name`` "": the rules (in the game's language);
5. perceive ``round``, round 0, ``name`` "": ``"Players: P1, P2, ..."`` (zh ``"玩家：..."``);
6. each round r: the host's ``round`` announcement (``name`` ""); per speaker, for the seat
   itself an interact ``round`` (``name`` = seat, ``word``, ``message`` = the turn text) and for
   every speaker a perceive ``round`` (``name`` = speaker, ``message`` = the description); one
   host ``round`` message per foul; if a vote is held: for an alive seat an interact ``vote``
   whose ``message`` is the other alive players joined by a bare ``","`` (never the seat
   itself), then one perceive ``vote`` per voter (``name`` voter, ``message`` target or "") and
   a perceive ``vote_result`` with ``name`` = ``message`` = the player out ("" for nobody);
7. perceive ``result`` (a non-empty message).

:func:`seat_problems` compares a seat's logged exchange with that and with the replies it must
get (HTTP 200, ``success: true``) and, for SDK-style logs, the agent's stored memory.
:func:`deterministic_record_problems` checks that a game of deterministic agents
(:mod:`tests.wis_sdk.deterministic`) shows their replies: the judge used what they said.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.wis_sdk import deterministic

TURN_EN = "Your turn: describe your word."
PLAYERS_PREFIX = {"en": "Players: ", "zh": "玩家："}


class Pred:
    """A named predicate on a field value (shown in failure messages)."""

    def __init__(self, what: str, fn: Callable[[Any], bool]):
        self.what, self.fn = what, fn

    def __call__(self, value: Any) -> bool:
        return self.fn(value)

    def __repr__(self) -> str:
        return f"<{self.what}>"


def text_in(lang: str, what: str) -> Pred:
    """A non-empty string, with CJK characters in a zh game (the game's language)."""
    if lang == "zh":
        return Pred(f"{what}, in Chinese", lambda v: isinstance(v, str) and deterministic.is_zh(v))
    return Pred(f"{what}, non-empty", lambda v: isinstance(v, str) and bool(v.strip()))


def turn_text(lang: str) -> Any:
    return TURN_EN if lang == "en" else text_in("zh", "the turn text")


def expected_requests(seat: str, record: dict) -> list[tuple[str, dict]]:
    """``[(path, {field: value or Pred})]`` that ``seat`` must receive in a game with ``record``.

    Assumes every description was given (no ``no_answer``/``timeout`` foul: those descriptions
    are not broadcast the same way), which holds for deterministic agents.
    """
    lang = record["lang"]
    seats = [p["name"] for p in record["players"]]
    words = {p["name"]: p["word"] for p in record["players"]}
    exp: list[tuple[str, dict]] = [("/agent/checkHealth", {}), ("/agent/init", {})]
    exp += [("/agent/perceive", {"status": "start", "name": seat, "message": seat}),
            ("/agent/perceive", {"status": "distribution", "name": seat, "word": words[seat]}),
            ("/agent/perceive", {"status": "round", "round": 0, "name": "", "message": text_in(lang, "the rules")}),
            ("/agent/perceive", {"status": "round", "round": 0, "name": "",
                                 "message": PLAYERS_PREFIX[lang] + ", ".join(seats)})]
    for rd in record["rounds"]:
        r = rd["round"]
        exp.append(("/agent/perceive", {"status": "round", "round": r, "name": "",
                                        "message": text_in(lang, "the round announcement")}))
        for d in rd["descriptions"]:
            if d["player"] == seat:
                exp.append(("/agent/interact", {"status": "round", "round": r, "name": seat, "word": words[seat],
                                                "message": turn_text(lang)}))
            exp.append(("/agent/perceive", {"status": "round", "round": r, "name": d["player"], "message": d["text"]}))
        for d in rd["descriptions"]:
            if d["foul"]:
                exp.append(("/agent/perceive", {"status": "round", "round": r, "name": "",
                                                "message": text_in(lang, f"the foul of {d['player']}")}))
        if rd["votes"]:
            voters = list(rd["votes"])          # alive players in seat order
            if seat in voters:
                exp.append(("/agent/interact", {"status": "vote", "round": r,
                                                "message": ",".join(v for v in voters if v != seat)}))
            for voter, target in rd["votes"].items():
                exp.append(("/agent/perceive", {"status": "vote", "round": r, "name": voter, "message": target or ""}))
            out = rd["voted_out"] or ""
            exp.append(("/agent/perceive", {"status": "vote_result", "round": r, "name": out, "message": out}))
    exp.append(("/agent/perceive", {"status": "result", "message": text_in(lang, "the end message")}))
    return exp


def _mismatch(want: dict, req: Any) -> list[str]:
    if not isinstance(req, dict):
        return [f"request body {req!r} is not a JSON object"]
    bad = []
    for key, value in want.items():
        got = req.get(key)
        ok = value(got) if isinstance(value, Pred) else got == value
        if not ok:
            bad.append(f"{key}={got!r} (want {value!r})")
    return bad


def seat_problems(seat: str, entries: list[dict], record: dict) -> list[str]:
    """Everything wrong with what ``seat`` received and how it fared (empty: all as specified).

    Checks the sequence (:func:`expected_requests`; the first divergence only, since the rest
    follows from it), that every reply was HTTP 200 with ``success: true``, the SDK agent's
    stored name (= the seat, from the start on) and word, and that
    no vote list offered the agent its own stored name.
    """
    probs: list[str] = []
    exp = expected_requests(seat, record)
    for i, ((path, want), e) in enumerate(zip(exp, entries)):
        bad = ([f"path {e.get('path')} (want {path})"] if e.get("path") != path else []) + _mismatch(want, e.get("request"))
        if bad:
            probs.append(f"{seat}: request {i} ({path} {want.get('status', '')}): " + "; ".join(bad)
                         + f"\n    got {e.get('request')!r}")
            break
    if len(entries) != len(exp):
        probs.append(f"{seat}: {len(entries)} requests, {len(exp)} expected")
    for i, e in enumerate(entries):
        resp = e.get("response")
        if e.get("http_status") != 200 or not (isinstance(resp, dict) and resp.get("success") is True):
            probs.append(f"{seat}: request {i} {e.get('path')} {e.get('request')!r} got HTTP {e.get('http_status')} "
                         f"{resp!r}")
    word = next(p["word"] for p in record["players"] if p["name"] == seat)
    started = False
    for i, e in enumerate(entries):
        req = e.get("request") if isinstance(e.get("request"), dict) else {}
        started = started or req.get("status") == "start"
        mem = e.get("memory") or {}
        if started and mem.get("name") != seat:
            probs.append(f"{seat}: the agent's stored name is {mem.get('name')!r} after request {i} "
                         f"({e.get('path')} {req.get('status')})")
            break
    last = (entries[-1].get("memory") or {}) if entries else {}
    if last.get("word") != word:
        probs.append(f"{seat}: the agent's stored word is {last.get('word')!r}, not {word!r}")
    for e in entries:
        note = e.get("vote")
        if note and (note["offered_self"] or note["offered_self_stripped"]):
            probs.append(f"{seat}: a vote list offered the agent itself: {e['request'].get('message')!r}")
    return probs


def deterministic_record_problems(record: dict) -> list[str]:
    """A game of deterministic agents: each description is theirs, each vote the first other
    alive player, and nobody fouled."""
    words = {p["name"]: p["word"] for p in record["players"]}
    probs = []
    for rd in record["rounds"]:
        r = rd["round"]
        for d in rd["descriptions"]:
            want = deterministic.speech(d["player"], r, words[d["player"]])
            if d["text"] != want or d["foul"]:
                probs.append(f"round {r}: {d['player']} described {d['text']!r} (foul {d['foul']}), "
                             f"the agent said {want!r}")
        voters = list(rd["votes"])
        for voter, target in rd["votes"].items():
            want = next((v for v in voters if v != voter), None)
            if target != want:
                probs.append(f"round {r}: {voter}'s vote is recorded as {target!r}, the agent voted {want!r}")
    return probs
