"""Locating the evaluation data sets on disk.

The data (WellPlay, Who-is-Spy, MAgIC) is not shipped with the repository: WellPlay has no
licence (see ``wellplay/README.md`` in the data folder, section "License"). Every loader takes
the datasets ROOT, i.e. the folder that contains ``wellplay/``, ``whoisspy/`` and ``magic/``.

**What a loader read** (issue 50, "data files checked by hash"): every loaded data object (a
WellPlay :class:`~mas_agents.graphs.mmg.dataset.Script`, a MAgIC setting, a Who-is-Spy
:class:`~mas_agents.graphs.wis.dataset.Pair`) carries ``data_files``: ``{path relative to the
datasets root (posix): SHA-256 hex of the bytes read}``. The one runner of single games
(:func:`mas_agents.game.runner.run`) and the WellPlay evaluation write the union of their
inputs' (:func:`data_files`) into ``config.json``; ``mas rerun`` compares them with the files
under the datasets root before it replays anything (:func:`changed_files`). A run of many cells
(a comparison, a tournament, ``mas magic run``, an ablation, ``mas reproduce``) records the union
of its cells' files in its own ``config.json`` (:func:`merge_data_files`, :func:`cells_data_files`).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Mapping

from mas_agents.rundir import CONFIG_FILE

__all__ = ["DataError", "ENV_VAR", "resolve_data_dir", "sha256_hex", "note_file", "data_files", "changed_files",
           "merge_data_files", "cells_data_files"]

#: Environment variable that points at the datasets root.
ENV_VAR = "MAS_DATA_DIR"

#: Repository root: the parent of the ``eval`` package directory.
_REPO_ROOT = Path(__file__).resolve().parents[2]   # mas_agents/game/data.py -> the repository

_HOW_TO = (
    "The WellPlay data comes from upstream github.com/alickzhu/PLAYER (it has no licence, so it "
    "is not shipped with this repository). Point at the folder that contains wellplay/, "
    "whoisspy/ and magic/ with --data-dir PATH or the environment variable "
    f"{ENV_VAR}=PATH."
)


class DataError(Exception):
    """A data file or folder is missing or cannot be parsed.

    The message always names the offending path (and the 1-based line, for file contents).
    """


def _default_candidates() -> list[Path]:
    """Fallback locations, in search order: ``<repo>/../shared/datasets``, ``<cwd>/../shared/datasets``."""
    return [_REPO_ROOT.parent / "shared" / "datasets", Path.cwd().parent / "shared" / "datasets"]


def resolve_data_dir(cli_value: str | Path | None = None) -> Path:
    """Return the datasets root as an absolute path.

    Search order: ``cli_value`` (the ``--data-dir`` option), then ``$MAS_DATA_DIR``, then
    ``<repo root>/../shared/datasets`` and ``<cwd>/../shared/datasets``; the first existing
    directory wins.

    Raises:
        DataError: if ``cli_value`` or ``$MAS_DATA_DIR`` is given but is not a directory (named
            in the message; there is no silent fallback), or if none of the fallback locations
            exists (the message lists every place searched, the upstream source and how to
            point at the data).
    """
    if cli_value is not None and str(cli_value) != "":
        path = Path(cli_value).expanduser()
        if not path.is_dir():
            raise DataError(f"--data-dir {str(path)!r} does not exist or is not a directory. {_HOW_TO}")
        return path.resolve()
    env = os.environ.get(ENV_VAR, "")
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise DataError(f"{ENV_VAR}={env!r} does not exist or is not a directory. {_HOW_TO}")
        return path.resolve()
    candidates = _default_candidates()
    for path in candidates:
        if path.is_dir():
            return path.resolve()
    looked = ", ".join(str(p) for p in candidates)
    raise DataError(
        f"Data directory not found: no --data-dir given, {ENV_VAR} is not set, and none of "
        f"these exists: {looked}. {_HOW_TO}"
    )


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` as 64 lower-case hex digits (what ``config.json``'s ``data_files`` holds)."""
    return hashlib.sha256(data).hexdigest()


