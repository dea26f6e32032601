"""Independent tests of mas_agents.graphs.magic.rules against the MAgIC rules (MAgIC §3, Appendix A; docs/guides/magic.md).

Every expected value below was worked out by hand from the rules (MAgIC §3, Appendix A, and the
choices documented in the module), not read off the implementation.
"""

import pytest

from mas_agents.graphs.magic import rules as r

P1, P2, P3 = "Player 1", "Player 2", "Player 3"
PLAYERS = [P1, P2, P3]


# --------------------------------------------------------------------------- constants, credit

def test_constants_match_the_issue():
    assert r.PLAYERS == (P1, P2, P3)
    assert r.CHAMELEON_CLUE_ROUNDS == 1 and r.UNDERCOVER_CLUE_ROUNDS == 2
    assert r.COST_SHARING_MAX_ROUNDS == 5 and r.PD_ROUNDS == 5 and r.PG_ROUNDS == 5
    assert r.PG_ENDOWMENT == 100 and r.SPLIT_TOLERANCE == 0.5


def test_credit_tables():
    assert r.CHAMELEON_CREDIT == {0: (0, 2), 1: (1, 1), 2: (2, 0), 3: (1, 1)}
    assert r.UNDERCOVER_CREDIT == {0: (0, 3), 1: (3, 0), 2: (2, 1)}


@pytest.mark.parametrize("scenario,code,side,expected", [
    ("chameleon", 0, "chameleon", 0), ("chameleon", 0, "non_chameleon", 2),
    ("chameleon", 1, "chameleon", 1), ("chameleon", 1, "non_chameleon", 1),
    ("chameleon", 2, "chameleon", 2), ("chameleon", 2, "non_chameleon", 0),
    ("chameleon", 3, "chameleon", 1), ("chameleon", 3, "non_chameleon", 1),
    ("undercover", 0, "undercover", 0), ("undercover", 0, "civilian", 3),
    ("undercover", 1, "undercover", 3), ("undercover", 1, "civilian", 0),
    ("undercover", 2, "undercover", 2), ("undercover", 2, "civilian", 1),
])
def test_credit_lookup(scenario, code, side, expected):
    assert r.credit(scenario, code, side) == expected


@pytest.mark.parametrize("args", [("public_good", 0, "player"), ("chameleon", 4, "chameleon"),
                                  ("undercover", 3, "civilian"), ("chameleon", 0, "civilian")])
def test_credit_rejects_unknowns(args):
    with pytest.raises(ValueError):
        r.credit(*args)


# --------------------------------------------------------------------------- vote_outcome

def test_vote_two_against_one_accuses():
    counts, accused, tie = r.vote_outcome({P1: P3, P2: P3, P3: P1}, PLAYERS)
    assert counts == {P1: 1, P2: 0, P3: 2}
    assert accused == P3 and tie is False


def test_vote_counts_keep_seat_order_and_zeros():
    counts, _, _ = r.vote_outcome({P3: P2, P1: P2, P2: P1})
    assert list(counts) == PLAYERS and counts == {P1: 1, P2: 2, P3: 0}


def test_vote_one_each_is_a_tie():
    counts, accused, tie = r.vote_outcome({P1: P2, P2: P3, P3: P1}, PLAYERS)
    assert counts == {P1: 1, P2: 1, P3: 1} and accused is None and tie is True


def test_vote_two_way_tie_with_an_abstention():
    # P3 abstains: P1 and P2 have one vote each -> another player ties the top count
    counts, accused, tie = r.vote_outcome({P1: P2, P2: P1, P3: None}, PLAYERS)
    assert counts == {P1: 1, P2: 1, P3: 0} and accused is None and tie is True


def test_vote_single_valid_vote_accuses():
    counts, accused, tie = r.vote_outcome({P1: P2, P2: None, P3: "nobody"}, PLAYERS)
    assert counts == {P1: 0, P2: 1, P3: 0} and accused == P2 and tie is False


def test_no_valid_votes_is_a_tie():
    counts, accused, tie = r.vote_outcome({P1: None, P2: "Player 9", P3: None}, PLAYERS)
    assert counts == {P1: 0, P2: 0, P3: 0} and accused is None and tie is True
    assert r.vote_outcome({}, PLAYERS) == ({P1: 0, P2: 0, P3: 0}, None, True)


def test_self_votes_and_outsider_voters_are_ignored():
    # P3's self-vote is an abstention, an outsider's vote is ignored -> P1 1, P2 0 -> P1 accused
    counts, accused, tie = r.vote_outcome({P1: P1, P2: P1, P3: P3, "Player 7": P2}, PLAYERS)
    assert counts == {P1: 1, P2: 0, P3: 0} and accused == P1 and not tie


