"""Issue 46 item 6 and the CLI's small items: the WiS speaking limit is lifted for seats on the
embedded model by one rule in every command that plays Who is Spy, the game's one-line summary
names fouls in words, and the CLI refuses bad input in one line (a pair of one word twice, a
missing leaderboard file, an unknown language), replays a stopped game and says where other
games replay, labels its progress lines, and estimates the calls left without rising."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mas_agents.graphs.wis.replay_html import replay_html, write_replay
from mas_agents.graphs.wis.session import PlayerFactory, WisGameConfig, parse_pair, play_game
from mas_agents.graphs.wis import rules
from mas_agents.cli import app
from tests.fakes import RuleChat, wis_player

runner = CliRunner()
PAIRS = [{"civilian": "tea", "spy": "coffee"}, {"civilian": "cat", "spy": "dog"},
         {"civilian": "river", "spy": "lake"}]
#: The patched speaking limit (instead of 10 s) and how long Player 1 takes to describe in round 1.
LIMIT, SLOW = 0.25, 0.6


# ------------------------------------------------------------------------------- the rule

def test_speak_limit_rule():
    from mas_agents.graphs.wis.session import speak_limit
    assert rules.SPEAK_TIMEOUT == 10.0   # WiS paper, Appendix A "Detailed rules"
    # the embedded model at any seat lifts the limit for the table
    assert speak_limit(["plain", "plain+reasoning"], "local") is None
    assert speak_limit(["plain@local:/m.gguf", "plain"], "openai:m") is None
    # remote models and WiS-protocol agents keep the paper's 10 s
    assert speak_limit(["plain", "plain@openai:x"], "openai:m") == 10.0
    assert speak_limit(["http://127.0.0.1:7860"], "local") == 10.0
    # a person has minutes; a number given is kept, 0 or None is no limit
    assert speak_limit(["human", "plain"], "local") == 120.0
    assert speak_limit(["plain"], "local", 7) == 7.0
    assert speak_limit(["plain"], "openai:m", 0) is None and speak_limit(["plain"], "openai:m", None) is None
    with pytest.raises(ValueError, match="--speak-timeout"):
        speak_limit(["plain"], "local", -1)


# ------------------------------------------------------------------- every command, one rule

class SlowFirst:
    """A fake player (tests.fakes.wis_player) that takes SLOW seconds for its round-1 description
    when it sits at Player 1, longer than the patched limit."""

    def __init__(self, inner):
        self.inner, self.label, self.name = inner, inner.label, None

    def perceive(self, req):
        if req["status"] == "start":
            self.name = req["name"]
        self.inner.perceive(req)

    def interact(self, req, timeout=None):
        if req["status"] == "round" and req["round"] == 1 and self.name == "Player 1":
            time.sleep(SLOW)
        return self.inner.interact(req, timeout)


@pytest.fixture
def fake_seats(monkeypatch):
    """Every seat built from a spec plays the fake player (its model spec, e.g. ``local``, is
    kept in the record but never loaded), and the paper's limit is LIMIT seconds."""
    from mas_agents.game.seats import Seats
    from mas_agents.call_log import CallRecorder
    real_call = PlayerFactory.__call__

    def call(self, spec, role):
        fake = PlayerFactory(Seats(CallRecorder(None), RuleChat(rule=wis_player())), lang=self.lang)
        return SlowFirst(real_call(fake, "plain", role))
    monkeypatch.setattr(PlayerFactory, "__call__", call)
    monkeypatch.setattr(rules, "SPEAK_TIMEOUT", LIMIT, raising=False)


