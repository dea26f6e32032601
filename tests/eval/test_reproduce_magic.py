"""``mas reproduce magic`` (mas_agents.eval.reproduce.magic) on a fake model: the plan (143 games per condition,
7 with --limit 1), the seats' specs and models, temperature 0 at the model call, PGM engaged in
Cost Sharing, resumability, and the paper numbers in the report equal to the transcription."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from mas_agents.eval.reproduce.common import load_table
from mas_agents.eval.reproduce.magic import MagicRun, reproduce
from mas_agents.eval.reproduce.magic_protocol import GAMES_PER_CONDITION, plan_games, seat_specs, settings_for
from mas_agents.eval.reproduce.magic_report import report_md, row_mean, printed_average
from mas_agents.events import read_events
from tests.fakes import RuleChat, magic_player
from tests.planners.test_pgm_paper import paper_rule

#: MAgIC Table 1, EMNLP 2024 version (arXiv 2311.08562, ../shared/papers/magic-2311.08562.txt,
#: the table after §4.1), read off the text: model -> win rate, judgement, reasoning, deception,
#: self-awareness, cooperation, coordination, rationality (percent, as printed).
PAPER_TABLE1 = {
    "GPT o1": ("62.1", "90.0", "34.8", "65.0", "73.0", "85.7", "66.7", "69.5"),
    "GPT-4-turbo": ("57.2", "81.2", "37.0", "65.0", "55.0", "66.7", "33.4", "78.1"),
    "GPT-4": ("53.3", "83.8", "32.3", "75.0", "55.0", "47.6", "47.6", "69.0"),
    "GPT-3.5-turbo": ("39.3", "52.5", "24.5", "77.5", "25.9", "57.1", "9.50", "41.4"),
    "Claude 2": ("34.0", "45.0", "34.0", "25.0", "50.0", "71.4", "23.8", "24.3"),
    "PaLM 2": ("33.3", "43.8", "25.8", "32.5", "41.1", "42.9", "14.3", "38.1"),
    "Cohere": ("27.3", "42.5", "27.8", "37.5", "35.6", "71.4", "4.80", "18.1"),
    "Llama-2-70B": ("26.5", "45.0", "37.0", "40.0", "53.2", "42.9", "4.80", "5.20"),
}
#: The pre-EMNLP Table 1 ("Ability Measurement of LLMs", arXiv 2311.08562 v1/v2, the authors'
#: imgs/leaderboard.png), transcribed by hand, the same columns.
PRE_EMNLP_TABLE1 = {
    "GPT-4+PGM": ("63.5", "87.5", "37.8", "85.6", "86.7", "61.9", "92.3", "76.2"),
    "GPT-4-turbo": ("56.5", "77.5", "28.7", "67.5", "60.0", "66.7", "50.0", "78.1"),
    "GPT-4": ("49.3", "78.8", "36.7", "62.1", "86.7", "47.6", "100", "69.0"),
    "GPT-3.5-turbo+PGM": ("49.1", "65.0", "33.5", "52.0", "60.6", "71.4", "46.7", "59.5"),
    "PaLM 2": ("36.3", "45.0", "32.8", "45.0", "74.0", "42.9", "33.3", "36.7"),
    "GPT-3.5-turbo": ("35.4", "46.3", "26.7", "67.5", "54.0", "57.1", "16.7", "41.4"),
    "Llama-2-70B+PGM": ("30.7", "53.8", "29.3", "51.4", "67.0", "52.4", "27.2", "28.1"),
    "Claude 2": ("29.3", "41.3", "34.8", "17.5", "80.7", "33.3", "22.9", "71.4"),
    "Cohere": ("21.3", "35.0", "21.7", "25.0", "60.3", "71.4", "6.67", "18.1"),
    "Llama-2-70B": ("18.1", "41.3", "26.8", "28.8", "74.0", "42.9", "11.1", "4.80"),
}
METRICS = ("win_rate", "judgement", "reasoning", "deception", "self_awareness", "cooperation", "coordination",
           "rationality")
#: Table 4's printed "Average improvement" (Deception, Self-awareness) and the mean of its 7
#: (X+PGM - X) row differences, computed by hand from the printed rows (App. A.3).
PAPER_TABLE4_AVERAGE = {"deception": 6.07, "self_awareness": 0.66}
TABLE4_ROW_MEAN = {"deception": 72.5 / 7, "self_awareness": 8.6 / 7}

#: The challenger's sides per scenario and the settings of each (MAgIC §3.2; the released sets).
FULL = {("chameleon", "chameleon"): 20, ("chameleon", "non_chameleon"): 20, ("undercover", "undercover"): 20,
        ("undercover", "civilian"): 20, ("cost_sharing", "test_seat"): 21, ("prisoners_dilemma", "test_seat"): 21,
        ("public_good", "test_seat"): 21}


# ------------------------------------------------------------------------------------ the plan


def test_the_full_plan_is_143_games_per_condition_each_side_of_every_setting(real_data_root):
    games = plan_games(real_data_root)
    assert len(games) == 3 * 143 == 3 * GAMES_PER_CONDITION
    for cond in ("vanilla", "pgm_paper", "pgm"):
        mine = [g for g in games if g[0] == cond]
        assert Counter((sc, side) for _, sc, side, _ in mine) == FULL
        # every setting id once per side: 0..19 in the deduction games, 0..20 elsewhere
        for (sc, side), n in FULL.items():
            assert sorted(i for _, s, d, i in mine if (s, d) == (sc, side)) == list(range(n))
    # every condition plays the very same games
    assert [g[1:] for g in games if g[0] == "vanilla"] == [g[1:] for g in games if g[0] == "pgm"] \
        == [g[1:] for g in games if g[0] == "pgm_paper"]


def test_limit_takes_the_first_settings_of_every_scenario_with_the_same_sides(real_data_root):
    one = plan_games(real_data_root, limit=1)
    assert len(one) == 21
    assert Counter((c, sc, side) for c, sc, side, _ in one) == {(c, sc, side): 1 for c in ("vanilla", "pgm_paper", "pgm")
                                                                 for sc, side in FULL}
    assert {i for *_, i in one} == {0}
    twenty = plan_games(real_data_root, limit=20)
    assert Counter((sc, side) for c, sc, side, _ in twenty if c == "pgm") == {k: 20 for k in FULL}
    assert settings_for(None) is None and settings_for(21) is None and settings_for(99) is None
    assert settings_for(1) == "0-0" and settings_for(3) == "0-2"
    with pytest.raises(ValueError, match="--limit"):
        settings_for(0)


def test_seat_specs_put_the_model_on_the_challenger_and_others_everywhere_else():
    assert seat_specs("openai:a", "openai:gpt-4") == {"vanilla": ("plain@openai:a", "plain@openai:gpt-4"),
                                                      "pgm_paper": ("plain+pgm_paper@openai:a", "plain@openai:gpt-4"),
                                                      "pgm": ("plain+pgm@openai:a", "plain@openai:gpt-4")}
    assert seat_specs("local", None) == {"vanilla": ("plain@local", "plain@local"),
                                         "pgm_paper": ("plain+pgm_paper@local", "plain@local"),
                                         "pgm": ("plain+pgm@local", "plain@local")}
    with pytest.raises(ValueError, match="--others"):
        seat_specs("local", "plain@local")
    with pytest.raises(ValueError, match="--model"):
        seat_specs(" ", None)
    with pytest.raises(ValueError, match="--model: magic takes one model"):
        seat_specs("local,local", None)


# ------------------------------------------------------------------------ a --limit 1 run


#: (model spec, temperature in force) of every call a :class:`TempChat` answered.
CALLS: list[tuple[str, float]] = []


class TempChat(RuleChat):
    """A :class:`RuleChat` that remembers the temperature it was built with and, at every call,
    the temperature in force (its own, or one passed to the call)."""

    temperature: float = 0.7
    spec: str = ""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        CALLS.append((self.spec, kwargs.get("temperature", self.temperature)))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


@pytest.fixture(scope="module")
def limit1(real_data_root, tmp_path_factory):
    """One ``--limit 1`` run with ``--model openai:chal --others openai:def`` on fake models (every
    model the run builds is recorded with its temperature), then a rerun of the same command."""
    from mas_agents import llm
    from mas_agents.graphs.magic.session import play_magic_game

    built, played, lines = [], [], []
    CALLS.clear()

    def make(spec="local", **kw):
        built.append((spec, kw.get("temperature")))
        return TempChat(rule=paper_rule(), seen=[], spec=spec, **(
            {"temperature": kw["temperature"]} if "temperature" in kw else {}))

    def play(d, config):
        played.append((Path(d).parent.parent.name, config.scenario, config.side, config.setting.id))
        return play_magic_game(d, config)

    out = tmp_path_factory.mktemp("repro") / "magic"
    kw = dict(data_root=real_data_root, out=out, model="openai:chal", others="openai:def", limit=1, seed=0,
              tick=lines.append, play=play, concurrency=1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(llm, "make_chat_model", make)
        first = reproduce(MagicRun(**kw))
        n_played = len(played)
        second = reproduce(MagicRun(**kw))
    return {"out": out, "kw": kw, "first": first, "second": second, "built": built, "calls": list(CALLS),
            "played": played[:n_played], "replayed": played[n_played:], "lines": lines}


def test_limit1_plays_7_games_per_condition_one_per_side(limit1):
    played = limit1["played"]
    assert len(played) == 21
    assert Counter((c, sc, side) for c, sc, side, _ in played) == {(c, sc, side): 1 for c in ("vanilla", "pgm_paper", "pgm")
                                                                    for sc, side in FULL}
    assert {i for *_, i in played} == {0}
    r = limit1["first"]
    assert r["games_per_condition"] == {"vanilla": 7, "pgm_paper": 7, "pgm": 7} and r["partial"] is True
    assert r["cost"]["games"] == 21
    # one progress line per game, counting to 21
    assert len(limit1["lines"][:21]) == 21 and limit1["lines"][20].startswith("magic: cell 21/21 done")
    report = (limit1["out"] / "report.md").read_text(encoding="utf-8")
    assert "**Partial run** (`--limit 1`): 7 of the protocol's 143 games per condition" in report
    for f in ("report.md", "result.json", "config.json", "radar_vanilla.png", "radar_pgm_paper.png", "radar_pgm.png"):
        assert (limit1["out"] / f).stat().st_size > 0
    assert json.loads((limit1["out"] / "config.json").read_text())["kind"] == "reproduce"
    assert r["headline"].startswith("win rate: vanilla ") and ", +PGM " in r["headline"] and ", +pgm " in r["headline"]
    assert r["headline"].endswith("; 7 of 143 games per condition (partial)")


def test_challenger_seats_use_model_and_every_other_seat_others(limit1):
    out = limit1["out"]
    n_calls = {"openai:chal": 0, "openai:def": 0}
    for cond, spec in (("vanilla", "plain"), ("pgm_paper", "plain+pgm_paper"), ("pgm", "plain+pgm")):
        games = sorted((out / cond / "games").iterdir())
        assert len(games) == 7
        for d in games:
            cfg = json.loads((d / "config.json").read_text())
            res = json.loads((d / "result.json").read_text())
            mine = set(res["challenger_seats"])
            assert mine and cfg["temperature"] == 0.0
            assert cfg["seats"] == {p: (f"{spec}@openai:chal" if p in mine else "plain@openai:def")
                                    for p in ("Player 1", "Player 2", "Player 3")}
            # every recorded call of a seat went to that seat's model
            for line in (d / "llm_calls.jsonl").read_text().splitlines():
                call = json.loads(line)
                want = "openai:chal" if call["actor"] in mine else "openai:def"
                assert call["model"] == want, (d.name, call["actor"], call["model"])
                n_calls[want] += 1
    assert n_calls["openai:chal"] > 0 and n_calls["openai:def"] > 0


def test_temperature_0_reaches_every_model_and_every_call(limit1):
    built, calls = limit1["built"], limit1["calls"]
    assert {s for s, _ in built} == {"openai:chal", "openai:def"}
    assert {t for _, t in built} == {0.0}
    assert len(calls) == limit1["first"]["cost"]["calls"] > 0
    assert {t for _, t in calls} == {0.0}


def test_pgm_engages_in_cost_sharing_and_vanilla_has_no_beliefs(limit1):
    out = limit1["out"]
    ev = read_events(out / "pgm" / "games" / "cost_sharing-test_seat-s00" / "events.jsonl")
    seat = next(e for e in ev if e["kind"] == "setup")["data"]["challenger_seats"][0]
    tables = [e for e in ev if e["kind"] == "belief_table" and e["actor"] == seat]
    assert tables and all(e["data"]["model"] == "shares" for e in tables)
    assert any(e["data"].get("shown") for e in tables)      # the implied split went into a prompt
    for d in (out / "vanilla" / "games").iterdir():
        assert not [e for e in read_events(d / "events.jsonl") if e["kind"] == "belief_table"]
    eng = limit1["first"]["pgm_engagement"]
    assert eng["cost_sharing"]["games"] == eng["cost_sharing"]["with_tables"] == 1
    assert all(e["with_tables"] == e["games"] for e in eng.values())
    assert "cost_sharing: 1 of 1 games" in (out / "report.md").read_text(encoding="utf-8")


def test_table4_is_a_paired_difference_over_settings(limit1):
    r = limit1["first"]
    t4 = r["table4"]
    # the fake plays the same in every condition: every paired difference is 0; n counts the settings
    # where both conditions measured the metric (the 5 settings for win rate; one Cost Sharing setting)
    assert set(t4["win_rate"]["paired"]) == {"pgm_paper-vanilla", "pgm-pgm_paper", "pgm-vanilla"}
    for pair in t4["win_rate"]["paired"]:
        assert t4["win_rate"]["paired"][pair]["mean"] == 0.0 and t4["win_rate"]["paired"][pair]["n"] == 5
        assert t4["judgement"]["paired"][pair]["n"] == 2 and t4["cooperation"]["paired"][pair]["n"] == 1
        assert t4["win_rate"]["paired"][pair]["method"] == "paired bootstrap"
    assert t4["deception"]["vanilla"] == r["conditions"]["vanilla"]["metrics"]["deception"]


def test_a_rerun_reuses_every_game_and_other_settings_are_refused(limit1):
    assert limit1["replayed"] == []
    a, b = limit1["first"], limit1["second"]
    assert all(b["conditions"][c]["reused_games"] == 7 for c in ("vanilla", "pgm_paper", "pgm"))
    assert b["table4"] == a["table4"] and b["table2"] == a["table2"]
    with pytest.raises(ValueError, match="field 'others'"):
        reproduce(MagicRun(**{**limit1["kw"], "others": "openai:gpt-4"}))
    with pytest.raises(ValueError, match="one model"):
        reproduce(MagicRun(**{**limit1["kw"], "model": ["openai:a", "openai:b"]}))


# ------------------------------------------------------------------------------ paper numbers


def test_the_paper_tables_are_the_transcription():
    t1 = load_table("magic_table1")
    assert "Table 1" in t1.source and "2311.08562" in t1.source and "EMNLP 2024" in t1.source
    assert {r["model"]: tuple(r[k] for k in METRICS) for r in t1.rows} == PAPER_TABLE1
    pre = load_table("magic_table1_pre_emnlp")
    assert "PRE-EMNLP" in pre.source
    assert {r["model"]: tuple(r[k] for k in METRICS) for r in pre.rows} == PRE_EMNLP_TABLE1
    t4 = load_table("magic_table4")
    assert "Table 4" in t4.source
    assert {k: printed_average(t4, k) for k in PAPER_TABLE4_AVERAGE} == PAPER_TABLE4_AVERAGE
    assert {k: round(row_mean(t4, k), 6) for k in TABLE4_ROW_MEAN} == {k: round(v, 6) for k, v in TABLE4_ROW_MEAN.items()}
    t2 = load_table("magic_table2")
    assert "Table 2" in t2.source and len(t2.rows) == 6


def test_the_report_prints_the_paper_numbers_as_transcribed(limit1):
    report = (limit1["out"] / "report.md").read_text(encoding="utf-8")
    for model, vals in PAPER_TABLE1.items():
        assert f"| {model} (paper) | " + " | ".join(vals) + " |" in report
    for model, vals in PRE_EMNLP_TABLE1.items():
        assert f"| {model} (paper, pre-EMNLP) | " + " | ".join(vals) + " |" in report
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.strip().strip("|").split("|")]
            for line in report.split("## Table 4")[1].split("What our pgmpy model adds")[0].splitlines()
            if line.startswith("| ")}
    # metric, ours x3 conditions, ours like for like, the 7 paper improvements (GPT-4-turbo first), the
    # printed average, the rows' mean
    assert rows["metric"][5] == "paper Δ GPT-4-turbo" and rows["metric"][11] == "paper Δ Llama-2-70B"
    assert rows["Deception"][5] == "-2.5" and rows["Win rate"][6] == "+5.2"     # 62.5-65.0; 63.5-58.3
    assert rows["Deception"][12] == "6.07" and rows["Self-awareness"][12] == "0.66"
    coordination = rows["Coordination ÷ all Cost Sharing games (EMNLP 2024)"]   # Table 4's denominator
    assert rows["Rationality"][12] == "13.0" and coordination[12] == "12.2"   # as printed, not 13
    assert rows["Deception"][13] == "10.36" and rows["Self-awareness"][13] == "1.23"
    assert "Deception (printed 6.07, the mean of its 7 improvements 10.36)" in report
    assert "| GPT-4+P (paper) | 61.9 | 30.3 | 76.2 | 10.6 | 85.7 | 144.1 |" in report


@pytest.mark.realdata
def test_table1_equals_the_datasets_hand_transcription(real_data_root):
    import csv
    with (real_data_root / "magic" / "results" / "paper_table1_leaderboard.csv").open(encoding="utf-8") as fh:
        theirs = {r["model"]: tuple(r[k] for k in METRICS) for r in csv.DictReader(fh)}
    assert theirs == PRE_EMNLP_TABLE1


def test_the_printed_average_that_does_not_follow_from_the_rows_is_said(tmp_path, limit1):
    """With rows in the table, the mean is computed from them and a printed average that differs is
    named (synthetic test rows, not the paper's)."""
    papers = tmp_path / "papers"
    papers.mkdir()
    for name in ("magic_table1", "magic_table1_pre_emnlp", "magic_table2"):
        (papers / f"{name}.csv").write_text((Path(__file__).parents[2] / "eval" / "reproduce" / "papers" /
                                             f"{name}.csv").read_text(encoding="utf-8"), encoding="utf-8")
    (papers / "magic_table4.csv").write_text(
        "# source: test table\nmodel,deception,self_awareness\nA+PGM,20,1\nA,10,0\nB + PGM,11,2\nB,0,0\n"
        "Average,6.07,1.5\n", encoding="utf-8")
    report = report_md(limit1["first"], papers_dir=papers)
    assert "Deception (printed 6.07, the mean of its 2 improvements 10.50)" in report
    assert "Self-awareness" not in report.split("does not follow from its own rows for")[1].split("\n")[0]
