"""The fake models fail loudly: a prompt a fake rule does not recognise raises
:class:`tests.fakes.UnrecognisedPrompt`, which no layer turns into a foul, an abstention or a retry,
and which fails the test even where the code under test swallows it."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from mas_agents.accounting import AccountedModel
from mas_agents.call_log import CallRecorder
from tests import fakes
from tests.fakes import (RuleChat, UnrecognisedPrompt, any_game_player, expect_unrecognised, magic_player,
                         polite_player, star_rule, wis_player)

ODD = "Recite the alphabet backwards. " + "x" * 300


def test_every_fake_rule_raises_on_an_unknown_prompt_naming_itself_and_the_prompt():
    messages = [SystemMessage(content="You are Player 1 in a game of Who is Spy. Your word is \"tea\"."),
                HumanMessage(content=ODD)]
    for rule, name in ((polite_player(), "polite_player"), (star_rule(), "polite_player"),
                       (wis_player(), "wis_player"), (magic_player(), "magic_player"),
                       (any_game_player(), "wis_player")):
        with pytest.raises(UnrecognisedPrompt) as info:
            rule(messages)
        msg = str(info.value)
        assert msg.startswith(f"{name}") and repr(ODD[:200]) in msg and ODD[:201] not in msg


def test_the_accounted_model_records_it_and_re_raises_it_unretried():
    rec = CallRecorder(None)
    model = AccountedModel(RuleChat(rule=polite_player(), seen=[]), rec, label="fake", backoff_s=0)
    with expect_unrecognised():
        model.chat([HumanMessage(content=ODD)], actor="Ann", purpose="odd")
    [call] = rec.calls()
    assert not call.ok and call.retries == 0 and call.error.startswith("UnrecognisedPrompt: polite_player")


def test_the_agent_does_not_turn_it_into_an_abstention(make_agent):
    agent, rec, _ = make_agent(polite_player())
    with expect_unrecognised():
        agent.choose("Is Bob nervous?", ["yes", "no"], purpose="reading")   # polite_player knows no "Choice"
    assert agent.stats == {} and rec.totals()["failures"] == 1


def test_it_stops_a_murder_mystery_game(tmp_path, toy_runtime):
    from mas_agents.graphs.mmg.session import run_game
    rt, rec, out = toy_runtime(tmp_path, {**{p: polite_player() for p in ("Ann", "Bob", "Cid")},
                                          "Dee": lambda m: (_ for _ in ()).throw(fakes.unrecognised("dee", m))})
    with expect_unrecognised() as info:
        run_game(rt, out, rec, {})
    assert str(info.value).startswith("dee: unrecognised prompt")


def test_it_stops_a_who_is_spy_game(tmp_path):
    from mas_agents.graphs.wis.session import WisGameConfig, play_game
    with expect_unrecognised() as info:   # the murder-mystery fake knows no "Description:"
        play_game(tmp_path, WisGameConfig(agents=["plain"] * 4, pair={"civilian": "tea", "spy": "coffee"},
                                          model=RuleChat(rule=polite_player())))
    assert str(info.value).startswith("polite_player: unrecognised prompt")


def test_it_stops_a_magic_run(tmp_path, mixed_root):
    from mas_agents.graphs.magic.bench import MagicBenchConfig, run_magic
    with expect_unrecognised():
        run_magic(MagicBenchConfig(data_root=mixed_root, out=tmp_path, scenarios=["public_good"], challenger="plain",
                                   defender="plain", settings="0", model=RuleChat(rule=polite_player())))


def test_a_swallowed_one_is_still_recorded_for_the_conftest():
    """The WiS protocol server answers ``success=False`` when its player raises; the prompt the
    fake did not know is still in :data:`tests.fakes.UNRECOGNISED`, which fails the test
    (tests/conftest.py, ``pytest_runtest_call``) unless it expected it and cleared it, as here."""
    from fastapi.testclient import TestClient

    from mas_agents.game.seats import Seats
    from mas_agents.graphs.wis.session import PlayerFactory
    from mas_agents.graphs.wis.protocol import make_app
    from mas_agents.graphs.wis.protocol_types import request

    factory = PlayerFactory(Seats(CallRecorder(None), RuleChat(rule=polite_player())))
    client = TestClient(make_app(lambda: factory("plain", "civilian"), "fake"))
    for req in (request("start", name="Player 1", message="Players: Player 1, Player 2, Player 3"),
                request("distribution", name="Player 1", word="tea")):
        assert client.post("/agent/perceive", json=req).json()["success"] is True
    reply = client.post("/agent/interact", json=request("round", name="Player 1", message="Describe.", round=1)).json()
    assert reply["success"] is False and "UnrecognisedPrompt" in reply["errMsg"]
    assert len(fakes.UNRECOGNISED) == 1 and str(fakes.UNRECOGNISED[0]).startswith("polite_player")
    fakes.UNRECOGNISED.clear()


def test_a_rule_that_wants_garbage_says_so():
    """A malformed reply is a rule written for it, not a fake's fallback."""
    rec = CallRecorder(None)
    model = AccountedModel(RuleChat(rule=lambda m: "la la la", seen=[]), rec, label="fake")
    assert model.chat([HumanMessage(content=ODD)], actor="Ann", purpose="odd")[0] == "la la la"
    assert fakes.UNRECOGNISED == []
