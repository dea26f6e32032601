"""`mas reproduce player-star` (eval/reproduce/player_star.py): the PLAYER* protocol on a fake model,
the two aggregations over scripts (App. B.3 pooled, plain mean) against hand-computed examples and
the authors' released logs, the claims, the protocol differences and the paper numbers.

The protocol test plays the real WellPlay data (``realdata``): with ``--limit 1`` the first script
of each language in the cheapest-first order is Deadly Fountain / 致命喷泉 (script 134: 4
characters, 36 questions = 3 objective + 21 reasoning + 12 relation; its murderer is Zhang Jie /
the zh counterpart). Games are real (``play_script``, every planner block); the evaluation is the
real ``run_wellplay_eval`` with a counting answerer (no retrieval), so the file stays fast.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from mas_agents.eval.reproduce import player_star as ps
from mas_agents.eval.reproduce import player_star_protocol
from mas_agents.eval.reproduce import player_star_report
from mas_agents.eval.reproduce import player_star_numbers
from mas_agents.eval.reproduce.common import load_table
from tests.fakes import RuleChat, star_rule


def fake_rule():
    """star_rule (PLAYER* readings, choices, the polite player) plus the baselines' private
    thinking prompts (ThinkThrice timeline/relevance, O-CoT objectives, Werewolf reflection)."""
    base = star_rule()

    def rule(messages):
        last = str(messages[-1].content)
        if "write your own timeline" in last:
            return "9pm - I was at home."
        if "Copy out the timeline lines" in last:
            return "NONE"
        if "One of your objectives in this game:" in last:
            return "I still need to learn where everyone was."
        if "reflect privately" in last:
            return "They want to know where I was; I can say it."
        return base(messages)
    return rule


class CountingAgent:
    """Answers every evaluation question with `a` and counts the questions (no model call)."""

    def __init__(self, name, log, key):
        self.name, self.log, self.key = name, log, key

    def act(self, req, phase=None):
        from mas_agents.planners.base import Action
        self.log[self.key] += 1
        return Action(kind=req.kind, actor=self.name, value=frozenset("a"), raw="Answer: a", valid=True)


@pytest.fixture(scope="module")
def run(tmp_path_factory, real_data_root):
    root = real_data_root
    from mas_agents.graphs.mmg.session import play_script
    from mas_agents.eval.wellplay.run import WellPlayEvalConfig, run_wellplay_eval
    out = tmp_path_factory.mktemp("ps")
    model = RuleChat(rule=fake_rule())
    plays, evals, asked, ticks = [], [], Counter(), []

    def play(cfg, **kw):
        plays.append({"script": cfg.script.id, "lang": cfg.lang,
                      **{k: getattr(cfg, k) for k in ("agent", "rounds", "questions", "seed")}, "model": cfg.model})
        return play_script(cfg, **kw)

    def evaluate(cfg):
        # the fields run_cell set (script only for an evaluation without a game)
        evals.append({k: getattr(cfg, k) for k in ("method", "runs", "seed", "lang", "script")
                      if k != "script" or cfg.script is not None})
        method = cfg.method

        def make_agent(sc, name, m, events, model_, seed, **_):
            return CountingAgent(name, asked, (cfg.lang, method if m != "session" else Path(cfg.run).parts[-4], seed)), None
        return run_wellplay_eval(cfg, make_agent=make_agent)

    res = ps.reproduce(ps.PlayerStarRun(data_root=root, out=out, model=model, limit=1, tick=ticks.append, play=play,
                                        evaluate=evaluate))
    return {"root": root, "out": out, "res": res, "plays": plays, "evals": evals, "asked": asked, "ticks": ticks,
            "model": model}


@pytest.mark.realdata
def test_every_game_method_plays_one_game_per_script_and_language_with_the_papers_settings(run):
    plays = run["plays"]
    # 4 game methods x 1 script x 2 languages; PP, OP and the chance lines play none
    assert sorted((p["lang"], p["agent"]) for p in plays) == sorted(
        (lang, m) for lang in ("en", "zh") for m in ("player_star", "werewolf", "ocot", "thinkthrice"))
    assert {p["script"] for p in plays} == {"134"}                      # Deadly Fountain / 致命喷泉, first with --limit 1
    assert {(p["rounds"], p["questions"], p["seed"]) for p in plays} == {(3, 1, 0)}
    assert all(p["model"] is run["model"] for p in plays)               # every seat one model


@pytest.mark.realdata
def test_games_ask_one_question_per_agent_per_round_and_the_murderer_plays_plain(run):
    from mas_agents.eval.compare.run import cell_dir
    for lang in ("en", "zh"):
        for m in ("player_star", "werewolf", "ocot", "thinkthrice"):
            game = cell_dir(run["out"] / lang, m, "134", 0) / "game"
            r = json.loads((game / "result.json").read_text())
            murderers = [n for n, role in r["roles"].items() if role == "murderer"]
            assert len(murderers) == 1 and len(r["agents"]) == 4
            assert {n: s for n, s in r["agents"].items()} == {n: ("plain" if n in murderers else m) for n in r["agents"]}
            events = [json.loads(line) for line in (game / "events.jsonl").read_text().splitlines() if line.strip()]
            asks = Counter((e["actor"], e["round"]) for e in events if e["kind"] == "ask")
            # what was actually played: 3 rounds, each of the 4 characters asked exactly one question
            assert asks == Counter({(n, rnd): 1 for n in r["agents"] for rnd in (1, 2, 3)})


@pytest.mark.realdata
def test_three_evaluation_runs_of_every_question_for_every_method(run):
    evals = run["evals"]
    assert {e["runs"] for e in evals} == {3} and {e["seed"] for e in evals} == {0}
    per_lang = Counter((e["lang"], e["method"]) for e in evals)
    # session after each of the 4 games; pp, op and the two chance lines on their own
    assert per_lang == Counter({(lang, m): n for lang in ("en", "zh")
                                for m, n in (("session", 4), ("pp", 1), ("op", 1), ("always_a", 1), ("random", 1))})
    # 36 questions (3 + 21 + 12) asked in each of seeds 0, 1, 2, for each model method and language
    asked = run["asked"]
    for lang in ("en", "zh"):
        for m in ("player_star", "werewolf", "ocot", "thinkthrice", "pp", "op"):
            assert [asked[(lang, m, s)] for s in (0, 1, 2)] == [36, 36, 36], (lang, m)
    res = run["res"]
    for lang in ("en", "zh"):
        summ = res["langs"][lang]["methods"]
        assert set(summ) == {"player_star", "werewolf", "ocot", "thinkthrice", "pp", "op", "always_a", "random"}
        assert {s["pooled"]["runs"] for s in summ.values()} == {3} == {s["plain_mean"]["runs"] for s in summ.values()}
        assert {s["interval"]["n"] for s in summ.values()} == {36}
        # every model method answered `a` like always_a on the same shuffles: the same score
        ws = {m: s["pooled"]["weighted_score"]["mean"] for m, s in summ.items()}
        assert all(ws[m] == pytest.approx(ws["always_a"]) for m in player_star_protocol.METHODS)
    assert len(run["ticks"]) == 1 + 2 * 8 and run["ticks"][-1].startswith("player-star: cell 16/16 done (zh / random /")
    # the runs list's one line: PLAYER* beside always-a per language (equal here: the fake answers a)
    w = {lang: f"{100 * res['langs'][lang]['methods']['always_a']['pooled']['weighted_score']['mean']:.1f} %"
         for lang in ("en", "zh")}
    assert res["headline"] == (f"PLAYER* weighted (App. B.3 pooled): en {w['en']} (always-a {w['en']}), zh {w['zh']} (always-a {w['zh']}); "
                               "1 of 12 scripts per language (partial)")


@pytest.mark.realdata
def test_cost_table_counts_gameplay_by_the_methods_seats(run):
    res = run["res"]
    for lang in ("en", "zh"):
        summ = res["langs"][lang]["methods"]
        for m in ("player_star", "werewolf", "ocot", "thinkthrice"):
            c = summ[m]["cost"]
            assert 0 < c["seat_calls"] < c["game_calls"]               # the murderer's plain seat is not the method's
        assert summ["pp"]["cost"]["game_calls"] == summ["op"]["cost"]["game_calls"] == 0
    md = (run["out"] / "report.md").read_text()
    assert "### Cost (en, PLAYER* Table A5 form; means per script)" in md and "### Cost (zh," in md


@pytest.mark.realdata
def test_report_paper_values_equal_the_csvs(run):
    md = (run["out"] / "report.md").read_text()
    # Table A6 (PLAYER* v2, App. C.4: Llama2 70b/13b/7b, gemma 7b on "Solitary Boat Firefly")
    for model, v in (("Llama2 70b", "0.312"), ("Llama2 13b", "0.281"), ("Llama2 7b", "0.267"), ("gemma 7b", "0.273")):
        assert f"| {model} | {v} |" in md
    # Table 1 against the data: the paper's Sum row (PLAYER* v2, Table 1) beside the data's totals
    assert "| **total (data, 12 scripts)** | 68 | 117 | 800 | 565 | 1482 | 18 |  |" in md
    assert "| **total (paper, 12 scripts)** | 68 | 117 | 800 | 565 | 1482 | - |  |" in md
    # the authors' released 2024 logs (App. B.3 weighting, player_star_released_logs.csv) beside PLAYER* en/zh
    assert re.search(r"\| PLAYER\* \|.*\| not published \| 44\.11 ± 1\.46 \(4 scripts\) \|", md)
    assert re.search(r"\| PLAYER\* \|.*\| not published \| 46\.07 ± 1\.15 \(12 scripts\) \|", md)
    assert "Partial run** (`--limit 1`): 1 of the protocol's 12 scripts" in md
    assert "the murderer plays `plain` whatever the method" in md
    saved = json.loads((run["out"] / "result.json").read_text())
    assert saved["kind"] == "reproduce" and saved["paper"] == "player-star"
    assert json.loads((run["out"] / "config.json").read_text())["kind"] == "reproduce"
    assert all((run["out"] / f"scores_{lang}.png").stat().st_size > 1000 for lang in ("en", "zh"))   # pooled charts


@pytest.mark.realdata
def test_rerun_reuses_every_cell_and_other_settings_are_refused(run):
    ticks = []
    ps.reproduce(ps.PlayerStarRun(data_root=run["root"], out=run["out"], model=run["model"], limit=1, tick=ticks.append,
                                  play=lambda *a, **k: pytest.fail("a finished game was played again"),
                                  evaluate=lambda *a, **k: pytest.fail("a finished evaluation was run again")))
    assert len(ticks) == 17 and all("? model calls left" in t for t in ticks[1:])
    # 2 x 4 games of 4 characters: 8 x 4 x (2 + 2 x 3) = 256 plain calls; 2 x 36 questions x 3 runs x 6 methods = 1296
    assert ticks[0].endswith("8 games (at least 256 model calls, more with each method's planning calls) and 1296 evaluation calls (3 runs x 6 methods x the questions)")
    with pytest.raises(ValueError, match=r"config.json: field 'limit' is 1 but this run asks for 2"):
        ps.reproduce(ps.PlayerStarRun(data_root=run["root"], out=run["out"], model=run["model"], limit=2))


# ------------------------------------------------------------------ no data needed

@pytest.mark.parametrize("kw, msg", [
    (dict(model=["local", "openai:x"]), "--model: player-star plays every seat with one model"),
    (dict(model="local", others="openai:gpt-4"), "--others"),
    (dict(model="local", seed=3), "--seed"),
    (dict(model="local", limit=0), "--limit must be at least 1"),
])
def test_bad_options_are_refused_before_anything_runs(tmp_path, kw, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        ps.reproduce(ps.PlayerStarRun.from_options(data_root=tmp_path, out=tmp_path / "out", **kw))
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_plain_mean_aggregate_against_a_hand_computed_example():
    # two scripts, three runs. Run means over scripts: weighted (0.5+0.3)/2=0.4, (0.6+0.4)/2=0.5,
    # (0.7+0.5)/2=0.6 -> mean 0.5, sample std sqrt(((-.1)^2+0+.1^2)/2) = 0.1.
    # objective: (1+0)/2=.5, (1+1)/2=1, (0+0)/2=0 -> mean .5, std sqrt((0+.25+.25)/2)=0.5.
    # relation: script 2 has none (None) -> run means are script 1's: .2, .4, .6 -> mean .4, std .2
    s1 = [{"weighted_score": 0.5, "accuracy": {"objective": 1.0, "reasoning": 0.5, "relation": 0.2}},
          {"weighted_score": 0.6, "accuracy": {"objective": 1.0, "reasoning": 0.5, "relation": 0.4}},
          {"weighted_score": 0.7, "accuracy": {"objective": 0.0, "reasoning": 0.5, "relation": 0.6}}]
    s2 = [{"weighted_score": 0.3, "accuracy": {"objective": 0.0, "reasoning": 0.25, "relation": None}},
          {"weighted_score": 0.4, "accuracy": {"objective": 1.0, "reasoning": 0.25, "relation": None}},
          {"weighted_score": 0.5, "accuracy": {"objective": 0.0, "reasoning": 0.25, "relation": None}}]
    a = player_star_numbers.plain_mean_aggregate([s1, s2])
    assert a["weighted_score"]["mean"] == pytest.approx(0.5) and a["weighted_score"]["std"] == pytest.approx(0.1)
    assert a["weighted_score"]["runs"] == pytest.approx([0.4, 0.5, 0.6])
    assert a["objective"]["mean"] == pytest.approx(0.5) and a["objective"]["std"] == pytest.approx(0.5)
    assert a["reasoning"]["mean"] == pytest.approx(0.375) and a["reasoning"]["std"] == pytest.approx(0.0)
    assert a["relation"]["mean"] == pytest.approx(0.4) and a["relation"]["std"] == pytest.approx(0.2)
    assert (a["runs"], a["scripts"], a["aggregation"]) == (3, 2, "plain_mean")
    one = player_star_numbers.plain_mean_aggregate([s1[:1]])
    assert one["weighted_score"] == {"mean": 0.5, "std": None, "runs": [0.5]}     # one run: no std, not ± 0
    with pytest.raises(ValueError, match="same"):
        player_star_numbers.plain_mean_aggregate([s1, s2[:2]])
    # the weights (PLAYER* §3): 2 objective half right, 1 reasoning right, 5 relation wrong:
    # (10*2*.5 + 5*1*1 + 0) / (10*2 + 5*1 + 2*5) = 15 / 35
    assert player_star_numbers.weighted({"objective": 0.5, "reasoning": 1.0, "relation": 0.0},
                       {"objective": 2, "reasoning": 1, "relation": 5}) == pytest.approx(15 / 35)


def _run(obj, rea, rel):
    """One evaluation run of one script as result.json holds it: ``(right, questions)`` per type."""
    counts = {"objective": obj, "reasoning": rea, "relation": rel}
    return {"counts": {c: {"correct": r, "n": n} for c, (r, n) in counts.items()}}


def test_pooled_aggregate_against_a_hand_computed_example():
    """PLAYER* App. B.3: per run, the scripts pooled (a type: Σ right / Σ questions; weighted:
    Σ points won / Σ points possible), then mean ± std (n − 1) over the runs. Script 1 is small
    (1 objective, 2 reasoning: 20 points), script 2 big (3 objective, 5 relation: 40 points)."""
    small = [_run((1, 1), (1, 2), (0, 0)), _run((0, 1), (2, 2), (0, 0)), _run((1, 1), (0, 2), (0, 0))]
    big = [_run((0, 3), (0, 0), (5, 5)), _run((3, 3), (0, 0), (0, 5)), _run((1, 3), (0, 0), (5, 5))]
    a = player_star_numbers.pooled_aggregate([small, big])
    # run 0: (10·1 + 5·1 + 10·0 + 2·5) / (10 + 10 + 30 + 10) = 25/60; run 1: (0 + 10 + 30 + 0) / 60;
    # run 2: (10 + 0 + 10 + 10) / 60
    assert a["weighted_score"]["runs"] == pytest.approx([25 / 60, 40 / 60, 30 / 60])
    assert a["weighted_score"]["mean"] == pytest.approx(95 / 180)
    assert a["weighted_score"]["std"] == pytest.approx(0.127294, abs=1e-6)
    assert a["objective"]["runs"] == pytest.approx([1 / 4, 3 / 4, 2 / 4])        # (1+0)/4, (0+3)/4, (1+1)/4
    assert a["reasoning"]["runs"] == pytest.approx([1 / 2, 1, 0])                 # script 1's alone
    assert a["relation"]["runs"] == pytest.approx([1, 0, 1])                      # script 2's alone
    assert (a["runs"], a["scripts"], a["aggregation"]) == (3, 2, "pooled")
    # the plain mean of the same runs weighs the 20-point script as much as the 40-point one:
    # run 0 (15/20 + 10/40) / 2 = 0.5, not 25/60
    plain = player_star_numbers.plain_mean_aggregate([[{"weighted_score": w} for w in (15 / 20, 10 / 20, 10 / 20)],
                                     [{"weighted_score": w} for w in (10 / 40, 30 / 40, 20 / 40)]])
    assert plain["weighted_score"]["runs"][0] == pytest.approx(0.5) != a["weighted_score"]["runs"][0]
    with pytest.raises(ValueError, match="same"):
        player_star_numbers.pooled_aggregate([small, big[:2]])
    with pytest.raises(ValueError, match=r"script 1 run 0 has no question counts"):
        player_star_numbers.pooled_aggregate([small, [{"weighted_score": 0.5, "accuracy": {}}] * 3])
    with pytest.raises(ValueError, match="no script"):
        player_star_numbers.pooled_aggregate([])


def _released_runs(lang: str, method: str, table: str = "player_star_released_logs") -> dict[str, list[dict]]:
    """The authors' released logs' per-script rows of ``lang`` / ``method`` as our evaluation
    ``result.json`` "runs" (script id -> 3 runs): each pass's right answers per type recovered from
    its accuracy (percent, 2 decimals) and question count; checked against the row's points and its
    overall pass value, so a wrong recovery fails here, not in the aggregate."""
    rows = [r for r in load_table(table).rows if (r["lang"], r["method"]) == (lang, method) and r["script_id"] != "all"]
    by_script: dict[str, dict[str, dict]] = {}
    for r in rows:
        by_script.setdefault(r["script_id"], {})[r["category"]] = r
    out = {}
    for sid, cats in by_script.items():
        runs = []
        for i in range(3):
            counts = {}
            for c in player_star_protocol.CATEGORIES:
                n = int(cats[c]["questions"]) if c in cats else 0
                counts[c] = {"n": n, "correct": round(float(cats[c][f"pass_{i}"]) * n / 100) if n else 0}
            won = sum(player_star_protocol.WEIGHTS[c] * counts[c]["correct"] for c in player_star_protocol.CATEGORIES)
            possible = sum(player_star_protocol.WEIGHTS[c] * counts[c]["n"] for c in player_star_protocol.CATEGORIES)
            assert possible == int(cats["overall"]["points"]), (lang, method, sid)
            assert f"{100 * won / possible:.2f}" == cats["overall"][f"pass_{i}"], (lang, method, sid, i)
            runs.append({"counts": counts, "weighted_score": won / possible,
                         "accuracy": {c: counts[c]["correct"] / counts[c]["n"] if counts[c]["n"] else None
                                      for c in player_star_protocol.CATEGORIES}})
        out[sid] = runs
    return out


def test_our_aggregation_on_the_released_logs_gives_their_pooled_figures():
    """The "ours" columns and the released logs' columns are one aggregation: run on the released
    logs' per-script points, ours gives their ``all`` rows (App. B.3 pooled), zh PLAYER* 46.07 ±
    1.15 and en 44.11 ± 1.46, every type and method of both log sets. The plain mean, the labelled
    second figure, gives 49.77 for zh PLAYER* (the old "ours")."""
    for table in ("player_star_released_logs", "player_star_released_logs_earlier"):
        all_rows = {(r["lang"], r["method"], r["category"]): r for r in load_table(table).rows if r["script_id"] == "all"}
        for lang, method in {(k[0], k[1]) for k in all_rows}:
            agg = player_star_numbers.pooled_aggregate(list(_released_runs(lang, method, table).values()))
            for cat in (*player_star_protocol.CATEGORIES, "overall"):
                got = agg["weighted_score" if cat == "overall" else cat]
                want = all_rows[(lang, method, cat)]
                # to the CSV's 2 decimals (0.005, and a hair for 47.125 printed as 47.12)
                assert [100 * x for x in (*got["runs"], got["mean"], got["std"])] == pytest.approx(
                    [float(want[k]) for k in ("pass_0", "pass_1", "pass_2", "mean", "std")], abs=0.0051), (
                    table, lang, method, cat)
    zh = player_star_numbers.pooled_aggregate(list(_released_runs("zh", "player_star").values()))["weighted_score"]
    en = player_star_numbers.pooled_aggregate(list(_released_runs("en", "player_star").values()))["weighted_score"]
    assert (f"{100 * zh['mean']:.2f} ± {100 * zh['std']:.2f}", f"{100 * en['mean']:.2f} ± {100 * en['std']:.2f}") == (
        "46.07 ± 1.15", "44.11 ± 1.46")
    plain = player_star_numbers.plain_mean_aggregate(list(_released_runs("zh", "player_star").values()))["weighted_score"]
    assert f"{100 * plain['mean']:.2f}" == "49.77"
    earlier = player_star_numbers.pooled_aggregate(list(_released_runs("zh", "player_star", "player_star_released_logs_earlier").values()))
    assert f"{100 * earlier['weighted_score']['mean']:.2f} ± {100 * earlier['weighted_score']['std']:.2f}" == "42.66 ± 0.34"


def _released_cells(lang_out: Path, lang: str, method: str) -> list:
    """Finished evaluation cells (``eval/result.json`` and ``answers.jsonl``, as
    :func:`mas_agents.eval.wellplay.run.run_wellplay_eval` writes them) holding the released
    logs' right answers of ``lang`` / ``method``, one cell per script; returns the scripts (``.id``)."""
    from types import SimpleNamespace

    from mas_agents.eval.compare.run import cell_dir
    scripts = []
    for sid, runs in sorted(_released_runs(lang, method).items()):
        d = cell_dir(lang_out, method, sid, 0) / "eval"
        d.mkdir(parents=True)
        records = [{"script": sid, "character": "all", "qid": f"{c}{q}", "category": c, "run": i,
                    "correct": q < r["counts"][c]["correct"], "abstained": False}
                   for i, r in enumerate(runs) for c in player_star_protocol.CATEGORIES for q in range(r["counts"][c]["n"])]
        (d / "answers.jsonl").write_text("".join(json.dumps(x) + "\n" for x in records), encoding="utf-8")
        llm = {"calls": 0, "input_tokens": 0, "output_tokens": 0, "latency_s": 0.0}
        (d / "result.json").write_text(json.dumps({"runs": runs, "llm": llm}), encoding="utf-8")
        scripts.append(SimpleNamespace(id=sid))
    return scripts


