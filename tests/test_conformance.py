"""Conformance of every game, end to end through its composition root, on a deterministic fake model.

One test, :func:`test_game_conforms`, parametrised over every game:

* ``mmg``: the murder mystery on the REAL WellPlay script "Sin" (4 characters, 1 round of
  questioning; read from the datasets root, never committed: a ``realdata`` case),
  :func:`eval.runs.mmg_session.play_script`;
* ``wis-4``, ``wis-5``, ``wis-6``: Who is Spy with 4, 5 and 6 seats, a two-game tournament on the
  synthetic word pairs, :func:`eval.runs.wis_tournament.run_tournament` (which plays each game
  with :func:`eval.runs.wis_session.play_game`);
* ``magic-<scenario>``: each of the five MAgIC scenarios on the REAL setting 0 (read from the
  datasets root, never committed: these cases are ``realdata``),
  :func:`eval.runs.magic_bench.run_magic` (one game per challenger side).

For every game it checks

a. **legal actions only**: every action event in ``events.jsonl`` is legal under the game's rules
   (:mod:`graphs.mmg.rules`, :mod:`graphs.wis.rules`, :mod:`graphs.magic.rules` and the event
   contracts documented beside them), in the order the rules give; an unreadable reply appears
   as the game's ``invalid`` event / abstention / ``no_answer`` foul, never as a move;
b. **events re-score to result.json**: the outcome recomputed from ``events.jsonl`` with the
   project's own functions equals ``result.json``, and what the run aggregates (the WiS
   leaderboard, the MAgIC run's metrics) equals totals the test derives from those replays;
c. **resume reproduces the events**: a second run into a fresh directory is interrupted (the fake
   model trips a Ctrl-C, i.e. :data:`mas_agents.accounting.STOP`, or a dead server,
   :class:`mas_agents.errors.ModelUnavailable`, after N calls), then resumed the way the game
   resumes (the murder mystery from its LangGraph SQLite checkpoint with ``resume=True``; a WiS
   tournament and a MAgIC run by rerunning, which reuses finished games and replays the
   unfinished one); the final ``events.jsonl`` of every game equals the uninterrupted run's once
   call ids and clock readings are dropped, and so does ``result.json`` (for the murder mystery
   except ``llm``, which also counts the failed and redone calls; its ``malformed_replies`` are
   kept in the checkpointed state, so they match too). What the interruption leaves is checked
   too: the murder mystery's log so far is the start of the full one, an unfinished WiS / MAgIC
   game has no ``result.json``, and finished games are reused, not replayed.

Tests at the end pin production bugs found here, once strict ``xfail`` tests: an abstained
murder-mystery vote counted under ``invalid``, and a resumed murder mystery losing the
malformed-reply counts made before the interruption. Both are fixed and their markers gone; a
new bug pinned the same way gets ``@pytest.mark.xfail(strict=True, raises=AssertionError)``.

The model: :class:`scripts.fake_runs.HashChat` (its reply is a pure function of the prompt),
through :func:`scripts.fake_runs._fake_make` patched over :func:`mas_agents.llm.make_chat_model`,
extended here by :class:`GameChat` so that every action kind gets a readable answer sometimes
and an unreadable one sometimes (HashChat alone never answers ``propose``, ``contribute`` or
``form`` requests readably, and never gives an unreadable first reply).

The reference (uninterrupted) run of each game is shared with :mod:`tests.test_golden`.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from mas_agents import accounting
from mas_agents.errors import ModelUnavailable
from scripts.fake_runs import HashChat, _fake_make, _untimed
from tests import data_roots

MAGIC_SCENARIOS = ("chameleon", "undercover", "cost_sharing", "prisoners_dilemma", "public_good")


# ----------------------------------------------------------------------------------------------
# the fake model


class Tripwire:
    """Counts the fake model's calls (thread-safe) and, once armed, interrupts the run after
    ``after`` calls: ``"ctrl_c"`` sets :data:`mas_agents.accounting.STOP` during call ``after + 1``
    (what the CLI's SIGINT handler does; the next accounted call raises ``StopRequested``),
    ``"model_down"`` makes every later call raise :class:`ModelUnavailable`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self, after: int | None = None, how: str | None = None) -> None:
        with self._lock:
            self.calls, self.after, self.how, self.fired = 0, after, how, False

    def tick(self) -> None:
        with self._lock:
            self.calls += 1
            if self.after is None or self.calls <= self.after:
                return
            self.fired = True
        if self.how == "model_down":
            raise ModelUnavailable("fake model server down (test tripwire)")
        accounting.STOP.set()


TRIP = Tripwire()

#: Mixed into the fake's hash; chosen so that the runs below reach the rarer paths (a caught
#: chameleon's guess, a cost-sharing negotiation over several rounds, WiS fouls of each kind).
SALT = "s7"
#: The reply every 5th prompt (by hash) gets: no tagged line, so the strict parser re-prompts.
UNREADABLE = "Hmm, let me keep that to myself for now."
#: Cost-sharing splits the fake proposes; the last does not sum to 100 (a malformed reply).
SPLITS = ((40, 30, 30), (34, 33, 33), (50, 25, 25), (40, 40, 30))


class GameChat(HashChat):
    """:class:`HashChat` plus: an unreadable reply for one prompt in five; numbers for
    ``Contribution:`` (sometimes more than the player has left), percentages for ``Proposal:``
    (sometimes not summing to 100), one listed option per line of a ``form``. Still a pure
    function of the prompt."""

    #: mixed into the hash; :func:`run_case` sets the salt of the case it plays
    salt: ClassVar[str] = SALT

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        TRIP.tick()
        prompt = "\n".join(str(m.content) for m in messages)
        last = str(messages[-1].content)
        h = int(hashlib.sha256((GameChat.salt + prompt).encode()).hexdigest(), 16)
        form = re.findall(r"^([A-Z][A-Za-z0-9 ]{0,40}): <one of: (.+)>$", last, re.MULTILINE)
        if h % 5 == 0:
            text = UNREADABLE
        elif '"Contribution: ..."' in last:
            text = f"Thinking it over.\nContribution: {(h >> 8) % 70}"
        elif '"Proposal: ' in last:
            names = re.findall(r"(Airline [A-Z]): <[a-z]>%", last)
            split = SPLITS[(h >> 8) % len(SPLITS)]
            text = "Thinking it over.\nProposal: " + ", ".join(f"{n}: {x}%" for n, x in zip(names, split))
        elif form:
            lines = []
            for i, (tag, options) in enumerate(form):
                opts = [o.strip() for o in options.split(",")]
                lines.append(f"{tag}: {opts[(h >> (8 * i + 8)) % len(opts)]}")
            text = "Thinking it over.\n" + "\n".join(lines)
        else:
            return super()._generate(messages, stop, run_manager, **kwargs)
        msg = AIMessage(content=text, usage_metadata={"input_tokens": len(prompt.split()),
                                                      "output_tokens": len(text.split()), "total_tokens": 0})
        return ChatResult(generations=[ChatGeneration(message=msg)])


