"""The built wheel carries every file the code reads at run time (issue 47 item 6): built from a
copy of the source, installed into a fresh virtualenv (not the editable install, the checkout not
on ``sys.path``), where ``mas reproduce --help`` and a ``mas reproduce magic --limit 1`` run on a
fake OpenAI-compatible model (tests/stub_openai.py answering as tests.fakes.magic_player) work and
the report holds the EMNLP Table 1 numbers read from the installed package.

Nothing is downloaded: the wheel is built with the checkout's .venv setuptools
(``--no-build-isolation --no-index``), installed with ``--no-deps --no-index``, and the fresh
environment reaches the dependencies through a ``.pth`` line naming the .venv's site-packages
(whose own ``.pth`` files, the editable install's among them, are therefore not run)."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.stub_openai import StubServer

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("mas_agents", "graphs", "planners", "memory", "eval")
pytestmark = pytest.mark.integration


def _data_files() -> set[str]:
    """Every file under the packages that is not Python source (the files the wheel must carry)."""
    out = set()
    for pkg in PACKAGES:
        for p in (ROOT / pkg).rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".py", ".pyc"):
                out.add(p.relative_to(ROOT).as_posix())
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """``{"venv": <fresh venv>, "wheel": <path>, "names": <wheel members>}``."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, src / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    dist = tmp / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "-q", "-w", str(dist), str(src)], check=True, cwd=tmp)
    wheel = next(dist.glob("mas_agents-*.whl"))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], check=True, cwd=tmp)
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site) / "zz_checkout_venv_deps.pth").write_text("\n".join(sorted(deps)) + "\n", encoding="utf-8")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    return {"venv": venv, "site": Path(site), "wheel": wheel, "names": names, "tmp": tmp}


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(ROOT)))
    return env


def test_the_wheel_holds_every_data_file_of_the_packages(installed):
    files = _data_files()
    assert {f for f in files if f.startswith("eval/reproduce/papers/")} >= {
        "eval/reproduce/papers/magic_table1.csv", "eval/reproduce/papers/player_star_released_logs.csv",
        "eval/reproduce/papers/player_star_protocol_differences.md"}
    assert files - installed["names"] == set()


def test_the_installed_package_is_not_the_checkout(installed):
    out = subprocess.run([str(installed["venv"] / "bin" / "python"), "-c",
                          "import eval.reproduce.common as c, mas_agents, sys; "
                          "print(c.PAPERS_DIR); print(mas_agents.__file__); print(sys.path)"],
                         check=True, capture_output=True, text=True, cwd=installed["tmp"], env=_env()).stdout
    papers, init, path = out.splitlines()
    assert Path(papers) == installed["site"] / "eval" / "reproduce" / "papers"
    assert Path(init).is_relative_to(installed["site"])
    # nothing of the checkout on sys.path but its .venv's site-packages (the dependencies)
    entries = [Path(e).resolve() for e in ast.literal_eval(path) if e]
    assert [e for e in entries if e.is_relative_to(ROOT) and not e.is_relative_to(ROOT / ".venv")] == []
    assert (Path(papers) / "magic_table1.csv").is_file()


def test_a_fake_model_magic_cell_runs_from_the_wheel(installed, real_data_root):
    """``mas reproduce --help``, then ``mas reproduce magic --limit 1`` against the stub server
    answering as the tests' MAgIC fake: the run finishes and its report holds the EMNLP Table 1 row
    of GPT-4 read from the wheel."""
    from tests.fakes import magic_player

    res = subprocess.run([str(installed["venv"] / "bin" / "mas"), "reproduce", "--help"], capture_output=True,
                         text=True, cwd=installed["tmp"], env=_env(), timeout=300)
    assert res.returncode == 0, res.stderr
    assert "magic | player-star | wis | all" in res.stdout

    rule = magic_player()

    class _Msg:
        def __init__(self, content: str) -> None:
            self.content = content

    def reply(body: dict) -> str:
        return rule([_Msg(str(m.get("content"))) for m in body["messages"]])

    out = installed["tmp"] / "run"
    with StubServer(reply=reply) as stub:
        env = {**_env(), "OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "not-used"}
        res = subprocess.run([str(installed["venv"] / "bin" / "mas"), "reproduce", "magic", "--model", "openai:stub",
                              "--limit", "1", "--structured", "prompt", "--data-dir", str(real_data_root), "--out", str(out)],
                             capture_output=True, text=True, cwd=installed["tmp"], env=env, timeout=900)
        served = len(stub.requests)
    assert res.returncode == 0, res.stderr[-2000:]
    assert served > 0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "| GPT-4 (paper) | 53.3 | 83.8 | 32.3 | 75.0 | 55.0 | 47.6 | 47.6 | 69.0 |" in report
    assert "Average improvement (printed)" in report
