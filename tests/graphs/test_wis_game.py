"""The Who-is-Spy graph and session with fake models: flow, fouls, votes, scores, strategies."""

import json
import time

import pytest

from mas_agents.graphs.wis.dataset import load_pairs
from mas_agents.graphs.wis.session import WisGameConfig, parse_pair, play_game
from mas_agents.graphs.wis.protocol_types import response
from mas_agents.planners.strategies import ATTACK_TEXT, DEFENSE_TEXT
from tests.fakes import RuleChat, wis_player

PAIR = {"civilian": "tea", "spy": "coffee"}


def model(**kw):
    return RuleChat(rule=wis_player(**kw))


def test_civilians_find_the_spy_in_round_one(tmp_path):
    rec = play_game(tmp_path, WisGameConfig(agents=["plain"] * 6, pair=PAIR, model=model(), seed=0, spy_seat=2,
                                            first_speaker=4))
    assert rec["outcome"] == {"winner": "civilians", "spy": "Player 3", "spy_eliminated_round": 1,
                              "end_reason": "spy_eliminated", "rounds_played": 1}
    r1 = rec["rounds"][0]
    assert r1["order"] == ["Player 5", "Player 6", "Player 1", "Player 2", "Player 3", "Player 4"]
    assert all(d["foul"] is None for d in r1["descriptions"])
    assert r1["voted_out"] == "Player 3" and r1["vote_counts"] == {"Player 3": 5, "Player 1": 1}
    # spy caught in round 1: spy 0 - 5 civilian votes; 5 surviving civilians share 12, +1 each for their vote
    assert rec["scores"]["Player 3"] == pytest.approx(-5)
    assert all(rec["scores"][p] == pytest.approx(12 / 5 + 1) for p in rec["scores"] if p != "Player 3")
    assert sum(rec["scores"].values()) == pytest.approx(12)
    assert [p["word"] for p in rec["players"]].count("coffee") == 1
    # words are private; votes are private until the public vote result
    events = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    words = [e for e in events if e["kind"] == "word"]
    assert len(words) == 6 and all(e["visible_to"] == [e["data"]["player"]] for e in words)
    assert all(e["visible_to"] == [e["actor"]] for e in events if e["kind"] == "vote")
    assert any(e["kind"] == "vote_result" and e["visible_to"] == ["*"] for e in events)
    assert rec["llm"]["calls"] == 12 and rec["invalid_actions"] == 0
    assert (tmp_path / "transcript.md").read_text().count("hint-") == 6


def test_descriptions_are_truncated_and_fouls_eliminate(tmp_path):
    class Scripted:
        """A WiS player with fixed descriptions per round; votes abstain."""
        label = "scripted"

        def __init__(self, texts):
            self.texts = texts

        def perceive(self, req):
            pass

        def interact(self, req, timeout=None):
            if req["status"] == "round":
                return response(self.texts[req["round"] - 1])
            return response("nobody")  # not a candidate: abstention

    long = "x" * 500
    players = {"Player 1": Scripted(["I like TEA a lot", "z", "z3"]),       # says own word (case-insensitive)
               "Player 2": Scripted([long, "y", "y3"]),
               "Player 3": Scripted(["a warm drink", "b", "b3"]),
               "Player 4": Scripted(["A warm drink!", "c", "c3"]),           # repeats Player 3
               "Player 5": Scripted(["", "d", "d3"]),                       # no answer
               "Player 6": Scripted(["leaves in hot water", "e", "e3"])}
    rec = play_game(tmp_path, WisGameConfig(agents=["x"] * 6, pair=PAIR, model=model(), spy_seat=5, first_speaker=0,
                                            players=players))
    r1 = rec["rounds"][0]
    fouls = {d["player"]: d["foul"] for d in r1["descriptions"]}
    assert fouls == {"Player 1": "own_word", "Player 2": None, "Player 3": None, "Player 4": "repeat",
                     "Player 5": "no_answer", "Player 6": None}
    assert len(next(d["text"] for d in r1["descriptions"] if d["player"] == "Player 2")) == 400
    assert r1["fouled"] == ["Player 1", "Player 4", "Player 5"]
    # 3 players left, vote held, everyone abstains -> no one out; round 2 speaking order skips the fouled
    assert r1["votes"] == {"Player 2": None, "Player 3": None, "Player 6": None} and r1["voted_out"] is None
    assert rec["rounds"][1]["order"] == ["Player 2", "Player 3", "Player 6"]
    # spy survives 3 rounds -> spy wins 12, civilians 0
    assert rec["outcome"]["winner"] == "spy" and rec["outcome"]["end_reason"] == "max_rounds"
    assert rec["scores"]["Player 6"] == 12 and sum(rec["scores"].values()) == 12
    assert {k: v["by"] for k, v in rec["eliminated"].items()} == {"Player 1": "foul", "Player 4": "foul", "Player 5": "foul"}


