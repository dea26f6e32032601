"""The console every command writes to, the one-line failure (:func:`fail`) and the resume hint it
and the stop lines end with (:func:`set_resume_hint`). Split from the former ``cli/common.py``
(issue 51 item 6), which is gone: callers import from here (issue 58).
"""

from __future__ import annotations

import contextvars
import sqlite3
import sys

import typer
from rich.console import Console
from rich.markup import escape

from mas_agents.cli.paths import path_error
from mas_agents.errors import ContextOverflowError, RunStopped

#: Without a terminal (a log file, CI, ``nohup``) rich would wrap every line at 80 columns, cutting
#: run directories and file paths in two: there the lines are written whole (soft wrap).
console = Console(stderr=True, soft_wrap=not sys.stderr.isatty())

#: What to tell the user about continuing after a stop; set by a command once it knows its
#: run directory (e.g. ``rerun with --resume --out runs/x``).
DEFAULT_HINT = "rerun the same command to continue (finished games and cells are reused)"
_RESUME_HINT: contextvars.ContextVar[str] = contextvars.ContextVar("resume_hint", default=DEFAULT_HINT)


def fail(msg: str, code: int = 2) -> None:
    """Print ``error: msg`` (one line, no traceback) on stderr and exit with ``code``.

    Called while a run-stopping fault is being handled (a command's ``except ValueError`` also
    catches :class:`mas_agents.errors.ContextOverflowError`), it exits 3 and says how to continue,
    as :func:`remote_options` does. Called while an ``OSError`` or ``sqlite3.Error`` about a path
    given on the command line is handled (a command's ``except FileNotFoundError``), the line is
    :func:`path_error`'s, naming the option."""
    handling = sys.exc_info()[1]
    if isinstance(handling, (OSError, sqlite3.Error)):   # e.g. a command's ``except FileExistsError``
        named = path_error(handling)
        if named is not None:
            msg, code = named
    if isinstance(handling, (RunStopped, ContextOverflowError)) and code == 2:
        code = 3
        if "Finished work is kept" not in msg:
            msg = f"{msg}. Finished work is kept; {_RESUME_HINT.get()}."
    # escaped: a server's message or a prompt may hold [brackets] that rich would take for markup
    console.print(f"[red]error:[/red] {escape(msg)}", soft_wrap=True, markup=True, highlight=False)
    raise typer.Exit(code)


def set_resume_hint(text: str) -> None:
    """How the command's run continues after a stop (shown in the stop's one-line error)."""
    global _LAST_HINT
    _RESUME_HINT.set(text)
    _LAST_HINT = text


#: The hint last set in any context: what the stop watchdog (a thread of its own, outside the
#: command's context) says when it ends the process.
_LAST_HINT = DEFAULT_HINT
