"""A new in-tree game is one new folder plus one registration line (issue 58 item 1).

The folder: ``graphs/guessing/`` (its ``rules.py``, ``graph.py`` and ``game.py``: the example's
p-beauty contest of ``examples/toygame_repo/toygame/`` under the kind ``guessing``), written into a
temporary directory that is put on the ``mas_agents.graphs`` package's search path, so that it is
``mas_agents.graphs.guessing`` as a folder of the checkout's ``graphs/`` would be, and the tree is
not touched. The line: ``"guessing": "mas_agents.graphs.guessing.game"`` in
:data:`mas_agents.game.contract.BUILTIN`. With nothing else, ``mas game list`` lists it, ``mas
game play guessing`` plays it (no ``--module``), and the packaged conformance kit
(:func:`mas_agents.game.conformance_kit.check_game`) finds nothing wrong with it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import mas_agents.graphs
from mas_agents.game import conformance_kit
from mas_agents.game import contract as games
from mas_agents.game.conformance_kit import Case, check_game
from mas_agents.game.fake_chat import make_fake_model
from mas_agents.game.runner import run

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "toygame_repo" / "toygame"
KIND = "guessing"
MODULE = f"mas_agents.graphs.{KIND}"


@pytest.fixture
def new_folder(tmp_path, monkeypatch) -> Path:
    """``graphs/guessing/`` in a temporary directory on ``mas_agents.graphs.__path__``, and the one
    registration line in BUILTIN; the registry, the kit's cases and the imported modules are left
    as they were."""
    graphs = tmp_path / "graphs"
    folder = graphs / KIND
    folder.mkdir(parents=True)
    for f in ("__init__.py", "rules.py", "graph.py", "game.py"):
        text = (EXAMPLE / f).read_text(encoding="utf-8")
        (folder / f).write_text(text.replace("from toygame", f"from {MODULE}").replace("beauty_contest", KIND),
                                encoding="utf-8")
    monkeypatch.setattr(mas_agents.graphs, "__path__", [*mas_agents.graphs.__path__, str(graphs)])
    assert games.find(KIND) is None                     # not a game before the line
    monkeypatch.setitem(games.BUILTIN, KIND, f"{MODULE}.game")          # the one registration line
    monkeypatch.setattr(games.REGISTRY, "loaded", False)        # as in a new process: the registry reads BUILTIN again
    yield folder
    games.unregister(KIND)
    conformance_kit.CASES.pop(KIND, None)
    for name in [m for m in sys.modules if m == MODULE or m.startswith(MODULE + ".")]:
        del sys.modules[name]


def play(out: Path, data_root: Path | None, *, resume: bool = False, progress=None) -> dict:
    """Three seats, three rounds, on the model the kit patched in."""
    res = run(KIND, out, model="local", agents=["plain", "plain", "plain"], rounds=3, resume=resume,
              progress=progress)
    return {"games": [out], "run": res}


def test_mas_game_plays_the_new_folder_with_no_module_option(new_folder, tmp_path, monkeypatch):
    from mas_agents import llm
    from mas_agents.cli import app

    monkeypatch.setattr(llm, "make_chat_model", make_fake_model)
    cli = CliRunner()
    listed = cli.invoke(app, ["game", "list"])
    assert listed.exit_code == 0 and KIND in listed.output, listed.output
    ok = cli.invoke(app, ["game", "play", KIND, "--agents", "plain,plain", "--set", "rounds=2",
                          "--out", str(tmp_path / "cli")])
    assert ok.exit_code == 0, ok.output
    assert json.loads((tmp_path / "cli" / "config.json").read_text())["kind"] == KIND
    res = json.loads((tmp_path / "cli" / "result.json").read_text())
    assert res["rounds"] == 2 and sorted(res["wins"]) == ["Player 1", "Player 2"]
    assert sys.modules[f"{MODULE}.game"].__file__ == str(new_folder / "game.py")


def test_the_packaged_kit_passes_on_the_new_folder(new_folder, tmp_path):
    # salt "s0": a round with a guess unreadable twice (an invalid move), so the kit's
    # invalid-action check has work; free_text=False: a seat says only numbers
    case = Case(KIND, KIND, play, salt="s0", run_keys=("wins", "rounds"), free_text=False)
    assert check_game(case, tmp_path) == []


def test_the_kit_reports_a_game_that_breaks_its_own_rule(new_folder, tmp_path):
    """The kit can fail here: the same folder with its result counting one more round than it
    played is reported by its rules and its re-scoring."""
    game = new_folder / "game.py"
    text = game.read_text(encoding="utf-8")
    assert text.count('"rounds": state["round"]') == 1
    game.write_text(text.replace('"rounds": state["round"]', '"rounds": state["round"] + 1'), encoding="utf-8")
    case = Case(KIND, KIND, play, salt="s0", run_keys=("wins", "rounds"), free_text=False)
    found = check_game(case, tmp_path)
    assert found and all(p.startswith(("rules: ", "resume: ", "forgery: ")) for p in found), found
    assert "rules: reference: rounds: result.json has 4, the events give 3" in found, found     # its re-scoring
    assert any(p.startswith("rules: reference: game.py:") and 'result["rounds"] == config["rounds"]' in p
               for p in found), found                                                              # its own rule
