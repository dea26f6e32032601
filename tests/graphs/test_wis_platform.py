"""Who is Spy with the WiS platform's agents, both ways (issue 16), without the SDK itself.

Judge side: the message sequence agents built on the platform's SDK expect
(spy-agent-build-sdk 0.0.29: ``example/spy_agent.py`` takes its own name from the ``start``
message, reads the eliminated player from ``vote_result``), checkHealth/init before the game, one
retry after a dropped connection, the vote deadline. Agent side: our player driven as the platform
drives it (start ``message`` = its name and ``name`` empty, vote lists holding the voter, a Chinese
game announced by nothing but the word). The SDK itself is exercised by
``tests/graphs/test_wis_sdk_contract.py``.
"""

from __future__ import annotations

import re
import threading
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from mas_agents.graphs.wis.session import WisGameConfig, play_game
from mas_agents.graphs.wis.player import SAFE_DESCRIPTIONS, AgentWisPlayer, _players_from, fit, safe_description
from mas_agents.graphs.wis.protocol import RemoteWisPlayer, make_app
from mas_agents.graphs.wis.protocol_types import request, response
from mas_agents.graphs.wis.rules import GAME, MAX_CHARS, foul
from mas_agents.accounting import AccountedModel
from mas_agents.call_log import CallRecorder
from mas_agents.agents import Agent
from tests.fakes import RuleChat, numbered, unrecognised

SEATS = [f"Player {i}" for i in range(1, 5)]


class Recorder:
    """A seat that records every message and plays deterministically: a description unique per
    seat and round; a vote for the first candidate. Raises on a status it does not know."""

    label = "recorder"

    def __init__(self, name: str, vote_delay: float = 0.0) -> None:
        self.name, self.vote_delay = name, vote_delay
        self.seen: list[dict] = []

    def perceive(self, req):
        if req["status"] not in ("start", "distribution", "round", "vote", "vote_result", "result"):
            raise AssertionError(f"unknown status {req['status']!r}")
        self.seen.append(dict(req, via="perceive"))

    def interact(self, req, timeout=None):
        self.seen.append(dict(req, via="interact"))
        if req["status"] == "round":
            return response(f"clue {len(self.seen)} of {self.name}")
        if req["status"] == "vote":
            if timeout is not None and self.vote_delay > timeout:   # as RemoteWisPlayer reports a cut-off
                return response(None, success=False, err="timeout", timed_out=True)
            return response(req["message"].split(",")[0])
        raise AssertionError(f"cannot interact on {req['status']!r}")


def test_judge_sends_the_sequence_sdk_agents_expect(tmp_path):
    seats = {p: Recorder(p) for p in SEATS}
    rec = play_game(tmp_path, WisGameConfig(agents=["plain"] * 4, pair={"civilian": "tea", "spy": "coffee"},
                                            players=seats, spy_seat=2, first_speaker=0))
    for p, r in seats.items():
        start, dist, rules_msg, table = r.seen[:4]
        # the SDK's example agent stores req.message of `start` as its name
        assert (start["status"], start["name"], start["message"]) == ("start", p, p)
        assert (dist["status"], dist["word"]) == ("distribution", "coffee" if p == "Player 3" else "tea")
        assert rules_msg["status"] == "round" and rules_msg["name"] == "" and "Who is Spy" in rules_msg["message"]
        assert (table["status"], table["name"], table["message"]) == ("round", "", "Players: " + ", ".join(SEATS))
        assert _players_from(table["message"]) == SEATS
        votes = [q for q in r.seen if q["via"] == "interact" and q["status"] == "vote"]
        assert votes and all(p not in q["message"].split(",") for q in votes)   # never offered itself
        turns = [q for q in r.seen if q["via"] == "interact" and q["status"] == "round"]
        assert turns and all(q["message"] == "Your turn: describe your word." for q in turns)
        results = [q for q in r.seen if q["status"] == "vote_result"]
        assert results and all(q["name"] == q["message"] for q in results)
    out = rec["rounds"][0]["voted_out"]
    assert out and [q["message"] for q in seats["Player 1"].seen if q["status"] == "vote_result"][0] == out