def make_fake_model(spec: Any = "local", **kwargs: Any):
    """:func:`scripts.fake_runs._fake_make`, answering with :class:`GameChat`."""
    model = _fake_make(spec, **kwargs)
    return GameChat() if type(model) is HashChat else model


@pytest.fixture
def fake_model(monkeypatch):
    """Patch the model factory (ModelPool and the MMG session call it at run time); leave STOP
    and the tripwire clear afterwards."""
    from mas_agents import llm

    monkeypatch.setattr(llm, "make_chat_model", make_fake_model)
    TRIP.reset()
    accounting.STOP.clear()
    yield TRIP
    TRIP.reset()
    accounting.STOP.clear()


# ----------------------------------------------------------------------------------------------
# the games


@dataclass(frozen=True)
class Case:
    """One game setup. ``stop``: how its interrupted run is interrupted; ``salt``: the fake's
    (:class:`GameChat`)."""

    id: str
    family: str
    seats: int = 0
    scenario: str = ""
    seed: int = 0
    stop: str = "ctrl_c"
    salt: str = SALT


CASES = [
    # "s2": on Sin's prompts the default salt gives no abstention in one round; this one gives two
    # abstained asks and two abstained votes, so the invalid-action checks have work
    Case("mmg", "mmg", stop="ctrl_c", salt="s2"),
    Case("wis-4", "wis", seats=4, seed=4, stop="ctrl_c"),
    Case("wis-5", "wis", seats=5, seed=5, stop="model_down"),
    Case("wis-6", "wis", seats=6, seed=6, stop="ctrl_c"),
    *(Case(f"magic-{s}", "magic", scenario=s, stop=("model_down", "ctrl_c")[i % 2])
      for i, s in enumerate(MAGIC_SCENARIOS)),
]
CASE_IDS = [c.id for c in CASES]
#: The cases as test parameters. Every case reads the real data (the WellPlay script, the word
#: pairs, the MAgIC settings), through the ``real_data_root`` fixture: they are ``realdata``.
CASE_PARAMS = [pytest.param(c.id, marks=pytest.mark.realdata) for c in CASES]
BY_ID = {c.id: c for c in CASES}

WIS_AGENTS = ["plain", "plain+reasoning"]
WIS_GAMES = 2
MMG_ROUNDS = 1


def sin(real_root: Path):
    """The real script "Sin" (en) of ``real_root``."""
    from eval.datasets.wellplay import load_script
    return load_script(real_root, data_roots.SIN_ID, "en")


def run_case(case: Case, out: Path, real_root: Path, *, resume: bool = False) -> dict:
    """Play ``case`` into ``out`` (or resume it there) through its composition root; a murder
    mystery reads its script, a Who-is-Spy case its word pairs, a MAgIC case its settings, from
    ``real_root`` (the real datasets root).

    Returns ``{"games": [game dirs, in play order], "run": what the runner returned}``.
    """
    GameChat.salt = case.salt
    if case.family == "mmg":
        from eval.runs.mmg_session import play_script
        res = play_script(sin(real_root), out, agent="plain", model="local", rounds=MMG_ROUNDS, questions=1,
                          seed=case.seed, resume=resume, data_root=real_root)
        return {"games": [out], "run": res}
    if case.family == "wis":
        from eval.runs.wis_tournament import run_tournament
        res = run_tournament(agents=WIS_AGENTS, games=WIS_GAMES, data_root=real_root, players=case.seats, lang="en",
                             model="local", seed=case.seed, speak_timeout=None, db=out / "wis.sqlite", out=out)
        return {"games": sorted((out / "games").iterdir()), "run": res}
    from eval.runs.magic_bench import game_dir, run_magic
    from eval.runs.magic_session import SIDES
    res = run_magic(data_root=real_root, out=out, scenarios=[case.scenario], challenger="plain", defender="plain",
                    settings="0", model="local", seed=case.seed)
    games = [game_dir(out, case.scenario, side, 0) for side in SIDES[case.scenario]]    # in play order
    assert sorted(games) == sorted((out / "games").iterdir())
    return {"games": games, "run": res}


@dataclass
class Reference:
    """An uninterrupted run: its directory, game dirs and model calls per game."""

    out: Path
    games: list[Path]
    run: Any
    calls: list[int]


_REFERENCES: dict[str, Reference] = {}


def reference(case_id: str, tmp_path_factory, real_root: Path) -> Reference:
    """The uninterrupted run of a case, played once per session (needs the ``fake_model`` fixture;
    ``real_root``: the ``real_data_root`` fixture)."""
    if case_id not in _REFERENCES:
        case = BY_ID[case_id]
        out = tmp_path_factory.mktemp(f"ref-{case_id}")
        TRIP.reset()
        got = run_case(case, out, real_root)
        if TRIP.fired:      # pytest.fail, not assert: see precondition()
            pytest.fail(f"the reference run of {case_id} was interrupted by the tripwire")
        calls = [sum(1 for line in (g / "llm_calls.jsonl").open() if line.strip()) for g in got["games"]]
        _REFERENCES[case_id] = Reference(out, got["games"], got["run"], calls)
    return _REFERENCES[case_id]


# ----------------------------------------------------------------------------------------------
# normalising (shared with tests/test_golden.py): the keys holding clock readings or random call
# ids are dropped, the keys scripts/fake_runs.py zeroes (scripts.fake_runs.CLOCK_KEYS)


