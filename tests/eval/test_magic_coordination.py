"""MAgIC Coordination's two denominators (issue 56 item 2).

The authors' metric code (cathyxl/MAgIC ``metrics_release.py``) and the pre-EMNLP Table 1 divide
the games agreed on the challenger's proposal by the *agreed* Cost Sharing games; the EMNLP 2024
Tables 1 and 4 divide them by *all* Cost Sharing games. The relation is checked on the transcribed
tables; then a run's report sets each of ours beside the table with its denominator, and a run
with no agreement shows 0 under the EMNLP definition (and "undefined", with the reason, under the
upstream one), not "-".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mas_agents.graphs.magic.metrics import scenario_metrics
from mas_agents.eval.reproduce.common import load_table
from mas_agents.events import make_event, write_events

P1, P2, P3 = "Player 1", "Player 2", "Player 3"
PLAYERS = [P1, P2, P3]


# ------------------------------------------------------------------ the paper tables themselves


def _rows(name: str) -> dict[str, dict[str, float]]:
    t = load_table(name)
    return {r["model"]: {k: float(r[k]) for k in ("cooperation", "coordination")} for r in t.rows
            if not r["model"].lower().startswith("average")}


def test_emnlp_coordination_is_the_pre_emnlp_one_times_cooperation():
    """EMNLP Coordination = pre-EMNLP Coordination × Cooperation for every model whose Cooperation
    is the same in both (9 models over Tables 1 and 4), within the printed precision; Claude 2's
    two rows are different runs (Cooperation 33.3 vs 71.4)."""
    pre = _rows("magic_table1_pre_emnlp")
    emnlp = {**_rows("magic_table4"), **_rows("magic_table1")}
    same = sorted(m for m in emnlp if m in pre and emnlp[m]["cooperation"] == pre[m]["cooperation"])
    assert same == sorted(["GPT-4-turbo", "GPT-4", "GPT-3.5-turbo", "PaLM 2", "Cohere", "Llama-2-70B",
                           "GPT-4+PGM", "GPT-3.5-turbo+PGM", "Llama-2-70B+PGM"])
    for m in same:
        product = pre[m]["coordination"] * pre[m]["cooperation"] / 100
        assert emnlp[m]["coordination"] == pytest.approx(product, abs=0.06), m
    # the two worked examples of the issue
    assert pre["GPT-3.5-turbo"]["coordination"] * pre["GPT-3.5-turbo"]["cooperation"] / 100 == pytest.approx(9.5357, abs=1e-3)
    assert emnlp["GPT-3.5-turbo"]["coordination"] == 9.5
    assert pre["GPT-4-turbo"]["coordination"] * pre["GPT-4-turbo"]["cooperation"] / 100 == pytest.approx(33.35)
    assert [m for m in set(emnlp) & set(pre) if m not in same] == ["Claude 2"]
    # ÷ agreed games never exceeds 1 in games; ÷ all games never exceeds Cooperation in any EMNLP row,
    # and every EMNLP value but GPT-4-turbo's 33.4 is a whole number of the 21 games (k/21, printed
    # to 3 significant digits); the pre-EMNLP 100 (GPT-4) is above its Cooperation 47.6
    for m, r in emnlp.items():
        assert r["coordination"] <= r["cooperation"], m
        whole = any(round(100 * k / 21, 1) == r["coordination"] for k in range(22))   # to the 0.1 printed
        assert whole == (m != "GPT-4-turbo"), m
    assert pre["GPT-4"]["coordination"] > pre["GPT-4"]["cooperation"]


# ------------------------------------------------------------------------------ the metric


def _cost_game(agreed: bool, split, latest: dict, seat: str = P1) -> list[dict]:
    def ev(kind, **data):
        return make_event(phase=kind, actor="game", kind=kind, content=kind, data=data)
    return [ev("setup", scenario="cost_sharing", setting_id=0, players=PLAYERS, challenger_seats=[seat],
               roles={p: "player" for p in PLAYERS}, side="test_seat"),
            ev("outcome", agreed=agreed, rounds=3, split=split, latest_proposals=latest)]


def test_both_denominators_from_the_same_games():
    games = [_cost_game(True, [10, 20, 30], {P1: [10, 20, 30]}),       # agreed on the challenger's
             _cost_game(True, [20, 20, 20], {P1: [10, 20, 30]}),       # agreed on another's
             _cost_game(False, None, {P1: [10, 20, 30]}),
             _cost_game(False, None, {P1: [10, 20, 30]})]
    m = scenario_metrics(games)
    assert m["cooperation"] == pytest.approx(2 / 4)
    assert m["coordination"] == pytest.approx(1 / 2)          # ÷ agreed games (upstream, pre-EMNLP)
    assert m["coordination_emnlp"] == pytest.approx(1 / 4)    # ÷ all games (EMNLP) = 1/2 × 2/4
    assert m["coordination_emnlp"] == pytest.approx(m["coordination"] * m["cooperation"])


def test_no_agreement_is_0_under_emnlp_and_undefined_upstream():
    from mas_agents.graphs.magic.metrics import undefined_reason
    m = scenario_metrics([_cost_game(False, None, {P1: [10, 20, 30]}), _cost_game(False, None, {})])
    assert m["coordination_emnlp"] == 0.0
    assert m["coordination"] is None
    assert undefined_reason("coordination", m["counts"]) == "no agreed game (0 of 2 Cost Sharing games)"
    # no Cost Sharing game at all: neither is defined
    assert scenario_metrics([])["coordination_emnlp"] is None
    assert undefined_reason("coordination_emnlp", scenario_metrics([])["counts"]) == "no Cost Sharing game"
    # a result.json of another shape (the runs list reads any) has no reason to give
    for odd in (None, "x", [], {"games": []}, {"games": {"cost_sharing": "2"}}):
        assert undefined_reason("coordination", odd) == "no data"


# -------------------------------------------------------------------- runs and their reports


def _fake_play(cost_sharing: dict[int, str | None]):
    """A ``play`` for ``run_magic`` writing a finished game without a model: deduction games end
    with outcome code 0, PD and PG with the challenger winning; Cost Sharing setting ``i`` is agreed
    on the challenger's proposal (``"mine"``), on another's (``"other"``) or not at all (None)."""
    def play(d: Path, cfg) -> dict:
        d = Path(d)
        d.mkdir(parents=True, exist_ok=True)
        sc, side, sid = cfg.scenario, cfg.side, cfg.setting.id

        def ev(kind, **data):
            return make_event(phase=kind, actor="game", kind=kind, content=kind, data=data)
        if sc in ("chameleon", "undercover"):
            hidden = sc
            roles = {P1: "non_chameleon" if sc == "chameleon" else "civilian", P2: None, P3: hidden}
            roles[P2] = roles[P1]
            seats = [P3] if side == hidden else [P1, P2]
            outcome = {"code": 0, "accused": P3}
        elif sc == "cost_sharing":
            roles, seats = {p: "player" for p in PLAYERS}, [P1]
            how = cost_sharing[sid]
            latest = {P1: [40.0, 30.0, 30.0], P2: [30.0, 40.0, 30.0], P3: [30.0, 30.0, 40.0]}
            split = None if how is None else latest[P1 if how == "mine" else P2]
            outcome = {"agreed": how is not None, "rounds": 3, "split": split, "latest_proposals": latest}
        elif sc == "prisoners_dilemma":
            roles, seats = {p: "player" for p in PLAYERS}, [P1]
            outcome = {"totals": {P1: 5, P2: 3, P3: 3}, "winners": [P1]}
        else:
            roles, seats = {p: "player" for p in PLAYERS}, [P1]
            outcome = {"finals": {P1: 120.0, P2: 90.0, P3: 90.0}, "winners": [P1]}
        write_events(d / "events.jsonl", [
            ev("setup", scenario=sc, setting_id=sid, players=PLAYERS, challenger_seats=seats, roles=roles, side=side),
            ev("outcome", **outcome)])
        result = {"scenario": sc, "setting_id": sid, "side": side, "challenger_seats": seats, "outcome": outcome,
                  "llm": {"calls": 0, "input_tokens": 0, "output_tokens": 0}, "wall_time_s": 0.0,
                  "invalid_actions": 0, "model_actions": 0}
        (d / "result.json").write_text(json.dumps(result), encoding="utf-8")
        return result
    return play


def _table(report: str, start: str, end: str) -> dict[str, list[str]]:
    part = report.split(start, 1)[1].split(end, 1)[0]
    return {line.split("|")[1].strip(): [c.strip() for c in line.strip().strip("|").split("|")]
            for line in part.splitlines() if line.startswith("| ")}


def test_reproduce_sets_each_coordination_beside_the_table_with_its_denominator(real_data_root, tmp_path):
    """``--limit 3``: Cost Sharing settings 0, 1, 2 agreed on the challenger's proposal, not agreed,
    agreed on another's: Cooperation 2/3, Coordination 1/2 ÷ agreed games, 1/3 ÷ all games."""
    from mas_agents.eval.reproduce.magic import MagicRun, reproduce

    res = reproduce(MagicRun(data_root=real_data_root, out=tmp_path / "r", model="openai:x", limit=3,
                             conditions="vanilla,pgm_paper", play=_fake_play({0: "mine", 1: None, 2: "other"}),
                             concurrency=1))
    m = res["conditions"]["vanilla"]["metrics"]
    assert m["cooperation"] == pytest.approx(2 / 3)
    assert m["coordination"] == pytest.approx(1 / 2) and m["coordination_emnlp"] == pytest.approx(1 / 3)
    report = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    emnlp = _table(report, "### Beside the EMNLP 2024 Table 1", "### Beside the pre-EMNLP")
    pre = _table(report, "### Beside the pre-EMNLP Table 1", "## Table 4")
    col = 7   # model, win rate, judgement, reasoning, deception, self-awareness, cooperation, coordination
    assert emnlp["model"][col] == "Coordination ÷ all Cost Sharing games (EMNLP 2024)"
    assert pre["model"][col] == "Coordination ÷ agreed games (upstream code)"
    ours = "**ours: vanilla** (plain@openai:x)"
    # each n says what it counts, as the bench's page does (issue 57, E20)
    assert emnlp[ours][col].startswith("33.3 [") and emnlp[ours][col].endswith("(n=3 Cost Sharing games)")
    assert pre[ours][col].startswith("50.0 [") and pre[ours][col].endswith("(n=2 agreed games)")
    assert emnlp[ours][6].endswith("(n=3 Cost Sharing games)")          # cooperation
    assert emnlp["GPT-4 (paper)"][col] == "47.6" and pre["GPT-4 (paper, pre-EMNLP)"][col] == "100"
    # Table 4 (EMNLP) sets the EMNLP Coordination beside its columns
    t4 = _table(report, "## Table 4", "What our pgmpy model adds")
    row = t4["Coordination ÷ all Cost Sharing games (EMNLP 2024)"]
    assert row[1] == "33.3" and row[2] == "33.3" and row[3] == "not run"
    assert res["table4"]["coordination_emnlp"]["paired"]["pgm_paper-vanilla"]["n"] == 3   # 3 Cost Sharing settings
    assert res["table4"]["coordination"]["paired"]["pgm_paper-vanilla"]["n"] == 2         # 2 agreed
    assert "Coordination has two denominators, and the paper's two tables use different ones" in report
    # the parent's config.json records the setting files of every condition's games (issue 56 item 5)
    cfg = json.loads((tmp_path / "r" / "config.json").read_text())
    conds = [json.loads((tmp_path / "r" / c / "config.json").read_text()) for c in ("vanilla", "pgm_paper")]
    assert cfg["data_files"] == conds[0]["data_files"] == conds[1]["data_files"] and len(cfg["data_files"]) == 5 * 3


