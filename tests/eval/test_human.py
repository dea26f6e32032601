"""The human seat (agent spec ``human``): a person answers through files, under the same parser and fouls."""

import json
import threading
import time

import pytest

from mas_agents.graphs.wis.human import HumanSeat
from mas_agents.game.human import human_seats, read_view, seat_dirname, submit_answer
from mas_agents.graphs.wis.session import WisGameConfig, play_game
from tests.fakes import RuleChat, wis_player


def _answer_when_asked(seat_dir_of, answers, timeout=20.0):
    """Answer every pending request of the seat with the next item of ``answers`` (a function of
    the view, or a fixed string); returns the thread and the list of views answered."""
    seen = []

    def run():
        t0 = time.monotonic()
        answered = set()
        while time.monotonic() - t0 < timeout:
            d = seat_dir_of()
            if d is not None and (d / "view.json").exists():
                try:
                    v = read_view(d)
                except ValueError:
                    continue
                p = v.get("pending")
                if p and p["id"] not in answered:
                    text = answers.pop(0) if answers else None
                    if text is None:
                        return
                    answered.add(p["id"])
                    seen.append(v)
                    submit_answer(d, p["id"], text(v) if callable(text) else text)
                if v.get("finished"):
                    return
            time.sleep(0.02)

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th, seen


def test_seat_dirname():
    assert seat_dirname("Player 1") == "Player_1"
    with pytest.raises(ValueError):
        seat_dirname("  ")


def test_a_human_seat_plays_a_game_to_the_end_under_the_same_rules(tmp_path):
    out = tmp_path / "g"
    seat = out / "human" / "Player_1"
    # describe (with a leading tag typed by hand: the same parser reads it), then vote by number
    answers = [lambda v: "a warm drink in the morning", lambda v: "1"] * 3
    th, seen = _answer_when_asked(lambda: seat, answers)
    rec = play_game(out, WisGameConfig(agents=["human", "plain", "plain", "plain"],
                                       pair={"civilian": "tea", "spy": "coffee"}, model=RuleChat(rule=wis_player()),
                                       spy_seat=1, first_speaker=0, speak_timeout=30))
    th.join(5)
    assert rec["outcome"]["winner"] in ("civilians", "spy")
    view = read_view(seat)
    # the person saw their own word and the public messages, never another player's word
    assert view["word"] == "tea" and view["finished"] and view["pending"] is None
    text = json.dumps(view["messages"])
    assert "coffee" not in text.split("Game over")[0]
    assert seen[0]["pending"]["kind"] == "describe" and seen[1]["pending"]["kind"] == "vote"
    assert seen[1]["pending"]["choices"] == ["Player 2", "Player 3", "Player 4"]
    events = [json.loads(x) for x in (out / "events.jsonl").read_text().splitlines()]
    mine = [e for e in events if e["actor"] == "Player 1" and e["kind"] == "describe"]
    assert mine[0]["content"] == "a warm drink in the morning" and mine[0]["data"]["foul"] is None
    votes = [e for e in events if e["actor"] == "Player 1" and e["kind"] == "vote"]
    assert votes[0]["data"]["target"] == "Player 2"       # "1" = the first listed candidate
    assert human_seats(out) == [seat]
    assert rec["players"][0]["agent"] == "human"


def test_saying_your_word_is_the_same_foul(tmp_path):
    out = tmp_path / "g"
    seat = out / "human" / "Player_1"
    answers = [lambda v: "I love tea"]
    th, seen = _answer_when_asked(lambda: seat, answers)
    rec = play_game(out, WisGameConfig(agents=["human", "plain", "plain", "plain"],
                                       pair={"civilian": "tea", "spy": "coffee"}, model=RuleChat(rule=wis_player()),
                                       spy_seat=1, first_speaker=0, speak_timeout=30))
    th.join(5)
    events = [json.loads(x) for x in (out / "events.jsonl").read_text().splitlines()]
    fouls = [e for e in events if e["kind"] == "foul"]
    assert fouls and fouls[0]["data"] == {"player": "Player 1", "foul": "own_word"}
    assert rec["eliminated"]["Player 1"] == {"round": 1, "by": "foul"}


def test_an_unreadable_vote_is_reprompted_once_then_abstains():
    import tempfile
    from pathlib import Path
    root = Path(tempfile.mkdtemp())
    seat = HumanSeat(root, poll=0.01)
    seat.perceive({"status": "start", "name": "Player 1", "message": "Player 1"})
    d = root / "Player_1"
    th, seen = _answer_when_asked(lambda: d, ["Player 9", "nobody"])
    resp = seat.interact({"status": "vote", "message": "Player 1,Player 2,Player 3", "round": 1}, timeout=10)
    th.join(5)
    assert resp["success"] is False and resp["result"] is None and resp["meta"]["attempts"] == 2
    assert seen[1]["pending"]["attempt"] == 2 and "not one of" in seen[1]["pending"]["error"]
    # the limit runs from the first ask: the second shows what is left of it
    assert seen[0]["pending"]["limit_s"] == pytest.approx(10, abs=0.5) and seen[1]["pending"]["limit_s"] < 10
    with pytest.raises(ValueError, match="not waiting"):
        submit_answer(d, seen[1]["pending"]["id"], "Player 2")


