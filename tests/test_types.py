"""The typed public face stays typed (issue 58 item 4): mypy, with the project's ``[tool.mypy]``
configuration, finds 0 errors in the public API, the game and block contracts and the run config;
and no signature of ``import mas_agents as mas`` (:mod:`mas_agents.api`, :mod:`mas_agents.graph_nodes`)
takes or returns a bare ``Any``.

"Bare" is ``Any`` as the whole annotation or as one member of a top-level union (``Any | None``,
``Optional[Any]``), also through a type alias of the module (``Model = "str | Any"``). ``Any``
inside a container (``dict[str, Any]``, a JSON document) is not bare.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: What the checker must cover (issue 58 item 4): the public API, the game contract, the block
#: contract and the run config, named through the one import name (mas_agents.*).
COVERED = {
    "mas_agents/__init__.py", "mas_agents/api.py", "mas_agents/graph_nodes.py",   # public API
    "mas_agents/game/contract.py", "mas_agents/game/view.py", "mas_agents/game/conformance.py",   # game contract
    "mas_agents/game/experiments.py",   # experiment contract
    "mas_agents/planners/base.py",   # block contract
    "mas_agents/game/run_config.py",   # run config
}

#: The modules whose public functions and classes are the signatures of ``mas.*``.
PUBLIC_FACE = ("mas_agents/api.py", "mas_agents/graph_nodes.py")


def _mypy_config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]


def test_mypy_config_covers_the_public_api_and_the_contracts_strictly():
    cfg = _mypy_config()
    files = set(cfg["files"])
    assert COVERED <= files, f"[tool.mypy] files no longer cover {sorted(COVERED - files)}"
    for f in files:
        assert (ROOT / f).is_file(), f"[tool.mypy] files: {f} does not exist"
    assert cfg.get("strict") is True
    assert cfg.get("follow_imports") == "silent"
    assert "ignore_missing_imports" not in cfg, "name the untyped third-party packages in an override instead"


def test_mypy_finds_no_error():
    # no skip when mypy is missing: it is in the dev extra and the lock (scripts/setup.sh installs it)
    proc = subprocess.run([sys.executable, "-m", "mypy"], capture_output=True, text=True, cwd=ROOT, timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"mypy (pyproject.toml [tool.mypy]) reports:\n{out[-6000:]}"
    m = re.search(r"Success: no issues found in (\d+) source files", out)
    assert m, out
    assert int(m.group(1)) == len(_mypy_config()["files"])


# ------------------------------------------------------------------------------ bare Any
def _aliases(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level type aliases (``X: TypeAlias = "..."``, ``X = a | b``) -> their expression."""
    out: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out[node.target.id] = node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = node.value
    return out


def _is_any(expr: ast.expr) -> bool:
    return (isinstance(expr, ast.Name) and expr.id == "Any") or (isinstance(expr, ast.Attribute) and expr.attr == "Any")


def _bare_any(expr: ast.expr | None, aliases: dict[str, ast.expr], seen: frozenset[str] = frozenset()) -> bool:
    """``expr`` is ``Any`` or a union with ``Any`` as a member (through string annotations and aliases)."""
    if expr is None:
        return False
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return _bare_any(ast.parse(expr.value, mode="eval").body, aliases, seen)
    if _is_any(expr):
        return True
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
        return _bare_any(expr.left, aliases, seen) or _bare_any(expr.right, aliases, seen)
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) and expr.value.id in ("Optional", "Union"):
        members = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
        return any(_bare_any(m, aliases, seen) for m in members)
    if isinstance(expr, ast.Name) and expr.id in aliases and expr.id not in seen:
        return _bare_any(aliases[expr.id], aliases, seen | {expr.id})
    return False


def bare_any_in(source: str) -> list[str]:
    """Every parameter, return, field and property of the public (not ``_``-named) top-level
    functions and classes of ``source`` that is unannotated or annotated with a bare ``Any``."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    found: list[str] = []

    def check_def(fn: ast.FunctionDef, where: str) -> None:
        a = fn.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []),
                  *([a.kwarg] if a.kwarg else [])]
        for p in params:
            if p.arg in ("self", "cls"):
                continue
            if p.annotation is None or _bare_any(p.annotation, aliases):
                found.append(f"{where}({p.arg})")
        if fn.returns is None or _bare_any(fn.returns, aliases):
            found.append(f"{where} -> return")

    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            check_def(node, node.name)
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    if _bare_any(item.annotation, aliases):
                        found.append(f"{node.name}.{item.target.id}")
                elif isinstance(item, ast.FunctionDef) and (not item.name.startswith("_") or item.name == "__init__"):
                    check_def(item, f"{node.name}.{item.name}")
    return found


@pytest.mark.parametrize("path", PUBLIC_FACE)
def test_public_signatures_carry_no_bare_any(path):
    assert bare_any_in((ROOT / path).read_text()) == []


def test_the_bare_any_check_finds_what_it_forbids():
    src = '''
from typing import Any, Optional, TypeAlias
Model: TypeAlias = "str | Any"
def f(a: Any, b: "Any | None", c: Optional[Any], d: Model, e: dict[str, Any], *args: int, **kw: Any) -> Any: ...
def g(x) -> "list[Any]": ...
def _private(a: Any) -> Any: ...
class C:
    x: Any
    y: dict[str, Any]
    def m(self, v: Any = None) -> int: ...
    def _p(self, v: Any) -> Any: ...
'''
    assert bare_any_in(src) == ["f(a)", "f(b)", "f(c)", "f(d)", "f(kw)", "f -> return", "g(x)", "C.x", "C.m(v)"]
