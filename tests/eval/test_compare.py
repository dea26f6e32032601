"""`mas wellplay compare` logic with fake models: cells, pairing, resume, report.

The cells play and evaluate the real WellPlay script "Sin" (``real_data_root``; ``realdata`` tests):
four characters in seat order Zhang Villager, Chief Wang (the murderer), Officer Li, Hu Investigate
(``tests/data_roots.py``)."""

import json

import pytest

from mas_agents.graphs.mmg.dataset import load_script
from mas_agents.eval.compare.run import CompareConfig, run_compare
from mas_agents.eval.compare.table import aggregate
from mas_agents.eval.compare.report import fewer_calls_line
from tests.data_roots import SIN, SIN_MURDERER, SIN_QUESTIONS
from tests.fakes import RuleChat, polite_player


def fake_model():
    return RuleChat(rule=polite_player(vote_for=SIN_MURDERER))


@pytest.mark.realdata
def test_compare_runs_every_cell_and_resumes(tmp_path, real_data_root):
    root = real_data_root
    sc = load_script(root, SIN[0])
    from mas_agents.graphs.mmg.session import play_script
    plays = []

    def counting_play(cfg, **k):
        plays.append(cfg.agent)
        if len(plays) == 2:
            raise KeyboardInterrupt("simulated interrupt during the second game")
        return play_script(cfg, **k)

    methods = ["plain", "always_a", "pp"]
    with pytest.raises(KeyboardInterrupt):
        run_compare(CompareConfig(data_root=root, out=tmp_path, methods=methods, scripts=[sc], seeds=2,
                                  model=fake_model(),
                    rounds=1), play=counting_play)
    assert plays == ["plain", "plain"]
    res = run_compare(CompareConfig(data_root=root, out=tmp_path, methods=methods, scripts=[sc], seeds=2,
                                    model=fake_model(),
                      rounds=1), play=counting_play)
    # seed 0's cells were finished and are skipped; only seed 1's game is played again (resumed)
    assert plays == ["plain", "plain", "plain"]
    assert len(res["cells"]) == 6
    rows = {t["method"]: t for t in res["table"]}
    # one round of 4 players (rules.question_schedule): 4 introductions + 4 questions and their 4
    # answers + 4 votes; the plain agent makes no call at the round's end
    assert rows["plain"]["game_calls"] == 4 + 8 + 4 and rows["pp"]["game_calls"] == 0
    # the three civilians vote Chief Wang, who may not vote for himself: 3 of 4 votes accuse him
    assert rows["plain"]["murderer_caught"] == 1.0
    # pp: one call per question of the four characters' own files, 13 + 6 + 11 + 14 = 44 rows of
    # final_result/<character>.csv (the murderer answers his 6 too)
    assert rows["always_a"]["eval_calls"] == 0 and rows["pp"]["eval_calls"] == SIN_QUESTIONS == 44
    # the fake always answers `a`, like always_a, under the same per-seed shuffle: paired scores agree
    assert rows["pp"]["weighted_score"] == pytest.approx(rows["always_a"]["weighted_score"])
    assert (tmp_path / "scores.png").stat().st_size > 1000
    report = (tmp_path / "report.md").read_text()
    assert "| plain |" in report and "| always_a |" in report
    assert "not compared" in res["fewer_calls"]
    assert res["reused_cells"] == 3          # seed 0's three cells came from the first, interrupted run


@pytest.mark.realdata
def test_resume_with_other_settings_is_refused(tmp_path, real_data_root):
    root = real_data_root
    sc = load_script(root, SIN[0])
    run_compare(CompareConfig(data_root=root, out=tmp_path, methods=["always_a"], scripts=[sc], seeds=1, rounds=1))
    with pytest.raises(ValueError, match=r"config.json: field 'rounds' is 1 but this run asks for 3"):
        run_compare(CompareConfig(data_root=root, out=tmp_path, methods=["always_a"], scripts=[sc], seeds=1, rounds=3))
    # same settings, another method: allowed, and the finished cell is reused
    res = run_compare(CompareConfig(data_root=root, out=tmp_path, methods=["always_a", "random"], scripts=[sc],
                                    seeds=1, rounds=1))
    assert res["reused_cells"] == 1 and len(res["cells"]) == 2


def test_stable_run_dir_is_the_same_for_the_same_arguments():
    from mas_agents.rundir import stable_run_dir
    a = stable_run_dir("compare", "Sin", "en", "openai:gpt-4o-mini", "r3q1")
    assert a == stable_run_dir("compare", "Sin", "en", "openai:gpt-4o-mini", "r3q1")
    assert str(a) == "runs/compare-Sin-en-openai_gpt-4o-mini-r3q1"


def test_unknown_method_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="nonsense"):
        run_compare(CompareConfig(data_root=tmp_path / "no-data", out=tmp_path, methods=["nonsense"], scripts=[],
                                  seeds=1))


