"""The ablation runner on all three benchmarks with one fake model: grid, pairing, intervals, resume."""

import json

import pytest

from mas_agents.game.data import DataError
from mas_agents.eval.ablate.grid import AblateConfig, run_ablate, variants
from mas_agents.eval.ablate.benches import spy_plan
from mas_agents.call_log import read_calls
from tests.data_roots import SIN, SIN_MURDERER, SIN_QUESTIONS
from tests.fakes import RuleChat, any_game_player


def test_variants_grid():
    assert variants("plain", ["player_star", "pgm"]) == ["plain", "plain+player_star", "plain+pgm",
                                                        "plain+player_star+pgm"]
    with pytest.raises(ValueError, match="already part of the base"):
        variants("plain", ["plain"])
    with pytest.raises(ValueError, match="unknown agent block"):
        variants("plain", ["nope"])


def test_spy_plan_alternates_the_subject_role():
    plan = spy_plan(6, 6, [{"civilian": "a", "spy": "b"}], seed=1)
    assert [g["subject_seat"] == g["spy_seat"] for g in plan] == [True, False] * 3
    assert plan == spy_plan(6, 6, [{"civilian": "a", "spy": "b"}], seed=1)


@pytest.mark.realdata
def test_ablation_over_three_benches_with_intervals_and_resume(tmp_path, mixed_root):
    from mas_agents.specs import BLOCKS, register_block
    from mas_agents.planners.cot import ChainOfThought

    if "my_cot" not in BLOCKS:   # the Python API: a custom block joins the grid by name
        register_block("my_cot", lambda: [ChainOfThought()])
    kw = dict(out=tmp_path, data_root=mixed_root, benches=["wellplay", "spy", "magic"], base="plain",
              blocks=["my_cot"], seeds=2, model=RuleChat(rule=any_game_player(vote_for=SIN_MURDERER)),
              script=SIN[0], games=2, players=4, settings="0-1", rounds=1)
    res = run_ablate(AblateConfig(**kw))
    assert res["variants"] == ["plain", "plain+my_cot"]
    wp = {r["variant"]: r for r in res["benches"]["wellplay"]["rows"]}
    assert set(wp) == {"plain", "plain+my_cot", "pp", "op", "always_a", "random"}
    assert wp["plain"]["n"] == 2 and wp["plain"]["weighted_score"]["n"] == 2
    # the same fake answers the same way with the block on: the paired difference is exactly 0
    d = wp["plain+my_cot"]["diff_vs_base"]["weighted_score"]
    assert d["mean"] == 0 and d["includes_zero"] is True
    spy = {r["variant"]: r for r in res["benches"]["spy"]["rows"]}
    assert spy["plain"]["n"] == 2 and spy["plain"]["win_rate_spy"]["n"] == 1 and spy["plain"]["win_rate_civilian"]["n"] == 1
    mg = {r["variant"]: r for r in res["benches"]["magic"]["rows"]}
    assert mg["plain"]["n"] == 2 and mg["plain"]["metrics"]["rationality"]["estimate"]["mean"] == 1.0
    assert mg["plain+my_cot"]["metrics"]["win_rate"]["diff_vs_base"]["mean"] == pytest.approx(0)
    # every metric has its paired difference; costs are the variant's own seats
    assert set(spy["plain+my_cot"]["diff_vs_base"]) == {"avg_score", "vote_accuracy_civilian", "win_rate_spy",
                                                       "win_rate_civilian"}
    assert set(wp["plain+my_cot"]["diff_vs_base"]) == {"weighted_score", "objective", "reasoning", "relation"}
    games = [json.loads(p.read_text()) for p in (tmp_path / "spy" / "plain" / "games").glob("g*/result.json")]
    # 2 games x 4 seats x (one description + one vote): the spy is voted out in round 1; the
    # subject holds one seat of each game
    assert sum(g["llm"]["calls"] for g in games) == 2 * 4 * 2 and spy["plain"]["cost"]["calls"] == 2 * 2
    played = [json.loads(p.read_text()) for p in (tmp_path / "wellplay").rglob("plain/*/seed*/game/result.json")]
    evals = [json.loads(p.read_text()) for p in (tmp_path / "wellplay").rglob("plain/*/seed*/eval/result.json")]
    murderer_calls = sum(1 for p in (tmp_path / "wellplay").rglob("plain/*/seed*/game/llm_calls.jsonl")
                         for c in read_calls(p) if c.actor == SIN_MURDERER)
    # per seed, a one-round Sin game has 16 calls (test_compare: 4 introductions, 4 questions, 4
    # answers, 4 votes), 4 of them by the murderer Chief Wang (his introduction, question and vote,
    # and his answer to Zhang Villager, the only player whose first listed other player he is); the
    # evaluation asks each character the questions of their own file: 13 + 6 + 11 + 14 = 44
    assert len(played) == len(evals) == 2 and murderer_calls == 2 * 4
    assert sum(g["llm"]["calls"] for g in played) == 2 * 16 and sum(e["llm"]["calls"] for e in evals) == 2 * SIN_QUESTIONS
    # the variant's cost is every call but the murderer's game calls: 2 * (16 + 44 - 4) = 112
    assert wp["plain"]["cost"]["calls"] == \
        sum(g["llm"]["calls"] for g in played) + sum(e["llm"]["calls"] for e in evals) - murderer_calls == 112
    assert res["speak_timeout"] is None and spy["plain"]["fouls"] == spy["plain"]["timeouts"] == 0
    report = (tmp_path / "report.md").read_text()
    assert "(n=2 seeds)" in report and "(n=2 settings)" in report and "includes 0" in report and "## MAgIC" in report and "## Who is Spy" in report
    assert "No 95 % interval excludes zero" in res["summary"] and "plain+my_cot ×1.0 on WellPlay" in res["summary"]
    for f in ("wellplay.png", "spy.png", "magic.png"):
        assert (tmp_path / f).stat().st_size > 1000
    # rerun: every cell, game and setting is reused (no game or evaluation file is rewritten)
    def snapshot():
        return {p: p.stat().st_mtime_ns for p in tmp_path.rglob("llm_calls.jsonl")}
    # a game left over from another --settings selection is not part of this run's units
    import shutil
    games_dir = tmp_path / "magic" / "plain" / "games"
    shutil.copytree(next(games_dir.glob("*-s00")), games_dir / "prisoners_dilemma-left-s09")
    before = snapshot()
    # WellPlay: 2 variants x 2 seeds x (game + evaluation) + 4 baselines x 2 seeds; Who is Spy:
    # 2 variants x 2 games; MAgIC: 2 variants x 2 settings x 7 games, and the left-over copy
    assert len(before) == 2 * 2 * 2 + 4 * 2 + 2 * 2 + 2 * 2 * 7 + 1
    res2 = run_ablate(AblateConfig(**kw))
    assert res2["benches"] == res["benches"]   # incl. MAgIC n=2 (the s09 copy is ignored)
    assert snapshot() == before
    assert json.loads((tmp_path / "result.json").read_text())["variants"] == ["plain", "plain+my_cot"]
    with pytest.raises(ValueError, match="field 'games' is 2 but this run asks for 3"):
        run_ablate(AblateConfig(**{**kw, "games": 3}))
    # extending the run bench by bench keeps the benches run before in the report
    res3 = run_ablate(AblateConfig(**{**kw, "benches": ["magic"]}))
    assert list(res3["benches"]) == ["wellplay", "spy", "magic"] and res3["benches"] == res["benches"]


