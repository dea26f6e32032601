"""List every name imported from a module that does not define it (issue 58 item 3, "no re-export hubs").

Callers import a name from the module that defines it; only the documented public faces hand
names on (ARCHITECTURE.md, "One home per name"):

* ``mas_agents/__init__.py`` (``import mas_agents as mas``, docs/api.md);
* a package ``__init__`` whose ``__all__`` lists the name as its documented API
  (``mas_agents.memory``, the planner packages).

The script reads the source with :mod:`ast` and imports nothing. It maps every module of the
package (``mas_agents/`` and the linked folders ``eval/``, ``graphs/``, ``planners/``, ``memory/``
as ``mas_agents.eval`` and so on) to the names it *defines* at module level (``def``, ``class``,
assignments, ``for``/``with`` targets, ``import m`` of a module, in any ``if``/``try`` block) and
the names it only *imports* (``from x import name``). It then reads every ``from X import name``
in the project (the package, ``tests/``, ``scripts/``, ``benchmarks/``, ``examples/``, ``docs/``,
at any depth of the file) and reports each one where X is a module of the package, ``name`` is
not a submodule of X (``from mas_agents import llm`` imports a module, not a re-export), and X
does not define ``name``.

Usage::

    python scripts/reexports.py            # findings outside the public faces, hubs, totals
    python scripts/reexports.py --all      # also the imports through the public faces

Output: one line ``importer:line  hub  name`` per finding, then the hubs (modules that import
names only to hand them on: the name is in the module's ``__all__``, or the module never uses it),
then a total line. Exit code: 0 when no finding is outside the public faces, 1 otherwise,
2 on a file that does not parse (named with its line).
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "mas_agents"
#: folders of the repository that hold importers besides the package itself
IMPORTER_DIRS = ("tests", "scripts", "benchmarks", "examples", "docs")
#: modules whose every name is public (the package's face, docs/api.md)
FACE_ALL = {PACKAGE}


@dataclass
class Module:
    """One module of the package, as its source says."""

    name: str
    path: Path
    is_package: bool
    defines: set[str] = field(default_factory=set)
    #: name -> the module it is imported from (``from X import name``)
    imports: dict[str, str] = field(default_factory=dict)
    #: ``__all__`` when it is a literal list/tuple of strings, else None
    all_names: set[str] | None = None
    #: names read anywhere in the module (``Name`` loads, string annotations)
    used: set[str] = field(default_factory=set)
    #: ``from X import name`` statements: (line, X, name)
    from_imports: list[tuple] = field(default_factory=list)


def package_files(root: Path = ROOT) -> dict[str, tuple[Path, bool]]:
    """Every module of the package: dotted name -> (file, is a package ``__init__``).

    Walks ``mas_agents/`` following its links (``eval``, ``graphs``, ``planners``, ``memory``),
    so ``mas_agents/game/contract.py`` is ``mas_agents.game.contract``.
    """
    out: dict[str, tuple[Path, bool]] = {}
    base = root / PACKAGE

    def walk(folder: Path, dotted: str) -> None:
        init = folder / "__init__.py"
        if not init.is_file():
            return
        out[dotted] = (init, True)
        for child in sorted(folder.iterdir()):
            if child.name.startswith(".") or child.name in ("__init__.py", "__pycache__"):
                continue
            if child.is_dir():
                walk(child, f"{dotted}.{child.name}")
            elif child.suffix == ".py":
                out[f"{dotted}.{child.stem}"] = (child, False)

    walk(base, PACKAGE)
    return out


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str | None:
    """The absolute module name of ``from <node.module> import ...`` inside module ``importer``."""
    if not node.level:
        return node.module
    parts = importer.split(".")
    if not is_package:
        parts = parts[:-1]
    if node.level > 1:
        parts = parts[: len(parts) - (node.level - 1)]
    if not parts:
        return None
    return ".".join(parts + ([node.module] if node.module else []))


def _targets(node: ast.AST) -> set[str]:
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            out.add(sub.id)
    return out


def _top_level(body: list[ast.stmt]):
    """Statements at module level, entering ``if``/``try``/``with``/``for`` blocks (not functions)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With)):
            yield from _top_level(stmt.body)
            yield from _top_level(getattr(stmt, "orelse", []))
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            yield from _top_level(stmt.body)
            for handler in stmt.handlers:
                yield from _top_level(handler.body)
            yield from _top_level(stmt.orelse)
            yield from _top_level(stmt.finalbody)


