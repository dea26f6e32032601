"""What every ``mas`` command shares: the console, the one-line failure, and the options of every
model-using command: the OpenAI-compatible model path (``--structured``, ``--context-window``,
``--max-connections``, ``--adaptive-connections``) and the prompt log (``--no-record-prompts``),
with the one-line stop on a dead backend or an overflowing prompt.

A leaf of the CLI: the command modules import it; it imports no command module.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import logging
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

console = Console(stderr=True)

#: What to tell the user about continuing after a stop; set by a command once it knows its
#: run directory (e.g. ``rerun with --resume --out runs/x``).
DEFAULT_HINT = "rerun the same command to continue (finished games and cells are reused)"
_RESUME_HINT: contextvars.ContextVar[str] = contextvars.ContextVar("resume_hint", default=DEFAULT_HINT)


def fail(msg: str, code: int = 2) -> None:
    """Print ``error: msg`` (one line, no traceback) on stderr and exit with ``code``.

    Called while a run-stopping fault is being handled (a command's ``except ValueError`` also
    catches :class:`mas_agents.errors.ContextOverflowError`), it exits 3 and says how to continue,
    as :func:`remote_options` does."""
    from mas_agents.errors import ContextOverflowError, RunStopped

    handling = sys.exc_info()[1]
    if isinstance(handling, (RunStopped, ContextOverflowError)) and code == 2:
        code = 3
        if "Finished work is kept" not in msg:
            msg = f"{msg}. Finished work is kept; {_RESUME_HINT.get()}."
    from rich.markup import escape

    # escaped: a server's message or a prompt may hold [brackets] that rich would take for markup
    console.print(f"[red]error:[/red] {escape(msg)}", soft_wrap=True, markup=True, highlight=False)
    raise typer.Exit(code)


def set_resume_hint(text: str) -> None:
    """How the command's run continues after a stop (shown in the stop's one-line error)."""
    _RESUME_HINT.set(text)


_REMOTE_PARAMS = [
    ("structured", str, typer.Option("auto", "--structured",
                                     help="Remote models: how the reply format is enforced: auto (probe the server "
                                          "once), grammar, json, prompt.")),
    ("context_window", Optional[int], typer.Option(None, "--context-window",
                                                   help="Remote models: context length in tokens when the server "
                                                        "does not report one.")),
    ("max_connections", int, typer.Option(8, "--max-connections",
                                          help="Remote models: requests in flight per server, shared by all games "
                                               "of this run.")),
    ("adaptive_connections", bool, typer.Option(False, "--adaptive-connections",
                                                help="Remote models: halve the requests in flight on HTTP 429, "
                                                     "grow back slowly.")),
    ("record_prompts", bool, typer.Option(True, "--record-prompts/--no-record-prompts",
                                          help="Keep every call's messages, reply format and completion in "
                                               "llm_prompts.jsonl.gz beside llm_calls.jsonl (on by default; off "
                                               "where size matters).")),
]


def _with_options(fn: Callable[..., Any], table: list, wrapper: Callable[..., Any]) -> Callable[..., Any]:
    """``wrapper`` (which pops ``table``'s names from its keyword arguments) dressed as ``fn`` with
    ``table``'s ``(name, annotation, typer.Option)`` rows added as keyword-only options, so typer
    shows and parses them."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=opt, annotation=ann)
               for name, ann, opt in table]
    wrapper = functools.wraps(fn)(wrapper)
    wrapper.__signature__ = sig.replace(parameters=params)   # type: ignore[attr-defined]
    wrapper.__annotations__ = {**getattr(fn, "__annotations__", {}), **{n: a for n, a, _ in table}}
    return wrapper


