"""The conformance kit's cases of the built-in games (:mod:`mas_agents.game.conformance_kit`), and what their
runners aggregate over several games, re-derived from the games' replays.

* ``mmg``: the murder mystery on the REAL WellPlay script "Sin" (4 characters, 1 round of
  questioning; read from the datasets root, never committed),
  :func:`mas_agents.graphs.mmg.session.play_script`; interrupted after every graph step and resumed, by
  Ctrl-C half-way and by a dead server in the parallel vote fan-out (two calls before the end),
  whose finished branches the checkpoint keeps;
* ``wis-4``, ``wis-5``, ``wis-6``: Who is Spy with 4, 5 and 6 seats, a two-game tournament on the
  real word pairs, :func:`mas_agents.graphs.wis.tournament.run_tournament` (which plays each game with
  :func:`mas_agents.graphs.wis.session.play_game`); stopped half-way through its second game and run
  again (the first game reused);
* ``magic-<scenario>``: each of the five MAgIC scenarios on the REAL setting 0,
  :func:`mas_agents.graphs.magic.bench.run_magic` (one game per challenger side).

Every case reads the real data (``realdata``). The reference (uninterrupted) runs are shared
with :mod:`tests.test_golden` (its file names are these case ids); the cases were the setups of
the former per-game ``tests/test_conformance.py`` and are unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from mas_agents.graphs.magic import checks as magic_checks
from mas_agents.graphs.wis import checks as wis_checks
from tests import data_roots
from mas_agents.game.conformance_kit import Case, Reference, add_cases, game_events, read_json
from mas_agents.game.fake_chat import SALT

MAGIC_SCENARIOS = ("chameleon", "undercover", "cost_sharing", "prisoners_dilemma", "public_good")
WIS_AGENTS = ["plain", "plain+reasoning"]
WIS_GAMES = 2
MMG_ROUNDS = 1


def sin(real_root: Path):
    """The real script "Sin" (en) of ``real_root``."""
    from mas_agents.graphs.mmg.dataset import load_script
    return load_script(real_root, data_roots.SIN_ID, "en")


def _files(game: Path) -> tuple[dict, list[dict], dict]:
    """``(config, events, result)`` of a game directory."""
    return read_json(game / "config.json"), game_events(game), read_json(game / "result.json")


def play_mmg(out: Path, real_root: Path, *, resume: bool = False, progress: Callable | None = None) -> dict:
    """The murder mystery on "Sin", 1 round, 1 question per turn (see the module text)."""
    from mas_agents.graphs.mmg.session import MmgConfig, play_script
    res = play_script(MmgConfig(script=sin(real_root), out=out, agent="plain", model="local", rounds=MMG_ROUNDS,
                                questions=1, seed=0, data_dir=real_root), resume=resume, progress=progress)
    return {"games": [out], "run": res}


def play_wis(seats: int, seed: int) -> Callable[..., dict]:
    """A two-game tournament of ``seats`` seats (see the module text)."""
    def play(out: Path, real_root: Path, *, resume: bool = False, progress: Callable | None = None) -> dict:
        from mas_agents.graphs.wis.tournament import TournamentConfig, run_tournament
        res = run_tournament(TournamentConfig(agents=WIS_AGENTS, games=WIS_GAMES, data_root=real_root, players=seats,
                                              lang="en", model="local", seed=seed, speak_timeout=None,
                                              db=out / "wis.sqlite", out=out))
        return {"games": sorted((out / "games").iterdir()), "run": res}
    return play


def play_magic(scenario: str) -> Callable[..., dict]:
    """One MAgIC scenario on setting 0, one game per challenger side (see the module text)."""
    def play(out: Path, real_root: Path, *, resume: bool = False, progress: Callable | None = None) -> dict:
        from mas_agents.graphs.magic.bench import MagicBenchConfig, game_dir, run_magic
        from mas_agents.graphs.magic.session import SIDES
        res = run_magic(MagicBenchConfig(data_root=real_root, out=out, scenarios=[scenario], challenger="plain",
                                         defender="plain", settings="0", model="local", seed=0))
        games = [game_dir(out, scenario, side, 0) for side in SIDES[scenario]]    # in play order
        assert sorted(games) == sorted((out / "games").iterdir())
        return {"games": games, "run": res}
    return play


#: The counts of a MAgIC run's ``result.json`` besides ``games`` and ``credit``.
MAGIC_COUNTS = ("votes", "correct_votes", "abstentions", "questionnaires", "gold_questions", "gold_hits",
                "inter_questions", "inter_hits", "self_awareness_answers", "self_awareness_correct", "deceiver_games",
                "deceiver_wins", "word_guesses", "wrong_word_guesses", "agreed", "coordinated", "pd_choices",
                "pd_defections", "pd_missing", "pd_wins", "pg_contributions", "pg_minimal", "pg_missing", "pg_forced",
                "pg_wins")


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def check_wis_run(ref: Reference) -> None:
    """What a Who-is-Spy tournament aggregates: every column of its leaderboard, per agent, equals
    values derived here from the replays of its games (:func:`mas_agents.graphs.wis.checks.walk`: one row
    per seat), following the definitions in the docstring of :mod:`mas_agents.graphs.wis.metrics` (the rank
    score is the rules'), rather than that module's functions run again on the files the runner
    wrote."""
    games = [wis_checks.walk(*_files(d)) for d in ref.games]
    from mas_agents.graphs.wis.rules import rank_score
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
        # the mean score per game's 95 % interval (issue 56 item 4): whole games resampled, each game
        # the sum of the agent's seats' scores over its number of seats there
        from mas_agents.stats import bootstrap_ratio
        per_game = [[float(x["score"]) for x in game if x["agent"] == agent] for game in games]
        per_game = [v for v in per_game if v]
        interval = bootstrap_ratio([sum(v) for v in per_game], [len(v) for v in per_game])
        want.update(avg_score_low=interval.low, avg_score_high=interval.high)
        assert board[agent] == pytest.approx(want), agent            # sums and means of float scores


def check_magic_run(ref: Reference) -> None:
    """What a MAgIC run of one scenario aggregates (``counts``, ``metrics``, ``per_scenario`` and
    ``components`` of its ``result.json``) equals values derived here from the replays of its games
    (:func:`mas_agents.graphs.magic.checks.walk`), following the definitions in the docstring of
    :mod:`mas_agents.graphs.magic.metrics` (the credit tables are the rules'), rather than that module's
    functions run again on the files the runner wrote."""
    games = [magic_checks.walk(*_files(d)) for d in ref.games]
    stored = read_json(ref.out / "result.json")
    [scenario] = read_json(ref.out / "config.json")["scenarios"]        # the one scenario the case ran
    from mas_agents.graphs.magic import rules as R

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
                if e["data"].get("forced"):   # no points left, not asked: no decision (not Rationality's)
                    n["pg_forced"] += 1
                    continue
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
        "coordination_emnlp": _ratio(n["coordinated"], played["cost_sharing"]),   # ÷ all Cost Sharing games
        "rationality": _ratio(n["pd_defections"] + n["pg_minimal"], n["pd_choices"] + n["pg_contributions"]),
        "win_rate": _mean([v for v in values.values() if v is not None])})


CASES = [
    # "s9": on Sin's prompts (with the quoted record of issue 57) this one gives two abstained asks,
    # an abstained introduction and an abstained vote, and an answer read after its re-prompt, so
    # the invalid-action checks have work of every kind but the answer's
    Case("mmg", "mmg", play_mmg, stop="ctrl_c", salt="s9", more_stops=((2, "model_down"),),
         run_keys=("outcome", "finished"), realdata=True),
    Case("wis-4", "wis", play_wis(4, 4), stop="ctrl_c", run_keys=("metrics",), reused="skipped",
         check_run=check_wis_run, realdata=True),
    Case("wis-5", "wis", play_wis(5, 5), stop="model_down", run_keys=("metrics",), reused="skipped",
         check_run=check_wis_run, realdata=True),
    # "s1": with the quoted record of issue 57 the default salt gives no repeat foul in any WiS
    # case; this one gives a repeat and a missing description here
    Case("wis-6", "wis", play_wis(6, 6), stop="ctrl_c", salt="s1", run_keys=("metrics",), reused="skipped",
         check_run=check_wis_run, realdata=True),
    # the game-theory scenarios show no seat's own words to the others (choices, numbers, splits);
    # cost sharing on "s1": with the quoted record of issue 57 the default salt gives it no
    # unreadable reply; this one gives four and an agreement in round 5, as the default did before
    *(Case(f"magic-{s}", "magic", play_magic(s), stop=("model_down", "ctrl_c")[i % 2], run_keys=("metrics",),
           reused="reused_games", check_run=check_magic_run, realdata=True,
           free_text=s in ("chameleon", "undercover"), salt="s1" if s == "cost_sharing" else SALT)
      for i, s in enumerate(MAGIC_SCENARIOS)),
]
#: How each case is set up, for the golden file names of :mod:`tests.test_golden`.
SETUPS: dict[str, dict[str, Any]] = {
    "mmg": {"family": "mmg", "scenario": ""}, **{f"wis-{n}": {"family": "wis", "scenario": ""} for n in (4, 5, 6)},
    **{f"magic-{s}": {"family": "magic", "scenario": s} for s in MAGIC_SCENARIOS}}
add_cases(*CASES)
