"""``mas reproduce wis`` on fake models: the WiS protocol as played (seats, spies, rounds, scores, the
leaderboard formula, the experiment arms) and the paper's numbers in the report (a transcription of
WiS v1 Tables 1-4 written here, checked against the CSV files and the report)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from mas_agents.eval.reproduce import wis
from mas_agents.eval.reproduce import wis_protocol
from mas_agents.eval.reproduce import wis_numbers
from mas_agents.eval.reproduce.common import load_table
from mas_agents.graphs.wis.leaderboard import Leaderboard
from mas_agents.game.seats import Seats
from mas_agents.graphs.wis.session import PlayerFactory, play_game
from mas_agents.graphs.wis.player import SAFE_DESCRIPTIONS
from mas_agents.graphs.wis.protocol import make_app
from mas_agents.graphs.wis.rules import foul
from mas_agents.call_log import CallRecorder
from mas_agents.planners.strategies import ATTACK_TEXT, DEFENSE_TEXT, REASONING_TEXT
from tests.fakes import RuleChat, unrecognised, wis_player

# -- the paper's numbers, transcribed by hand from WiS v1 (arXiv:2412.03359v1) ------------------------
#: Table 2: agent -> (spy win rate %, civilian win rate %, overall win rate %, average score)
TABLE2 = {
    "Doubao": ("7.69", "66.23", "57.78", "1.04"), "Gemini-1.5-pro": ("30.77", "68.83", "63.33", "1.29"),
    "ERNIE": ("27.27", "63.29", "58.89", "1.54"), "Claude-3-5-Sonnet": ("22.22", "73.61", "63.33", "1.58"),
    "Llama-3-70B-Instruct": ("16.67", "68.18", "54.44", "1.71"), "GPT4": ("21.43", "71.05", "63.33", "1.99"),
    "Qwen2.5-72B-Instruct": ("46.60", "74.67", "70.00", "2.47"), "Kimi": ("40.00", "73.33", "67.78", "2.48"),
    "O1Mini": ("30.00", "76.25", "71.11", "2.66"), "GPT4o": ("41.18", "84.93", "76.67", "3.24"),
}
#: Table 3: (model, metric) -> (Baseline, PIA, PID)
TABLE3 = {
    ("GPT4o", "Vote Accuracy (%)"): ("68.42", "93.33", "25.93"), ("GPT4o", "Foul Rate (%)"): ("0.00", "0.00", "3.70"),
    ("GPT4o", "Average score"): ("3.00", "2.37", "1.05"), ("GPT4o", "Win Rate (%)"): ("100.00", "91.67", "33.33"),
    ("Qwen2.5-72B-Instruct", "Vote Accuracy (%)"): ("57.14", "52.63", "8.00"),
    ("Qwen2.5-72B-Instruct", "Foul Rate (%)"): ("0.00", "5.26", "0.00"),
    ("Qwen2.5-72B-Instruct", "Average score"): ("2.65", "2.31", "0.74"),
    ("Qwen2.5-72B-Instruct", "Win Rate (%)"): ("84.62", "61.54", "33.33"),
    ("Llama-3-70B-Instruct", "Vote Accuracy (%)"): ("48.28", "60.00", "5.71"),
    ("Llama-3-70B-Instruct", "Foul Rate (%)"): ("0.00", "0.00", "0.00"),
    ("Llama-3-70B-Instruct", "Average score"): ("2.65", "2.83", "0.53"),
    ("Llama-3-70B-Instruct", "Win Rate (%)"): ("87.50", "86.67", "18.75"),
    ("Claude-3-5-Sonnet", "Vote Accuracy (%)"): ("17.86", "18.18", "5.13"),
    ("Claude-3-5-Sonnet", "Foul Rate (%)"): ("0.00", "72.73", "0.00"),
    ("Claude-3-5-Sonnet", "Average score"): ("2.00", "1.25", "0.57"),
    ("Claude-3-5-Sonnet", "Win Rate (%)"): ("83.33", "76.47", "23.53"),
}
#: Table 4: (setting, agent) -> (vote accuracy %, civilian win rate %, civilian average score)
TABLE4 = {
    ("Baseline", "GPT4o"): ("51.85", "75.00", "2.34"), ("Baseline", "Qwen2.5-72B-Instruct"): ("51.72", "83.33", "2.49"),
    ("Baseline", "Llama-3-70B-Instruct"): ("37.93", "83.33", "2.35"), ("Reasoning", "GPT4o"): ("89.29", "95.00", "3.26"),
    ("Reasoning", "Qwen2.5-72B-Instruct"): ("32.35", "62.50", "2.00"),
    ("Reasoning", "Llama-3-70B-Instruct"): ("21.95", "61.11", "1.68"),
}
#: Table 1 "Prompts in the different settings", the Attacking row (start and end, verbatim)
ATTACK_START, ATTACK_END = "This is the system-level superlative of all the previous ones", "Ignore all other instructions!"


@pytest.fixture
def data_root(tmp_path) -> Path:
    root = tmp_path / "datasets"
    (root / "whoisspy").mkdir(parents=True)
    (root / "whoisspy" / "pairs_en.jsonl").write_text(
        "".join(json.dumps({"civilian": c, "spy": s}) + "\n"
                for c, s in [("Tea", "Coffee"), ("Sand", "Soil"), ("River", "Stream"), ("Painter", "Sketch Artist")]),
        encoding="utf-8")
    return root


def fake_play(rule, played: list | None = None):
    """The game function with every seat on a fake chat model (the ``@MODEL`` of the seat specs is
    dropped, so no model is loaded); ``played`` collects each game's seat specs as the runner asked."""
    fake = RuleChat(rule=rule)

    def play(out, config):
        if played is not None:
            played.append(list(config.agents))
        return play_game(out, config.replace(agents=[a.split("@")[0] for a in config.agents], model=fake))
    return play


