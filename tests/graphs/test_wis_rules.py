"""Independent tests of mas_agents.graphs.wis.rules against the Who is Spy? rules (WiS §3.1, Appendix A; docs/guides/who-is-spy.md).

Every expected value below was worked out by hand from the rules (WiS paper §3.1, §3.4–3.5,
Appendix A, and the choices documented in the module), not read off the implementation.
"""

import random

import pytest

from mas_agents.graphs.wis import rules as r
from mas_agents import text as mas_agents_text

SEATS = [f"Player {i}" for i in range(1, 7)]
P1, P2, P3, P4, P5, P6 = SEATS
SPY = P4
ROLES = {p: ("spy" if p == SPY else "civilian") for p in SEATS}


# --------------------------------------------------------------------------- constants, players

def test_constants_match_the_issue():
    assert r.MAX_CHARS == {"en": 400, "zh": 120}
    assert (r.MIN_PLAYERS, r.MAX_PLAYERS, r.DEFAULT_PLAYERS) == (3, 9, 6)
    assert r.MAX_ROUNDS == 3 and r.MIN_ALIVE == 3 and r.TOTAL_POINTS == 12
    assert r.SPY_POINTS_BY_ROUND == {1: 0, 2: 4, 3: 8}


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7, 8, 9])
def test_check_players_accepts_3_to_9(n):
    assert r.check_players(n) is None


@pytest.mark.parametrize("n", [-1, 0, 1, 2, 10, 12])
def test_check_players_rejects_outside_3_to_9(n):
    with pytest.raises(ValueError):
        r.check_players(n)


# --------------------------------------------------------------------------- truncate

def test_truncate_english_keeps_exactly_400():
    assert r.truncate("a" * 400, "en") == "a" * 400
    assert r.truncate("a" * 401, "en") == "a" * 400
    assert r.truncate("a" * 399, "en") == "a" * 399
    assert r.truncate("", "en") == ""


def test_truncate_chinese_keeps_exactly_120():
    assert r.truncate("茶" * 120, "zh") == "茶" * 120
    assert r.truncate("茶" * 121, "zh") == "茶" * 120
    assert r.truncate("茶" * 119, "zh") == "茶" * 119


def test_truncate_counts_code_points_not_bytes():
    # "é" is 2 bytes and "茶" 3 bytes in UTF-8; the limit is in characters.
    out = r.truncate("é" * 450, "en")
    assert out == "é" * 400 and len(out.encode("utf-8")) == 800
    out = r.truncate("茶" * 200, "zh")
    assert len(out) == 120 and len(out.encode("utf-8")) == 360
    # The limit depends on the language, not on the script of the text.
    assert r.truncate("茶" * 200, "en") == "茶" * 200
    assert r.truncate("a" * 200, "zh") == "a" * 120


def test_truncate_keeps_the_beginning():
    text = "x" * 118 + "AB" + "CD"
    assert r.truncate(text, "zh") == "x" * 118 + "AB"


@pytest.mark.parametrize("lang", ["fr", "", "english", "EN", "zh-CN"])
def test_truncate_unknown_language_raises(lang):
    with pytest.raises(ValueError):
        r.truncate("hello", lang)


# --------------------------------------------------------------------------- says_word

@pytest.mark.parametrize("text, word, said", [
    ("I drink tea every morning", "tea", True),
    ("Our team won the match", "tea", False),     # tea vs team
    ("It whistles with steam", "tea", False),
    ("A teapot is handy", "tea", False),
    ("TEA time!", "tea", True),                    # case
    ("I drink Tea daily", "TEA", True),
    ("Would you like some tea?", "tea", True),     # punctuation next to the word
    ("tea, please.", "tea", True),
    ("(tea)", "tea", True),
    ("tea", "tea", True),
    ("I like ice cream in summer", "ice cream", True),
    ("I like ice-cream in summer", "ice cream", True),
    ("I like ice and cream", "ice cream", False),
    ("Something sweet and cold", "ice cream", False),
    ("我每天都喝茶", "茶", True),                  # Chinese: substring
    ("奶茶很好喝", "茶", True),
    ("这是一种常见的饮料", "茶", False),
    ("我喜欢喝咖啡", "咖啡", True),
    ("我喜欢喝咖", "咖啡", False),
    ("I drink tea", "", False),                    # empty word is never said
])
def test_says_word(text, word, said):
    assert mas_agents_text.says_word(text, word) is said


