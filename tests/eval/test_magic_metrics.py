"""MAgIC metrics on hand-made event logs; every expected number is worked out in a comment."""

from __future__ import annotations

import pytest

from mas_agents.graphs.magic.metrics import CAPABILITIES, WIN_RATE_PARTS, load_games, scenario_metrics
from mas_agents.events import make_event, write_events

P1, P2, P3 = "Player 1", "Player 2", "Player 3"
PLAYERS = [P1, P2, P3]


def ev(kind: str, actor: str = "game", **data) -> dict:
    return make_event(phase=kind, actor=actor, kind=kind, content=kind, data=data)


def setup(scenario: str, side: str, seats: list[str], roles: dict[str, str] | None = None) -> dict:
    roles = roles or {p: "player" for p in PLAYERS}
    return ev("setup", scenario=scenario, setting_id=0, players=PLAYERS, challenger_seats=seats,
              roles=roles, side=side)


def chameleon_game(chameleon: str, side: str, seats: list[str], code: int, *middle: dict) -> list:
    roles = {p: "chameleon" if p == chameleon else "non_chameleon" for p in PLAYERS}
    return [setup("chameleon", side, seats, roles), *middle, ev("outcome", code=code, accused=None)]


def undercover_game(undercover: str, side: str, seats: list[str], code: int, *middle: dict) -> list:
    roles = {p: "undercover" if p == undercover else "civilian" for p in PLAYERS}
    return [setup("undercover", side, seats, roles), *middle, ev("outcome", code=code, accused=None)]


def vote(actor: str, target: str | None) -> dict:
    return ev("vote", actor, target=target)


def belief(actor: str, clue: int, suspect: str | None, predicted: dict | None = None) -> dict:
    return ev("belief", actor, clue_index=clue, suspect=suspect, predicted=predicted or {})


def cost_game(agreed: bool, split, latest: dict, seats=(P1,)) -> list:
    return [setup("cost_sharing", "test_seat", list(seats)),
            ev("outcome", agreed=agreed, rounds=3, split=split, latest_proposals=latest)]


def pd_game(choices: list, winners: list[str], seat: str = P1) -> list:
    evs = [setup("prisoners_dilemma", "test_seat", [seat])]
    for r, ch in enumerate(choices, 1):
        evs += [ev("pd_choice", seat, round=r, choice=ch), ev("pd_choice", P3, round=r, choice="defect")]
    return evs + [ev("outcome", totals={}, winners=winners)]


# Chameleon as non-chameleon, two games:
#  g1: chameleon P3, seats P1, P2. Votes P1→P3 (right), P2→P1 (wrong), P3→P1 (not a challenger).
#      Outcome 0 (accused, wrong word guess): non-chameleon credit 2.
#  g2: chameleon P1, seats P2, P3. Votes P2→P1 (right), P3→None (abstention, wrong).
#      Outcome 3 (tie): non-chameleon credit 1.
NONCHAM_GAMES = [
    chameleon_game(P3, "non_chameleon", [P1, P2], 0,
                   vote(P1, P3), vote(P2, P1), vote(P3, P1), ev("guess", P3, word="pear", correct=False)),
    chameleon_game(P1, "non_chameleon", [P2, P3], 3, vote(P2, P1), vote(P3, None)),
]
# Chameleon as chameleon: outcome 2 (credit 2, won) and outcome 1 (credit 1, not won).
CHAM_GAMES = [chameleon_game(P2, "chameleon", [P2], 2), chameleon_game(P2, "chameleon", [P2], 1)]
# Undercover as civilian with a tie: undercover P1, seats P2, P3; P2→P1 right, P3→P2 wrong.
# Outcome 2 (tie): civilian credit 1 of 3.
CIV_GAMES = [undercover_game(P1, "civilian", [P2, P3], 2, vote(P2, P1), vote(P3, P2),
                             ev("vote_result", counts={P1: 1, P2: 1}, accused=None, tie=True))]


def test_judgement_chameleon_as_non_chameleon():
    # correct votes 2 (g1 P1→P3, g2 P2→P1) of 4 cast (P3's None counts) = 1/2
    m = scenario_metrics(NONCHAM_GAMES)
    assert m["judgement"] == pytest.approx(2 / 4)
    assert m["counts"]["votes"] == 4 and m["counts"]["abstentions"] == 1
    # credits 2 + 1 over 2n = 4 → 3/4
    assert m["per_scenario"]["chameleon"]["non_chameleon"] == pytest.approx(3 / 4)
    assert m["per_scenario"]["chameleon"]["chameleon"] is None
    # deception from guesses only: 1 wrong of 1 → 0.25 × 1
    assert m["deception"] == pytest.approx(0.25)


def test_judgement_undercover_tie_and_both_scenarios():
    m = scenario_metrics(CIV_GAMES)
    assert m["judgement"] == pytest.approx(1 / 2)        # P2→P1 right, P3→P2 wrong
    assert m["per_scenario"]["undercover"]["civilian"] == pytest.approx(1 / 3)   # 1 / 3n, n = 1
    assert m["deception"] is None                         # neither part has a denominator
    # together: (2 + 1) right of (4 + 2) = 1/2
    assert scenario_metrics(NONCHAM_GAMES + CIV_GAMES)["judgement"] == pytest.approx(3 / 6)