@pytest.mark.realdata
def test_a_script_typo_fails_before_anything_is_written(tmp_path, real_data_root):
    """On the real root, so that the typo (not a missing wellplay/ folder) is what fails."""
    kw = dict(out=tmp_path / "run", data_root=real_data_root, base="plain", blocks=["pgm"],
              model=RuleChat(rule=any_game_player()))
    with pytest.raises(DataError, match=r"unknown WellPlay script 'Sinn' \(en\)"):
        run_ablate(AblateConfig(benches=["wellplay"], script="Sinn", **kw))
    assert not (tmp_path / "run").exists()


def test_a_settings_typo_fails_before_anything_is_written(tmp_path):
    kw = dict(out=tmp_path / "run", data_root=tmp_path / "no-data", base="plain", blocks=["pgm"],
              model=RuleChat(rule=any_game_player()))
    with pytest.raises(ValueError, match="bad id range part '0-x'"):
        run_ablate(AblateConfig(benches=["magic"], settings="0-x", **kw))
    assert not (tmp_path / "run").exists()


@pytest.mark.realdata
def test_player_star_and_pgm_grid_on_the_deduction_games(tmp_path, mixed_root):
    """Both real blocks together in Who is Spy and MAgIC: each block's private readings keep their
    own prompts (the fake fails on a pgm reading that lost the player's word)."""
    res = run_ablate(AblateConfig(out=tmp_path, data_root=mixed_root, benches=["spy", "magic"], base="plain",
                     blocks=["player_star", "pgm"], model=RuleChat(rule=any_game_player()), games=2, players=4,
                     settings="0"))
    spy = {r["variant"]: r for r in res["benches"]["spy"]["rows"]}
    assert list(spy) == ["plain", "plain+player_star", "plain+pgm", "plain+player_star+pgm"]
    calls = {v: r["cost"]["calls"] for v, r in spy.items()}
    # every block adds its own readings; both blocks add both (no reading nested in another's)
    assert calls["plain"] < calls["plain+player_star"] < calls["plain+player_star+pgm"]
    assert calls["plain+player_star+pgm"] - calls["plain"] == \
        (calls["plain+player_star"] - calls["plain"]) + (calls["plain+pgm"] - calls["plain"])
    assert all(r["n"] == 1 for r in res["benches"]["magic"]["rows"])


