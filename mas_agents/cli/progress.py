"""What a long command shows while it runs: the progress bar, a line per finished cell when stderr
is not a terminal (:func:`ticker`), the remote requests in flight, the log level. Split from
the former ``cli/common.py`` (issue 51 item 6), which is gone: callers import from here (issue 58).
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any, Callable

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from mas_agents.cli.failure import console

def progress() -> Progress:
    """A rich progress bar on stderr, off when stderr is not a terminal."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, transient=False, disable=not sys.stderr.isatty())


def ticker(prog: Progress, task: Any, every: int = 1) -> Callable[..., None]:
    """A ``tick`` for the runners: advances the bar, and when the bar is off (stderr is not a
    terminal: ``nohup``, CI, a log file) writes one line per finished cell / game to stderr, e.g.
    ``12:41:07 ablate: 3 done (plain / Sin / seed 0), 41.5 min``, so a long run shows progress;
    ``every``: one line per that many ticks (and one at the last, when the total is known), for
    runners that tick per question."""
    start = time.monotonic()

    def tick(*label: Any) -> None:
        prog.advance(task)
        if prog.disable:
            t = next(x for x in prog.tasks if x.id == task)
            if every > 1 and int(t.completed) % every and not (t.total and t.completed >= t.total):
                return
            of = f"/{int(t.total)}" if t.total else ""
            what = f" ({' '.join(map(str, label))})" if label else ""
            busy = remote_activity()
            print(f"{time.strftime('%H:%M:%S')} {t.description}: {int(t.completed)}{of} done{what}, "
                  f"{(time.monotonic() - start) / 60:.1f} min" + (f", {busy}" if busy else ""),
                  file=sys.stderr, flush=True)
        else:
            busy = remote_activity()
            if busy:
                t = next(x for x in prog.tasks if x.id == task)
                prog.update(task, description=f"{t.description.split(' [')[0]} [{busy}]")
    return tick


def say(line: str) -> None:
    """One plain progress line on stderr, stamped with the time (``12:41:07 Sin: round 1 of 3
    done, 2.5 min``), for a command whose progress bar is off (stderr is not a terminal)."""
    print(f"{time.strftime('%H:%M:%S')} {line}", file=sys.stderr, flush=True)


def remote_activity() -> str:
    """Requests in flight and calls/s of the OpenAI-compatible endpoints used so far ('' if none)."""
    remote = sys.modules.get("mas_agents.remote.endpoints")   # imported only by a remote model
    return remote.activity() if remote is not None else ""


def setup_logging(verbose: bool) -> None:
    """INFO logging with ``--verbose``, else WARNING."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