def test_chameleon_side_credit_and_deception_wins():
    m = scenario_metrics(CHAM_GAMES)
    # credit (2 + 1) / (2 × 2) = 3/4; won only the outcome-2 game: 1/2, no guess part
    assert m["per_scenario"]["chameleon"]["chameleon"] == pytest.approx(3 / 4)
    assert m["deception"] == pytest.approx(1 / 2)
    assert m["judgement"] is None                         # no votes of seekers


def test_deception_both_parts():
    games = [
        chameleon_game(P2, "chameleon", [P2], 2),          # won (2 > 0)
        chameleon_game(P2, "chameleon", [P2], 1),          # 1/1: not won
        chameleon_game(P2, "chameleon", [P2], 3),          # tie 1/1: not won
        undercover_game(P1, "undercover", [P1], 1),        # won (3 > 0)
        undercover_game(P1, "undercover", [P1], 2),        # won (2 > 1)
        undercover_game(P1, "undercover", [P1], 0),        # lost
        chameleon_game(P3, "non_chameleon", [P1, P2], 0, ev("guess", P3, word="x", correct=False)),
        chameleon_game(P3, "non_chameleon", [P1, P2], 1, ev("guess", P3, word="y", correct=True)),
        chameleon_game(P3, "non_chameleon", [P1, P2], 0, ev("guess", P3, word=None, correct=False)),
        chameleon_game(P3, "non_chameleon", [P1, P2], 2),  # not accused: no guess
    ]
    m = scenario_metrics(games)
    # won 3 of 6 deceiver games = 1/2; wrong guesses 2 of 3; 1/2 + 0.25 × 2/3 = 2/3
    assert m["deception"] == pytest.approx(1 / 2 + 0.25 * 2 / 3)
    assert m["deception"] == pytest.approx(2 / 3)
    assert (m["counts"]["deceiver_wins"], m["counts"]["deceiver_games"]) == (3, 6)
    assert (m["counts"]["wrong_word_guesses"], m["counts"]["word_guesses"]) == (2, 3)
    # undercover credit (3 + 2 + 0) / (3 × 3) = 5/9
    assert m["per_scenario"]["undercover"]["undercover"] == pytest.approx(5 / 9)


def test_reasoning_gold_and_inter():
    # undercover P1, challenger seat P2 (civilian); P1 and P3 are other seats.
    # clue 0: P2 suspects P1 (gold hit); guesses P1→P2 (P1 said P2: hit), P3→P1 (P3 said P2: miss)
    # clue 1: P2 suspects P3 (miss); P1 has no clue-1 questionnaire (not asked);
    #         guesses P3→P1 (P3 said P2: miss)
    # clue 2: P2 suspects None (miss); P1→None (P1 said None: a None guess is no hit),
    #         P3→P2 (P3 said P2: hit); the entry about P2 itself is ignored.
    # gold 1/3, inter 2/5 → (1 + 2) / (3 + 5) = 3/8
    game = undercover_game(
        P1, "civilian", [P2], 0,
        belief(P1, 0, P2), belief(P3, 0, P2), belief(P2, 0, P1, {P1: P2, P3: P1}),
        belief(P3, 1, P2), belief(P2, 1, P3, {P1: P3, P3: P1}),
        belief(P1, 2, None), belief(P3, 2, P2), belief(P2, 2, None, {P1: None, P3: P2, P2: P1}),
    )
    m = scenario_metrics([game])
    assert m["reasoning"] == pytest.approx(3 / 8)
    c = m["counts"]
    assert (c["questionnaires"], c["gold_questions"], c["gold_hits"]) == (3, 3, 1)
    assert (c["inter_questions"], c["inter_hits"]) == (5, 2)


def test_self_awareness():
    # challenger seats P1, P2: True, False, True → 2/3; P3's answer is not the challenger's
    game = chameleon_game(P3, "non_chameleon", [P1, P2], 2,
                          ev("self_awareness", P1, clue_index=0, correct=True),
                          ev("self_awareness", P1, clue_index=1, correct=False),
                          ev("self_awareness", P2, clue_index=0, correct=True),
                          ev("self_awareness", P3, clue_index=0, correct=False))
    assert scenario_metrics([game])["self_awareness"] == pytest.approx(2 / 3)


COST_GAMES = [
    cost_game(True, [10, 20, 30], {P1: [10.0, 20.0, 30.0], P2: [30, 20, 10]}),  # on challenger's
    cost_game(True, [20, 20, 20], {P1: [10, 20, 30], P2: [20, 20, 20]}),         # on P2's
    cost_game(False, None, {P1: [10, 20, 30]}),                                   # no agreement
    cost_game(True, [10, 20, 30], {P1: None, P2: [10, 20, 30]}),                  # P1 never proposed
]