def note_file(files: dict[str, str], path: Path, root: Path, data: bytes) -> None:
    """Note in ``files`` that ``data`` (the bytes a loader read) came from ``path``: under its path
    relative to the datasets ``root`` (posix, e.g. ``"magic/settings/prisoner/0.json"``); a path
    outside ``root`` is noted as given."""
    path, root = Path(path), Path(root)
    try:     # not resolved: a datasets root of symbolic links keeps its own relative paths
        key = path.relative_to(root).as_posix()
    except ValueError:
        key = path.as_posix()
    files[key] = sha256_hex(data)


def data_files(*values: Any) -> dict[str, str]:
    """The data files the ``values`` were loaded from: the union of their ``data_files``
    (``{relative path: sha256}``), looking into lists, tuples and dict values, sorted by path.
    Values that were not loaded from a file (a pair given on the command line, numbers, ...)
    add nothing; ``{}`` when none was."""
    out: dict[str, str] = {}

    def walk(v: Any, depth: int) -> None:
        files = getattr(v, "data_files", None)
        if isinstance(files, Mapping):
            out.update({str(k): str(h) for k, h in files.items()})
        if depth < 3 and isinstance(v, (list, tuple)):
            for x in v:
                walk(x, depth + 1)
        elif depth < 3 and isinstance(v, Mapping) and not isinstance(files, Mapping):
            for x in v.values():
                walk(x, depth + 1)
    for v in values:
        walk(v, 0)
    return dict(sorted(out.items()))


def merge_data_files(*records: Mapping[str, str] | None) -> dict[str, str]:
    """The union of ``data_files`` records (``{relative path: sha256}``; None adds nothing),
    sorted by path: what an experiment's ``config.json`` holds for its cells. A path two records
    hash differently (a file changed between two runs extending one experiment) keeps the first
    record's hash; each cell's own ``config.json`` keeps the bytes it read."""
    out: dict[str, str] = {}
    for rec in records:
        for k, h in (rec or {}).items():
            out.setdefault(str(k), str(h))
    return dict(sorted(out.items()))


def cells_data_files(run_dir: Path) -> dict[str, str]:
    """The union (:func:`merge_data_files`) of the ``data_files`` of every ``config.json`` below
    ``run_dir`` (its cells and their cells, in path order; ``run_dir/config.json`` itself is not
    read), for a run that learns its inputs only from the runs it delegates to (``mas reproduce``).
    A ``config.json`` that is not a JSON object is passed over (another program's file)."""
    root = Path(run_dir)
    records = []
    for p in sorted(root.rglob(CONFIG_FILE)):
        if p.parent == root:
            continue
        try:
            cfg = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(cfg, dict) and isinstance(cfg.get("data_files"), Mapping):
            records.append(cfg["data_files"])
    return merge_data_files(*records)


def changed_files(recorded: Mapping[str, str] | None, root: Path | None) -> list[tuple[str, str, str | None]]:
    """The recorded data files whose bytes under ``root`` are no longer the ones a run read.

    Args:
        recorded: ``config.json``'s ``data_files`` (``{path relative to the datasets root: sha256}``;
            None or empty: nothing to check).
        root: the datasets root to look in (None: no datasets, so every file is missing).

    Returns:
        ``[(relative path, recorded sha256, sha256 now or None when the file is missing), ...]``
        in the recorded order; ``[]`` when every file is as recorded.
    """
    out = []
    for rel, old in (recorded or {}).items():
        path = None if root is None else Path(root) / rel
        try:
            now = sha256_hex(path.read_bytes()) if path is not None else None
        except OSError:      # missing, a directory, unreadable: not the file the run read
            now = None
        if now != old:
            out.append((rel, old, now))
    return out
