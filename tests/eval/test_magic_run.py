"""MAgIC games and the competition runner with a fake model: every scenario, metrics, resume, reports."""

import json

import pytest

from eval.datasets import DataError, resolve_data_dir
from eval.runs.magic_bench import parse_scenarios, run_magic
from mas_agents.events import read_events
from tests.fakes import RuleChat, magic_player

try:
    ROOT = resolve_data_dir()
except DataError as exc:  # pragma: no cover
    pytest.skip(f"datasets not found: {exc}", allow_module_level=True)


def test_all_scenarios_run_and_are_scored_from_events(tmp_path):
    played = []

    def counting_play(*a, **k):
        from eval.runs.magic_session import play_magic_game
        played.append((k["scenario"], k["side"]))
        return play_magic_game(*a, **k)

    kw = dict(data_root=ROOT, out=tmp_path, scenarios=parse_scenarios("all"), challenger="plain", defender="plain",
              settings="0", model=RuleChat(rule=magic_player()), replay_openings=True, play=counting_play)
    res = run_magic(**kw)
    assert sorted(played) == sorted([("chameleon", "chameleon"), ("chameleon", "non_chameleon"),
                                     ("undercover", "undercover"), ("undercover", "civilian"),
                                     ("cost_sharing", "test_seat"), ("prisoners_dilemma", "test_seat"),
                                     ("public_good", "test_seat")])
    m = res["metrics"]
    # the fake always defects and always contributes 10 (everyone equal: every round is a minimum)
    assert m["rationality"] == 1.0
    # it names itself right but always claims the first role listed (chameleon / undercover):
    # right only where it holds that role; every player answers, only challenger seats count
    assert 0 < m["self_awareness"] < 1
    assert m["cooperation"] == 1.0 and m["coordination"] == 1.0   # identical even splits, agreed in round 1
    assert set(m) == {"judgement", "reasoning", "deception", "self_awareness", "cooperation", "coordination",
                      "rationality", "win_rate"}
    assert (tmp_path / "radar.png").stat().st_size > 1000
    report = (tmp_path / "report.md").read_text()
    assert "ours: plain" in report and "GPT-4+PGM (paper)" in report
    # replayed openings: in the chameleon game where the challenger is the chameleon, defenders
    # seated before it replay the recorded clue
    ev = read_events(tmp_path / "games" / "chameleon-chameleon-s00" / "events.jsonl")
    setup = next(e for e in ev if e["kind"] == "setup")["data"]
    clues = [e for e in ev if e["kind"] == "clue"]
    first_ch = setup["players"].index(setup["challenger_seats"][0])
    assert all(c["data"]["replayed"] for c in clues[:first_ch]) and not any(c["data"]["replayed"] for c in clues[first_ch:])
    # rerun: everything reused
    played.clear()
    res2 = run_magic(**kw)
    assert played == [] and res2["reused_games"] == 7 and res2["metrics"] == m
    with pytest.raises(ValueError, match="field 'challenger'"):
        run_magic(**{**kw, "challenger": "plain+reasoning"})


def test_events_follow_the_contract(tmp_path):
    run_magic(data_root=ROOT, out=tmp_path, scenarios=["undercover"], challenger="plain", defender="plain",
              settings="1", model=RuleChat(rule=magic_player()))
    ev = read_events(tmp_path / "games" / "undercover-civilian-s01" / "events.jsonl")
    setup = next(e for e in ev if e["kind"] == "setup")
    assert setup["visible_to"] == ["game"]            # ground truth is hidden from every player
    assert setup["data"]["words"]["Player 1"] == "cup" and setup["data"]["challenger_seats"] == ["Player 2", "Player 3"]
    beliefs = [e for e in ev if e["kind"] == "belief"]
    assert len(beliefs) == 6 * 3 and all(e["visible_to"] == [e["actor"]] for e in beliefs)
    assert {e["data"]["clue_index"] for e in beliefs} == set(range(6))
    sa = [e for e in ev if e["kind"] == "self_awareness"]
    assert len(sa) == 18 and all(e["data"]["said_name"] == e["actor"] for e in sa)
    out = next(e for e in ev if e["kind"] == "outcome")["data"]
    assert out == {"code": 0, "accused": "Player 1"}   # all vote the first other player: P2, P3 -> P1 (undercover)


def test_bad_scenario():
    with pytest.raises(ValueError, match="unknown chess"):
        parse_scenarios("chess")


def test_self_awareness_reads_the_exact_answer(tmp_path):
    """A player who answers truthfully scores 1.0 (regression: "...not the chameleon" was read as
    "the chameleon" because both end the same way)."""
    import re as _re
    base = magic_player()

    def truthful(messages):
        last = str(messages[-1].content)
        if "who are you, and what is your role" in last:
            me = _re.search(r"You are (Player \d)", last).group(1)
            role = "the chameleon" if "You are the chameleon" in last else "not the chameleon"
            return f"Choice: I am {me} and I am {role}"
        return base(messages)

    for side in ("non_chameleon", "chameleon"):
        res = run_magic(data_root=ROOT, out=tmp_path / side, scenarios=["chameleon"], challenger="plain",
                        defender="plain", settings="2", model=RuleChat(rule=truthful))
        assert res["metrics"]["self_awareness"] == 1.0
    ev = read_events(tmp_path / "chameleon" / "games" / "chameleon-chameleon-s02" / "events.jsonl")
    sa = [e for e in ev if e["kind"] == "self_awareness"]
    assert sa and all(e["visible_to"] == ["game"] for e in sa)     # carries the true role: no player sees it