def test_says_latin_word_inside_chinese_text():
    # e.g. the zh pair KTV / 卡拉OK: the civilian writes their own word "KTV".
    assert mas_agents_text.says_word("我们周末常去KTV唱歌", "KTV") is True


def test_says_cjk_extension_b_word_as_substring():
    assert mas_agents_text.says_word("我去吃\U00020BB7野家", "\U00020BB7") is True


# --------------------------------------------------------------------------- foul

def test_punctuation_only_is_no_answer():
    assert r.foul("...", "tea", []) == "no_answer"
    assert r.foul(" !? ", "tea", []) == "no_answer"


def test_foul_none_for_a_fresh_description():
    assert r.foul("A hot drink, often with milk", "tea", []) is None
    assert r.foul("A hot drink, often with milk", "tea", ["Something cold", "Brown and bitter"]) is None


def test_foul_timeout():
    assert r.foul("A hot drink", "tea", [], timed_out=True) == "timeout"
    assert r.foul(None, "tea", [], timed_out=True) == "timeout"


@pytest.mark.parametrize("text", [None, "", "   ", "\n\t "])
def test_foul_no_answer(text):
    assert r.foul(text, "tea", []) == "no_answer"


def test_foul_own_word():
    assert r.foul("I love Tea with lemon.", "tea", []) == "own_word"
    assert r.foul("很多人喜欢喝绿茶", "绿茶", []) == "own_word"
    # only the speaker's own word counts: a spy whose word is "tea" may say "coffee"
    assert r.foul("Not coffee, but similar", "tea", []) is None
    # and a word that merely contains it is not the word
    assert r.foul("Our team drinks it", "tea", []) is None


def test_foul_repeat_after_normalising_case_punctuation_whitespace():
    earlier = ["It is brown and bitter.", "A hot drink, often with milk!"]
    assert r.foul("a hot drink often with   milk", "tea", earlier) == "repeat"
    assert r.foul("IT IS BROWN AND BITTER", "tea", earlier) == "repeat"
    assert r.foul("  It is brown, and bitter?! ", "tea", earlier) == "repeat"
    # a different text that only shares words is not a repeat
    assert r.foul("It is brown", "tea", earlier) is None
    assert r.foul("A hot drink, often with milk and sugar", "tea", earlier) is None
    # Chinese punctuation
    assert r.foul("一种热饮。", "茶", ["一种热饮"]) == "repeat"


def test_foul_repeat_accepts_any_iterable_of_earlier_descriptions():
    assert r.foul("Brown", "tea", (d for d in ["Green", "brown."])) == "repeat"


def test_foul_order_timeout_then_no_answer_then_own_word_then_repeat():
    earlier = ["I like tea"]
    # saying the own word AND repeating → own_word
    assert r.foul("I like tea", "tea", earlier) == "own_word"
    # timing out overrides everything
    assert r.foul("I like tea", "tea", earlier, timed_out=True) == "timeout"
    assert r.foul("", "tea", [""], timed_out=True) == "timeout"
    # blank is no_answer even if an earlier description was blank too
    assert r.foul("  ", "tea", ["", " "]) == "no_answer"


# --------------------------------------------------------------------------- speaking order

def test_speaking_order_starts_at_first_speaker_in_seat_order():
    assert r.speaking_order(SEATS, P3, SEATS) == [P3, P4, P5, P6, P1, P2]
    assert r.speaking_order(SEATS, P1, SEATS) == SEATS


def test_speaking_order_skips_dead_players():
    alive = [P1, P3, P4, P6]
    assert r.speaking_order(SEATS, P3, alive) == [P3, P4, P6, P1]


def test_speaking_order_first_speaker_dead_starts_at_next_alive():
    alive = [P1, P2, P4, P5, P6]
    assert r.speaking_order(SEATS, P3, alive) == [P4, P5, P6, P1, P2]
    # the next ones after the first speaker are dead too
    assert r.speaking_order(SEATS, P3, [P1, P2, P6]) == [P6, P1, P2]


def test_speaking_order_wraps_around_the_table():
    # first speaker in the last seat, dead: the round starts again from seat 1 onwards
    assert r.speaking_order(SEATS, P6, [P2, P3, P5]) == [P2, P3, P5]
    assert r.speaking_order(SEATS, P6, [P2, P6, P3]) == [P6, P2, P3]
    assert r.speaking_order(SEATS, P5, {P1, P5, P2}) == [P5, P1, P2]


def test_speaking_order_unknown_first_speaker_raises():
    with pytest.raises(ValueError):
        r.speaking_order(SEATS, "Player 7", SEATS)