def test_summary_names_clear_effects_costs_and_the_rest():
    from mas_agents.eval.ablate.report import summary
    from mas_agents.stats import Estimate

    def d(mean, low, high, n=4):
        return Estimate(mean, low, high, n).to_dict()
    result = {"variants": ["plain", "plain+pgm"], "benches": {
        "wellplay": {"rows": [{"variant": "plain", "cost": {"calls": 40}},
                              {"variant": "plain+pgm", "cost": {"calls": 60},
                               "diff_vs_base": {"weighted_score": d(0.05, 0.01, 0.09)}}]},
        "spy": {"rows": [{"variant": "plain", "cost": {"calls": 10}},
                         {"variant": "plain+pgm", "cost": {"calls": 30},
                          "diff_vs_base": {"avg_score": d(-1.5, -4.0, 1.0)}}]}}}
    text = summary(result)
    assert "WellPlay, weighted score vs plain (unit: seed): plain+pgm +5.0 points [1.0, 9.0] (n=4 seeds)." in text
    assert "Who is Spy, the subject's average score vs plain (unit: game): plain+pgm -1.5 [-4.0, 1.0] (n=4 games)." in text
    assert "plain+pgm ×1.5 on WellPlay; plain+pgm ×3.0 on Who is Spy" in text
    assert "exclude zero: plain+pgm on WellPlay (up)." in text
    assert "(1 of 2)" in text


def test_report_intervals_stay_in_each_metrics_range():
    """A rate's interval lies within [0, 100] %; MAgIC Deception (range [0, 1.25]) is in percent too,
    within [0, 125] %, its header saying so (one scale in every report, issue 46)."""
    import re

    from mas_agents.eval.ablate.benches import MAGIC_KEYS
    from mas_agents.eval.ablate.report import report_md
    from mas_agents.stats import Estimate

    def d(mean, low, high, n=2):
        return Estimate(mean, low, high, n).to_dict()
    cost = {"calls": 1, "input_tokens": 1, "output_tokens": 1, "wall_s": 1}
    metrics = {k: {"estimate": d(1.0, 0.75, 1.0)} for k in MAGIC_KEYS}
    metrics["deception"] = {"estimate": d(1.0, 0.75, 1.25)}
    spy = {"variant": "plain", "n": 2, "avg_score": d(1.0, 0.5, 1.5), "vote_accuracy_civilian": d(1.0, 1.0, 1.0),
           "win_rate_spy": d(0.5, 0.0, 1.0), "win_rate_civilian": d(1.0, None, None, 1), "cost": cost}
    result = {"variants": ["plain"], "summary": "", "command": "", "model": "fake", "versions": {},
              "benches": {"spy": {"rows": [spy]},
                          "magic": {"rows": [{"variant": "plain", "n": 2, "metrics": metrics, "cost": cost,
                                              "radar": "r.png"}]}}}
    report = report_md(result)
    for mean, low, high in re.findall(r"(-?[\d.]+) % \[(-?[\d.]+), (-?[\d.]+)\]", report):
        top = 125.0 if (mean, low, high) == ("100.0", "75.0", "125.0") else 100.0   # Deception's cell
        assert 0.0 <= float(low) <= float(high) <= top, report
    assert "100.0 % [75.0, 125.0] (n=2 settings)" in report and "Deception (0–125 %)" in report and "1.25]" not in report
