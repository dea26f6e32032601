"""Paths of ``mas serve``: every path the web app is given is resolved with :func:`confine` first
(symbolic links are followed, and anything that is not ``--runs`` or inside it is refused), and a
path no file can have is refused before any file system call (:func:`check_path`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

class OutsideRuns(PermissionError):
    """A path that resolves outside ``--runs`` (through ``..``, an absolute path or a symlink)."""


class BadPath(ValueError):
    """A path no file can have (a NUL byte, a name over 255 bytes, over 4096 bytes in all): the
    web app answers 400 without asking the file system."""


#: Longest file name and path Linux accepts (NAME_MAX, PATH_MAX).
NAME_MAX, PATH_MAX = 255, 4096


def recorded_run(root: Path, path: Any) -> Path | None:
    """The resolved run directory that a record names (an evaluation's ``config.json`` ``run``:
    the game it evaluated), if it is a folder inside ``root`` (``--runs``, resolved), else None.

    A relative path is the runner's, from its working directory: tried from this server's, then
    each tail of it under ``root`` (``runs/sin`` recorded in the folder that holds ``--runs``)."""
    if not path:
        return None
    root = Path(root).resolve()
    p = Path(str(path))
    tries = [p] if p.is_absolute() else [Path.cwd() / p] + [root.joinpath(*p.parts[i:]) for i in range(len(p.parts))]
    for t in tries:
        try:
            real = t.resolve()
        except (OSError, RuntimeError):
            continue
        if root in real.parents and real.is_dir():
            return real
    return None


def check_path(rel: str) -> None:
    """Raise :class:`BadPath` for a path no file can have (before any file system call, which
    would fail with ``ValueError: embedded null byte`` or ``OSError: File name too long``)."""
    text = str(rel)
    if "\x00" in text:
        raise BadPath("The address holds a NUL byte (%00); no file name can.")
    raw = text.encode("utf-8", "surrogateescape")
    if len(raw) > PATH_MAX:
        raise BadPath(f"The path in the address is {len(raw)} bytes long; a path has at most {PATH_MAX}.")
    for seg in text.split("/"):
        n = len(seg.encode("utf-8", "surrogateescape"))
        if n > NAME_MAX:
            raise BadPath(f"A part of the path in the address is {n} bytes long; a file name has at most {NAME_MAX}.")


def confine(root: Path, rel: str | os.PathLike[str]) -> Path:
    """``root / rel`` with symlinks resolved, if it is ``root`` or inside it.

    Args:
        root: the ``--runs`` directory (resolved here too).
        rel: a path relative to ``root`` as the URL gives it (may hold ``..``, start with ``/``).

    Raises:
        OutsideRuns: the resolved path is outside ``root`` (the web app answers 403).
        BadPath: no file can have this path (the web app answers 400).
    """
    check_path(str(rel))
    base = Path(root).resolve()
    target = (base / str(rel).lstrip("/")).resolve() if str(rel).strip("/") else base
    if target != base and base not in target.parents:
        raise OutsideRuns(f"{rel!r} is outside the runs directory")
    if str(rel).startswith("/") and str(rel).strip("/"):
        # an absolute path names a place, not a run under --runs: refused even if it lands inside
        raise OutsideRuns(f"{rel!r} is an absolute path; give a path under the runs directory")
    return target


def relpath(root: Path, path: Path) -> str:
    """``path`` relative to ``root`` in URL form (``a/b``; ``""`` for the root itself)."""
    rel = Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    return "" if rel == "." else rel



def read_json(path: Path) -> Any:
    """The JSON value in ``path``, or None when it is missing or not JSON (a file being written)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