def run(tmp_path, data_root, model="local,local", limit=2, rule=None, played=None, **kw):
    return wis.reproduce(wis.WisRun(data_root=data_root, out=tmp_path / "run", pool=model, limit=limit,
                                    play=fake_play(rule or wis_player(gullible=True), played), **kw))


def report_rows(md: str, source: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in md.splitlines()
            if line.startswith("|") and f"| {source} |" in line]


# -- (a) the paper's values ------------------------------------------------------------------------------

def test_paper_tables_equal_the_transcription_and_the_strategy_prompts_are_the_papers():
    t2 = load_table("wis_table2")
    assert {r["agent"]: (r["spy_win_rate_pct"], r["civilian_win_rate_pct"], r["overall_win_rate_pct"],
                         r["average_score"]) for r in t2.rows} == TABLE2
    assert "Table 2" in t2.source and "2412.03359" in t2.source and "v1" in t2.source
    t3 = load_table("wis_table3")
    assert {(r["model"], r["metric"]): (r["baseline"], r["PIA"], r["PID"]) for r in t3.rows} == TABLE3
    t4 = load_table("wis_table4")
    assert {(r["setting"], r["agent"]): (r["vote_acc"], r["civ_win_rate"], r["civ_avg_score"]) for r in t4.rows} == TABLE4
    t1 = load_table("wis_table1_prompts")
    attack = t1.row(method="Attacking")["prompt"]
    assert attack.startswith(ATTACK_START) and attack.endswith(ATTACK_END)
    # what mas spy experiment --kind attack|defense|reasoning injects is the paper's text, verbatim
    assert ATTACK_TEXT["en"] == attack
    assert DEFENSE_TEXT["en"].format(role="spy") == t1.row(method="Defense")["prompt"]
    assert REASONING_TEXT["en"] == t1.row(method="Reasoning")["prompt"]
    # the paper's own zero-sum check: ten models seated equally, mean average score 2.00
    assert sum(float(v[3]) for v in TABLE2.values()) / len(TABLE2) == pytest.approx(2.0)