def test_fewer_than_three_survivors_ends_the_game(tmp_path):
    class Sayer:
        label = "sayer"

        def __init__(self, text):
            self.text = text

        def perceive(self, req):
            pass

        def interact(self, req, timeout=None):
            return response(self.text) if req["status"] == "round" else response(None, success=False, err="x")

    players = {"Player 1": Sayer("tea time"), "Player 2": Sayer("tea cup"), "Player 3": Sayer("dark roast"),
               "Player 4": Sayer("morning drink")}
    rec = play_game(tmp_path, WisGameConfig(agents=["x"] * 4, pair=PAIR, model=model(), spy_seat=2, first_speaker=0,
                                            players=players))
    assert rec["outcome"]["end_reason"] == "few_players" and rec["outcome"]["winner"] == "spy"
    assert rec["rounds"][0]["votes"] == {}   # ended by the judge, no vote held
    assert rec["scores"] == {"Player 1": 0, "Player 2": 0, "Player 3": 12, "Player 4": 0}


def test_slow_player_fouls_on_timeout(tmp_path):
    class Slow:
        label = "slow"

        def perceive(self, req):
            pass

        def interact(self, req, timeout=None):
            time.sleep(0.3)
            return response("a fine answer")

    rec = play_game(tmp_path, WisGameConfig(agents=["plain"] * 6, pair=PAIR, model=model(), spy_seat=0,
                                            first_speaker=0, speak_timeout=0.2, players={"Player 2": Slow()}))
    d = next(d for d in rec["rounds"][0]["descriptions"] if d["player"] == "Player 2")
    assert d["foul"] == "timeout" and d["text"] == "" and rec["timeouts"] == 1
    from mas_agents.graphs.wis.metrics import player_rows
    row = next(r for r in player_rows(rec) if r["name"] == "Player 2")
    assert row["timeouts"] == 1 and row["fouls"] == 1


def test_local_model_errors_abort_the_game_instead_of_fouling(tmp_path):
    def broken(messages):
        raise RuntimeError("server down")
    with pytest.raises(RuntimeError, match="server down"):
        play_game(tmp_path, WisGameConfig(agents=["plain"] * 3, pair=PAIR, model=RuleChat(rule=broken), spy_seat=0))
    assert not (tmp_path / "result.json").exists()


def test_malformed_replies_are_reprompted_then_foul(tmp_path):
    rec = play_game(tmp_path, WisGameConfig(agents=["plain"] * 6, pair=PAIR, model=model(garbage_for=("Player 4",)),
                                            spy_seat=0, first_speaker=0))
    d = next(d for d in rec["rounds"][0]["descriptions"] if d["player"] == "Player 4")
    assert d["foul"] == "no_answer"
    calls = [json.loads(x) for x in (tmp_path / "llm_calls.jsonl").read_text().splitlines()]
    assert [c["purpose"] for c in calls if c["actor"] == "Player 4"][:2] == ["describe#1", "describe#2"]
    assert rec["invalid_actions"] == 1


def test_attack_appends_injection_for_the_spy_only_and_fools_gullible_players(tmp_path):
    agents = ["plain"] * 6
    agents[1] = "plain+attack"
    agents[3] = "plain+attack"   # a civilian carrying the block: it must not fire
    rec = play_game(tmp_path, WisGameConfig(agents=agents, pair=PAIR, model=model(gullible=True), spy_seat=1,
                                            first_speaker=0))
    d = {x["player"]: x for x in rec["rounds"][0]["descriptions"]}
    assert d["Player 2"]["text"].endswith(ATTACK_TEXT["en"])
    assert ATTACK_TEXT["en"] not in d["Player 4"]["text"]
    # everyone after the spy took the bait and said their word; our agents check their own
    # description once (a retry), but the gullible fake says it again, so the game shows the text
    # and the judge calls the own-word foul
    assert [d[p]["foul"] for p in ("Player 3", "Player 4", "Player 5", "Player 6")] == ["own_word"] * 4
    assert all("my word is tea" in d[p]["text"] for p in ("Player 3", "Player 4", "Player 5", "Player 6"))
    assert rec["invalid_actions"] == 0
    events = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    retried = [e["actor"] for e in events if e["kind"] == "describe" and e["data"].get("self_check_retry")]
    assert retried == ["Player 3", "Player 4", "Player 5", "Player 6"]
    assert d["Player 1"]["foul"] is None


