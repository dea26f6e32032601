"""Per-seat rows and per-agent metrics of WiS games, on three hand-built game records.

The games (agents A, B, C; every expected value below is worked out by hand):

* g1, 4 players, spy P2 (B). Round 1: P3 (C) fouls (own word) and is out; vote P1→P2, P2→P1,
  P4 abstains: a 1–1 tie, nobody out. Round 2: P1→P2, P2→P4, P4→P2: the spy is out in round 2.
  Scores: spy 4 − 3 civilian votes = 1; P1, P4 share 8 (4 each) + 2 and + 1 → 6, 5; P3 0.
* g2, 5 players, spy P5 (C) wins. Round 1: P2 out (3 votes); round 2: P1 out (2 votes);
  round 3: P4 out, two players left. P4 voted for the spy in all 3 rounds: spy 12 − 3 = 9, P4 3.
* g3, 4 players, spy P1 (A) is voted out in round 1 by all three civilians:
  civilians 12 / 3 + 1 = 5 each, spy 0 − 3 = −3.
"""

from __future__ import annotations

import pytest

from mas_agents.graphs.wis.metrics import ROW_KEYS, agent_metrics, player_rows
from mas_agents.graphs.wis.rules import game_scores, tally

A, B, C = "plain", "plain+reasoning", "http://127.0.0.1:9000/agent"


def make_game(game_id: str, agents: list[str], spy_seat: int, rounds: list[tuple[dict, dict]],
              first: int = 0) -> dict:
    """A result.json record. ``rounds``: ``({speaker: foul or None}, {voter: target or None})``
    per round, speakers in speaking order; fouled players and vote results are derived with
    :mod:`mas_agents.graphs.wis.rules`, as the session does."""
    names = [f"Player {i + 1}" for i in range(len(agents))]
    spy = names[spy_seat]
    players = [{"name": n, "seat": i, "agent": a, "role": "spy" if n == spy else "civilian",
                "word": "tea" if n == spy else "coffee"} for i, (n, a) in enumerate(zip(names, agents))]
    alive = list(names)
    eliminated: dict = {}
    recs = []
    for r, (descs, votes) in enumerate(rounds, start=1):
        order = list(descs)
        fouled = [p for p, f in descs.items() if f is not None]
        for p in fouled:
            alive.remove(p)
            eliminated[p] = {"round": r, "by": "foul"}
        counts, out = tally(votes, alive) if votes else ({}, None)
        if out is not None:
            alive.remove(out)
            eliminated[out] = {"round": r, "by": "vote"}
        recs.append({"round": r, "order": order,
                     "descriptions": [{"player": p, "text": f"{p} says {r}", "foul": f, "seconds": 1.0}
                                      for p, f in descs.items()],
                     "fouled": fouled, "votes": votes, "vote_counts": counts, "voted_out": out,
                     "alive_after": list(alive)})
    spy_out = eliminated.get(spy, {}).get("round")
    roles = {p["name"]: p["role"] for p in players}
    scores = game_scores(roles, spy_out, alive, [rec["votes"] for rec in recs])
    end = "spy_eliminated" if spy_out else ("few_players" if len(alive) < 3 else "max_rounds")
    return {"game_id": game_id, "lang": "en", "seed": 0, "pair": {"civilian": "coffee", "spy": "tea"},
            "players": players, "first_speaker": names[first], "rounds": recs,
            "outcome": {"winner": "civilians" if spy_out else "spy", "spy": spy,
                        "spy_eliminated_round": spy_out, "end_reason": end, "rounds_played": len(recs)},
            "eliminated": eliminated, "scores": scores, "llm": {}, "wall_time_s": 1.0,
            "invalid_actions": 0}


P1, P2, P3, P4, P5 = (f"Player {i}" for i in range(1, 6))


