"""Tournaments, experiments and remote seats for Who is Spy, with fake models."""

import json
import socket
import threading
import time
from collections import Counter

import pytest

from mas_agents.graphs.wis.leaderboard import Leaderboard
from mas_agents.graphs.wis.tournament import ExperimentConfig, TournamentConfig, run_experiment, run_tournament, schedule
from mas_agents.graphs.wis.session import WisGameConfig, play_game
from tests.fakes import RuleChat, wis_player

PAIRS = [{"civilian": f"c{i}", "spy": f"s{i}"} for i in range(5)]


def test_schedule_balances_the_spy_role():
    plan = schedule(["a", "b", "c"], 12, 6, pairs=PAIRS, seed=1)
    spies = Counter(g["agents"][g["spy_seat"]] for g in plan)
    assert spies == {"a": 4, "b": 4, "c": 4}
    seats = Counter(a for g in plan for a in g["agents"])
    assert sum(seats.values()) == 72 and max(seats.values()) - min(seats.values()) <= 2
    assert all(len(g["agents"]) == 6 for g in plan)
    # pairs drawn without replacement until used up
    assert len({g["pair"]["civilian"] for g in plan[:5]}) == 5
    assert plan == schedule(["a", "b", "c"], 12, 6, pairs=PAIRS, seed=1)  # deterministic


def test_schedule_for_experiments():
    atk = schedule(["x", "o"], 4, 6, pairs=PAIRS, spy_agent="x")
    assert all(g["agents"][g["spy_seat"]] == "x" and g["agents"].count("x") == 1 for g in atk)
    rea = schedule(["x", "o"], 4, 6, pairs=PAIRS, civilians_only="x")
    assert all(g["agents"][g["spy_seat"]] == "o" and g["agents"].count("x") == 1 for g in rea)


def test_tournament_resumes_after_interrupt_and_ranks(tmp_path):
    fake = RuleChat(rule=wis_player())
    calls = []

    def flaky_play(out, config):
        calls.append(config.game_id)
        if len(calls) == 4:
            raise KeyboardInterrupt("simulated interrupt in game 4")
        return play_game(out, config)

    cfg = TournamentConfig(agents=["plain", "plain+reasoning", "plain+attack"], games=6, pairs=PAIRS, model=fake,
                           db=tmp_path / "wis.sqlite", out=tmp_path / "games")
    with pytest.raises(KeyboardInterrupt):
        run_tournament(cfg, play=flaky_play)
    board = Leaderboard(tmp_path / "wis.sqlite")
    tid = board.tournaments()[0]["id"]
    assert board.finished_indices(tid) == {0, 1, 2}
    ticks = []
    res = run_tournament(cfg, play=flaky_play, tick=ticks.append)
    assert res["played"] == 3 and res["skipped"] == 3 and len(calls) == 7  # games 3,4,5 only
    assert ticks == [0, 1, 2, 3, 4, 5]  # stored games count towards progress too
    games = board.games(tid)
    assert len(games) == 6
    for m in res["metrics"]:
        scores = [p_score for g in games for p, p_score in g["scores"].items()
                  if next(x for x in g["players"] if x["name"] == p)["agent"] == m["agent"]]
        assert m["rank_score"] == pytest.approx(100 + sum(scores) - len(scores))
        assert m["games_as_spy"] == 2
    # the fake civilians always find the spy in round 1
    assert all(g["outcome"]["spy_eliminated_round"] == 1 for g in games)


