"""A path given on the command line that the system refuses, said in one line naming the option:
the running command's context (:data:`_COMMAND`, set by :func:`mas_agents.cli.guard.guard`) and
:func:`path_error`. Split from the former ``cli/common.py`` (issue 51 item 6), which is gone: callers import from here (issue 58).
"""

from __future__ import annotations

import contextvars
import errno
import os
import sqlite3
from pathlib import Path
from typing import Any

#: The running command's click context and its arguments (set by :func:`guard`), for the messages
#: that name an option (:func:`path_error`, :func:`data_root`).
_COMMAND: contextvars.ContextVar[tuple[Any, dict[str, Any]] | None] = contextvars.ContextVar("mas_command",
                                                                                           default=None)


#: errno values that mean "this path cannot be used as given" (bad input: exit code 2); others
#: (a full disk, an I/O error) are faults (exit code 1).
_BAD_PATH = {errno.ENOTDIR, errno.EEXIST, errno.EISDIR, errno.ENOENT, errno.EACCES, errno.EPERM, errno.EROFS,
             errno.ENAMETOOLONG, errno.ELOOP, errno.EINVAL, errno.ENXIO, errno.ENODEV}


def _path_options() -> list[tuple[str, Path]]:
    """``(option as typed, e.g. "--out", value)`` for every path-valued argument of the running
    command (:func:`guard`; ``[]`` outside a command)."""
    cmd = _COMMAND.get()
    if cmd is None:
        return []
    ctx, kwargs = cmd
    found: list[tuple[str, Path]] = []
    for p in ctx.command.params:
        v = kwargs.get(p.name) if p.name else None
        if not isinstance(v, Path):
            continue
        opts = [o for o in getattr(p, "opts", []) if o.startswith("--")]
        label = max(opts, key=len) if opts and type(p).__name__.endswith("Option") else _argument_label(p)
        found.append((label, v))
    return found


def _argument_label(p: Any) -> str:
    """How the help names a positional argument (``GAME_DIR``): its metavar, else its name in
    capitals. Read from the parameter's fields: typer's ``TyperArgument`` (typer 0.12+) has no
    click ``human_readable_name`` (it does not run click's ``Argument.__init__`` property set-up)."""
    metavar = getattr(p, "metavar", None)
    return str(metavar) if isinstance(metavar, str) and metavar else (p.name or "ARGUMENT").upper()


def _related(path: Path, value: Path) -> bool:
    """``path`` is ``value``, lies under it, or is one of its parents (a directory made on the
    way to it); compared as absolute paths, then resolved."""
    a, b = Path(os.path.abspath(path)), Path(os.path.abspath(value))
    if a == b or b in a.parents or a in b.parents:
        return True
    try:
        a, b = a.resolve(), b.resolve()
    except (OSError, RuntimeError):
        return False
    return a == b or b in a.parents or a in b.parents


def _why(exc: OSError, file: Path) -> str:
    """The reason of ``exc`` about ``file``, said of the path (which part is not a directory)."""
    if exc.errno == errno.ENOTDIR:
        for anc in [*reversed(file.parents), file]:
            if anc.exists() and not anc.is_dir():
                return f"{anc} is a file, not a directory" if anc.is_file() else f"{anc} is not a directory"
    if exc.errno == errno.EEXIST and file.exists() and not file.is_dir():
        return f"{file} exists and is not a directory"
    why = exc.strerror or str(exc)
    return f"{why[:1].lower()}{why[1:]}"


#: SQLite's messages for a database file it cannot use where it is (sqlite3 names no file).
_SQLITE_PATH_FAULTS = ("unable to open database file", "file is not a database", "attempt to write a readonly database")


def _sqlite_path_fault(exc: BaseException) -> bool:
    """``exc`` is SQLite refusing the database file itself (not a locked database, not a bug)."""
    return isinstance(exc, sqlite3.DatabaseError) and str(exc) in _SQLITE_PATH_FAULTS


def path_error(exc: BaseException) -> tuple[str, int] | None:
    """The one-line message and exit code for ``exc`` when it is about a path given on the command
    line: ``("--out afile/sub: afile is a file, not a directory", 2)``,
    ``("--out /dev/null: /dev/null exists and is not a directory", 2)``,
    ``("--db /proc/x.sqlite: cannot open or create the SQLite database (unable to open database file)", 2)``.

    An ``OSError``'s ``filename`` (or ``filename2``) is matched to the most specific path option
    of the running command it lies under (``--out runs/x`` for ``runs/x/games/g0001/config.json``,
    the file then named too) or that lies under it (``/proc/x``, made on the way to ``--out
    /proc/x/out``); a ``sqlite3.Error`` (which names no file) to the command's
    ``--db``. Exit code 2 for errors that mean the path cannot be used as given
    (:data:`_BAD_PATH`), 1 for other faults (a full disk). None when no option matches.
    """
    options = sorted(_path_options(), key=lambda lv: -len(os.path.abspath(lv[1])))
    if isinstance(exc, sqlite3.Error):
        db = [(label, v) for label, v in options if label == "--db"]
        if not db or not _sqlite_path_fault(exc):
            return None
        label, v = db[0]
        return f"{label} {v}: cannot open or create the SQLite database ({exc})", 2
    if not isinstance(exc, OSError):
        return None
    for name in (exc.filename, exc.filename2):
        if name is None or isinstance(name, int):
            continue
        file = Path(os.fsdecode(name))
        for label, v in options:
            if _related(file, v):
                why = _why(exc, file)
                where = "" if os.path.abspath(file) == os.path.abspath(v) or str(file) in why else f" ({file})"
                return f"{label} {v}: {why}{where}", 2 if exc.errno in _BAD_PATH else 1
    return None


def out_is_file(label: str, out: Path | None) -> tuple[str, int] | None:
    """The one-line refusal of a run directory option given a path that exists and is no
    directory (``("--out runs/x: runs/x exists and is not a directory", 2)``, as :func:`path_error`
    words it), for a command to check before it loads a model or runs a dry run; None otherwise."""
    if out is None or not out.exists() or out.is_dir():
        return None
    return f"{label} {out}: {out} exists and is not a directory", 2
