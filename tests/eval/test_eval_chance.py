"""`mas wellplay eval` never reports a bare score: the 95 % interval over questions and the
always-a / random scores under the same option shuffle and questions (real script "Sin", id 131;
``realdata``).

The expected chance scores are recomputed here from Sin's CSV files read with the csv module
(:func:`tests.eval.test_wellplay_loader.sin_rows`), the weights 10 / 5 / 2 of PLAYER* §3 and the
documented contracts of the evaluation (``eval/wellplay/evaluate.py``): question ``qid`` of run
seed ``s`` shows its options in the order ``random.Random(f"{s}/{qid}").shuffle(list(range(n)))``;
``always_a`` picks the first shown option; ``random`` picks ``rng.sample(letters[:n], k)`` (k = 2
on a multi-select question, else 1) from one ``random.Random(s)`` stream, in character then file
order; strict scoring. None of that uses the loader, the shuffle or the scorer under test.
"""

import json
import random

import pytest

from mas_agents.graphs.mmg.dataset import load_script
from mas_agents.eval.wellplay.evaluate import score_interval
from mas_agents.eval.wellplay.run import WellPlayEvalConfig, run_wellplay_eval
from mas_agents.stats import bootstrap_ratio
from tests.data_roots import SIN, SIN_ID, SIN_QUESTIONS
from tests.eval.test_wellplay_eval import fake_agent_factory, oracle_rule
from tests.eval.test_wellplay_loader import WEIGHT, Row, sin_rows

#: Σ weights of Sin's questions (its CSV `value` column): 3 objective · 10 + 20 reasoning · 5 + 21 relation · 2.
TOTAL = 172
LETTERS = "abcde"


def _shown(row: Row, seed: int | None) -> list[int]:
    """``perm``: shown option i is upstream option ``perm[i]`` (identity when not shuffled)."""
    perm = list(range(row.options))
    if seed is not None:
        random.Random(f"{seed}/{SIN_ID}/{row.character}/{row.line}").shuffle(perm)
    return perm


def _right(row: Row, picked: set[str]) -> bool:
    """Strict scoring of upstream letters ``picked`` (PLAYER* §3 as the data README describes it)."""
    key = set(row.truth)
    return key <= picked and len(picked) <= 2 if row.multi else len(picked) == 1 and picked <= key


def always_a_points(rows: list[Row], seed: int | None) -> list[int]:
    """Per question, w if answering the first shown option is right (else 0); ``seed=None``:
    upstream order."""
    return [WEIGHT[r.value] * _right(r, {LETTERS[_shown(r, seed)[0]]}) for r in rows]


def random_points(rows: list[Row], seed: int, shuffle: bool = True) -> list[int]:
    """Per question, w if the ``random`` baseline of run seed ``seed`` is right (else 0)."""
    rng, out = random.Random(seed), []
    for r in rows:
        perm = _shown(r, seed if shuffle else None)
        pick = rng.sample(LETTERS[:r.options], 2 if r.multi and r.options >= 2 else 1)
        out.append(WEIGHT[r.value] * _right(r, {LETTERS[perm[LETTERS.index(c)]] for c in pick}))
    return out


def interval_text(rows: list[Row], points: list[int]) -> str:
    """The weighted score with its 95 % interval as the report prints it: questions are the units
    (w·correct over w, sorted by (script, character, qid) as score_interval sorts them),
    resampled by mas_agents.stats.bootstrap_ratio (tested in tests/eval/test_stats.py)."""
    units = sorted(((SIN[0], r.character, f"{SIN_ID}/{r.character}/{r.line}"), p, WEIGHT[r.value])
                   for r, p in zip(rows, points))
    return bootstrap_ratio([p for _, p, _ in units], [w for _, _, w in units]).fmt()