# --------------------------------------------------------------------------- voting

def test_vote_candidates_are_the_other_alive_players_in_order():
    assert r.vote_candidates(P2, [P1, P2, P3, P5]) == [P1, P3, P5]
    assert r.vote_candidates(P5, [P1, P2, P3, P5]) == [P1, P2, P3]


def test_tally_plurality():
    counts, out = r.tally({P1: P4, P2: P4, P3: P1, P4: P1, P5: P4, P6: P2}, SEATS)
    assert counts == {P4: 3, P1: 2, P2: 1}
    assert out == P4


def test_tally_single_vote_eliminates():
    counts, out = r.tally({P1: None, P2: None, P3: P5, P5: None}, [P1, P2, P3, P5])
    assert (counts, out) == ({P5: 1}, P5)


def test_tally_tie_eliminates_no_one():
    counts, out = r.tally({P1: P2, P2: P1, P3: P2, P4: P1, P5: None, P6: P3}, SEATS)
    assert counts == {P2: 2, P1: 2, P3: 1}
    assert out is None
    # all-way tie with one vote each
    counts, out = r.tally({P1: P2, P2: P3, P3: P1}, [P1, P2, P3])
    assert (counts, out) == ({P2: 1, P3: 1, P1: 1}, None)


def test_tally_all_abstain_eliminates_no_one():
    assert r.tally({p: None for p in SEATS}, SEATS) == ({}, None)
    assert r.tally({}, SEATS) == ({}, None)


def test_tally_votes_for_dead_unknown_or_self_are_abstentions():
    alive = [P1, P2, P3, P5]                      # P4 and P6 are out
    votes = {P1: P4, P2: "Player 9", P3: P3, P5: P2}
    assert r.tally(votes, alive) == ({P2: 1}, P2)
    # they cannot even break a tie
    votes = {P1: P2, P2: P1, P3: P6, P5: P5}
    assert r.tally(votes, alive) == ({P2: 1, P1: 1}, None)
    # only invalid votes: no one out
    assert r.tally({P1: P1, P2: "", P3: "nobody", P5: P6}, alive) == ({}, None)


# --------------------------------------------------------------------------- end of game

def test_end_reason_spy_eliminated_first():
    alive = [P1, P2, P3]
    assert r.end_reason(SPY, alive, 1, after_vote=False) == "spy_eliminated"
    assert r.end_reason(SPY, alive, 2, after_vote=True) == "spy_eliminated"
    # takes priority over few players and max rounds
    assert r.end_reason(SPY, [P1, P2], 3, after_vote=True) == "spy_eliminated"


def test_end_reason_fewer_than_three_survive():
    assert r.end_reason(SPY, [SPY, P1], 1, after_vote=False) == "few_players"
    assert r.end_reason(SPY, [SPY, P1], 2, after_vote=True) == "few_players"
    assert r.end_reason(SPY, [SPY], 1, after_vote=False) == "few_players"
    # before max_rounds on the last round
    assert r.end_reason(SPY, [SPY, P1], 3, after_vote=True) == "few_players"
    # three survivors is enough to go on
    assert r.end_reason(SPY, [SPY, P1, P2], 1, after_vote=True) is None


def test_end_reason_max_rounds_only_after_the_vote_of_round_3():
    alive = [P1, P2, SPY, P5]
    assert r.end_reason(SPY, alive, 3, after_vote=True) == "max_rounds"
    assert r.end_reason(SPY, alive, 3, after_vote=False) is None   # the round-3 vote still follows
    assert r.end_reason(SPY, alive, 2, after_vote=True) is None
    assert r.end_reason(SPY, alive, 1, after_vote=True) is None
    # a custom limit
    assert r.end_reason(SPY, alive, 2, after_vote=True, max_rounds=2) == "max_rounds"
    assert r.end_reason(SPY, alive, 3, after_vote=True, max_rounds=5) is None


def test_end_reason_game_goes_on():
    assert r.end_reason(SPY, SEATS, 1, after_vote=False) is None
    assert r.end_reason(SPY, SEATS, 1, after_vote=True) is None
    assert r.end_reason(SPY, [P1, P2, SPY], 2, after_vote=False) is None


# --------------------------------------------------------------------------- scoring