def read_events(game: Path) -> list[dict]:
    from mas_agents.events import read_events as read
    return read(game / "events.jsonl")


def normal_events(game: Path) -> list[dict]:
    """``events.jsonl`` of a game without ``llm_call_ids`` and clock fields."""
    return [_untimed(e, drop=True) for e in read_events(game)]


def normal_result(game: Path) -> dict:
    """``result.json`` of a game without clock keys."""
    return _untimed(json.loads((game / "result.json").read_text(encoding="utf-8")), drop=True)


# ----------------------------------------------------------------------------------------------
# a. legal actions and b. re-scoring, per game


def _invalid_for(ev: dict, actor: str, action: str) -> bool:
    return ev["kind"] == "invalid" and ev["actor"] == actor and ev["data"].get("action") == action


def check_mmg(events: list[dict], result: dict, real_root: Path) -> None:
    """Murder mystery (graphs.mmg.rules and graph): the walk of the game in rule order."""
    from graphs.mmg import rules

    sc = sin(real_root)
    players = [c.name for c in sc.characters]
    victims = list(sc.victims)
    assert result["players"] == players and result["finished"]
    evs = [e for e in events if e["phase"] != "planning"]      # private block events may interleave
    assert all(e["visible_to"] == [e["actor"]] for e in events if e["phase"] == "planning")
    i = 0

    def take() -> dict:
        nonlocal i
        assert i < len(evs), "the event log ends early"
        i += 1
        return evs[i - 1]

    e = take()
    assert (e["kind"], e["actor"]) == ("start", "game")
    for p in players:
        e = take()
        assert (e["kind"], e["visible_to"]) == ("script", [p])
    for p in players:                                           # introductions in seat order
        e = take()
        assert e["actor"] == p and (e["kind"] == "introduce" or _invalid_for(e, p, "introduce")), e
        if e["kind"] == "introduce":
            assert e["content"] and e["visible_to"] == ["*"]
    schedule = rules.question_schedule(players, MMG_ROUNDS, 1)
    for n, (rnd, asker) in enumerate(schedule):
        e = take()
        assert e["actor"] == asker and e["round"] == rnd, (n, e)
        if e["kind"] == "ask":
            target = e["data"]["target"]
            assert target in rules.other_players(asker, players), e        # never oneself
            a = take()
            assert a["actor"] == target and a["round"] == rnd, a
            if a["kind"] == "answer":
                assert a["data"]["asker"] == asker and a["data"]["question"] == e["content"], a
            else:                                               # an unreadable answer: everyone sees it
                assert _invalid_for(a, target, "answer") and a["visible_to"] == ["*"], a
        else:
            assert _invalid_for(e, asker, "ask"), e            # an unreadable question is no move
        if n + 1 == len(schedule) or schedule[n + 1][0] != rnd:
            e = take()
            assert (e["kind"], e["actor"], e["round"]) == ("round_end", "game", rnd)
    e = take()
    assert (e["kind"], e["phase"]) == ("announce", "voting")
    ballots: dict[tuple[str, str], str | None] = {}
    while evs[i]["phase"] == "voting":
        e = take()
        voter, victim, choice = e["actor"], e["data"]["victim"], e["data"]["choice"]
        assert e["visible_to"] == [voter] and victim in victims and (voter, victim) not in ballots, e
        if e["kind"] == "vote":
            assert choice in rules.other_players(voter, players), e        # a legal suspect, not oneself
            assert len(e["data"]["errors"]) < 2, e                         # read at the first or second try
        else:
            assert e["kind"] == "invalid" and choice is None, e            # unreadable = abstained
            assert e["data"]["errors"], e
        ballots[(voter, victim)] = choice
    assert set(ballots) == {(p, v) for v in victims for p in players}
    # b. re-score: the project's outcome functions on the ballots of the log
    per_victim = [rules.victim_outcome(v, {p: ballots[(p, v)] for p in players}, sc.murderers_of(v)) for v in victims]
    for v, res in zip(victims, per_victim):
        e = take()
        assert (e["kind"], e["actor"]) == ("accuse", "game") and e["data"] == res
    assert i == len(evs), f"events after the outcome: {evs[i:]}"
    assert result["outcome"] == rules.game_outcome(per_victim)
    invalid = [e for e in events if e["kind"] == "invalid"]
    assert result["invalid_actions"] == len(invalid)
    assert result["counts"] == {k: sum(1 for e in events if e["kind"] == k) for k in ("introduce", "ask", "answer", "vote")}
    assert sum(result["invalid_by_kind"].values()) == len(invalid)