@pytest.mark.realdata
def test_the_score_comes_with_always_a_and_random_under_the_same_shuffle(tmp_path, real_data_root):
    rows = sin_rows(real_data_root)
    assert sum(WEIGHT[r.value] for r in rows) == TOTAL
    sc = load_script(real_data_root, "Sin")
    res = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="pp", out=tmp_path / "pp",
                                               script="Sin"), make_agent=fake_agent_factory(oracle_rule(sc)))
    assert res["weighted_score"] == 1.0
    # every question right: all resampled scores are 1, a zero-width interval over the 44 questions
    assert {k: res["interval"][k] for k in ("mean", "low", "high", "n", "unit")} == \
        {"mean": 1.0, "low": 1.0, "high": 1.0, "n": SIN_QUESTIONS, "unit": "question"}
    # seed 0's shuffle leaves `a` right on 43 of 172 weight points (82 unshuffled: the position
    # bias); random, seed 0, gets 41
    assert (sum(always_a_points(rows, 0)), sum(always_a_points(rows, None)), sum(random_points(rows, 0))) == (43, 82, 41)
    chance = res["chance"]
    assert chance["always_a"]["weighted_score"] == pytest.approx(43 / TOTAL)
    assert chance["random"]["weighted_score"] == pytest.approx(41 / TOTAL)
    # the same numbers as the model-free methods run on their own with the same seed
    for m in ("always_a", "random"):
        alone = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method=m, out=tmp_path / m,
                                                     script="Sin"))
        assert chance[m]["weighted_score"] == alone["weighted_score"]
        assert chance[m]["accuracy"] == alone["accuracy"]
        assert chance[m]["interval"] == alone["interval"]
        assert alone["chance"][m]["weighted_score"] == alone["weighted_score"]
    saved = json.loads((tmp_path / "pp" / "result.json").read_text())
    assert saved["chance"] == json.loads(json.dumps(chance)) and saved["interval"]["n"] == SIN_QUESTIONS
    report = (tmp_path / "pp" / "report.md").read_text()
    assert "**Weighted score: 100.0 % [100.0, 100.0] (n=44)**" in report
    assert "| pp (this run) | 100.0 % [100.0, 100.0] (n=44) | 100.0 % | 100.0 % | 100.0 % |" in report
    # 43 / 172 = 25.0 %, 41 / 172 = 23.8 %, each with its interval recomputed from the rows
    assert f"| always_a | {interval_text(rows, always_a_points(rows, 0))} |" in report
    assert f"| random | {interval_text(rows, random_points(rows, 0))} |" in report
    assert "| always_a | 25.0 % [" in report and "| random | 23.8 % [" in report
    assert "always_a and random answered the same 44 questions with the options shuffled with each run's seed" in report


@pytest.mark.realdata
def test_unshuffled_chance_shows_the_position_bias(tmp_path, real_data_root):
    rows = sin_rows(real_data_root)
    sc = load_script(real_data_root, "Sin")
    res = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="pp", out=tmp_path, script="Sin",
                                               shuffle=False), make_agent=fake_agent_factory(oracle_rule(sc)))
    # upstream order: `a` is the key of 0 / 3 objective, 8 / 20 reasoning, 21 / 21 relation rows:
    # 0*10 + 8*5 + 21*2 = 82 of 172 weight points
    points = always_a_points(rows, None)
    assert sum(points) == 82
    assert [sum(p > 0 for r, p in zip(rows, points) if r.value == v) for v in "abc"] == [0, 8, 21]
    assert res["chance"]["always_a"]["weighted_score"] == pytest.approx(82 / TOTAL)
    assert res["chance"]["always_a"]["accuracy"] == {"objective": 0.0, "reasoning": pytest.approx(8 / 20),
                                                     "relation": 1.0}
    assert "options in upstream order (position-biased keys)" in (tmp_path / "report.md").read_text()


@pytest.mark.realdata
def test_several_runs_pool_each_question_over_the_runs(tmp_path, real_data_root):
    rows = sin_rows(real_data_root)
    res = run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="random", out=tmp_path, script="Sin",
                                               seed=5, runs=3))
    # runs 0, 1, 2 use seeds 5, 6, 7: 26, 47 and 47 of 172 points, mean 40
    assert [sum(random_points(rows, s)) for s in (5, 6, 7)] == [26, 47, 47]
    assert [round(r["weighted_score"] * TOTAL) for r in res["runs"]] == [26, 47, 47]
    assert res["weighted_score"] == pytest.approx(40 / TOTAL)
    assert res["interval"]["n"] == SIN_QUESTIONS          # questions, not question-runs
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


@pytest.mark.realdata
def test_cli_prints_the_interval_and_the_chance_scores(tmp_path, real_data_root):
    from typer.testing import CliRunner

    from mas_agents.cli import app
    rows = sin_rows(real_data_root)
    # unshuffled, seed 0: always_a 82 / 172 = 47.7 %, random 62 / 172 = 36.0 %; the intervals are
    # recomputed from the per-question points (interval_text)
    a, r = always_a_points(rows, None), random_points(rows, 0, shuffle=False)
    assert (sum(a), sum(r)) == (82, 62)
    assert (interval_text(rows, a), interval_text(rows, r)) == ("47.7 % [31.7, 65.3] (n=44)", "36.0 % [19.6, 52.7] (n=44)")
    res = CliRunner().invoke(app, ["wellplay", "eval", "--method", "always_a", "--script", "Sin", "--no-shuffle",
                                   "--data-dir", str(real_data_root), "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert ("always_a (strict, shuffle=False): weighted 47.7 % [31.7, 65.3] (n=44) (95 % interval over questions; "
            "one run, so no std over runs); objective 0.0 %, reasoning 40.0 %, relation 100.0 %") in text
    assert ("same 44 questions and option shuffle: always_a 47.7 % [31.7, 65.3] (n=44), "
            "random 36.0 % [19.6, 52.7] (n=44)") in text
