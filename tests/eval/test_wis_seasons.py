"""Issue 56 item 4: ratings never pool different protocols.

Every Who-is-Spy leaderboard is keyed by a protocol fingerprint (prompts, rules, game settings,
reply format; not the agents); tournaments under another fingerprint form another season, shown
as such by ``mas spy leaderboard`` and ``/leaderboard``, and no table or rating mixes two. A
database written before fingerprints opens and shows its games as an "unknown protocol" season.
The tournaments are real ``mas spy tournament`` runs on the seeded fake model of
``scripts/fake_runs.py``; the changed prompt sentence is patched into the template at run time
(WiS has no prompt-override option), as an edit of ``mas_agents/graphs/wis/player.py`` would be.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mas_agents.game.fingerprint import protocol_diff, protocol_fingerprint, protocol_summary
from mas_agents.graphs.wis.fingerprint import legacy_wis_protocol, wis_protocol
from mas_agents.graphs.wis.leaderboard import Leaderboard
from mas_agents.graphs.wis import player
from mas_agents.graphs.wis.rating import ratings

PAIRS = {"en": [{"civilian": "tea", "spy": "coffee"}, {"civilian": "cat", "spy": "dog"}],
         "zh": [{"civilian": "茶", "spy": "咖啡"}, {"civilian": "猫", "spy": "狗"}]}
#: The sentence of the English rules prompt the second tournament changes.
OLD = "Nobody is told whether they are the spy."
NEW = "Nobody is told who the spy is, not even the spy."


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """Every model spec answers with the seeded fake of ``scripts/fake_runs.py``."""
    from mas_agents import llm
    from mas_agents import stop
    from mas_agents.game.fake_chat import make_hash_model

    monkeypatch.setattr(llm, "make_chat_model", make_hash_model)
    monkeypatch.setattr(llm, "_SHARED_REMOTE", {})
    monkeypatch.setenv("MAS_DATA_HOME", str(tmp_path / "home"))
    stop.STOP.clear()


def _data_root(tmp_path: Path) -> Path:
    root = tmp_path / "datasets"
    (root / "whoisspy").mkdir(parents=True, exist_ok=True)
    for lang, pairs in PAIRS.items():
        (root / "whoisspy" / f"pairs_{lang}.jsonl").write_text(
            "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs), encoding="utf-8")
    return root


def ok(args: list) -> str:
    from mas_agents.cli import app
    res = CliRunner().invoke(app, [str(a) for a in args], terminal_width=250)
    assert res.exit_code == 0, res.output
    return res.output


def tournament(tmp_path: Path, out: str, agents: str = "plain,plain+reasoning", lang: str = "en") -> str:
    return ok(["spy", "tournament", "--agents", agents, "--games", "2", "--players", "4", "--lang", lang,
               "--db", tmp_path / "wis.sqlite", "--data-dir", _data_root(tmp_path), "--out", tmp_path / out])


def changed_prompt(monkeypatch) -> None:
    assert OLD in player.RULES["en"]
    monkeypatch.setitem(player.RULES, "en", player.RULES["en"].replace(OLD, NEW))


# ---------------------------------------------------------------------------- the fingerprint

def test_the_fingerprint_sees_prompts_rules_settings_and_reply_format_not_agents(monkeypatch):
    base = dict(lang="en", players=6, speak_timeout=None, structured="auto")
    fp = protocol_fingerprint(wis_protocol(**base))
    assert re.fullmatch(r"p-[0-9a-f]{12}", fp) and fp == protocol_fingerprint(wis_protocol(**base))
    others = {protocol_fingerprint(wis_protocol(**{**base, k: v}))
              for k, v in (("lang", "zh"), ("players", 5), ("speak_timeout", 10.0), ("structured", "prompt"))}
    assert fp not in others and len(others) == 4
    changed_prompt(monkeypatch)
    new = wis_protocol(**base)
    assert protocol_fingerprint(new) != fp
    monkeypatch.undo()
    [d] = protocol_diff(wis_protocol(**base), new)
    assert d["field"] == "prompts.rules" and "whether they are" in d["old"] and "not even the spy" in d["new"]
    from mas_agents.graphs.wis import rules
    monkeypatch.setattr(rules, "RULES_VERSION", rules.RULES_VERSION + 1)
    assert protocol_fingerprint(wis_protocol(**base)) != fp       # a rules version bump is a new season
    summary = protocol_summary(new)
    assert any("language en, 6 players, speaking limit none, reply format (--structured) auto" in s for s in summary)
    assert any(s.startswith("prompt templates: answer.describe ") for s in summary)


def test_the_fingerprint_sees_the_judges_lines_the_fouls_and_how_a_record_quotes(monkeypatch):
    """Everything a seat reads is in the fingerprint: the judge's announcements, the foul
    sentences and how another seat's words and the host's lines are rendered (issue 56 item 4)."""
    from mas_agents import utterance
    from mas_agents.graphs.wis import rules, runtime

    base = dict(lang="en", players=6, speak_timeout=None, structured="auto")
    fp = protocol_fingerprint(wis_protocol(**base))
    changes = [(runtime.HOST["en"], "round", "Round {round}. Order: {order}."),
               (rules.FOUL_TEXT, "repeat", "said the same thing twice"),
               (utterance, "OPEN", "<<")]
    seen = set()
    for target, key, value in changes:
        if isinstance(target, dict):
            monkeypatch.setitem(target, key, value)
        else:
            monkeypatch.setattr(target, key, value)
        seen.add(protocol_fingerprint(wis_protocol(**base)))
        monkeypatch.undo()
    assert fp not in seen and len(seen) == 3
    assert protocol_fingerprint(wis_protocol(**base)) == fp
    assert any(s.startswith("judge's lines: ") and " foul.own_word " in s for s in protocol_summary(wis_protocol(**base)))


def test_a_legacy_protocol_says_what_it_does_not_know():
    inputs = legacy_wis_protocol({"lang": "zh", "players": 6, "speak_timeout": 10})
    assert inputs["prompts"] == inputs["rules"] == inputs["reply_format"] == "not recorded"
    assert protocol_fingerprint(inputs) != protocol_fingerprint(legacy_wis_protocol({"lang": "en", "players": 6,
                                                                                     "speak_timeout": 10}))
    assert protocol_summary(inputs)[0].startswith("protocol not recorded")
    diff = {d["field"]: d for d in protocol_diff(inputs, wis_protocol(lang="zh", players=6, speak_timeout=10.0))}
    assert diff["prompts"]["old"] == "not recorded" and diff["prompts"]["new"].startswith("recorded (")


# ---------------------------------------------------------------------------- two tournaments, one database

def season_ratings(board: Leaderboard, season: dict) -> dict:
    return {r["agent"]: r["games"] for r in ratings(board.games(season=season["fingerprint"]))["rows"]}


def test_a_changed_prompt_sentence_starts_a_second_season_never_pooled(fake, tmp_path, monkeypatch):
    first = tournament(tmp_path, "t1")
    changed_prompt(monkeypatch)
    second = tournament(tmp_path, "t2")      # the same command, after the prompt changed
    board = Leaderboard(tmp_path / "wis.sqlite", read_only=True)
    s1, s2 = board.seasons()
    assert [t["id"] for t in board.tournaments()] == [s1["tournaments"][0], s2["tournaments"][0]]
    assert s1["tournaments"] != s2["tournaments"]            # another protocol is another tournament
    assert [d["field"] for d in s2["changed"]] == ["prompts.rules"]
    assert (s1["games"], s2["games"]) == (2, 2)
    # each rating holds its own season's 2 games, not 4
    assert season_ratings(board, s1) == season_ratings(board, s2) == {"plain": 2, "plain+reasoning": 2}
    assert {m["agent"]: m["games"] for m in board.metrics(season=s1["fingerprint"])} == {"plain": 4, "plain+reasoning": 4}
    # the tournaments' config.json record the protocol, and the tournament table says its fingerprint
    for out, text, s in (("t1", first, s1), ("t2", second, s2)):
        cfg = json.loads((tmp_path / out / "config.json").read_text(encoding="utf-8"))
        assert cfg["protocol"]["fingerprint"] == s["fingerprint"] == protocol_fingerprint(cfg["protocol"]["inputs"])
        assert f"protocol {s['fingerprint']}" in " ".join(text.split()) and "avg score [95 %]" in text
    assert NEW in json.loads((tmp_path / "t2" / "config.json").read_text(encoding="utf-8"))["protocol"]["inputs"]["prompts"]["rules"]

    listing = ok(["spy", "leaderboard", "--db", tmp_path / "wis.sqlite"])
    assert "2 seasons, one per protocol fingerprint" in listing
    assert f"season 1 {s1['fingerprint']}: 1 tournament(s), 2 games" in listing
    assert f"season 2 {s2['fingerprint']}: 1 tournament(s), 2 games" in listing
    assert "changed from season 1: prompts.rules" in listing
    # one table per season, each counting that season's seats only (2 games x 2 seats = 4)
    tables = listing.split(f"season 2 ({s2['fingerprint']})")
    assert len(tables) == 2 and f"season 1 ({s1['fingerprint']})" in tables[0]
    for part in tables:
        rows = [l for l in part.splitlines() if re.match(r"\s+\d+\s+plain", l)]
        assert len(rows) == 2 and all(l.rstrip().endswith(" 4") for l in rows), part
    one = ok(["spy", "leaderboard", "--db", tmp_path / "wis.sqlite", "--season", "2"])
    assert f"season 2 ({s2['fingerprint']})" in one and f"season 1 ({s1['fingerprint']})" not in one.split("what changed")[0]
    assert "prompts.rules:" in one and "not even the spy" in one
    assert ok(["spy", "leaderboard", "--db", tmp_path / "wis.sqlite", "--season", s1["fingerprint"][:8],
               "--compare", "2"]).count("prompts.rules:") == 1
    from mas_agents.cli import app
    bad = CliRunner().invoke(app, ["spy", "leaderboard", "--db", str(tmp_path / "wis.sqlite"), "--season", "7"])
    assert bad.exit_code != 0 and "season '7': not found" in bad.output and "Traceback" not in bad.output


def test_a_chinese_tournament_is_its_own_season(fake, tmp_path):
    tournament(tmp_path, "en")
    tournament(tmp_path, "zh", agents="plain,plain+attack", lang="zh")
    board = Leaderboard(tmp_path / "wis.sqlite")
    s1, s2 = board.seasons()
    fields = {d["field"] for d in s2["changed"]}
    assert {"lang", "rules.max_chars", "prompts.rules", "prompts.task.describe"} <= fields
    assert "players" not in fields and "speak_timeout" not in fields
    assert season_ratings(board, s1) == {"plain": 2, "plain+reasoning": 2}
    assert season_ratings(board, s2) == {"plain": 2, "plain+attack": 2}
    assert {g["lang"] for g in board.games(season=s2["fingerprint"])} == {"zh"}
    md = ok(["spy", "leaderboard", "--db", tmp_path / "wis.sqlite", "--markdown"])
    assert md.count("| rank | agent | rank score | avg score [95 %] |") == 2 and "language zh" in md


# ---------------------------------------------------------------------------- an old database

_OLD_SCHEMA = """
CREATE TABLE tournaments (id TEXT PRIMARY KEY, config JSON NOT NULL, created TEXT NOT NULL);
CREATE TABLE games (game_id TEXT PRIMARY KEY, tournament_id TEXT NOT NULL REFERENCES tournaments(id),
    game_index INTEGER NOT NULL, record JSON NOT NULL, finished_at TEXT NOT NULL, UNIQUE (tournament_id, game_index));