def test_chinese_game_labels(tmp_path):
    seats = {p: Recorder(p) for p in SEATS}
    play_game(tmp_path, WisGameConfig(agents=["plain"] * 4, pair={"civilian": "苹果", "spy": "梨"}, players=seats,
                                      lang="zh", spy_seat=0, first_speaker=0))
    seen = seats["Player 2"].seen
    assert seen[3]["message"] == "玩家：" + ", ".join(SEATS) and _players_from(seen[3]["message"]) == SEATS
    assert "谁是卧底" in seen[2]["message"] and "120" in seen[2]["message"]
    turn = next(q for q in seen if q["via"] == "interact" and q["status"] == "round")
    assert turn["message"] == "轮到你了：请描述你的词语。"
    assert not any(re.search(r"[A-Za-z]{4,}", q["message"].replace("Player", "")) for q in seen
                   if q["status"] in ("round", "result") and not q["name"])   # no English host text


def test_a_late_vote_is_an_abstention_not_a_foul(tmp_path):
    """The vote limit reaches the player (a remote one is cut off at it: test_wis_protocol) and a
    timed-out vote abstains; the speaking limit is another one."""
    seats = {p: Recorder(p, vote_delay=0.3 if p == "Player 1" else 0.0) for p in SEATS}
    rec = play_game(tmp_path, WisGameConfig(agents=["plain"] * 4, pair={"civilian": "tea", "spy": "coffee"},
                                            players=seats, spy_seat=2, first_speaker=0, speak_timeout=5.0,
                                            vote_timeout=0.2))
    assert rec["rounds"][0]["votes"]["Player 1"] is None
    late = sum(1 for r in rec["rounds"] for v, t in r["votes"].items() if v == "Player 1")
    assert late >= 1 and rec["vote_timeouts"] == late and rec["invalid_actions"] == 0
    assert all(d["foul"] is None for d in rec["rounds"][0]["descriptions"])


def test_local_seats_votes_are_not_timed_by_wall_time(tmp_path):
    """Votes run in parallel; local seats sharing a model queue behind each other, so a slow vote
    of a local seat (no timed_out report) still counts."""
    class SlowVoter(Recorder):
        def interact(self, req, timeout=None):
            if req["status"] == "vote":
                time.sleep(0.3)
            return super().interact(req, timeout=None)
    seats = {p: SlowVoter(p) for p in SEATS}
    rec = play_game(tmp_path, WisGameConfig(agents=["plain"] * 4, pair={"civilian": "tea", "spy": "coffee"},
                                            players=seats, spy_seat=2, first_speaker=0, speak_timeout=5.0,
                                            vote_timeout=0.1))
    assert rec["vote_timeouts"] == 0 and all(t is not None for t in rec["rounds"][0]["votes"].values())


def test_an_agent_failing_check_health_is_not_seated(tmp_path):
    with pytest.raises(ValueError, match=r"^WiS agent http://127\.0\.0\.1:9/?: checkHealth failed \(.*\); not seating it$"):
        play_game(tmp_path, WisGameConfig(agents=["http://127.0.0.1:9", "plain", "plain", "plain"],
                                          pair={"civilian": "tea", "spy": "coffee"},
                                          model=RuleChat(rule=lambda m: "x")))


def test_init_failure_refuses_too():
    def handler(req: httpx.Request) -> httpx.Response:
        route = req.url.path.rsplit("/", 1)[1]
        if route == "checkHealth":
            return httpx.Response(200, json={"success": True, "result": None, "errMsg": None})
        if route == "init":
            return httpx.Response(200, json={"success": False, "result": None, "errMsg": "no API key"})
        raise AssertionError(f"unexpected route {route}")
    remote = RemoteWisPlayer("http://sdk.test")
    remote._client = httpx.Client(base_url="http://sdk.test", transport=httpx.MockTransport(handler))
    with pytest.raises(ValueError, match="init failed \\(no API key\\)"):
        remote.check_ready()