def test_a_cost_sharing_run_with_no_agreement_shows_0_not_a_dash(real_data_root, tmp_path):
    from mas_agents.graphs.magic.bench import MagicBenchConfig, run_magic

    res = run_magic(MagicBenchConfig(data_root=real_data_root, out=tmp_path / "b", scenarios=["cost_sharing"],
                                     challenger="plain", defender="plain", settings="0-1", model="openai:x",
                                     concurrency=1), play=_fake_play({0: None, 1: None}))
    assert res["metrics"]["coordination_emnlp"] == 0.0 and res["metrics"]["coordination"] is None
    report = (tmp_path / "b" / "report.md").read_text(encoding="utf-8")
    head = next(line for line in report.splitlines() if line.startswith("| model |"))
    ours = next(line for line in report.splitlines() if line.startswith("| **ours"))
    cells = dict(zip([c.strip() for c in head.strip("|").split("|")], [c.strip() for c in ours.strip("|").split("|")]))
    assert cells["Coordination ÷ all Cost Sharing games (EMNLP 2024)"].startswith("0.0 [")
    assert cells["Coordination ÷ agreed games (upstream code)"] == \
        "undefined: no agreed game (0 of 2 Cost Sharing games)"
    assert cells["Cooperation"].startswith("0.0 [")

    # and in the reproduce report, beside the EMNLP Table 1
    from mas_agents.eval.reproduce.magic import MagicRun, reproduce
    rr = reproduce(MagicRun(data_root=real_data_root, out=tmp_path / "r", model="openai:x", limit=1,
                            conditions="vanilla", play=_fake_play({0: None}), concurrency=1))
    assert rr["conditions"]["vanilla"]["metrics"]["coordination_emnlp"] == 0.0
    report = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    emnlp = _table(report, "### Beside the EMNLP 2024 Table 1", "### Beside the pre-EMNLP")
    pre = _table(report, "### Beside the pre-EMNLP Table 1", "## Table 4")
    ours = "**ours: vanilla** (plain@openai:x)"
    assert emnlp[ours][7].startswith("0.0 [") and emnlp[ours][7].endswith("(n=1 Cost Sharing game)")
    assert pre[ours][7] == "undefined: no agreed game (0 of 1 Cost Sharing games)"


