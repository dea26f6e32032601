"""The p-beauty contest against mas-agents' packaged conformance kit
(:mod:`mas_agents.game.conformance_kit`): one :class:`Case` saying how to play it on the kit's fake
model, then :func:`check_game` (its rules and re-scoring, resume after an interruption, no seat's
prompt holding what was hidden from it, no forged line). Also: the kit finds a tampered result
and a tampered move of this game. Run with ``pytest`` from this folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import toygame.game
from mas_agents.game import contract as games
from mas_agents.game.conformance_kit import Case, check_game, game_problems, play_reference
from mas_agents.game.fake_chat import patched_model
from mas_agents.game.runner import run

ROUNDS = 3


def play(out: Path, data_root: Path | None, *, resume: bool = False, progress=None) -> dict:
    """Three seats, three rounds, on whatever model the kit patched in (the game reads no data)."""
    res = run("beauty_contest", out, model="local", agents=["plain", "plain", "plain"], rounds=ROUNDS,
              resume=resume, progress=progress)
    return {"games": [out], "run": res}


# salt "s0": one round whose guesses are all unreadable twice (abstentions), so the invalid-move
# rules have work; free_text=False: a seat says a number, never words that another seat reads
CASE = Case("beauty_contest", "beauty_contest", play, stop="ctrl_c", salt="s0", run_keys=("wins", "rounds"),
            free_text=False)


@pytest.fixture(autouse=True)
def registered():
    games.register(toygame.game.GAME_DEF)   # again, if something unregistered it


def test_the_game_conforms(tmp_path):
    assert check_game(CASE, tmp_path) == []


@pytest.fixture
def finished(tmp_path) -> Path:
    """A copy of one finished game on the kit's fake model, that the kit finds nothing wrong with."""
    with patched_model():
        ref = play_reference(CASE, tmp_path / "ref", None)
    game = tmp_path / "copy"
    shutil.copytree(ref.games[0], game)
    assert game_problems(game) == []
    return game


def test_the_kit_finds_a_result_the_events_do_not_give(finished):
    result = json.loads((finished / "result.json").read_text())
    loser = min(result["wins"], key=result["wins"].get)
    result["wins"][loser] += 1
    (finished / "result.json").write_text(json.dumps(result))
    assert any(p.startswith("copy: wins: result.json has") for p in game_problems(finished))


def test_the_kit_finds_an_illegal_move(finished):
    events = [json.loads(line) for line in (finished / "events.jsonl").read_text().splitlines()]
    guess = next(e for e in events if e["kind"] == "guess")
    guess["data"]["guess"] = 101                       # outside 0..100
    (finished / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    problems = game_problems(finished)
    assert "0 <= g <= rules.MAX_GUESS" in problems[0], problems                        # the game's rule
    assert problems[1:] == ["copy: re-scoring failed: ValueError: Player 1: guess 101 is not in 0..100"], problems