def test_fewer_calls_line():
    """The line compares the calls of the seats each method plays (game_seat_calls), not game totals
    (more cases in test_compare_cost.py)."""
    table = aggregate([
        {"method": "player_star", "seed": 0, "weighted_score": 0.5, "accuracy": {}, "game_calls": 50,
         "game_seat_calls": 40, "game_seat_input_tokens": 0, "game_seat_output_tokens": 0,
         "murderer_caught": True, **{k: 0 for k in ("game_input_tokens", "game_output_tokens", "game_wall_s",
                                                     "game_model_s", "eval_calls", "eval_input_tokens",
                                                     "eval_output_tokens", "eval_wall_s", "eval_model_s", "abstained")}},
        {"method": "werewolf", "seed": 0, "weighted_score": 0.4, "accuracy": {}, "game_calls": 80,
         "game_seat_calls": 64, "game_seat_input_tokens": 0, "game_seat_output_tokens": 0,
         "murderer_caught": False, **{k: 0 for k in ("game_input_tokens", "game_output_tokens", "game_wall_s",
                                                      "game_model_s", "eval_calls", "eval_input_tokens",
                                                      "eval_output_tokens", "eval_wall_s", "eval_model_s", "abstained")}},
    ], ["player_star", "werewolf"])
    assert fewer_calls_line(table) == (
        "PLAYER* used fewer gameplay calls than each baseline: yes (player_star 40 per-seat calls; cheapest "
        "baseline werewolf 64: ratio 0.62). Strictly fewer per-seat calls per game than: werewolf yes (40 vs 64).")


def test_summary_row_reports_model_seconds_that_survive_a_resume(tmp_path):
    """A resumed game's result.json wall time covers only the last process; the table's model
    seconds are the summed call latencies, so they still count the calls before the resume."""
    from types import SimpleNamespace
    from mas_agents.eval.compare.run import summary_row
    from mas_agents.eval.compare.report import report_md
    (tmp_path / "eval").mkdir()
    (tmp_path / "game").mkdir()
    llm = {"calls": 44, "input_tokens": 100, "output_tokens": 10, "latency_s": 350.0}
    (tmp_path / "eval" / "result.json").write_text(json.dumps(
        {"weighted_score": 0.25, "accuracy": {"objective": 0.0}, "llm": llm, "wall_time_s": 360.0}))
    (tmp_path / "game" / "result.json").write_text(json.dumps(
        {"llm": {"calls": 165, "input_tokens": 9, "output_tokens": 1, "latency_s": 800.0},
         "wall_time_s": 162.0, "outcome": {"murderer_caught": False}}))
    row = summary_row("plain", SimpleNamespace(name="Sin"), 1, tmp_path)
    assert row["game_model_s"] == 800.0 and row["game_wall_s"] == 162.0 and row["eval_model_s"] == 350.0
    table = aggregate([row], ["plain"])
    md = report_md({"scripts": ["Sin"], "lang": "en", "seeds": 1, "model": "fake", "rounds": 3, "questions": 1,
                    "table": table, "fewer_calls": ""})
    assert "| game model s |" in md and "| 165 | 9/1 | 800 | 44 | 100/10 | 350 |" in md


def test_one_seed_report_has_no_zero_std_and_keeps_the_cells_interval(tmp_path):
    """With one seed there is no spread over seeds: the report says so instead of "± 0.0", shows the
    cell's own interval over questions with its n, and the murderer-caught rate with n and a Wilson
    interval."""
    from types import SimpleNamespace
    from mas_agents.eval.compare.run import summary_row
    from mas_agents.eval.compare.report import report_md
    from mas_agents.stats import Estimate
    (tmp_path / "eval").mkdir()
    (tmp_path / "game").mkdir()
    llm = {"calls": 44, "input_tokens": 100, "output_tokens": 10, "latency_s": 350.0}
    interval = {**Estimate(0.25, 0.125, 0.4, 44, method="ratio bootstrap").to_dict(), "unit": "question"}
    (tmp_path / "eval" / "result.json").write_text(json.dumps(
        {"weighted_score": 0.25, "accuracy": {"objective": 0.0}, "llm": llm, "wall_time_s": 360.0,
         "interval": interval}))
    (tmp_path / "game" / "result.json").write_text(json.dumps(
        {"llm": {"calls": 165, "input_tokens": 9, "output_tokens": 1, "latency_s": 800.0},
         "wall_time_s": 162.0, "outcome": {"murderer_caught": True}}))
    row = summary_row("plain", SimpleNamespace(name="Sin"), 1, tmp_path)
    table = aggregate([row], ["plain"])
    md = report_md({"scripts": ["Sin"], "lang": "en", "seeds": 1, "model": "fake", "rounds": 3, "questions": 1,
                    "table": table, "fewer_calls": ""})
    assert "± 0.0" not in md
    assert "| plain | 25.0 [12.5, 40.0] (n=44 questions) | n=1 seed, no spread |" in md
    assert "100 % [21, 100] (n=1 game)" in md   # Wilson, 1 of 1: [20.7, 100]
    # two seeds: the std is shown with its n, the interval is over seeds
    row2 = {**row, "seed": 2, "weighted_score": 0.5}
    t2 = aggregate([row, row2], ["plain"])[0]
    assert t2["weighted_score_interval"]["unit"] == "seed" and t2["weighted_score_interval"]["n"] == 2
    md2 = report_md({"scripts": ["Sin"], "lang": "en", "seeds": 2, "model": "fake", "rounds": 3, "questions": 1,
                     "table": [t2], "fewer_calls": ""})
    assert "± 17.7 (n=2 seeds)" in md2 and "(n=2 seeds)" in md2


