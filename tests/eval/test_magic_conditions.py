"""`mas reproduce magic`'s three conditions (issue 47 item 5): vanilla, the paper's +PGM agent
(`plain+pgm_paper`) and our pgmpy +pgm (`plain+pgm`); `--conditions` subsets; Table 4's
like-for-like column and what pgmpy adds on top; MAgIC Table 3 against our scenario -> metric
mapping, rounds and settings, with its documented differences (§3 measures Cooperation in
cost-sharing games and Rationality in PD and Public Good; Table 3 marks both in all three).

Games are real (`play_magic_game`, every block) on fake models that answer every MAgIC action and
fill every analysis form of the paper's agent (tests/planners/test_pgm_paper.py `paper_rule`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mas_agents.eval.reproduce import magic as M
from mas_agents.eval.reproduce import magic_numbers
from mas_agents.eval.reproduce import magic_protocol
from mas_agents.eval.reproduce.common import load_table
from mas_agents.events import read_events
from tests.fakes import RuleChat
from tests.planners.test_pgm_paper import paper_rule

pytestmark = pytest.mark.realdata

#: Table 3's scenario names -> ours.
SCENARIOS = {"Chameleon": "chameleon", "Undercover": "undercover", "Cost Sharing": "cost_sharing",
             "Prisoner's Dilemma": "prisoners_dilemma", "Public Good": "public_good"}


@pytest.fixture(scope="module")
def two(real_data_root, tmp_path_factory):
    """`--limit 1 --conditions vanilla,pgm_paper`, then the same folder with every condition."""
    from mas_agents import llm

    played = []

    def play(d, config):
        from mas_agents.graphs.magic.session import play_magic_game
        played.append(Path(d).parent.parent.name)
        return play_magic_game(d, config)

    out = tmp_path_factory.mktemp("cond") / "magic"
    kw = dict(data_root=real_data_root, out=out, model="openai:chal", others="openai:def", limit=1, seed=0,
              play=play, concurrency=1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(llm, "make_chat_model", lambda spec="local", **k: RuleChat(rule=paper_rule(), seen=[]))
        mp.setattr(llm, "_SHARED_REMOTE", {})   # the pools' shared openai: models stay this test's own
        first = M.reproduce(M.MagicRun(**kw, conditions="vanilla,pgm_paper"))
        n_first = len(played)
        report_first = (out / "report.md").read_text(encoding="utf-8")
        full = M.reproduce(M.MagicRun(**kw))
    return {"out": out, "first": first, "full": full, "played_first": played[:n_first],
            "played_then": played[n_first:], "report_first": report_first}


def test_a_subset_of_conditions_plays_only_those_and_the_report_names_the_rest(two):
    r = two["first"]
    assert sorted(set(two["played_first"])) == ["pgm_paper", "vanilla"] and len(two["played_first"]) == 14
    assert r["left_out"] == ["pgm"] and r["partial"] is True
    assert set(r["conditions"]) == {"vanilla", "pgm_paper"} and set(r["games_per_condition"]) == {"vanilla", "pgm_paper"}
    rep = two["report_first"]
    assert "**Partial run: a subset of the conditions.** Left out: +pgm (pgmpy) (`plain+pgm`)" in rep
    assert "Conditions left out (`--conditions`): +pgm (pgmpy)." in rep
    # Table 4: the like-for-like column is there, the pgmpy comparisons say "not run"
    t4 = rep.split("## Table 4")[1].split("## Table 2")[0]
    assert ("| metric | ours vanilla | ours +PGM (the paper's agent) | ours +pgm (pgmpy) | "
            "ours: the paper's +PGM − vanilla (paired over settings) | paper Δ GPT-4-turbo |") in t4
    win = next(line for line in t4.splitlines() if line.startswith("| Win rate |"))
    cells = [c.strip() for c in win.strip("|").split("|")]
    assert cells[3] == "not run" and cells[4].startswith("0.0")       # +pgm not run; paired Δ of equal fakes
    adds = t4.split("What our pgmpy model adds")[1]
    assert "| Win rate | not run | not run |" in adds
    assert set(r["table4"]["win_rate"]["paired"]) == {"pgm_paper-vanilla"}


def test_adding_a_condition_reuses_the_games_played_and_plays_only_the_new_one(two):
    assert two["played_then"] == ["pgm"] * 7
    r = two["full"]
    assert r["left_out"] == [] and r["games_per_condition"] == {"vanilla": 7, "pgm_paper": 7, "pgm": 7}
    assert r["conditions"]["vanilla"]["reused_games"] == 7 and r["conditions"]["pgm_paper"]["reused_games"] == 7
    assert set(r["table4"]["win_rate"]["paired"]) == {"pgm_paper-vanilla", "pgm-pgm_paper", "pgm-vanilla"}
    rep = (two["out"] / "report.md").read_text(encoding="utf-8")
    assert "subset of the conditions" not in rep
    cfg = json.loads((two["out"] / "config.json").read_text())
    assert cfg["conditions"]["pgm_paper"] == {"challenger": "plain+pgm_paper@openai:chal", "defender": "plain@openai:def"}


def test_the_papers_agent_writes_its_analyses_and_the_report_counts_them(two):
    out, r = two["out"], two["full"]
    ana = r["pgm_paper_analyses"]
    # Chameleon: one analysis before the first clue and one per clue (planners/pgm_paper docstring)
    assert ana["prisoners_dilemma"] == {"games": 1, "analyses": 5, "empty": 0}
    assert all(a["analyses"] > 0 for a in ana.values())
    d = out / "pgm_paper" / "games" / "prisoners_dilemma-test_seat-s00"
    res = json.loads((d / "result.json").read_text())
    evs = [e for e in read_events(d / "events.jsonl") if e["kind"] == "pgm_analysis"]
    assert {e["actor"] for e in evs} == set(res["challenger_seats"])
    calls = {json.loads(x)["call_id"]: json.loads(x) for x in (d / "llm_calls.jsonl").read_text().splitlines()}
    assert all(calls[e["llm_call_ids"][0]]["purpose"] == "pgm_analysis" for e in evs)
    for v in (out / "vanilla" / "games").iterdir():
        assert not [e for e in read_events(v / "events.jsonl") if e["kind"] == "pgm_analysis"]
    rep = (out / "report.md").read_text(encoding="utf-8")
    assert "prisoners_dilemma: 5 analyses in 1 games" in rep
    assert r["headline"].startswith("win rate: vanilla ") and ", +PGM " in r["headline"] and ", +pgm " in r["headline"]


def test_bad_conditions_are_refused_in_one_line(tmp_path):
    for bad, msg in (("vanilla,pgmx", "--conditions: unknown 'pgmx'; choose from vanilla, pgm_paper, pgm"),
                     ("pgm,pgm", "--conditions: pgm given twice"), ("", "--conditions: give a comma-separated list")):
        with pytest.raises(ValueError, match=msg.replace("(", r"\(")):
            M.reproduce(M.MagicRun(data_root=tmp_path, out=tmp_path / "o", model="local", conditions=bad))
    assert magic_protocol.check_conditions(None) == ("vanilla", "pgm_paper", "pgm")
    assert magic_protocol.check_conditions(["pgm", "vanilla"]) == ("vanilla", "pgm")


# ----------------------------------------------------------------------------- MAgIC Table 3


def test_our_scenario_metric_mapping_rounds_and_settings_equal_table_3_but_the_documented_cell(two):
    """Every cell of Table 3 equals ours except Cooperation in PD and Public Good and Rationality in
    Cost Sharing (§3's definitions, Eq. 6 and Eq. 8);
    the mapping is also what graphs/magic/metrics.py measures on played games."""
    from mas_agents.graphs.magic.dataset import SETTING_COUNTS
    from mas_agents.graphs.magic import rules as R
    t3 = load_table("magic_table3_coverage")
    metrics = [k for k in magic_protocol.METRICS if k != "win_rate"]
    differs = []
    for row in t3.rows:
        sc = SCENARIOS[row["scenario"]]
        for k in metrics:
            if (row[k] == "1") != (k in magic_protocol.MEASURES[sc]):
                differs.append((sc, k))
    assert tuple(differs) == magic_protocol.TABLE3_DIFFERENCE == (("cost_sharing", "rationality"), ("prisoners_dilemma", "cooperation"),
                                                     ("public_good", "cooperation"))
    rounds = {"chameleon": R.CHAMELEON_CLUE_ROUNDS, "undercover": R.UNDERCOVER_CLUE_ROUNDS,
              "cost_sharing": R.COST_SHARING_MAX_ROUNDS, "prisoners_dilemma": R.PD_ROUNDS, "public_good": R.PG_ROUNDS}
    for row in t3.rows:
        sc = SCENARIOS[row["scenario"]]
        assert (int(row["rounds"]), int(row["competitions"])) == (rounds[sc], SETTING_COUNTS[sc]), sc
    # what the metrics code measures on each scenario's games (None = not measured there)
    names = sorted(p.name for p in (two["out"] / "vanilla" / "games").iterdir())
    per = magic_numbers.setting_metrics(two["out"] / "vanilla", names)
    assert {key.split("/")[0]: tuple(k for k in metrics if m[k] is not None) for key, m in per.items()} == magic_protocol.MEASURES
    # and the report says so among its protocol differences
    diffs = (two["out"] / "report.md").read_text(encoding="utf-8").split("## Protocol differences")[1]
    assert "Table 3 marks Collaboration (our Cooperation) in Cost Sharing, Prisoner's Dilemma and Public Good" in diffs
