"""What every ``mas`` command shares: the console, the one-line failure, and the options of every
model-using command: the OpenAI-compatible model path (``--structured``, ``--context-window``,
``--max-connections``, ``--adaptive-connections``) and the prompt log (``--no-record-prompts``),
with the one-line stop on a dead backend or an overflowing prompt.

Every command is wrapped by :func:`guard` (the CLI does it for all of them when it is built):
a path the system refuses (``--out afile/sub``, ``--out /dev/null``, ``--db /proc/x.sqlite``)
ends the command with one ``error:`` line naming the option and its value (:func:`path_error`),
and Ctrl-C ends it with one line saying what was kept (:func:`install_stop_handler`, which also
guarantees that a stop ends within :data:`STOP_GRACE_S` seconds).

A leaf of the CLI: the command modules import it; it imports no command module.
"""

from __future__ import annotations

import contextvars
import errno
import functools
import inspect
import logging
import os
import signal
import sqlite3
import sys
import threading
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
    as :func:`remote_options` does. Called while an ``OSError`` or ``sqlite3.Error`` about a path
    given on the command line is handled (a command's ``except FileNotFoundError``), the line is
    :func:`path_error`'s, naming the option."""
    from mas_agents.errors import ContextOverflowError, RunStopped

    handling = sys.exc_info()[1]
    if isinstance(handling, (OSError, sqlite3.Error)):   # e.g. a command's ``except FileExistsError``
        named = path_error(handling)
        if named is not None:
            msg, code = named
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
    global _LAST_HINT
    _RESUME_HINT.set(text)
    _LAST_HINT = text


#: The hint last set in any context: what the stop watchdog (a thread of its own, outside the
#: command's context) says when it ends the process.
_LAST_HINT = DEFAULT_HINT


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
    ("prefix_cache_mb", int, typer.Option(512, "--prefix-cache-mb",
                                          help="Embedded model: MiB of prompt states kept for reuse by later prompts "
                                               "that share their prefix (several agents taking turns); 0 = off "
                                               "(only the last prompt's).")),
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
    """Give a model-using command the remote-model options, the embedded engine's
    ``--prefix-cache-mb`` (:func:`mas_agents.llm.set_prefix_cache_mb`, put back after the command),
    ``--no-record-prompts`` and the one-line stop.

    The remote options configure :mod:`mas_agents.remote` for the whole process before the command
    runs; ``--no-record-prompts`` clears :func:`mas_agents.accounting.set_record_prompts` for the
    command's duration (the previous setting is restored after it). A :class:`mas_agents.errors.RunStopped` (the model server is down or refuses requests)
    or a :class:`mas_agents.errors.ContextOverflowError` raised by the command ends it with one
    line, exit code 3, naming what happened and how to continue (finished work is on disk); a
    Ctrl-C with :func:`stopped`'s line, exit code 130.
    """
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from mas_agents import accounting, remote
        from mas_agents.errors import ContextOverflowError, RunStopped

        from mas_agents import llm

        opts = {name: kwargs.pop(name) for name, _, _ in _REMOTE_PARAMS}
        try:
            remote.configure(structured=opts["structured"], context_window=opts["context_window"],
                             max_connections=opts["max_connections"], adaptive=opts["adaptive_connections"])
            cache_before = llm.set_prefix_cache_mb(opts["prefix_cache_mb"])
        except ValueError as exc:
            fail(str(exc))
        token = _RESUME_HINT.set(DEFAULT_HINT)
        set_resume_hint(DEFAULT_HINT)
        recording = accounting.set_record_prompts(opts["record_prompts"])
        try:
            return fn(*args, **kwargs)
        except (RunStopped, ContextOverflowError) as exc:
            fail(f"{exc}. Finished work is kept{_kept(exc)}; {_RESUME_HINT.get()}.", code=3)
        except KeyboardInterrupt as exc:    # here, while the command's resume hint is still set
            stopped(exc)
        finally:
            accounting.set_record_prompts(recording)
            llm.set_prefix_cache_mb(cache_before)
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


#: The dataset folders each top-level command reads (under the datasets root), for the
#: ``--data-dir`` error; commands not listed (``ablate``, ``reproduce``) may read all three.
_COMMAND_DATA = {"spy": ("whoisspy",), "magic": ("magic",), "mmg": ("wellplay",), "wellplay": ("wellplay",),
                 "data": ("wellplay",)}


def _command_data() -> tuple[str, ...]:
    """The dataset folders the running command reads (:data:`_COMMAND_DATA`; ``reproduce`` by its
    paper, ``ablate`` by its ``--bench``); all three when it cannot tell."""
    every = ("wellplay", "whoisspy", "magic")
    cmd = _COMMAND.get()
    if cmd is None:
        return every
    ctx, kwargs = cmd
    top = (ctx.command_path.split()[1:2] or [""])[0]
    if top == "reproduce":
        paper = kwargs.get("paper")
        return {"magic": ("magic",), "player-star": ("wellplay",), "wis": ("whoisspy",)}.get(paper, every)
    if top == "ablate":
        bench = str(kwargs.get("bench") or "all")
        named = {"wellplay": "wellplay", "spy": "whoisspy", "magic": "magic"}
        picked = tuple(named[b.strip()] for b in bench.split(",") if b.strip() in named)
        return picked if bench != "all" and picked else every
    return _COMMAND_DATA.get(top, every)


def data_root(data_dir: Optional[Path], needs: tuple[str, ...] | None = None) -> Path:
    """The datasets root from ``--data-dir``, ``$MAS_DATA_DIR`` or ``../shared/datasets``; exit 2 with
    one line when it is missing.

    The line says where the data was looked for and how to point at the folder that holds
    ``needs`` (default: the datasets of the running command, :data:`_COMMAND_DATA`); the WellPlay
    licence note (it has no licence, so it is not shipped: ``mas_agents.eval.datasets``) only when WellPlay
    is among them."""
    from mas_agents.eval.datasets import ENV_VAR, DataError, resolve_data_dir
    try:
        return resolve_data_dir(data_dir)
    except DataError as exc:
        if needs is None:
            needs = _command_data()
        from mas_agents.eval import datasets
        what = str(exc).replace(getattr(datasets, "_HOW_TO", "") or "\0", "").strip().rstrip(".")
        folders = " and ".join(f"{n}/" for n in needs)
        how = f"point at the folder that holds {folders} with --data-dir PATH or {ENV_VAR}=PATH"
        if "wellplay" in needs:
            how += (" (WellPlay comes from github.com/alickzhu/PLAYER and has no licence, so it is not shipped "
                    "with this repository)")
        fail(f"{what}; {how}")


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


# ------------------------------------------------------------------------ stops and bad paths

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

    First Ctrl-C: :data:`mas_agents.accounting.STOP` is set, so no model call starts in any thread
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
    # imported here, not before: a Ctrl-C during the command's first imports must not wait for them
    from mas_agents.accounting import STOP
    STOP.set()
    time.sleep(max(0.0, deadline - time.monotonic()))
    busy = sorted({t.name.rsplit("_", 1)[0] for t in threading.enumerate()
                   if t.is_alive() and not t.daemon and t is not threading.main_thread()})
    waiting = f" (still running: {', '.join(busy)})" if busy else ""
    _flush_logs(1.0)
    from rich.markup import escape
    console.print(f"[yellow]stopped:[/yellow] {escape(f'quit {STOP_GRACE_S:g} s after Ctrl-C without waiting for the model calls in flight{waiting}. Finished work is kept; {_LAST_HINT}.')}",
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
    from rich.markup import escape
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


#: The running command's click context and its arguments (set by :func:`guard`), for the messages
#: that name an option (:func:`path_error`, :func:`data_root`).
_COMMAND: contextvars.ContextVar[tuple[Any, dict[str, Any]] | None] = contextvars.ContextVar("mas_command",
                                                                                           default=None)


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
    import typing
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
        label = max(opts, key=len) if opts and type(p).__name__.endswith("Option") else p.human_readable_name
        found.append((label, v))
    return found


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