CREATE TABLE players (game_id TEXT NOT NULL REFERENCES games(game_id), tournament_id TEXT NOT NULL, seat INTEGER,
    agent TEXT NOT NULL, name TEXT NOT NULL, role TEXT NOT NULL, score REAL NOT NULL, won INTEGER NOT NULL,
    votes_cast_as_civilian INTEGER NOT NULL, correct_votes INTEGER NOT NULL, abstentions INTEGER NOT NULL,
    descriptions INTEGER NOT NULL, fouls INTEGER NOT NULL, timeouts INTEGER NOT NULL DEFAULT 0,
    survival_rounds INTEGER NOT NULL, PRIMARY KEY (game_id, name));
"""


def old_database(path: Path) -> None:
    """A leaderboard as the store wrote it before protocol fingerprints: one English tournament."""
    from tests.eval.test_wis_metrics import games
    recs = games()
    conn = sqlite3.connect(path)
    conn.executescript(_OLD_SCHEMA)
    conn.execute("INSERT INTO tournaments VALUES (?, ?, ?)",
                 ("t-old", json.dumps({"agents": ["A", "B"], "lang": "en", "players": 4, "speak_timeout": None}),
                  "2026-01-01T00:00:00+00:00"))
    for i, g in enumerate(recs):
        conn.execute("INSERT INTO games VALUES (?, ?, ?, ?, ?)", (g["game_id"], "t-old", i, json.dumps(g), "2026"))
    conn.commit()
    conn.close()


def test_an_old_database_opens_and_shows_an_unknown_protocol_season(tmp_path):
    db = tmp_path / "old.sqlite"
    old_database(db)
    before = db.read_bytes()
    ro = Leaderboard(db, read_only=True)
    [s] = ro.seasons()
    assert s["label"] == "season 1 (unknown protocol)" and not s["recorded"] and s["games"] > 0
    assert s["fingerprint"] == protocol_fingerprint(legacy_wis_protocol({"lang": "en", "players": 4, "speak_timeout": None}))
    assert ro.metrics(season=s["fingerprint"]) and db.read_bytes() == before      # read-only: unchanged
    # opened for writing, it is migrated once, readably, and a new tournament is a new season
    rw = Leaderboard(db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT fingerprint FROM tournaments WHERE id = 't-old'").fetchone()[0] == s["fingerprint"]
        inputs = json.loads(conn.execute("SELECT inputs FROM protocols").fetchone()[0])
    assert inputs["prompts"] == "not recorded" and inputs["lang"] == "en"
    rw.start_tournament("t-new", {"agents": ["A"]}, wis_protocol(lang="en", players=4, speak_timeout=None))
    old, new = rw.seasons()
    assert old["fingerprint"] == s["fingerprint"] and old["tournaments"] == ["t-old"] and new["games"] == 0
    assert rw.games(season=new["fingerprint"]) == [] and len(rw.games(season=old["fingerprint"])) == s["games"]
    out = ok(["spy", "leaderboard", "--db", db])
    assert "season 1 (unknown protocol)" in out and "protocol not recorded" in out and "no games yet" in out


def test_resuming_a_tournament_under_another_protocol_is_refused(tmp_path, monkeypatch):
    board = Leaderboard(tmp_path / "wis.sqlite")
    board.start_tournament("t1", {"agents": ["A"]}, wis_protocol(lang="en", players=4, speak_timeout=None))
    changed_prompt(monkeypatch)
    with pytest.raises(ValueError, match=r"played under protocol p-\w+, this run's is p-\w+ \(differs in prompts.rules\)"):
        board.start_tournament("t1", {"agents": ["A"]}, wis_protocol(lang="en", players=4, speak_timeout=None))
