"""No re-export hubs (issue 58 item 3): every name is imported from the module that defines it,
except through the documented public faces (``mas_agents/__init__.py``, a package ``__init__``
whose ``__all__`` lists the name). ``scripts/reexports.py`` measures it; ARCHITECTURE.md states
the rule."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "reexports.py"


def _run(root: Path | None = None) -> subprocess.CompletedProcess:
    args = [sys.executable, str(SCRIPT)] + (["--root", str(root)] if root else [])
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def test_no_name_is_imported_through_a_module_that_does_not_define_it():
    r = _run()
    assert r.returncode == 0, r.stdout + r.stderr
    total = r.stdout.strip().splitlines()[-1]
    assert total.startswith("total: 0 import(s) of 0 name(s)"), r.stdout


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def test_the_script_finds_hubs_and_spares_the_public_faces(tmp_path):
    _write(tmp_path, {
        "mas_agents/__init__.py": "from mas_agents.core import f\n__all__ = ['f']\n",
        "mas_agents/core.py": "def f():\n    return 1\n\ndef g():\n    return 2\n",
        "mas_agents/hub.py": "from mas_agents.core import f, g\n\ndef h():\n    return g()\n",
        "mas_agents/pkg/__init__.py": "from mas_agents.core import f, g\n__all__ = ['f']\n",
        "tests/test_x.py": """\
            from mas_agents import f, core, pkg
            from mas_agents.hub import f as hub_f
            from mas_agents.pkg import f as pkg_f, g as pkg_g
            from mas_agents import hub

            def test(monkeypatch):
                monkeypatch.setattr(hub, "g", lambda: 3)   # where h() looks g up: allowed
                monkeypatch.setattr(hub, "f", lambda: 3)   # hub never uses f: a hub
                return hub.f, core.f, pkg.f
            """,
    })
    r = _run(tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    found = sorted(line.split()[0] + " " + line.split()[2] for line in r.stdout.splitlines()
                   if line.startswith("tests/"))
    assert found == ["tests/test_x.py:2 f", "tests/test_x.py:3 g", "tests/test_x.py:8 f", "tests/test_x.py:9 f"]
    assert "hub mas_agents.hub: 1 name(s) imported only to hand on: f" in r.stdout
    assert "hub mas_agents.pkg: 1 name(s) imported only to hand on: g" in r.stdout
    assert r.stdout.strip().splitlines()[-1].startswith("total: 4 import(s) of 2 name(s) from 2 module(s)")
    assert "; 3 through the public faces;" in r.stdout   # from mas_agents import f; pkg.f; pkg_f


def test_a_file_that_does_not_parse_is_named(tmp_path):
    _write(tmp_path, {"mas_agents/__init__.py": "", "mas_agents/bad.py": "def f(:\n"})
    r = _run(tmp_path)
    assert r.returncode == 2 and "mas_agents/bad.py:1: does not parse" in r.stderr, r.stderr
