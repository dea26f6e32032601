"""Ctrl-C as a stop: the SIGINT handler, the watchdog that ends the process within
:data:`STOP_GRACE_S` seconds, and :func:`stopped`'s one line saying what was kept. Split from
the former ``cli/common.py`` (issue 51 item 6), which is gone: callers import from here (issue 58).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Any

import typer
from rich.markup import escape

from mas_agents.cli import failure
from mas_agents.cli.failure import _RESUME_HINT, console
from mas_agents.stop import STOP

#: Seconds from the first Ctrl-C within which the process ends, whatever it is waiting for. The
#: stop itself takes what the model calls in flight take (no new call starts, so with a 0.6 s
#: server well under a second); when a call hangs (a stalled server, a long local generation),
#: the process quits after this many seconds without it, having written the queued log lines.
#: Issue 46, item 3: a stop must end within a few seconds, always.
STOP_GRACE_S = 3.0
#: Exit code of a command stopped by Ctrl-C (the shell's 128 + SIGINT).
STOP_EXIT = 130

_STOP_PIPE: tuple[int, int] | None = None
_PREVIOUS: Any = None
_SIGINTS = 0
_ANNOUNCED = threading.Event()   # the watchdog has said "Stopping" (the stop's last line comes after it)


def install_stop_handler() -> None:
    """Make Ctrl-C a stop (called by the ``mas`` root command in the main thread; elsewhere a
    no-op).

    First Ctrl-C: :data:`mas_agents.stop.STOP` is set, so no model call starts in any thread
    (LangGraph runs nodes in worker threads, which a KeyboardInterrupt in the main thread never
    reaches), and the main thread gets a KeyboardInterrupt, which ends the command with
    :func:`stopped`'s line. Finished work is on disk already (each game's files, the leaderboard,
    the checkpoints). If the process still runs :data:`STOP_GRACE_S` seconds later, a watchdog
    thread writes the queued log lines (:func:`mas_agents.appender.sync`) and ends it with exit
    code :data:`STOP_EXIT`. Second Ctrl-C: quit at once. When the command returns, :func:`guard`
    puts the handler it replaced back.

    The signal handler itself takes no lock (it only writes a byte to a pipe and raises): it runs
    between two bytecodes of the main thread, which may hold any lock at that moment. The
    watchdog thread, started here and idle until then, sets the flag and prints.
    """
    global _STOP_PIPE, _PREVIOUS
    if threading.current_thread() is not threading.main_thread():
        return
    if _STOP_PIPE is None:
        _STOP_PIPE = os.pipe()
        threading.Thread(target=_watch, args=(_STOP_PIPE[0],), name="mas-stop-watchdog", daemon=True).start()
    before = signal.signal(signal.SIGINT, _on_sigint)
    if before is not _on_sigint:
        _PREVIOUS = before


def _restore_sigint() -> None:
    """Put back the SIGINT handler :func:`install_stop_handler` replaced, once a command has
    returned (a process that runs commands in-process, e.g. tests with typer's CliRunner, gets
    its own Ctrl-C back)."""
    if (threading.current_thread() is threading.main_thread() and _PREVIOUS is not None
            and signal.getsignal(signal.SIGINT) is _on_sigint):
        signal.signal(signal.SIGINT, _PREVIOUS)


def _on_sigint(signum: int, frame: Any) -> None:
    global _SIGINTS
    _SIGINTS += 1
    if _SIGINTS > 1:
        os._exit(STOP_EXIT)
    assert _STOP_PIPE is not None
    os.write(_STOP_PIPE[1], b"!")
    raise KeyboardInterrupt


def _watch(fd: int) -> None:
    """The watchdog thread of :func:`install_stop_handler`: waits for the first Ctrl-C, then for
    the end of the grace period."""
    os.read(fd, 1)
    deadline = time.monotonic() + STOP_GRACE_S
    console.print(f"[yellow]Stopping: no new model call starts; finished work is kept (at most "
                  f"{STOP_GRACE_S:g} s; Ctrl-C again quits at once).[/yellow]", highlight=False, soft_wrap=True)
    _ANNOUNCED.set()
    STOP.set()
    time.sleep(max(0.0, deadline - time.monotonic()))
    busy = sorted({t.name.rsplit("_", 1)[0] for t in threading.enumerate()
                   if t.is_alive() and not t.daemon and t is not threading.main_thread()})
    waiting = f" (still running: {', '.join(busy)})" if busy else ""
    _flush_logs(1.0)
    console.print(f"[yellow]stopped:[/yellow] {escape(f'quit {STOP_GRACE_S:g} s after Ctrl-C without waiting for the model calls in flight{waiting}. Finished work is kept; {failure._LAST_HINT}.')}",
                  soft_wrap=True, highlight=False, markup=True)
    _flush_streams()
    os._exit(STOP_EXIT)


def _flush_streams() -> None:
    """Flush stdout and stderr before ``os._exit`` (which skips the interpreter's own flush);
    a closed pipe (``mas ... | head``) is passed over: there is nothing more to say to it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe: nothing more to say
            pass


def _flush_logs(timeout: float) -> None:
    """Write the lines queued for the log files (:mod:`mas_agents.appender`), waiting at most
    ``timeout`` seconds (a writer stuck on a dead disk must not hold the exit up)."""
    appender = sys.modules.get("mas_agents.appender")
    if appender is None:
        return
    t = threading.Thread(target=lambda: appender.sync(), name="mas-stop-flush", daemon=True)
    t.start()
    t.join(timeout)


def _kept(exc: BaseException) -> str:
    """What the runner kept, from the exception's notes (:func:`mas_agents.rundir.run_each`):
    ``" (3 of 20 cells finished and kept, ...)"`` or ``""``."""
    notes = [n for n in getattr(exc, "__notes__", None) or [] if "finished and kept" in n]
    return f" ({notes[-1]})" if notes else ""


def stopped(exc: BaseException) -> None:
    """End a command stopped by Ctrl-C: one line on stderr, ``stopped: ...`` with what was kept
    (:func:`_kept`) and how to continue (the command's resume hint), exit code :data:`STOP_EXIT`.
    A stop is the user's choice, not a failure: no ``error:``. After a real SIGINT the process
    ends here (``os._exit``, the queued log lines written first); a KeyboardInterrupt raised
    otherwise (in-process callers, tests) raises ``typer.Exit``."""
    if _SIGINTS:
        _ANNOUNCED.wait(0.5)
    console.print(f"[yellow]stopped:[/yellow] {escape(f'Ctrl-C. Finished work is kept{_kept(exc)}; {_RESUME_HINT.get()}.')}",
                  soft_wrap=True, markup=True, highlight=False)
    if _SIGINTS and not _ray_running():
        # a real Ctrl-C of this process: its work is written (the runners have unwound) and the
        # queued log lines are flushed here, so it ends now; the interpreter's clean-up of every
        # module took 1-3 s of a loaded 2-core machine (issue 46, item 3). Not when a Ray
        # instance runs: its clean-up at exit stops the cluster this process started.
        _flush_logs(1.0)
        _flush_streams()
        os._exit(STOP_EXIT)
    raise typer.Exit(STOP_EXIT)


def _ray_running() -> bool:
    ray = sys.modules.get("ray")
    try:
        return bool(ray is not None and ray.is_initialized())
    except Exception:  # noqa: BLE001 - a half-imported Ray
        return True