# --------------------------------------------------------------------------- outcome codes

def test_chameleon_outcome_codes():
    assert r.chameleon_outcome(P3, False, P3, False) == 0
    assert r.chameleon_outcome(P3, False, P3, None) == 0      # no guess counts as wrong
    assert r.chameleon_outcome(P3, False, P3, True) == 1
    assert r.chameleon_outcome(P1, False, P3, None) == 2
    assert r.chameleon_outcome(P1, False, P3, True) == 2      # guess ignored when not accused
    assert r.chameleon_outcome(None, True, P3, None) == 3


def test_undercover_outcome_codes():
    assert r.undercover_outcome(P2, False, P2) == 0
    assert r.undercover_outcome(P1, False, P2) == 1
    assert r.undercover_outcome(None, True, P2) == 2


@pytest.mark.parametrize("accused,tie", [(P1, True), (None, False)])
def test_outcomes_reject_inconsistent_votes(accused, tie):
    with pytest.raises(ValueError):
        r.chameleon_outcome(accused, tie, P1, False)
    with pytest.raises(ValueError):
        r.undercover_outcome(accused, tie, P1)


def test_vote_then_outcome_end_to_end():
    _, accused, tie = r.vote_outcome({P1: P3, P2: P3, P3: P2})
    assert r.chameleon_outcome(accused, tie, P3, r.guess_correct("grapes", "Grape")) == 1
    _, accused, tie = r.vote_outcome({P1: P2, P2: P1, P3: P1})
    assert r.undercover_outcome(accused, tie, P2) == 1


# --------------------------------------------------------------------------- guess_correct

@pytest.mark.parametrize("guess,code", [
    ("Grape", "Grape"), ("grape", "Grape"), ("GRAPE", "Grape"), ("  grape. ", "Grape"),
    ("grapes", "Grape"), ("Grape", "grapes"), ('"Grape!"', "Grape"),
    ("mangoes", "Mango"), ("mangos", "Mango"), ("peaches", "Peach"), ("cherries", "Cherry"),
    ("united kingdom", "United Kingdom"), ("United-Kingdom", "United Kingdom"),
    ("UnitedKingdom", "United Kingdom"), ("the United Kingdom", "United Kingdom"),
    ("a lion", "Lion"), ("Ｇｏｌｆ", "Golf"),
])
def test_guess_correct_forms(guess, code):
    assert r.guess_correct(guess, code) is True


@pytest.mark.parametrize("guess,code", [
    ("Apple", "Grape"), ("UK", "United Kingdom"), ("the word is grape", "Grape"),
    ("grape or apple", "Grape"), ("", "Grape"), ("  ", "Grape"), ("...", "Grape"), (None, "Grape"),
    ("pineapple", "Apple"), ("grap", "Grape"), ("the", "Grape"),
])
def test_guess_wrong_forms(guess, code):
    assert r.guess_correct(guess, code) is False


# --------------------------------------------------------------------------- splits

@pytest.mark.parametrize("split", [
    [40, 30, 30], (50, 25, 25), [33.3, 33.3, 33.4], [33.33, 33.33, 33.33], [100, 0, 0],
    [40, 30, 30.5], [40, 30, 29.5],
])
def test_valid_split_accepts(split):
    assert r.valid_split(split) is True


@pytest.mark.parametrize("split", [
    [65, 17, 17],                  # sum 99: the airport ids 9-10 opener is not valid at tol 0.5
    [40, 30, 31], [50, 50], [40, 30, 20, 10], [-10, 60, 50], None, "40,30,30",
    [40, 30, "30"], [True, 50, 49], [float("nan"), 50, 50], [float("inf"), 0, 0],
])
def test_valid_split_rejects(split):
    assert r.valid_split(split) is False


def test_valid_split_custom_tolerance():
    assert r.valid_split([65, 17, 17], tol=1.0) is True