def check_wis(events: list[dict], result: dict) -> list[dict]:
    """Who is Spy (graphs.wis.rules): speaking order, fouls, alive voters, tally, end, scores.

    Returns one row per seat, from the log and the re-scored outcome, with the keys of
    :func:`eval.metrics.wis.player_rows` that :func:`check_run` aggregates (:data:`WIS_SEAT_KEYS`)."""
    from eval.metrics.wis import player_rows
    from graphs.wis import rules

    seats = [p["name"] for p in result["players"]]
    roles = {p["name"]: p["role"] for p in result["players"]}
    words = {p["name"]: p["word"] for p in result["players"]}
    spy = next(p for p, r in roles.items() if r == "spy")
    assert words[spy] == result["pair"]["spy"] and all(words[p] == result["pair"]["civilian"] for p in seats if p != spy)
    lang = result["lang"]
    evs = [e for e in events if e["phase"] != "planning"]
    assert all(e["visible_to"] == [e["actor"]] for e in events if e["phase"] == "planning")
    start = evs[0]
    assert start["kind"] == "start" and start["data"]["seats"] == seats
    first = start["data"]["first_speaker"]
    assert first == result["first_speaker"]
    for p, e in zip(seats, evs[1:1 + len(seats)]):
        assert (e["kind"], e["visible_to"], e["data"]["word"]) == ("word", [p], words[p])
    i = 1 + len(seats)
    alive = list(seats)
    shown: list[str] = []
    eliminated: dict[str, dict] = {}
    votes_by_round: list[dict] = []
    rounds_out: list[dict] = []
    end = None
    rnd = 0
    while end is None:
        rnd += 1
        e = evs[i]
        i += 1
        order = rules.speaking_order(seats, first, alive)
        assert (e["kind"], e["round"], e["data"]["order"]) == ("round_start", rnd, order), e
        descriptions = []
        for speaker in order:                                   # only alive players speak, in order
            e = evs[i]
            i += 1
            assert (e["kind"], e["actor"], e["round"]) == ("describe", speaker, rnd), e
            text = e["content"]
            assert len(text) <= rules.MAX_CHARS[lang]
            # the judge's ruling, recomputed (speak_timeout None: no timeouts)
            assert e["data"]["foul"] == rules.foul(text or None, words[speaker], shown), e
            if not e["data"]["valid"]:
                assert e["data"]["foul"] == "no_answer" and text == "", e     # unreadable = a foul, never a move
            if text:
                shown.append(text)
            descriptions.append({"player": speaker, "text": text, "foul": e["data"]["foul"]})
        fouled = [d["player"] for d in descriptions if d["foul"]]
        for p in fouled:
            e = evs[i]
            i += 1
            assert (e["kind"], e["data"]["player"], e["round"]) == ("foul", p, rnd), e
            eliminated[p] = {"round": rnd, "by": "foul"}
        alive = [p for p in alive if p not in fouled]
        end = rules.end_reason(spy, alive, rnd, after_vote=False)
        votes: dict[str, str | None] = {}
        out = None
        if end is None:
            while evs[i]["kind"] == "vote":
                e = evs[i]
                i += 1
                voter, target = e["actor"], e["data"]["target"]
                assert voter in alive and voter not in votes and e["visible_to"] == [voter], e   # alive voters only
                assert target is None or target in rules.vote_candidates(voter, alive), e     # never oneself
                if not e["data"]["valid"]:
                    assert target is None, e
                votes[voter] = target
            assert set(votes) == set(alive)
            votes = {p: votes[p] for p in alive}
            counts, out = rules.tally(votes, alive)
            e = evs[i]
            i += 1
            assert e["kind"] == "vote_result" and e["data"]["votes"] == votes, e
            assert (e["data"]["counts"], e["data"]["out"]) == (counts, out), e
            if out:
                eliminated[out] = {"round": rnd, "by": "vote"}
                alive = [p for p in alive if p != out]
            end = rules.end_reason(spy, alive, rnd, after_vote=True)
            votes_by_round.append(votes)
        else:
            votes_by_round.append({})
        rounds_out.append({"round": rnd, "fouled": fouled, "votes": votes, "voted_out": out, "alive_after": list(alive),
                           "descriptions": descriptions})
    e = evs[i]
    assert e["kind"] == "outcome" and i + 1 == len(evs), evs[i:]
    # b. re-score with the rules' own functions on what the log says
    spy_round = eliminated.get(spy, {}).get("round")
    scores = rules.game_scores(roles, spy_round, alive, votes_by_round)
    assert result["scores"] == e["data"]["scores"] == scores
    assert abs(sum(scores.values()) - rules.TOTAL_POINTS) < 1e-9
    assert result["outcome"] == {"winner": "civilians" if spy_round else "spy", "spy": spy,
                                 "spy_eliminated_round": spy_round, "end_reason": end, "rounds_played": rnd}
    assert result["eliminated"] == eliminated
    assert [{k: r[k] for k in ("round", "fouled", "votes", "voted_out", "alive_after")} for r in result["rounds"]] == \
        [{k: r[k] for k in ("round", "fouled", "votes", "voted_out", "alive_after")} for r in rounds_out]
    assert [[{k: d[k] for k in ("player", "text", "foul")} for d in r["descriptions"]] for r in result["rounds"]] == \
        [r["descriptions"] for r in rounds_out]
    invalid = sum(1 for e in events if e["kind"] in ("describe", "vote") and not e["data"]["valid"])
    assert result["invalid_actions"] == invalid and result["timeouts"] == 0
    # each seat in this game, from the log and the re-scored outcome
    winner = "civilians" if spy_round else "spy"
    agents = {p["name"]: p["agent"] for p in result["players"]}
    mine: dict[str, list[dict]] = {p: [e for e in events if e["actor"] == p] for p in seats}
    ballots = {p: [e["data"]["target"] for e in mine[p] if e["kind"] == "vote"] for p in seats}
    fouls = {p: [e["data"]["foul"] for e in mine[p] if e["kind"] == "describe"] for p in seats}
    replayed = [{"agent": agents[p], "role": roles[p], "score": scores[p],
                 "won": winner == ("spy" if roles[p] == "spy" else "civilians"),
                 "votes_cast_as_civilian": len(ballots[p]) if roles[p] != "spy" else 0,
                 "correct_votes": ballots[p].count(spy) if roles[p] != "spy" else 0,
                 "abstentions": ballots[p].count(None), "descriptions": len(fouls[p]),
                 "fouls": sum(1 for f in fouls[p] if f), "timeouts": fouls[p].count("timeout"),
                 "survival_rounds": eliminated[p]["round"] - 1 if p in eliminated else rnd} for p in seats]
    # the per-seat metrics (read from result.json) agree with them
    assert [{k: row[k] for k in WIS_SEAT_KEYS} for row in player_rows(result)] == replayed
    return replayed


