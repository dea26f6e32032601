"""Our judge and served agent against the recorded WiS SDK exchanges (fast: no SDK, no network).

The integration tests of ``test_wis_sdk_contract.py`` record what the platform's SDK
(``spy-agent-build-sdk==0.0.29``) was sent and answered into ``tests/data/wis_sdk/``. Here,
in-process and in a few seconds:

* the judge's side: six look-alikes of the SDK agent (:mod:`tests.wis_sdk.sdk_mimic`: the SDK
  server's answers and our SDK agent's deterministic moves, over real HTTP on 127.0.0.1) play
  through :func:`mas_agents.graphs.wis.session.play_game` with URL seats, as ``mas spy play`` seats
  them. Each seat must receive the specified sequence (:mod:`tests.wis_sdk.spec`), and, for the
  recorded game (same words, seed, spy and first speaker), the same request sequence as the
  real SDK agents got (statuses, names, rounds, words and message shapes; not free text);
* the served agent's side: our :func:`mas_agents.graphs.wis.protocol.make_app` (FastAPI ``TestClient``,
  a fake model that votes for the agent itself whenever it may) answers the platform-style
  judge's recorded requests, and the live platform-style script: it never votes for itself, and
  names and candidates in its answers and prompts are well formed
  (:func:`tests.wis_sdk.model_rule.served_agent_problems`).
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from mas_agents.game.seats import Seats
from mas_agents.graphs.wis.session import PlayerFactory, WisGameConfig, play_game
from mas_agents.graphs.wis.protocol import make_app
from mas_agents.call_log import CallRecorder
from tests.fakes import RuleChat
from tests.wis_sdk import exchange, platform_judge, spec
from tests.wis_sdk.env import SDK_VERSION
from tests.wis_sdk.model_rule import ServedAgentModel, served_agent_problems
from tests.wis_sdk.sdk_mimic import MimicServer

SEATS = [f"Player {i}" for i in range(1, 7)]
#: the set-up of the recorded SDK games (words, seed, spy seat, first speaker): the contract test
#: plays them with ``mas spy play --pair ... --seed ...``, whose draws give these seats
GAMES = {"en": ({"civilian": "tea", "spy": "coffee"}, 3, 1, 4), "zh": ({"civilian": "牛奶", "spy": "豆浆"}, 5, 4, 2)}
MODEL = "fake-model"


@pytest.fixture
def mimic_table():
    servers = [MimicServer(model_name=f"sdk-det-{SDK_VERSION}").start() for _ in SEATS]
    try:
        yield servers
    finally:
        for s in servers:
            s.stop()


def _play(mimics, out, *, lang, pair, seed, spy_seat, first_speaker, speak_timeout=60.0):
    record = play_game(out, WisGameConfig(agents=[m.url for m in mimics], pair=pair, lang=lang, seed=seed,
                                          spy_seat=spy_seat, first_speaker=first_speaker, speak_timeout=speak_timeout))
    return record, {seat: [{"seat": seat, **e} for e in m.log] for seat, m in zip(SEATS, mimics)}


def _fixture(name: str):
    try:
        return exchange.read_fixture(name)
    except FileNotFoundError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_judge_gives_sdk_like_seats_the_specified_and_recorded_sequence(mimic_table, tmp_path, lang):
    """One game of the recorded set-up (words, seed, spy seat, first speaker): first every seat
    against the spec, then against what the real SDK agents were sent."""
    pair, seed, spy_seat, first = GAMES[lang]
    record, logs = _play(mimic_table, tmp_path, lang=lang, pair=pair, seed=seed, spy_seat=spy_seat,
                         first_speaker=first)
    probs = [p for seat in SEATS for p in spec.seat_problems(seat, logs[seat], record)]
    probs += spec.deterministic_record_problems(record)
    assert not probs, "\n".join(probs)

    kind, meta, entries = _fixture(f"sdk_game_{lang}")
    assert kind == "sdk_game" and meta["seats"] == SEATS
    assert (meta["lang"], meta["pair"], meta["seed"], meta["spy_seat"], meta["first_speaker"]) == \
        (lang, pair, seed, spy_seat, first), "the recorded game was set up differently: update GAMES"
    recorded = exchange.by_seat(entries)
    assert sorted(recorded) == sorted(SEATS)
    for seat in SEATS:
        diff = exchange.first_difference(exchange.shapes(logs[seat], SEATS), exchange.shapes(recorded[seat], SEATS))
        assert diff is None, f"{seat}, compared with the recorded SDK game ({lang}): {diff}"
    assert record["outcome"] == meta["outcome"]


def _served_app(model: ServedAgentModel):
    """Our WiS agent app as ``mas spy serve-agent`` builds it (``--lang auto``: a platform names
    no language, the agent tells it from its word), on a fake chat model."""
    factory = PlayerFactory(Seats(CallRecorder(None), RuleChat(rule=model.rule)), lang="auto", safe_reply=True)
    return make_app(lambda: factory("plain", "civilian"), MODEL)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_served_agent_answers_the_recorded_platform_requests(lang):
    kind, meta, entries = _fixture(f"platform_{lang}")
    assert kind == "platform"
    model = ServedAgentModel(me=meta["me"])
    ex = []
    with TestClient(_served_app(model)) as client:
        for e in entries:
            r = client.post(e["path"], json=e["request"])
            try:
                reply = r.json()
            except ValueError:
                reply = r.text
            ex.append({"path": e["path"], "request": e["request"], "http_status": r.status_code, "response": reply})
    # the answers have the recorded shapes (route, status, names, round; text as <text>)
    diff = exchange.first_difference(exchange.shapes(ex, meta["players"]), exchange.shapes(entries, meta["players"]))
    assert diff is None, diff
    probs = served_agent_problems(ex, model, lang=meta["lang"], me=meta["me"], word=meta["word"],
                                  players=meta["players"], model_name=MODEL)
    assert not probs, "\n".join(probs)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_served_agent_plays_the_platform_script_in_process(lang):
    model = ServedAgentModel(me="Player 3")
    with TestClient(_served_app(model)) as client:
        ex = platform_judge.play(str(client.base_url), lang=lang, me="Player 3", client=client)
    votes = [e for e in ex if e["path"] == "/agent/interact" and e["request"]["status"] == "vote"]
    assert len(votes) == 3 and all("Player 3" in v["request"]["message"].split(",") for v in votes)
    probs = served_agent_problems(ex, model, lang=lang, me="Player 3", word=platform_judge.WORDS[lang]["civilian"],
                                  players=platform_judge.PLAYERS, model_name=MODEL)
    assert not probs, "\n".join(probs)