def test_the_ours_column_of_cells_holding_the_released_logs_equals_their_pooled_column(tmp_path):
    """What the report's "ours" columns read (:func:`method_summary` over finished cells) is App.
    B.3 pooled: cells holding the released logs' zh PLAYER* answers give their 46.07 ± 1.15, the
    plain mean beside it 49.77, and the report prints both, each labelled."""
    scripts = _released_cells(tmp_path / "zh", "zh", "player_star")
    s = player_star_numbers.method_summary(tmp_path / "zh", "player_star", scripts)
    ws = s["pooled"]["weighted_score"]
    assert (f"{100 * ws['mean']:.2f}", f"{100 * ws['std']:.2f}", s["pooled"]["scripts"]) == ("46.07", "1.15", 12)
    assert f"{100 * s['plain_mean']['weighted_score']['mean']:.2f}" == "49.77"
    assert s["interval"]["mean"] == pytest.approx(ws["mean"])          # the interval is centred on the pooled mean
    assert s["questions"] == 1482
    assert s["per_script_runs"] == _released_runs("zh", "player_star")    # each script's own runs, by id
    md = player_star_report.report_md(_fake_result({"zh": {"scripts": [x.id for x in scripts], "script_ids": [x.id for x in scripts],
                                           "methods": {"player_star": s}}}), _tables())
    row = next(line for line in md.splitlines() if line.startswith("| PLAYER* |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[4:6] == ["46.1 ± 1.2", "49.8 ± 0.6"]                 # weighted: pooled, then plain mean
    assert cells[-2:] == ["46.07 ± 1.15 (12 scripts)", "42.66 ± 0.34 (12 scripts)"]   # kept set, earlier set
    head = next(line for line in md.splitlines() if line.startswith("| method |"))
    assert ("weighted (ours, App. B.3 pooled) | weighted (ours, plain mean over scripts)" in head
            and "released logs, kept set, commit b6fcef9 (2024-06-05)" in head
            and "released logs, earlier set, commit b2483e3 (2024-03-29)" in head)
    assert player_star_report.AGGREGATION_TEXT in md and "the paper's aggregation" not in md
    # the chart under the table is ours, App. B.3 pooled, not the zh/ comparison's plain-mean chart,
    # and the caption says which is which
    assert "![weighted score by method, App. B.3 pooled](scores_zh.png)" in md and "zh/scores.png" not in md
    assert ("The `zh/` comparison run's own report.md and scores.png show its weighted score as the plain mean "
            "over scripts (the second weighted column here), not App. B.3 pooled.") in md


def test_the_reproduce_chart_draws_the_pooled_score_and_says_so(tmp_path, monkeypatch):
    """``scores_<lang>.png`` draws each method's App. B.3 pooled weighted score (46.07 for the
    released zh PLAYER* cells, not their plain mean 49.77), titled so."""
    import matplotlib.axes
    import matplotlib.figure
    scripts = _released_cells(tmp_path / "zh", "zh", "player_star")
    s = player_star_numbers.method_summary(tmp_path / "zh", "player_star", scripts)
    drawn, heights = [], []
    save, bar = matplotlib.figure.Figure.savefig, matplotlib.axes.Axes.bar
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig",
                        lambda fig, *a, **k: (drawn.append(fig.axes[0].get_title()), save(fig, *a, **k)))
    monkeypatch.setattr(matplotlib.axes.Axes, "bar",
                        lambda ax, x, h, *a, **k: (heights.append((list(x), list(h))), bar(ax, x, h, *a, **k))[1])
    player_star_report.score_charts({"langs": {"zh": {"methods": {"player_star": s}}}}, tmp_path)
    assert drawn == ["WellPlay weighted score, App. B.3 pooled, zh (95 % interval)"]
    assert heights[0][0] == ["PLAYER*"] and f"{heights[0][1][0]:.2f}" == "46.07"
    assert (tmp_path / "scores_zh.png").stat().st_size > 1000


def _tables() -> dict:
    return {"table1": load_table("player_star_table1"), "table_a6": load_table("player_star_table_a6"),
            "released_logs": load_table("player_star_released_logs"),
            "released_logs_earlier": load_table("player_star_released_logs_earlier")}


def _fake_result(langs: dict, sbf: dict | None = None) -> dict:
    """A finished result as :func:`reproduce` returns it (only what the report reads)."""
    totals = {k: 0 for k in ("characters", *player_star_protocol.CATEGORIES, "questions", "murderers")}
    return {"model": "local", "murderer_agent": "plain", "eval_runs": 3, "limit": None, "scripts_run": 12,
            "scripts_full": 12, "langs": langs, "left_out": [], "claims": [],
            "dataset": {"en": [], "totals": totals, "zh_differs": {}, "flags": []},
            "solitary_boat_firefly": sbf, "differences": player_star_report.PROTOCOL_DIFFERENCES}


def test_the_protocol_differences_name_the_confound_the_temperature_and_the_earlier_log_set():
    """The three findings of the audit of the released logs (alickzhu/PLAYER), in the report's
    "Protocol differences", each with its evidence."""
    md = player_star_report.report_md(_fake_result({}), _tables())
    section = md.split("## Protocol differences")[1]
    confound = next(t for t in player_star_report.PROTOCOL_DIFFERENCES if "sensor-loop confound" in t)
    for needle in ("main.py:292 and :336", "(:348)", "(:351)", "4th character", "1,054 zh", "504 en", "Riverside Inn",
                   "Oriental Star Cruise Incident", "Solitary Boat Firefly", "O-CoT's prompts quote the asker's own"):
        assert needle in confound, needle
    temperature = next(t for t in player_star_report.PROTOCOL_DIFFERENCES if t.startswith("Temperature"))
    for needle in ("passes none", "Chat_utils.cpython-311.pyc", "2024-02-28", "temperature=0.9"):
        assert needle in temperature, needle
    earlier = next(t for t in player_star_report.PROTOCOL_DIFFERENCES if t.startswith("Two released log sets"))
    for needle in ("b2483e3 (2024-03-29)", "79a17f4", "b6fcef9, 40 s later", "8 of 12 scripts", "42.66 ± 0.34",
                   "46.07 ± 1.15", "player_star_released_logs_earlier.csv"):
        assert needle in earlier, needle
    for t in (confound, temperature, earlier):
        assert f"- {t}" in section
    assert not any("API's default temperature (no temperature is passed)" in t for t in player_star_report.PROTOCOL_DIFFERENCES)


def test_table_a6_is_compared_with_a_zh_run_and_an_en_one_is_labelled_not_like_for_like():
    """Table A6 (PLAYER* App. C.4) is the Chinese Solitary Boat Firefly (1702): our row comes from
    the zh run when it played 1702, else from en with the label "en, not like for like". The row
    is script 1702's own score (App. B.3 pooled over its runs), not the language's mean over every
    script it ran: here 134 is all right and 1702 half, so the two differ."""
    def run(right_of_10):   # one eval run: 10 questions of each type, right_of_10 of each right
        return {"counts": {c: {"n": 10, "correct": right_of_10} for c in player_star_protocol.CATEGORIES},
                "weighted_score": right_of_10 / 10, "accuracy": {c: right_of_10 / 10 for c in player_star_protocol.CATEGORIES}}

    def summ(score_1702):   # a method summary as method_summary gives it: 134 all right, 1702 as given
        per_script = {"134": [run(10), run(10)], "1702": [run(score_1702), run(score_1702)]}
        return {"pooled": player_star_numbers.pooled_aggregate(list(per_script.values())), "per_script_runs": per_script}
    both = {"zh": {"script_ids": ["134", "1702"], "methods": {"player_star": summ(4)}},
            "en": {"script_ids": ["134", "1702"], "methods": {"player_star": summ(5)}}}
    assert both["zh"]["methods"]["player_star"]["pooled"]["weighted_score"]["mean"] == pytest.approx(0.7)
    assert ps.solitary_boat_firefly(both) == {"lang": "zh", "weighted_score": pytest.approx(0.4)}
    assert ps.solitary_boat_firefly({"en": both["en"]}) == {"lang": "en", "weighted_score": pytest.approx(0.5)}
    only_134 = {"script_ids": ["134"], "methods": {"player_star": {"per_script_runs": {"134": [run(10)]}}}}
    assert ps.solitary_boat_firefly({"zh": only_134}) is None
    md = player_star_report.report_md(_fake_result({}, {"lang": "zh", "weighted_score": 0.41}), _tables())
    assert "| local (this run, PLAYER*, zh) | 0.410 |" in md
    assert "our row is that script's own score (its runs alone, not the language's mean" in md
    md = player_star_report.report_md(_fake_result({}, {"lang": "en", "weighted_score": 0.52}), _tables())
    assert "| local (this run, PLAYER*, en, not like for like: Table A6 is zh) | 0.520 |" in md
    md = player_star_report.report_md(_fake_result({}), _tables())
    assert "| local (this run, PLAYER*) | not run (Solitary Boat Firefly not played) |" in md


def _summ(obj, rea, rel, ws, seat_calls=None, plain=0.0):
    """A method summary with these pooled means; its plain means are all ``plain`` (the claims
    must not read them)."""
    def e(x):
        return {"mean": x, "std": None, "runs": []}
    return {"pooled": {"objective": e(obj), "reasoning": e(rea), "relation": e(rel), "weighted_score": e(ws)},
            "plain_mean": {k: e(plain) for k in ("objective", "reasoning", "relation", "weighted_score")},
            "cost": {"seat_calls": seat_calls}}


def test_claims_hold_do_not_hold_and_cannot_tell():
    good = {"player_star": _summ(.6, .6, .6, .6, 30), "werewolf": _summ(.5, .5, .5, .5, 40),
            "ocot": _summ(.5, .5, .5, .5, 50), "thinkthrice": _summ(.5, .5, .5, .5, 45),
            "pp": _summ(.4, .4, .4, .4), "op": _summ(.55, .7, .7, .65)}
    zh = {m: _summ(*(x - 0.1 for x in (s["pooled"][k]["mean"] for k in ("objective", "reasoning", "relation", "weighted_score"))),
                   s["cost"]["seat_calls"]) for m, s in good.items()}
    # the plain means say the opposite (PLAYER* lowest): the verdicts follow the pooled (App. B.3) means
    good = {m: {**x, "plain_mean": _summ(0, 0, 0, 0, plain=0.1 if m == "player_star" else 0.9)["plain_mean"]}
            for m, x in good.items()}
    c = {x["text"].split(" (")[0]: x["holds"] for x in player_star_numbers.claims({"en": good, "zh": zh})}
    assert c == {"PLAYER* is best on every question type": True, "PLAYER* is above OP on objective questions": True,
                 "English scores above Chinese": True, "PLAYER* is the cheapest in gameplay": True}
    # a tie is not "above"; ThinkThrice cheaper in zh; OP above on objective in en; zh above en
    bad_en = {**good, "werewolf": _summ(.6, .5, .5, .5, 40), "op": _summ(.7, .7, .7, .7)}
    bad_zh = {**zh, "thinkthrice": _summ(.4, .4, .4, .4, 20), "player_star": _summ(.5, .5, .5, .9, 30)}
    c = {x["text"].split(" (")[0]: x["holds"] for x in player_star_numbers.claims({"en": bad_en, "zh": bad_zh})}
    assert c == {"PLAYER* is best on every question type": False, "PLAYER* is above OP on objective questions": False,
                 "English scores above Chinese": False, "PLAYER* is the cheapest in gameplay": False}
    # one language only, seat counts unknown: cannot tell on English vs Chinese and on cost
    unknown = {m: {**s, "cost": {"seat_calls": None}} for m, s in good.items()}
    c = {x["text"].split(" (")[0]: x["holds"] for x in player_star_numbers.claims({"en": unknown})}
    assert c["English scores above Chinese"] is None and c["PLAYER* is the cheapest in gameplay"] is None
    assert c["PLAYER* is best on every question type"] is True
    from mas_agents.eval.reproduce.common import claim
    assert claim("x", None, "y") == "- x: **cannot tell** on this run (y)."


def test_paper_csvs_hold_the_transcribed_values():
    # Table A6 (PLAYER*, arXiv:2404.17662 v2, App. C.4): Llama2 70b/13b/7b and gemma 7b on
    # "Solitary Boat Firefly": 0.312 / 0.281 / 0.267 / 0.273
    a6 = load_table("player_star_table_a6")
    assert [(r["model"], r["script"], r["weighted_score"]) for r in a6.rows] == [
        ("Llama2 70b", "Solitary Boat Firefly", "0.312"), ("Llama2 13b", "Solitary Boat Firefly", "0.281"),
        ("Llama2 7b", "Solitary Boat Firefly", "0.267"), ("gemma 7b", "Solitary Boat Firefly", "0.273")]
    assert "Table A6" in a6.source and "C.4" in a6.source and {r["lang"] for r in a6.rows} == {"zh"}
    # Table 1's Sum row (PLAYER* v2, section 3)
    t1 = load_table("player_star_table1")
    total = t1.row(row="total")
    assert {k: total[k] for k in ("scripts", "characters", "objective", "reasoning", "relation", "questions")} == {
        "scripts": "12", "characters": "68", "objective": "117", "reasoning": "800", "relation": "565", "questions": "1482"}
    # the authors' released logs recomputed (scripts/player_star_logs.py): the App. B.3 aggregate per
    # language and method, mean ± std (n - 1) over the 3 passes, percent
    logs = {(r["lang"], r["method"]): (r["mean"], r["std"], r["scripts"]) for r in load_table("player_star_released_logs").rows
            if r["script_id"] == "all" and r["category"] == "overall"}
    assert logs == {("zh", "player_star"): ("46.07", "1.15", "12"), ("zh", "werewolf"): ("41.53", "1.00", "12"),
                    ("zh", "ocot"): ("42.37", "0.82", "12"), ("zh", "thinkthrice"): ("42.60", "0.28", "12"),
                    ("zh", "pp"): ("38.57", "0.69", "12"), ("zh", "op"): ("48.36", "1.46", "12"),
                    ("en", "player_star"): ("44.11", "1.46", "4"), ("en", "werewolf"): ("43.25", "0.77", "4"),
                    ("en", "ocot"): ("42.42", "0.74", "4"), ("en", "thinkthrice"): ("40.88", "0.53", "3")}


def test_missing_data_is_one_line_value_error(tmp_path):
    with pytest.raises(ValueError, match=r"^--data-dir: "):
        ps.reproduce(ps.PlayerStarRun(data_root=tmp_path / "nowhere", out=tmp_path / "out", model="local", limit=1))
