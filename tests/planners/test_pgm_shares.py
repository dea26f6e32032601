"""The ``pgm`` block in cost sharing (issue 27): the two-hop share model
(:mod:`mas_agents.planners.pgm.shares`) on hand-made proposals and votes, the block's contribution and its
``belief_table`` event, and a whole MAgIC cost-sharing game on a fake model, with and without pgm
(the same model calls)."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from mas_agents.planners.base import ActionRequest
from mas_agents.events import make_event
from mas_agents.planners.pgm import PGMBlock, ShareBelief
from mas_agents.planners.pgm._bn import pgmpy_classes
from mas_agents.planners.pgm.shares import LEVELS, level
from tests.games import GAME

pgmpy_classes()  # import pgmpy once at collection

P1, P2, P3 = PLAYERS = ["Player 1", "Player 2", "Player 3"]
FIELDS = [("Airline A", []), ("Airline B", []), ("Airline C", [])]


def at_least(dist, v):
    return sum(p for lv, p in dist.items() if lv >= v)


# -- the model -----------------------------------------------------------------------------------
def test_level_rounds_to_the_grid():
    assert [level(x) for x in (0, 2.4, 2.5, 33.3, 33.4, 97.6, 120, -3)] == [0, 0, 5, 35, 35, 100, 100, 0]


def test_a_rejection_lowers_the_acceptance_of_that_share_by_bayes_by_hand():
    """alpha=0, uniform prior over the 21 levels. P2 votes for its own proposal (P2 pays 20) over
    mine (P2 pays 40): limits 0..15 accept neither (a uniform vote, 1/2), 20..35 accept only its own
    (1), 40..100 accept both (1/2)."""
    b = ShareBelief(P1, PLAYERS, alpha=0)
    ballot = {P1: [20, 40, 40], P2: [40, 20, 40]}
    before = at_least(b.limit(P2), 40)
    assert before == pytest.approx(13 / 21)
    b.observe_vote(P2, P2, ballot, round=1)
    after = at_least(b.limit(P2), 40)
    assert after == pytest.approx(13 * 0.5 / (4 * 0.5 + 4 * 1 + 13 * 0.5))
    assert after < before and b.accept_prob(P2, 40) == pytest.approx(after)
    # the vote for MY proposal instead: 20..35 cannot explain it (alpha=0), 40.. can
    acc = ShareBelief(P1, PLAYERS, alpha=0)
    acc.observe_vote(P2, P1, ballot, round=1)
    post = acc.limit(P2)
    assert at_least(post, 40) == pytest.approx(6.5 / 8.5) and sum(post[v] for v in (20, 25, 30, 35)) == 0


def test_a_party_that_proposed_25_and_rejected_40_is_believed_not_to_accept_40():
    b = ShareBelief(P1, PLAYERS)           # the default noise
    b.observe_proposal(P2, [40, 25, 35], round=1)
    only_proposal = b.accept_prob(P2, 40)
    b.observe_vote(P2, P2, {P1: [30, 40, 30], P2: [40, 25, 35]}, round=1)
    assert b.accept_prob(P2, 40) < only_proposal and b.accept_prob(P2, 40) < 0.15   # the noise keeps a tail
    assert b.accept_prob(P2, 25) > 0.9
    # nothing was learned about Player 3 from Player 2's acts
    assert b.limit(P3) == pytest.approx({v: 1 / 21 for v in LEVELS})


def test_the_proposal_cpt_by_hand():
    """alpha=0, decay .5: P(T=t | X=25) ∝ .5^((t-25)/5) / Z_t, Z_t = Σ_{k<=t/5} .5^k; 0 below 25."""
    b = ShareBelief(P1, PLAYERS, alpha=0)
    b.observe_proposal(P2, [40, 25, 35], round=1)
    post = b.limit(P2)
    z = lambda t: sum(0.5 ** k for k in range(t // 5 + 1))  # noqa: E731
    assert all(post[v] == 0 for v in LEVELS if v < 25)
    assert post[25] / post[30] == pytest.approx((1 / z(25)) / (0.5 / z(30)))
    assert sum(post.values()) == pytest.approx(1)
    # a concession (a higher own share later) moves the belief up to it
    b.observe_proposal(P2, [35, 30, 35], round=2)
    assert ShareBelief.mode(b.limit(P2)) == 30 and b.limit(P2)[25] == 0


def test_second_hop_reads_my_acts_and_what_each_party_asks_of_me():
    low, high = ShareBelief(P1, PLAYERS), ShareBelief(P1, PLAYERS)
    for b, asked in ((low, 35), (high, 60)):
        b.observe_proposal(P1, [30, 35, 35], round=1)            # mine: public, read by both
        b.observe_proposal(P2, [asked, 25, 75 - asked], round=1)
    m_low, m_high = (ShareBelief.mean(b.expects_of_me(P2)) for b in (low, high))
    assert 30 < m_low < m_high
    # Player 3 asked nothing of me: its second hop has only my own proposal
    assert low.expects_of_me(P3) == pytest.approx(high.expects_of_me(P3))
    assert low.evidence_count(P3, hop=2) == 1 and low.evidence_count(P2, hop=2) == 2
    assert ShareBelief.mode(low.expects_of_me(P3)) == 30   # I asked myself 30: at least that, most likely 30


def test_implied_split_gives_each_party_what_it_surely_accepts():
    b = ShareBelief(P1, PLAYERS, alpha=0)
    b.observe_proposal(P2, [50, 25, 25], round=1)
    b.observe_proposal(P3, [50, 25, 25], round=1)
    split, p_all, each = b.implied_split()
    # 50/25/25: accepted for sure, worth 50; 40/30/30 is accepted with P(T>=30)^2 ≈ .24, worth 60
    assert split == (50, 25, 25) and p_all == pytest.approx(1) and each == pytest.approx({P2: 1, P3: 1})
    # once both have shown they accept 35 (they voted for a split asking them 35), the split moves my way
    ballot = {P1: [30, 35, 35], P2: [50, 25, 25]}
    for q in (P2, P3):
        b.observe_proposal(q, [30, 35, 35], round=2)
        b.observe_vote(q, P1, ballot, round=2)
    split2, p2, _ = b.implied_split()
    assert split2[0] < 50 and split2[0] == 30 and p2 > 0.9


def test_vote_suggestion_counts_identical_splits_together():
    b = ShareBelief(P1, PLAYERS)
    b.observe_proposal(P2, [50, 25, 25], round=1)
    b.observe_proposal(P3, [50, 25, 25], round=1)
    ballot = {P1: [30, 35, 35], P2: [50, 25, 25], P3: [50, 25, 25]}
    scores = b.vote_scores(ballot)
    assert scores[P2] == scores[P3] and scores[P2][0] > scores[P1][0]
    assert b.vote_suggestion(ballot) == P2 and b.vote_suggestion({}) is None


def test_bad_input_is_refused_or_ignored():
    with pytest.raises(ValueError):
        ShareBelief("X", PLAYERS)
    with pytest.raises(ValueError):
        ShareBelief(P1, PLAYERS, alpha=2)
    b = ShareBelief(P1, PLAYERS)
    assert not b.observe_proposal(P2, None) and not b.observe_proposal(P2, [50, 50])
    assert not b.observe_vote(P2, None, {P2: [40, 30, 30]}) and not b.observe_vote(P2, P3, {P2: [40, 30, 30]})
    assert b.observations == []
    with pytest.raises(ValueError):
        b.limit(P1)   # the networks are about the others


def test_networks_go_through_pgmpy():
    Network, _, _ = pgmpy_classes()
    b = ShareBelief(P1, PLAYERS)
    b.observe_proposal(P2, [40, 30, 30], round=1)
    b.observe_vote(P2, P2, {P2: [40, 30, 30]}, round=1)
    from mas_agents.planners.pgm._bn import build
    nodes, evidence = b.network_nodes(P2)
    model = build(nodes)
    assert isinstance(model, Network) and set(model.nodes()) == {"T", "X0", "V1"} and evidence == {"X0": "30", "V1": P2}


# -- the block ------------------------------------------------------------------------------------
class FakeAgent:
    """persona + emit; raises on any model call (the block must make none in cost sharing)."""

    def __init__(self, name=P1):
        self.persona = SimpleNamespace(name=name, players=list(PLAYERS), role="player")
        self.game = GAME["cost_sharing"]
        self.name = name
        self.emitted: list[dict] = []

    def emit(self, kind, content, *, data=None, round=0, llm_call_ids=()):
        self.emitted.append({"kind": kind, "content": content, "data": data, "round": round})

    def act(self, request, *, phase=None):
        raise AssertionError(f"the pgm block made a model call in cost sharing: {request}")


def ev(kind, actor, content="", round=1, **data):
    return make_event(phase="negotiation", actor=actor, kind=kind, content=content, round=round, data=data)


def propose_request():
    return ActionRequest(kind="propose", actor=P1, prompt="Round 2: propose.", fields=FIELDS,
                         game=GAME["cost_sharing"], context={})


def test_block_shows_nothing_before_any_proposal_but_emits_its_table():
    agent, blk = FakeAgent(), PGMBlock()
    assert blk.contribute(agent, propose_request()) is None
    (e,) = agent.emitted
    assert e["kind"] == "belief_table" and e["data"] == {"model": "shares", "n_evidence": 0, "request": "propose",
                                                         "shown": False}


def test_block_learns_from_proposals_and_votes_and_puts_the_implied_split_in_the_prompt():
    agent, blk = FakeAgent(), PGMBlock()
    blk.on_event(agent, ev("proposal", P1, round=1, split=[30, 35, 35]))
    blk.on_event(agent, ev("proposal", P2, round=1, split=[50, 25, 25]))
    blk.on_event(agent, ev("proposal", P3, round=1, split=[50, 25, 25]))
    blk.on_event(agent, ev("proposal", P3, round=1, split=None))      # an invalid one is no evidence
    vote = blk.contribute(agent, ActionRequest(kind="vote", actor=P1, prompt="Vote.", choices=[P1, P2, P3],
                                               game=GAME["cost_sharing"], context={}))
    assert "Vote suggestion: the proposal of Player 2" in vote.context and vote.notes["vote_suggestion"] == P2
    for voter, target in ((P1, P1), (P2, P2), (P3, P3)):
        blk.on_event(agent, ev("proposal_vote", voter, round=1, **{"for": target}))
    c = blk.contribute(agent, propose_request())
    assert "highest share of the fee each other party will accept" in c.context
    assert "What they probably think you will accept: Player 2 about" in c.context
    assert "Airline A: 50%, Airline B: 25%, Airline C: 25%" in c.context and c.notes["implied_split"] == [50, 25, 25]
    table = json.loads(json.dumps(agent.emitted[-1]["data"]))
    assert agent.emitted[-1]["kind"] == "belief_table" and agent.emitted[-1]["content"] == c.context
    assert table["model"] == "shares" and table["shown"] and table["n_evidence"] == 6
    assert table["implied_split"] == [50, 25, 25] and table["labels"] == ["Airline A", "Airline B", "Airline C"]
    assert [o["kind"] for o in table["evidence"]] == ["proposal"] * 3 + ["vote"] * 3
    assert table["limits"][P2]["25"] > table["limits"][P2]["35"]


# -- a whole game ------------------------------------------------------------------------------------
def haggler(prompts: list[str]):
    """A fake cost-sharing player: in rounds 1-2 each airline asks 20 % for itself and 40 % of the
    others and votes for its own proposal; from round 3 all propose 40/30/30 and vote for the
    first. Replies depend on the seat and round only (never on the pgm text), so the game is the
    same with and without the block. Raises on anything else."""
    from tests.fakes import numbered, unrecognised

    def rule(messages):
        last = str(messages[-1].content)
        prompts.append(last)
        me = re.search(r"You are (Player \d)", last)
        rnd = re.search(r"^Round (\d+): (propose|vote)", last, re.M)
        if me is None or rnd is None:
            raise unrecognised("haggler", messages)
        k, r = int(me.group(1)[-1]), int(rnd.group(1))
        if rnd.group(2) == "propose" and '"Proposal: ' in last:
            shares = [40, 30, 30] if r >= 3 else [20 if i == k else 40 for i in (1, 2, 3)]
            return "Proposal: " + ", ".join(f"Airline {a}: {s}%" for a, s in zip("ABC", shares))
        if '"Vote: ..."' in last:
            choices = numbered(last)
            return f"Vote: {me.group(1) if r < 3 and me.group(1) in choices else choices[0]}"
        raise unrecognised("haggler", messages)
    return rule


def play(tmp_path, challenger):
    from mas_agents.graphs.magic.dataset import CostSharingSetting
    from mas_agents.graphs.magic.session import MagicGameConfig, play_magic_game
    from tests.fakes import RuleChat
    setting = CostSharingSetting(id=0, test_player=P1, fee=1_000_000,
                                 topic="Fixed Airport Fee: $1,000,000\nAirline A: 100 flights/month.",
                                 proposals={P2: [40, 30, 30], P3: [40, 30, 30]})
    prompts: list[str] = []
    out = tmp_path / challenger
    res = play_magic_game(out, MagicGameConfig(scenario="cost_sharing", setting=setting, side="test_seat",
                                               challenger=challenger, defender="plain",
                                               model=RuleChat(rule=haggler(prompts), seen=[])))
    events = [json.loads(x) for x in (out / "events.jsonl").read_text().splitlines()]
    calls = [json.loads(x) for x in (out / "llm_calls.jsonl").read_text().splitlines()]
    return res, events, calls, prompts


def test_a_cost_sharing_game_with_pgm_logs_its_beliefs_and_costs_no_extra_call(tmp_path):
    plain, plain_events, plain_calls, _ = play(tmp_path, "plain")
    res, events, calls, prompts = play(tmp_path, "plain+pgm")
    assert res["outcome"]["agreed"] and res["outcome"]["rounds"] == 3 == plain["outcome"]["rounds"]
    assert res["outcome"]["split"] == [40, 30, 30]
    # no extra model call: the same calls, seat by seat and purpose by purpose
    key = lambda cs: sorted((c["actor"], c["purpose"]) for c in cs)  # noqa: E731
    assert len(calls) == len(plain_calls) == 18 and key(calls) == key(plain_calls)
    tables = [e for e in events if e["kind"] == "belief_table"]
    assert tables and all(e["actor"] == P1 and e["visible_to"] == [P1] for e in tables)
    assert not [e for e in plain_events if e["kind"] == "belief_table"]
    # one per action of the pgm seat: a proposal and a vote in each of 3 rounds
    assert [t["data"]["request"] for t in tables] == ["propose", "vote"] * 3
    assert [t["data"]["shown"] for t in tables] == [False] + [True] * 5
    last = tables[-1]["data"]
    assert last["model"] == "shares" and last["n_evidence"] == 3 + 3 + 3 + 3 + 3   # 3 rounds of proposals, 2 of votes
    assert last["limit_mean"][P2] > 20   # Player 2 ended up accepting 30 %
    # the belief reached the pgm seat's prompts, and only its own
    assert sum("The split these beliefs imply" in p for p in prompts) == 5
    assert all("You are Player 1" in p for p in prompts if "The split these beliefs imply" in p)
