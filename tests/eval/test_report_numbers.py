"""Numbers in reports (issue 46): report cells read back into numbers, MAgIC Deception on one
scale (percent, as MAgIC's tables print it) in every report, no report pointing readers to an
internal issue number, and ``mas spy experiment`` keeping its arms in its own database."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mas_agents.stats import Estimate


# ------------------------------------------------------------------ cells read back into numbers

@pytest.mark.parametrize("text, want", [
    ("41.2 % [35.0, 47.9] (n=6)", (41.2, 35.0, 47.9, 6, "%")),
    ("57.1 [no interval, n=1]", (57.1, None, None, 1, "")),
    ("- (n=0 votes)", (None, None, None, 0, "")),
    ("+3.1 points [-2.0, 8.4] (n=6)", (3.1, -2.0, 8.4, 6, "points")),
    ("2.40 [0.00, 4.80] (n=5 games)", (2.4, 0.0, 4.8, 5, "")),
    ("3.00 [no interval, n=1 game]", (3.0, None, None, 1, "")),
    ("+5.0 pt [1.0, 9.0] (n=4) (includes 0)", (5.0, 1.0, 9.0, 4, "pt")),
    ("50.0 (no interval)", (50.0, None, None, None, "")),
])
def test_a_formatted_estimate_reads_back_into_its_numbers(text, want):
    from mas_agents.eval.reports.cells import parse_estimate
    p = parse_estimate(text)
    assert (p["value"], p["low"], p["high"], p["n"], p["unit"]) == want


@pytest.mark.parametrize("text", ["53.3", "not published", "-", "41.2 ± 1.3", "",
                                  "as chameleon 100.0 [no interval, n=1 game], as non-chameleon 0.0 [no interval, n=1 game]"])
def test_other_cells_are_not_estimates(text):
    from mas_agents.eval.reports.cells import parse_estimate
    assert parse_estimate(text) is None


def test_every_fmt_reads_back():
    from mas_agents.eval.reports.cells import parse_estimate
    for e in (Estimate(0.412, 0.35, 0.479, 6), Estimate(0.571, None, None, 1), Estimate(None, None, None, 0),
              Estimate(-0.031, -0.2, 0.084, 12)):
        for kw in ({}, {"unit": ""}, {"scale": 1, "digits": 2, "unit": ""}, {"unit": "points", "signed": True}):
            p = parse_estimate(e.fmt(**kw))
            scale, digits = kw.get("scale", 100), kw.get("digits", 1)
            assert p["n"] == e.n, (e, kw)
            for got, x in ((p["value"], e.mean), (p["low"], e.low), (p["high"], e.high)):
                assert got == (None if x is None else round(x * scale, digits)), (e, kw)


def test_numeric_columns_split_estimate_columns_and_keep_the_rest():
    from mas_agents.eval.reports.cells import numeric_columns
    table = [["model", "Judgement", "note"],
             ["ours", "41.2 % [35.0, 47.9] (n=6)", "a"],
             ["paper", "83.8", "b"],
             ["other", "not published", "c"],
             ["none", "- (n=0)", "-"]]
    assert numeric_columns(table) == [
        ["model", "Judgement (%)", "Judgement low", "Judgement high", "Judgement n", "note"],
        ["ours", "41.2", "35.0", "47.9", "6", "a"],
        ["paper", "83.8", "", "", "", "b"],
        ["other", "not published", "", "", "", "c"],
        ["none", "", "", "", "0", "-"]]


# ------------------------------------------------------------------ Deception: one scale

def test_ablation_report_prints_magic_deception_in_percent_like_every_other_metric():
    """The ablation report printed Deception as a score ("0.62 [0.50, 0.75]") beside rates in percent;
    MAgIC's Tables 1 and 4 (and our other reports) print it in percent: 62.5, range 0-125."""
    from mas_agents.eval.ablate.benches import MAGIC_KEYS
    from mas_agents.eval.ablate.report import report_md

    def d(mean, low, high, n=3):
        return Estimate(mean, low, high, n).to_dict()
    cost = {"calls": 1, "input_tokens": 1, "output_tokens": 1, "wall_s": 1}

    def row(variant, dec, diff=None):
        m = {k: {"estimate": d(0.5, 0.25, 0.75)} for k in MAGIC_KEYS}
        m["deception"] = {"estimate": d(dec, dec - 0.125, dec + 0.125)}
        if diff is not None:
            for k in MAGIC_KEYS:
                m[k]["diff_vs_base"] = d(0.0, -0.1, 0.1)
            m["deception"]["diff_vs_base"] = d(diff, 0.05, 0.2)
        return {"variant": variant, "n": 3, "metrics": m, "cost": cost, "radar": f"{variant}.png"}
    result = {"variants": ["plain", "plain+pgm"], "summary": "", "command": "", "model": "fake", "versions": {},
              "benches": {"magic": {"rows": [row("plain", 0.625), row("plain+pgm", 0.75, diff=0.125)]}}}
    report = report_md(result)
    table = [line for line in report.splitlines() if line.startswith("| plain |")][0]
    cells = [c.strip() for c in table.strip("|").split("|")]
    dec = 1 + MAGIC_KEYS.index("deception")
    assert cells[dec] == "62.5 % [50.0, 75.0] (n=3 settings)"              # was "0.62 [0.50, 0.75] (n=3)"
    assert cells[1] == "50.0 % [25.0, 75.0] (n=3 settings)"                 # a rate, the same scale
    assert "Deception (0–125 %)" in report
    diff_row = [line for line in report.splitlines() if line.startswith("| plain+pgm |")][-1]
    assert "+12.5 pt [5.0, 20.0] (n=3 settings)" in diff_row                         # percentage points, like the rates