@pytest.mark.parametrize("value,expected", [
    ([40, 30, 30], (40.0, 30.0, 30.0)),
    ((50, 25.5, 24.5), (50.0, 25.5, 24.5)),
    ("Airline A: 40%\nAirline B: 30%\nAirline C: 30%", (40.0, 30.0, 30.0)),
    ("I propose: Airline A: 50% / Airline B: 25% / Airline C: 25%.", (50.0, 25.0, 25.0)),
    ("As Player 1, representing Airline A, I propose the following cost distribution:\n"
     "Airline A: $400,000\nAirline B: $300,000\nAirline C: $300,000.", (40.0, 30.0, 30.0)),
    ("Airline A: $650,000\nAirline B: $175,000\nAirline C: $175,000.", (65.0, 17.5, 17.5)),
    ("Earlier I said Airline A: 60%, Airline B: 20%, Airline C: 20%. Now: Airline A: 50%, "
     "Airline B: 30%, Airline C: 20%", (50.0, 30.0, 20.0)),
    ("My split is 45% / 35% / 20%", (45.0, 35.0, 20.0)),
    ("40, 30, 30", (40.0, 30.0, 30.0)),
    ("[40,30,30]", (40.0, 30.0, 30.0)),
    ("33.3, 33.3, 33.4", (33.3, 33.3, 33.4)),
])
def test_parse_split(value, expected):
    got = r.parse_split(value)
    assert got == pytest.approx(expected)
    assert isinstance(got, tuple)


@pytest.mark.parametrize("value", [
    None, "", "I agree with Player 2.", "40 and 60", "1, 2, 3, 4", [40, 60], [40, "30", 30],
    {"a": 1}, 42,
])
def test_parse_split_unreadable(value):
    assert r.parse_split(value) is None


def test_parse_split_does_not_validate():
    assert r.parse_split("Airline A: 80%, Airline B: 30%, Airline C: 30%") == (80.0, 30.0, 30.0)
    assert r.valid_split(r.parse_split("Airline A: 80%, Airline B: 30%, Airline C: 30%")) is False


def test_splits_agree_all_vote_one_proposal():
    proposals = {P1: [40, 30, 30], P2: [50, 25, 25], P3: [45, 30, 25]}
    assert r.splits_agree({P1: P2, P2: P2, P3: P2}, proposals) == (True, (50.0, 25.0, 25.0))


def test_splits_agree_identical_splits_by_different_players():
    proposals = {P1: [40, 30, 30], P2: [50, 25, 25], P3: [50.0, 25.0, 25.0]}
    agreed, split = r.splits_agree({P1: P2, P2: P3, P3: P2}, proposals)
    assert agreed is True and split == (50.0, 25.0, 25.0)


def test_splits_disagree_when_votes_name_different_splits():
    proposals = {P1: [40, 30, 30], P2: [50, 25, 25], P3: [50, 25, 25]}
    assert r.splits_agree({P1: P1, P2: P2, P3: P3}, proposals) == (False, None)


def test_splits_disagree_on_a_missing_vote_or_proposal():
    proposals = {P1: [40, 30, 30], P2: [40, 30, 30], P3: None}
    assert r.splits_agree({P1: P1, P2: P2, P3: None}, proposals) == (False, None)
    assert r.splits_agree({P1: P3, P2: P3, P3: P3}, proposals) == (False, None)      # invalid proposal
    assert r.splits_agree({P1: P1, P2: P1, P3: "Player 9"}, proposals) == (False, None)
    assert r.splits_agree({}, proposals) == (False, None)


def test_splits_nearly_identical_do_not_agree():
    proposals = {P1: [40, 30, 30], P2: [40, 30.5, 29.5], P3: [40, 30, 30]}
    assert r.splits_agree({P1: P1, P2: P2, P3: P3}, proposals) == (False, None)


# --------------------------------------------------------------------------- prisoner's dilemma

TABLE = {"cooperate": 3, "defect": 1, "one_defect": 5, "two_defect": 2}
C, D = "cooperate", "defect"


@pytest.mark.parametrize("choices,expected", [
    ((C, C, C), (3, 3, 3)),           # all cooperate -> cooperate each
    ((D, D, D), (1, 1, 1)),           # all defect -> defect each
    ((D, C, C), (5, 0, 0)),           # one defector -> one_defect, cooperators 0
    ((C, D, C), (0, 5, 0)),
    ((C, C, D), (0, 0, 5)),
    ((D, D, C), (2, 2, 0)),           # two defectors -> two_defect each, cooperator 0
    ((D, C, D), (2, 0, 2)),
    ((C, D, D), (0, 2, 2)),
])
def test_pd_payoffs_every_case(choices, expected):
    got = r.pd_payoffs(dict(zip(PLAYERS, choices)), TABLE)
    assert got == dict(zip(PLAYERS, expected))


def test_pd_payoffs_other_table():
    table = {"cooperate": 5, "defect": 1, "one_defect": 20, "two_defect": 4}
    assert r.pd_payoffs({P1: C, P2: C, P3: D}, table) == {P1: 0, P2: 0, P3: 20}
    assert r.pd_payoffs({P1: D, P2: C, P3: D}, table) == {P1: 4, P2: 0, P3: 4}
    assert r.pd_payoffs({P1: C, P2: C, P3: C}, table) == {P1: 5, P2: 5, P3: 5}