def test_the_runs_list_names_each_coordination_with_its_denominator(tmp_path):
    from mas_agents.stats import Estimate
    from mas_agents.web import runs as rs
    mg = tmp_path / "magic"
    mg.mkdir()
    (mg / "result.json").write_text(json.dumps({
        "counts": {"games": {"cost_sharing": 2}, "agreed": 0, "coordinated": 0},
        "metrics": {"win_rate": 0.5, "cooperation": 0.0, "coordination": None, "coordination_emnlp": 0.0},
        "intervals": {"win_rate": Estimate(0.5, 0.25, 0.75, 2).to_dict(),
                      "cooperation": Estimate(0.0, 0.0, 0.658, 2).to_dict(),
                      "coordination": Estimate(None, None, None, 0).to_dict(),
                      "coordination_emnlp": Estimate(0.0, 0.0, 0.658, 2).to_dict()}}))
    head = rs.describe(tmp_path, mg, "magic-bench").headline
    assert "coordination ÷ agreed games (upstream code) undefined: no agreed game (0 of 2 Cost Sharing games)" in head
    assert "coordination ÷ all Cost Sharing games (EMNLP 2024) 0.0 % [0.0, 65.8] (n=2 Cost Sharing games)" in head


def test_the_reproduce_cells_and_headline_say_what_each_n_counts():
    """The reproduce tables printed ``(n=21)`` and ``(n=12)`` for the two Coordinations where the
    bench page says ``n=21 Cost Sharing games`` (issue 57, E20): each cell, the undefined one's
    "-" and the headline's win rate now carry the unit of n (magic_bench_report.N_UNITS)."""
    from mas_agents.eval.reproduce.magic_report import headline, ours_cell
    from mas_agents.stats import Estimate
    run = {"metrics": {"win_rate": 0.5, "cooperation": 12 / 21, "coordination": 0.5, "coordination_emnlp": 6 / 21,
                       "judgement": None},
           "intervals": {"win_rate": Estimate(0.5, 0.3, 0.7, 20).to_dict(),
                         "cooperation": Estimate(12 / 21, 0.365, 0.755, 21).to_dict(),
                         "coordination": Estimate(0.5, 0.254, 0.746, 12).to_dict(),
                         "coordination_emnlp": Estimate(6 / 21, 0.138, 0.5, 21).to_dict(),
                         "judgement": Estimate(None, None, None, 0).to_dict()}}
    assert ours_cell(run, "coordination") == "50.0 [25.4, 74.6] (n=12 agreed games)"
    assert ours_cell(run, "coordination_emnlp") == "28.6 [13.8, 50.0] (n=21 Cost Sharing games)"
    assert ours_cell(run, "cooperation") == "57.1 [36.5, 75.5] (n=21 Cost Sharing games)"
    assert ours_cell(run, "win_rate") == "50.0 [30.0, 70.0] (n=20 settings)"
    assert ours_cell(run, "judgement") == "- (n=0 votes)"
    head = headline({"conditions": {"vanilla": run}, "games_per_condition": {"vanilla": 143},
                     "full_games_per_condition": 143})
    assert head == "win rate: vanilla 50.0 % [30.0, 70.0] (n=20 settings); 143 of 143 games per condition"


