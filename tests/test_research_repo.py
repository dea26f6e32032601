"""mas-agents installed into a research repository that has its own ``eval``, ``memory``, ``graphs``
and ``planners`` packages (issue 49 item 3): the repository's folders keep their names, and the
installed package answers to one import name, ``mas_agents`` (``mas_agents.eval`` and so on: the
symlinks ``mas_agents/{eval,graphs,planners,memory} -> ../X``, ARCHITECTURE.md "One import name").

At 531ad79 the install put five top-level names on ``sys.path``: in such a repository
``from eval import games`` found the researcher's package, and a plain ``eval/`` folder of theirs
silently loaded ours. Here a temporary repository holds packages of those four names (its ``eval``
also holds a game of its own, a copy of ``examples/toygame_repo/toygame`` importing ``eval.toygame``), and from
it, with the checkout's installed ``mas`` (editable install, the checkout not on ``sys.path``):

* a Python script imports its own packages and plays Who is Spy through ``import mas_agents as
  mas`` on the tests' stub server;
* ``mas game play beauty_contest --module eval.toygame.game`` plays the repository's own game.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.stub_openai import StubServer

ROOT = Path(__file__).resolve().parents[1]
ASK = re.compile(r"Name a whole number from 0 to (\d+)\.")


@pytest.fixture(scope="module")
def stub():
    """The stub server answering Who is Spy as tests.fakes.wis_player and the toy game's guess
    request with ``Contribution: 0``; any other prompt is an error (HTTP 500 through the stub)."""
    from tests.fakes import wis_player

    wis = wis_player()

    class _Msg:
        def __init__(self, content: str) -> None:
            self.content = content

    def reply(body: dict) -> str:
        msgs = [_Msg(str(m.get("content"))) for m in body["messages"]]
        text = "\n".join(m.content for m in msgs)
        if "Who is Spy" in msgs[0].content:
            return wis(msgs)
        if ASK.search(text):
            return "Contribution: 0"
        raise AssertionError(f"the research-repo stub does not know this prompt: {text[-200:]!r}")

    with StubServer(reply=reply) as server:
        yield server


@pytest.fixture(scope="module")
def research(tmp_path_factory) -> Path:
    """A research repository: packages ``eval`` (with ``metrics`` and a game, ``eval.toygame``),
    ``memory``, ``graphs`` and ``planners`` of its own, and a script ``play.py``."""
    repo = tmp_path_factory.mktemp("research")
    for pkg in ("eval", "memory", "graphs", "planners"):
        (repo / pkg).mkdir()
        (repo / pkg / "__init__.py").write_text(f'WHOSE = "research {pkg}"\n', encoding="utf-8")
    (repo / "eval" / "metrics.py").write_text('def accuracy(xs):\n    return sum(xs) / len(xs)\n', encoding="utf-8")
    game = repo / "eval" / "toygame"
    game.mkdir()
    for f in ("__init__.py", "game.py", "graph.py", "rules.py"):
        text = (ROOT / "examples" / "toygame_repo" / "toygame" / f).read_text(encoding="utf-8")
        (game / f).write_text(text.replace("from toygame", "from eval.toygame"), encoding="utf-8")
    (repo / "play.py").write_text(
        "import json, sys\n"
        "import eval, eval.metrics, memory, graphs, planners\n"
        "import mas_agents as mas, mas_agents.eval\n"
        "mas.servers(structured='prompt')   # the stub answers no format probe\n"
        "me = mas.agent('plain+pgm', model='openai:stub')\n"
        "res = mas.play('wis', agents=[me, 'plain', 'plain', 'plain'], pair={'civilian': 'tea', 'spy': 'coffee'},\n"
        "               model='openai:stub', out='runs/wis')\n"
        "print(json.dumps({'whose': [m.WHOSE for m in (eval, memory, graphs, planners)],\n"
        "                  'accuracy': eval.metrics.accuracy([1, 0]), 'mas_eval': mas.eval.__name__,\n"
        "                  'winner': res['outcome']['winner'], 'tops': sorted({m.split('.')[0] for m in sys.modules\n"
        "                  if m.split('.')[0] in ('eval', 'memory', 'graphs', 'planners')}),\n"
        "                  'files': sorted({m.__file__ for n, m in sys.modules.items()\n"
        "                  if n.split('.')[0] in ('eval', 'memory', 'graphs', 'planners')})}))\n",
        encoding="utf-8")
    return repo


def _env(stub) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update({"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "not-used"})
    return env


def test_a_script_of_the_research_repository_uses_its_own_packages_and_ours(research, stub):
    res = subprocess.run([sys.executable, "play.py"], cwd=research, env=_env(stub), capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["whose"] == ["research eval", "research memory", "research graphs", "research planners"]
    assert got["accuracy"] == 0.5 and got["mas_eval"] == "mas_agents.eval"
    assert got["winner"] in ("civilians", "spy")
    # every module named eval/memory/graphs/planners in the process is the research repository's
    assert got["files"] and all(Path(f).is_relative_to(research) for f in got["files"]), got["files"]
    cfg = json.loads((research / "runs" / "wis" / "config.json").read_text())
    assert cfg["seated"] == {"Player 1": "plain+pgm@openai:stub"}


def test_mas_game_play_runs_a_game_of_the_research_repositorys_own_eval_package(research, stub):
    mas = shutil.which("mas", path=str(Path(sys.executable).parent))
    assert mas, "the checkout's virtualenv has no mas command"
    out = research / "runs" / "toy"
    res = subprocess.run([mas, "game", "play", "beauty_contest", "--module", "eval.toygame.game",
                          "--agents", "plain,plain", "--set", "rounds=1", "--model", "openai:stub",
                          "--structured", "prompt", "--out", str(out)],
                         cwd=research, env=_env(stub), capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    result = json.loads((out / "result.json").read_text())
    assert result["rounds"] == 1 and result["llm"]["calls"] == 2
    assert json.loads((out / "config.json").read_text())["kind"] == "beauty_contest"


def test_no_module_of_the_project_imports_a_top_level_eval_graphs_planners_or_memory():
    """One import name: every import of our own packages says ``mas_agents.``; a top-level
    ``import eval``/``from graphs ...`` would load the research repository's package instead."""
    bad = re.compile(r"^\s*(from|import)\s+(eval|graphs|planners|memory)(\.|\s|$)", re.M)
    files = {p.resolve() for folder in ("mas_agents", "eval", "graphs", "planners", "memory", "tests", "scripts",
                                        "benchmarks", "examples")
             for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts}
    assert len(files) > 300
    found = [f"{p.relative_to(ROOT)}: {m.group(0).strip()}" for p in sorted(files)
             for m in bad.finditer(p.read_text(encoding="utf-8"))]
    assert found == []


@pytest.mark.parametrize("name", ["eval", "graphs", "planners", "memory", "eval.wellplay.run"])
def test_a_checkouts_folder_imported_by_its_own_name_stops_with_one_line(name):
    """One path per module (issue 58): from the repository root, ``import eval`` (or ``graphs``,
    ``planners``, ``memory``) would load a second copy of our modules beside ``mas_agents.eval``
    (two game registries); it exits 1 with one line naming the ``mas_agents.`` path instead."""
    top = name.split(".")[0]
    res = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 1 and len(lines) == 1, res.stderr
    assert f"import mas_agents.{top} instead" in lines[0] and "Traceback" not in res.stderr
    ok = subprocess.run([sys.executable, "-c", f"import mas_agents.{name}"], cwd=ROOT, capture_output=True,
                        text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr[-2000:]
