"""Run discovery and path confinement (mas_agents/web/runs.py)."""

import os

import pytest

from mas_agents.web import runs as rs
from mas_agents.web import paths
from mas_agents.web import run_kinds


def test_confine_keeps_paths_inside_the_runs_root(tmp_path):
    root = tmp_path / "runs"
    (root / "a" / "b").mkdir(parents=True)
    assert paths.confine(root, "a/b") == (root / "a" / "b").resolve()
    assert paths.confine(root, "") == root.resolve()
    for bad in ("..", "../x", "a/../../x", "/etc", "/" + str(root / "a")):
        with pytest.raises(paths.OutsideRuns):
            paths.confine(root, bad)
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", root / "link")
    with pytest.raises(paths.OutsideRuns):
        paths.confine(root, "link")
    os.symlink(root / "a", root / "inner-link")     # a symlink that stays inside is followed
    assert paths.confine(root, "inner-link/b") == (root / "a" / "b").resolve()


def test_every_kind_is_found_with_its_headline(runs):
    found = {r.rel: r for r in rs.scan(runs["root"])}
    assert found["mmg-toy/run"].kind == "mmg" and found["mmg-toy/run"].headline.startswith("Vic: accused Bob, correct")
    assert found["spy-kettle"].kind == "wis" and "pair Kettle/Teapot" in found["spy-kettle"].headline
    assert found["spy-live"].finished is False and found["spy-live"].headline == "playing"
    assert found["magic-game"].kind == "magic" and found["magic-game"].agents == ["plain+pgm", "plain"]
    # the outcome as a sentence, not a Python dict cut at 80 characters
    assert found["magic-game"].headline == ("Undercover, setting 0, the challenger plays a civilian. "
                                            "The vote accused Player 2, a civilian: the undercover wins.")
    assert found["tour"].kind == "wis-tournament" and found["tour"].headline in ("2 games finished", "2 of 2 games finished")   # total: its config.json, if written
    assert found["tour/games/g0000"].parent == "tour" and found["tour/games/g0000"].depth == 1
    assert found["ablate"].kind == "ablation" and "plain+reasoning" in found["ablate"].agents
    assert found["ablate/spy/plain_reasoning"].kind == "wis-tournament"
    assert found["ablate/spy/plain_reasoning"].parent == "ablate"
    # the symlink to a run outside --runs is never listed
    assert not any(r.startswith("escape") for r in found)


def test_filters(runs):
    every = rs.scan(runs["root"])
    top = rs.filter_runs(every)
    assert all(r.parent is None for r in top) and {"tour", "ablate", "spy-kettle"} <= {r.rel for r in top}
    wis = rs.filter_runs(every, kind="wis")
    assert {r.kind for r in wis} == {"wis"} and "tour/games/g0001" in {r.rel for r in wis}
    reasoning = rs.filter_runs(every, agent="REASONING")
    assert reasoning and all(any("reasoning" in a for a in r.agents) for r in reasoning)
    assert rs.filter_runs(every, model="no-such-model") == []


def test_progress_of_a_tournament_and_an_ablation(runs):
    p = run_kinds.progress(runs["tour"], "wis-tournament", db_total=3)
    assert p["done"] == 2 and p["total"] == 3 and p["text"] == "2 of 3 games finished"
    (runs["tour"] / "games" / "g0009").mkdir()
    try:
        p = run_kinds.progress(runs["tour"], "wis-tournament")
        assert p["running"] == ["games/g0009"] and p["text"].endswith("playing games/g0009")
    finally:
        (runs["tour"] / "games" / "g0009").rmdir()
    a = run_kinds.progress(runs["ablate"], "ablation")
    assert a["done"] == a["total"] == 1 and a["text"] == "1 of 1 benches finished"
    assert run_kinds.leaderboard_id(runs["tour"]).startswith("t-")