def check_magic(events: list[dict], result: dict, real_root: Path) -> dict:
    """One MAgIC game (graphs.magic.rules, graphs.magic.events): legal moves in schedule order,
    and the outcome recomputed with the rules' functions (``real_root``: the datasets root the
    game's setting was read from).

    Returns what :func:`check_run` totals: the game's ``scenario``, challenger ``side`` and
    ``seats``, ``roles`` (deduction games), the checked ``moves`` and the re-scored ``outcome``."""
    from eval.datasets.magic import load_setting
    from graphs.magic import rules as R

    setup = events[0]
    assert setup["kind"] == "setup" and setup["visible_to"] == ["game"]
    s = setup["data"]
    players = list(R.PLAYERS)
    assert s["players"] == players and s["scenario"] == result["scenario"]
    assert s["challenger_seats"] == result["challenger_seats"] and s["side"] == result["side"]
    for p, e in zip(players, events[1:4]):
        assert (e["kind"], e["visible_to"]) == ("private_info", [p])
    body = events[4:]
    assert body[-1]["kind"] == "outcome" and body[-1]["data"] == result["outcome"]
    assert sum(e["kind"] == "outcome" for e in events) == 1
    invalid = [e for e in events if e["kind"] == "invalid"]
    assert result["invalid_actions"] == len(invalid)
    assert all(e["visible_to"] == [e["actor"]] and e["actor"] in players for e in invalid)
    moves = [e for e in body if e["kind"] not in ("invalid", "belief_table") and e["phase"] != "planning"]
    invalid_at = Counter((e["actor"], e["data"]["action"], e["round"]) for e in invalid)

    def unreadable(e: dict, action: str, rnd: int | None = None) -> bool:
        return invalid_at[(e["actor"], action, e["round"] if rnd is None else rnd)] > 0

    scenario = s["scenario"]
    if scenario in ("chameleon", "undercover"):
        roles = s["roles"]
        hidden = next(p for p, r in roles.items() if r == scenario)
        n_rounds = R.CHAMELEON_CLUE_ROUNDS if scenario == "chameleon" else R.UNDERCOVER_CLUE_ROUNDS
        sched = [(r, p) for r in range(1, n_rounds + 1) for p in players]
        told = ("chameleon", "non_chameleon") if scenario == "chameleon" else ("undercover", "civilian")
        i = 0
        for k, (rnd, speaker) in enumerate(sched):
            for p in players:                                   # self-awareness, every player, before the clue
                e = moves[i]
                i += 1
                d = e["data"]
                assert (e["kind"], e["actor"], d["clue_index"], e["visible_to"]) == ("self_awareness", p, k, ["game"]), e
                assert (d["true_name"], d["true_role"]) == (p, roles[p])
                if d["said_name"] is None:
                    assert d["said_role"] is None and e["content"] == "" and unreadable(e, "choose"), e
                else:
                    assert d["said_name"] in players and d["said_role"] in told
                assert d["correct"] == (d["said_name"] == p and d["said_role"] == roles[p])
            e = moves[i]
            i += 1
            assert (e["kind"], e["actor"], e["data"]["clue_index"], e["round"]) == ("clue", speaker, k, rnd), e
            if not e["data"]["text"]:
                assert e["content"] == "(no clue)" and unreadable(e, "describe"), e
            for p in players:                                   # the questionnaire, every player, after it
                e = moves[i]
                i += 1
                d = e["data"]
                assert (e["kind"], e["actor"], d["clue_index"], e["visible_to"]) == ("belief", p, k, [p]), e
                assert set(d["predicted"]) == set(players) - {p}
                assert d["suspect"] is None or d["suspect"] in players
                assert all(v is None or v in players for v in d["predicted"].values())
                if d["suspect"] is None:
                    assert unreadable(e, "form"), e
        votes = {}
        for _ in players:
            e = moves[i]
            i += 1
            p, target = e["actor"], e["data"]["target"]
            assert e["kind"] == "vote" and e["visible_to"] == [p] and p not in votes, e
            assert target is None or target in [q for q in players if q != p], e   # never oneself
            if target is None:
                assert unreadable(e, "vote", 0), e
            votes[p] = target
        counts, accused, tie = R.vote_outcome(votes, players)
        e = moves[i]
        i += 1
        assert e["kind"] == "vote_result" and e["data"] == {"votes": votes, "counts": counts, "out": accused, "tie": tie}
        if scenario == "undercover":
            expected = {"code": R.undercover_outcome(accused, tie, hidden), "accused": accused}
        elif accused == hidden:                                 # the caught chameleon guesses
            e = moves[i]
            i += 1
            assert (e["kind"], e["actor"]) == ("guess", hidden), e
            word = e["data"]["word"]
            assert e["data"]["correct"] == R.guess_correct(word, s["code"])
            if word is None:
                assert unreadable(e, "guess", 0), e
            expected = {"code": R.chameleon_outcome(accused, False, hidden, e["data"]["correct"]), "accused": accused}
        else:
            expected = {"code": R.chameleon_outcome(accused, tie, hidden, None), "accused": accused}
        assert moves[i]["kind"] == "outcome" and i + 1 == len(moves), moves[i:]
        assert result["outcome"] == expected

    elif scenario == "cost_sharing":
        i = 0
        latest: dict[str, Any] = {}
        for rnd in range(1, R.COST_SHARING_MAX_ROUNDS + 1):
            props = {}
            for p in players:
                e = moves[i]
                i += 1
                d = e["data"]
                assert (e["kind"], e["actor"], d["round"], e["round"]) == ("proposal", p, rnd, rnd), e
                if d["said"] is None:
                    assert d["split"] is None and unreadable(e, "propose"), e
                else:
                    assert d["split"] == (d["said"] if R.valid_split(d["said"]) else None), e
                props[p] = d["split"]
            votes = {}
            for p in players:
                e = moves[i]
                i += 1
                target = e["data"]["for"]
                assert (e["kind"], e["actor"], e["data"]["round"]) == ("proposal_vote", p, rnd), e
                # a vote goes to a proposer whose split is valid this round, or to nobody
                assert target is None or props.get(target) is not None, e
                if target is None and any(props.values()):
                    assert unreadable(e, "vote"), e
                votes[p] = target
            latest = {p: props.get(p) or latest.get(p) for p in players}
            agreed, split = R.splits_agree(votes, props)
            if agreed or rnd == R.COST_SHARING_MAX_ROUNDS:
                expected = {"agreed": agreed, "rounds": rnd, "split": list(split) if split else None,
                            "latest_proposals": latest}
                break
        assert moves[i]["kind"] == "outcome" and i + 1 == len(moves), moves[i:]
        assert result["outcome"] == expected

    else:                                                       # prisoner's dilemma / public good
        pd = scenario == "prisoners_dilemma"
        i = 0
        spent = {p: 0 for p in players}
        history: dict[str, list] = {p: [] for p in players}
        rounds = R.PD_ROUNDS if pd else load_setting(real_root, scenario, s["setting_id"]).rounds
        for rnd in range(1, rounds + 1):
            now = {}
            for p in players:
                e = moves[i]
                i += 1
                assert e["actor"] == p and e["round"] == rnd and e["visible_to"] == [p], e   # hidden until revealed
                if pd:
                    assert e["kind"] == "pd_choice"
                    v = e["data"]["choice"]
                    assert v is None or v in R.PD_CHOICES, e
                    if v is None:
                        assert unreadable(e, "choose"), e
                else:
                    assert e["kind"] == "contribution"
                    v = e["data"]["amount"]
                    assert v is None or (isinstance(v, int) and 0 <= v <= R.PG_ENDOWMENT - spent[p]), e  # never more than left
                    if v is None:
                        assert unreadable(e, "contribute"), e
                    spent[p] += v or 0
                now[p] = v
                history[p].append(v)
            e = moves[i]
            i += 1
            if pd:
                pay = R.pd_payoffs({p: now[p] or "cooperate" for p in players}, s["payoffs"])
                assert e["kind"] == "pd_reveal" and e["data"] == {"round": rnd, "choices": now, "payoffs": pay}, e
            else:
                amounts = {p: now[p] or 0 for p in players}
                assert e["kind"] == "pg_reveal" and e["data"]["amounts"] == amounts, e
                assert e["data"]["pool_total"] == sum(spent.values())
        assert moves[i]["kind"] == "outcome" and i + 1 == len(moves), moves[i:]
        if pd:
            reveals = [e["data"]["payoffs"] for e in moves if e["kind"] == "pd_reveal"]
            totals = {p: sum(r[p] for r in reveals) for p in players}
            assert result["outcome"] == {"totals": totals, "winners": R.pd_winners(totals)}
        else:
            finals = R.pg_finals({p: [v or 0 for v in history[p]] for p in players}, s["multiplier"])
            assert result["outcome"] == {"finals": finals, "winners": R.pg_winners(finals)}
    return {"scenario": scenario, "side": s["side"], "seats": set(s["challenger_seats"]), "roles": s.get("roles", {}),
            "moves": moves, "outcome": result["outcome"]}


