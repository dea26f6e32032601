"""One way to build an agent and a model (issue 51 item 4): the games' seats, the murder mystery's
characters and the WellPlay evaluation's answerers are all built by :class:`mas_agents.game.seats.Seats`
on a :class:`mas_agents.llm.ModelPool`."""

import pytest

from mas_agents.graphs.mmg.dataset import load_script
from mas_agents.game.seats import Seats
from mas_agents.accounting import AccountedModel
from mas_agents.call_log import CallRecorder
from tests.fakes import RuleChat


def _no_call(messages):
    raise AssertionError("building an agent calls no model")


def test_seats_record_their_calls_under_their_phase():
    rec = CallRecorder(None)
    seats = Seats(rec, RuleChat(rule=lambda m: "Vote: Bob", seen=[]), seed=3, phase="evaluation")
    text, _ = seats.model().chat([], actor="Ann", purpose="vote")
    assert text == "Vote: Bob"
    assert [c.phase for c in rec.calls()] == ["evaluation"]
    game = Seats(rec, "openai:m")
    assert game._pool.phase == "gameplay"


def test_an_accounted_model_given_to_a_pool_is_used_as_it_is():
    from mas_agents.llm import ModelPool
    acc = AccountedModel(RuleChat(rule=_no_call, seen=[]), CallRecorder(None), label="fake", phase="evaluation")
    pool = ModelPool(CallRecorder(None))
    assert pool.get(acc) is acc and pool.models() == [acc]


@pytest.mark.realdata
def test_the_murder_mystery_characters_are_built_by_the_seats(real_data_root):
    from mas_agents.graphs.mmg.players import build_mmg_agents
    from mas_agents.memory import HashEmbedder
    sc = load_script(real_data_root, "Sin")
    seats = Seats(CallRecorder(None), RuleChat(rule=_no_call, seen=[]))
    agents = build_mmg_agents(sc, "plain+pgm", seats, HashEmbedder())
    assert list(agents) == [c.name for c in sc.characters]
    assert all(a.model is seats.model() for a in agents.values())            # one accounted model
    assert list(seats.seat_models) == list(agents)                           # every seat recorded
    murderers = {n for v in sc.victims for n in sc.murderers_of(v)}
    assert murderers and {n: a.spec for n, a in agents.items()} == {
        n: ("plain" if n in murderers else "plain+pgm") for n in agents}    # MURDERER_SPEC (PLAYER* §4.1)


@pytest.mark.realdata
def test_the_evaluation_builds_its_agent_and_model_as_a_game_does(real_data_root, monkeypatch):
    """An ``openai:`` model of the evaluation is the process's shared one, as a game's pool gets
    it (one SDK client), its calls recorded under ``evaluation``; the model is built once."""
    from mas_agents.eval.wellplay.agents import build_eval_agent
    from mas_agents.llm import ModelPool
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    sc = load_script(real_data_root, "Sin")
    rec = CallRecorder(None)
    me = sc.characters[0].name
    agent, acc = build_eval_agent(sc, me, "pp", [], "openai:m", 1, recorder=rec)
    assert agent.model is acc and acc.phase == "evaluation" and acc.recorder is rec
    assert acc.model is ModelPool(CallRecorder(None), seed=1).get("openai:m").model
    other, again = build_eval_agent(sc, sc.characters[1].name, "pp", [], "openai:m", 1, recorder=rec, accounted=acc)
    assert again is acc and other.model is acc


def test_seats_hand_the_game_a_built_agent_by_seat_name_or_index(monkeypatch):
    """A caller hands built agents through the seats (``Seats(hand=...)``): the game builds each
    seat as always and :meth:`Seats.agent` gives it the handed one; a place the game does not
    seat, and a person's seat, are refused."""
    from mas_agents.agents import Persona
    from mas_agents.game.seats import Hand
    from mas_agents.planners.base import UNSPECIFIED

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")   # never called: built only
    built = []

    def seat(base, model):
        built.append((base.persona.name, base.spec, model.label))
        return ("handed", base.persona.name)

    hand = {"Cy": Hand(model="openai:x", label="plain+pgm@openai:x", seat=seat),
            1: Hand(model=None, label="plain+pgm", seat=seat)}
    seats = Seats(CallRecorder(None), RuleChat(rule=_no_call, seen=[]), hand=hand)
    agents = {n: seats.agent(Persona(name=n), "plain", UNSPECIFIED) for n in ("Ann", "Bo", "Cy")}
    assert agents["Ann"].persona.name == "Ann" and agents["Bo"] == ("handed", "Bo") and agents["Cy"] == ("handed", "Cy")
    assert [b[:2] for b in built] == [("Bo", "plain"), ("Cy", "plain")]     # the game's own seat, then handed over
    assert seats.seat_models == {"Ann": "RuleChat", "Bo": "RuleChat", "Cy": "openai:x"}
    seats.seat("Cy", "plain")   # a game recording its seats again keeps the handed model
    assert seats.seat_models["Cy"] == "openai:x"
    assert seats.handed("toy") == {"Cy": "plain+pgm@openai:x", "Bo": "plain+pgm"}

    far = Seats(CallRecorder(None), RuleChat(rule=_no_call, seen=[]), hand={"Dee": hand["Cy"], 5: hand[1]})
    far.agent(Persona(name="Ann"), "plain", UNSPECIFIED)
    with pytest.raises(ValueError, match="no seat 'Dee' in this toy game; its seats: Ann"):
        far.handed("toy")
    with pytest.raises(ValueError, match="seats no agent through its seats"):
        Seats(CallRecorder(None), "local", hand={0: hand[1]}).handed("toy")
    person = Seats(CallRecorder(None), "local", hand={"Ann": hand[1]})
    with pytest.raises(ValueError, match="seat 'Ann' is played by a person"):
        person.seat("Ann", "human")
