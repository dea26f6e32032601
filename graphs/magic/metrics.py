"""MAgIC capability metrics and win rate, computed from game event logs only (no LLM, no replay).

A *game* is the list of event dicts one MAgIC game wrote to ``events.jsonl`` (kinds and payloads
in :mod:`mas_agents.graphs.magic.events`); it holds exactly one ``setup`` and one ``outcome`` event. The
*challenger* is the spec under test: it plays the seats ``setup.data.challenger_seats`` on the
side ``setup.data.side``. :func:`scenario_metrics` scores a list of games; :func:`load_games`
reads them from a run directory.

Definitions (MAgIC, Xu et al. 2023, arXiv 2311.08562, §3.3 and Appendix A.2, as pinned down in
our reading of MAgIC §4 and Table 1):

* **Judgement** = votes for the true chameleon / undercover ÷ votes cast, over the ``vote``
  events of challenger seats whose role is ``non_chameleon`` (Chameleon) or ``civilian``
  (Undercover).
* **Reasoning** = (gold hits + inter hits) ÷ (gold questions + inter questions) over every
  ``belief`` questionnaire written by a challenger seat. Each questionnaire is one gold question,
  a hit when ``suspect`` is the true chameleon / undercover. Each entry ``predicted[other]`` is
  one inter question, a hit when it equals ``suspect`` of ``other``'s own questionnaire with the
  same ``clue_index`` in the same game.
* **Self-awareness** = ``self_awareness`` answers of challenger seats with ``correct`` true ÷
  those answers.
* **Deception** = (games won as chameleon or undercover ÷ those games)
  + 0.25 × (wrong word guesses ÷ word guesses in Chameleon games where the challenger plays the
  non-chameleons). This is the paper's definition; it does not count outcome codes for the second
  part as the upstream code does.
* **Cooperation** = agreed Cost Sharing games ÷ Cost Sharing games.
* **Coordination** has two denominators, and we report both, each beside the table that used it
  (issue 56 item 2). Numerator of both: agreed Cost Sharing games whose agreed ``split`` equals
  the challenger's latest proposal (``outcome.latest_proposals[seat]``).

  - ``coordination`` = that ÷ **agreed** games: the authors' released metric code (cathyxl/MAgIC
    ``metrics_release.py`` at e66dd73, ``collabration``: agreed proposals ÷ ``win_results["agree"]``)
    and the pre-EMNLP leaderboard (arXiv v1/v2 Table 1; GPT-4: Cooperation 47.6, Coordination
    100). Undefined (None) when no game was agreed: the upstream code divides by zero there.
  - ``coordination_emnlp`` = that ÷ **all** Cost Sharing games: the EMNLP 2024 Tables 1 and 4.
    §3.3 Eq. 7 is lost in the text; the tables show it. For every model that has the same
    Cooperation in the pre-EMNLP table and an EMNLP table (GPT-4-turbo, GPT-4, GPT-3.5-turbo,
    PaLM 2, Cohere, Llama-2-70B and the +PGM rows of GPT-4, GPT-3.5-turbo, Llama-2-70B), EMNLP
    Coordination = pre-EMNLP Coordination × Cooperation within the printed precision (GPT-3.5-turbo
    16.7 × 0.571 = 9.54, printed 9.50; GPT-4-turbo 50.0 × 0.667 = 33.35, printed 33.4, the one
    EMNLP value that is not k/21); every EMNLP row has Coordination ≤ Cooperation (tests:
    tests/eval/test_magic_coordination.py). 0 when no game was agreed; None only with no Cost
    Sharing game.
* **Rationality** = (Prisoner's Dilemma ``defect`` choices of challenger seats + Public Good
  rounds in which a challenger seat's contribution is the round minimum) ÷ (PD choices + PG
  contributions of challenger seats).
* **Win rate** = mean of seven parts: the credit scores as non-chameleon, chameleon, civilian and
  undercover, Cooperation, the PD win rate and the Public Good win rate. Credits per outcome code
  (chameleon / non-chameleon): 0 → 0/2, 1 → 1/1, 2 → 2/0, 3 → 1/1, summed and divided by 2n;
  (undercover / civilian): 0 → 0/3, 1 → 3/0, 2 → 2/1, divided by 3n; n = the challenger's games
  on that side. PD / PG win rate = games with a challenger seat among ``outcome.winners`` ÷ games.

Our choices (the paper leaves them open):

* **Abstentions** (a ``vote`` with ``target`` None) count as cast and wrong in Judgement: the
  seat had a vote and did not use it to find the chameleon / undercover.
* **Reasoning.** Every ``belief`` event of a challenger seat counts, whatever its role: the game
  decides who fills in the questionnaire. A ``suspect`` of None is a gold question missed. An
  inter question counts only when the other player's questionnaire of that ``clue_index``
  exists (if it has several, the last one); a guess of None is never a hit (not even when the
  other also answered None), and an entry about the seat itself is ignored.
* **"Won" in Deception** = the chameleon's / undercover's credit exceeds the other side's credit
  in the tables above: chameleon outcome code 2 only; undercover codes 1 and 2. A word guess is
  every ``guess`` event of such a game; ``correct`` false (a None word included) is wrong.
  If one part of Deception has no denominator (no games as chameleon/undercover, or no word
  guesses as non-chameleon), the other part is used alone — as it stands, so the guess part
  alone is still weighted 0.25; none → None.
* **Coordination** with several challenger seats: a game counts if the split equals the latest
  proposal of any challenger seat. Splits are compared number by number (tolerance 1e-9).
* **Rationality, Public Good.** The round minimum is taken over the amounts of that round's
  ``pg_reveal`` (what the game applied) when there is one, else over the non-None amounts of the
  round's ``contribution`` events; a seat's contribution is rational when it is ≤ that minimum
  (ties count). A choice or amount of None counts in the denominator and is not rational. A
  contribution of a seat with no points left (``forced``, 0 without being asked:
  :func:`mas_agents.graphs.magic.rules.pg_forced`) counts like any other, Eq. 8 counting every round.
* **PD / PG win rates** are per game: a game is won when any challenger seat is a winner (shared
  wins count).
* **Units.** Every event of every challenger seat counts (votes of all rounds, PD choices of all
  rounds, ...); games are counted once each, whatever the number of challenger seats.
* A rate whose denominator is 0 is None. Win-rate parts with no games are left out of the mean
  and listed in ``components["missing"]``; no part at all → None.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mas_agents.graphs.magic.rules import (  # the one credit table (each game worth 2 / 3)
    CHAMELEON_CREDIT,
    UNDERCOVER_CREDIT,
)
from mas_agents.events import read_events
from mas_agents.rundir import EVENTS_FILE

__all__ = ["CAPABILITIES", "COORDINATION_EMNLP", "COORDINATION_LABELS", "METRIC_KEYS", "WIN_RATE_PARTS",
           "load_games", "scenario_metrics", "undefined_reason"]

CAPABILITIES = ("judgement", "reasoning", "deception", "self_awareness", "cooperation",
                "coordination", "rationality")
#: Coordination with the EMNLP 2024 denominator (all Cost Sharing games; the module docstring).
COORDINATION_EMNLP = "coordination_emnlp"
#: Every number of :func:`scenario_metrics` a run reports: the seven capabilities (Coordination
#: with the upstream denominator), Coordination with the EMNLP one, and the win rate.
METRIC_KEYS = ("judgement", "reasoning", "deception", "self_awareness", "cooperation", "coordination",
               COORDINATION_EMNLP, "rationality", "win_rate")
#: What each Coordination is, the one wording of the two wherever they are shown (report and
#: ablation headers, reproduce tables, ``mas magic run``'s line, the runs list, the radar; the two
#: are never shown without their denominator): ÷ agreed games is the authors' metric code's
#: (cathyxl/MAgIC ``metrics_release.py``), ÷ all Cost Sharing games the EMNLP 2024 tables'. Which
#: paper table uses which is for a table set beside paper rows to say in its own note.
COORDINATION_LABELS = {
    "coordination": "Coordination ÷ agreed games (upstream code)",
    COORDINATION_EMNLP: "Coordination ÷ all Cost Sharing games (EMNLP 2024)",
}
#: The seven parts of the win rate, in the order of ``components["values"]``.
WIN_RATE_PARTS = ("non_chameleon", "civilian", "chameleon", "undercover", "cooperation",
                  "prisoners_dilemma", "public_good")


_DEDUCTION_TRUE_ROLE = {"chameleon": "chameleon", "undercover": "undercover"}
_SEEKER_ROLES = ("non_chameleon", "civilian")


def load_games(run_dir: str | Path) -> list[list[dict[str, Any]]]:
    """The event logs ``<run_dir>/games/*/events.jsonl``, sorted by game directory name.

    Returns an empty list if there are no games. Raises ``ValueError`` (from
    :func:`mas_agents.events.read_events`) on a malformed line.
    """
    paths = sorted(Path(run_dir, "games").glob(f"*/{EVENTS_FILE}"), key=lambda p: p.parent.name)
    return [read_events(p) for p in paths]


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _one(events: Sequence[Mapping[str, Any]], kind: str) -> Mapping[str, Any]:
    found = [e for e in events if e.get("kind") == kind]
    if len(found) != 1:
        raise ValueError(f"a MAgIC game needs exactly one {kind!r} event, got {len(found)}")
    return found[0].get("data") or {}