# ------------------------------------------------------------------ no internal issue numbers

ISSUE = re.compile(r"\bissues? #?\d+", re.I)


def test_reproduce_reports_fixed_texts_name_no_internal_issue():
    from mas_agents.eval.reproduce import magic, wis
    from mas_agents.eval.reproduce import magic_report
    from mas_agents.eval.reproduce import player_star_report
    from mas_agents.eval.reproduce import wis_report
    for text in (*magic_report.DIFFERENCES, *player_star_report.PROTOCOL_DIFFERENCES, *wis_report.DIFFERENCES):
        assert not ISSUE.search(text), text


def _magic_result() -> dict:
    """A finished ``mas reproduce magic`` result as :func:`mas_agents.eval.reproduce.magic.reproduce` returns it
    (numbers made up; only the report's text is tested)."""
    from mas_agents.eval.reproduce.magic_protocol import CONDITIONS, METRICS
    est = Estimate(0.5, 0.25, 0.75, 4).to_dict()
    conds = {c: {"challenger": f"{spec}@local", "metrics": {k: 0.5 for k in METRICS},
                 "intervals": {k: est for k in METRICS}} for c, spec in CONDITIONS.items()}
    from mas_agents.eval.reproduce.magic_protocol import settings_for
    return {"model": "local", "others": "local", "temperature": 0.0, "limit": 1, "settings": settings_for(1),
            "partial": True, "left_out": [],
            "games_per_condition": {c: 7 for c in CONDITIONS}, "full_games_per_condition": 143,
            "conditions": conds,
            "table4": {k: {"vanilla": 0.5, "pgm": 0.5, "paired": Estimate(0.0, -0.1, 0.1, 3).to_dict()} for k in METRICS},
            "table2": {c: {k: est for k in ("cs_wr", "cs_cost", "pd_wr", "pd_score", "pg_wr", "pg_payback")}
                       for c in CONDITIONS},
            "pgm_engagement": {}, "cost": {"games": 14, "calls": 1, "input_tokens": 1, "output_tokens": 1,
                                           "wall_s": 1.0, "invalid_actions": 0, "model_actions": 1}}


def test_magic_reproduction_report_explains_the_two_averages_instead_of_citing_an_issue():
    """The paper's printed Table 4 average for Deception and Self-awareness does not follow from its
    rows: the report says so in words (both numbers) and never sends the reader to an issue."""
    from mas_agents.eval.reproduce.magic_report import report_md
    report = report_md(_magic_result())
    assert not ISSUE.search(report), ISSUE.search(report)
    assert "Deception (printed 6.07, the mean of its 7 improvements 10.36)" in report
    assert "Self-awareness (printed 0.66, the mean of its 7 improvements 1.23)" in report


# ------------------------------------------------------------------ spy experiment: its own database