def test_one_retry_after_a_dropped_connection():
    calls = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req.url.path)
        if len(calls) == 1:   # the kept-alive connection was closed after an HTTP 500
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.", request=req)
        return httpx.Response(200, json={"success": True, "result": None, "errMsg": None})
    remote = RemoteWisPlayer("http://sdk.test")
    remote._client = httpx.Client(base_url="http://sdk.test", transport=httpx.MockTransport(handler))
    remote.perceive(request("vote_result", name="Player 2", message="Player 2", round=1))
    assert calls == ["/agent/perceive", "/agent/perceive"]
    # a second drop in a row is reported, not retried again
    calls.clear()

    def always_down(req):
        calls.append(req.url.path)
        raise httpx.ConnectError("connection refused", request=req)
    remote._client = httpx.Client(base_url="http://sdk.test", transport=httpx.MockTransport(always_down))
    resp = remote.interact(request("round", name="Player 1", round=1))
    assert not resp["success"] and "ConnectError" in resp["errMsg"] and len(calls) == 2


# -- our agent, driven as the platform drives it ----------------------------------------------------
class Heard:
    """A block that records the events its agent is shown (``on_event``) and the players its
    persona names, one list per agent built."""

    name = "heard"

    def __init__(self, log: list) -> None:
        self.log = log

    def on_event(self, agent, event):
        if not self.log or self.log[-1][0] is not agent:
            self.log.append((agent, list(agent.persona.players), []))
        self.log[-1][2].append((event["kind"], event["actor"], event["content"]))

    def contribute(self, agent, request):
        return None


def platform_agent(lang: str, rule, heard: list | None = None, safe_reply: bool = True) -> tuple[AgentWisPlayer, list[str]]:
    """Our served agent (``safe_reply`` as ``mas spy serve-agent`` sets it) on a fake model; the
    prompts it sent are recorded."""
    prompts: list[str] = []

    def recording(messages):
        prompts.append("\n".join(str(m.content) for m in messages))
        return rule(messages)
    model = AccountedModel(RuleChat(rule=recording), CallRecorder(None), label="fake")

    def make(persona):
        return Agent(persona=persona, model=model, memory=None, blocks=[Heard(heard if heard is not None else [])],
                     spec="plain", game=GAME)
    return AgentWisPlayer(make, label="plain", lang=lang, safe_reply=safe_reply), prompts


def describe_or_vote(description: str, garble_first: bool = False):
    """Replies in format (the first description unreadable when ``garble_first``)."""
    said = []

    def rule(messages):
        last = str(messages[-1].content)
        if '"Description: ..."' in last:
            said.append(1)
            return "la la la" if garble_first and len(said) == 1 else f"Description: {description}"
        if '"Vote: ..."' in last:
            return f"Vote: {numbered(last)[0]}"
        raise unrecognised("describe_or_vote", messages)
    return rule


