"""MAgIC Public Good: a player with no points left is not asked and puts in 0 (issue 56 item 5;
MAgIC §3.1, App. A.1 and A.7: contributions come out of the remaining points;
:func:`mas_agents.graphs.magic.rules.pg_forced`)."""

from __future__ import annotations

import json
import re

import pytest

from mas_agents.graphs.magic import rules as R

P1, P2, P3 = "Player 1", "Player 2", "Player 3"


def test_pg_forced_only_with_nothing_left():
    assert R.pg_forced(0) == 0
    assert R.pg_forced(1) is None and R.pg_forced(100) is None
    for bad in (-1, 1.5, True, None):
        with pytest.raises(ValueError, match="non-negative integer"):
            R.pg_forced(bad)


def _play(tmp_path, contribution: int):
    from mas_agents.graphs.magic.dataset import PGSetting
    from mas_agents.graphs.magic.session import MagicGameConfig, play_magic_game
    from tests.fakes import RuleChat, magic_player

    prompts: list[str] = []
    rule = magic_player()

    def seen(messages):   # offers ``contribution``, or all that is left when that is less
        last = str(messages[-1].content)
        prompts.append(last)
        most = re.search(r"\(0 to (\d+)\)", last)
        if '"Contribution: ..."' in last and most:
            return f"Contribution: {min(contribution, int(most.group(1)))}"
        return rule(messages)

    out = tmp_path / f"c{contribution}"
    res = play_magic_game(out, MagicGameConfig(scenario="public_good", setting=PGSetting(id=0, test_player=P1, rounds=5,
                                                                                        multiplier=2.0),
                                               side="test_seat", challenger="plain", defender="plain",
                                               model=RuleChat(rule=seen)))
    events = [json.loads(x) for x in (out / "events.jsonl").read_text().splitlines()]
    calls = [json.loads(x) for x in (out / "llm_calls.jsonl").read_text().splitlines()]
    return res, events, calls, prompts, json.loads((out / "config.json").read_text())


def test_a_player_with_nothing_left_is_not_asked_and_puts_in_0(tmp_path):
    # everyone offers 60: round 1 puts in 60 (40 left), round 2 all 40 left (0 left); rounds 3-5
    # are not asked: 3 players x 2 rounds = 6 contribution calls, no invalid action
    res, events, calls, prompts, config = _play(tmp_path, 60)
    contrib = [e for e in events if e["kind"] == "contribution"]
    assert [(e["round"], e["data"]["amount"], e["data"].get("forced", False)) for e in contrib if e["actor"] == P1] == [
        (1, 60, False), (2, 40, False), (3, 0, True), (4, 0, True), (5, 0, True)]
    assert all(e["visible_to"] == [e["actor"]] for e in contrib)
    assert res["invalid_actions"] == 0 and res["model_actions"] == 6
    assert len(calls) == 6 and res["llm"]["calls"] == 6
    assert not [p for p in prompts if "(0 to 0)" in p]
    assert sum("you have 0 coins left" in p for p in prompts) == 0
    reveals = [e for e in events if e["kind"] == "pg_reveal"]
    assert "forced" not in reveals[1]["data"]
    assert reveals[2]["data"]["forced"] == [P1, P2, P3] and reveals[2]["data"]["amounts"] == {P1: 0, P2: 0, P3: 0}
    assert "Player 1 put in 0 (no points left)" in reveals[2]["content"]
    # everyone put in 100: finals = 0 + 2 x 300 / 3 = 200 each, a three-way tie
    assert res["outcome"]["finals"] == {P1: 200.0, P2: 200.0, P3: 200.0}
    # Rationality counts decisions (MAgIC §1, §5): the challenger decided twice (60 and 40, both
    # minimal as everyone put in the same); its 3 forced 0s are counted apart, not as rational rounds
    from mas_agents.graphs.magic.metrics import scenario_metrics
    m = scenario_metrics([events])
    c = m["counts"]
    assert (c["pg_contributions"], c["pg_minimal"], c["pg_forced"]) == (2, 2, 3)
    assert m["rationality"] == 1.0
    # the game's rules checks (graphs/magic/checks.py) hold the rule: a player with nothing left
    # is not asked, one with points left is; the reveal names those not asked
    from mas_agents.graphs.magic.checks import checks
    assert checks(config, events, res) == []
    third = next(e for e in contrib if e["actor"] == P1 and e["round"] == 3)
    asked = [dict(e, data={k: v for k, v in e["data"].items() if k != "forced"}) if e is third else e
             for e in events]
    assert checks(config, asked, res) != []
    unnamed = [dict(e, data={k: v for k, v in e["data"].items() if k != "forced"}) if e is reveals[2] else e
               for e in events]
    assert checks(config, unnamed, res) != []
    # the replay's sentence says so
    from mas_agents.graphs.magic.view import sentence
    assert sentence(third, "en") == "Player 1 has no points left and puts 0 into the pool (not asked)."
    assert sentence(contrib[0], "en") == "Player 1 puts 60 coins into the pool."


def test_a_player_with_points_left_is_asked_every_round(tmp_path):
    res, events, calls, prompts, config = _play(tmp_path, 10)
    assert len(calls) == 15 and res["model_actions"] == 15
    assert not [e for e in events if (e.get("data") or {}).get("forced")]
    assert sum("How many do you put into the pool (0 to " in p for p in prompts) == 15
