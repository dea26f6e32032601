"""MAgIC games and the competition runner with a fake model: every scenario, metrics, resume, reports."""

import pytest

from mas_agents.graphs.magic.bench import MagicBenchConfig, parse_scenarios, run_magic
from mas_agents.events import read_events
from tests.fakes import RuleChat, magic_player


def test_all_scenarios_run_and_are_scored_from_events(tmp_path, mixed_root):
    played = []

    def counting_play(out, config):
        from mas_agents.graphs.magic.session import play_magic_game
        played.append((config.scenario, config.side))
        return play_magic_game(out, config)

    cfg = MagicBenchConfig(data_root=mixed_root, out=tmp_path, scenarios=parse_scenarios("all"), challenger="plain",
                           defender="plain", settings="0", model=RuleChat(rule=magic_player()), replay_openings=True)
    res = run_magic(cfg, play=counting_play)
    assert sorted(played) == sorted([("chameleon", "chameleon"), ("chameleon", "non_chameleon"),
                                     ("undercover", "undercover"), ("undercover", "civilian"),
                                     ("cost_sharing", "test_seat"), ("prisoners_dilemma", "test_seat"),
                                     ("public_good", "test_seat")])
    m = res["metrics"]
    c = res["counts"]
    # the fake always defects and always contributes 10 (everyone equal: every round is a minimum)
    assert m["rationality"] == 1.0
    assert (c["pd_defections"], c["pd_choices"], c["pg_minimal"], c["pg_contributions"]) == (5, 5, 5, 5)
    # (real setting 0: the chameleon is Player 3, the undercover Player 1)
    # it names itself right but always claims the first role listed (chameleon / undercover): right
    # only where it holds that role (Player 3 as the chameleon, Player 1 as the undercover); every
    # player answers, only challenger seats count: 9 of 27 answers
    assert (c["self_awareness_correct"], c["self_awareness_answers"]) == (9, 27)
    # everyone votes the first other player (P1 -> P2, P2 and P3 -> P1): of the 4 challenger votes
    # against a hidden role, the two civilians' votes for the undercover (Player 1) are right, the
    # non-chameleons' votes (P1 -> P2, P2 -> P1) are not
    assert (c["correct_votes"], c["votes"]) == (2, 4)
    # belief questions: 12 of 27 gold and 18 of 54 inter-player answers right, pooled: 30 / 81
    assert (c["gold_hits"], c["gold_questions"], c["inter_hits"], c["inter_questions"]) == (12, 27, 18, 54)
    # Player 1 is accused in both deduction games: a wrong player in Chameleon (the chameleon
    # wins), the undercover in Undercover (the civilians win); the three others are won
    assert res["per_scenario"] == {"chameleon": {"chameleon": 1.0, "non_chameleon": 0.0},
                                   "undercover": {"undercover": 0.0, "civilian": 1.0},
                                   "cost_sharing": 1.0, "prisoners_dilemma": 1.0, "public_good": 1.0}
    assert m == {"judgement": 0.5, "reasoning": pytest.approx(30 / 81), "deception": 0.5,
                 "self_awareness": pytest.approx(9 / 27), "cooperation": 1.0, "coordination": 1.0,
                 "coordination_emnlp": 1.0, "rationality": 1.0, "win_rate": pytest.approx(5 / 7)}
    assert (tmp_path / "radar.png").stat().st_size > 1000
    report = (tmp_path / "report.md").read_text()
    # the mixed root has no magic/results/: no paper rows (see test_report_lists_the_paper_rows)
    # every value has its n and, where there is one, its 95 % interval: Wilson for the proportions
    # (2 of 4 votes: [15.0, 85.0]; hand-computed, z = 1.96), a bootstrap over setting ids for win rate
    # and deception (one setting here: no interval, said so)
    row = next(line for line in report.splitlines() if line.startswith("| **ours: plain**"))
    cells = [x.strip() for x in row.strip("|").split("|")][1:]
    # each n says what it counts (issue 57, E20: "n=4" here read against an ablation's "n=1 setting");
    # Coordination twice: ÷ agreed games, then ÷ all Cost Sharing games (issue 56)
    assert cells == ["71.4 [no interval, n=1 setting]", "50.0 [15.0, 85.0] (n=4 votes)",
                     "37.0 [27.3, 47.9] (n=81 questions)", "50.0 [no interval, n=1 setting]",
                     "33.3 [18.6, 52.2] (n=27 answers)", "100.0 [20.7, 100.0] (n=1 Cost Sharing game)",
                     "100.0 [20.7, 100.0] (n=1 agreed game)", "100.0 [20.7, 100.0] (n=1 Cost Sharing game)",
                     "100.0 [72.2, 100.0] (n=10 decisions)"]
    assert res["intervals"]["judgement"]["method"] == "Wilson score"
    assert res["intervals"]["win_rate"]["method"] == "bootstrap over settings"
    # per-scenario credits: a bootstrap interval over games beside each (one game here: no interval)
    assert "| Public Good | 100.0 [no interval, n=1 game] |" in report
    assert ("| Chameleon | as chameleon 100.0 [no interval, n=1 game], as non-chameleon 0.0 [no interval, n=1 game] |"
            in report)
    assert "| model | Win rate | Judgement | Reasoning | Deception | Self-awareness |" in report
    assert res["per_scenario_intervals"]["public_good"]["n"] == 1
    assert "(paper)" not in report
    # replayed openings: in the chameleon game where the challenger is the chameleon, defenders
    # seated before it replay the recorded clue
    ev = read_events(tmp_path / "games" / "chameleon-chameleon-s00" / "events.jsonl")
    setup = next(e for e in ev if e["kind"] == "setup")["data"]
    clues = [e for e in ev if e["kind"] == "clue"]
    first_ch = setup["players"].index(setup["challenger_seats"][0])
    assert all(c["data"]["replayed"] for c in clues[:first_ch]) and not any(c["data"]["replayed"] for c in clues[first_ch:])
    # rerun: everything reused
    played.clear()
    res2 = run_magic(cfg, play=counting_play)
    assert played == [] and res2["reused_games"] == 7 and res2["metrics"] == m
    with pytest.raises(ValueError, match="field 'challenger'"):
        run_magic(cfg.replace(challenger="plain+reasoning"), play=counting_play)