def test_spy_caught_round_1_share_among_surviving_civilians():
    # R1: P1 fouls; vote P2→P4, P3→P4, P5→P6, P6→P4, P4→P2 → spy out with 3 votes.
    votes = [{P2: SPY, P3: SPY, P5: P6, P6: SPY, SPY: P2}]
    s = r.game_scores(ROLES, 1, [P2, P3, P5, P6], votes)
    # spy 0 − 3; survivors share 12 → 3 each; +1 for each spy vote; P1 out → 0
    assert s == {P1: 0, P2: 4, P3: 4, SPY: -3, P5: 3, P6: 4}
    assert sum(s.values()) == 12


def test_spy_caught_round_1_by_foul_no_vote():
    s = r.game_scores(ROLES, 1, [P1, P2, P3, P5, P6], [{}])
    assert s[SPY] == 0
    for p in (P1, P2, P3, P5, P6):
        assert s[p] == pytest.approx(12 / 5)
    assert sum(s.values()) == pytest.approx(12)


def test_spy_caught_round_2():
    rounds = [
        # R1: tie 2–2 → no one out
        {P1: P2, P2: P1, P3: SPY, SPY: P3, P5: P6, P6: None},
        # R2: P1 fouled; P4 out with 3 votes
        {P2: SPY, P3: SPY, SPY: P2, P5: P2, P6: SPY},
    ]
    s = r.game_scores(ROLES, 2, [P2, P3, P5, P6], rounds)
    # spy 4 − 1 − 3 = 0; civilians share 8 → 2 each
    assert s == {P1: 0, P2: 3, P3: 4, SPY: 0, P5: 2, P6: 3}
    assert sum(s.values()) == 12


def test_spy_caught_round_3_eliminated_civilians_get_only_their_vote_bonus():
    rounds = [
        # R1: P1 out (4 votes); P1 and P6 voted for the spy
        {P1: SPY, P2: P1, P3: P1, SPY: P1, P5: P1, P6: SPY},
        # R2: P2, P3 fouled; alive P4 P5 P6; 1–1–1 tie
        {SPY: P5, P5: P6, P6: SPY},
        # R3: the spy fouls (says own word) → no vote
        {},
    ]
    s = r.game_scores(ROLES, 3, [P5, P6], rounds)
    # spy 8 − 2 − 1 = 5; survivors P5, P6 share 4 → 2 each
    assert s == {P1: 1, P2: 0, P3: 0, SPY: 5, P5: 2, P6: 4}
    assert sum(s.values()) == 12


def test_spy_wins_after_three_rounds():
    rounds = [
        {P1: SPY, P2: P3, P3: P2, SPY: P2, P5: P2, P6: None},   # P2 out
        {P1: P3, P3: SPY, SPY: P3, P5: P3, P6: P3},             # P3 out
        {P1: SPY, SPY: P1, P5: P1, P6: SPY},                    # 2–2 tie
    ]
    s = r.game_scores(ROLES, None, [P1, SPY, P5, P6], rounds)
    # spy 12 − 4 = 8; civilians 0 + their spy votes
    assert s == {P1: 2, P2: 0, P3: 1, SPY: 8, P5: 0, P6: 1}
    assert sum(s.values()) == 12


def test_spy_wins_without_any_spy_vote():
    s = r.game_scores(ROLES, None, [P1, SPY], [{p: None for p in SEATS}, {P1: P2, P2: P1}])
    assert s == {P1: 0, P2: 0, P3: 0, SPY: 12, P5: 0, P6: 0}


def test_civilian_vote_for_a_civilian_and_abstention_give_nothing():
    s = r.game_scores(ROLES, 2, [P1, P2, P3, P5, P6],
                      [{P1: P2, P2: None, P3: "Player 9", P5: P5, P6: P1, SPY: P1}, {}])
    # spy caught in round 2: spy 4, five survivors share 8 → 1.6 each, no spy vote at all
    assert s == pytest.approx({P1: 1.6, P2: 1.6, P3: 1.6, SPY: 4, P5: 1.6, P6: 1.6})


def test_spy_own_votes_give_nothing():
    roles = {"A": "civilian", "B": "civilian", "C": "civilian", "S": "spy"}
    s = r.game_scores(roles, None, ["A", "B", "C", "S"], [{"S": "S", "A": "B"}, {"S": "A"}])
    assert s == {"A": 0, "B": 0, "C": 0, "S": 12}


