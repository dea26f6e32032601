"""The ``pgm`` block (MAgIC's PGM-aware agent): exact two-hop beliefs with pgmpy, the repeated-game
move predictor, and the planner block with fake agents (and once with a real Agent)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from mas_agents.planners.base import UNSPECIFIED, Action, ActionRequest
from mas_agents.events import make_event
from mas_agents.planners.pgm import (FACTORIES, MovePredictor, PGMBlock, TwoHopBelief, pd_payoff_fn, pg_level,
                          pg_payoff_fn)

from mas_agents.planners.pgm._bn import pgmpy_classes
from tests.games import GAME

pgmpy_classes()  # import pgmpy (a few seconds, once) at collection, not inside the first test

ABC = ["A", "B", "C"]


def approx(d, **kw):
    return pytest.approx(d, abs=kw.get("abs", 1e-9))


# -- the belief model --------------------------------------------------------------------------
def test_prior_is_uniform_and_flags_drop_or_fix_me():
    assert TwoHopBelief("A", ABC).posterior() == approx({"A": 1 / 3, "B": 1 / 3, "C": 1 / 3})
    assert TwoHopBelief("A", ABC, me_hidden=False).posterior() == approx({"A": 0, "B": 0.5, "C": 0.5})
    assert TwoHopBelief("A", ABC, me_hidden=True).posterior() == approx({"A": 1, "B": 0, "C": 0})


def test_odd_reading_matches_bayes_by_hand():
    # alpha=0: P(odd | H=subject) = P(odd | H=reader) = .5, P(odd | H=other) = .1
    b = TwoHopBelief("A", ABC, alpha=0)
    b.observe_reading("B", "odd")
    # H=A (me, the reader): .5; H=B (subject): .5; H=C: .1  -> / 1.1
    assert b.posterior() == approx({"A": 0.5 / 1.1, "B": 0.5 / 1.1, "C": 0.1 / 1.1})
    known = TwoHopBelief("A", ABC, alpha=0, me_hidden=False)
    known.observe_reading("B", "odd")
    assert known.posterior() == approx({"A": 0, "B": 0.5 / 0.6, "C": 0.1 / 0.6})


def test_noise_alpha_mixes_the_cpt_with_uniform():
    b = TwoHopBelief("A", ABC, alpha=0.1, me_hidden=False)
    b.observe_reading("B", "odd")
    hi, lo = 0.9 * 0.5 + 0.1 / 3, 0.9 * 0.1 + 0.1 / 3
    assert b.posterior() == approx({"A": 0, "B": hi / (hi + lo), "C": lo / (hi + lo)})


def test_evidence_against_a_player_raises_its_posterior_and_fit_lowers_it():
    b = TwoHopBelief("A", ABC, me_hidden=False)
    before = b.posterior()["C"]
    b.observe_reading("C", "odd")
    after_one = b.posterior()["C"]
    b.observe_reading("C", "odd")
    after_two = b.posterior()["C"]
    assert before < after_one < after_two
    b.observe_reading("B", "fits")
    assert b.posterior()["C"] > after_two  # B looks fine: even more likely C
    neutral = TwoHopBelief("A", ABC, me_hidden=False)
    neutral.observe_reading("B", "neutral")  # neutral carries no information
    assert neutral.posterior() == approx({"A": 0, "B": 0.5, "C": 0.5})


def test_answer_readings_use_their_own_scale():
    b = TwoHopBelief("A", ABC, alpha=0, me_hidden=False)
    b.observe_reading("B", "suspicious")
    assert b.posterior() == approx({"A": 0, "B": 0.6 / 0.8, "C": 0.2 / 0.8})
    with pytest.raises(ValueError):
        b.observe_reading("B", "weird")
    with pytest.raises(ValueError):
        b.observe_reading("Zed", "odd")


def test_vote_matches_bayes_by_hand_and_raises_the_target():
    b = TwoHopBelief("A", ABC)
    b.observe_vote("B", "C")
    # voter B's candidates {A, C}: H=A -> P(vote C)=1/3; H=B (the voter) -> 1/2; H=C -> 2/3
    assert b.posterior() == approx({"A": (1 / 3) / 1.5, "B": 0.5 / 1.5, "C": (2 / 3) / 1.5})
    assert b.posterior()["C"] > 1 / 3
    b.observe_vote("A", "C")  # my own vote is no evidence for me
    assert b.posterior() == approx({"A": (1 / 3) / 1.5, "B": 0.5 / 1.5, "C": (2 / 3) / 1.5})
    assert b.posterior("B")["C"] > 1 / 3  # ...but B saw it
    with pytest.raises(ValueError):
        b.observe_vote("B", "B")


def test_anonymous_vote_counts_less_the_named_votes():
    b = TwoHopBelief("A", ABC, me_hidden=False)
    assert b.observe_vote_counts({"B": 2, "C": 1}, minus={"B": 1}) == 2
    # one anonymous vote each for B and C: symmetric
    assert b.posterior() == approx({"A": 0, "B": 0.5, "C": 0.5})


def test_posteriors_sum_to_one_everywhere():
    b = TwoHopBelief("P1", [f"P{i}" for i in range(1, 6)])
    for p, r in [("P2", "odd"), ("P3", "fits"), ("P4", "neutral"), ("P5", "odd")]:
        b.observe_reading(p, r)
    b.observe_reading("P2", "odd", public=False)
    b.observe_vote("P3", "P2")
    b.observe_vote("P4", "P5")
    assert sum(b.posterior().values()) == pytest.approx(1.0)
    for q, d in b.others_beliefs().items():
        assert set(d) == set(b.players) and sum(d.values()) == pytest.approx(1.0)


def test_second_hop_follows_what_each_player_saw():
    b = TwoHopBelief("A", ["A", "B", "C", "D"])
    mine0, b0, c0 = b.posterior(), b.posterior("B"), b.posterior("C")
    b.observe_reading("D", "odd", public=False)  # private: only my first hop moves
    assert b.posterior()["D"] > mine0["D"]
    assert b.posterior("B") == approx(b0) and b.posterior("C") == approx(c0)
    b.observe_reading("D", "odd", observer_can_see=["B"])  # seen by B only
    assert b.posterior("B")["D"] > b0["D"] and b.posterior("C") == approx(c0)
    b.observe_reading("D", "odd")  # public: every hop moves
    assert b.posterior("C")["D"] > c0["D"]
    assert b.predicted_suspect("C") == "D" and b.most_likely(among=["B", "C", "D"]) == "D"


def test_odd_readings_of_one_player_cannot_tell_me_from_it_but_fits_of_others_can():
    # Nobody knows their role: an odd clue is as likely when I (the reader) hold the other word.
    b = TwoHopBelief("A", ["A", "B", "C", "D"])
    b.observe_reading("D", "odd")
    assert b.posterior()["A"] == pytest.approx(b.posterior()["D"])
    b.observe_reading("B", "fits")  # B's clue fits my word: I am probably not the odd one out
    assert b.posterior()["D"] > b.posterior()["A"] and b.most_likely() == "D"
    c = TwoHopBelief("A", ["A", "B", "C", "D"])
    for p in "BCD":
        c.observe_reading(p, "odd")  # everybody looks odd to me: I am probably the odd one out
    assert c.most_likely() == "A"


def test_second_hop_skips_q_s_own_clue_and_own_vote():
    b = TwoHopBelief("A", ABC, alpha=0)
    b.observe_reading("B", "odd")  # B does not read its own clue
    assert b.posterior("B") == approx({"A": 1 / 3, "B": 1 / 3, "C": 1 / 3})
    # C reads B's clue as I did (C in the reader role): H=B .5, H=C .5, H=A .1
    assert b.posterior("C") == approx({"A": 0.1 / 1.1, "B": 0.5 / 1.1, "C": 0.5 / 1.1})
    assert b.predicted_suspect("C") == "B"  # C never accuses itself
    b.observe_vote("C", "B")
    assert b.posterior("C") == approx({"A": 0.1 / 1.1, "B": 0.5 / 1.1, "C": 0.5 / 1.1})


def test_others_know_self_drops_q_from_q_s_prior():
    b = TwoHopBelief("A", ABC, me_hidden=False, others_know_self=True)
    assert b.posterior("B") == approx({"A": 0.5, "B": 0, "C": 0.5})


def test_elimination_is_public_hard_evidence():
    b = TwoHopBelief("A", ["A", "B", "C", "D"])
    b.observe_reading("B", "odd")
    b.eliminate("B")
    assert b.posterior()["B"] == 0 and sum(b.posterior().values()) == pytest.approx(1)
    assert "B" not in b.others_beliefs() and b.posterior("C")["B"] == 0


def test_table_is_json_and_summary_names_the_suspects():
    b = TwoHopBelief("A", ABC, me_hidden=False)
    b.observe_reading("C", "odd")
    b.observe_reading("C", "odd", public=False)
    t = json.loads(json.dumps(b.table()))
    assert t["most_likely"] == "C" and t["n_evidence"] == 2 and set(t["others"]) == {"B", "C"}
    assert t["evidence"][1]["seen_by"] == ["A"] and t["evidence"][0]["seen_by"] == "*"
    assert t["predicted_suspects"]["B"] == "C"
    s = b.summary()
    assert "C 0." in s and "B suspects C" in s
    assert "怀疑" in b.summary("zh")


def test_network_goes_through_pgmpy():
    from mas_agents.planners.pgm._bn import build, pgmpy_classes
    b = TwoHopBelief("A", ABC)
    b.observe_reading("B", "odd")
    b.observe_vote("C", "B")
    nodes, evidence = b.network_nodes()
    model = build(nodes)
    assert isinstance(model, pgmpy_classes()[0])
    assert set(model.nodes()) == {"H", "O0", "V1"} and evidence == {"O0": "odd", "V1": "B"}


# -- the move predictor ------------------------------------------------------------------------
PD_TABLE = {"cooperate": 3, "defect": 1, "one_defect": 5, "two_defect": 2}


def test_no_history_predicts_uniformly():
    m = MovePredictor("A", ABC)
    assert m.predict() == {"B": approx({"cooperate": 0.5, "defect": 0.5}),
                           "C": approx({"cooperate": 0.5, "defect": 0.5})}


def test_learns_a_defector_and_what_they_expect_of_me():
    m = MovePredictor("A", ABC)
    for _ in range(3):
        m.update({"A": "cooperate", "B": "defect", "C": "cooperate"})
    pred = m.predict()
    assert pred["B"]["defect"] > 0.7 and pred["C"]["cooperate"] > 0.7
    # (2 transitions + backoff 2 * 4/5 + Laplace 1) / (2 + 2 + 2)
    assert pred["B"]["defect"] == pytest.approx((2 + 2 * 0.8 + 1) / 6)
    assert m.expects_of_me()["B"]["cooperate"] > 0.7  # I always cooperated, as B saw
    for d in (*pred.values(), *m.expects_of_me().values()):
        assert sum(d.values()) == pytest.approx(1)


def test_predictions_depend_on_the_last_round():
    m = MovePredictor("A", ABC)
    # B plays tit-for-tat against A: copies A's last move
    seq = ["cooperate", "defect", "cooperate", "defect", "cooperate"]
    prev = "cooperate"
    for a in seq:
        m.update({"A": a, "B": prev, "C": "cooperate"})
        prev = a
    # last round: A cooperated, B defected -> K_B = 0 -> B cooperates next
    assert m.predict()["B"]["cooperate"] > 0.6


def test_best_response_picks_defect_when_it_dominates():
    m = MovePredictor("A", ABC)
    fn = pd_payoff_fn(PD_TABLE)
    assert fn("defect", {"B": "cooperate", "C": "cooperate"}) == 5
    assert fn("cooperate", {"B": "defect", "C": "cooperate"}) == 0
    assert fn("defect", {"B": "defect", "C": "cooperate"}) == 2
    assert fn("defect", {"B": "defect", "C": "defect"}) == 1
    assert m.best_response(fn) == "defect"
    for _ in range(3):
        m.update({"A": "cooperate", "B": "cooperate", "C": "cooperate"})
    assert m.best_response(fn) == "defect"
    ev = m.expected_payoffs(fn)
    assert ev["defect"] > ev["cooperate"]


def test_public_good_levels_and_payoff():
    assert [pg_level(a) for a in (0, 9, 10, 29, 30, 100)] == ["low", "low", "mid", "mid", "high", "high"]
    assert pg_level(None) is None
    m = MovePredictor("A", ABC, moves=("low", "mid", "high"))
    assert m.bad == "low"
    m.update({"A": "mid", "B": "high", "C": "low"})
    assert m.best_response(pg_payoff_fn(1.5)) == "low"  # multiplier < 3 players: keep the money
    assert json.loads(json.dumps(m.table()))["rounds"] == 1


# -- the planner block -------------------------------------------------------------------------
class FakeAgent:
    """persona + emit + a scripted ``act`` for reading passes: each line's reading is the value of
    the first ``readings`` key found in that item's prompt line ("neutral" when none; a None value
    leaves the line unreadable). Raises on any other request."""

    def __init__(self, name="A", players=ABC, readings=None, role="civilian", game=UNSPECIFIED):
        self.persona = SimpleNamespace(name=name, players=list(players), role=role)
        self.game = game   # as Agent.game: set by the game's composition root
        self.name = name
        self.emitted: list[dict] = []
        self.calls: list[dict] = []
        self.readings = dict(readings or {})

    def emit(self, kind, content, *, data=None, round=0, llm_call_ids=()):
        self.emitted.append({"kind": kind, "content": content, "data": data, "round": round})

    def act(self, request, *, phase=None):
        assert request.kind == "form" and request.context.get("private"), f"unexpected request {request}"
        self.calls.append({"prompt": request.prompt, "fields": list(request.fields),
                           "purpose": request.context.get("purpose")})
        values = {}
        for tag, _ in request.fields:
            line = next(x for x in request.prompt.splitlines() if x.startswith(f"- {tag} "))
            value = next((v for k, v in self.readings.items() if k in line), "neutral")
            if value is not None:
                values[tag] = value
        valid = len(values) == len(request.fields)
        return Action("form", self.name, values if valid else None, raw="", valid=valid, attempts=1 if valid else 2,
                      call_ids=[f"c{len(self.calls)}"], partial={} if valid else values)


def ev(kind, actor, content="", round=1, visible_to=("*",), **data):
    return make_event(phase="t", actor=actor, kind=kind, content=content, round=round, visible_to=visible_to, data=data)


def test_factory_builds_fresh_blocks():
    a, b = FACTORIES["pgm"](), FACTORIES["pgm"]()
    assert len(a) == 1 and isinstance(a[0], PGMBlock) and a[0].name == "pgm" and a[0] is not b[0]


def test_clues_are_read_lazily_at_the_next_action():
    agent = FakeAgent(readings={"a red fruit": "fits", "it barks": "odd"})
    blk = PGMBlock()
    blk.on_event(agent, ev("describe", "B", "a red fruit"))
    blk.on_event(agent, ev("clue", "C", "ignored", text="it barks"))
    blk.on_event(agent, ev("describe", "A", "my own clue"))  # never read
    assert agent.calls == [] and len(blk.queue) == 2
    describe = ActionRequest(kind="describe", actor="A", prompt="Describe.", game=GAME["wis"], context={"word": "apple"})
    blk.contribute(agent, describe)          # describing needs no reading: none is made
    assert agent.calls == [] and len(blk.queue) == 2
    agent.emitted.clear()
    req = ActionRequest(kind="vote", actor="A", prompt="Vote.", choices=["B", "C"], game=GAME["wis"],
                        context={"word": "apple"})
    c = blk.contribute(agent, req)
    assert [x["purpose"] for x in agent.calls] == ["pgm_read"]        # both clues in one call
    assert agent.calls[0]["fields"] == [("B", ["fits", "neutral", "odd"]), ("C", ["fits", "neutral", "odd"])]
    assert '"apple"' in agent.calls[0]["prompt"] and '- B gave this clue: «a red fruit»' in agent.calls[0]["prompt"]
    assert blk.queue == [] and blk.belief.most_likely(among=["B", "C"]) == "C"
    r1, r2, e = agent.emitted
    assert (r1["kind"], r1["data"]["subject"], r1["data"]["reading"]) == ("pgm_reading", "B", "fits")
    assert (r2["kind"], r2["data"]["subject"], r2["data"]["reading"]) == ("pgm_reading", "C", "odd")
    assert e["kind"] == "belief_table" and e["content"] == c.context
    data = json.loads(json.dumps(e["data"]))
    assert data["new_readings"] == 2 and data["posterior"]["C"] > data["posterior"]["B"]
    assert "Bayesian-network belief" in c.context and c.action is None and "Most likely: C" in c.context
    blk.contribute(agent, req)  # nothing new to read
    assert len(agent.calls) == 1 and len(agent.emitted) == 4


def test_topic_only_prompt_and_invalid_reading_is_skipped():
    agent = FakeAgent(readings={"x": None})
    blk = PGMBlock()
    blk.on_event(agent, ev("clue", "B", "x"))
    blk.contribute(agent, ActionRequest(kind="vote", actor="A", prompt="p", choices=["B", "C"], game=GAME["chameleon"],
                                        context={"topic": "Fruit"}))
    assert '"Fruit"' in agent.calls[0]["prompt"] and "do not know the secret word" in agent.calls[0]["prompt"]
    assert blk.belief.observations == [] and blk.readings[0]["reading"] is None


def test_vote_context_and_pgm_vote_without_a_model_call():
    agent = FakeAgent()
    blk = PGMBlock()
    blk.on_event(agent, ev("vote", "B", "C", target="C"))
    blk.on_event(agent, ev("vote", "A", "C", target="C"))
    req = ActionRequest(kind="vote", actor="A", prompt="Vote.", choices=["B", "C"], game=GAME["wis"], context={})
    c = blk.contribute(agent, req)
    assert "Most likely: C (p=" in c.context and c.action is None and agent.calls == []
    req = ActionRequest(kind="vote", actor="A", prompt="Vote.", choices=["B", "C"], game=GAME["wis"], context={"pgm_vote": True})
    c = blk.contribute(agent, req)
    a = c.action
    assert (a.kind, a.actor, a.value, a.raw, a.valid, a.attempts) == ("vote", "A", "C", "(pgm)", True, 0)
    assert agent.calls == [] and agent.emitted[-1]["data"]["pgm_vote"] is True


def test_no_evidence_shows_nothing_and_a_tie_suggests_nobody():
    agent = FakeAgent(players=["A", "B", "C", "D"])
    blk = PGMBlock()
    req = ActionRequest(kind="vote", actor="A", prompt="Vote.", choices=["B", "C", "D"],
                        game=GAME["mmg"], context={"pgm_vote": True})
    # murder-mystery dialogue gives the block no observations: uniform prior, nothing shown
    assert blk.contribute(agent, req) is None
    assert agent.emitted[-1]["data"]["shown"] is False and agent.calls == []
    # one vote against D: D leads alone; a vote against C too makes C and D tie at the top
    blk.on_event(agent, ev("vote", "B", "D", target="D"))
    c = blk.contribute(agent, req)
    assert c.action.value == "D" and "Most likely: D" in c.context
    blk.on_event(agent, ev("vote", "B", "C", round=2, target="C"))
    c = blk.contribute(agent, req)
    assert c.action is None and "Most likely" not in c.context
    assert agent.emitted[-1]["data"]["vote_suggestion"] is None


def test_murder_mystery_statements_are_read_like_clues():
    agent = FakeAgent(readings={"I was asleep": "fits", "none of your business": "odd"}, game=GAME["mmg"])
    agent.persona.victims = ["Vic"]
    blk = PGMBlock()
    blk.on_event(agent, ev("introduce", "B", "I was asleep all night.", round=0))
    blk.on_event(agent, ev("answer", "C", "That is none of your business.", round=1))
    blk.on_event(agent, ev("answer", "A", "my own answer"))   # never read
    # the agent's game (an investigation game) tells the block to read statements before any request
    c = blk.contribute(agent, ActionRequest(kind="ask", actor="A", prompt="Ask.", context={"round": 1}))
    assert [x["purpose"] for x in agent.calls] == ["pgm_read"]
    assert "who killed Vic" in agent.calls[0]["prompt"] and '- B said: «I was asleep all night.»' in agent.calls[0]["prompt"]
    assert blk.belief.most_likely() == "C" and "Bayesian-network belief" in c.context
    assert blk.belief.posterior()["A"] == 0   # a civilian knows it is not the murderer


def test_murder_mystery_odd_statements_never_make_a_civilian_suspect_itself():
    agent = FakeAgent(readings={"said": "odd"}, game=GAME["mmg"])
    agent.persona.victims = ["Vic"]
    blk = PGMBlock()
    for p in ("B", "C"):
        blk.on_event(agent, ev("answer", p, f"{p} said something.", round=1))
    blk.contribute(agent, ActionRequest(kind="vote", actor="A", prompt="Vote.", choices=["B", "C"], context={"victim": "Vic"}))
    post = blk.belief.posterior()
    assert post["A"] == 0 and post["B"] == pytest.approx(post["C"]) == pytest.approx(0.5)
    murderer = FakeAgent(name="B", role="murderer", readings={"said": "odd"}, game=GAME["mmg"])
    blk = PGMBlock()
    blk.on_event(murderer, ev("answer", "C", "C said something.", round=1))
    blk.contribute(murderer, ActionRequest(kind="answer", actor="B", prompt="Answer.", context={}))
    assert blk.belief.posterior()["B"] == 1


def test_private_vote_and_counts_in_magic():
    agent = FakeAgent(role="non_chameleon", game=GAME["chameleon"])
    blk = PGMBlock()
    blk.on_event(agent, ev("setup", "game", scenario="chameleon", players=ABC))
    blk.on_event(agent, ev("vote", "A", visible_to=["A"], target="C"))  # my own private vote
    blk.on_event(agent, ev("vote_result", "game", counts={"B": 1, "C": 2}, accused="C", tie=False))
    b = blk._belief(agent)
    assert b.me_hidden is False and b.others_know_self is True
    kinds = [o.kind for o in b.observations]
    assert kinds == ["vote", "anon_vote", "anon_vote"]  # 2 for C minus mine, 1 for B
    assert b.posterior()["A"] == 0 and b.posterior()["B"] == pytest.approx(0.5)


def test_the_chameleon_votes_with_whom_the_others_suspect():
    agent = FakeAgent(role="chameleon", readings={"barks": "odd"})
    blk = PGMBlock()
    blk.on_event(agent, ev("setup", "game", scenario="chameleon", players=ABC))
    blk.on_event(agent, ev("clue", "C", text="it barks"))
    c = blk.contribute(agent, ActionRequest(kind="vote", actor="A", prompt="Vote.", choices=["B", "C"],
                                            game=GAME["chameleon"], context={"topic": "Animals", "pgm_vote": True}))
    assert blk.belief.posterior()["A"] == 1  # I know I am the chameleon
    assert c.action.value == "C" and "Most suspected by the others: C" in c.context


def test_voted_out_player_is_dropped_once_the_game_goes_on():
    agent = FakeAgent(players=["A", "B", "C", "D"])
    blk = PGMBlock()
    blk.on_event(agent, ev("vote_result", "game", "B", out="B"))
    assert blk.belief.eliminated == []
    blk.on_event(agent, ev("describe", "C", "round two clue", round=2))
    assert blk.belief.eliminated == ["B"] and blk.belief.posterior()["B"] == 0


def test_reentrant_reading_call_gets_no_contribution():
    blk = PGMBlock()

    class Reentrant(FakeAgent):
        def act(self, request, *, phase=None):
            assert blk.contribute(self, request) is None  # were the block asked about its own reading
            return super().act(request, phase=phase)

    agent = Reentrant()
    blk.on_event(agent, ev("describe", "B", "clue"))
    blk.contribute(agent, ActionRequest(kind="vote", actor="A", prompt="p", choices=["B", "C"], game=GAME["wis"],
                                        context={}))
    assert len(agent.calls) == 1


def test_prisoners_dilemma_context_predictions_and_best_response():
    agent = FakeAgent()
    blk = PGMBlock()
    for _ in range(3):
        blk.on_event(agent, ev("pd_reveal", "game", choices={"A": "cooperate", "B": "defect", "C": "cooperate"},
                               payoffs={"A": 0, "B": 5, "C": 0}))
    req = ActionRequest(kind="choose", actor="A", prompt="Cooperate or defect?", choices=["cooperate", "defect"],
                        game=GAME["prisoners_dilemma"], context={"payoffs": PD_TABLE})
    c = blk.contribute(agent, req)
    assert "B: defect 0.77" in c.context and "What they expect of you" in c.context
    assert "Best response to these predictions: defect" in c.context and c.notes["best_response"] == "defect"
    data = json.loads(json.dumps(agent.emitted[-1]["data"]))
    assert data["model"] == "moves" and data["rounds"] == 3 and data["predict"]["B"]["defect"] > 0.7
    assert agent.calls == []


def test_public_good_reveals_are_discretised():
    agent = FakeAgent()
    blk = PGMBlock()
    blk.on_event(agent, ev("pg_reveal", "game", amounts={"A": 20, "B": 0, "C": 50}, pool=70))
    c = blk.contribute(agent, ActionRequest(kind="contribute", actor="A", prompt="How much?",
                                            game=GAME["public_good"], context={"multiplier": 1.5}))
    assert blk.predictor.history == [{"A": "mid", "B": "low", "C": "high"}]
    assert "Best response to these predictions: low" in c.context


def test_cost_sharing_without_a_model_passes():
    agent = FakeAgent()
    blk = PGMBlock()
    assert blk.contribute(agent, ActionRequest(kind="propose", actor="A", prompt="Split?",
                                               fields=[("Airline A", []), ("Airline B", []), ("Airline C", [])],
                                               game=GAME["cost_sharing"], context={})) is None


def test_with_a_real_agent_the_readings_are_one_strict_form_call():
    from mas_agents.accounting import AccountedModel
    from mas_agents.call_log import CallRecorder
    from mas_agents.agents import Agent, Persona
    from tests.fakes import RuleChat

    def rule(messages):
        last = str(messages[-1].content)
        if "End with exactly these lines" in last:
            return "B: fits\nC: odd"
        if '"Vote: ..."' in last:
            return "Vote: C"
        raise AssertionError(f"unexpected prompt: {last[-200:]}")

    rec = CallRecorder(None)
    persona = Persona("A", "WiS", "civilian", players=ABC, system="You play Who is Spy.")
    agent = Agent(persona, AccountedModel(RuleChat(rule=rule, seen=[]), rec, label="fake"), None, [PGMBlock()])
    agent.observe([ev("describe", "C", "it barks"), ev("describe", "B", "red fruit")])
    act = agent.act(ActionRequest(kind="vote", actor="A", prompt="Vote.", choices=["B", "C"],
                                  game=GAME["wis"], context={"word": "apple"}))
    assert act.value == "C"
    assert [c.purpose for c in rec.calls()] == ["pgm_read#1", "vote#1"]
    r1, r2, e = agent.drain_events()
    assert [r1["kind"], r1["data"]["reading"], r2["data"]["reading"]] == ["pgm_reading", "odd", "fits"]
    assert r1["llm_call_ids"] == r2["llm_call_ids"] == [rec.calls()[0].call_id]
    assert e["kind"] == "belief_table" and e["visible_to"] == ["A"] and e["data"]["new_readings"] == 2


def test_parallel_votes_of_one_agent_both_see_every_reading():
    """The murder mystery votes for each victim in parallel with the same agent: the second
    vote waits for the first one's readings instead of going without a belief."""
    import threading
    import time

    class Slow(FakeAgent):
        def act(self, request, **kw):
            time.sleep(0.05)
            return super().act(request, **kw)

    agent = Slow(players=["A", "B", "C"], readings={"said": "odd"})
    agent.persona.victims = ["V1", "V2"]
    blk = PGMBlock()
    for i in range(3):
        blk.on_event(agent, ev("answer", "B", f"B said {i}.", round=1))
    out = {}

    def vote(victim):
        out[victim] = blk.contribute(agent, ActionRequest(kind="vote", actor="A", prompt="Vote.", choices=["B", "C"],
                                                          context={"victim": victim}))
    threads = [threading.Thread(target=vote, args=(v,)) for v in ("V1", "V2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(agent.calls) == 1 and len(agent.calls[0]["fields"]) == 3   # each statement read once
    assert all(c is not None and "Most likely: B" in c.context for c in out.values())


def test_own_readings_seen_again_are_taken_not_read_again():
    """A resumed game or the WellPlay session evaluation rebuilds the agent from the game's events:
    its own ``pgm_reading`` events give the readings back, so no statement is read twice."""
    said = [ev("introduce", "B", "I was asleep all night.", round=0), ev("answer", "C", "None of your business.", round=1)]
    agent = FakeAgent(readings={"asleep": "fits", "business": "odd"}, game=GAME["mmg"])
    agent.persona.victims = ["Vic"]
    blk = PGMBlock()
    for e in said:
        blk.on_event(agent, e)
    blk.contribute(agent, ActionRequest(kind="ask", actor="A", prompt="Ask.", context={"round": 1}))
    assert len(agent.calls) == 1
    own = [make_event(phase="planning", actor="A", kind="pgm_reading", content=e["content"], round=e["round"],
                      visible_to=["A"], data=e["data"]) for e in agent.emitted if e["kind"] == "pgm_reading"]
    assert [e["data"]["reading"] for e in own] == ["fits", "odd"]
    for e in own:                        # the live block sees its own events later: nothing changes
        blk.on_event(agent, e)
    assert len(blk.readings) == 2
    again = FakeAgent(readings={}, game=GAME["mmg"])     # would read "neutral" if it were asked
    again.persona.victims = ["Vic"]
    fresh = PGMBlock()
    for e in said + own:
        fresh.on_event(again, e)
    c = fresh.contribute(again, ActionRequest(kind="mcq", actor="A", prompt="Who?", choices=["x", "y"], context={}))
    assert again.calls == [] and fresh.queue == []
    assert fresh.belief.posterior() == pytest.approx(blk.belief.posterior())
    assert "Bayesian-network belief" in c.context