@pytest.mark.parametrize("choices,table", [
    ({P1: C, P2: C}, TABLE),
    ({P1: C, P2: C, P3: "betray"}, TABLE),
    ({P1: C, P2: C, P3: None}, TABLE),
    ({P1: C, P2: C, P3: C}, {"cooperate": 3, "defect": 1, "one_defect": 5}),
])
def test_pd_payoffs_rejects_bad_input(choices, table):
    with pytest.raises(ValueError):
        r.pd_payoffs(choices, table)


def test_pd_five_rounds_by_hand_and_winners():
    rounds = [(C, C, C), (D, C, C), (D, D, C), (D, D, D), (C, C, D)]
    totals = {p: 0 for p in PLAYERS}
    for choice in rounds:
        for p, v in r.pd_payoffs(dict(zip(PLAYERS, choice)), TABLE).items():
            totals[p] += v
    # P1: 3+5+2+1+0 = 11; P2: 3+0+2+1+0 = 6; P3: 3+0+0+1+5 = 9
    assert totals == {P1: 11, P2: 6, P3: 9}
    assert r.pd_winners(totals) == [P1]


def test_pd_tie_is_a_win_for_all_tied():
    assert r.pd_winners({P1: 15, P2: 15, P3: 9}) == [P1, P2]
    assert r.pd_winners({P1: 15, P2: 15, P3: 15}) == PLAYERS
    with pytest.raises(ValueError):
        r.pd_winners({})


# --------------------------------------------------------------------------- public good

@pytest.mark.parametrize("amount,left,expected", [
    (30, 100, 30), (0, 100, 0), (100, 100, 100), (150, 100, 100), (50, 20, 20), (10, 0, 0),
    (-5, 100, 0), (12.7, 100, 12), (None, 40, 0),
])
def test_pg_clamp(amount, left, expected):
    assert r.pg_clamp(amount, left) == expected
    assert isinstance(r.pg_clamp(amount, left), int)


@pytest.mark.parametrize("amount,left", [(10, -1), ("ten", 100), (True, 100), (float("nan"), 100), (10, 5.5)])
def test_pg_clamp_rejects(amount, left):
    with pytest.raises(ValueError):
        r.pg_clamp(amount, left)


def test_pg_clamp_over_a_game():
    # offers 40, 40, 40 with 100 to start: 40, 40, then only 20 left
    left, made = 100, []
    for offer in (40, 40, 40, 40):
        a = r.pg_clamp(offer, left)
        made.append(a)
        left -= a
    assert made == [40, 40, 20, 0] and left == 0


def test_pg_finals_by_hand():
    contributions = {P1: [10, 10, 10, 10, 10], P2: [0, 0, 0, 0, 0], P3: [20, 20, 20, 20, 20]}
    # pool = 50 + 0 + 100 = 150; share = 1.5 * 150 / 3 = 75
    finals = r.pg_finals(contributions, 1.5)
    assert finals == pytest.approx({P1: 100 - 50 + 75, P2: 100 + 75, P3: 100 - 100 + 75})
    assert finals == pytest.approx({P1: 125.0, P2: 175.0, P3: 75.0})
    assert r.pg_winners(finals) == [P2]


def test_pg_finals_multiplier_one_and_three():
    contributions = {P1: [30], P2: [60], P3: [90]}
    # pool 180; m=1 -> share 60: 130, 100, 70; m=3 -> share 180: 250, 220, 190
    assert r.pg_finals(contributions, 1) == pytest.approx({P1: 130.0, P2: 100.0, P3: 70.0})
    assert r.pg_finals(contributions, 3) == pytest.approx({P1: 250.0, P2: 220.0, P3: 190.0})


def test_pg_tie_is_a_win_for_all_tied():
    finals = r.pg_finals({P1: [20, 0], P2: [10, 10], P3: [50, 50]}, 1.2)
    # pool 140; share 1.2 * 140 / 3 = 56: P1 = P2 = 100 - 20 + 56 = 136; P3 = 56
    assert finals == pytest.approx({P1: 136.0, P2: 136.0, P3: 56.0})
    assert r.pg_winners(finals) == [P1, P2]
    assert r.pg_winners({P1: 100.0, P2: 100.0, P3: 100.0}) == PLAYERS


@pytest.mark.parametrize("contributions", [{}, {P1: [60, 50], P2: [0], P3: [0]}, {P1: [-1], P2: [0], P3: [0]}])
def test_pg_finals_rejects(contributions):
    with pytest.raises(ValueError):
        r.pg_finals(contributions, 2)


def test_pg_winners_rejects_empty():
    with pytest.raises(ValueError):
        r.pg_winners({})