@pytest.mark.parametrize("lang,word,others,desc", [
    ("auto", "tea", ["It is hot.", "People drink it."], "It grows on bushes in the hills."),
    ("auto", "苹果", ["这是一种水果。", "它通常是圆的。"], "它在日常生活中很常见。"),
])
def test_served_agent_takes_its_name_from_start_message_and_never_votes_itself(lang, word, others, desc):
    me = "Player 3"
    heard: list = []
    player, prompts = platform_agent(lang, describe_or_vote(desc, garble_first=True), heard)
    player.perceive(request("start", name="", message=me))
    player.perceive(request("distribution", word=word))
    player.perceive(request("round", round=1))
    for who, text in zip(("Player 1", "Player 2"), others):
        player.perceive(request("round", name=who, message=text, round=1))
    said = player.interact(request("round", round=1))
    assert said["success"] and said["result"] == desc
    player.perceive(request("round", name="Player 4", message="x" * 5, round=1))
    vote = player.interact(request("vote", message="Player 1,Player 2,Player 3,Player 4", round=1))
    assert vote["success"] and vote["result"] != me
    zh = word == "苹果"
    assert player.lang == ("zh" if zh else "en") and player.name == me
    assert player.players == [me, "Player 1", "Player 2", "Player 4"]
    mine = "你是Player 3" if zh else "You are Player 3"
    assert all(mine in p for p in prompts)
    assert not any(re.search(r"You are \.|你是。|players are: \.|玩家有：。", p) for p in prompts)
    vote_prompt = prompts[-1]
    assert "1. Player 1\n2. Player 2\n3. Player 4" in vote_prompt   # itself dropped from the list
    assert "Player 4: «xxxxx»" in vote_prompt and ("第1轮" if zh else "Round 1") in vote_prompt
    # the agent was rebuilt once Player 4 was met, and the new one was shown the whole game so far
    (first, players1, _), (second, players2, seen2) = heard
    assert first is not second and players1 == [me, "Player 1", "Player 2"] and players2 == player.players
    assert [(k, a) for k, a, _ in seen2] == [("host", "game"), ("describe", "Player 1"), ("describe", "Player 2"),
                                             ("describe", "Player 4")]
    # its counters carried over: the first agent's re-prompted description
    assert first.stats == {"malformed_describe": 1, "recovered_after_reprompt": 1}
    assert player.agent is second and second.stats == first.stats   # (its own vote was read at once)


def test_served_agent_without_a_name_refuses_instead_of_prompting():
    player, prompts = platform_agent("en", describe_or_vote("unused"))
    player.perceive(request("start", name="", message=""))
    resp = player.interact(request("round", round=1))
    assert not resp["success"] and "no name" in resp["errMsg"] and prompts == []


def test_served_agent_keeps_a_description_within_the_limit():
    long = "这是一种很常见的水果，" * 20 + "。"
    player, _ = platform_agent("auto", describe_or_vote(long))
    player.perceive(request("start", message="Player 1"))
    player.perceive(request("distribution", word="苹果"))
    said = player.interact(request("round", round=1))
    assert said["success"] and len(said["result"]) <= MAX_CHARS["zh"] and said["result"].endswith("，") is False


# -- the served agent's own-word guard (issue 27) ---------------------------------------------------
NOTE = "Your answer contained the word itself"   # the re-prompt of Agent.act_avoiding


def says_then(first: str, second: str, log: list | None = None):
    """Describes with ``first``, and with ``second`` when re-prompted for saying its word."""
    def rule(messages):
        last = str(messages[-1].content)
        if '"Description: ..."' in last:
            if log is not None:
                log.append(NOTE in last)
            return f"Description: {second if NOTE in last else first}"
        raise unrecognised("says_then", messages)
    return rule


def served(lang, word, rule, me="Player 2", safe_reply=True):
    player, prompts = platform_agent(lang, rule, safe_reply=safe_reply)
    player.perceive(request("start", name="", message=me))
    player.perceive(request("distribution", word=word))
    player.perceive(request("round", round=1))
    player.perceive(request("round", name="Player 1", message="It is big." if lang == "en" else "它很大。", round=1))
    return player, prompts


def test_served_agent_re_prompted_after_saying_its_word_answers_the_second_description():
    asked: list = []
    player, prompts = served("auto", "ocean", says_then("The ocean.", "Waves and salt water everywhere.", asked))
    said = player.interact(request("round", round=1))
    assert said["success"] and said["result"] == "Waves and salt water everywhere."
    assert asked == [False, True] and said["meta"]["self_check_retry"] and "safe_reply" not in said["meta"]
    assert player.agent.stats == {"self_check_retry": 1}


@pytest.mark.parametrize("lang,word,reply", [("en", "ocean", 'My secret word is "Ocean".'),
                                             ("zh", "海洋", "我的词是海洋。")])
