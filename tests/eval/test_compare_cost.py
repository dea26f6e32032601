"""`mas wellplay compare` cost per seat (PLAYER* §4, Table A5): the murderer's calls are not the
method's, the ratios to the cheapest game-playing baseline and to plain, and the PLAYER* line."""

import json
from types import SimpleNamespace

import pytest

from mas_agents.graphs.mmg.dataset import load_script
from mas_agents.eval.compare.run import CompareConfig, run_compare, summary_row
from mas_agents.eval.compare.table import aggregate, cost_comparison
from mas_agents.eval.compare.report import fewer_calls_line, report_md
from mas_agents.call_log import LLMCall
from tests.data_roots import SIN, SIN_CHARACTERS, SIN_MURDERER
from tests.fakes import RuleChat, polite_player

#: Sin's roles as a game's result.json records them (Chief Wang is the murderer: the only
#: ``is_murderer: 1`` of its json/<character>.json).
ROLES = {n: ("murderer" if n == SIN_MURDERER else "civilian") for n in SIN_CHARACTERS}


def call(actor: str, n_in: int, n_out: int, phase: str = "gameplay") -> dict:
    return LLMCall(call_id=f"{actor}-{n_in}", actor=actor, purpose="x", model="fake", input_tokens=n_in,
                   output_tokens=n_out, latency_s=0.5, retries=0, ok=True, error=None,
                   started_at="2024-01-01T00:00:00.000+00:00", prompt_chars=1, output_chars=1, phase=phase).to_dict()


