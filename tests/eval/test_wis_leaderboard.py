"""SQLite tournament store, resume, atomic game inserts and leaderboard rendering."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from mas_agents.graphs.wis.leaderboard import Leaderboard, default_db_path
from mas_agents.graphs.wis.leaderboard_text import (
    HEADERS,
    format_leaderboard,
    leaderboard_markdown,
    leaderboard_table,
)
from mas_agents.graphs.wis.metrics import agent_metrics
from tests.eval.test_wis_metrics import A, B, C, EXPECTED, games

CONFIG = {"players": 4, "lang": "en", "agents": [A, B, C], "llm": {"model": "tiny", "temperature": 0.7}}


@pytest.fixture
def lb(tmp_path) -> Leaderboard:
    board = Leaderboard(tmp_path / "db" / "wis.sqlite")
    board.start_tournament("t1", CONFIG)
    return board


def _count(lb: Leaderboard, table: str) -> int:
    with sqlite3.connect(lb.path) as conn:
        return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


# ---------------------------------------------------------------------------- paths

def test_default_db_path_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("MAS_DATA_HOME", str(tmp_path / "mas"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_db_path() == tmp_path / "mas" / "wis.sqlite"
    assert (tmp_path / "mas").is_dir()
    monkeypatch.delenv("MAS_DATA_HOME")
    assert default_db_path() == tmp_path / "xdg" / "mas-agents" / "wis.sqlite"
    assert (tmp_path / "xdg" / "mas-agents").is_dir()
    monkeypatch.setenv("XDG_DATA_HOME", "")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_db_path() == tmp_path / "home" / ".local" / "share" / "mas-agents" / "wis.sqlite"
    assert (tmp_path / "home" / ".local" / "share" / "mas-agents").is_dir()


def test_leaderboard_without_path_uses_default(tmp_path, monkeypatch):
    monkeypatch.setenv("MAS_DATA_HOME", str(tmp_path / "data"))
    assert Leaderboard().path == tmp_path / "data" / "wis.sqlite"
    assert (tmp_path / "data" / "wis.sqlite").exists()


def test_wal_mode_and_tables(lb):
    with sqlite3.connect(lb.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"tournaments", "games", "players"} <= tables


# ---------------------------------------------------------------------------- tournaments

def test_start_tournament_same_config_is_a_noop(lb):
    lb.start_tournament("t1", dict(CONFIG, agents=(A, B, C)))  # tuple == list after JSON
    assert lb.config("t1") == CONFIG
    assert [t["id"] for t in lb.tournaments()] == ["t1"]
    assert lb.config("nope") is None


def test_config_mismatch_names_the_field(lb):
    with pytest.raises(ValueError, match=r"'t1'.*lang: stored 'en', given 'zh'"):
        lb.start_tournament("t1", dict(CONFIG, lang="zh"))
    with pytest.raises(ValueError, match=r"llm\.temperature"):
        lb.start_tournament("t1", dict(CONFIG, llm={"model": "tiny", "temperature": 0.0}))
    with pytest.raises(ValueError, match=r"seed: stored '<missing>', given 3"):
        lb.start_tournament("t1", dict(CONFIG, seed=3))
    assert lb.config("t1") == CONFIG  # unchanged


def test_add_game_needs_a_started_tournament(lb):
    with pytest.raises(ValueError, match="unknown tournament"):
        lb.add_game("t2", 0, games()[0])
    assert _count(lb, "games") == 0


# ---------------------------------------------------------------------------- games

def test_add_games_resume_and_metrics(lb):
    g1, g2, g3 = games()
    assert lb.finished_indices("t1") == set()
    assert lb.add_game("t1", 0, g1) and lb.add_game("t1", 2, g3)
    assert lb.finished_indices("t1") == {0, 2}  # the run was interrupted before game 1
    todo = [i for i in range(3) if i not in lb.finished_indices("t1")]
    assert todo == [1]
    assert lb.add_game("t1", 1, g2)
    assert lb.finished_indices("t1") == {0, 1, 2}
    assert [g["game_id"] for g in lb.games("t1")] == ["g1", "g2", "g3"]  # by index
    assert lb.games("t1") == [g1, g2, g3]  # records round-trip
    ms = lb.metrics("t1")
    # agent_metrics, plus the bootstrap interval of the mean score per game (issue 56 item 4)
    assert [{k: v for k, v in m.items() if k not in ("avg_score_low", "avg_score_high")} for m in ms] == agent_metrics([g1, g2, g3])
    for m in ms:
        assert m["avg_score_low"] <= m["avg_score"] <= m["avg_score_high"] and m["avg_score_low"] < m["avg_score_high"]
    assert [m["agent"] for m in ms] == [C, B, A]
    for m in ms:
        assert m["rank_score"] == pytest.approx(EXPECTED[m["agent"]]["rank_score"])
        assert m["rank_score"] == pytest.approx(100 + m["total_score"] - m["games"])
    players = lb.players("t1")
    assert len(players) == 4 + 5 + 4 == _count(lb, "players")
    assert [(p["game_id"], p["name"], p["agent"], p["role"], p["score"], p["won"]) for p in players[:2]] == [
        ("g1", "Player 1", A, "civilian", 6.0, True), ("g1", "Player 2", B, "spy", 1.0, False)]


def test_add_same_game_twice_is_a_noop(lb):
    g1 = games()[0]
    assert lb.add_game("t1", 0, g1) is True
    assert lb.add_game("t1", 0, g1) is False
    assert lb.add_game("t1", 5, g1) is False  # same game_id under another index: still a no-op
    assert _count(lb, "games") == 1 and _count(lb, "players") == 4
    assert lb.finished_indices("t1") == {0}


def test_index_taken_by_another_game_raises(lb):
    g1, g2, _ = games()
    lb.add_game("t1", 0, g1)
    with pytest.raises(ValueError, match="already stored as 'g1'"):
        lb.add_game("t1", 0, g2)
    assert _count(lb, "games") == 1 and _count(lb, "players") == 4


def test_exception_mid_add_leaves_no_partial_game(lb, monkeypatch):
    real = Leaderboard._insert_players

    def insert_some_then_fail(conn, tid, rows):
        real(conn, tid, rows[:2])  # after the games row and two player rows
        assert conn.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 1
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(Leaderboard, "_insert_players", staticmethod(insert_some_then_fail))
    with pytest.raises(RuntimeError, match="disk on fire"):
        lb.add_game("t1", 0, games()[0])
    assert _count(lb, "games") == 0 and _count(lb, "players") == 0
    assert lb.finished_indices("t1") == set()
    monkeypatch.undo()
    assert lb.add_game("t1", 0, games()[0]) is True  # the retry stores the whole game
    assert _count(lb, "games") == 1 and _count(lb, "players") == 4


def test_writes_share_one_connection_and_a_failed_write_drops_it(lb, monkeypatch):
    import mas_agents.graphs.wis.leaderboard as mod

    opened = []
    real_connect = sqlite3.connect
    monkeypatch.setattr(mod.sqlite3, "connect", lambda *a, **k: opened.append(1) or real_connect(*a, **k))
    g1, g2, g3 = games()
    lb.add_game("t1", 0, g1)
    lb.add_game("t1", 1, g2)
    assert len(opened) == 0                                   # start_tournament's connection, reused
    with pytest.raises(ValueError, match="already stored"):
        lb.add_game("t1", 1, g3)                              # rolled back, the connection dropped
    lb.add_game("t1", 2, g3)
    assert len(opened) == 1 and lb.finished_indices("t1") == {0, 1, 2}
    lb.close()
    lb.close()                                                # twice: nothing to close
    assert _count(lb, "games") == 3


def test_invalid_record_is_rejected_before_writing(lb):
    bad = games()[0]
    bad["players"][0]["role"] = "spy"
    with pytest.raises(ValueError, match="exactly one spy"):
        lb.add_game("t1", 0, bad)
    assert _count(lb, "games") == 0


def test_tournaments_are_separate(lb):
    g1, g2, g3 = games()
    lb.start_tournament("t2", {"players": 5})
    lb.add_game("t1", 0, g1)
    lb.add_game("t2", 0, g2)
    lb.add_game("t2", 1, g3)
    assert lb.finished_indices("t1") == {0} and lb.finished_indices("t2") == {0, 1}
    assert [g["game_id"] for g in lb.games("t2")] == ["g2", "g3"]
    assert [g["game_id"] for g in lb.games()] == ["g1", "g2", "g3"]
    assert [{k: v for k, v in m.items() if k not in ("avg_score_low", "avg_score_high")}
            for m in lb.metrics()] == agent_metrics([g1, g2, g3])
    assert {t["id"]: t["games"] for t in lb.tournaments()} == {"t1": 1, "t2": 2}


def test_reopen_existing_database(lb):
    lb.add_game("t1", 0, games()[0])
    again = Leaderboard(lb.path)
    again.start_tournament("t1", CONFIG)
    assert again.finished_indices("t1") == {0}


def test_concurrent_adds_from_threads(tmp_path):
    board = Leaderboard(tmp_path / "wis.sqlite")
    board.start_tournament("t", {})
    base = games()
    errors = []

    def worker(i):
        try:
            g = dict(base[i % 3], game_id=f"g{i}")
            board.add_game("t", i, g)
            board.add_game("t", i, g)
            board.metrics("t")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert board.finished_indices("t") == set(range(12))
    assert len(board.players("t")) == 4 * 4 + 4 * 5 + 4 * 4


# ---------------------------------------------------------------------------- rendering

def test_format_leaderboard_plain_text():
    text = format_leaderboard(agent_metrics(games()))
    lines = text.splitlines()
    header = next(l for l in lines if "rank score" in l)
    for h in HEADERS:
        assert h in header
    body = [l for l in lines if l.strip() and l.split()[0].isdigit()]
    assert [l.split()[:2] for l in body] == [["1", C], ["2", B], ["3", A]]
    assert body[0].split()[2:] == ["110.0", "3.50", "100.0%", "66.7%", "75.0%", "50.0%", "16.7%",
                                   "0.0%", "1.00", "4"]
    assert body[2].split()[2:] == ["104.0", "2.00", "0.0%", "66.7%", "50.0%", "42.9%", "0.0%",
                                   "0.0%", "1.75", "4"]
    assert "\x1b" not in text  # no colour codes


def test_none_shows_as_dash_and_ties_share_a_rank():
    ms = agent_metrics([games()[2]])  # A was only the spy: civilian rates are None
    md = leaderboard_markdown(ms)
    lines = md.splitlines()
    assert lines[0] == "| " + " | ".join(HEADERS) + " |"
    assert lines[1].startswith("|---:|---|---:|")
    assert lines[2] == f"| 1 | {B} | 108.0 | 5.00 | - | 100.0% | 100.0% | 100.0% | 0.0% | 0.0% | 1.00 | 2 |"
    assert lines[4] == f"| 3 | {A} | 96.0 | -3.00 | 0.0% | - | 0.0% | - | 0.0% | 0.0% | 0.00 | 1 |"
    text = format_leaderboard(ms)
    row_a = next(l for l in text.splitlines() if A in l.split())
    assert row_a.split() == ["3", A, "96.0", "-3.00", "0.0%", "-", "0.0%", "-", "0.0%", "0.0%", "0.00", "1"]
    tied = [dict(m, rank_score=100.0) for m in ms]
    assert [l.split(" | ")[0] for l in leaderboard_markdown(tied).splitlines()[2:]] == ["| 1"] * 3


def test_markdown_escapes_pipes_and_table_is_rich():
    ms = [dict(m, agent="a|b") for m in agent_metrics([games()[2]])[:1]]
    assert "a\\|b" in leaderboard_markdown(ms)
    from rich.table import Table
    table = leaderboard_table(agent_metrics(games()), title="t1")
    assert isinstance(table, Table) and table.row_count == 3
    assert [c.header for c in table.columns] == list(HEADERS)
    assert format_leaderboard([]).strip()  # headers only, no crash
    assert leaderboard_markdown([]).count("\n") == 2
