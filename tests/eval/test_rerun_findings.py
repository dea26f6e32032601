"""Review findings on ``mas rerun`` (issue 50): ``--rescore`` re-scores each game through its own
registered hook (``GameDef.conformance.rescore``), so the toy game and a single MAgIC game are
re-scored (before: "no re-scorer", exit 1); a game without a hook is bad input (exit 2, one
``error:`` line); a log the hook cannot read is a difference, never a traceback."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eval import games
from mas_agents.cli import app

RECORDED = Path(__file__).resolve().parents[1] / "data" / "recorded"


@pytest.fixture
def toy():
    import tests.toygame.game as game
    registered = games.find("beauty_contest") is None
    if registered:
        games.register(game.GAME_DEF)
    yield game
    if registered:
        games.unregister("beauty_contest")


def test_the_toy_game_is_rescored_through_its_own_hook(toy):
    r = CliRunner().invoke(app, ["rerun", "--rescore", "--module", "tests.toygame.game", str(RECORDED / "toy")])
    assert r.exit_code == 0, r.output
    assert r.output.strip() == f"{RECORDED / 'toy'}: re-scored from events.jsonl: wins, rounds equal result.json"


def test_a_single_magic_game_is_rescored_through_its_own_hook():
    [cell] = (RECORDED / "magic" / "games").iterdir()
    r = CliRunner().invoke(app, ["rerun", "--rescore", str(cell)])
    assert r.exit_code == 0, r.output
    assert r.output.strip() == f"{cell}: re-scored from events.jsonl: outcome, invalid_actions equal result.json"


def test_a_tampered_toy_result_is_a_difference(toy, tmp_path):
    d = tmp_path / "toy"
    shutil.copytree(RECORDED / "toy", d)
    res = json.loads((d / "result.json").read_text())
    res["rounds"] += 1
    (d / "result.json").write_text(json.dumps(res))
    r = CliRunner().invoke(app, ["rerun", "--rescore", str(d)])
    assert r.exit_code == 1 and "rounds: result.json has 3, the events give 2" in r.output, r.output


def test_a_log_the_hook_cannot_read_is_a_difference_not_a_traceback(toy, tmp_path):
    d = tmp_path / "toy"
    shutil.copytree(RECORDED / "toy", d)
    lines = (d / "events.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    del first["data"]["guess"]
    (d / "events.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    r = CliRunner().invoke(app, ["rerun", "--rescore", str(d)])
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "the events do not have the shape the game's re-scorer reads: KeyError: 'guess'" in r.output


def test_a_game_without_a_rescore_hook_is_refused_in_one_line_with_exit_2(toy, tmp_path):
    games.register(dataclasses.replace(toy.GAME_DEF, kind="beauty_unscored", conformance=None))
    try:
        d = tmp_path / "toy"
        shutil.copytree(RECORDED / "toy", d)
        cfg = json.loads((d / "config.json").read_text())
        cfg["kind"] = "beauty_unscored"
        (d / "config.json").write_text(json.dumps(cfg))
        r = CliRunner().invoke(app, ["rerun", "--rescore", str(d)])
    finally:
        games.unregister("beauty_unscored")
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "declares no re-scorer" in lines[0]