def games() -> list[dict]:
    g1 = make_game("g1", [A, B, C, A], 1, [
        ({P1: None, P2: None, P3: "own_word", P4: None}, {P1: P2, P2: P1, P4: None}),
        ({P1: None, P2: None, P4: None}, {P1: P2, P2: P4, P4: P2}),
    ])
    g2 = make_game("g2", [B, C, A, B, C], 4, [
        ({P1: None, P2: None, P3: None, P4: None, P5: None},
         {P1: P2, P2: P1, P3: P2, P4: P5, P5: P2}),
        ({P1: None, P3: None, P4: None, P5: None}, {P1: P3, P3: P1, P4: P5, P5: P1}),
        ({P3: None, P4: None, P5: None}, {P3: P4, P4: P5, P5: P4}),
    ])
    g3 = make_game("g3", [A, B, C, B], 0, [
        ({P1: None, P2: None, P3: None, P4: None}, {P1: P2, P2: P1, P3: P1, P4: P1}),
    ])
    return [g1, g2, g3]


def test_fixture_games_are_as_described():
    g1, g2, g3 = games()
    assert g1["rounds"][0]["voted_out"] is None and g1["rounds"][0]["vote_counts"] == {P2: 1, P1: 1}
    assert g1["eliminated"] == {P3: {"round": 1, "by": "foul"}, P2: {"round": 2, "by": "vote"}}
    assert g1["outcome"]["winner"] == "civilians" and g1["outcome"]["spy_eliminated_round"] == 2
    assert g1["scores"] == {P1: 6, P2: 1, P3: 0, P4: 5}
    assert g2["outcome"]["winner"] == "spy" and g2["outcome"]["end_reason"] == "few_players"
    assert g2["scores"] == {P1: 0, P2: 0, P3: 0, P4: 3, P5: 9}
    assert g3["scores"] == {P1: -3, P2: 5, P3: 5, P4: 5}
    for g in (g1, g2, g3):
        assert sum(g["scores"].values()) == 12


def _row(rows, name):
    return next(r for r in rows if r["name"] == name)


def test_player_rows_g1_tie_abstention_foul_spy_caught_round_2():
    rows = player_rows(games()[0])
    assert [r["name"] for r in rows] == [P1, P2, P3, P4]
    assert all(tuple(r) == ROW_KEYS for r in rows)
    assert _row(rows, P1) == {
        "game_id": "g1", "agent": A, "name": P1, "seat": 0, "role": "civilian", "score": 6.0,
        "won": True, "votes_cast_as_civilian": 2, "correct_votes": 2, "abstentions": 0,
        "descriptions": 2, "fouls": 0, "timeouts": 0, "survival_rounds": 2}
    spy = _row(rows, P2)
    assert (spy["role"], spy["won"], spy["score"], spy["votes_cast_as_civilian"],
            spy["correct_votes"], spy["descriptions"], spy["survival_rounds"]) == \
        ("spy", False, 1.0, 0, 0, 2, 1)
    fouled = _row(rows, P3)  # eliminated civilian still wins with the civilians
    assert (fouled["won"], fouled["descriptions"], fouled["fouls"], fouled["survival_rounds"],
            fouled["votes_cast_as_civilian"], fouled["score"]) == (True, 1, 1, 0, 0, 0.0)
    abstainer = _row(rows, P4)
    assert (abstainer["votes_cast_as_civilian"], abstainer["correct_votes"],
            abstainer["abstentions"], abstainer["survival_rounds"], abstainer["score"]) == (2, 1, 1, 2, 5.0)


def test_player_rows_g2_spy_wins():
    rows = player_rows(games()[1])
    got = {r["name"]: (r["won"], r["votes_cast_as_civilian"], r["correct_votes"], r["descriptions"],
                       r["survival_rounds"], r["score"]) for r in rows}
    assert got == {
        P1: (False, 2, 0, 2, 1, 0.0),
        P2: (False, 1, 0, 1, 0, 0.0),
        P3: (False, 3, 0, 3, 3, 0.0),   # never eliminated: rounds_played
        P4: (False, 3, 3, 3, 2, 3.0),
        P5: (True, 0, 0, 3, 3, 9.0),    # the spy's own votes are not civilian votes
    }


def test_invalid_vote_target_counts_as_abstention():
    g = games()[0]
    g["rounds"][0]["votes"][P4] = "Player 9"  # not on the list
    g["rounds"][1]["votes"][P4] = P4           # self-vote
    row = _row(player_rows(g), P4)
    assert (row["votes_cast_as_civilian"], row["correct_votes"], row["abstentions"]) == (2, 0, 2)


def test_player_rows_rejects_two_spies():
    g = games()[2]
    g["players"][1]["role"] = "spy"
    with pytest.raises(ValueError, match="exactly one spy"):
        player_rows(g)