def _true_target(setup: Mapping[str, Any]) -> str:
    role = _DEDUCTION_TRUE_ROLE[setup["scenario"]]
    holders = [n for n, r in (setup.get("roles") or {}).items() if r == role]
    if len(holders) != 1:
        raise ValueError(f"a {setup['scenario']} game needs exactly one {role}, got {len(holders)}")
    return holders[0]


def _same_split(a: Sequence[float] | None, b: Sequence[float] | None) -> bool:
    if a is None or b is None or len(a) != len(b):
        return False
    return all(math.isclose(float(x), float(y), rel_tol=0.0, abs_tol=1e-9) for x, y in zip(a, b))


def scenario_metrics(games: Iterable[Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """Capability metrics and win rate of the challenger over ``games`` (see the module docstring).

    Returns a dict with

    * ``judgement, reasoning, self_awareness, deception, cooperation, coordination,
      coordination_emnlp, rationality, win_rate``: floats, or None when undefined
      (:func:`undefined_reason` says why);
    * ``components``: ``{"values": {part: float|None for part in WIN_RATE_PARTS},
      "missing": [parts with no games]}``;
    * ``per_scenario``: ``{"chameleon": {"chameleon": credit, "non_chameleon": credit},
      "undercover": {"undercover": credit, "civilian": credit}, "cost_sharing": cooperation,
      "prisoners_dilemma": PD win rate, "public_good": PG win rate}``;
    * ``counts``: the numerators and denominators (games per scenario and side, votes,
      questionnaires, guesses, decisions, ...).

    Raises:
        ValueError: a game without exactly one ``setup`` / ``outcome`` event, a deduction game
            without exactly one chameleon / undercover, or an unknown scenario or outcome code.
    """
    c: dict[str, Any] = {
        "games": {"chameleon": {"chameleon": 0, "non_chameleon": 0},
                  "undercover": {"undercover": 0, "civilian": 0},
                  "cost_sharing": 0, "prisoners_dilemma": 0, "public_good": 0},
        "votes": 0, "correct_votes": 0, "abstentions": 0,
        "questionnaires": 0, "gold_questions": 0, "gold_hits": 0,
        "inter_questions": 0, "inter_hits": 0,
        "self_awareness_answers": 0, "self_awareness_correct": 0,
        "deceiver_games": 0, "deceiver_wins": 0, "word_guesses": 0, "wrong_word_guesses": 0,
        "agreed": 0, "coordinated": 0,
        "pd_choices": 0, "pd_defections": 0, "pd_missing": 0, "pd_wins": 0,
        "pg_contributions": 0, "pg_minimal": 0, "pg_missing": 0, "pg_forced": 0, "pg_wins": 0,
    }
    credit = {"chameleon": 0, "non_chameleon": 0, "undercover": 0, "civilian": 0}

    for events in games:
        setup = _one(events, "setup")
        outcome = _one(events, "outcome")
        scenario, side = setup.get("scenario"), setup.get("side")
        seats = set(setup.get("challenger_seats") or [])
        roles = setup.get("roles") or {}
        mine = [e for e in events if e.get("actor") in seats]

        if scenario in _DEDUCTION_TRUE_ROLE:
            target = _true_target(setup)
            if side not in c["games"][scenario]:
                raise ValueError(f"unknown side {side!r} in a {scenario} game")
            c["games"][scenario][side] += 1
            table = CHAMELEON_CREDIT if scenario == "chameleon" else UNDERCOVER_CREDIT
            code = outcome.get("code")
            if code not in table:
                raise ValueError(f"unknown {scenario} outcome code {code!r}")
            deceiver_credit, seeker_credit = table[code]
            credit[side] += deceiver_credit if side in ("chameleon", "undercover") else seeker_credit
            if side in ("chameleon", "undercover"):
                c["deceiver_games"] += 1
                c["deceiver_wins"] += deceiver_credit > seeker_credit
            elif scenario == "chameleon":  # the challenger plays the non-chameleons
                for e in events:
                    if e.get("kind") == "guess":
                        c["word_guesses"] += 1
                        c["wrong_word_guesses"] += not (e.get("data") or {}).get("correct")

            beliefs: dict[tuple[str, Any], Mapping[str, Any]] = {}
            for e in events:
                if e.get("kind") == "belief":
                    d = e.get("data") or {}
                    beliefs[(e.get("actor"), d.get("clue_index"))] = d
            for e in mine:
                kind, d, actor = e.get("kind"), e.get("data") or {}, e.get("actor")
                if kind == "vote" and roles.get(actor) in _SEEKER_ROLES:
                    c["votes"] += 1
                    c["abstentions"] += d.get("target") is None
                    c["correct_votes"] += d.get("target") == target
                elif kind == "belief":
                    c["questionnaires"] += 1
                    c["gold_questions"] += 1
                    c["gold_hits"] += d.get("suspect") is not None and d.get("suspect") == target
                    for other, guess in (d.get("predicted") or {}).items():
                        theirs = beliefs.get((other, d.get("clue_index")))
                        if other == actor or theirs is None:
                            continue
                        c["inter_questions"] += 1
                        c["inter_hits"] += guess is not None and guess == theirs.get("suspect")
                elif kind == "self_awareness":
                    c["self_awareness_answers"] += 1
                    c["self_awareness_correct"] += bool(d.get("correct"))

        elif scenario == "cost_sharing":
            c["games"]["cost_sharing"] += 1
            if outcome.get("agreed"):
                c["agreed"] += 1
                latest = outcome.get("latest_proposals") or {}
                c["coordinated"] += any(_same_split(outcome.get("split"), latest.get(s))
                                        for s in seats)

        elif scenario == "prisoners_dilemma":
            c["games"]["prisoners_dilemma"] += 1
            c["pd_wins"] += bool(seats & set(outcome.get("winners") or []))
            for e in mine:
                if e.get("kind") == "pd_choice":
                    choice = (e.get("data") or {}).get("choice")
                    c["pd_choices"] += 1
                    c["pd_defections"] += choice == "defect"
                    c["pd_missing"] += choice is None

        elif scenario == "public_good":
            c["games"]["public_good"] += 1
            c["pg_wins"] += bool(seats & set(outcome.get("winners") or []))
            revealed: dict[Any, list[float]] = {}
            submitted: dict[Any, list[float]] = {}
            for e in events:
                d = e.get("data") or {}
                if e.get("kind") == "pg_reveal":
                    revealed[d.get("round")] = [a for a in (d.get("amounts") or {}).values()
                                                if a is not None]
                elif e.get("kind") == "contribution" and d.get("amount") is not None:
                    submitted.setdefault(d.get("round"), []).append(d["amount"])
            for e in mine:
                if e.get("kind") != "contribution":
                    continue
                d = e.get("data") or {}
                amount = d.get("amount")
                if d.get("forced"):   # no points left, not asked (rules.pg_forced): no decision, so
                    c["pg_forced"] += 1   # not a round of Rationality (§1: "the proportion of decisions")
                    continue
                c["pg_contributions"] += 1
                if amount is None:
                    c["pg_missing"] += 1
                    continue
                pool = revealed.get(d.get("round")) or submitted.get(d.get("round")) or [amount]
                c["pg_minimal"] += amount <= min(pool)

        else:
            raise ValueError(f"unknown MAgIC scenario {scenario!r}")

    g = c["games"]
    gold_inter = c["gold_questions"] + c["inter_questions"]
    deceived = _ratio(c["deceiver_wins"], c["deceiver_games"])
    fooled = _ratio(c["wrong_word_guesses"], c["word_guesses"])
    if deceived is None and fooled is None:
        deception = None
    else:
        deception = (deceived or 0.0) + 0.25 * (fooled or 0.0)
    cooperation = _ratio(c["agreed"], g["cost_sharing"])
    decisions = c["pd_choices"] + c["pg_contributions"]

    values = {
        "non_chameleon": _ratio(credit["non_chameleon"], 2 * g["chameleon"]["non_chameleon"]),
        "civilian": _ratio(credit["civilian"], 3 * g["undercover"]["civilian"]),
        "chameleon": _ratio(credit["chameleon"], 2 * g["chameleon"]["chameleon"]),
        "undercover": _ratio(credit["undercover"], 3 * g["undercover"]["undercover"]),
        "cooperation": cooperation,
        "prisoners_dilemma": _ratio(c["pd_wins"], g["prisoners_dilemma"]),
        "public_good": _ratio(c["pg_wins"], g["public_good"]),
    }
    present = [v for v in values.values() if v is not None]
    c["credit"] = credit

    return {
        "judgement": _ratio(c["correct_votes"], c["votes"]),
        "reasoning": _ratio(c["gold_hits"] + c["inter_hits"], gold_inter),
        "self_awareness": _ratio(c["self_awareness_correct"], c["self_awareness_answers"]),
        "deception": deception,
        "cooperation": cooperation,
        "coordination": _ratio(c["coordinated"], c["agreed"]),
        COORDINATION_EMNLP: _ratio(c["coordinated"], g["cost_sharing"]),
        "rationality": _ratio(c["pd_defections"] + c["pg_minimal"], decisions),
        "win_rate": sum(present) / len(present) if present else None,
        "components": {"values": values,
                       "missing": [k for k, v in values.items() if v is None]},
        "per_scenario": {
            "chameleon": {"chameleon": values["chameleon"],
                          "non_chameleon": values["non_chameleon"]},
            "undercover": {"undercover": values["undercover"], "civilian": values["civilian"]},
            "cost_sharing": cooperation,
            "prisoners_dilemma": values["prisoners_dilemma"],
            "public_good": values["public_good"],
        },
        "counts": c,
    }


def undefined_reason(key: str, counts: Mapping[str, Any] | None) -> str:
    """Why metric ``key`` of :func:`scenario_metrics` is None, in words, from its ``counts``
    (``"no agreed game (0 of 3 Cost Sharing games)"``); ``"no data"`` for a key or counts this
    does not know (an older ``result.json``). Coordination ÷ agreed games is undefined when no
    game was agreed, as in the upstream code (module docstring); the EMNLP one only without Cost
    Sharing games."""
    counts = counts if isinstance(counts, Mapping) else {}     # a result.json of another shape: no data
    games = counts.get("games")
    games = games.get("cost_sharing") if isinstance(games, Mapping) else None
    if key == "coordination" and isinstance(games, int):
        return (f"no agreed game (0 of {games} Cost Sharing games)" if games else "no Cost Sharing game")
    if key in ("cooperation", COORDINATION_EMNLP) and games == 0:
        return "no Cost Sharing game"
    return "no data"