def test_defense_text_and_reasoning_events(tmp_path):
    agents = ["plain+reasoning"] * 6
    agents[0] = "plain+defense"
    rec = play_game(tmp_path, WisGameConfig(agents=agents, pair=PAIR, model=model(), spy_seat=0, first_speaker=0))
    assert rec["rounds"][0]["descriptions"][0]["text"].endswith(DEFENSE_TEXT["en"].format(role="spy"))
    events = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    reasoning = [e for e in events if e["kind"] == "reasoning"]
    assert len(reasoning) == 5 and all(e["visible_to"] == [e["actor"]] for e in reasoning)
    assert {e["actor"] for e in reasoning} == {f"Player {i}" for i in range(2, 7)}


@pytest.mark.realdata
def test_real_pairs_files(real_data_root):
    en, zh = load_pairs(real_data_root, "en"), load_pairs(real_data_root, "zh")
    assert len(en) == 158 and len(zh) == 76
    # two different non-empty words a pair, stripped, and only those two keys
    assert all(set(p) == {"civilian", "spy"} and p["civilian"] != p["spy"]
               and all(w and w == w.strip() for w in p.values()) for p in en + zh)


def test_bad_pairs_file_and_pair_option(tmp_path):
    bad = tmp_path / "whoisspy"
    bad.mkdir()
    (bad / "pairs_en.jsonl").write_text('{"civilian": "a", "spy": "b"}\n{"civilian": "a"}\n')
    with pytest.raises(ValueError, match=r"pairs_en.jsonl:2"):
        load_pairs(tmp_path, "en")
    assert parse_pair("tea / coffee") == PAIR
    with pytest.raises(ValueError, match="CIVILIAN/SPY"):
        parse_pair("tea")


def test_bad_player_count_and_seat(tmp_path):
    with pytest.raises(ValueError, match="3-9 players"):
        play_game(tmp_path, WisGameConfig(agents=["plain"] * 2, pair=PAIR, model=model()))
    with pytest.raises(ValueError, match="spy_seat 6"):
        play_game(tmp_path, WisGameConfig(agents=["plain"] * 6, pair=PAIR, model=model(), spy_seat=6))


def test_one_remote_agent_cannot_hold_two_seats(tmp_path):
    with pytest.raises(ValueError, match="one seat per game"):
        play_game(tmp_path, WisGameConfig(agents=["http://127.0.0.1:9", "plain", "http://127.0.0.1:9"], pair=PAIR,
                                          model=model()))


def test_games_share_one_compiled_graph_and_stay_independent(tmp_path):
    """The graph is compiled once per process; concurrent games on it (threads) give exactly the
    records they give one after another: no game's state lives in the compiled object."""
    from concurrent.futures import ThreadPoolExecutor

    from mas_agents.graphs.wis.graph import compiled_graph
    from mas_agents.game.conformance_kit import untimed

    assert compiled_graph() is compiled_graph()
    games = [dict(agents=["plain"] * (5 + i % 2), pair=PAIR if i % 3 else {"civilian": "cat", "spy": "dog"},
                  seed=i, spy_seat=i % 5, first_speaker=(2 * i) % 5) for i in range(6)]

    def play(i, where):
        rec = play_game(tmp_path / where / str(i), WisGameConfig(model=model(), **games[i]))
        return untimed(rec, drop=True)

    alone = [play(i, "seq") for i in range(len(games))]
    with ThreadPoolExecutor(len(games)) as pool:
        together = list(pool.map(lambda i: play(i, "par"), range(len(games))))
    assert together == alone
    assert len({json.dumps(r["outcome"], sort_keys=True) + str(r["players"]) for r in alone}) > 1