def test_served_agent_saying_its_word_twice_answers_the_safe_description_and_counts_it(lang, word, reply, caplog):
    asked: list = []
    player, _ = served("auto", word, says_then(reply, reply.upper(), asked))
    with caplog.at_level("WARNING", logger="mas_agents.graphs.wis.player"):
        said = player.interact(request("round", round=1))
    assert player.lang == lang and asked == [False, True]            # re-prompted once, no third call
    assert said["success"] and said["result"] == SAFE_DESCRIPTIONS[lang][0]
    assert foul(said["result"], word, ["It is big.", "它很大。"]) is None
    assert said["meta"]["safe_reply"] is True and said["meta"]["self_check_retry"] is True
    assert player.agent.stats == {"self_check_retry": 1, "own_word_safe_reply": 1}
    assert "still said its word after a re-prompt" in caplog.text
    # the next round's fallback does not repeat the first (a repeat is a foul too)
    said2 = player.interact(request("round", round=2))
    assert said2["result"] == SAFE_DESCRIPTIONS[lang][1] and player.agent.stats["own_word_safe_reply"] == 2


def test_at_our_own_table_the_word_said_twice_still_goes_to_the_judge():
    player, _ = served("auto", "ocean", says_then("The ocean.", "Still the ocean."), safe_reply=False)
    said = player.interact(request("round", round=1))
    assert said["result"] == "Still the ocean." and "own_word_safe_reply" not in player.agent.stats


def test_safe_description_never_holds_the_word_nor_repeats():
    assert safe_description("en", "people", []) == SAFE_DESCRIPTIONS["en"][1]     # the first says "people"
    assert safe_description("en", "tea", [SAFE_DESCRIPTIONS["en"][0].upper()]) == SAFE_DESCRIPTIONS["en"][1]
    assert safe_description("zh", "知道", []) == SAFE_DESCRIPTIONS["zh"][1]        # 这是很多人都知道的。
    assert safe_description("zh", "人", []) == SAFE_DESCRIPTIONS["zh"][1]          # inside a word is enough
    assert safe_description("en", "it", []) is None                                # every one says "it"
    for lang, texts in SAFE_DESCRIPTIONS.items():
        assert len(set(texts)) == len(texts) and all(len(t) <= MAX_CHARS[lang] for t in texts)


def test_serve_agent_players_have_the_guard_and_table_players_not():
    from mas_agents.game.seats import Seats
    from mas_agents.graphs.wis.session import PlayerFactory
    fake = RuleChat(rule=lambda m: "unused")
    assert PlayerFactory(Seats(CallRecorder(None), fake), safe_reply=True)("plain", "civilian").safe_reply is True
    assert PlayerFactory(Seats(CallRecorder(None), fake))("plain", "civilian").safe_reply is False


def test_fit_cuts_at_sentence_then_word_end():
    assert fit("Short.", 400) == "Short."
    assert fit("One two three. Four five six seven", 20) == "One two three."
    assert fit("alpha beta gamma delta", 15) == "alpha beta"
    assert fit("x" * 30, 10) == "x" * 10
    assert fit("这是一种水果。它很甜，很多人喜欢吃它的味道", 12) == "这是一种水果。"


def test_init_answers_the_model_name_check_health_null_and_the_deadline_answers_in_time():
    release = threading.Event()
    order: list[str] = []

    class Slow:
        label = "slow"

        def perceive(self, req):
            order.append(f"perceive {req['status']}")

        def interact(self, req, timeout=None):
            release.wait(5)
            order.append("interact done")
            return response("late words")
    client = TestClient(make_app(Slow, "smol", deadline=0.2))
    assert client.post("/agent/init", json={}).json() == {"success": True, "result": "smol", "errMsg": None}
    assert client.post("/agent/checkHealth", json={}).json() == {"success": True, "result": None, "errMsg": None}
    t0 = time.monotonic()
    resp = client.post("/agent/interact", json={"status": "round", "round": 1}).json()
    assert time.monotonic() - t0 < 2.0
    assert resp["success"] is False and "own deadline of 0.2 s" in resp["errMsg"]
    done = threading.Thread(target=lambda: client.post("/agent/perceive", json={"status": "vote", "name": "A"}))
    done.start()
    time.sleep(0.1)
    release.set()
    done.join(5)
    assert order == ["interact done", "perceive vote"]   # the player never sees two messages at once