def test_every_place_names_the_two_coordinations_in_the_same_words(tmp_path, monkeypatch):
    """Four label sets named the two Coordinations (the runs list, ``mas magic run``, the bench
    report, the reproduce tables), and an ablation, reusing the bench's headers, cited "paper rows"
    it does not have. One owner now, graphs/magic/metrics.COORDINATION_LABELS, in every place; the
    tables beside paper rows say in their own note which paper table uses which."""
    from mas_agents.graphs.magic.metrics import COORDINATION_LABELS
    from mas_agents.eval.reproduce.magic_report import header
    from mas_agents.eval.ablate.report import _header as ablation_header
    from mas_agents.graphs.magic.bench_report import HEADERS, radar_chart
    from mas_agents.stats import Estimate
    from mas_agents.web import runs as rs
    agreed, every = "Coordination ÷ agreed games (upstream code)", "Coordination ÷ all Cost Sharing games (EMNLP 2024)"
    assert COORDINATION_LABELS == {"coordination": agreed, "coordination_emnlp": every}
    # the bench report's and the ablation's headers; no "paper rows" in an ablation's
    assert (HEADERS["coordination"], HEADERS["coordination_emnlp"]) == (agreed, every)
    assert ablation_header("coordination") == agreed and "paper" not in ablation_header("coordination")
    # the reproduce tables, beside the pre-EMNLP and the EMNLP Table 1
    assert (header("coordination", "pre_emnlp"), header("coordination", "emnlp")) == (agreed, every)
    # the runs list's line (lower-case like its other names)
    mg = tmp_path / "magic"
    mg.mkdir()
    (mg / "result.json").write_text(json.dumps({
        "metrics": {"win_rate": 0.5, "coordination": 0.5, "coordination_emnlp": 0.25},
        "intervals": {"win_rate": Estimate(0.5, 0.25, 0.75, 2).to_dict()}}))
    head = rs.describe(tmp_path, mg, "magic-bench").headline
    assert ("coordination ÷ agreed games (upstream code) 50.0 %, "
            "coordination ÷ all Cost Sharing games (EMNLP 2024) 25.0 %") in head
    # the radar's axis
    import matplotlib.figure
    ticks = []
    save = matplotlib.figure.Figure.savefig
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda fig, *a, **k: (
        ticks.extend(t.get_text() for t in fig.axes[0].get_xticklabels()), save(fig, *a, **k)))
    radar_chart({"coordination": 0.5, "judgement": 0.5}, tmp_path / "radar.png")
    assert "coordination ÷ agreed games (upstream code)" in ticks