def test_category_accuracies_are_pooled_answers_with_wilson_intervals(tmp_path):
    """The report printed "66.7" for objective with nothing beside it; the answers of every cell are
    now pooled per category with n and a Wilson interval (here 2 + 1 of 3 + 3 objective answers)."""
    from types import SimpleNamespace
    from mas_agents.eval.compare.run import summary_row
    from mas_agents.eval.compare.report import report_md
    rows = []
    for seed, (obj, rea) in enumerate([((2, 3), (3, 20)), ((1, 3), (5, 20))]):
        d = tmp_path / f"s{seed}"
        (d / "eval").mkdir(parents=True)
        (d / "eval" / "result.json").write_text(json.dumps(
            {"weighted_score": 0.3, "accuracy": {"objective": obj[0] / obj[1], "reasoning": rea[0] / rea[1]},
             "counts": {"objective": {"n": obj[1], "correct": obj[0]}, "reasoning": {"n": rea[1], "correct": rea[0]}},
             "llm": {"calls": 1, "input_tokens": 1, "output_tokens": 1, "latency_s": 1.0}, "wall_time_s": 1.0}))
        rows.append(summary_row("pp", SimpleNamespace(name="Sin"), seed, d))
    t = aggregate(rows, ["pp"])[0]
    assert t["accuracy_interval"]["objective"]["n"] == 6 and t["accuracy_interval"]["reasoning"]["n"] == 40
    md = report_md({"scripts": ["Sin"], "lang": "en", "seeds": 2, "model": "fake", "rounds": 3, "questions": 1,
                    "table": [t], "fewer_calls": ""})
    # 3 of 6: Wilson [18.8, 81.2]; 8 of 40: [10.5, 34.8]; relation has no answers: "-"
    assert "| 50.0 [18.8, 81.2] (n=6) | 20.0 [10.5, 34.8] (n=40) | - |" in md


def _row(method: str, ws: float) -> dict:
    """One :func:`aggregate` row with the keys the report reads (one seed, an interval over scripts)."""
    return {"method": method, "n_cells": 2, "seeds": 1, "weighted_score": ws, "weighted_score_std": 0.0,
            "weighted_score_interval": {"mean": ws, "low": ws - 0.1, "high": ws + 0.1, "n": 2, "level": 0.95,
                                        "method": "bootstrap", "unit": "script"},
            "accuracy": {}, "accuracy_interval": {}, "murderer_caught": None, "murderer_caught_interval": None,
            **{k: 0 for k in ("game_calls", "game_input_tokens", "game_output_tokens", "game_model_s", "eval_calls",
                              "eval_input_tokens", "eval_output_tokens", "eval_model_s", "abstained")},
            "game_seat_calls": None}


def test_the_weighted_score_is_labelled_the_plain_mean_over_scripts_in_the_report_and_the_chart(tmp_path, monkeypatch):
    """A comparison's weighted score is per seed the plain mean over scripts (compare_table.aggregate),
    not PLAYER* App. B.3's pooled one: the report's column, its text, the chart's title and axis say
    so (a reproduce report set the unlabelled chart under a table led by App. B.3 pooled)."""
    import matplotlib.figure

    from mas_agents.eval.compare.report import bar_chart, report_md
    table = [_row("player_star", 0.46), _row("plain", 0.41)]
    md = report_md({"scripts": ["Sin", "Deadly Fountain"], "lang": "en", "seeds": 1, "model": "local", "rounds": 3,
                    "questions": 1, "table": table, "fewer_calls": "x", "gameplay_cost": {}})
    assert "| method | weighted, plain mean over scripts [95 % interval] (n) |" in md
    assert "Weighted score, plain mean over scripts: per seed the unweighted mean of the scripts'" in md
    assert "not PLAYER* App. B.3's pooled aggregation" in md
    assert "![weighted score, plain mean over scripts](scores.png)" in md
    drawn = []
    save = matplotlib.figure.Figure.savefig
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig",
                        lambda fig, *a, **k: (drawn.append((fig.axes[0].get_title(), fig.axes[0].get_ylabel())),
                                              save(fig, *a, **k)))
    bar_chart(table, tmp_path / "scores.png")
    assert drawn == [("WellPlay weighted score, plain mean over scripts (95 % interval)",
                      "weighted score (%),\nplain mean over scripts")]
    assert (tmp_path / "scores.png").stat().st_size > 1000
