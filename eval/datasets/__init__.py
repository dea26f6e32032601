"""Locating the evaluation data sets on disk.

The data (WellPlay, Who-is-Spy, MAgIC) is not shipped with the repository: WellPlay has no
licence (see ``wellplay/README.md`` in the data folder, section "License"). Every loader takes
the datasets ROOT, i.e. the folder that contains ``wellplay/``, ``whoisspy/`` and ``magic/``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DataError", "ENV_VAR", "resolve_data_dir"]

#: Environment variable that points at the datasets root.
ENV_VAR = "MAS_DATA_DIR"

#: Repository root: the parent of the ``eval`` package directory.
_REPO_ROOT = Path(__file__).resolve().parents[2]   # eval/datasets/__init__.py -> the repository

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
