"""A new game through the registry alone (issue 29, part 0): the p-beauty contest of
``examples/toygame_repo/`` (a game in its own repository: its package ``toygame`` with rules, graph
and registration, its ``pyproject.toml`` with the ``mas_agents.games`` entry point, its own tests
on the packaged conformance kit) runs through the one runner (:func:`mas_agents.game.runner.run`),
writes the run directory every game writes, and shows in ``mas serve``'s runs list and replay
page, with no edit to any file outside its folder. The example is imported from its folder
(nothing is installed): in-process with its folder on ``sys.path``, in a subprocess through
``PYTHONPATH``, and its entry point through a ``.dist-info`` folder written from its
``pyproject.toml``, which is what ``pip install`` leaves for ``importlib.metadata`` to find."""

from __future__ import annotations

import hashlib
import json
import re
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from mas_agents.game import contract as games
from mas_agents.game.runner import run

ROOT = Path(__file__).resolve().parents[1]
#: The toy game's own repository.
EXAMPLE = ROOT / "examples" / "toygame_repo"
ASK = re.compile(r"Name a whole number from 0 to (\d+)\.")


class GuessChat(BaseChatModel):
    """Answers the contest's guess request with ``Contribution: N`` (N from a hash of the
    prompt, in range); raises on any other prompt."""

    @property
    def _llm_type(self) -> str:
        return "toy-guess"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        text = "\n".join(str(m.content) for m in messages)
        m = ASK.search(text)
        if not m:
            raise AssertionError(f"GuessChat does not know this prompt: {text[-200:]!r}")
        n = int(hashlib.sha256(text.encode()).hexdigest(), 16) % (int(m.group(1)) + 1)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=f"Contribution: {n}"))])


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    import toygame.game as game
    games.register(game.GAME_DEF)   # again, if an earlier test unregistered it
    yield game
    games.unregister("beauty_contest")


def test_registered_after_the_built_in_games_and_found_by_kind(toy):
    assert games.kinds()[:3] == ["mmg", "wis", "magic"] and "beauty_contest" in games.kinds()
    assert games.get("beauty_contest") is toy.GAME_DEF
    with pytest.raises(ValueError, match="no game 'nope'; the games are: mmg, wis, magic"):
        games.get("nope")
    with pytest.raises(ValueError, match="lowercase"):
        games.register(games.GameDef(kind="Bad Kind", title="x", info=None, setup=lambda seats, out: None))


def test_the_runner_plays_it_and_writes_every_file(toy, tmp_path):
    from toygame import rules

    out = tmp_path / "bc"
    res = run("beauty_contest", out, model=GuessChat(), agents=["plain", "plain", "plain"], rounds=3)
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "events.jsonl", "llm_calls.jsonl",
                                                     "llm_prompts.jsonl.gz", "result.json", "transcript.md"]
    cfg = json.loads((out / "config.json").read_text())
    assert list(cfg)[:5] == ["kind", "agents", "rounds", "model", "seed"] and cfg["kind"] == "beauty_contest"
    assert {"endpoints", "record_prompts", "versions"} <= set(cfg)
    assert json.loads((out / "result.json").read_text()) == res
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert [e["step"] for e in events] == list(range(len(events)))
    guesses = [e for e in events if e["kind"] == "guess"]
    assert len(guesses) == 9 and all(e["visible_to"] == ["game"] for e in guesses)
    # the outcome re-scored from the events with the game's own rule equals result.json
    wins = {n: 0 for n in res["players"]}
    for r in range(1, 4):
        g = {e["actor"]: e["data"]["guess"] for e in guesses if e["round"] == r}
        for w in rules.winners(g):
            wins[w] += 1
    assert res["wins"] == wins and sum(wins.values()) >= 3
    assert res["llm"]["calls"] == 9 and res["invalid_actions"] == 0
    assert len((out / "llm_calls.jsonl").read_text().splitlines()) == 9
    # a rerun into the same directory replays the game: the call log starts afresh
    again = run("beauty_contest", out, model=GuessChat(), agents=["plain", "plain", "plain"], rounds=3)
    assert again["wins"] == res["wins"] and len((out / "llm_calls.jsonl").read_text().splitlines()) == 9


def test_bad_parameters_and_resume_are_refused_before_anything_is_written(toy, tmp_path):
    with pytest.raises(ValueError, match="need 2\\+ players"):
        run("beauty_contest", tmp_path / "one", model=GuessChat(), agents=["plain"])
    assert not (tmp_path / "one").exists()
    with pytest.raises(ValueError, match="do not resume mid-game"):
        run("beauty_contest", tmp_path / "r", model=GuessChat(), agents=["plain", "plain"], resume=True)
    with pytest.raises(ValueError, match="beauty_contest: no parameter colour; its parameters: agents, rounds"):
        run("beauty_contest", tmp_path / "t", model=GuessChat(), agents=["plain", "plain"], colour="red")
    with pytest.raises(ValueError, match="beauty_contest: missing agents; its parameters: agents, rounds"):
        run("beauty_contest", tmp_path / "t", model=GuessChat(), rounds=2)
    assert not (tmp_path / "t").exists()