def test_headlines_give_n_and_an_interval_beside_a_rate(tmp_path):
    """The runs list said "win 100.0 %" at n=2 games: a rate there now has its n and Wilson interval;
    MAgIC Deception (range [0, 1.25]) is on the scale of MAgIC's tables and the reports: percent,
    one decimal (up to 125.0)."""
    import json

    from mas_agents.stats import Estimate
    exp = tmp_path / "exp"
    exp.mkdir()
    (exp / "result.json").write_text(json.dumps({"kind": "attack", "subject": "plain", "others": "plain", "rows": [
        {"arm": "baseline", "games": 2, "wins": 2, "win_rate": 1.0, "votes_cast_as_civilian": 0,
         "correct_votes": 0, "vote_accuracy": None, "descriptions": 10, "fouls": 5, "foul_rate": 0.5}]}))
    head = rs.describe(tmp_path, exp, "wis-experiment").headline
    assert head == "attack: baseline win 100.0 % [34.2, 100.0] (n=2), vote acc -, foul 50.0 % [23.7, 76.3] (n=10)"
    mg = tmp_path / "magic"
    mg.mkdir()
    (mg / "result.json").write_text(json.dumps({
        "metrics": {"win_rate": 0.5, "deception": 1.0, "judgement": 1.0},
        "intervals": {"win_rate": Estimate(0.5, 0.25, 0.75, 2).to_dict(),
                      "deception": Estimate(1.0, 0.75, 1.25, 2).to_dict(),
                      "judgement": Estimate(1.0, 0.342, 1.0, 2).to_dict()}}))
    head = rs.describe(tmp_path, mg, "magic-bench").headline
    # each n says what it counts, as the bench's report.md does (issue 57, E20)
    assert head.startswith("win rate 50.0 % [25.0, 75.0] (n=2 settings); deception 100.0 % [75.0, 125.0] "
                           "(n=2 settings), judgement 100.0 % [34.2, 100.0] (n=2 votes)")
    assert "1.00" not in head


def test_a_comparisons_headline_names_its_aggregation_the_plain_mean_over_scripts(tmp_path):
    """A `mas wellplay compare` run's weighted score is the plain mean over scripts, not PLAYER*
    App. B.3's pooled one its `mas reproduce` parent leads with: its line in the runs list says so."""
    import json
    cmp_ = tmp_path / "zh"
    cmp_.mkdir()
    (cmp_ / "config.json").write_text(json.dumps({"kind": "wellplay-compare", "methods": ["player_star", "op"]}))
    (cmp_ / "result.json").write_text(json.dumps({"table": [
        {"method": "op", "weighted_score": 0.44}, {"method": "player_star", "weighted_score": 0.4977}]}))
    head = rs.describe(tmp_path, cmp_, "wellplay-compare").headline
    assert head.startswith("best (weighted, plain mean over scripts): player_star 49.8 %, op 44.0 %"), head


def test_wellplay_eval_headline_gives_each_category_its_n_interval_and_the_always_a_line(tmp_path):
    """The evaluation headline printed bare per-category accuracies ("objective 66.7 %"); each now has
    its Wilson interval and n from the result's counts, and the always-a chance line follows."""
    import json

    ev = tmp_path / "ev"
    ev.mkdir()
    (ev / "config.json").write_text(json.dumps({"kind": "wellplay-eval", "method": "session"}))
    (ev / "result.json").write_text(json.dumps({
        "weighted_score": 0.215, "interval": {"mean": 0.215, "low": 0.06, "high": 0.37, "n": 44},
        "accuracy": {"objective": 2 / 3, "reasoning": 0.15},
        "counts": {"objective": {"n": 3, "correct": 2}, "reasoning": {"n": 20, "correct": 3}},
        "chance": {"always_a": {"weighted_score": 0.25}}}))
    head = rs.describe(tmp_path, ev, "wellplay-eval").headline
    assert head == ("session: weighted 21.5 % [6.0, 37.0] (n=44); objective 66.7 % [20.8, 93.9] (n=3), "
                    "reasoning 15.0 % [5.2, 36.0] (n=20); always-a 25.0 %")


def test_a_reproduce_run_is_its_own_kind_with_its_headline(tmp_path):
    import json

    d = tmp_path / "rep"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"kind": "reproduce", "paper": "wis", "model": "local,local"}))
    assert run_kinds.detect_kind(d) == "reproduce"
    (d / "result.json").write_text(json.dumps({"kind": "reproduce", "headline": "WiS: 2 games (partial)"}))
    assert rs.describe(tmp_path, d, "reproduce").headline == "WiS: 2 games (partial)"
    (d / "config.json").write_text(json.dumps({"kind": "reproduce", "paper": "wis", "pool": ["openai:a", "openai:b"]}))
    (d / "result.json").write_text(json.dumps({"kind": "reproduce", "partial": True}))   # written before headlines
    r = rs.describe(tmp_path, d, "reproduce")
    assert r.model == "openai:a, openai:b" and r.headline == "wis: finished (partial)"
