"""The conformance kit: one body that checks any registered game (issue 51 item 2).

A game takes part by registering a :class:`mas_agents.game.contract.GameDef` with a
:class:`mas_agents.game.conformance.Conformance` (its own rules invariants and its re-scoring from the
events) and by adding one or more :class:`Case` (how to play it in a test, on the fake model of
:mod:`tests.conformance.fake`) with :func:`add_cases`. :func:`conforms` then checks every case
the same way, with no branch on the game, as PettingZoo's ``api_test`` and LangGraph's
checkpointer conformance suite run unchanged on any implementation:

a. **the game's own rules**: ``conformance.checks(config, events, result)`` finds no problem in
   each game the case played, and ``events.jsonl`` numbers its events 0, 1, 2...;
b. **re-scoring**: every ``(recomputed, stored)`` pair of ``conformance.rescore(config, events,
   result)`` is equal; the case's own run-level check (:attr:`Case.check_run`: what a runner of
   many games aggregates) holds; the fake's unreadable replies reached the game
   (``result.json``'s ``invalid_actions`` somewhere), so the invalid-action rules had work;
c. **resume**: a game that checkpoints (:attr:`mas_agents.game.contract.GameDef.checkpoint`) is interrupted
   after EVERY graph step and resumed each time (:func:`resumed_at_every_step`: the kept log is
   always the start of the uninterrupted one) and also stopped by the case's tripwires
   (:func:`stop_points`: Ctrl-C, i.e. :data:`mas_agents.stop.STOP`, or a dead server,
   :class:`mas_agents.errors.ModelUnavailable`, after N model calls) and resumed; any other game
   is stopped half-way through its last game and run again, which reuses the finished games and
   replays the unfinished one (that game must have no ``result.json`` in between). Every resumed
   game's events equal the uninterrupted run's once call ids and clock readings are dropped, and
   so does its ``result.json`` (for a checkpointed game except ``llm``, which also counts the
   failed and redone calls); its rules and re-scoring hold again;
d. **hidden information**: no seat's prompt holds what an event's ``visible_to`` hides from that
   seat (:func:`hidden_leaks`, read from the prompt log): neither a line of the event's content
   nor a value of its ``data`` (a word, a role) the seat had no way to know (:func:`hidden_value_leaks`);
e. **no forgery** (:func:`no_forgery`, a run of its own): played with every seat forging the host,
   a judge and other seats in all it says (:class:`tests.conformance.fake.HostileChat`), no
   prompt holds a forged line outside the forger's quoted utterance (:func:`forged_lines`).

The model: :class:`scripts.fake_runs.HashChat` (its reply is a pure function of the prompt),
through :func:`scripts.fake_runs._fake_make` patched over :func:`mas_agents.llm.make_chat_model`,
extended by :class:`tests.conformance.fake.GameChat` so that every action kind gets a readable
answer sometimes and an unreadable one sometimes (HashChat alone never answers ``propose``,
``contribute`` or ``form`` requests readably, and never gives an unreadable first reply).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mas_agents.game import contract as games
from mas_agents import accounting
from mas_agents import stop as mas_agents_stop
from mas_agents.stop import StopRequested
from mas_agents.prompt_log import read_prompts
from mas_agents.errors import ModelUnavailable
from mas_agents.events import read_events as _read_events
from scripts.fake_runs import _untimed
from mas_agents.utterance import unquoted
from tests.conformance.fake import (FORGED, SALT, SPLITS, TRIP, UNREADABLE, GameChat, HostileChat, Tripwire, fake_model,
                                    hostile_model, make_fake_model, make_hostile_model)

__all__ = ["SALT", "SPLITS", "TRIP", "UNREADABLE", "GameChat", "Tripwire", "fake_model", "make_fake_model", "Case",
           "CASES", "add_cases", "cases_of", "params", "play", "Reference", "reference", "read_json", "read_events",
           "normal_events", "normal_result", "game_problems", "hidden_leaks", "hidden_value_leaks", "MIN_LEAK_CHARS", "MIN_VALUE_CHARS", "stop_points",
           "interrupted_then_resumed", "resumed_at_every_step", "conforms", "FORGED", "HostileChat", "hostile_model",
           "make_hostile_model", "forged_lines", "no_forgery"]

# ----------------------------------------------------------------------------------------------
# the cases


@dataclass(frozen=True)
class Case:
    """One way to play a registered game in the kit.

    Attributes:
        id: the test id (``wis-4``); also names the golden files of ``tests/test_golden.py``.
        kind: the registered game (:func:`mas_agents.game.contract.get`).
        play: ``play(out, data_root, *, resume=False, progress=None) -> {"games": [game dirs, in
            play order], "run": what the runner returned}``: play (or resume, for a game that
            checkpoints) into ``out`` on whatever :func:`mas_agents.llm.make_chat_model` makes;
            ``progress`` is the runner's ``progress(done_steps, step_bound, node_names)``.
        stop: how the run interrupted half-way through its last game stops (``"ctrl_c"`` or
            ``"model_down"``).
        salt: the fake's salt (:class:`GameChat`) for this case.
        more_stops: further interruptions, ``(calls before the end, how)`` (e.g. inside a
            parallel fan-out near the end).
        run_keys: keys of ``play``'s ``run`` that a resumed run gives again unchanged.
        reused: the key of ``play``'s ``run`` that counts the finished games a rerun reused
            (a runner of many games); None: not counted.
        check_run: ``check_run(ref)``: what the runner aggregates over its games, re-derived
            from the games (``ref``: the :class:`Reference`); None: nothing to aggregate.
        realdata: the case reads the real datasets (its test is marked ``realdata``).
        free_text: the game shows one seat's own words (a description, a clue, an answer) to
            the others, so the forging seats of :func:`no_forgery` must reach their prompts.
    """

    id: str
    kind: str
    play: Callable[..., dict]
    stop: str = "ctrl_c"
    salt: str = SALT
    more_stops: tuple[tuple[int, str], ...] = ()
    run_keys: tuple[str, ...] = ()
    reused: str | None = None
    check_run: Callable[["Reference"], None] | None = None
    realdata: bool = False
    free_text: bool = True


#: Every case added so far, by id, in the order added.
CASES: dict[str, Case] = {}


def add_cases(*cases: Case) -> None:
    """Add ``cases`` to :data:`CASES` (a case of the same id replaces the old one)."""
    for c in cases:
        CASES[c.id] = c


def cases_of(kinds: list[str]) -> list[Case]:
    """The cases of the games ``kinds``, in the order of ``kinds`` then of addition."""
    return [c for k in kinds for c in CASES.values() if c.kind == k]


def params(cases: list[Case]) -> list:
    """``cases`` as pytest parameters (their ids; a case that reads real data is ``realdata``)."""
    return [pytest.param(c.id, marks=[pytest.mark.realdata] if c.realdata else [], id=c.id) for c in cases]


def play(case: Case, out: Path, data_root: Path | None, **kwargs: Any) -> dict:
    """``case.play`` with the case's salt."""
    GameChat.salt = case.salt
    return case.play(out, data_root, **kwargs)


