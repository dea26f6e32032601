"""Recorded real-model runs as regression tests (issue 50 item 4): each run under
tests/data/recorded/ (played against ``python -m llama_cpp.server`` serving the embedded GGUF,
see its README) re-executes on its recording, with no model and no server, to exactly the
events and result.json it recorded. A prompt changed in the code fails here with the call and
the diff; re-record deliberately, in a commit of its own (README there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mas_agents.game import contract as games
from mas_agents.eval.rerun.execute import rerun_cells
from mas_agents.eval.rerun.rescore import rescore_run

RECORDED = Path(__file__).resolve().parents[1] / "data" / "recorded"
#: The toy game's own repository (a p-beauty contest), imported from its folder.
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "toygame_repo"


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    import toygame.game as game
    games.register(game.GAME_DEF)
    yield game
    games.unregister("beauty_contest")


def _calls(d: Path) -> int:
    return sum(len(p.read_text().splitlines()) for p in d.rglob("llm_calls.jsonl"))


def test_the_recordings_are_there_and_were_made_on_the_real_server():
    import json
    for name in ("wis", "magic", "toy"):
        d = RECORDED / name
        cfgs = [json.loads(p.read_text()) for p in d.rglob("config.json")]
        assert cfgs and all(c.get("record_prompts") is not False for c in cfgs), name
        assert {m for c in cfgs for m in c.get("models", [])} == {"openai:smol"}, name
        assert _calls(d) > 0 and list(d.rglob("llm_prompts.jsonl.gz")), name


def test_recorded_who_is_spy_game_reruns_identical(tmp_path):
    [o] = rerun_cells(RECORDED / "wis", tmp_path / "wis")
    assert o.status == "identical", o.text()
    assert o.calls == _calls(RECORDED / "wis")


def test_recorded_magic_scenario_reruns_identical_and_rescores(tmp_path, real_data_root):
    outcomes = rerun_cells(RECORDED / "magic", tmp_path / "magic", data_root=real_data_root)
    assert outcomes and all(o.status == "identical" for o in outcomes), [o.text() for o in outcomes]
    assert sum(o.calls for o in outcomes) == _calls(RECORDED / "magic")
    [r] = rescore_run(RECORDED / "magic")
    assert r.same, r.text()


def test_recorded_toy_game_reruns_identical(toy, tmp_path):
    [o] = rerun_cells(RECORDED / "toy", tmp_path / "toy")
    assert o.status == "identical", o.text()


def test_an_edited_prompt_sentence_fails_the_recorded_game_with_that_call_and_the_diff(tmp_path, monkeypatch):
    from mas_agents.graphs.wis import player
    task = player.TASKS["en"]["describe"]
    assert "without repeating anything said before" in task
    monkeypatch.setitem(player.TASKS["en"], "describe",
                        task.replace("without repeating anything said before", "never repeating what was said"))
    [o] = rerun_cells(RECORDED / "wis", tmp_path / "wis")
    assert o.status == "prompt"
    assert "(describe#1) is not in the recording: message 2 (user) differs" in o.detail
    minus = [x for x in o.detail.splitlines() if x.startswith("-") and not x.startswith("---")]
    plus = [x for x in o.detail.splitlines() if x.startswith("+") and not x.startswith("+++")]
    assert any("without repeating anything said before" in x for x in minus)
    assert any("never repeating what was said" in x for x in plus)
