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

from mas_agents.game import contract as games
from mas_agents.cli import app

RECORDED = Path(__file__).resolve().parents[1] / "data" / "recorded"
#: The toy game's own repository (a p-beauty contest), imported from its folder.
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "toygame_repo"


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    import toygame.game as game
    registered = games.find("beauty_contest") is None
    if registered:
        games.register(game.GAME_DEF)
    yield game
    if registered:
        games.unregister("beauty_contest")


def test_the_toy_game_is_rescored_through_its_own_hook(toy):
    r = CliRunner().invoke(app, ["rerun", "--rescore", "--module", "toygame.game", str(RECORDED / "toy")])
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


# --- one bad cell does not discard a multi-cell rerun (review finding 2) ---------------------

@pytest.fixture(scope="module")
def three_cells(tmp_path_factory) -> Path:
    """A run of three WiS cells: ``a`` and ``c`` replayable, ``b`` played by a person (refused)."""
    from mas_agents.game.runner import run
    from tests.fakes import RuleChat, wis_player
    root = tmp_path_factory.mktemp("cells") / "tour"
    run("wis", root / "a", model=RuleChat(rule=wis_player()), agents=["plain"] * 4,
        pair={"civilian": "tea", "spy": "coffee"}, seed=3)
    shutil.copytree(root / "a", root / "b")
    shutil.copytree(root / "a", root / "c")
    cfg = json.loads((root / "b" / "config.json").read_text())
    cfg["human"] = "Player 2"
    (root / "b" / "config.json").write_text(json.dumps(cfg))
    (root / "config.json").write_text(json.dumps({"kind": "tournament"}))   # the experiment's own record
    return root


def test_a_refused_cell_is_an_outcome_and_the_other_cells_are_rerun(three_cells):
    from mas_agents.eval.rerun.execute import rerun_cells
    seen = []
    outcomes = rerun_cells(three_cells, on_outcome=seen.append)
    assert [(o.run.name, o.status) for o in outcomes] == [("a", "identical"), ("b", "refused"), ("c", "identical")]
    assert seen == outcomes
    assert outcomes[1].text() == (f"{three_cells / 'b'}: refused: a person played 'Player 2': "
                                  "a person's answers are not replayed")
    assert [o.exit_code for o in outcomes] == [0, 2, 0]


def test_the_cli_prints_every_cell_and_exits_with_the_worst(three_cells):
    r = CliRunner().invoke(app, ["rerun", str(three_cells)])
    lines = r.output.strip().splitlines()
    assert r.exit_code == 2, r.output
    assert lines[0].startswith(f"{three_cells / 'a'}: identical (") and lines[2].startswith(f"{three_cells / 'c'}: identical (")
    assert lines[1] == f"{three_cells / 'b'}: refused: a person played 'Player 2': a person's answers are not replayed"
    assert lines[3] == "2 of 3 games identical" and len(lines) == 4


def test_a_rerun_that_raises_leaves_no_temporary_directory(three_cells, tmp_path, monkeypatch):
    import tempfile

    import mas_agents.game.runner as session
    from mas_agents.eval.rerun.execute import rerun_cells

    def broken(*a, **k):
        raise RuntimeError("the game broke")
    monkeypatch.setattr(session, "run", broken)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    outcomes = rerun_cells(three_cells)
    assert [(o.status, o.detail) for o in outcomes] == [("error", "RuntimeError: the game broke"),
                                                         ("refused", outcomes[1].detail),
                                                         ("error", "RuntimeError: the game broke")]
    assert list(tmp_path.iterdir()) == []
    assert [o.exit_code for o in outcomes] == [3, 2, 3]