@dataclass
class Reference:
    """An uninterrupted run: its directory, game dirs, runner's return and model calls per game."""

    out: Path
    games: list[Path]
    run: Any
    calls: list[int] = field(default_factory=list)


_REFERENCES: dict[str, Reference] = {}


def reference(case_id: str, tmp_path_factory, data_root: Path | None) -> Reference:
    """The uninterrupted run of a case, played once per session (needs the ``fake_model``
    fixture; ``data_root``: the datasets root, or None for a case that reads none)."""
    if case_id not in _REFERENCES:
        case = CASES[case_id]
        out = tmp_path_factory.mktemp(f"ref-{case_id}")
        TRIP.reset()
        got = play(case, out, data_root)
        if TRIP.fired:
            pytest.fail(f"the reference run of {case_id} was interrupted by the tripwire")
        calls = [sum(1 for line in (g / "llm_calls.jsonl").open() if line.strip()) for g in got["games"]]
        _REFERENCES[case_id] = Reference(out, got["games"], got["run"], calls)
    return _REFERENCES[case_id]


# ----------------------------------------------------------------------------------------------
# reading and normalising (shared with tests/test_golden.py): the keys holding clock readings or
# random call ids are dropped, the keys scripts/fake_runs.py zeroes (scripts.fake_runs.CLOCK_KEYS)


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def read_events(game: Path) -> list[dict]:
    return _read_events(game / "events.jsonl")


def normal_events(game: Path) -> list[dict]:
    """``events.jsonl`` of a game without ``llm_call_ids`` and clock fields."""
    return [_untimed(e, drop=True) for e in read_events(game)]


