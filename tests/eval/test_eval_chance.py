"""`mas wellplay eval` never reports a bare score: the 95 % interval over questions and the
always-a / random scores under the same option shuffle and questions (synthetic script "Lantern")."""

import json
import random

import pytest

from eval.datasets.wellplay import load_script
from eval.metrics.wellplay import WEIGHTS, shuffled_view
from eval.runs.wellplay_eval import score_interval
from eval.runs.wellplay_run import run_wellplay_eval
from tests.data_roots import LANTERN_QUESTIONS
from tests.eval.test_wellplay_eval import fake_agent_factory, oracle_rule

#: Σ weights of Lantern's questions: 3 objective · 10 + 11 reasoning · 5 + 8 relation · 2.
TOTAL = 101


def always_a_points(sc, seed: int | None) -> int:
    """Σ w over the questions answering `a` gets right (strict), with the options shuffled by ``seed``
    as the evaluation shuffles them (None: upstream order)."""
    pts = 0
    for q in sc.all_questions():
        key = q.key if seed is None else shuffled_view(q, random.Random(f"{seed}/{q.qid}"))[1]
        pts += WEIGHTS[q.category] * (key == {"a"} if q.multi else "a" in key)
    return pts


def test_the_score_comes_with_always_a_and_random_under_the_same_shuffle(tmp_path, synthetic_root):
    sc = load_script(synthetic_root, "Lantern")
    res = run_wellplay_eval(data_root=synthetic_root, method="pp", out=tmp_path / "pp", script="Lantern",
                            make_agent=fake_agent_factory(oracle_rule(sc)))
    assert res["weighted_score"] == 1.0
    # every question right: all resampled scores are 1, a zero-width interval over the 22 questions
    assert {k: res["interval"][k] for k in ("mean", "low", "high", "n", "unit")} == \
        {"mean": 1.0, "low": 1.0, "high": 1.0, "n": LANTERN_QUESTIONS, "unit": "question"}
    # seed 0's shuffle leaves `a` right on 24 of 101 weight points (32 unshuffled: the position bias)
    assert always_a_points(sc, 0) == 24
    chance = res["chance"]
    assert chance["always_a"]["weighted_score"] == pytest.approx(24 / TOTAL)
    assert chance["random"]["weighted_score"] == pytest.approx(20 / TOTAL)
    # the same numbers as the model-free methods run on their own with the same seed
    for m in ("always_a", "random"):
        alone = run_wellplay_eval(data_root=synthetic_root, method=m, out=tmp_path / m, script="Lantern")
        assert chance[m]["weighted_score"] == alone["weighted_score"]
        assert chance[m]["accuracy"] == alone["accuracy"]
        assert chance[m]["interval"] == alone["interval"]
        assert alone["chance"][m]["weighted_score"] == alone["weighted_score"]
    saved = json.loads((tmp_path / "pp" / "result.json").read_text())
    assert saved["chance"] == json.loads(json.dumps(chance)) and saved["interval"]["n"] == LANTERN_QUESTIONS
    report = (tmp_path / "pp" / "report.md").read_text()
    assert "**Weighted score: 100.0 % [100.0, 100.0] (n=22)**" in report
    assert "| pp (this run) | 100.0 % [100.0, 100.0] (n=22) | 100.0 % | 100.0 % | 100.0 % |" in report
    assert "| always_a | 23.8 % [" in report and "| random | 19.8 % [" in report
    assert "always_a and random answered the same 22 questions with the options shuffled with each run's seed" in report


def test_unshuffled_chance_shows_the_position_bias(tmp_path, synthetic_root):
    sc = load_script(synthetic_root, "Lantern")
    res = run_wellplay_eval(data_root=synthetic_root, method="pp", out=tmp_path, script="Lantern", shuffle=False,
                            make_agent=fake_agent_factory(oracle_rule(sc)))
    assert always_a_points(sc, None) == 32
    assert res["chance"]["always_a"]["weighted_score"] == pytest.approx(32 / TOTAL)
    assert res["chance"]["always_a"]["accuracy"] == {"objective": pytest.approx(1 / 3), "reasoning": pytest.approx(2 / 11),
                                                     "relation": pytest.approx(6 / 8)}
    assert "options in upstream order (position-biased keys)" in (tmp_path / "report.md").read_text()


def test_several_runs_pool_each_question_over_the_runs(tmp_path, synthetic_root):
    res = run_wellplay_eval(data_root=synthetic_root, method="random", out=tmp_path, script="Lantern", seed=5, runs=3)
    assert [round(r["weighted_score"] * TOTAL) for r in res["runs"]] == [26, 31, 42]
    assert res["weighted_score"] == pytest.approx(33 / TOTAL)
    assert res["interval"]["n"] == LANTERN_QUESTIONS          # questions, not question-runs
    assert res["interval"]["mean"] == pytest.approx(res["weighted_score"])
    assert res["chance"]["random"]["weighted_score"] == res["weighted_score"]
    assert res["chance"]["random"]["weighted_score_std"] == res["weighted_score_std"]


def test_score_interval_on_two_questions():
    recs = [{"script": "S", "character": "A", "qid": "1", "category": "objective", "correct": True},
            {"script": "S", "character": "A", "qid": "2", "category": "relation", "correct": False}]
    iv = score_interval(recs)
    # resamples: q1 twice (1.0), q2 twice (0.0) or one each (10/12); each extreme has probability 1/4
    assert (iv["mean"], iv["low"], iv["high"], iv["n"]) == (pytest.approx(10 / 12), 0.0, 1.0, 2)
    # a second run of the same questions is pooled into the same two units
    again = score_interval(recs + [{**recs[1], "correct": True}])
    assert again["n"] == 2 and again["mean"] == pytest.approx((10 + 2) / (10 + 2 + 2))
    assert score_interval([])["mean"] is None


def test_cli_prints_the_interval_and_the_chance_scores(tmp_path, synthetic_root):
    from typer.testing import CliRunner
    from mas_agents.cli import app
    res = CliRunner().invoke(app, ["wellplay", "eval", "--method", "always_a", "--script", "Lantern", "--no-shuffle",
                                   "--data-dir", str(synthetic_root), "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert ("always_a (strict, shuffle=False): weighted 31.7 % [12.1, 54.3] (n=22) (95 % interval over questions; "
            "std 0.0 over runs); objective 33.3 %, reasoning 18.2 %, relation 75.0 %") in text
    assert ("same 22 questions and option shuffle: always_a 31.7 % [12.1, 54.3] (n=22), "
            "random 23.8 % [5.1, 46.3] (n=22)") in text