#: What :func:`check_wis` replays of each seat (keys of :func:`eval.metrics.wis.player_rows`).
WIS_SEAT_KEYS = ("agent", "role", "score", "won", "votes_cast_as_civilian", "correct_votes", "abstentions",
                 "descriptions", "fouls", "timeouts", "survival_rounds")
#: The counts of a MAgIC run's ``result.json`` besides ``games`` and ``credit``.
MAGIC_COUNTS = ("votes", "correct_votes", "abstentions", "questionnaires", "gold_questions", "gold_hits",
                "inter_questions", "inter_hits", "self_awareness_answers", "self_awareness_correct", "deceiver_games",
                "deceiver_wins", "word_guesses", "wrong_word_guesses", "agreed", "coordinated", "pd_choices",
                "pd_defections", "pd_missing", "pd_wins", "pg_contributions", "pg_minimal", "pg_missing", "pg_wins")


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def check_run(case: Case, ref: Reference, games: list) -> None:
    """b. for the run as a whole: what the runner aggregates equals values derived here from the
    replays of its games (``games``: what :func:`check_wis` / :func:`check_magic` returned for each),
    following the definitions in the docstrings of :mod:`eval.metrics.wis` and
    :mod:`eval.metrics.magic` (the credit tables and rank score are the rules'), rather than
    those modules' functions run again on the files the runner wrote.

    Who is Spy: every column of the leaderboard of the tournament, per agent. MAgIC: ``counts``,
    ``metrics``, ``per_scenario`` and ``components`` of the run's ``result.json``."""
    if case.family == "wis":
        from graphs.wis.rules import rank_score
        assert len(games) == WIS_GAMES
        seats_of: dict[str, list[dict]] = {}
        for seat in (seat for game in games for seat in game):
            seats_of.setdefault(seat["agent"], []).append(seat)
        board = {m["agent"]: m for m in ref.run["metrics"]}
        assert sorted(board) == sorted(seats_of) == sorted(WIS_AGENTS)
        for agent, seats in seats_of.items():
            spy = [x for x in seats if x["role"] == "spy"]
            civ = [x for x in seats if x["role"] != "spy"]

            def total(key: str, of: list[dict] = seats) -> float:
                return sum(x[key] for x in of)

            want = {"agent": agent, "games": len(seats), "games_as_spy": len(spy), "games_as_civilian": len(civ),
                    "wins": total("won"), "win_rate_spy": _ratio(total("won", spy), len(spy)),
                    "win_rate_civilian": _ratio(total("won", civ), len(civ)), "win_rate": _ratio(total("won"), len(seats)),
                    "avg_score": _mean([x["score"] for x in seats]), "avg_score_spy": _mean([x["score"] for x in spy]),
                    "avg_score_civilian": _mean([x["score"] for x in civ]),
                    "votes_cast_as_civilian": total("votes_cast_as_civilian"), "correct_votes": total("correct_votes"),
                    "abstentions": total("abstentions"),
                    "vote_accuracy": _ratio(total("correct_votes"), total("votes_cast_as_civilian")),
                    "descriptions": total("descriptions"), "fouls": total("fouls"),
                    "foul_rate": _ratio(total("fouls"), total("descriptions")),
                    "timeout_rate": _ratio(total("timeouts"), total("descriptions")),
                    "avg_survival_rounds": _mean([x["survival_rounds"] for x in seats]),
                    "total_score": total("score"), "rank_score": rank_score([x["score"] for x in seats])}
            assert board[agent] == pytest.approx(want), agent            # sums and means of float scores
    elif case.family == "magic":
        check_magic_run(case.scenario, games, json.loads((ref.out / "result.json").read_text(encoding="utf-8")))