def test_cooperation_and_coordination():
    m = scenario_metrics(COST_GAMES)
    assert m["cooperation"] == pytest.approx(3 / 4)    # 3 agreed of 4
    assert m["coordination"] == pytest.approx(1 / 3)   # only game 1 of 3 agreed is P1's split
    assert m["per_scenario"]["cost_sharing"] == pytest.approx(3 / 4)


PD_GAMES = [pd_game(["defect", "cooperate", "defect", None, "defect"], [P1, P3]),  # shared win
            pd_game([], [P3])]                                                        # lost
PG_GAME = [
    setup("public_good", "test_seat", [P2]),
    # round 1: 5, 3, 3 → P2 ties for the minimum: rational
    ev("contribution", P1, round=1, amount=5), ev("contribution", P2, round=1, amount=3),
    ev("contribution", P3, round=1, amount=3),
    ev("pg_reveal", round=1, amounts={P1: 5, P2: 3, P3: 3}, pool=11),
    # round 2: 2, 4, 6 → not the minimum
    ev("contribution", P1, round=2, amount=2), ev("contribution", P2, round=2, amount=4),
    ev("contribution", P3, round=2, amount=6),
    ev("pg_reveal", round=2, amounts={P1: 2, P2: 4, P3: 6}, pool=12),
    # round 3: P2 gives no amount → counted, not rational
    ev("contribution", P2, round=3, amount=None),
    ev("pg_reveal", round=3, amounts={P1: 1, P2: 0, P3: 2}, pool=3),
    # round 4: no reveal; minimum of the submitted amounts (0, 0; P3 None) = 0 → rational
    ev("contribution", P1, round=4, amount=0), ev("contribution", P2, round=4, amount=0),
    ev("contribution", P3, round=4, amount=None),
    ev("outcome", finals={P1: 1.0, P2: 2.0, P3: 0.5}, winners=[P2]),
]


def test_rationality_pd_only():
    m = scenario_metrics(PD_GAMES)
    assert m["rationality"] == pytest.approx(3 / 5)    # 3 defections of 5 choices (one None)
    assert m["counts"]["pd_missing"] == 1
    assert m["per_scenario"]["prisoners_dilemma"] == pytest.approx(1 / 2)   # 1 of 2 games won


def test_rationality_pg_ties_and_combined():
    m = scenario_metrics([PG_GAME])
    assert m["rationality"] == pytest.approx(2 / 4)    # rounds 1 and 4 of 4 contributions
    assert (m["counts"]["pg_minimal"], m["counts"]["pg_missing"]) == (2, 1)
    assert m["per_scenario"]["public_good"] == pytest.approx(1.0)
    # PD + PG: (3 + 2) / (5 + 4) = 5/9
    assert scenario_metrics(PD_GAMES + [PG_GAME])["rationality"] == pytest.approx(5 / 9)


def test_win_rate_mean_with_missing_component():
    games = NONCHAM_GAMES + CHAM_GAMES + CIV_GAMES + COST_GAMES + PD_GAMES + [PG_GAME]
    m = scenario_metrics(games)
    values = m["components"]["values"]
    assert set(values) == set(WIN_RATE_PARTS)
    assert m["components"]["missing"] == ["undercover"]
    # non-chameleon 3/4, civilian 1/3, chameleon 3/4, cooperation 3/4, PD 1/2, PG 1:
    # 3/4 + 1/3 + 3/4 + 3/4 + 1/2 + 1 = (9 + 4 + 9 + 9 + 6 + 12) / 12 = 49/12 → / 6 = 49/72
    assert m["win_rate"] == pytest.approx(49 / 72)
    assert values["non_chameleon"] == pytest.approx(3 / 4)
    assert values["civilian"] == pytest.approx(1 / 3)
    assert values["undercover"] is None
    g = m["counts"]["games"]
    assert g["chameleon"] == {"chameleon": 2, "non_chameleon": 2}
    assert g["undercover"] == {"undercover": 0, "civilian": 1}
    assert (g["cost_sharing"], g["prisoners_dilemma"], g["public_good"]) == (4, 2, 1)


def test_no_games_everything_none():
    m = scenario_metrics([])
    for key in CAPABILITIES + ("win_rate",):
        assert m[key] is None
    assert m["components"]["missing"] == list(WIN_RATE_PARTS)


def test_bad_game_raises():
    with pytest.raises(ValueError, match="outcome"):
        scenario_metrics([[setup("public_good", "test_seat", [P1])]])
    with pytest.raises(ValueError, match="setup"):
        scenario_metrics([[ev("outcome", winners=[])]])


def test_load_games_sorted_by_directory(tmp_path):
    for name in ("g01", "g02", "g03"):
        (tmp_path / "games" / name).mkdir(parents=True)   # g03 has no events.jsonl: skipped
    write_events(tmp_path / "games" / "g02" / "events.jsonl", PD_GAMES[1])
    write_events(tmp_path / "games" / "g01" / "events.jsonl", PD_GAMES[0])
    games = load_games(tmp_path)
    assert len(games) == 2
    assert games[0][0]["step"] == 0 and games[0][-1]["data"]["winners"] == [P1, P3]
    assert scenario_metrics(games)["rationality"] == pytest.approx(3 / 5)
    assert load_games(tmp_path / "nothing") == []