@pytest.fixture
def fake_wis_seats(monkeypatch):
    """Every WiS seat plays the rule-based fake player (tests.fakes.wis_player); no model is loaded."""
    from mas_agents.game.seats import Seats
    from mas_agents.graphs.wis.session import PlayerFactory
    from mas_agents.call_log import CallRecorder
    from tests.fakes import RuleChat, wis_player
    real_call = PlayerFactory.__call__

    def call(self, spec, role):
        fake = PlayerFactory(Seats(CallRecorder(None), RuleChat(rule=wis_player())), lang=self.lang)
        return real_call(fake, "plain", role)
    monkeypatch.setattr(PlayerFactory, "__call__", call)


def test_spy_experiment_without_db_keeps_its_arms_in_its_own_database(tmp_path, monkeypatch, fake_wis_seats):
    from typer.testing import CliRunner

    from mas_agents.graphs.wis.leaderboard import Leaderboard
    from mas_agents.cli import app
    home = tmp_path / "home"
    monkeypatch.setenv("MAS_DATA_HOME", str(home))
    root = tmp_path / "datasets"
    (root / "whoisspy").mkdir(parents=True)
    (root / "whoisspy" / "pairs_en.jsonl").write_text(
        "".join(json.dumps({"civilian": c, "spy": s}) + "\n" for c, s in [("tea", "coffee"), ("cat", "dog")]),
        encoding="utf-8")
    out = tmp_path / "exp"
    r = CliRunner().invoke(app, ["spy", "experiment", "--kind", "reasoning", "--subject", "plain", "--others", "plain",
                                 "--games", "1", "--players", "4", "--out", str(out), "--data-dir", str(root)])
    assert r.exit_code == 0, r.output
    assert not list(home.rglob("*.sqlite"))                          # the global leaderboard was not touched
    board = Leaderboard(out / "wis.sqlite")
    ids = {t["id"] for t in board.tournaments()}
    res = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert ids == {row["tournament"] for row in res["rows"]} and len(ids) == 2   # both arms, nothing else


# ------------------------------------------------------------------ a std over one run

def _wellplay_result(runs: int) -> dict:
    return {"method": "pp", "scripts": ["Sin"], "lang": "en", "model": "local", "scoring": "strict", "shuffle": True,
            "runs": [{"seed": s, "weighted_score": 0.5, "abstained": 0, "n": 44} for s in range(runs)],
            "weighted_score": 0.5, "weighted_score_std": 0.0 if runs == 1 else 0.021,
            "accuracy": {"objective": 0.5, "reasoning": 0.5, "relation": 0.5},
            "counts": {c: {"n": 10} for c in ("objective", "reasoning", "relation")}}


def test_wellplay_evaluation_report_gives_no_std_for_one_run():
    from mas_agents.eval.wellplay.evaluate import report_md
    one = report_md(_wellplay_result(1))
    assert "std 0.0" not in one and "one run, so no std over runs" in one
    assert "std 2.1 over runs" in report_md(_wellplay_result(3))


# ------------------------------------------------------------------ report text on the terminal

@pytest.mark.parametrize("argv, target", [
    (["ablate", "--bench", "wellplay"], "mas_agents.eval.ablate.grid.run_ablate"),
    (["reproduce", "wis"], None),
])
def test_cli_prints_report_text_as_written_not_as_rich_markup(argv, target, tmp_path, monkeypatch):
    """"0.0 points [no interval, n=1]; ..." printed as "0.0 points ; ...": rich took the bracketed
    words for a markup tag and dropped them. What a report says is printed as it is."""
    import importlib

    from typer.testing import CliRunner

    from mas_agents.cli import app
    text = "WellPlay, weighted score vs plain (unit: seed): plain+pgm 0.0 points [no interval, n=1]; done [bold]."
    out = tmp_path / "run [x]"
    if target:
        mod, name = target.rsplit(".", 1)
        monkeypatch.setattr(importlib.import_module(mod), name, lambda *a, **kw: {"summary": text})
    else:
        import mas_agents.eval.reproduce.wis as wis
        monkeypatch.setattr(wis, "reproduce", lambda config: {"headline": text})
    r = CliRunner().invoke(app, [*argv, "--out", str(out), "--data-dir", str(tmp_path)])
    assert r.exit_code == 0, r.output
    if target:
        assert text in r.output
    else:
        assert f"report: {out / 'report.md'}" in r.output
