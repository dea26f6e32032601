"""Run lines that miscounted or misnamed (issue 57, E13 and E16): an ablation's agents, a session
evaluation's agents, and an abstained WellPlay answer in the replay."""

from __future__ import annotations

import json

from mas_agents.web import runs as rs
from mas_agents.web.replay_rows import sentence


def test_an_ablation_lists_every_variant_of_its_grid(tmp_path):
    """--blocks player_star,pgm is four variants; the list dropped plain+player_star+pgm."""
    ab = tmp_path / "ablate"
    ab.mkdir()
    (ab / "config.json").write_text(json.dumps({"kind": "ablation", "base": "plain", "blocks": ["player_star", "pgm"],
                                                "benches": ["spy"]}))
    run = rs.describe(tmp_path, ab, "ablation")
    assert run.agents == ["plain", "plain+player_star", "plain+pgm", "plain+player_star+pgm"]
    # a finished one lists its result's variants, in their order
    (ab / "result.json").write_text(json.dumps({"variants": ["plain", "plain+pgm", "plain+player_star",
                                                             "plain+pgm+player_star"], "summary": "s"}))
    assert rs.describe(tmp_path, ab, "ablation").agents == ["plain", "plain+pgm", "plain+player_star",
                                                             "plain+pgm+player_star"]


def test_a_session_evaluation_names_the_games_agent_not_session(tmp_path):
    game = tmp_path / "mmg-Sin"
    game.mkdir()
    (game / "config.json").write_text(json.dumps({"kind": "mmg", "script": "Sin", "agent": "plain+player_star"}))
    ev = tmp_path / "eval-session"
    ev.mkdir()
    (ev / "config.json").write_text(json.dumps({"kind": "wellplay-eval", "method": "session",
                                                "run": "runs/mmg-Sin"}))
    assert rs.describe(tmp_path, ev, "wellplay-eval").agents == ["plain+player_star"]
    (ev / "config.json").write_text(json.dumps({"kind": "wellplay-eval", "method": "session", "run": "elsewhere/x"}))
    assert rs.describe(tmp_path, ev, "wellplay-eval").agents == []     # no such game beside it: none named
    (ev / "config.json").write_text(json.dumps({"kind": "wellplay-eval", "method": "pp", "agent": "plain"}))
    assert rs.describe(tmp_path, ev, "wellplay-eval").agents == ["pp", "plain"]


def test_a_session_evaluation_finds_its_game_where_its_page_links_it(tmp_path):
    """The game an evaluation names is found as ``Site.run_link`` finds it (the path under --runs),
    not by its folder's name beside the evaluation: two games of one name in two folders, and a
    game in another folder than its evaluation (review of issue 57, E16)."""
    for folder, agent in (("a", "plain"), ("b", "plain+player_star")):
        game = tmp_path / folder / "sin"
        game.mkdir(parents=True)
        (game / "config.json").write_text(json.dumps({"kind": "mmg", "script": "Sin", "agent": agent}))
    ev = tmp_path / "a" / "eval"
    ev.mkdir()
    (ev / "config.json").write_text(json.dumps({"kind": "wellplay-eval", "method": "session", "run": "runs/b/sin"}))
    assert rs.describe(tmp_path, ev, "wellplay-eval").agents == ["plain+player_star"]
    outside = tmp_path.parent / (tmp_path.name + "-outside")
    outside.mkdir()
    (outside / "config.json").write_text(json.dumps({"kind": "mmg", "agent": "secret"}))
    (ev / "config.json").write_text(json.dumps({"kind": "wellplay-eval", "method": "session", "run": str(outside)}))
    assert rs.describe(tmp_path, ev, "wellplay-eval").agents == []     # outside --runs: not read


def test_an_abstained_answer_reads_abstained_once(tmp_path):
    """/eval counts an abstention apart from a wrong answer; the replay said '(abstained) (wrong)'."""
    def mcq(content, correct):
        return {"kind": "mcq", "actor": "Officer Li", "content": content, "data": {"qid": "q1", "correct": correct}}
    assert sentence("wellplay-eval", mcq("Who? -> (abstained)", False)) == "Officer Li answers: Who? -> (abstained)"
    assert sentence("wellplay-eval", mcq("Who? -> b", False)) == "Officer Li answers: Who? -> b (wrong)"
    assert sentence("wellplay-eval", mcq("Who? -> a", True)) == "Officer Li answers: Who? -> a (right)"
    assert sentence("wellplay-eval", mcq("Who? -> (abstained)", False), lang="zh") == "Officer Li 回答：Who? -> (abstained)"