def remote_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Give a model-using command the remote-model options, ``--no-record-prompts`` and the
    one-line stop.

    The remote options configure :mod:`mas_agents.remote` for the whole process before the command
    runs; ``--no-record-prompts`` clears :func:`mas_agents.accounting.set_record_prompts` for the
    command's duration (the previous setting is restored after it). A :class:`mas_agents.errors.RunStopped` (the model server is down or refuses requests)
    or a :class:`mas_agents.errors.ContextOverflowError` raised by the command ends it with one
    line, exit code 3, naming what happened and how to continue (finished work is on disk).
    """
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from mas_agents import accounting, remote
        from mas_agents.errors import ContextOverflowError, RunStopped

        opts = {name: kwargs.pop(name) for name, _, _ in _REMOTE_PARAMS}
        try:
            remote.configure(structured=opts["structured"], context_window=opts["context_window"],
                             max_connections=opts["max_connections"], adaptive=opts["adaptive_connections"])
        except ValueError as exc:
            fail(str(exc))
        token = _RESUME_HINT.set(DEFAULT_HINT)
        recording = accounting.set_record_prompts(opts["record_prompts"])
        try:
            return fn(*args, **kwargs)
        except (RunStopped, ContextOverflowError) as exc:
            fail(f"{exc}. Finished work is kept; {_RESUME_HINT.get()}.", code=3)
        finally:
            accounting.set_record_prompts(recording)
            _RESUME_HINT.reset(token)

    return _with_options(fn, _REMOTE_PARAMS, wrapper)


_EXECUTOR_PARAMS = [
    ("executor", str, typer.Option("local", "--executor",
                                   help="Where the cells (games, evaluations) run: local (threads in this process) "
                                        "or ray (one Ray task per cell; pip install 'mas-agents[ray]').")),
    ("ray_address", Optional[str], typer.Option(None, "--ray-address",
                                                help="With --executor ray: the cluster (auto, HOST:PORT or "
                                                     "ray://HOST:PORT); none starts a Ray instance in this process.")),
]


def executor_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command that runs many cells ``--executor local|ray`` and ``--ray-address``
    (:mod:`mas_agents.cells`).

    The executor is set for the whole process for the command's duration (the previous one is put
    back after it). With ``ray`` the cluster is reached before the command runs, so an unreachable
    cluster stops it with one line and exit code 3 before anything is written; the same one-line stop
    ends it when the cluster cannot run a cell later (no node may hold a local model).
    """
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from mas_agents import cells

        opts = {name: kwargs.pop(name) for name, _, _ in _EXECUTOR_PARAMS}
        try:
            before = cells.configure(opts["executor"], opts["ray_address"],
                                     progress=lambda line: console.print(line, markup=False, highlight=False))
        except ValueError as exc:
            fail(str(exc))
        try:
            cells.connect()
            return fn(*args, **kwargs)
        except cells.ClusterUnreachable as exc:
            fail(str(exc), code=3)
        finally:
            cells.restore(before)

    return _with_options(fn, _EXECUTOR_PARAMS, wrapper)


DataDir = typer.Option(None, "--data-dir", help="Datasets root (holds wellplay/); else $MAS_DATA_DIR, else ../shared/datasets.")
# Options shared by the game commands (one definition, one help text).
Model = typer.Option("local", help="Default model: local | local:/path/model.gguf | openai:MODEL")
Seed = typer.Option(0, help="Random seed (roles, words, option shuffles).")
Lang = typer.Option("en", help="en or zh")
Concurrency = typer.Option(None, min=1, help="Games/cells at once (default: --max-connections when every model is remote, else 1).")
Verbose = typer.Option(False, "-v", "--verbose", help="INFO-level logging.")


def data_root(data_dir: Optional[Path]) -> Path:
    """The datasets root from ``--data-dir``, ``$MAS_DATA_DIR`` or ``../shared/datasets``; exit 2 with
    one line when it is missing."""
    from eval.datasets import DataError, resolve_data_dir
    try:
        return resolve_data_dir(data_dir)
    except DataError as exc:
        fail(str(exc))


def progress() -> Progress:
    """A rich progress bar on stderr, off when stderr is not a terminal."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, transient=False, disable=not sys.stderr.isatty())


def ticker(prog: Progress, task: Any) -> Callable[..., None]:
    """A ``tick`` for the runners: advances the bar, and when the bar is off (stderr is not a
    terminal: ``nohup``, CI, a log file) writes one line per finished cell / game to stderr, e.g.
    ``12:41:07 ablate: 3 done (plain / Sin / seed 0), 41.5 min``, so a long run shows progress."""
    start = time.monotonic()

    def tick(*label: Any) -> None:
        prog.advance(task)
        if prog.disable:
            t = next(x for x in prog.tasks if x.id == task)
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


def remote_activity() -> str:
    """Requests in flight and calls/s of the OpenAI-compatible endpoints used so far ('' if none)."""
    remote = sys.modules.get("mas_agents.remote")
    return remote.activity() if remote is not None else ""


def setup_logging(verbose: bool) -> None:
    """INFO logging with ``--verbose``, else WARNING."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