def _parse(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        print(f"error: {path}:{exc.lineno}: does not parse: {exc.msg}", file=sys.stderr)
        raise SystemExit(2) from None


def read_module(name: str, path: Path, is_package: bool) -> Module:
    """What module ``name`` defines, imports, exports and uses."""
    tree = _parse(path)
    mod = Module(name, path, is_package)
    for stmt in _top_level(tree.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            mod.defines.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                mod.defines |= _targets(target)
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and stmt.value is not None:
                try:
                    value = ast.literal_eval(stmt.value)
                    mod.all_names = {str(v) for v in value}
                except ValueError:
                    mod.all_names = None
        elif isinstance(stmt, (ast.For, ast.With)):
            for target in ([stmt.target] if isinstance(stmt, ast.For) else [i.optional_vars for i in stmt.items if i.optional_vars]):
                mod.defines |= _targets(target)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                mod.defines.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(stmt, ast.ImportFrom):
            source = _resolve(name, is_package, stmt)
            for alias in stmt.names:
                if alias.name != "*" and source != "__future__":
                    mod.imports[alias.asname or alias.name] = f"{source}.{alias.name}"
    exported = {id(n) for stmt in tree.body if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                and "__all__" in _targets(stmt) for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in exported:
            continue    # listing a name in __all__ is handing it on, not using it
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            mod.used.add(node.id)
        elif isinstance(node, ast.Attribute):
            base = node
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name):
                mod.used.add(base.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            mod.used.add(node.value)    # a string annotation "Foo", getattr(mod, "name")
    for node in ast.walk(tree):
        if isinstance(node, (ast.arg, ast.FunctionDef, ast.AsyncFunctionDef, ast.AnnAssign)):
            ann = getattr(node, "annotation", None) or getattr(node, "returns", None)
            if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
                try:
                    for sub in ast.walk(ast.parse(ann.value, mode="eval")):
                        if isinstance(sub, ast.Name):
                            mod.used.add(sub.id)
                except SyntaxError:
                    pass
    return mod


def _from_imports(tree: ast.Module, name: str, is_package: bool, modules: set[str] | frozenset[str] = frozenset()
                  ) -> list[tuple]:
    """Every name this file takes from a module: (line, module, name).

    ``from X import name``; and, for a module of ``modules`` bound to a local name (``import X``,
    ``import X as m``, ``from P import m`` where ``P.m`` is a module), ``m.name`` and
    ``setattr``/``getattr``/``delattr``/``monkeypatch.setattr(m, "name", ...)``, and
    ``monkeypatch.setattr("X.name", ...)``.
    """
    out: list[tuple] = []
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)

    def own_nodes(scope: ast.AST):
        """The nodes of ``scope`` that are not inside a nested function or class."""
        stack = list(ast.iter_child_nodes(scope))
        while stack:
            node = stack.pop()
            yield node
            if not isinstance(node, scopes):
                stack.extend(ast.iter_child_nodes(node))

    def visit(scope: ast.AST, outer: dict[str, str]) -> None:
        alias = dict(outer)
        nodes = list(own_nodes(scope))
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = scope.args
            for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                if a is not None:
                    alias.pop(a.arg, None)
        for node in nodes:
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                alias.pop(node.id, None)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                alias.pop(node.name, None)
        for node in nodes:
            if isinstance(node, ast.ImportFrom):
                source = _resolve(name, is_package, node)
                if source is None:
                    continue
                for a in node.names:
                    out.append((node.lineno, source, a.name))
                    if f"{source}.{a.name}" in modules:
                        alias[a.asname or a.name] = f"{source}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname and a.name in modules:
                        alias[a.asname] = a.name
                    elif not a.asname and a.name.split(".")[0] in modules:
                        alias[a.name.split(".")[0]] = a.name.split(".")[0]

        def module_of(expr: ast.expr) -> str | None:
            if isinstance(expr, ast.Name):
                return alias.get(expr.id)
            if isinstance(expr, ast.Attribute):
                base = module_of(expr.value)
                if base is not None and f"{base}.{expr.attr}" in modules:
                    return f"{base}.{expr.attr}"
            return None

        for node in nodes:
            if isinstance(node, ast.Attribute):
                base = module_of(node.value)
                if base is not None and f"{base}.{node.attr}" not in modules:
                    out.append((node.lineno, base, node.attr))
            elif isinstance(node, ast.Call) and node.args:
                func = node.func
                fname = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                if fname not in ("setattr", "getattr", "delattr", "hasattr"):
                    continue
                first = node.args[0]
                if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                    base = module_of(first)
                    if base is not None and f"{base}.{node.args[1].value}" not in modules:
                        out.append((node.lineno, base, node.args[1].value, fname in ("setattr", "delattr")))
                elif isinstance(first, ast.Constant) and isinstance(first.value, str) and fname in ("setattr", "delattr"):
                    head, _, attr = first.value.rpartition(".")
                    if head in modules and first.value not in modules:
                        out.append((node.lineno, head, attr, True))
        for node in nodes:
            if isinstance(node, scopes):
                visit(node, alias)

    visit(tree, {})
    return out


def importer_files(root: Path = ROOT) -> list[tuple[Path, str, bool]]:
    """Every Python file outside the package that may import from it: (file, its dotted name, is a package)."""
    out = []
    for folder in IMPORTER_DIRS:
        base = root / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            if any(part.startswith(".") or part in ("__pycache__", "site") for part in path.relative_to(root).parts):
                continue
            rel = path.relative_to(root).with_suffix("")
            parts = list(rel.parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            out.append((path, ".".join(parts), is_package))
    return out


@dataclass
class Finding:
    importer: str   #: file:line
    hub: str        #: the module the name was imported from
    name: str
    public: bool    #: through a documented public face


def public_face(hub: Module, name: str) -> bool:
    """Whether ``hub`` may hand ``name`` on: the package's face, or a package ``__init__``
    that lists ``name`` in its ``__all__``."""
    if hub.name in FACE_ALL:
        return True
    return hub.is_package and hub.all_names is not None and name in hub.all_names


def scan(root: Path = ROOT) -> tuple[list[Finding], dict[str, list[str]], dict[str, Module]]:
    """(findings, hubs: module -> names it imports only to hand on, every module by name)."""
    files = package_files(root)
    modules = {name: read_module(name, path, pkg) for name, (path, pkg) in files.items()}
    names = frozenset(modules)
    for mod in modules.values():
        mod.from_imports = _from_imports(_parse(mod.path), mod.name, mod.is_package, names)
    importers: list[tuple[str, list[tuple]]] = [
        (str(mod.path.relative_to(root) if mod.path.is_relative_to(root) else mod.path), mod.from_imports)
        for mod in modules.values()
    ]
    for path, dotted, is_package in importer_files(root):
        importers.append((str(path.relative_to(root)), _from_imports(_parse(path), dotted, is_package, names)))

    findings: list[Finding] = []
    for where, imports in importers:
        for line, source, name, *patch in imports:
            hub = modules.get(source)
            if hub is None or name == "*" or f"{source}.{name}" in modules:
                continue
            if name in hub.defines or (name.startswith("__") and name.endswith("__")):
                continue
            if patch and patch[0] and name in hub.imports and name in hub.used:
                continue    # monkeypatch.setattr(m, "f", ...) where m calls f: patched where it is looked up
            findings.append(Finding(f"{where}:{line}", source, name, public_face(hub, name)))

    hubs: dict[str, list[str]] = {}
    for mod in modules.values():
        handed = sorted(n for n in mod.imports
                        if n not in mod.defines and ((mod.all_names is not None and n in mod.all_names) or n not in mod.used))
        handed = [n for n in handed if not public_face(mod, n)]
        if handed:
            hubs[mod.name] = handed
    return findings, hubs, modules


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="also list the imports through the documented public faces")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this checkout)")
    args = parser.parse_args(argv)
    findings, hubs, _ = scan(args.root.resolve())
    outside = [f for f in findings if not f.public]
    for f in sorted(findings if args.all else outside, key=lambda f: (f.hub, f.name, f.importer)):
        print(f"{f.importer}  {f.hub}  {f.name}{'  (public face)' if f.public else ''}")
    for hub, names in sorted(hubs.items()):
        print(f"hub {hub}: {len(names)} name(s) imported only to hand on: {', '.join(names)}")
    hub_names = {(f.hub, f.name) for f in outside}
    print(f"total: {len(outside)} import(s) of {len(hub_names)} name(s) from {len({h for h, _ in hub_names})} module(s) "
          f"that do not define them, outside the public faces; {len(findings) - len(outside)} through the public faces; "
          f"{len(hubs)} hub module(s) handing on {sum(map(len, hubs.values()))} name(s)")
    return 1 if outside else 0


if __name__ == "__main__":
    raise SystemExit(main())