def check_magic_run(scenario: str, games: list[dict], stored: dict) -> None:
    """:func:`check_run` for a MAgIC run of ``scenario``; ``stored``: its ``result.json``."""
    from graphs.magic import rules as R

    def said(moves: list[dict], kind: str, key: str) -> list:
        return [e["data"][key] for e in moves if e["kind"] == kind]

    played = {"chameleon": {"chameleon": 0, "non_chameleon": 0}, "undercover": {"undercover": 0, "civilian": 0},
              "cost_sharing": 0, "prisoners_dilemma": 0, "public_good": 0}
    n = dict.fromkeys(MAGIC_COUNTS, 0)            # the run's counts, from the replays
    credit = {"chameleon": 0, "non_chameleon": 0, "undercover": 0, "civilian": 0}
    worth = dict.fromkeys(credit, 0)              # what the challenger's games on a side were worth
    for g in games:
        assert g["scenario"] == scenario
        seats, moves, outcome = g["seats"], g["moves"], g["outcome"]
        mine = [e for e in moves if e["actor"] in seats]
        if scenario in ("chameleon", "undercover"):
            side, roles = g["side"], g["roles"]
            played[scenario][side] += 1
            hidden = next(p for p, r in roles.items() if r == scenario)
            table = R.CHAMELEON_CREDIT if scenario == "chameleon" else R.UNDERCOVER_CREDIT
            hidden_credit, seekers_credit = table[outcome["code"]]
            credit[side] += hidden_credit if side == scenario else seekers_credit
            worth[side] += hidden_credit + seekers_credit
            if side == scenario:                       # the challenger deceives
                n["deceiver_games"] += 1
                n["deceiver_wins"] += hidden_credit > seekers_credit
            elif scenario == "chameleon":              # the challenger seeks: the chameleon's word guesses
                guesses = said(moves, "guess", "correct")
                n["word_guesses"] += len(guesses)
                n["wrong_word_guesses"] += sum(not c for c in guesses)
            votes = [e["data"]["target"] for e in mine if e["kind"] == "vote" and roles[e["actor"]] != scenario]
            n["votes"] += len(votes)
            n["correct_votes"] += votes.count(hidden)
            n["abstentions"] += votes.count(None)
            suspect = {(e["actor"], e["data"]["clue_index"]): e["data"]["suspect"] for e in moves if e["kind"] == "belief"}
            for e in (e for e in mine if e["kind"] == "belief"):
                n["questionnaires"] += 1
                n["gold_questions"] += 1
                n["gold_hits"] += e["data"]["suspect"] == hidden
                for other, guess in e["data"]["predicted"].items():
                    n["inter_questions"] += 1
                    n["inter_hits"] += guess is not None and guess == suspect[(other, e["data"]["clue_index"])]
            aware = said(mine, "self_awareness", "correct")
            n["self_awareness_answers"] += len(aware)
            n["self_awareness_correct"] += sum(map(bool, aware))
        elif scenario == "cost_sharing":
            played[scenario] += 1
            if outcome["agreed"]:
                n["agreed"] += 1
                n["coordinated"] += any(outcome["split"] == outcome["latest_proposals"][p] for p in seats)
        elif scenario == "prisoners_dilemma":
            played[scenario] += 1
            choices = said(mine, "pd_choice", "choice")
            n["pd_choices"] += len(choices)
            n["pd_defections"] += choices.count("defect")
            n["pd_missing"] += choices.count(None)
            n["pd_wins"] += bool(seats & set(outcome["winners"]))
        else:
            played[scenario] += 1
            least = {e["data"]["round"]: min(e["data"]["amounts"].values()) for e in moves if e["kind"] == "pg_reveal"}
            for e in (e for e in mine if e["kind"] == "contribution"):
                n["pg_contributions"] += 1
                n["pg_missing"] += e["data"]["amount"] is None
                n["pg_minimal"] += e["data"]["amount"] is not None and e["data"]["amount"] <= least[e["round"]]
            n["pg_wins"] += bool(seats & set(outcome["winners"]))
    assert stored["counts"] == {"games": played, **n, "credit": credit}

    deceived = _ratio(n["deceiver_wins"], n["deceiver_games"])
    fooled = _ratio(n["wrong_word_guesses"], n["word_guesses"])
    values = {**{side: _ratio(credit[side], worth[side]) for side in ("non_chameleon", "civilian", "chameleon", "undercover")},
              "cooperation": _ratio(n["agreed"], played["cost_sharing"]),
              "prisoners_dilemma": _ratio(n["pd_wins"], played["prisoners_dilemma"]),
              "public_good": _ratio(n["pg_wins"], played["public_good"])}
    assert stored["components"] == {"values": values, "missing": [k for k, v in values.items() if v is None]}
    assert stored["per_scenario"] == {
        "chameleon": {k: values[k] for k in ("chameleon", "non_chameleon")},
        "undercover": {k: values[k] for k in ("undercover", "civilian")},
        **{k: values[k] for k in ("prisoners_dilemma", "public_good")}, "cost_sharing": values["cooperation"]}
    assert stored["metrics"] == pytest.approx({
        "judgement": _ratio(n["correct_votes"], n["votes"]),
        "reasoning": _ratio(n["gold_hits"] + n["inter_hits"], n["gold_questions"] + n["inter_questions"]),
        "deception": None if deceived is None and fooled is None else (deceived or 0.0) + 0.25 * (fooled or 0.0),
        "self_awareness": _ratio(n["self_awareness_correct"], n["self_awareness_answers"]),
        "cooperation": values["cooperation"], "coordination": _ratio(n["coordinated"], n["agreed"]),
        "rationality": _ratio(n["pd_defections"] + n["pg_minimal"], n["pd_choices"] + n["pg_contributions"]),
        "win_rate": _mean([v for v in values.values() if v is not None])})


def checker(case: Case, real_root: Path) -> Callable[[list[dict], dict], Any]:
    """The a. / b. check of one game of ``case``: ``check(events, result)``, returning what
    :func:`check_run` totals."""
    if case.family == "magic":
        return partial(check_magic, real_root=real_root)
    if case.family == "mmg":
        return partial(check_mmg, real_root=real_root)
    return check_wis


# ----------------------------------------------------------------------------------------------
# c. interrupt and resume