EXPECTED = {
    C: {"games": 4, "games_as_spy": 1, "games_as_civilian": 3, "wins": 3,
        "win_rate_spy": 1.0, "win_rate_civilian": 2 / 3, "win_rate": 0.75,
        "avg_score": 3.5, "avg_score_spy": 9.0, "avg_score_civilian": 5 / 3,
        "votes_cast_as_civilian": 2, "correct_votes": 1, "abstentions": 0, "vote_accuracy": 0.5,
        "descriptions": 6, "fouls": 1, "foul_rate": 1 / 6, "timeout_rate": 0.0, "avg_survival_rounds": 1.0,
        "total_score": 14.0, "rank_score": 110.0},
    B: {"games": 5, "games_as_spy": 1, "games_as_civilian": 4, "wins": 2,
        "win_rate_spy": 0.0, "win_rate_civilian": 0.5, "win_rate": 0.4,
        "avg_score": 2.8, "avg_score_spy": 1.0, "avg_score_civilian": 3.25,
        "votes_cast_as_civilian": 7, "correct_votes": 5, "abstentions": 0, "vote_accuracy": 5 / 7,
        "descriptions": 9, "fouls": 0, "foul_rate": 0.0, "timeout_rate": 0.0, "avg_survival_rounds": 1.2,
        "total_score": 14.0, "rank_score": 109.0},
    A: {"games": 4, "games_as_spy": 1, "games_as_civilian": 3, "wins": 2,
        "win_rate_spy": 0.0, "win_rate_civilian": 2 / 3, "win_rate": 0.5,
        "avg_score": 2.0, "avg_score_spy": -3.0, "avg_score_civilian": 11 / 3,
        "votes_cast_as_civilian": 7, "correct_votes": 3, "abstentions": 1, "vote_accuracy": 3 / 7,
        "descriptions": 8, "fouls": 0, "foul_rate": 0.0, "timeout_rate": 0.0, "avg_survival_rounds": 1.75,
        "total_score": 8.0, "rank_score": 104.0},
}


def test_agent_metrics_exact_values_and_order():
    ms = agent_metrics(games())
    assert [m["agent"] for m in ms] == [C, B, A]
    for m in ms:
        exp = EXPECTED[m["agent"]]
        assert set(m) == set(exp) | {"agent"}
        for k, v in exp.items():
            assert m[k] == pytest.approx(v), (m["agent"], k)


def test_rank_score_is_100_plus_sum_minus_games_for_every_agent():
    gs = games()
    seats = [(r["agent"], r["score"]) for g in gs for r in player_rows(g)]
    for m in agent_metrics(gs):
        mine = [s for a, s in seats if a == m["agent"]]
        assert m["rank_score"] == pytest.approx(100 + sum(mine) - len(mine))
        assert m["games"] == len(mine)
    # zero-sum games: Σ rank scores = 100·agents + 12·games − seats
    ms = agent_metrics(gs)
    assert sum(m["rank_score"] for m in ms) == pytest.approx(100 * 3 + 12 * 3 - len(seats))


def test_zero_denominators_are_none():
    [a, *_] = [m for m in agent_metrics([games()[2]]) if m["agent"] == A]
    assert a["games_as_spy"] == 1 and a["games_as_civilian"] == 0
    assert a["win_rate_civilian"] is None and a["avg_score_civilian"] is None
    assert a["vote_accuracy"] is None
    assert a["win_rate_spy"] == 0.0 and a["foul_rate"] == 0.0
    # no descriptions at all → foul rate None
    g = games()[2]
    g["rounds"][0]["descriptions"] = []
    [a] = [m for m in agent_metrics([g]) if m["agent"] == A]
    assert a["foul_rate"] is None


def test_no_games():
    assert agent_metrics([]) == []


def test_rank_score_ties_break_by_agent_name():
    g = games()[2]  # three civilians with 5 points each, one seat per agent
    g["players"][0]["agent"] = "z-spy"
    g["players"][2]["agent"] = "b-other"
    g["players"][3]["agent"] = "a-other"
    ms = agent_metrics([g])
    assert [(m["agent"], m["rank_score"]) for m in ms] == [
        ("a-other", 104.0), ("b-other", 104.0), (B, 104.0), ("z-spy", 96.0)]
