"""PLAYER* clue sensors and pruner in the word games (Who is Spy, Undercover, Chameleon)."""

import json
import re

import pytest

from mas_agents.graphs.wis.session import WisGameConfig, play_game
from mas_agents.planners.player_star.deduction import WORD_SENSORS, _change, cut_is_a_tie, prune, suspicion
from tests.fakes import RuleChat, wis_player
from tests.games import GAME

S = WORD_SENSORS


def test_suspicion_weights_fit_most():
    fits = {"specificity": "Specific", "fit": "Fits", "copying": "No"}
    odd = {"specificity": "Specific", "fit": "Does not fit", "copying": "No"}
    vague_copy = {"specificity": "Vague", "fit": "Fits", "copying": "Yes"}
    assert suspicion([fits], S) == 0.0
    assert suspicion([odd], S) == 1.0
    assert suspicion([vague_copy], S) == 1.0          # 0.5 * 1 + 0.5 * 1
    assert suspicion([fits, odd], S) == 0.5           # mean over clues
    assert suspicion([{"fit": "unknown"}], S) == pytest.approx(1.0 * 0.5 + 0.5 * 0.5 + 0.5 * 0.5)
    assert suspicion([], S) == 0.0


def test_pruner_shrinks_grows_and_shifts():
    assert prune({"A": 1.0, "B": 0.9, "C": 0.1}, 0.25, 2) == ["A", "B"]
    assert prune({"A": 1.0, "B": 0.5, "C": 0.1}, 0.25, 2) == ["A"]
    assert prune({"A": 1.0, "B": 0.9, "C": 0.95}, 0.25, None) == ["A", "C", "B"]
    assert not cut_is_a_tie({"A": 1.0, "B": 0.9, "C": 0.1}, ["A", "B"])
    assert cut_is_a_tie({"A": 1.0, "B": 1.0, "C": 1.0}, ["A", "B"])      # e.g. every reading unknown
    assert not cut_is_a_tie({"A": 1.0, "B": 1.0}, ["A", "B"])              # nothing was cut
    assert _change(["A", "B"], ["A"]) == "shrink"
    assert _change(["A"], ["A", "B"]) == "grow"
    assert _change(["A"], ["B"]) == "shift"
    assert _change([], ["B"]) == "first list"


def test_player_star_reads_clues_keeps_a_suspect_list_and_votes_from_it(tmp_path):
    rule, ballots = wis_player(), {}

    def recording(messages):
        last = str(messages[-1].content)
        if '"Vote: ..."' in last:
            me = re.search(r"You are (Player \d+)", "\n".join(str(m.content) for m in messages)).group(1)
            ballots[me] = re.findall(r"^\d+\. (Player \d+)$", last, re.M)
        return rule(messages)
    rec = play_game(tmp_path, WisGameConfig(agents=["player_star"] * 6, pair={"civilian": "tea", "spy": "coffee"},
                                            model=RuleChat(rule=recording), spy_seat=1, first_speaker=0))
    events = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    sensors = [e for e in events if e["kind"] == "sensor"]
    # before voting, every player has read the 5 clues of the others: 6 x 5 readings, private
    assert len(sensors) == 30 and all(e["visible_to"] == [e["actor"]] for e in sensors)
    lists = {e["actor"]: e["data"]["suspects"] for e in events if e["kind"] == "suspect_list"}
    # civilians' sensors flag the spy's clue as not fitting: the spy is their only suspect
    assert all(lists[p] == ["Player 2"] for p in lists if p != "Player 2")
    # the spy finds every civilian clue odd: a tie of five, capped at two suspects
    assert len(lists["Player 2"]) == 2
    assert rec["rounds"][0]["voted_out"] == "Player 2"
    # civilians' ballots are narrowed to their suspect list of one: a forced vote, no model call;
    # the spy's two suspects were cut out of a five-way tie, which is no evidence, so its ballot
    # keeps all five candidates and goes to the model
    assert list(ballots) == ["Player 2"] and len(ballots["Player 2"]) == 5
    votes = {e["actor"]: e for e in events if e["kind"] == "vote"}
    assert all(votes[p]["data"]["target"] == "Player 2" and votes[p]["llm_call_ids"] == []
               for p in votes if p != "Player 2")
    # one reading call per player and round, before its vote, for all five clues; none while
    # describing; one vote call (the spy's)
    assert rec["llm"]["calls"] == 6 + 6 + 1
    assert [len({tuple(e["llm_call_ids"]) for e in sensors if e["actor"] == f"Player {i}"}) for i in range(1, 7)] == [1] * 6
    assert all(len(e["llm_call_ids"]) == 1 for e in sensors)


def test_mmg_only_blocks_stay_silent_in_word_games(tmp_path):
    from mas_agents.planners.player_star import PlayerStarConfig, player_star_blocks
    blocks = player_star_blocks(PlayerStarConfig(sensors=False))
    assert not any(type(b).__name__ == "DeductionSensors" for b in blocks)
    rec = play_game(tmp_path, WisGameConfig(agents=["player_star"] * 3, pair={"civilian": "tea", "spy": "coffee"},
                                            model=RuleChat(rule=wis_player()), spy_seat=0, first_speaker=0))
    assert rec["invalid_actions"] == 0


def test_vote_suspects_are_made_over_the_living_candidates():
    from mas_agents.planners.base import ActionRequest
    from mas_agents.planners.player_star.deduction import DeductionSensors

    class Me:
        name = "Player 1"
        emitted = []

        def emit(self, kind, content, **kw):
            self.emitted.append((kind, kw["data"]))

    odd, fits = {"specificity": "Specific", "fit": "Does not fit", "copying": "No"}, \
        {"specificity": "Specific", "fit": "Fits", "copying": "No"}
    block = DeductionSensors(readings={"Player 2": [odd], "Player 3": [odd], "Player 4": [fits],
                                       "Player 5": [{"fit": "Partly", "specificity": "Specific", "copying": "No"}]})
    # Player 2 (the top suspect) is out: the list is rebuilt from the candidates left
    c = block.contribute(Me(), ActionRequest(kind="vote", actor="Player 1", prompt="Who is the spy?",
                                             choices=["Player 3", "Player 4", "Player 5"], game=GAME["wis"], context={}))
    assert block.suspects == ["Player 3"] and c.choices == ["Player 3"]
    assert "Player 2" not in c.context


def test_voted_out_players_leave_the_suspect_list_for_good():
    from mas_agents.planners.base import ActionRequest
    from mas_agents.planners.player_star.deduction import DeductionSensors

    class Me:
        name = "Player 1"

        def emit(self, kind, content, **kw):
            pass

    odd = {"specificity": "Specific", "fit": "Does not fit", "copying": "No"}
    block = DeductionSensors(readings={"Player 2": [odd], "Player 3": [odd]})
    block.on_event(Me(), {"kind": "vote_result", "actor": "game", "data": {"out": "Player 2"}})
    assert block.contribute(Me(), ActionRequest(kind="describe", actor="Player 1", prompt="Describe.",
                                                game=GAME["wis"], context={})) is None   # no reading, no change
    block.contribute(Me(), ActionRequest(kind="vote", actor="Player 1", prompt="Vote.", choices=["Player 2", "Player 3"],
                                         game=GAME["wis"], context={}))
    assert block.suspects == ["Player 3"]