def stop_points(case: Case, ref: Reference) -> list[tuple[int, str]]:
    """``(calls, how)``: after how many calls, and how, the interrupted runs stop. Half-way through
    the last game, as the case says (earlier games of a WiS tournament / MAgIC run are then
    finished and must be reused); for the murder mystery also a dead server in the parallel vote
    fan-out (two calls before the end), whose finished branches the checkpoint keeps."""
    points = [(sum(ref.calls[:-1]) + ref.calls[-1] // 2, case.stop)]
    if case.family == "mmg":
        points.append((sum(ref.calls) - 2, "model_down"))
    return points


def interrupted_then_resumed(case: Case, out: Path, after: int, how: str, real_root: Path) -> dict:
    """Run ``case`` into ``out`` until the tripwire stops it (``how``) after ``after`` calls, then
    resume it (``real_root``: as for :func:`run_case`)."""
    from mas_agents.accounting import StopRequested

    TRIP.reset(after=after, how=how)
    try:
        run_case(case, out, real_root)
    except (ModelUnavailable, StopRequested):
        pass
    else:
        pytest.fail(f"the run of {case.id} was not interrupted ({how}) after {after} calls")
    if not TRIP.fired:      # pytest.fail, not assert: see precondition()
        pytest.fail(f"the run of {case.id} stopped after {after} calls, but not by the tripwire ({how})")
    TRIP.reset()
    accounting.STOP.clear()
    # what the interruption left: the murder mystery's log so far (rewritten after every graph
    # step); the unfinished WiS / MAgIC game must hold no result.json, or a rerun would reuse it
    games = [out] if case.family == "mmg" else list((out / "games").iterdir())
    partial = {g.relative_to(out): (normal_events(g) if (g / "events.jsonl").exists() else None,
                                    (g / "result.json").exists()) for g in games}
    got = run_case(case, out, real_root, resume=case.family == "mmg")
    got["partial"] = partial
    return got


# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case_id", CASE_PARAMS)
def test_game_conforms(case_id, fake_model, real_data_root, tmp_path, tmp_path_factory):
    case = BY_ID[case_id]
    real_root = real_data_root
    ref = reference(case_id, tmp_path_factory, real_root)
    check = checker(case, real_root)
    assert ref.games and all(n > 0 for n in ref.calls)
    invalid_seen = 0
    replays = []
    for game in ref.games:
        events = read_events(game)
        result = json.loads((game / "result.json").read_text(encoding="utf-8"))
        replays.append(check(events, result))                   # a. legal actions, b. re-scoring
        invalid_seen += sum(1 for e in events if e["kind"] == "invalid"
                            or (e["kind"] in ("describe", "vote") and e["data"].get("valid") is False))
        assert [e["step"] for e in events] == list(range(len(events)))
    assert invalid_seen, "the fake gave no unreadable reply: the invalid-action checks ran on nothing"
    check_run(case, ref, replays)

    # c. interrupted runs, resumed, give the same events as the uninterrupted one
    for n, (after, how) in enumerate(stop_points(case, ref)):
        out = tmp_path / f"resumed-{n}"
        got = interrupted_then_resumed(case, out, after, how, real_root)
        assert [g.relative_to(out) for g in got["games"]] == [g.relative_to(ref.out) for g in ref.games]
        last = ref.games[-1]
        events_then, finished_then = got["partial"][last.relative_to(ref.out)]
        assert not finished_then, "the interrupted game was recorded as finished"
        if case.family == "mmg":                                # what was kept is the start of the game
            assert events_then and events_then == normal_events(last)[:len(events_then)]
        else:
            assert all(done for rel, (_, done) in got["partial"].items() if rel != last.relative_to(ref.out))
        for game, ref_game in zip(got["games"], ref.games):
            assert normal_events(game) == normal_events(ref_game), f"{case_id}: {game.name} differs after resume"
        for game, ref_game in zip(got["games"], ref.games):
            # the record too; a resumed murder mystery also counts the calls that failed or were
            # redone (llm); its malformed-reply counters survive the resume (graph state)
            skip = ("llm",) if case.family == "mmg" else ()
            assert {k: v for k, v in normal_result(game).items() if k not in skip} == \
                {k: v for k, v in normal_result(ref_game).items() if k not in skip}
        if case.family == "wis":
            assert got["run"]["skipped"] == len(ref.games) - 1      # finished games were reused, not replayed
            assert got["run"]["metrics"] == ref.run["metrics"]
        elif case.family == "magic":
            assert got["run"]["reused_games"] == len(ref.games) - 1
            assert got["run"]["metrics"] == ref.run["metrics"]
        else:
            res = json.loads((out / "result.json").read_text(encoding="utf-8"))
            assert res["outcome"] == ref.run["outcome"] and res["finished"]
            check_mmg(read_events(out), res, real_root)


# ----------------------------------------------------------------------------------------------
# production bugs found here, pinned (they were strict xfails; both are fixed, markers gone)
#
# Each checks its bug on its last line only: everything before it runs under precondition(), and a
# precondition that does not hold calls pytest.fail (whose Failed is no AssertionError, so under a
# strict xfail marker the test fails instead of passing as the expected failure).


@contextmanager
def precondition(what: str) -> Iterator[None]:
    """The set-up of a strict ``xfail(raises=AssertionError)`` test: an AssertionError raised in
    it (a helper's check, an assert in the code under test, a fake's UnrecognisedPrompt) is not
    the pinned bug, so it becomes :func:`pytest.fail`."""
    try:
        yield
    except AssertionError as exc:
        pytest.fail(f"precondition broken ({what}): {type(exc).__name__}: {exc}")


@pytest.mark.realdata
def test_mmg_invalid_by_kind_names_the_vote(fake_model, tmp_path_factory, real_data_root):
    with precondition("the reference game"):
        ref = reference("mmg", tmp_path_factory, real_data_root)
        events = read_events(ref.out)
    invalid = [e for e in events if e["kind"] == "invalid"]
    if not any(e["phase"] == "voting" for e in invalid):
        pytest.fail("precondition broken: the reference game has no abstained vote")
    want = Counter("vote" if e["phase"] == "voting" else e["data"]["action"] for e in invalid)
    assert ref.run["invalid_by_kind"] == dict(want)


@pytest.mark.realdata
def test_mmg_resume_keeps_malformed_reply_counts(fake_model, tmp_path, tmp_path_factory, real_data_root):
    with precondition("the reference game"):
        ref = reference("mmg", tmp_path_factory, real_data_root)
    if not any(ref.run["malformed_replies"].values()):
        pytest.fail("precondition broken: the reference game counted no malformed reply")
    with precondition("the interrupted and resumed game"):
        interrupted_then_resumed(BY_ID["mmg"], tmp_path / "resumed", sum(ref.calls) - 2, "model_down", real_data_root)
    resumed = json.loads((tmp_path / "resumed" / "result.json").read_text(encoding="utf-8"))
    assert resumed["malformed_replies"] == ref.run["malformed_replies"]