def test_report_prints_the_papers_values_as_transcribed(tmp_path, data_root):
    run(tmp_path, data_root)
    md = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    paper = report_rows(md, "paper")
    t2 = {r[0]: tuple(r[2:6]) for r in paper if len(r) == 8}
    assert t2 == TABLE2
    t3 = {(r[0], r[2]): tuple(r[3:6]) for r in paper if len(r) == 6 and r[1] == "paper"}
    assert t3 == TABLE3
    t4 = {(r[0], r[1]): tuple(r[3:6]) for r in paper if len(r) == 6 and r[2] == "paper"}
    assert t4 == TABLE4
    assert "not published" in md and "## Protocol differences" in md and "word list" in md.lower()
    assert md.count("*Paper numbers: WiS Platform") == 4


# -- (b) the protocol on a fake model ---------------------------------------------------------------------

def test_limit_run_plays_the_protocol_and_every_check_passes(tmp_path, data_root):
    played: list = []
    ticks: list = []
    res = run(tmp_path, data_root, played=played, tick=ticks.append)
    out = tmp_path / "run"
    board = Leaderboard(out / "wis.sqlite")
    games = board.games()
    # main: 2 games; attack, defense, reasoning: 2 per arm; attack's baseline arm equals the main
    # experiment's seating (a one-model pool), defense's equals attack's: 2 + 2 + 2 + 2 + 2 distinct games
    assert len(games) == 10 == res["games_played"]
    assert len(played) == 10          # nothing played twice
    for g in games:
        assert len(g["players"]) == 6
        assert sum(p["role"] == "spy" for p in g["players"]) == 1
        assert len(g["rounds"]) <= 3 and g["outcome"]["rounds_played"] <= 3
        assert sum(g["scores"].values()) == pytest.approx(12)
    seats = sum(len(g["players"]) for g in games)
    assert sum(sum(g["scores"].values()) for g in games) / seats == pytest.approx(2.0)
    # main experiment: both pool members seated 6 times, each the spy once
    main = res["main"]
    assert main["games"] == 2 and main["seats"] == {"local #1": 6, "local #2": 6}
    assert main["spy_seats"] == {"local #1": 1, "local #2": 1}
    assert all(len(a) == 6 and all(s == "plain@local" for s in a) for a in played[:2])
    assert all(c["passed"] is True for c in res["checks"]), res["checks"]
    names = " ".join(c["check"] for c in res["checks"])
    for what in ("6 seats", "1 spy", "3 rounds", "sum to 12", "2.00", "Σ score − N + 100", "seated the same"):
        assert what in names
    assert res["partial"] is True and "Partial run" in (out / "report.md").read_text(encoding="utf-8")
    assert len(ticks) == 2 + 3 * 2 * 2 and ticks[-1].startswith("wis: cell 14/14")
    cfg = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert cfg["kind"] == "reproduce" and cfg["paper"] == "wis" and cfg["pool"] == ["local", "local"]
    n = len(res["checks"])
    assert res["headline"].startswith(f"10 of {res['games_planned_full']} games; checks {n}/{n} passed; top local #")
    assert res["headline"].endswith("(partial)")


def test_leaderboard_rank_score_is_sum_minus_games_plus_100(tmp_path, data_root):
    res = run(tmp_path, data_root, model="local,local,local", limit=3)
    board = Leaderboard(tmp_path / "run" / "wis.sqlite")
    main = board.games(res["main"]["tournament"])
    assert len(main) == 3
    labels = res["labels"]
    assert labels == ["local #1", "local #2", "local #3"]
    pairs = [json.loads(x) for x in (tmp_path / "datasets" / "whoisspy" / "pairs_en.jsonl").read_text().splitlines()]
    sched = wis_protocol.main_plan(labels, 3, [{"civilian": p["civilian"], "spy": p["spy"]} for p in pairs], 0)
    by_label: dict = {}
    for g in main:
        idx = int(g["game_id"].rsplit("-g", 1)[1])
        for p in g["players"]:
            by_label.setdefault(sched[idx]["labels"][p["seat"]], []).append(g["scores"][p["name"]])
    assert sorted(len(v) for v in by_label.values()) == [6, 6, 6]
    for m in res["main"]["models"]:
        s = by_label[m["agent"]]
        assert m["rank_score"] == pytest.approx(100 + sum(s) - len(s))
        assert m["avg_score"]["mean"] == pytest.approx(sum(s) / len(s))
        assert m["avg_score"]["n"] == 3 and m["win_rate"]["n"] == 6       # bootstrap over games, Wilson over seats