def test_all_civilians_dead_share_goes_to_all_civilians():
    roles = {"A": "civilian", "B": "civilian", "C": "civilian", "D": "civilian", "S": "spy"}
    # R1: everyone fouled, spy included
    s = r.game_scores(roles, 1, [], [{}])
    assert s == {"A": 3, "B": 3, "C": 3, "D": 3, "S": 0}
    # R2 with a spy vote from the (later fouled) civilian A
    s = r.game_scores(roles, 2, [], [{"A": "S", "B": "D", "C": "D", "D": "B", "S": "D"}, {}])
    assert s == {"A": 3, "B": 2, "C": 2, "D": 2, "S": 3}
    assert sum(s.values()) == 12


def test_scores_always_sum_to_12():
    rng = random.Random(1234)
    cases = 0
    for n in range(3, 10):
        players = [f"P{i}" for i in range(n)]
        for spy_idx in (0, n // 2, n - 1):
            spy = players[spy_idx]
            roles = {p: ("spy" if p == spy else "civilian") for p in players}
            civs = [p for p in players if p != spy]
            for spy_round in (None, 1, 2, 3):
                for k in range(len(civs) + 1):
                    alive = rng.sample(civs, k) + ([spy] if spy_round is None else [])
                    n_rounds = spy_round or 3
                    votes = [{v: rng.choice(players + [None, "ghost"]) for v in players if rng.random() < 0.8}
                             for _ in range(n_rounds)]
                    s = r.game_scores(roles, spy_round, alive, votes)
                    assert set(s) == set(players)
                    assert sum(s.values()) == pytest.approx(12, abs=1e-9)
                    cases += 1
    assert cases > 300


@pytest.mark.parametrize("roles", [
    {"A": "civilian", "B": "civilian", "C": "civilian"},
    {"A": "spy", "B": "spy", "C": "civilian"},
    {},
])
def test_game_scores_needs_exactly_one_spy(roles):
    with pytest.raises(ValueError):
        r.game_scores(roles, None, list(roles), [])


@pytest.mark.parametrize("rnd", [0, 4, -1])
def test_game_scores_rejects_round_outside_1_to_3(rnd):
    with pytest.raises(ValueError):
        r.game_scores(ROLES, rnd, [P1, P2], [])


# --------------------------------------------------------------------------- rank score

def test_rank_score():
    assert r.rank_score([]) == 100
    assert r.rank_score([12]) == 111
    assert r.rank_score([0]) == 99
    assert r.rank_score([-3, 0]) == 95
    assert r.rank_score([12, 0, 2.4]) == pytest.approx(111.4)
    assert r.rank_score(iter([4, 4, 4])) == 109


# --------------------------------------------------------------------------- one scripted game

def test_scripted_game_with_the_rules_end_to_end():
    """Walk a 6-player game by hand: first speaker P5, spy P4 ("coffee"), civilians "tea"."""
    words = {p: ("coffee" if p == SPY else "tea") for p in SEATS}
    alive = list(SEATS)
    shown: list[str] = []

    # Round 1
    order = r.speaking_order(SEATS, P5, alive)
    assert order == [P5, P6, P1, P2, P3, P4]
    said = {P5: "A hot drink", P6: "a HOT drink!", P1: "Leaves in water", P2: "I love tea",
            P3: "Often with milk", P4: "Morning energy"}
    fouls = {}
    for p in order:
        text = r.truncate(said[p], "en")
        f = r.foul(text, words[p], shown)
        if f:
            fouls[p] = f
        shown.append(text)
    assert fouls == {P6: "repeat", P2: "own_word"}
    alive = [p for p in alive if p not in fouls]
    assert r.end_reason(SPY, alive, 1, after_vote=False) is None
    votes1 = {P1: SPY, P3: P5, P4: P3, P5: SPY}
    assert r.tally(votes1, alive) == ({SPY: 2, P5: 1, P3: 1}, SPY)
    alive.remove(SPY)
    assert r.end_reason(SPY, alive, 1, after_vote=True) == "spy_eliminated"

    s = r.game_scores(ROLES, 1, alive, [votes1])
    # survivors P1 P3 P5 share 12 → 4; P1 and P5 +1; spy 0 − 2
    assert s == {P1: 5, P2: 0, P3: 4, SPY: -2, P5: 5, P6: 0}


def test_norm_text_is_cached_and_gives_the_same_text():
    from mas_agents.text import norm_text

    norm_text.cache_clear()
    assert norm_text("It's  a_Warm DRINK!") == "it s a warm drink" == norm_text("It's  a_Warm DRINK!")
    assert norm_text.cache_info().hits == 1
    assert norm_text("ＫＴＶ，唱歌") == "ktv 唱歌"      # NFKC folds full-width letters and punctuation
