"""Every command wrapped so that its stops and path faults end in one line instead of a traceback
(:func:`guard`, :func:`guard_commands`). Split from the former ``cli/common.py`` (issue 51 item 6),
which is gone: callers import from here (issue 58).
"""

from __future__ import annotations

import inspect
import sqlite3
import typing
from typing import Any, Callable

import typer

from mas_agents.cli.failure import fail
from mas_agents.cli.options import _with_options
from mas_agents.cli.paths import _COMMAND, _sqlite_path_fault, path_error
from mas_agents.cli.stops import _restore_sigint, stopped

def guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a command) with its stops and path faults ended in one line instead of a traceback:
    Ctrl-C by :func:`stopped`; an ``OSError``, or SQLite refusing a database file, by
    :func:`path_error`'s line (exit code 2: a path on the command line the system refuses), else
    ``error: <file>: <reason>`` (exit code 1). Other exceptions pass (a bug keeps its traceback).

    The wrapper takes typer's context as an extra parameter (``mas_context: typer.Context``,
    which typer fills and shows no option for) and keeps it with the arguments while the
    command runs. A command that takes a context of its own gets it too.
    """
    if getattr(fn, "_mas_guarded", False):
        return fn
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - an annotation typing cannot evaluate: typer reads it its own way
        hints = {}
    own_ctx = [n for n, t in hints.items() if isinstance(t, type) and issubclass(t, typer.Context)]

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = kwargs.pop("mas_context")
        for n in own_ctx:
            kwargs[n] = ctx
        token = _COMMAND.set((ctx, kwargs))
        try:
            return fn(*args, **kwargs)
        except KeyboardInterrupt as exc:
            stopped(exc)
        except (OSError, sqlite3.Error) as exc:
            named = path_error(exc)
            if named is not None:
                fail(*named)
            if isinstance(exc, sqlite3.Error):
                if not _sqlite_path_fault(exc):
                    raise    # a locked database, a bug: not about a path
                fail(f"cannot open a SQLite database ({exc})", code=1)
            where = getattr(exc, "filename", None)
            why = getattr(exc, "strerror", None) or str(exc)
            fail(f"{where}: {why}" if where else f"{type(exc).__name__}: {why}", code=1)
        finally:
            _COMMAND.reset(token)
            _restore_sigint()

    wrapped = _with_options(fn, [("mas_context", typer.Context, inspect.Parameter.empty)], wrapper)
    wrapped._mas_guarded = True    # type: ignore[attr-defined]
    return wrapped


def guard_commands(app: typer.Typer) -> None:
    """Wrap every command of ``app`` and of its sub-apps with :func:`guard` (before typer builds
    the click commands, i.e. before ``app()``)."""
    for info in app.registered_commands:
        if info.callback is not None:
            info.callback = guard(info.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            guard_commands(group.typer_instance)