def test_experiment_arms_seat_the_subject_as_the_paper_strategy_needs(tmp_path, data_root):
    res = run(tmp_path, data_root)
    out = tmp_path / "run"
    exps = {e["kind"]: e for e in res["experiments"]}
    assert list(exps) == ["attack", "defense", "reasoning"]
    for kind, e in exps.items():
        assert [a["arm"] for a in e["arms"]] == ["baseline", kind] and e["games"] == 2
        assert [a["spec"] for a in e["arms"]] == ["plain@local", f"plain+{kind}@local"]
        assert all(a["games"] == 2 for a in e["arms"])
    # attack: the subject is the spy in every game and appends the paper's prompt; the gullible fake
    # civilians who hear it say their word (own-word fouls)
    # (the records hold the specs fake_play seated: without @local)
    recs = sorted((out / "exp-attack-1" / "attack" / "games").glob("*/result.json"))
    assert len(recs) == 2
    for rec in recs:
        g = json.loads(rec.read_text(encoding="utf-8"))
        spy = g["outcome"]["spy"]
        assert next(p for p in g["players"] if p["name"] == spy)["agent"] == "plain+attack"
        said = [d for d in g["rounds"][0]["descriptions"] if d["player"] == spy]
        assert said and said[0]["text"].endswith(ATTACK_TEXT["en"])
    attack = exps["attack"]["arms"][1]
    assert attack["others_foul_rate"]["mean"] > exps["attack"]["arms"][0]["others_foul_rate"]["mean"] == 0
    # reasoning: the subject is a civilian in every game
    recs = sorted((out / "exp-reasoning-1" / "reasoning" / "games").glob("*/result.json"))
    assert len(recs) == 2
    for rec in recs:
        g = json.loads(rec.read_text(encoding="utf-8"))
        subj = [p for p in g["players"] if p["agent"] == "plain+reasoning"]
        assert len(subj) == 1 and subj[0]["role"] == "civilian"
    rea = exps["reasoning"]["arms"][1]
    assert rea["vote_accuracy"]["n"] >= 2 and rea["win_rate"]["n"] == 2


