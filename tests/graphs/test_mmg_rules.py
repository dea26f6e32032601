import pytest

from mas_agents.graphs.mmg import rules as r


def test_schedule_visits_seats_in_order_each_round():
    s = r.question_schedule(["A", "B", "C"], rounds=2, questions=2)
    assert s == [(1, "A"), (1, "A"), (1, "B"), (1, "B"), (1, "C"), (1, "C"),
                 (2, "A"), (2, "A"), (2, "B"), (2, "B"), (2, "C"), (2, "C")]
    assert r.question_schedule(["A", "B"], 0, 1) == []


def test_schedule_rejects_bad_sizes():
    with pytest.raises(ValueError):
        r.question_schedule(["A"], 1, 1)
    with pytest.raises(ValueError):
        r.question_schedule(["A", "B"], -1, 1)


def test_other_players_excludes_self_keeps_order():
    assert r.other_players("B", ["A", "B", "C"]) == ["A", "C"]


def test_plurality_accuses_the_unique_top():
    out = r.victim_outcome("V", {"A": "C", "B": "C", "C": "A", "D": "C"}, ["C"])
    assert out["accused"] == "C" and out["correct"] is True
    assert out["counts"] == {"C": 3, "A": 1}


def test_tie_accuses_no_one_and_is_not_correct():
    out = r.victim_outcome("V", {"A": "C", "B": "D", "C": "A", "D": "B"}, ["C"])
    assert out["accused"] is None and out["correct"] is False
    out = r.victim_outcome("V", {"A": "C", "B": "C", "C": "D", "D": "C", "E": "D", "F": "D"}, ["C"])
    assert out["accused"] is None


def test_abstentions_do_not_count_and_all_abstain_accuses_no_one():
    out = r.victim_outcome("V", {"A": None, "B": "C", "C": None, "D": None}, ["C"])
    assert out["accused"] == "C" and out["abstained"] == 3 and out["correct"]
    out = r.victim_outcome("V", {"A": None, "B": None}, ["C"])
    assert out["accused"] is None and out["abstained"] == 2


def test_wrong_accusation_and_several_murderers():
    assert r.victim_outcome("V", {"A": "B", "B": "A", "C": "B"}, ["C"])["correct"] is False
    assert r.victim_outcome("V", {"A": "B", "B": "A", "C": "B"}, ["B", "C"])["correct"] is True


def test_self_vote_is_illegal():
    with pytest.raises(ValueError, match="voted for themselves"):
        r.tally({"A": "A"})


def test_game_outcome_counts_victims():
    a = r.victim_outcome("V1", {"A": "B", "C": "B"}, ["B"])
    b = r.victim_outcome("V2", {"A": "C", "B": "A"}, ["C"])
    g = r.game_outcome([a, b])
    assert (g["correct"], g["total"], g["murderer_caught"]) == (1, 2, False)