def test_events_follow_the_contract(tmp_path, mixed_root):
    run_magic(MagicBenchConfig(data_root=mixed_root, out=tmp_path, scenarios=["undercover"], challenger="plain",
                               defender="plain", settings="0", model=RuleChat(rule=magic_player())))
    ev = read_events(tmp_path / "games" / "undercover-civilian-s00" / "events.jsonl")
    setup = next(e for e in ev if e["kind"] == "setup")
    assert setup["visible_to"] == ["game"]            # ground truth is hidden from every player
    assert setup["data"]["words"] == {"Player 1": "hood", "Player 2": "mask", "Player 3": "mask"}   # real setting 0
    assert setup["data"]["challenger_seats"] == ["Player 2", "Player 3"]
    beliefs = [e for e in ev if e["kind"] == "belief"]
    assert len(beliefs) == 6 * 3 and all(e["visible_to"] == [e["actor"]] for e in beliefs)
    assert {e["data"]["clue_index"] for e in beliefs} == set(range(6))
    sa = [e for e in ev if e["kind"] == "self_awareness"]
    assert len(sa) == 18 and all(e["data"]["said_name"] == e["actor"] for e in sa)
    out = next(e for e in ev if e["kind"] == "outcome")["data"]
    # all vote the first other player: P1 -> P2, P2 and P3 -> P1, the undercover: caught
    assert out == {"code": 0, "accused": "Player 1"}


@pytest.mark.realdata
def test_report_lists_the_paper_rows(real_data_root):
    from mas_agents.graphs.magic.bench_report import paper_rows, report_md
    rows = paper_rows(real_data_root)
    assert rows[0]["model"] == "GPT-4+PGM" and rows[0]["win_rate"] == "63.5"
    result = {"challenger": "plain", "defender": "plain", "model": "fake", "scenarios": ["public_good"],
              "settings": "0", "replay_openings": False, "metrics": dict.fromkeys(
                  ("win_rate", "judgement", "reasoning", "deception", "self_awareness", "cooperation",
                   "coordination", "rationality")), "components": {"missing": []},
              "cost": {"games": 1, "calls": 0, "input_tokens": 0, "output_tokens": 0, "wall_s": 0.0,
                       "invalid_actions": 0, "model_actions": 0}, "per_scenario": {}}
    report = report_md(result, rows)
    # the leaderboard is the pre-EMNLP table: its Coordination is ÷ agreed games, it has none ÷ all games
    assert ("| GPT-4+PGM (paper, pre-EMNLP) | 63.5 | 87.5 | 37.8 | 85.6 | 86.7 | 61.9 | 92.3 | not in this table "
            "| 76.2 |") in report
    # a result.json written before the EMNLP Coordination existed says so in its column
    assert "| **ours: plain** | - | - | - | - | - | - | - | not recorded | - |" in report


def test_bad_scenario():
    with pytest.raises(ValueError, match="unknown chess"):
        parse_scenarios("chess")


def test_self_awareness_reads_the_exact_answer(tmp_path, mixed_root):
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
        res = run_magic(MagicBenchConfig(data_root=mixed_root, out=tmp_path / side, scenarios=["chameleon"],
                                         challenger="plain", defender="plain", settings="0",
                                         model=RuleChat(rule=truthful)))
        assert res["metrics"]["self_awareness"] == 1.0
    ev = read_events(tmp_path / "chameleon" / "games" / "chameleon-chameleon-s00" / "events.jsonl")
    sa = [e for e in ev if e["kind"] == "self_awareness"]
    assert sa and all(e["visible_to"] == ["game"] for e in sa)     # carries the true role: no player sees it