def normal_result(game: Path) -> dict:
    """``result.json`` of a game without clock keys."""
    return _untimed(read_json(game / "result.json"), drop=True)


# ----------------------------------------------------------------------------------------------
# a., b. and d. on one game


def game_problems(game: Path) -> list[str]:
    """Everything the kit finds wrong with one finished game directory: its game's own checks
    (a.), its re-scoring (b.), its event numbering and its hidden information (d.). The game is
    the registered one ``config.json``'s ``kind`` names; one without :class:`Conformance` hooks
    is a problem too (a game the kit cannot check the rules of)."""
    config = read_json(game / "config.json")
    events = read_events(game)
    result = read_json(game / "result.json")
    g = games.get(config["kind"])
    out = [f"{game.name}: {p}" for p in hidden_leaks(game)]
    if [e["step"] for e in events] != list(range(len(events))):
        out.append(f"{game.name}: events are not numbered 0..{len(events) - 1} in order")
    if g.conformance is None:
        return out + [f"{game.name}: the game {g.kind!r} declares no conformance hooks (GameDef.conformance)"]
    out += [f"{game.name}: {p}" for p in g.conformance.checks(config, events, result)]
    try:
        rescored = g.conformance.rescore(config, events, result)
    except Exception as exc:  # noqa: BLE001 - a log the game cannot re-score is a problem of the log
        return out + [f"{game.name}: re-scoring failed: {type(exc).__name__}: {exc}"]
    for name, (recomputed, stored) in rescored.items():
        if _json(recomputed) != _json(stored):
            out.append(f"{game.name}: {name}: result.json has {_json(stored)!r:.300}, the events give "
                       f"{_json(recomputed)!r:.300}")
    return out


def _json(v: Any) -> Any:
    """``v`` as it reads back from JSON (tuples as lists, keys as strings)."""
    return json.loads(json.dumps(v, default=str))


#: Shortest line of an event's content that :func:`hidden_leaks` looks for (shorter ones, such
#: as a player's name, are in every prompt anyway).
MIN_LEAK_CHARS = 16


def hidden_leaks(game: Path) -> list[str]:
    """Lines of hidden event content that a seat's prompt holds: for every event whose
    ``visible_to`` does not include ``"*"``, each line of its ``content`` at least
    :data:`MIN_LEAK_CHARS` long, and every seat that made a model call but is neither in that
    ``visible_to`` nor the event's actor, a prompt of that seat (system and user messages, from
    the prompt log) holding the line is a leak, unless the line was not news: it is in a prompt
    made before the event (any seat's: the game's own wording, a listed option), or in the content
    of an event that seat may see (said to it another way).

    Then the short leaks a line misses (a word, a role alone): :func:`hidden_value_leaks`.

    Returns one line per leak (the seat, the call, the line or value, the event); ``[]`` when none.

    Raises:
        AssertionError: the game recorded no prompts (``record_prompts`` off): nothing to read.
    """
    calls = [json.loads(line) for line in (game / "llm_calls.jsonl").read_text(encoding="utf-8").splitlines()
             if line.strip()]
    prompts = read_prompts(game)
    assert not calls or prompts, f"{game}: no prompt log to check hidden information against"
    at = {c["call_id"]: i for i, c in enumerate(calls)}
    texts = ["\n".join(str(m.get("content", "")) for m in (prompts.get(c["call_id"], {}).get("messages") or [])
                       if m.get("role") != "assistant") for c in calls]
    by_seat: dict[str, list[int]] = {}
    for i, c in enumerate(calls):
        by_seat.setdefault(str(c.get("actor")), []).append(i)
    events = read_events(game)
    seen = {s: "\n".join(str(e.get("content") or "") for e in events
                         if "*" in (e.get("visible_to") or []) or s in (e.get("visible_to") or []))
            for s in by_seat}
    leaks = []
    now = -1                       # the last call made by the time of the event
    for e in events:
        mine = [at[c] for c in e.get("llm_call_ids") or [] if c in at]
        now = max([now, *mine])
        shown = set(e.get("visible_to") or []) | {e.get("actor")}
        if "*" in shown:
            continue
        for line in {ln.strip() for ln in str(e.get("content") or "").splitlines()}:
            if len(line) < MIN_LEAK_CHARS:
                continue
            for seat, idx in by_seat.items():
                if seat in shown or line in seen[seat]:
                    continue
                hit = next((i for i in idx if line in texts[i]), None)
                if hit is None or any(line in texts[i] for i in range(now + 1)):
                    continue
                leaks.append(f"{seat}'s prompt (call {calls[hit]['call_id']}) holds {line[:80]!r} of event "
                             f"{e.get('step')} ({e.get('kind')}, visible to {sorted(shown - {None})})")
    return leaks + hidden_value_leaks(events, calls, texts, by_seat, at)