def test_experiment_attack_makes_gullible_civilians_foul(tmp_path, real_data_root):
    import mas_agents.graphs.wis.tournament as wt
    res = run_experiment(ExperimentConfig(experiment="attack", subject="plain", others="plain", games=2,
                                          data_root=real_data_root, model=RuleChat(rule=wis_player(gullible=True)),
                                          db=tmp_path / "wis.sqlite", out=tmp_path / "exp"))
    base, atk = res["rows"]
    assert base["arm"] == "baseline" and atk["spec"] == "plain+attack"
    assert base["games"] == atk["games"] == 2 and base["games_as_spy"] == 2
    # exactly the gullible civilians who speak after the attacking spy foul, on their own word
    after_spy = []
    for g in sorted((tmp_path / "exp" / "attack" / "games").glob("*/result.json")):
        rec = json.loads(g.read_text(encoding="utf-8"))
        first = rec["rounds"][0]
        spy = rec["outcome"]["spy"]
        later = first["order"][first["order"].index(spy) + 1:]
        assert {d["player"]: d["foul"] for d in first["descriptions"] if d["foul"]} == dict.fromkeys(later, "own_word")
        after_spy.append(len(later))
    assert len(after_spy) == 2 and sum(after_spy) > 0
    assert base["others_foul_rate"] == 0 and atk["others_foul_rate"] == pytest.approx(sum(after_spy) / 10)
    # a spy whose attack leaves fewer than 3 players wins (few_players); else the rest vote it out
    assert atk["win_rate_spy"] == pytest.approx(sum(n >= 4 for n in after_spy) / 2) and base["win_rate_spy"] == 0.0
    assert "| attack | plain+attack | 2 |" in res["table"]
    # every rate has its n and an interval
    for line in res["table"].splitlines()[2:4]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for c in cells[3:5] + cells[6:]:
            assert c == "-" or c.startswith("- (n=0") or ("] (n=" in c and " %" in c), line
        assert cells[5].endswith("(n=2 games)") and "[" in cells[5], line   # avg score, bootstrap over games
    assert len(base["scores"]) == 2 and sum(base["scores"]) / 2 == pytest.approx(base["avg_score"])
    with pytest.raises(ValueError, match="already has the attack block"):
        wt.run_experiment(ExperimentConfig(experiment="attack", subject="plain+attack", others="plain", games=1,
                                           data_root=real_data_root))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_game_with_two_remote_seats_served_over_http(tmp_path):
    import uvicorn

    from mas_agents.game.seats import Seats
    from mas_agents.graphs.wis.session import PlayerFactory
    from mas_agents.call_log import CallRecorder
    from mas_agents.graphs.wis.protocol import make_app

    servers = []
    urls = []
    for _ in range(2):
        factory = PlayerFactory(Seats(CallRecorder(None), RuleChat(rule=wis_player())))
        app = make_app(lambda f=factory: f("plain", "civilian"), "fake")
        port = _free_port()
        srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        threading.Thread(target=srv.run, daemon=True).start()
        servers.append(srv)
        urls.append(f"http://127.0.0.1:{port}")
    for _ in range(100):
        if all(s.started for s in servers):
            break
        time.sleep(0.05)
    try:
        agents = ["plain", urls[0], "plain", urls[1], "plain", "plain"]
        rec = play_game(tmp_path, WisGameConfig(agents=agents, pair={"civilian": "tea", "spy": "coffee"},
                                                model=RuleChat(rule=wis_player()), spy_seat=0, first_speaker=0))
    finally:
        for s in servers:
            s.should_exit = True
    d = {x["player"]: x for x in rec["rounds"][0]["descriptions"]}
    assert d["Player 2"]["text"].startswith("hint-") and d["Player 4"]["text"].startswith("hint-")
    assert rec["rounds"][0]["votes"]["Player 2"] == "Player 1"   # the remote civilian found the spy
    assert rec["outcome"]["winner"] == "civilians"
    assert rec["players"][1]["agent"] == urls[0]


def test_experiment_table_prints_n_and_a_wilson_interval_beside_every_rate():
    """"win 100.0 %" at n=2 games is not a finding: each rate gets its n and Wilson 95 % interval,
    and the table states the chance level of a random first-round vote."""
    from mas_agents.graphs.wis.experiment_table import experiment_markdown
    row = {"arm": "baseline", "spec": "plain", "games": 2, "wins": 2, "win_rate": 1.0, "avg_score": 3.0,
           "correct_votes": 5, "votes_cast_as_civilian": 10, "vote_accuracy": 0.5,
           "fouls": 0, "descriptions": 10, "foul_rate": 0.0,
           "others_fouls": 0, "others_descriptions": 0, "others_foul_rate": None,
           "others_correct_votes": 0, "others_votes": 10, "others_vote_accuracy": 0.0}
    md = experiment_markdown("reasoning", [row], players=6)
    # Wilson 95 %: 2 of 2 [34.2, 100]; 5 of 10 [23.7, 76.3]; 0 of 10 [0, 27.8] (tests/eval/test_stats.py)
    assert ("| baseline | plain | 2 | 50.0 % [23.7, 76.3] (n=10 votes) | 0.0 % [0.0, 27.8] (n=10 descriptions) | "
            "3.00 (n=2 games) | 100.0 % [34.2, 100.0] (n=2 games) | - (n=0 descriptions) | "
            "0.0 % [0.0, 27.8] (n=10 votes) |") in md
    assert "among the 5 other players in the first round finds the spy with probability 1/5 = 20.0 %" in md
    # with the subject's per-game scores the average score gets its bootstrap interval over games
    md = experiment_markdown("reasoning", [dict(row, scores=[0.0, 6.0], avg_score=3.0)], players=6)
    assert "| 3.00 [0.00, 6.00] (n=2 games) |" in md
    md = experiment_markdown("reasoning", [dict(row, scores=[3.0], games=1, wins=1, avg_score=3.0)], players=6)
    assert "| 3.00 [no interval, n=1 game] |" in md