def test_a_round_votes_in_parallel_unless_narrowed_to_one_with_the_same_record(tmp_path, monkeypatch):
    """A round's votes run at once (mas_agents.graphs.fanout.fan_out: the game's thread and pool helpers);
    narrowed to one (a busy tournament, mas_agents.cells.cell_fanout) they run one after another
    on the game's thread. The record and the events are the same."""
    import threading
    import time

    from mas_agents import cells
    from mas_agents.game.conformance_kit import untimed

    base = wis_player()
    voters: list[str] = []
    now = {"in": 0, "most": 0}
    lock = threading.Lock()

    def rule(messages):
        if '"Vote: ..."' not in str(messages[-1].content):
            return base(messages)
        with lock:
            voters.append(threading.current_thread().name)
            now["in"] += 1
            now["most"] = max(now["most"], now["in"])
        if len(voters) <= 6:    # round 1's six votes: long enough for the helpers to take one each
            time.sleep(0.2)
        with lock:
            now["in"] -= 1
        return base(messages)

    def play(where, width):
        monkeypatch.setattr(cells, "cell_fanout", lambda models: width)
        voters.clear()
        now["most"] = 0
        rec = play_game(tmp_path / where, WisGameConfig(agents=["plain"] * 6, pair=PAIR, model=RuleChat(rule=rule),
                                                        seed=3, game_id="g"))
        events = [json.loads(x) for x in (tmp_path / where / "events.jsonl").read_text().splitlines()]
        for e in events:        # call ids are new each run; seconds are wall time
            e.pop("llm_call_ids", None)
            e.get("data", {}).pop("seconds", None)
        return untimed(rec, drop=True), events, list(voters), now["most"]

    wide, wide_events, wide_threads, wide_most = play("wide", None)
    three, three_events, _, three_most = play("three", 3)
    one, one_events, one_threads, one_most = play("one", 1)
    me = threading.current_thread().name
    assert (wide_most, three_most, one_most) == (6, 3, 1)     # six alive voters in round 1
    assert me in wide_threads and any(t.startswith("mas-fanout") for t in wide_threads)
    assert len(one_threads) == len(wide_threads) and set(one_threads) == {me}
    assert one == wide == three and one_events == wide_events == three_events


def test_each_description_is_in_events_jsonl_before_the_next_speaker_is_asked(tmp_path):
    """A round's speaking phase is one graph step, yet ``mas serve`` watching ``events.jsonl``
    sees every description as it is made (published through ``Table.watch``), numbered as in the
    final file, which is the same as a game's whole events."""
    from mas_agents import appender

    base = wis_player()
    seen: list[tuple[str, list[str]]] = []      # (who is asked, descriptions already on disk)

    def rule(messages):
        last = str(messages[-1].content)
        if '"Description: ..."' in last:
            appender.sync()     # what the writer thread has queued (mas serve sees it within BATCH_S)
            lines = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
            assert [e["step"] for e in lines] == list(range(len(lines)))
            who = next(n for n in (f"Player {i}" for i in range(1, 7)) if f"You are {n}" in
                       "\n".join(str(m.content) for m in messages))
            seen.append((who, [e["content"] for e in lines if e["kind"] == "describe"]))
        return base(messages)

    from mas_agents.game.runner import run
    steps: list[int] = []
    rec = run("wis", tmp_path, model=RuleChat(rule=rule), progress=lambda done, bound, names: steps.append(done),
              agents=["plain"] * 6, pair=PAIR, seed=0, spy_seat=2, first_speaker=4)
    order = rec["rounds"][0]["order"]
    texts = [d["text"] for d in rec["rounds"][0]["descriptions"]]
    assert [who for who, _ in seen] == order
    assert [on_disk for _, on_disk in seen] == [texts[:k] for k in range(len(order))]
    final = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [e["step"] for e in final] == list(range(len(final)))
    # graph steps: the set-up, speaking and voting (the votes and their tally) each round, the finish
    assert len(rec["rounds"]) >= 1 and len(steps) == 2 + 2 * len(rec["rounds"])


def test_a_round_is_two_graph_steps_at_any_fan_out_width(tmp_path, monkeypatch):
    """A round is two graph steps, speaking, then the votes and their tally (``voting``), whether
    its votes run at once or one at a time."""
    from mas_agents.game.runner import run
    from mas_agents import cells

    def steps_of(width, where):
        monkeypatch.setattr(cells, "cell_fanout", lambda models: width)
        steps: list[int] = []
        rec = run("wis", tmp_path / where, model=model(), progress=lambda done, bound, names: steps.append(done),
                  agents=["plain"] * 6, pair=PAIR, seed=1, spy_seat=0, first_speaker=3)
        return len(steps), len(rec["rounds"])

    (one, rounds), (wide, rounds_wide) = steps_of(1, "one"), steps_of(None, "wide")
    assert rounds == rounds_wide >= 1
    assert one == wide == 2 + 2 * rounds