#: Shortest ``data`` string value that :func:`hidden_value_leaks` looks for (a word such as "spy").
MIN_VALUE_CHARS = 3


def _strings(v: Any) -> set[str]:
    """The string values in ``v`` (an event's ``data``: dicts and lists walked), stripped."""
    if isinstance(v, str):
        return {v.strip()}
    if isinstance(v, dict):
        return set().union(*(_strings(x) for x in v.values()))
    if isinstance(v, (list, tuple)):
        return set().union(*(_strings(x) for x in v))
    return set()


def _has(value: str, text: str) -> bool:
    """Whether ``value`` occurs in ``text`` as whole words (case-insensitive; "apple" not in "pineapple")."""
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE) is not None


def hidden_value_leaks(events: list[dict], calls: list[dict], texts: list[str], by_seat: dict[str, list[int]],
                       at: dict[str, int]) -> list[str]:
    """The short leak that :func:`hidden_leaks`'s line check misses: a ``data`` string value of a
    hidden event (a WiS word, a role: at least :data:`MIN_VALUE_CHARS` long), found as whole words
    in the prompt of a seat that made a model call and is neither in the event's ``visible_to``
    nor its actor.

    The rule for what a seat may legitimately have in its prompt, so that a value found there is
    no leak:

    * the value is in the content or ``data`` of an event the seat may see (a public event, one
      shown to it, its own) logged before that prompt: e.g. two civilians dealt the same word, a
      word said aloud (a word revealed at the game's end does not excuse an earlier prompt);
    * it is a seat's name (the actors of the events: the table is public);
    * it is the game's wording: in any prompt made before the event (as in :func:`hidden_leaks`),
      or in a prompt line that every seat which called the model had (the rules text, the list of
      roles; a game's fixed text is the same for every seat, a seat's secret is not).

    Known limit: a value that the game writes into one line of every seat's prompt looks like
    the game's wording and is not reported.

    Args:
        events: the game's events in order; calls: the call log rows in order (``call_id``,
        ``actor``); texts: each call's prompt (system and user messages); by_seat: each seat's
        call indices; at: ``call_id`` -> index.

    Returns one line per (seat, value, event); ``[]`` when none.
    """
    names = {str(e.get("actor")) for e in events if e.get("actor")}
    lines_of = {s: {ln.strip() for i in idx for ln in texts[i].splitlines() if ln.strip()} for s, idx in by_seat.items()}
    common = "\n".join(set.intersection(*lines_of.values())) if len(lines_of) > 1 else ""
    when, now = [], -1             # per event: the last call made by its time (it is news from the next call on)
    for e in events:
        now = max([now, *(at[c] for c in e.get("llm_call_ids") or [] if c in at)])
        when.append(now)

    def told(seat: str, value: str, call: int) -> bool:
        """Whether an event the seat may see, logged before its call ``call``, holds ``value``."""
        return any(when[k] < call and ("*" in (v.get("visible_to") or []) or seat in (v.get("visible_to") or [])
                                       or v.get("actor") == seat)
                   and _has(value, str(v.get("content") or "") + "\n" + "\n".join(_strings(v.get("data"))))
                   for k, v in enumerate(events))

    leaks, found = [], set()
    for k, e in enumerate(events):
        shown = set(e.get("visible_to") or []) | {e.get("actor")}
        if "*" in shown:
            continue
        for value in sorted(_strings(e.get("data"))):
            if len(value) < MIN_VALUE_CHARS or value in names or _has(value, common) \
                    or any(_has(value, texts[i]) for i in range(when[k] + 1)):
                continue
            for seat, idx in by_seat.items():
                if seat in shown or (seat, value) in found:
                    continue
                hit = next((i for i in idx if _has(value, texts[i]) and not told(seat, value, i)), None)
                if hit is not None:
                    found.add((seat, value))
                    leaks.append(f"{seat}'s prompt (call {calls[hit]['call_id']}) holds {value[:80]!r} of event "
                                 f"{e.get('step')} ({e.get('kind')} data, visible to {sorted(shown - {None})})")
    return leaks


