"""Numbers the web app serves (issue 46): the leaderboard's average-score interval stays within the
scores seen (a Student-t interval went below 0), and a report table downloads as CSV with numeric
value / low / high / n columns instead of "57.1 [no interval, n=1]" in one cell."""

import csv
import io

import pytest


def _game(i: int, spy_score: float, civ_scores: list[float]) -> dict:
    """A finished 6-seat WiS record: the spy (seat 0) is agent ``x``, the civilians ``plain``."""
    names = [f"Player {k + 1}" for k in range(6)]
    scores = dict(zip(names, [spy_score, *civ_scores]))
    return {"game_id": f"g{i:04d}", "lang": "en", "seed": i, "pair": {"civilian": "tea", "spy": "coffee"},
            "players": [{"name": n, "seat": k, "agent": "x" if k == 0 else "plain", "role": "spy" if k == 0 else "civilian",
                         "word": "coffee" if k == 0 else "tea"} for k, n in enumerate(names)],
            "first_speaker": names[0], "rounds": [],
            "outcome": {"winner": "spy" if spy_score == 12 else "civilians", "spy": names[0],
                        "spy_eliminated_round": None if spy_score == 12 else 1, "end_reason": "max_rounds",
                        "rounds_played": 1},
            "eliminated": {} if spy_score == 12 else {names[0]: {"round": 1, "by": "vote"}}, "scores": scores}


def test_leaderboard_average_score_interval_stays_within_the_scores_seen():
    """Scores piled up at 0 with a few 12s: the t interval (mean ± t·s/√n) went below 0 ("1.58
    [-0.03, 3.20]"); the percentile bootstrap (mas_agents.stats.bootstrap_mean) stays in [min, max]."""
    from mas_agents.stats import bootstrap_mean
    from mas_agents.graphs.wis.rating import rank_table, t_interval

    # x is the spy of 4 games: it wins one (12) and is voted out in round 1 of three (0)
    games = [_game(0, 12.0, [0.0] * 5)] + [_game(i, 0.0, [2.4] * 5) for i in (1, 2, 3)]
    scores = [12.0, 0.0, 0.0, 0.0]
    assert t_interval(scores)[0] < 0                     # the old interval: 3.00 [-6.55, 12.55]
    row = {r["agent"]: r for r in rank_table(games)}["x"]
    a = row["avg_score"]
    assert a["n"] == 4 and a["mean"] == pytest.approx(3.0)
    assert 0.0 <= a["low"] < a["mean"] < a["high"] <= 12.0
    e = bootstrap_mean(scores)
    assert (a["low"], a["high"]) == (e.low, e.high)     # the same (seeded) method as the reports


def test_report_table_csv_has_numeric_value_low_high_n_columns(tmp_path):
    from fastapi.testclient import TestClient

    from mas_agents.web.app import create_app
    run = tmp_path / "runs" / "magic-x"
    run.mkdir(parents=True)
    (run / "config.json").write_text('{"kind": "magic"}', encoding="utf-8")
    (run / "report.md").write_text(
        "# r\n\n| model | Win rate | Judgement | Deception |\n|---|---|---|---|\n"
        "| **ours: plain** | 57.1 [no interval, n=1] | 50.0 [15.0, 85.0] (n=4) | - (n=0) |\n"
        "| GPT-4 (paper) | 53.3 | 83.8 | not published |\n", encoding="utf-8")
    r = TestClient(create_app(tmp_path / "runs", None)).get("/csv/magic-x?table=0")
    assert r.status_code == 200
    rows = list(csv.reader(io.StringIO(r.text)))
    assert rows == [
        ["model", "Win rate", "Win rate low", "Win rate high", "Win rate n",
         "Judgement", "Judgement low", "Judgement high", "Judgement n",
         "Deception", "Deception low", "Deception high", "Deception n"],
        ["ours: plain", "57.1", "", "", "1", "50.0", "15.0", "85.0", "4", "", "", "", "0"],
        ["GPT-4 (paper)", "53.3", "", "", "", "83.8", "", "", "", "not published", "", "", ""],
    ]