def test_no_answer_within_the_limit_is_a_timeout(tmp_path):
    seat = HumanSeat(tmp_path, poll=0.01)
    seat.perceive({"status": "start", "name": "Player 2", "message": "Player 2"})
    resp = seat.interact({"status": "round", "message": "Your turn", "round": 1}, timeout=0.1)
    assert resp["timed_out"] is True and resp["success"] is False
    assert read_view(tmp_path / "Player_2")["pending"] is None


def test_the_cli_refuses_a_human_seat_in_a_tournament():
    from typer.testing import CliRunner
    from mas_agents.cli import app
    res = CliRunner().invoke(app, ["spy", "tournament", "--agents", "human,plain", "--games", "2"])
    assert res.exit_code != 0 and "single games only" in res.output


def _toy_game_with_a_human(tmp_path, name="Ann"):
    from mas_agents.graphs.mmg.human import HumanCharacter
    from tests.fakes import polite_player
    from tests.toy import toy_runtime
    rt, rec, out = toy_runtime(tmp_path, polite_player(vote_for="Bob"), rounds=1)
    rt.agents[name] = HumanCharacter(rt.agents[name].persona, out / "human", poll=0.01)
    return rt, rec, out


def test_a_murder_mystery_character_played_by_a_person(tmp_path):
    from mas_agents.graphs.mmg.session import run_game
    rt, rec, out = _toy_game_with_a_human(tmp_path)
    seat = out / "human" / "Ann"
    first = read_view(seat)
    assert first["game"] == "mmg" and first["script"] == rt.agents["Ann"].persona.script and first["pending"] is None

    def answer(v):
        p = v["pending"]
        return {"introduce": "I am Ann, the baker.", "answer": "I was at the well.",
                "vote": "Bob"}.get(p["kind"], "Where were you at nine?")

    seen = []

    def run():
        t0 = time.monotonic()
        done = set()
        while time.monotonic() - t0 < 20:
            v = read_view(seat)
            p = v.get("pending")
            if p and p["id"] not in done:
                done.add(p["id"])
                seen.append(v)
                # a question goes to a chosen player: the same "To:" field a model writes
                submit_answer(seat, p["id"], answer(v), target=p["choices"][-1] if p["kind"] == "ask" else None)
            if v.get("finished") or (out / "result.json").exists():
                return
            time.sleep(0.02)

    th = threading.Thread(target=run, daemon=True)
    th.start()
    res = run_game(rt, out, rec, {"kind": "mmg", "model": "fake", "seed": 0})
    th.join(5)
    kinds = [v["pending"]["kind"] for v in seen]
    assert kinds[0] == "introduce" and "ask" in kinds and kinds[-1] == "vote"
    events = [json.loads(x) for x in (out / "events.jsonl").read_text().splitlines()]
    intro = next(e for e in events if e["kind"] == "introduce" and e["actor"] == "Ann")
    assert intro["content"] == "I am Ann, the baker."
    ask = next(e for e in events if e["kind"] == "ask" and e["actor"] == "Ann")
    assert ask["data"]["target"] == seen[kinds.index("ask")]["pending"]["choices"][-1]
    vote = next(e for e in events if e["kind"] == "vote" and e["actor"] == "Ann")
    assert vote["data"]["choice"] == "Bob"
    assert res["agents"]["Ann"] == "human"
    # what the person was shown: public events and their own, never another character's private one
    shown = [m for v in seen for m in v["messages"]]
    assert not any(m["kind"] in ("script", "vote") and m["actor"] not in ("Ann", "game") for m in shown)
    assert "Ann receives their private script" in json.dumps(shown) and "Bob receives" not in json.dumps(shown)


def test_mas_spy_play_seats_one_human_and_fills_the_rest_with_agents(tmp_path, monkeypatch):
    import mas_agents.llm as llm
    from typer.testing import CliRunner
    from mas_agents.cli import app
    monkeypatch.setattr(llm, "make_chat_model", lambda spec="local", **kw: RuleChat(rule=wis_player()))
    out = tmp_path / "g"
    th, seen = _answer_when_asked(lambda: out / "human" / "Player_2",
                                  [lambda v, i=i: "1" if v["pending"]["kind"] == "vote" else f"a hot drink, take {i}"
                                   for i in range(8)], timeout=40)
    res = CliRunner().invoke(app, ["spy", "play", "--players", "5", "--agents", "plain,human,plain+reasoning",
                                   "--pair", "tea/coffee", "--out", str(out)])
    th.join(5)
    assert res.exit_code == 0, res.output
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["agents"] == ["plain", "human", "plain+reasoning", "plain", "plain+reasoning"]
    assert cfg["speak_timeout"] == 120.0 and seen
    assert "mas serve" in res.output
    bad = CliRunner().invoke(app, ["spy", "play", "--agents", "human,human,plain", "--pair", "tea/coffee",
                                   "--out", str(tmp_path / "h")])
    assert bad.exit_code == 2 and "one human seat" in bad.output