# ----------------------------------------------------------------------------------------------
# c. interrupt and resume


def stop_points(case: Case, ref: Reference) -> list[tuple[int, str]]:
    """``(calls, how)``: after how many calls, and how, the interrupted runs stop: half-way
    through the last game, as the case says (earlier games of a runner of many games are then
    finished and must be reused), then the case's :attr:`Case.more_stops`."""
    total = sum(ref.calls)
    return [(sum(ref.calls[:-1]) + ref.calls[-1] // 2, case.stop), *((total - n, how) for n, how in case.more_stops)]


def interrupted_then_resumed(case: Case, out: Path, after: int, how: str, data_root: Path | None) -> dict:
    """Run ``case`` into ``out`` until the tripwire stops it (``how``) after ``after`` calls, then
    resume it: a game that checkpoints with ``resume=True``, any other by running it again.

    Returns the resumed run's ``{"games", "run"}`` and ``"partial"``: ``{game dir relative to
    out: (its normalised events or None, whether it had result.json)}`` as the interruption left
    them."""
    g = games.get(case.kind)
    TRIP.reset(after=after, how=how)
    try:
        play(case, out, data_root)
    except (ModelUnavailable, StopRequested):
        pass
    else:
        pytest.fail(f"the run of {case.id} was not interrupted ({how}) after {after} calls")
    if not TRIP.fired:      # pytest.fail, not assert: a strict xfail must not take it for its bug
        pytest.fail(f"the run of {case.id} stopped after {after} calls, but not by the tripwire ({how})")
    TRIP.reset()
    mas_agents_stop.STOP.clear()
    dirs = {p.parent for p in out.rglob("config.json") if games.find(read_json(p).get("kind")) is not None}
    partial = {d.relative_to(out): (normal_events(d) if (d / "events.jsonl").exists() else None,
                                    (d / "result.json").exists()) for d in dirs}
    got = play(case, out, data_root, resume=g.checkpoint)
    got["partial"] = partial
    return got


def resumed_at_every_step(case: Case, out: Path, data_root: Path | None, ref: Reference) -> int:
    """Play ``case`` (a game that checkpoints) into ``out`` one graph step at a time: after each
    step the runner's ``progress`` sets :data:`mas_agents.stop.STOP`, so the next model
    call stops the run (``StopRequested``), and the game is resumed, until it finishes. After
    every interruption the kept ``events.jsonl`` must be the start of the reference game's.

    Returns the number of interruptions."""
    want = normal_events(ref.games[-1])

    def progress(done: int, bound: int, nodes: str) -> None:
        if done == 1:                   # one step of this leg done: stop at the next model call
            mas_agents_stop.STOP.set()

    stops = 0
    while True:
        TRIP.reset()
        mas_agents_stop.STOP.clear()
        try:
            play(case, out, data_root, resume=stops > 0, progress=progress)
        except StopRequested:
            stops += 1
            kept = normal_events(out) if (out / "events.jsonl").exists() else []
            assert kept == want[:len(kept)], f"{case.id}: after interruption {stops} the kept log is not the game's start"
            assert not (out / "result.json").exists(), f"{case.id}: interrupted game recorded as finished"
            if stops > len(want):
                pytest.fail(f"{case.id}: {stops} interruptions and the game has not finished")
            continue
        finally:
            mas_agents_stop.STOP.clear()
        return stops


# ----------------------------------------------------------------------------------------------
# e. no seat forges the host, a judge or another seat (issue 57, E1)


def forged_lines(game: Path) -> tuple[list[str], int]:
    """The lines of a game's prompts (system and user messages, from the prompt log) that hold a
    forged line (:data:`tests.conformance.fake.FORGED`) outside every quoted utterance
    (:func:`mas_agents.utterance.unquoted`): a seat's words that left their quotation and may pass
    for the host (``Host:``), a judge (``Judge:``) or another seat (a line starting with its
    name). Returns ``(one line per such prompt line: the seat, the call, the line; the number of
    prompts holding a forgery inside a quotation)`` (the second says the forgeries reached the
    other seats at all)."""
    calls = [json.loads(line) for line in (game / "llm_calls.jsonl").read_text(encoding="utf-8").splitlines()
             if line.strip()]
    prompts = read_prompts(game)
    assert not calls or prompts, f"{game}: no prompt log to check for forged lines"
    out, quoted = [], 0
    for c in calls:
        text = "\n".join(str(m.get("content", "")) for m in (prompts.get(c["call_id"], {}).get("messages") or [])
                         if m.get("role") != "assistant")
        bad = [line for line in text.splitlines() if FORGED in unquoted(line)]
        out += [f"{c.get('actor')}'s prompt (call {c['call_id']}) holds a forged line: {line[:160]!r}" for line in bad]
        quoted += FORGED in text and not bad
    return out, quoted


def no_forgery(case_id: str, out: Path, data_root: Path | None) -> None:
    """Play a case with every seat on :class:`tests.conformance.fake.HostileChat` (needs the
    ``hostile_model`` fixture) and check every game it played: it finished, no prompt holds a
    forged line outside a quoted utterance (:func:`forged_lines`), and, for a case whose game
    shows one seat's own words to the others (:attr:`Case.free_text`), the forgeries did reach
    other prompts, inside their quotations."""
    case = CASES[case_id]
    TRIP.reset()
    got = play(case, out, data_root)
    assert not TRIP.fired and got["games"], f"{case_id}: the hostile run did not play"
    reached = 0
    for game in got["games"]:
        assert (game / "result.json").exists(), f"{case_id}: {game.name} did not finish against forging seats"
        bad, quoted = forged_lines(game)
        assert bad == [], "\n".join(bad[:12])
        reached += quoted
    if case.free_text:
        assert reached, f"{case_id}: no forgery reached a prompt: the check ran on nothing"


# ----------------------------------------------------------------------------------------------
# the kit's body


def conforms(case_id: str, tmp_path: Path, tmp_path_factory, data_root: Path | None) -> None:
    """Check one case (a. to d. of the module text). Needs the ``fake_model`` fixture."""
    case = CASES[case_id]
    g = games.get(case.kind)
    ref = reference(case_id, tmp_path_factory, data_root)
    assert ref.games and all(n > 0 for n in ref.calls)
    for game in ref.games:                                     # a., b., d.
        assert game_problems(game) == []
    assert sum(read_json(d / "result.json").get("invalid_actions") or 0 for d in ref.games), \
        "the fake gave no unreadable reply: the invalid-action rules ran on nothing"
    if case.check_run is not None:
        case.check_run(ref)

    if g.checkpoint:                                           # c. every step
        out = tmp_path / "stepwise"
        stops = resumed_at_every_step(case, out, data_root, ref)
        assert stops >= 2, f"{case.id}: the game was interrupted {stops} times"
        assert normal_events(out) == normal_events(ref.games[-1])
        assert {k: v for k, v in normal_result(out).items() if k != "llm"} == \
            {k: v for k, v in normal_result(ref.games[-1]).items() if k != "llm"}
        assert game_problems(out) == []

    for n, (after, how) in enumerate(stop_points(case, ref)):  # c. tripwires
        out = tmp_path / f"resumed-{n}"
        got = interrupted_then_resumed(case, out, after, how, data_root)
        assert [d.relative_to(out) for d in got["games"]] == [d.relative_to(ref.out) for d in ref.games]
        last = ref.games[-1].relative_to(ref.out)
        events_then, finished_then = got["partial"][last]
        assert not finished_then, "the interrupted game was recorded as finished"
        if g.checkpoint:                                       # what was kept is the start of the game
            assert events_then and events_then == normal_events(ref.games[-1])[:len(events_then)]
        else:                                                  # the games before it were finished
            assert all(done for rel, (_, done) in got["partial"].items() if rel != last)
        skip = ("llm",) if g.checkpoint else ()                # a resume also counts failed and redone calls
        for game, ref_game in zip(got["games"], ref.games):
            assert normal_events(game) == normal_events(ref_game), f"{case.id}: {game.name} differs after resume"
            assert {k: v for k, v in normal_result(game).items() if k not in skip} == \
                {k: v for k, v in normal_result(ref_game).items() if k not in skip}
            assert game_problems(game) == []
        if case.reused is not None:                            # finished games were reused, not replayed
            assert got["run"][case.reused] == len(ref.games) - 1
        for key in case.run_keys:
            assert got["run"][key] == ref.run[key], key