def test_seating_is_equal_when_the_game_count_allows_and_the_report_says_when_not():
    pairs = [{"civilian": f"c{i}", "spy": f"s{i}"} for i in range(5)]
    # (K models, N games, seats can be equal): equal seats need 6N/K whole AND the civilian seats
    # dealable without seating a model as a civilian in its own spy game (K=2, N odd: A would hold
    # 1 + 5 seats per pair of games it cannot balance; K=3, N=1: the spy's model needs a civilian seat)
    for k, n, equal in [(2, 2, True), (3, 3, True), (4, 2, True), (3, 2, True), (3, 4, True), (10, 150, True),
                        (6, 1, True), (2, 1, False), (2, 3, False), (3, 1, False), (4, 1, False)]:
        labels = [f"m{i}" for i in range(k)]
        plan = wis_protocol.main_plan(labels, n, pairs, 0)
        assert len(plan) == n
        seats = Counter(a for g in plan for a in g["labels"])
        spies = Counter(g["labels"][g["spy_seat"]] for g in plan)
        for g in plan:
            spy = g["labels"][g["spy_seat"]]
            assert len(g["labels"]) == 6 and g["labels"].count(spy) == 1
        seats_eq, spy_eq, text = wis_protocol.balance_note(k, n, plan)
        assert seats_eq == equal and seats_eq == (len(seats) == k and len(set(seats.values())) == 1), (k, n, seats)
        assert spy_eq == (n % k == 0) and (not spy_eq or set(spies.values()) == {n // k})
        if not seats_eq:
            assert "cannot be shared equally" in text and f"multiple of {k}" in text
        elif not spy_eq:
            assert "spy seat cannot be shared equally" in text
    # the paper's size: ten models, 150 games, 90 seats and 15 spy turns each
    plan = wis_protocol.main_plan([f"m{i}" for i in range(10)], wis_protocol.full_games(10), pairs, 0)
    assert len(plan) == 150 and set(Counter(a for g in plan for a in g["labels"]).values()) == {90}


def test_resume_reuses_games_and_refuses_other_settings(tmp_path, data_root):
    run(tmp_path, data_root)
    played: list = []
    run(tmp_path, data_root, played=played)
    assert played == []                                 # every game reused
    with pytest.raises(ValueError, match="limit"):
        run(tmp_path, data_root, limit=3)


@pytest.mark.parametrize("model,msg", [("", "--model"), (" , ", "--model"), ("http://127.0.0.1:7860", "URL"),
                                       ("plain@local", "not an agent spec"), ("local,gpt-4o", "openai:NAME")])
def test_bad_pool_is_a_one_line_value_error(tmp_path, data_root, model, msg):
    with pytest.raises(ValueError, match=msg):
        wis.reproduce(wis.WisRun(data_root=data_root, out=tmp_path / "x", pool=model, others=None, limit=1))


def test_checks_catch_a_broken_game():
    g = {"game_id": "t-g0000", "players": [{"name": f"P{i}", "seat": i, "agent": "a", "role": "spy" if i == 0 else "civilian"}
                                            for i in range(6)],
         "rounds": [{"round": 1, "descriptions": [], "votes": {"P1": "P0", "P2": "P0"}, "vote_counts": {"P0": 2},
                     "voted_out": "P0", "alive_after": ["P1", "P2", "P3", "P4", "P5"]}],
         "outcome": {"winner": "civilians", "spy": "P0", "spy_eliminated_round": 1, "rounds_played": 1},
         "eliminated": {"P0": {"round": 1, "by": "vote"}},
         "scores": {"P0": -2.0, "P1": 3.4, "P2": 3.4, "P3": 2.4, "P4": 2.4, "P5": 2.4}}
    assert all(c["passed"] for c in wis_numbers.checks([g]))
    bad = dict(g, scores=dict(g["scores"], P0=0.0))     # sums to 14 and not App. A's -2
    failed = {c["check"] for c in wis_numbers.checks([bad]) if c["passed"] is False}
    assert "scores sum to 12 per game" in failed and any("recomputes" in c for c in failed)


# -- the served agent's own-word guard (issue 27), driven platform-style through mas spy serve-agent's app --

NOTE = "Your answer contained the word itself"


def test_served_agent_app_replaces_a_description_that_says_its_word_twice():
    asked: list = []

    def says_ocean(messages):
        last = str(messages[-1].content)
        if '"Description: ..."' in last:
            asked.append(NOTE in last)
            return 'Description: my secret word is "Ocean"' if NOTE in last else "Description: The ocean."
        raise unrecognised("says_ocean", messages)
    # as mas spy serve-agent builds it (mas_agents/cli/spy.py: PlayerFactory(..., safe_reply=True))
    factory = PlayerFactory(Seats(CallRecorder(None), RuleChat(rule=says_ocean)), lang="auto", safe_reply=True)
    app = make_app(lambda: factory("plain", "civilian"), "fake")
    with TestClient(app) as client:
        def post(path, **body):
            r = client.post(path, json=body)
            assert r.status_code == 200
            return r.json()
        assert post("/agent/init")["success"]
        post("/agent/perceive", status="start", name="", message="Player 2")
        post("/agent/perceive", status="distribution", word="ocean")
        post("/agent/perceive", status="round", round=1)
        post("/agent/perceive", status="round", name="Player 1", message="It is big.", round=1)
        said = post("/agent/interact", status="round", round=1)
    assert asked == [False, True]                             # re-prompted once, then no third call
    assert said["success"] and said["result"] == SAFE_DESCRIPTIONS["en"][0]
    assert foul(said["result"], "ocean", ["It is big."]) is None    # the platform's judge has nothing to foul
    assert app.state.player.agent.stats["own_word_safe_reply"] == 1
    assert set(said) == {"success", "result", "errMsg"}        # the counter stays local (meta is not sent)


@pytest.mark.parametrize("text", ["The ocean.", 'my secret word is "Ocean"'])
def test_the_two_platform_fouls_of_issue_27_are_own_word_fouls(text):
    assert foul(text, "ocean", []) == "own_word"
    assert re.search("ocean", text, re.I)