def test_mas_serve_lists_and_replays_it(toy, tmp_path):
    from fastapi.testclient import TestClient

    from mas_agents.web import runs as rs
    from mas_agents.web.app import create_app

    run("beauty_contest", tmp_path / "runs" / "bc", model=GuessChat(), agents=["plain", "plain+pgm"], rounds=2)
    [found] = rs.scan(tmp_path / "runs")
    assert found.kind == "beauty_contest" and found.is_game and found.finished
    assert found.agents == ["plain", "plain+pgm"] and found.headline.startswith("wins: Player 1 ")
    client = TestClient(create_app(tmp_path / "runs", tmp_path / "none.sqlite"))
    index = client.get("/").text
    assert "beauty_contest" in index and "wins: Player 1 " in index
    assert client.get("/run/bc").status_code == 200
    assert "beauty_contest" in client.get("/?kind=beauty_contest").text
    replay = client.get("/replay/bc?private=1")
    assert replay.status_code == 200 and "Target " in replay.text
    assert "<h1>p-beauty contest <span class=\"run-name\">— " in replay.text and "Murder mystery" not in replay.text
    assert "<td>Player 2</td><td><code>plain+pgm</code></td><td>GuessChat</td>" in replay.text


def test_mas_game_plays_it_from_the_command_line(toy, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import mas_agents.llm
    from mas_agents.cli import app

    monkeypatch.setattr(mas_agents.llm, "make_chat_model", lambda spec="local", **kw: GuessChat())
    cli = CliRunner()
    listed = cli.invoke(app, ["game", "list", "--module", "toygame.game"])
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in listed.output.splitlines() if line.count("│") == 5}
    assert listed.exit_code == 0 and rows["beauty_contest"] == ["p-beauty contest", "agents, rounds", "no"]
    assert rows["mmg"][0] == "Murder mystery" and rows["mmg"][2] == "yes" and rows["wis"][2] == "no"
    ok = cli.invoke(app, ["game", "play", "beauty_contest", "--module", "toygame.game", "--agents", "plain,plain",
                          "--set", "rounds=2", "--out", str(tmp_path / "cli")])
    assert ok.exit_code == 0, ok.output
    res = json.loads((tmp_path / "cli" / "result.json").read_text())
    assert res["rounds"] == 2 and res["llm"]["calls"] == 4
    bad = cli.invoke(app, ["game", "play", "beauty_contest", "--agents", "plain,plain", "--set", "colour=red",
                           "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 2 and "beauty_contest: no parameter colour; its parameters: agents, rounds" in bad.output
    assert "Traceback" not in bad.output and not (tmp_path / "bad").exists()
    nope = cli.invoke(app, ["game", "play", "nope", "--out", str(tmp_path / "nope")])
    assert nope.exit_code == 2 and "no game 'nope'" in nope.output


def test_nothing_outside_its_folder_names_the_toy_game():
    """The registry is the only way in: no code or configuration file outside examples/toygame_repo/ names
    the game or imports it (documentation may point at it as the example; test modules, ``test_*.py``,
    may play it as a fixture: they are users of the game, not edits that adding it needed)."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    if not tracked:   # not a git checkout: walk the tree
        tracked = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py") if ".venv" not in p.parts]
    mine = {"tests/test_toy_game.py"}
    named = [f for f in tracked if not f.startswith("examples/toygame_repo/") and f not in mine
             and not Path(f).name.startswith("test_")
             and f.endswith((".py", ".toml", ".cfg", ".ini"))
             and (ROOT / f).is_file() and re.search(r"beauty_contest|toygame", (ROOT / f).read_text(errors="ignore"))]
    assert named == []


def test_the_runner_plays_the_graph_with_the_collector_thresholds_raised(toy, tmp_path):
    """The one runner plays every game under mas_agents.gc_tuning.fewer_collections."""
    import gc

    from mas_agents.gc_tuning import YOUNG_THRESHOLD

    seen = []

    class Recording(GuessChat):
        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            seen.append(gc.get_threshold()[0])
            return super()._generate(messages, stop, run_manager, **kwargs)

    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        run("beauty_contest", tmp_path / "bc", model=Recording(), agents=["plain", "plain"], rounds=1)
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*before)
    assert len(seen) == 2 and set(seen) == {YOUNG_THRESHOLD}


def _env(*paths: Path) -> dict:
    """The environment with ``paths`` (and any PYTHONPATH already set) on ``PYTHONPATH``."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, paths), os.environ.get("PYTHONPATH", "")])}


def test_the_example_repository_s_own_tests_pass_on_the_packaged_kit():
    """``pytest`` in the example's folder, as its own repository runs it (its own ``pyproject.toml``,
    none of this checkout's conftest): its game passes :func:`mas_agents.game.conformance_kit.check_game`
    and the kit finds its tampered result and move."""
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=EXAMPLE,
                         env=_env(ROOT), capture_output=True, text=True, timeout=900)
    assert res.returncode == 0 and re.search(r"\b3 passed", res.stdout), res.stdout[-3000:] + res.stderr[-2000:]


def test_the_example_s_entry_point_registers_it_with_no_module_option(tmp_path):
    """The ``mas_agents.games`` entry point of the example's ``pyproject.toml``, written as the
    ``.dist-info`` folder an install leaves: the registry lists the game with no ``--module`` and no import of it."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    [(name, module)] = project["entry-points"]["mas_agents.games"].items()
    assert (name, module) == ("beauty_contest", "toygame.game")
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    (info / "entry_points.txt").write_text(f"[mas_agents.games]\n{name} = {module}\n")
    code = "from mas_agents.game import contract as g; print(g.kinds())"
    res = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=_env(ROOT, EXAMPLE, site),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and res.stdout.split("\n")[0] == "['mmg', 'wis', 'magic', 'beauty_contest']", \
        res.stdout + res.stderr[-2000:]
    without = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=_env(ROOT, EXAMPLE),
                             capture_output=True, text=True, timeout=300)
    assert without.stdout.split("\n")[0] == "['mmg', 'wis', 'magic']", without.stdout + without.stderr[-2000:]
