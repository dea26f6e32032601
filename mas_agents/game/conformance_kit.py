"""The conformance kit: one body that checks any registered game (issue 51 item 2), shipped in the
package so that a game in another repository runs the same checks (as PettingZoo's ``api_test``
and LangGraph's checkpointer conformance suite run unchanged on any implementation).

A game takes part by registering a :class:`mas_agents.game.contract.GameDef` with a
:class:`mas_agents.game.conformance.Conformance` (its own rules invariants and its re-scoring from
the events) and by describing one or more :class:`Case` (how to play it on the fake model of
:mod:`mas_agents.game.fake_chat`). :func:`check_game` then checks a case with no branch on the
game and returns the problems found (``[]``: the game conforms)::

    from mas_agents.game.conformance_kit import Case, check_game
    from mas_agents.game.runner import run

    def play(out, data_root, *, resume=False, progress=None):
        return {"games": [out], "run": run("my_game", out, model="local", agents=["plain", "plain"],
                                           resume=resume, progress=progress)}

    assert check_game(Case("my_game", "my_game", play), tmp_dir) == []

What is checked:

a. **the game's own rules**: ``conformance.checks(config, events, result)`` finds no problem in
   each game the case played, and ``events.jsonl`` numbers its events 0, 1, 2...;
b. **re-scoring**: every ``(recomputed, stored)`` pair of ``conformance.rescore(config, events,
   result)`` is equal; the case's own run-level check (:attr:`Case.check_run`: what a runner of
   many games aggregates) holds; the fake's unreadable replies reached the game
   (``result.json``'s ``invalid_actions`` somewhere), so the invalid-action rules had work;
c. **resume**: a game that checkpoints (:attr:`mas_agents.game.contract.GameDef.checkpoint`) is
   interrupted after EVERY graph step and resumed each time (:func:`resumed_at_every_step`: the
   kept log is always the start of the uninterrupted one) and also stopped by the case's
   tripwires (:func:`stop_points`: Ctrl-C, i.e. :data:`mas_agents.stop.STOP`, or a dead server,
   :class:`mas_agents.errors.ModelUnavailable`, after N model calls) and resumed; any other game
   is stopped half-way through its last game and run again, which reuses the finished games and
   replays the unfinished one (that game must have no ``result.json`` in between). Every resumed
   game's events equal the uninterrupted run's once call ids and clock readings are dropped
   (:func:`untimed`), and so does its ``result.json`` (for a checkpointed game except ``llm``,
   which also counts the failed and redone calls); its rules and re-scoring hold again;
d. **hidden information**: no seat's prompt holds what an event's ``visible_to`` hides from that
   seat (:func:`mas_agents.game.prompt_leaks.hidden_leaks`);
e. **no forgery** (:func:`no_forgery`, a run of its own): played with every seat forging the host,
   a judge and other seats in all it says (:class:`mas_agents.game.fake_chat.HostileChat`), no
   prompt holds a forged line outside the forger's quoted utterance
   (:func:`mas_agents.game.prompt_leaks.forged_lines`).

A failed check raises :class:`AssertionError` (its text names the case, the game and what
differs; no ``assert`` statement, so the kit also checks under ``python -O``); a case the kit
cannot run as described (a run that was not interrupted where the tripwire was set) raises
:class:`KitError`. Needs no pytest: a test suite wraps :func:`patched_model` in a fixture and
calls :func:`conforms` and :func:`no_forgery`, or calls :func:`check_game`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mas_agents import stop as mas_agents_stop
from mas_agents.errors import ModelUnavailable
from mas_agents.events import read_events
from mas_agents.game import contract as games
from mas_agents.game.fake_chat import SALT, TRIP, GameChat, make_fake_model, make_hostile_model, patched_model
from mas_agents.game.prompt_leaks import forged_lines, hidden_leaks
from mas_agents.stop import StopRequested

__all__ = ["CLOCK_KEYS", "untimed", "KitError", "Case", "CASES", "add_cases", "cases_of", "play", "Reference",
           "play_reference", "reference", "read_json", "game_events", "normal_events", "normal_result",
           "game_problems", "reference_problems", "stop_points", "interrupted_then_resumed", "resumed_at_every_step",
           "check_resume", "no_forgery", "conforms", "check_game"]

# ----------------------------------------------------------------------------------------------
# comparing two runs of the same game: clock readings and random call ids dropped

#: Keys whose values are clock readings (seconds measured, dates) or random call ids (uuid4; a
#: prompt record's ``reprompt_of`` is one); zeroed before ``scripts/fake_runs.py`` hashes JSON,
#: dropped before the kit compares runs.
CLOCK_KEYS = re.compile(r"(_s|_seconds|^seconds|_at|^started|^created|_date|^date|_time|^time|^call_ids?|_call_ids"
                        r"|^reprompt_of)$")


def untimed(obj: Any, drop: bool = False) -> Any:
    """``obj`` (parsed JSON) with the value of every :data:`CLOCK_KEYS` key set to None, in every
    nested dict; with ``drop``, without those keys."""
    if isinstance(obj, dict):
        if drop:
            return {k: untimed(v, drop) for k, v in obj.items() if not CLOCK_KEYS.search(str(k))}
        return {k: (None if CLOCK_KEYS.search(str(k)) else untimed(v, drop)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [untimed(v, drop) for v in obj]
    return obj


class KitError(RuntimeError):
    """The kit could not run a check as the case describes it (a run the tripwire did not stop,
    a game that never finishes); not an :class:`AssertionError`, so that a test pinning a bug as
    an expected ``AssertionError`` does not take it for that bug."""


def _need(cond: Any, what: str) -> None:
    """Raise :class:`AssertionError` with ``what`` when ``cond`` is false."""
    if not cond:
        raise AssertionError(what)


def _short(v: Any) -> str:
    return f"{v!r:.300}"


def _same(got: Any, want: Any, what: str) -> None:
    """Raise :class:`AssertionError` when ``got != want``: ``what``, then where they differ (the
    first differing item of two lists, the differing keys of two dicts)."""
    if got == want:
        return
    if isinstance(got, list) and isinstance(want, list):
        i = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        detail = (f"{len(got)} items, {len(want)} wanted; item {i} is {_short(got[i:i + 1])}, "
                  f"wanted {_short(want[i:i + 1])}")
    elif isinstance(got, dict) and isinstance(want, dict):
        keys = sorted((k for k in got.keys() | want.keys() if got.get(k, ...) != want.get(k, ...)), key=str)
        detail = "; ".join(f"{k}: {_short(got.get(k, '(missing)'))}, wanted {_short(want.get(k, '(missing)'))}"
                           for k in keys[:6])
    else:
        detail = f"{_short(got)}, wanted {_short(want)}"
    raise AssertionError(f"{what}: {detail}")


# ----------------------------------------------------------------------------------------------
# the cases


@dataclass(frozen=True)
class Case:
    """One way to play a registered game in the kit.

    Attributes:
        id: the case's name (``wis-4``); a test id, also the golden files' name in this project.
        kind: the registered game (:func:`mas_agents.game.contract.get`).
        play: ``play(out, data_root, *, resume=False, progress=None) -> {"games": [game dirs, in
            play order], "run": what the runner returned}``: play (or resume, for a game that
            checkpoints) into ``out`` on whatever :func:`mas_agents.llm.make_chat_model` makes;
            ``progress`` is the runner's ``progress(done_steps, step_bound, node_names)``.
        stop: how the run interrupted half-way through its last game stops (``"ctrl_c"`` or
            ``"model_down"``).
        salt: the fake's salt (:class:`mas_agents.game.fake_chat.GameChat`) for this case.
        more_stops: further interruptions, ``(calls before the end, how)`` (e.g. inside a
            parallel fan-out near the end).
        run_keys: keys of ``play``'s ``run`` that a resumed run gives again unchanged.
        reused: the key of ``play``'s ``run`` that counts the finished games a rerun reused
            (a runner of many games); None: not counted.
        check_run: ``check_run(ref)``: what the runner aggregates over its games, re-derived
            from the games (``ref``: the :class:`Reference`; raises AssertionError); None:
            nothing to aggregate.
        realdata: the case reads the real datasets (a test suite may mark or skip it).
        free_text: the game shows one seat's own words (a description, a clue, an answer) to
            the others, so the forging seats of :func:`no_forgery` must reach their prompts.
    """

    id: str
    kind: str
    play: Callable[..., dict[str, Any]]
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


def play(case: Case, out: Path, data_root: Path | None, **kwargs: Any) -> dict[str, Any]:
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


def play_reference(case: Case, out: Path, data_root: Path | None) -> Reference:
    """Play ``case`` uninterrupted into ``out`` (on the patched fake model, :func:`patched_model`).

    Raises:
        KitError: the tripwire interrupted it (it was left armed).
    """
    TRIP.reset()
    got = play(case, out, data_root)
    if TRIP.fired:
        raise KitError(f"the reference run of {case.id} was interrupted by the tripwire")
    calls = [sum(1 for line in (g / "llm_calls.jsonl").open() if line.strip()) for g in got["games"]]
    return Reference(out, got["games"], got["run"], calls)


_REFERENCES: dict[str, Reference] = {}


def reference(case_id: str, mktemp: Callable[[str], Path], data_root: Path | None) -> Reference:
    """The uninterrupted run of the case ``case_id`` of :data:`CASES`, played once per process into
    ``mktemp(f"ref-{case_id}")`` (a new directory; pytest's ``tmp_path_factory.mktemp``) and
    kept for the next call; ``data_root``: the datasets root, or None for a case that reads none."""
    if case_id not in _REFERENCES:
        _REFERENCES[case_id] = play_reference(CASES[case_id], mktemp(f"ref-{case_id}"), data_root)
    return _REFERENCES[case_id]


# ----------------------------------------------------------------------------------------------
# reading and normalising


def read_json(path: Path) -> dict[str, Any]:
    """The JSON file ``path``, parsed (an object)."""
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def game_events(game: Path) -> list[dict[str, Any]]:
    """``events.jsonl`` of the game directory ``game``."""
    return read_events(game / "events.jsonl")


def normal_events(game: Path) -> list[dict[str, Any]]:
    """``events.jsonl`` of a game without ``llm_call_ids`` and clock fields."""
    return [untimed(e, drop=True) for e in game_events(game)]


def normal_result(game: Path) -> dict[str, Any]:
    """``result.json`` of a game without clock keys."""
    doc: dict[str, Any] = untimed(read_json(game / "result.json"), drop=True)
    return doc


# ----------------------------------------------------------------------------------------------
# a., b. and d.


def game_problems(game: Path) -> list[str]:
    """Everything the kit finds wrong with one finished game directory: its game's own checks
    (a.), its re-scoring (b.), its event numbering and its hidden information (d.). The game is
    the registered one ``config.json``'s ``kind`` names; one without :class:`Conformance` hooks
    is a problem too (a game the kit cannot check the rules of)."""
    config = read_json(game / "config.json")
    events = game_events(game)
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


def reference_problems(case: Case, ref: Reference) -> list[str]:
    """a., b. and d. on the uninterrupted run ``ref`` of ``case``: every game's
    :func:`game_problems`, a model call in every game, an unreadable reply that reached a game,
    and the case's :attr:`Case.check_run` (its AssertionError's text). ``[]`` when none."""
    out = [] if ref.games and all(n > 0 for n in ref.calls) else \
        [f"{case.id}: a game made no model call (calls per game: {ref.calls})"]
    for game in ref.games:
        out += game_problems(game)
    if not sum(read_json(d / "result.json").get("invalid_actions") or 0 for d in ref.games):
        out.append(f"{case.id}: the fake gave no unreadable reply: the invalid-action rules ran on nothing "
                   "(another Case.salt may reach one)")
    if case.check_run is not None:
        try:
            case.check_run(ref)
        except AssertionError as exc:
            out.append(f"{case.id}: the run's own check: {exc}")
    return out


# ----------------------------------------------------------------------------------------------
# c. interrupt and resume


def stop_points(case: Case, ref: Reference) -> list[tuple[int, str]]:
    """``(calls, how)``: after how many calls, and how, the interrupted runs stop: half-way
    through the last game, as the case says (earlier games of a runner of many games are then
    finished and must be reused), then the case's :attr:`Case.more_stops`."""
    total = sum(ref.calls)
    return [(sum(ref.calls[:-1]) + ref.calls[-1] // 2, case.stop), *((total - n, how) for n, how in case.more_stops)]


def interrupted_then_resumed(case: Case, out: Path, after: int, how: str,
                             data_root: Path | None) -> dict[str, Any]:
    """Run ``case`` into ``out`` until the tripwire stops it (``how``) after ``after`` calls, then
    resume it: a game that checkpoints with ``resume=True``, any other by running it again.

    Returns the resumed run's ``{"games", "run"}`` and ``"partial"``: ``{game dir relative to
    out: (its normalised events or None, whether it had result.json)}`` as the interruption left
    them.

    Raises:
        KitError: the run was not interrupted, or not by the tripwire.
    """
    g = games.get(case.kind)
    TRIP.reset(after=after, how=how)
    try:
        play(case, out, data_root)
    except (ModelUnavailable, StopRequested):
        pass
    else:
        raise KitError(f"the run of {case.id} was not interrupted ({how}) after {after} calls")
    if not TRIP.fired:
        raise KitError(f"the run of {case.id} stopped after {after} calls, but not by the tripwire ({how})")
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

    Returns the number of interruptions.

    Raises:
        AssertionError: a kept log is not the start of the reference game's, or an interrupted
            game was recorded as finished.
        KitError: more interruptions than the reference game has events.
    """
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
            _same(kept, want[:len(kept)], f"{case.id}: after interruption {stops} the kept log is not the game's start")
            _need(not (out / "result.json").exists(), f"{case.id}: interrupted game recorded as finished")
            if stops > len(want):
                raise KitError(f"{case.id}: {stops} interruptions and the game has not finished")
            continue
        finally:
            mas_agents_stop.STOP.clear()
        return stops


def _no_problems(found: list[str]) -> None:
    _need(not found, "\n".join(found[:20]))


def check_resume(case: Case, workdir: Path, data_root: Path | None, ref: Reference) -> None:
    """c. of the module text: ``case`` interrupted after every step (a game that checkpoints) and
    at its :func:`stop_points`, each run into a new folder of ``workdir``, resumes to the
    uninterrupted run ``ref``.

    Raises:
        AssertionError: a resumed run differs from ``ref`` (what differs, where) or breaks a rule.
        KitError: an interruption did not happen as set.
    """
    g = games.get(case.kind)
    if g.checkpoint:                                           # every step
        out = workdir / "stepwise"
        stops = resumed_at_every_step(case, out, data_root, ref)
        _need(stops >= 2, f"{case.id}: the game was interrupted {stops} times")
        _same(normal_events(out), normal_events(ref.games[-1]), f"{case.id}: events after stepwise resumes")
        _same({k: v for k, v in normal_result(out).items() if k != "llm"},
              {k: v for k, v in normal_result(ref.games[-1]).items() if k != "llm"},
              f"{case.id}: result.json after stepwise resumes")
        _no_problems(game_problems(out))

    for n, (after, how) in enumerate(stop_points(case, ref)):  # tripwires
        out = workdir / f"resumed-{n}"
        got = interrupted_then_resumed(case, out, after, how, data_root)
        _same([d.relative_to(out) for d in got["games"]], [d.relative_to(ref.out) for d in ref.games],
              f"{case.id}: the games of the resumed run ({how} after {after} calls)")
        last = ref.games[-1].relative_to(ref.out)
        events_then, finished_then = got["partial"][last]
        _need(not finished_then, f"{case.id}: the interrupted game was recorded as finished")
        if g.checkpoint:                                       # what was kept is the start of the game
            _need(events_then, f"{case.id}: the interrupted game kept no events")
            _same(events_then, normal_events(ref.games[-1])[:len(events_then)],
                  f"{case.id}: the kept log of the interrupted game")
        else:                                                  # the games before it were finished
            _need(all(done for rel, (_, done) in got["partial"].items() if rel != last),
                  f"{case.id}: a game before the interrupted one was not finished")
        skip = ("llm",) if g.checkpoint else ()                # a resume also counts failed and redone calls
        for game, ref_game in zip(got["games"], ref.games):
            _same(normal_events(game), normal_events(ref_game), f"{case.id}: {game.name} differs after resume")
            _same({k: v for k, v in normal_result(game).items() if k not in skip},
                  {k: v for k, v in normal_result(ref_game).items() if k not in skip},
                  f"{case.id}: {game.name}'s result.json after resume")
            _no_problems(game_problems(game))
        if case.reused is not None:                            # finished games were reused, not replayed
            _same(got["run"][case.reused], len(ref.games) - 1, f"{case.id}: games reused by the rerun")
        for key in case.run_keys:
            _same(got["run"][key], ref.run[key], f"{case.id}: the resumed run's {key}")


# ----------------------------------------------------------------------------------------------
# e. no seat forges the host, a judge or another seat (issue 57, E1)


def no_forgery(case_id: str, out: Path, data_root: Path | None) -> None:
    """Play the case ``case_id`` of :data:`CASES` with every seat on
    :class:`mas_agents.game.fake_chat.HostileChat` (patched in:
    ``patched_model(make_hostile_model)``) and check every game it played: it finished, no
    prompt holds a forged line outside a quoted utterance
    (:func:`mas_agents.game.prompt_leaks.forged_lines`), and, for a case whose game shows one
    seat's own words to the others (:attr:`Case.free_text`), the forgeries did reach other
    prompts, inside their quotations.

    Raises:
        AssertionError: one of those does not hold.
    """
    case = CASES[case_id]
    TRIP.reset()
    got = play(case, out, data_root)
    _need(not TRIP.fired and got["games"], f"{case_id}: the hostile run did not play")
    reached = 0
    for game in got["games"]:
        _need((game / "result.json").exists(), f"{case_id}: {game.name} did not finish against forging seats")
        bad, quoted = forged_lines(game)
        _need(bad == [], "\n".join(bad[:12]))
        reached += quoted
    if case.free_text:
        _need(reached, f"{case_id}: no forgery reached a prompt: the check ran on nothing")


# ----------------------------------------------------------------------------------------------
# the kit's body


def conforms(case_id: str, workdir: Path, data_root: Path | None, ref: Reference | None = None) -> None:
    """Check the case ``case_id`` of :data:`CASES` (a. to d. of the module text) on the model
    patched in (``patched_model()``, :func:`mas_agents.game.fake_chat.make_fake_model`).
    ``ref``: its uninterrupted run (:func:`reference`, shared between tests); None: played here
    into ``workdir / "reference"``. The interrupted runs go into new folders of ``workdir``.

    Raises:
        AssertionError: a check fails (its text says which).
        KitError: the case could not be run as described.
    """
    case = CASES[case_id]
    if ref is None:
        ref = play_reference(case, workdir / "reference", data_root)
    _no_problems(reference_problems(case, ref))
    check_resume(case, workdir, data_root, ref)


def check_game(case: Case, workdir: Path, data_root: Path | None = None) -> list[str]:
    """The whole kit on one case, with nothing patched by the caller: adds ``case`` to
    :data:`CASES`, plays it on :class:`mas_agents.game.fake_chat.GameChat` (a. to d.) and on
    :class:`mas_agents.game.fake_chat.HostileChat` (e.), into new folders of ``workdir`` (an
    existing directory; ``reference``, ``stepwise``, ``resumed-N``, ``hostile``).

    Returns the problems found, one string per failed part (``rules``, ``resume``, ``forgery``:
    the part's name, then what failed); ``[]`` when the game conforms. Whatever else the game
    raises (a bug in its set-up) propagates."""
    add_cases(case)
    found: list[str] = []
    with patched_model(make_fake_model):
        try:
            ref = play_reference(case, workdir / "reference", data_root)
        except KitError as exc:
            return [f"reference: {exc}"]
        found += [f"rules: {p}" for p in reference_problems(case, ref)]
        try:
            check_resume(case, workdir, data_root, ref)
        except (AssertionError, KitError) as exc:
            found.append(f"resume: {exc}")
    with patched_model(make_hostile_model):
        try:
            no_forgery(case.id, workdir / "hostile", data_root)
        except (AssertionError, KitError) as exc:
            found.append(f"forgery: {exc}")
    return found
