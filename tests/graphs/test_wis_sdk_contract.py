"""Our WiS judge and served agent against the platform's own SDK (``spy-agent-build-sdk==0.0.29``).

Integration tests (real processes on 127.0.0.1; the SDK venv is built once, see
:mod:`tests.wis_sdk.env`, and the tests skip only when no package registry is reachable to build
it):

* six SDK agents (:mod:`tests.wis_sdk.sdk_agent`, one process each: the SDK's memory is a class
  attribute) play ``mas spy play --agents URL1,...,URL6`` through our CLI, in English and in
  Chinese: the game ends, every seat received exactly the sequence of :mod:`tests.wis_sdk.spec`,
  every SDK agent stored its seat's name and word, no vote list offered an agent itself, and the
  game record shows the agents' own descriptions and votes;
* the platform-style judge (:mod:`tests.wis_sdk.platform_judge`) drives one SDK agent: a check
  of the judge script itself against the SDK (the SDK agent is offered itself and must skip it);
* the platform-style judge drives our ``mas spy serve-agent --agent plain@openai:stub`` (model:
  :class:`tests.stub_openai.StubServer` with :class:`tests.wis_sdk.model_rule.ServedAgentModel`,
  which votes for the agent itself whenever it may): our agent answers every call, never votes
  for itself, and none of its prompts has an empty name (``"You are ."``, ``"你是。"``...).

Each run compares its exchange's protocol shape with ``tests/data/wis_sdk/<name>.jsonl``, or with
``MAS_UPDATE_FIXTURES=1`` records it there, after the run passed its own checks.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.stub_openai import StubServer
from tests.wis_sdk import exchange, platform_judge, procs, spec
from tests.wis_sdk.env import SDK_REQUIREMENT, SDK_VERSION, ensure_sdk_env
from tests.wis_sdk.model_rule import ServedAgentModel, served_agent_problems

pytestmark = pytest.mark.integration

GAMES = {"en": {"pair": "tea/coffee", "seed": 3}, "zh": {"pair": "牛奶/豆浆", "seed": 5}}
SEATS = [f"Player {i}" for i in range(1, 7)]


@pytest.fixture(scope="module")
def sdk_env():
    return ensure_sdk_env()


@pytest.fixture(scope="module")
def sdk_agents(sdk_env, tmp_path_factory):
    """Six SDK agent processes (one per seat), shared by the games of this module."""
    agents = procs.start_sdk_agents(sdk_env.python, 6, tmp_path_factory.mktemp("sdk-agents"))
    try:
        yield agents
    finally:
        for a in agents:
            a.stop()


def _problems(title: str, probs: list[str]) -> str:
    return f"{title}:\n" + "\n".join(f"- {p}" for p in probs)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_six_sdk_agents_play_through_our_cli(sdk_agents, lang, tmp_path):
    game = GAMES[lang]
    starts = [a.log_length() for a in sdk_agents]
    out = tmp_path / "game"
    cmd = procs.mas_command("spy", "play", "--agents", ",".join(a.url for a in sdk_agents), "--players", "6",
                            "--pair", game["pair"], "--lang", lang, "--seed", str(game["seed"]),
                            "--speak-timeout", "60", "--out", str(out))
    run = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600, env=procs.our_env(), cwd=procs.REPO)
    assert run.returncode == 0, f"mas spy play exited {run.returncode}:\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
    record = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert record["outcome"]["winner"] in ("spy", "civilians") and record["outcome"]["rounds_played"] >= 1
    assert record["lang"] == lang and [p["name"] for p in record["players"]] == SEATS
    assert [p["agent"] for p in record["players"]] == [a.url for a in sdk_agents]

    logs = {seat: a.log_entries(start) for seat, a, start in zip(SEATS, sdk_agents, starts)}
    probs = [p for seat in SEATS for p in spec.seat_problems(seat, logs[seat], record)]
    probs += spec.deterministic_record_problems(record)
    assert not probs, _problems(f"the {lang} game with six SDK agents", probs)

    entries = [{"seat": seat, **{k: e[k] for k in ("path", "request", "http_status", "response")}}
               for seat in SEATS for e in logs[seat]]
    meta = {"sdk": SDK_REQUIREMENT, "lang": lang, "pair": record["pair"], "seed": record["seed"],
            "spy_seat": next(p["seat"] for p in record["players"] if p["role"] == "spy"),
            "first_speaker": SEATS.index(record["first_speaker"]), "speak_timeout": 60.0, "seats": SEATS,
            "outcome": record["outcome"]}
    diff = exchange.check_or_record(f"sdk_game_{lang}", "sdk_game", meta, entries, SEATS)
    assert diff is None, diff


def test_platform_judge_drives_an_sdk_agent(sdk_agents):
    """The platform-style judge is consistent with the SDK: an SDK agent plays its whole game,
    stores the name it is given in ``start.message``, and is offered itself in every vote list
    (the platform's habit, which the SDK example agent handles by skipping its own name)."""
    agent = sdk_agents[0]
    for lang in ("en", "zh"):
        start = agent.log_length()
        ex = platform_judge.play(agent.url, lang=lang, me="Player 3")
        log = agent.log_entries(start)
        assert [e["request"] for e in log] == [e["request"] for e in ex]
        assert all(e["http_status"] == 200 and e["response"]["success"] is True for e in ex), \
            [e for e in ex if e["http_status"] != 200 or not e["response"]["success"]][:2]
        after_start = log[2:]
        assert all(e["memory"]["name"] == "Player 3" for e in after_start)
        assert log[-1]["memory"]["word"] == platform_judge.WORDS[lang]["civilian"]
        votes = [e for e in log if e.get("vote")]
        assert len(votes) == 3 and all(v["vote"]["offered_self"] for v in votes)   # (the script's vote lists)
        assert log[1]["response"]["result"] == f"sdk-det-{SDK_VERSION}"     # init answers the model name
        assert log[0]["response"]["result"] is None                        # checkHealth answers null


@pytest.fixture
def served_agent(tmp_path):
    """Our ``mas spy serve-agent --agent plain@openai:stub`` behind an in-process stub model."""
    model = ServedAgentModel(me="Player 3")
    with StubServer(reply=model.stub_reply) as stub:
        env = procs.our_env(OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="stub-key")
        proc = procs.start_serve_agent(["--agent", "plain@openai:stub", "--structured", "prompt"], tmp_path, env)
        try:
            yield proc, model, stub
        finally:
            proc.stop()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_served_agent_plays_a_platform_game(served_agent, lang):
    """Our served agent, told its name only in ``start.message`` and offered itself in every vote
    list, plays the whole platform-style game (:func:`tests.wis_sdk.model_rule.served_agent_problems`)."""
    proc, model, stub = served_agent
    me, word = "Player 3", platform_judge.WORDS[lang]["civilian"]
    ex = platform_judge.play(proc.url, lang=lang, me=me)
    votes = [e for e in ex if e["path"] == "/agent/interact" and e["request"]["status"] == "vote"]
    assert len(votes) == 3 and all(me in v["request"]["message"].split(",") for v in votes)  # offered itself
    model_name = platform_judge.PlatformJudge(proc.url).call("getModelName", {})["response"]
    assert isinstance(model_name, dict) and model_name.get("result") == "openai:stub", model_name
    probs = served_agent_problems(ex, model, lang=lang, me=me, word=word, players=platform_judge.PLAYERS,
                                  model_name="openai:stub")
    failed_calls = any(p.startswith("call ") for p in probs)
    assert not probs, _problems(f"our served agent driven platform-style ({lang})"
                                + (f"; its output ends:\n{proc.output(1500)}" if failed_calls else ""), probs)

    meta = {"lang": lang, "me": me, "word": word, "players": platform_judge.PLAYERS, "model_name": "openai:stub",
            "agent": "mas spy serve-agent --agent plain@openai:stub"}
    diff = exchange.check_or_record(f"platform_{lang}", "platform", meta, ex, platform_judge.PLAYERS)
    assert diff is None, diff