def _data_root(tmp_path: Path) -> Path:
    root = tmp_path / "datasets"
    (root / "whoisspy").mkdir(parents=True)
    (root / "whoisspy" / "pairs_en.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PAIRS), encoding="utf-8")
    return root


def _command(name: str, model: str, tmp_path: Path) -> list[str]:
    out, root, db = str(tmp_path / "run"), str(_data_root(tmp_path)), str(tmp_path / "wis.sqlite")
    return {
        "spy play": ["spy", "play", "--agents", "plain,plain+reasoning", "--players", "4", "--pair", "tea/coffee",
                     "--model", model, "--out", out],
        "spy tournament": ["spy", "tournament", "--agents", "plain,plain+reasoning", "--games", "2", "--players", "4",
                           "--model", model, "--db", db, "--out", out, "--data-dir", root],
        "spy experiment": ["spy", "experiment", "--kind", "reasoning", "--subject", "plain", "--others", "plain",
                           "--games", "1", "--players", "4", "--model", model, "--db", db, "--out", out,
                           "--data-dir", root],
        "game play wis": ["game", "play", "wis", "--agents", "plain,plain,plain,plain", "--set",
                          'pair={"civilian": "tea", "spy": "coffee"}', "--model", model, "--out", out],
        "ablate": ["ablate", "--bench", "spy", "--games", "1", "--model", model, "--out", out, "--data-dir", root],
        "reproduce wis": ["reproduce", "wis", "--model", model, "--limit", "1", "--out", out, "--data-dir", root],
    }[name]


def _games(tmp_path: Path) -> list[tuple[dict, dict]]:
    """(config.json, result.json) of every WiS game the command wrote."""
    found = []
    for cfg in sorted((tmp_path / "run").rglob("config.json")):
        c = json.loads(cfg.read_text(encoding="utf-8"))
        if c.get("kind") == "wis":
            found.append((c, json.loads((cfg.parent / "result.json").read_text(encoding="utf-8"))))
    return found


def _timeouts(record: dict) -> list[str]:
    return [d["player"] for r in record["rounds"] for d in r["descriptions"] if d["foul"] == "timeout"]


COMMANDS = ["spy play", "spy tournament", "spy experiment", "game play wis", "ablate", "reproduce wis"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_wis_command_lifts_the_limit_for_local_seats(command, fake_seats, tmp_path, monkeypatch):
    import mas_agents.graphs.wis.session as ws
    rule, asked = getattr(ws, "speak_limit", None), []

    def recorded(agents, model="local", requested="auto"):   # the one rule, called by every command
        asked.append(requested)
        return rule(agents, model, requested)
    monkeypatch.setattr(ws, "speak_limit", recorded, raising=False)
    r = runner.invoke(app, _command(command, "local", tmp_path))
    assert r.exit_code == 0, r.output
    games = _games(tmp_path)
    assert games and asked
    for config, record in games:
        assert config["speak_timeout"] is None, (command, config["game_id"])
        assert _timeouts(record) == [], (command, config["game_id"])   # Player 1 took SLOW > LIMIT seconds


@pytest.mark.parametrize("command", ["spy play", "spy tournament", "spy experiment", "game play wis"])
def test_remote_seats_keep_the_limit(command, fake_seats, tmp_path):
    r = runner.invoke(app, _command(command, "openai:stub", tmp_path))
    assert r.exit_code == 0, r.output
    games = _games(tmp_path)
    assert games
    for config, record in games:
        assert config["speak_timeout"] == LIMIT
        assert "Player 1" in _timeouts(record)
    if command == "spy play":   # the summary line names the foul in words
        assert "did not answer in time: Player 1" in " ".join(r.output.split())
        assert f"speaking limit {LIMIT:g} s" in r.output


def test_play_summary_says_the_limit_is_lifted(fake_seats, tmp_path):
    r = runner.invoke(app, _command("spy play", "local", tmp_path))
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "no speaking limit (a seat plays on the embedded model)" in text
    assert "did not answer in time" not in text


def test_game_summary_names_fouls_and_timeouts_in_words():
    from mas_agents.graphs.wis.replay_html import game_summary
    names = [f"Player {i}" for i in range(1, 7)]
    descs = [("Player 1", "my word is tea", "own_word"), ("Player 2", "", "timeout"), ("Player 3", "warm drink", None),
             ("Player 4", "", "timeout"), ("Player 5", "", "timeout"), ("Player 6", "a cup", None)]
    record = {"players": [{"name": n} for n in names],
              "rounds": [{"round": 1, "descriptions": [{"player": p, "text": t, "foul": f} for p, t, f in descs],
                          "fouled": ["Player 1", "Player 2", "Player 4", "Player 5"], "votes": {}}],
              "outcome": {"winner": "spy", "spy": "Player 3", "spy_eliminated_round": None,
                          "end_reason": "few_players", "rounds_played": 1},
              "vote_timeouts": 0}
    assert game_summary(record) == (
        "the spy wins after round 1: fewer than 3 players were left, no vote was held; 4 of 6 seats fouled "
        "(did not answer in time: Player 2, Player 4, Player 5; said their own word: Player 1); spy Player 3")
    record["rounds"][0].update(votes={"Player 3": "Player 6", "Player 6": "Player 3"}, voted_out=None)
    record["vote_timeouts"] = 1
    assert ", voted out: no one;" in game_summary(record)
    assert "; 1 late vote counted as abstention;" in game_summary(record)


# ------------------------------------------------------------------------------- input checks

@pytest.mark.parametrize("text", ["tea/tea", "Tea/ tea", "TEA/tea!"])
def test_a_pair_of_one_word_is_refused(text, tmp_path):
    with pytest.raises(ValueError, match="must differ"):
        parse_pair(text)
    out = tmp_path / "g"
    r = runner.invoke(app, ["spy", "play", "--pair", text, "--out", str(out)])
    assert r.exit_code == 2 and r.output.startswith("error: --pair") and "must differ" in r.output
    assert len(r.output.strip().splitlines()) == 1 and not out.exists()


def test_the_game_itself_refuses_one_word_for_both_roles(tmp_path):
    with pytest.raises(ValueError, match="must differ"):
        play_game(tmp_path / "g", WisGameConfig(agents=["plain"] * 3, pair={"civilian": "tea", "spy": "Tea"},
                                                model=RuleChat(rule=wis_player())))
    assert not (tmp_path / "g" / "events.jsonl").exists()


def test_unknown_language_is_named_not_a_file(tmp_path):
    root = _data_root(tmp_path)
    for args in (["spy", "tournament", "--agents", "plain", "--games", "1", "--lang", "fr", "--data-dir", str(root),
                  "--db", str(tmp_path / "x.sqlite")],
                 ["spy", "play", "--lang", "fr", "--pair", "tea/coffee", "--out", str(tmp_path / "g")],
                 ["spy", "play", "--lang", "fr", "--data-dir", str(root), "--out", str(tmp_path / "g")]):
        r = runner.invoke(app, args)
        assert r.exit_code == 2, r.output
        assert "error: --lang 'fr': Who is Spy is played in en or zh" in r.output
        assert "pairs_fr" not in r.output
    assert not (tmp_path / "g").exists()


def test_wellplay_unknown_language_and_script_list(tmp_path):
    from mas_agents.game.data import DataError
    from mas_agents.graphs.mmg.dataset import find_script
    with pytest.raises(ValueError, match=r"^--lang 'fr': WellPlay scripts are in en or zh$"):
        find_script(tmp_path, "Sin", "fr")
    for name, dirname in (("Sin", "Sin (4 people closed)"), ("Manna", "Manna (6 people)")):
        d = tmp_path / "wellplay" / "en" / dirname / "json"
        d.mkdir(parents=True)
        (d / "script_info.json").write_text(json.dumps({"script_name": name}), encoding="utf-8")
    with pytest.raises(DataError) as exc:
        find_script(tmp_path, "Nope", "en")
    msg = str(exc.value)
    assert msg == "unknown WellPlay script 'Nope' (en); give a name or an id: Sin (131), Manna (1849)"
    assert msg.count("Sin") == 1 and msg.count("Manna") == 1


def test_leaderboard_refuses_a_missing_database(tmp_path, monkeypatch):
    typo = tmp_path / "TYPO.sqlite"
    r = runner.invoke(app, ["spy", "leaderboard", "--db", str(typo)])
    assert r.exit_code == 2 and r.output.startswith(f"error: --db {typo}: no such file")
    assert not typo.exists()
    monkeypatch.setenv("MAS_DATA_HOME", str(tmp_path / "home"))
    r = runner.invoke(app, ["spy", "leaderboard"])
    assert r.exit_code == 1 and "no leaderboard yet" in r.output
    assert not (tmp_path / "home" / "wis.sqlite").exists()


# ------------------------------------------------------------------------------------ replays

def _finished_game(tmp_path: Path) -> Path:
    d = tmp_path / "game"
    play_game(d, WisGameConfig(agents=["plain"] * 4, pair={"civilian": "tea", "spy": "coffee"},
                               model=RuleChat(rule=wis_player()), spy_seat=1, first_speaker=0))
    return d


def test_replay_of_a_stopped_game_shows_its_rounds_so_far(tmp_path):
    from mas_agents.graphs.wis.replay_html import game_summary
    from mas_agents.graphs.wis.record import record_from_events
    d = _finished_game(tmp_path)
    events = [json.loads(x) for x in (d / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    # stopped during round 1's vote: its descriptions are on record, nothing after
    cut = [e for e in events if e["round"] <= 1 and e["kind"] not in ("vote_result", "outcome", "vote")]
    (d / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in cut), encoding="utf-8")
    (d / "result.json").unlink()
    r = runner.invoke(app, ["spy", "replay", str(d)])
    assert r.exit_code == 0, r.output
    page = (d / "replay.html").read_text(encoding="utf-8")
    assert "The game stopped before it ended" in page and "Round 1" in page and "Round 2" not in page
    assert "stopped before this round's vote was counted" in page and "No vote was held" not in page
    said = [e["content"] for e in cut if e["kind"] == "describe"]
    said_by = [e["actor"] for e in cut if e["kind"] == "describe"]
    assert len(said) == 4 and all(s in page for s in said)
    assert "Player 2" in page and "coffee" in page   # the seats, and the words under the reveal
    record = record_from_events(cut, json.loads((d / "config.json").read_text(encoding="utf-8")))
    assert [p["role"] for p in record["players"]] == ["civilian", "spy", "civilian", "civilian"]
    assert game_summary(record).startswith("the game stopped in round 1 before it ended, no vote was held")
    mid = [e for e in cut if not (e["kind"] == "describe" and e["actor"] == said_by[-1])]   # the last speaker never spoke
    assert record_from_events(mid)["rounds"][0]["stopped"] == "speaking"
    assert "before every player had described" in replay_html(record_from_events(mid))


def test_replay_of_another_game_says_where_it_replays(tmp_path):
    d = tmp_path / "runs" / "mmg-sin"
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps({"kind": "mmg"}), encoding="utf-8")
    (d / "result.json").write_text(json.dumps({"accuse": {}}), encoding="utf-8")
    r = runner.invoke(app, ["spy", "replay", str(d)])
    assert r.exit_code == 2
    text = " ".join(r.output.split())
    assert len(r.output.strip().splitlines()) <= 2   # one line (rich may wrap a long path)
    assert text.startswith(f"error: {d} holds a murder mystery game; mas spy replay draws Who-is-Spy games only")
    assert f"mas serve --runs {d.parent.resolve()}" in text and "/replay/mmg-sin" in text
    with pytest.raises(ValueError, match="not a Who-is-Spy game"):
        write_replay(d)
    bench = tmp_path / "runs" / "magic-bench"   # a run of many games: no replay of its own
    bench.mkdir()
    (bench / "config.json").write_text(json.dumps({"kind": "magic-bench", "challenger": "plain"}), encoding="utf-8")
    r = runner.invoke(app, ["spy", "replay", str(bench)])
    assert r.exit_code == 2, r.output
    text = " ".join(r.output.split())
    assert text.startswith(f"error: {bench} holds a 'magic-bench' run, not a single game; mas spy replay draws "
                           f"Who-is-Spy games only: open it in the browser: mas serve --runs {bench.parent.resolve()}")


# ------------------------------------------------------------------------------ progress lines

def test_tournament_and_experiment_progress_lines_name_the_game(fake_seats, tmp_path):
    r = runner.invoke(app, _command("spy tournament", "local", tmp_path))
    assert r.exit_code == 0, r.output
    assert "tournament: 1/2 done (game 1, games/g0000)" in r.output
    assert "done (0)" not in r.output and "done (1)" not in r.output
    r = runner.invoke(app, _command("spy experiment", "local", tmp_path / "exp"))
    assert r.exit_code == 0, r.output
    assert "reasoning experiment: 1/2 done (baseline game 1)" in r.output
    assert "reasoning experiment: 2/2 done (reasoning game 1)" in r.output


def test_calls_left_estimate_ignores_reused_cells():
    from mas_agents.eval.reproduce.common import Progress
    lines = []
    p = Progress(10, lines.append)
    for _ in range(5):
        p.done("reused", 0)   # finished by an earlier run
    for _ in range(3):
        p.done("played", 10)
    left = [int(x.split("; ~")[1].split(" ")[0]) for x in lines[5:]]
    assert left == [40, 30, 20]   # 10 calls a played cell × the cells left; it never rises


@pytest.mark.realdata
def test_wellplay_eval_of_one_run_reports_no_std(real_data_root, tmp_path):
    r = runner.invoke(app, ["wellplay", "eval", "--method", "always_a", "--script", "Sin", "--no-shuffle",
                            "--out", str(tmp_path / "e"), "--data-dir", str(real_data_root)])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "one run, so no std over runs" in text and "std 0.0" not in text


def test_game_play_prints_a_bracketed_out_path_whole(fake_seats, tmp_path):
    out = tmp_path / "g[x]"   # rich would take [x] for a markup tag and drop it
    r = runner.invoke(app, ["game", "play", "wis", "--agents", "plain,plain,plain", "--set",
                            'pair={"civilian": "tea", "spy": "coffee"}', "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert f"wrote {out}" in " ".join(r.output.split())