def make_cell(d, calls: list[dict], roles: dict | None = ROLES, score: float = 0.5) -> None:
    """A finished compare cell: game/{result.json, llm_calls.jsonl} and eval/result.json."""
    (d / "game").mkdir(parents=True)
    (d / "eval").mkdir(parents=True)
    llm = {"calls": len(calls), "input_tokens": sum(c["input_tokens"] for c in calls),
           "output_tokens": sum(c["output_tokens"] for c in calls), "latency_s": 0.5 * len(calls)}
    game = {"llm": llm, "wall_time_s": 1.0, "outcome": {"murderer_caught": True}, "invalid_actions": 0}
    if roles is not None:
        game["roles"] = roles
    (d / "game" / "result.json").write_text(json.dumps(game))
    (d / "game" / "llm_calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
    (d / "eval" / "result.json").write_text(json.dumps(
        {"weighted_score": score, "accuracy": {"objective": score}, "wall_time_s": 2.0,
         "llm": {"calls": 7, "input_tokens": 70, "output_tokens": 7, "latency_s": 1.0}}))


def test_summary_row_counts_the_seats_the_method_plays_not_the_murderer(tmp_path):
    calls = ([call("Zhang Villager", 100, 10)] * 3 + [call(SIN_MURDERER, 1000, 100)] * 4
             + [call("Officer Li", 20, 2)] * 2 + [call("Hu Investigate", 5, 1)])
    make_cell(tmp_path, calls)
    row = summary_row("player_star", SimpleNamespace(name="Sin"), 0, tmp_path)
    # every call: 3 + 4 + 2 + 1 = 10; in 300 + 4000 + 40 + 5 = 4345; out 30 + 400 + 4 + 1 = 435
    assert (row["game_calls"], row["game_input_tokens"], row["game_output_tokens"]) == (10, 4345, 435)
    # the murderer's 4 calls (4000 / 400 tokens) are not the method's: 6 calls, 345 in, 35 out
    assert (row["game_seat_calls"], row["game_seat_input_tokens"], row["game_seat_output_tokens"]) == (6, 345, 35)


def test_unknown_roles_leave_the_seat_cost_unknown(tmp_path):
    make_cell(tmp_path / "a", [call("Zhang Villager", 1, 1)], roles=None)
    row = summary_row("player_star", SimpleNamespace(name="Sin"), 0, tmp_path / "a")
    assert row["game_calls"] == 1 and row["game_seat_calls"] is None
    make_cell(tmp_path / "b", [call("Zhang Villager", 1, 1)])
    other = summary_row("werewolf", SimpleNamespace(name="Sin"), 0, tmp_path / "b")
    table = aggregate([row, other], ["player_star", "werewolf"])
    assert table[0]["game_seat_calls"] is None and table[0]["seat_calls_vs_cheapest_baseline"] is None
    assert fewer_calls_line(table) == ("PLAYER* gameplay calls: not compared (the games' result.json records no "
                                       "roles, so the seats are unknown).")
    md = report_md({"scripts": ["Sin"], "lang": "en", "seeds": 1, "model": "fake", "rounds": 1, "questions": 1,
                    "table": table, "fewer_calls": fewer_calls_line(table)})
    assert "| 100 % [21, 100] (n=1 game) | - | - | - | - | 1 | 1/1 |" in md
    assert "| player_star | 50.0 (no interval) | n=1 seed, no spread |" in md and "± 0.0" not in md


def row(method: str, seat_calls: float | None, seed: int = 0, game_calls: int = 100) -> dict:
    eval_only = method in ("pp", "op", "always_a", "random")
    return {"method": method, "seed": seed, "weighted_score": 0.5, "accuracy": {}, "murderer_caught": None,
            "game_calls": 0 if eval_only else game_calls, "game_seat_calls": 0 if eval_only else seat_calls,
            "game_seat_input_tokens": 0 if eval_only else 10 * (seat_calls or 0), "game_seat_output_tokens": 0,
            **{k: 0 for k in ("game_input_tokens", "game_output_tokens", "game_wall_s", "game_model_s", "eval_calls",
                              "eval_input_tokens", "eval_output_tokens", "eval_wall_s", "eval_model_s", "abstained")}}


METHODS = ["pp", "plain", "player_star", "werewolf", "ocot", "thinkthrice", "always_a"]


def table_of(ps, plain=24, werewolf=50, ocot=33, thinkthrice=40):
    seats = {"plain": plain, "player_star": ps, "werewolf": werewolf, "ocot": ocot, "thinkthrice": thinkthrice}
    return aggregate([row(m, seats.get(m)) for m in METHODS], METHODS)


def test_equal_to_the_cheapest_baseline_is_not_fewer():
    table = table_of(ps=33)
    assert fewer_calls_line(table) == (
        "PLAYER* used fewer gameplay calls than each baseline: no (player_star 33 per-seat calls; cheapest baseline "
        "ocot 33: ratio 1.00; plain 24: ratio 1.38). Strictly fewer per-seat calls per game than: plain no (33 vs 24); "
        "werewolf yes (33 vs 50); ocot no (33 vs 33); thinkthrice yes (33 vs 40).")
    by = {t["method"]: t for t in table}
    assert by["player_star"]["seat_calls_vs_cheapest_baseline"] == 1.0
    assert by["player_star"]["seat_calls_vs_plain"] == pytest.approx(33 / 24)
    assert by["werewolf"]["seat_calls_vs_cheapest_baseline"] == pytest.approx(50 / 33)
    assert by["plain"]["seat_calls_vs_plain"] == 1.0
    # pp / always_a play no game: no ratio, and they are not baselines of the gameplay cost
    assert by["pp"]["seat_calls_vs_cheapest_baseline"] is None and by["always_a"]["seat_calls_vs_plain"] is None
    c = cost_comparison(table)
    assert (c["cheapest_baseline"], c["cheapest_baseline_seat_calls"], c["player_star_fewer_than_each_baseline"]) == \
        ("ocot", 33, False)
    assert c["player_star_fewer_than"] == {"plain": False, "werewolf": True, "ocot": False, "thinkthrice": True}


def test_fewer_than_each_baseline_yes_and_no():
    yes = fewer_calls_line(table_of(ps=32))
    assert yes.startswith("PLAYER* used fewer gameplay calls than each baseline: yes (player_star 32 per-seat calls; "
                          "cheapest baseline ocot 33: ratio 0.97; plain 24: ratio 1.33).")
    no = fewer_calls_line(table_of(ps=45))
    assert no.startswith("PLAYER* used fewer gameplay calls than each baseline: no (player_star 45 per-seat calls; "
                         "cheapest baseline ocot 33: ratio 1.36; plain 24: ratio 1.88).")
    assert "werewolf yes (45 vs 50); ocot no (45 vs 33); thinkthrice no (45 vs 40)" in no


def test_the_line_uses_seat_calls_not_game_totals():
    # player_star's games are dearer in total (the murderer's plain seat talks a lot), its own seats cheaper
    rows = [row("player_star", 30, game_calls=90), row("ocot", 31, game_calls=40)]
    table = aggregate(rows, ["player_star", "ocot"])
    assert fewer_calls_line(table).startswith("PLAYER* used fewer gameplay calls than each baseline: yes "
                                              "(player_star 30 per-seat calls; cheapest baseline ocot 31: ratio 0.97).")


def test_ties_for_cheapest_baseline_and_missing_baselines():
    c = cost_comparison(table_of(ps=10, werewolf=33, ocot=33))
    assert c["cheapest_baseline"] == "werewolf"     # ties: werewolf, ocot, thinkthrice order
    only_plain = aggregate([row("player_star", 30), row("plain", 20)], ["player_star", "plain"])
    assert fewer_calls_line(only_plain) == (
        "PLAYER* used fewer gameplay calls than each baseline: not compared, no baseline (werewolf, ocot, thinkthrice) "
        "played (player_star 30 per-seat calls; plain 20: ratio 1.50). Strictly fewer per-seat calls per game than: "
        "plain no (30 vs 20).")
    assert cost_comparison(only_plain)["player_star_fewer_than_each_baseline"] is None
    assert fewer_calls_line(aggregate([row("player_star", 30), row("pp", 0)], ["player_star", "pp"])) == \
        "PLAYER* gameplay calls: not compared (player_star or a game-playing baseline is missing)."


def test_means_over_seeds_and_report_columns():
    rows = [row("player_star", 30, seed=0), row("player_star", 35, seed=1), row("ocot", 33, seed=0),
            row("ocot", 33, seed=1), row("plain", 20, seed=0), row("plain", 30, seed=1)]
    table = aggregate(rows, ["plain", "player_star", "ocot"])
    by = {t["method"]: t for t in table}
    assert by["player_star"]["game_seat_calls"] == 32.5 and by["player_star"]["game_seat_input_tokens"] == 325
    line = fewer_calls_line(table)
    assert line.startswith("PLAYER* used fewer gameplay calls than each baseline: yes (player_star 32.5 per-seat "
                           "calls; cheapest baseline ocot 33: ratio 0.98; plain 25: ratio 1.30).")
    md = report_md({"scripts": ["Sin"], "lang": "en", "seeds": 2, "model": "fake", "rounds": 1, "questions": 1,
                    "table": table, "fewer_calls": line, "gameplay_cost": cost_comparison(table)})
    assert ("| seat calls | seat tokens in/out | seat calls ÷ cheapest baseline | seat calls ÷ plain | game calls |"
            in md)
    assert "| player_star | 50.0 [50.0, 50.0] (n=2 seeds) | ± 0.0 (n=2 seeds) | - | - | - | - | 32.5 | 325/0 | 0.98 | 1.30 | 100 |" in md
    assert "| plain | 50.0 [50.0, 50.0] (n=2 seeds) | ± 0.0 (n=2 seeds) | - | - | - | - | 25 | 250/0 | 0.76 | 1.00 | 100 |" in md
    assert "with the fewest (ocot)" in md and "fewer means strictly fewer (equal counts are a no)" in md


@pytest.mark.realdata
def test_compare_run_counts_the_seats_and_stores_the_comparison(tmp_path, real_data_root):
    sc = load_script(real_data_root, SIN[0])
    res = run_compare(CompareConfig(data_root=real_data_root, out=tmp_path, methods=["plain", "always_a"],
                                    scripts=[sc], seeds=1,
                      model=RuleChat(rule=polite_player(vote_for=SIN_MURDERER)), rounds=1))
    plain = next(t for t in res["table"] if t["method"] == "plain")
    # 16 calls in a one-round game of 4 (test_compare); the murderer Chief Wang (seat 2 of Zhang
    # Villager, Chief Wang, Officer Li, Hu Investigate) made 4: introduction, question, vote and
    # one answer (every player asks the first other player listed, so only Zhang Villager asks him;
    # the other three ask Zhang Villager): 16 - 4 = 12 calls by the seats plain plays
    assert plain["game_calls"] == 16 and plain["game_seat_calls"] == 12
    cell = next(c for c in res["cells"] if c["method"] == "plain")
    assert cell["game_seat_calls"] == 12
    saved = json.loads((tmp_path / "result.json").read_text())
    assert saved["gameplay_cost"]["plain_seat_calls"] == 12
    assert saved["gameplay_cost"]["ratios"] == {"plain": {"seat_calls_vs_cheapest_baseline": None,
                                                          "seat_calls_vs_plain": 1.0}}
    assert saved["table"][0]["game_seat_calls"] == 12
    assert "| plain | " in (tmp_path / "report.md").read_text()


@pytest.mark.realdata
def test_cli_prints_the_per_seat_calls(tmp_path, real_data_root, monkeypatch):
    import mas_agents.llm as llm
    from typer.testing import CliRunner
    from mas_agents.cli import app
    monkeypatch.setattr(llm, "make_chat_model", lambda spec, **kw: RuleChat(rule=polite_player(vote_for=SIN_MURDERER)))
    res = CliRunner().invoke(app, ["wellplay", "compare", "--methods", "plain,always_a", "--script", SIN[0],
                                   "--seeds", "1", "--rounds", "1", "--data-dir", str(real_data_root),
                                   "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    # The fake answers `a` like always_a, under the same shuffle (seed 0): 43 of 172 weight points =
    # 25.0 %. Derived from Sin's four final_result/<character>.csv with the csv module, not the code:
    # 3 objective / 20 reasoning / 21 relation rows weigh 3*10 + 20*5 + 21*2 = 172 (PLAYER* §3); the
    # documented shuffle of question qid "131/<character>/<csv line>" is random.Random(f"0/{qid}")
    # .shuffle(list(range(<options>))), and `a` is right where the shown option a is a key option
    # (strict scoring, also for the three multi-select type-b rows). That holds for 1 objective
    # (Officer Li line 2), 5 reasoning (Zhang Villager 5 and 8, Officer Li 9, Hu Investigate 6 and 7)
    # and 4 relation rows (Zhang Villager 12, Chief Wang 3, Hu Investigate 12 and 15):
    # 10 + 25 + 8 = 43. Eval calls: one per question of the four files, 13 + 6 + 11 + 14 = 44.
    assert "plain: 25.0 % [11.2, 41.0] (n=44 questions)" in text and "(n=44 questions), n=1 seed, no spread, game calls 16 (per-seat calls 12, ×1.00 vs plain), eval calls 44" in text
    assert "(n=44 questions), n=1 seed, no spread, game calls 0, eval calls 0" in text and "± 0.0" not in text
    saved = {t["method"]: t for t in json.loads((tmp_path / "result.json").read_text())["table"]}
    assert saved["plain"]["weighted_score"] == saved["always_a"]["weighted_score"] == pytest.approx(43 / 172)
    assert "PLAYER* gameplay calls: not compared (player_star or a game-playing baseline is missing)." in text
