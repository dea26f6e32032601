"""The conformance kit (``tests/conformance/kit.py``) on the p-beauty contest, unchanged: the game
adds one :class:`tests.conformance.kit.Case` beside its registration and runs the kit's one body,
as every game does. Also: the kit finds a tampered result and a tampered log of this game."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mas_agents.game import contract as games
from mas_agents.game.runner import run
from mas_agents.game import conformance_kit
from tests.conformance import kit
from tests.conformance.kit import fake_model, hostile_model  # noqa: F401  (the fixtures)

ROUNDS = 3


def play(out: Path, data_root: Path | None, *, resume: bool = False, progress=None) -> dict:
    """Three seats, three rounds, on the kit's fake model (which reads no data)."""
    res = run("beauty_contest", out, model="local", agents=["plain", "plain", "plain"], rounds=ROUNDS,
              resume=resume, progress=progress)
    return {"games": [out], "run": res}


# salt "s0": one round whose guesses are all unreadable twice (abstentions), so the invalid-move
# rules have work
# free_text=False: a seat says a number, never words of its own that another seat reads
conformance_kit.add_cases(conformance_kit.Case("beauty_contest", "beauty_contest", play, stop="ctrl_c", salt="s0", run_keys=("wins", "rounds"),
                       free_text=False))


@pytest.fixture
def toy():
    import tests.toygame.game as game
    games.register(game.GAME_DEF)   # again, if another test unregistered it
    yield game
    games.unregister("beauty_contest")


def test_the_kit_runs_on_the_toy_game(toy, fake_model, tmp_path, tmp_path_factory):  # noqa: F811
    kit.conforms("beauty_contest", tmp_path, tmp_path_factory, None)


def test_no_seat_of_the_toy_game_forges_another(toy, hostile_model, tmp_path):  # noqa: F811
    conformance_kit.no_forgery("beauty_contest", tmp_path / "hostile", None)


def _copy_of_reference(tmp_path, tmp_path_factory) -> Path:
    ref = kit.reference("beauty_contest", tmp_path_factory, None)
    game = tmp_path / "copy"
    shutil.copytree(ref.games[0], game)
    assert conformance_kit.game_problems(game) == []
    return game


def test_the_kit_finds_a_result_the_events_do_not_give(toy, fake_model, tmp_path, tmp_path_factory):  # noqa: F811
    game = _copy_of_reference(tmp_path, tmp_path_factory)
    result = json.loads((game / "result.json").read_text())
    loser = min(result["wins"], key=result["wins"].get)
    result["wins"][loser] += 1
    (game / "result.json").write_text(json.dumps(result))
    assert any(p.startswith("copy: wins: result.json has") for p in conformance_kit.game_problems(game))


def test_the_kit_finds_an_illegal_move(toy, fake_model, tmp_path, tmp_path_factory):  # noqa: F811
    game = _copy_of_reference(tmp_path, tmp_path_factory)
    events = [json.loads(line) for line in (game / "events.jsonl").read_text().splitlines()]
    guess = next(e for e in events if e["kind"] == "guess")
    guess["data"]["guess"] = 101                       # outside 0..100
    (game / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    problems = conformance_kit.game_problems(game)
    assert "0 <= g <= rules.MAX_GUESS" in problems[0], problems                          # the game's rule
    assert problems[1:] == ["copy: re-scoring failed: ValueError: Player 1: guess 101 is not in 0..100"], problems
