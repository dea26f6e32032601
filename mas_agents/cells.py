"""Where the cells of a multi-cell run execute: in this process (threads, the default) or as Ray
tasks on a cluster (``--executor ray``).

A *cell* is one unit of a multi-cell run that writes only under its own directory: a murder-mystery
game plus its WellPlay evaluation (``mas wellplay compare``, ``mas ablate``), a Who-is-Spy game
(``mas spy tournament`` / ``experiment``), a MAgIC game (``mas magic run``, ``mas reproduce``).
A runner hands its cells to :func:`run_cells` with a function ``fn(item, root) -> result`` that
writes the cell's files under ``root`` (the run directory) and returns a small, picklable result.

- ``local`` (default): ``fn(item, run_dir)`` on a thread pool of ``concurrency``
  (:func:`mas_agents.rundir.run_each`), exactly as before this module existed.
- ``ray``: each cell is a Ray task. The driver (this process) owns the run directory: it sends the
  task the cell's files so far (so a half-played game resumes from its checkpoint on any node), the
  worker runs ``fn(item, tmp)`` in a temporary directory of its own, and the task returns the
  result with every file under that directory; the driver writes them into the run directory.
  Workers need no shared filesystem for results (they do need the package, and the datasets at the
  path the driver resolved). Cells the runner reports finished (``finished``) are not sent: the
  driver reads them where they are. A task whose worker or node dies is run again by Ray
  (:data:`CELL_RETRIES`); the driver writes a cell's files and counts it only when one try
  returns, so no cell is lost or counted twice. Resume is the runners' own (finished cells are
  skipped before anything is submitted).

Resources per cell (Ray's scheduler enforces them):

- a cell whose model is the embedded/local GGUF model holds one :data:`MODEL_SLOT` resource and as
  many CPUs as the smallest node with a slot has (the model uses every core of its node), in a
  worker process of its own that exits after the cell (so no idle worker keeps a model loaded).
  Every node that may run a local model declares exactly one slot
  (``ray start --resources='{"mas_model_slot": 1}'``; a local instance started by ``--executor ray``
  without ``--ray-address`` declares it itself), so at most one model process runs per node at a
  time; the model there uses that node's cores (:func:`mas_agents.llm.make_chat_model` defaults to
  every core in the worker's affinity). No local model here runs on a GPU (llama.cpp is built for
  the CPU, scripts/setup.sh), so no cell asks for one.
- any other cell (OpenAI-compatible servers, WiS-protocol agents, chat-model objects) holds
  :data:`REMOTE_CELL_CPUS` of a CPU: it mostly waits on the network.

The per-server connection cap (``--max-connections``) holds across the whole cluster by division:
the driver keeps at most ``window = min(concurrency, cells)`` cells in flight and gives each
``max(1, max_connections // window)`` connections (a Ray worker process runs one task at a time,
so the caps of the cells in flight sum to at most ``max_connections``, or to ``window`` when
``window`` exceeds it). Without ``--concurrency`` the window is the cluster's: its model slots for
local-model cells, ``--max-connections`` (times the replicas) otherwise (:func:`default_concurrency`).
``executor.json``, merged into the runner's ``config.json`` where it keeps one, records the executor,
the address, the cap per cell and the node that ran each cell (kept across resumes); a run without
that record ran on the local executor.

One idea in 500 lines: where cells run, the Ray path being most of it (resources, the files sent
and written back, the executor record). Imported when the CLI starts, so ``mas_agents.remote``
(langchain-openai, the OpenAI SDK) is imported inside the functions that use it, and ``ray`` only with ``--executor ray``.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

from mas_agents import appender
from mas_agents.errors import RunStopped
from mas_agents.prompt_log import record_prompts, set_record_prompts
from mas_agents.rundir import RunDir, read_json, run_each, write_json
from mas_agents.stop import STOP, StopRequested

log = logging.getLogger(__name__)

#: The executors ``--executor`` accepts.
EXECUTORS = ("local", "ray")
#: The custom Ray resource a node declares once when it may run a local (GGUF) model.
MODEL_SLOT = "mas_model_slot"
#: CPUs a cell without a local model holds on Ray (it waits on model servers most of the time).
REMOTE_CELL_CPUS = 0.25
#: Times Ray runs a cell again when its worker process or node dies (Ray's task retries; an
#: exception raised by the cell itself is never retried: it stops the run, as with ``local``).
CELL_RETRIES = 3
#: Environment variables the driver passes to every cell task (which servers serve ``openai:``
#: models, and the key they need). The datasets are read at the path the driver resolved.
FORWARDED_ENV = ("OPENAI_BASE_URL", "OPENAI_API_KEY")
#: Suffixes of the text files whose worker paths are rewritten to the driver's run directory when
#: they come back (a cell that records its own directory, e.g. an evaluation naming its game's).
TEXT_SUFFIXES = (".json", ".jsonl", ".md", ".txt", ".csv", ".html", ".log")


class ClusterUnreachable(RuntimeError):
    """``--executor ray`` could not reach (or start) the Ray cluster; nothing was run."""


@dataclass
class ExecutorSettings:
    """Process-wide executor settings (set once by the CLI, like :func:`mas_agents.remote.endpoints.configure`).

    Attributes:
        kind: ``local`` or ``ray`` (:data:`EXECUTORS`).
        address: the Ray cluster (``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``); None starts a
            local Ray instance in this process (``kind == "ray"`` only).
        progress: called with one line per finished cell on Ray (cells done, in flight, per node);
            None logs the line at INFO level.
    """

    kind: str = "local"
    address: str | None = None
    progress: Callable[[str], None] | None = None

    def __post_init__(self) -> None:
        if self.kind not in EXECUTORS:
            raise ValueError(f"--executor must be one of {', '.join(EXECUTORS)}, got {self.kind!r}")
        if self.address is not None and self.kind != "ray":
            raise ValueError("--ray-address needs --executor ray")


_SETTINGS = ExecutorSettings()


def configure(kind: str = "local", address: str | None = None,
              progress: Callable[[str], None] | None = None) -> ExecutorSettings:
    """Set the process-wide :class:`ExecutorSettings`; returns the previous ones (to restore).

    Raises:
        ValueError: an unknown executor, or an address without ``kind="ray"``.
    """
    global _SETTINGS
    before = _SETTINGS
    _SETTINGS = ExecutorSettings(kind=kind, address=address, progress=progress)
    return before


def restore(previous: ExecutorSettings) -> None:
    """Put back settings returned by :func:`configure`."""
    global _SETTINGS
    _SETTINGS = previous


def settings() -> ExecutorSettings:
    """The process-wide :class:`ExecutorSettings`."""
    return _SETTINGS


#: Per thread: ``(cells at once, cells from this one to the end)`` of the local run whose cell
#: this thread plays; set by :func:`run_cells` around each cell (absent outside a cell).
_CELL = threading.local()


def cell_fanout(models: list[Any]) -> int | None:
    """How many of one cell's own parallel steps may run at once (LangGraph's ``max_concurrency``
    for a game's fan-out, e.g. a Who-is-Spy round's votes).

    With ``C = parallel calls of models`` (:func:`mas_agents.remote.usage.auto_concurrency`) and ``W``
    cells at once: ``max(1, C // W)`` for a cell of a local multi-cell run that starts with at
    least ``C`` cells left (itself included), which keep every connection busy with one call
    each; None (no limit) otherwise: one cell at a time, a Ray task (it has its own share of the
    connections), and the last cells of a run, which finish while fewer and fewer cells are left.

    Why: with as many games in flight as connections, the games already keep every connection
    busy, and a game that fans its votes out to threads of its own only adds runnable threads
    contending for the GIL. Measured on the WiS tournament, 64 games on 64 connections at 300 ms:
    6.9 -> 6.0 ms of client CPU per call (mean of 6 alternating runs,
    benchmarks/results/throughput.md). A game whose votes go one by one takes longer, which is why
    the last cells keep their full width (narrowing every game cost 85 % -> 74 % of the ideal on 24
    games at 8 in flight). The steps of one LangGraph superstep see the same state and their
    writes are applied together at its end, so the results do not depend on this width. A graph
    may fan out inside one step instead and read the width from its config (``max_concurrency``):
    the Who-is-Spy graph's ``voting`` (:func:`mas_agents.graphs.fanout.fan_out`; at a width of 1 the votes
    run one after another on the game's thread).
    """
    at_once, left = getattr(_CELL, "run", (1, 0))
    if at_once <= 1:
        return None
    from mas_agents.remote.usage import auto_concurrency
    calls = auto_concurrency(list(models))
    return max(1, calls // at_once) if left >= calls else None


def _local_cell(fn: Callable[[Any, Path], Any], root: Path, n: int, window: int) -> Callable[[tuple], tuple]:
    """``fn`` for the thread pool: item ``(ix, it)`` -> ``(ix, fn(it, root))``, with :data:`_CELL`
    set for :func:`cell_fanout` (``n`` items, ``window`` at once; items start in order). After
    Ctrl-C (:data:`mas_agents.stop.STOP`) an item that has not started raises
    :class:`mas_agents.stop.StopRequested` instead of starting."""
    def one(ix_it: tuple) -> tuple:
        ix, it = ix_it
        if STOP.is_set():   # Ctrl-C: a queued cell does not start (it would make its directory, then stop)
            raise StopRequested("stop requested (Ctrl-C); finished work is saved")
        before = getattr(_CELL, "run", (1, 0))
        _CELL.run = (window, n - ix)
        try:
            return ix, fn(it, root)
        finally:
            _CELL.run = before
    return one


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ClusterUnreachable("--executor ray needs Ray: pip install 'mas-agents[ray]'") from None
    return ray


def _tcp_reachable(address: str, timeout: float = 3.0) -> str | None:
    """None when ``HOST:PORT`` accepts a TCP connection, else why not (one line)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return f"not HOST:PORT: {address!r}"
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            return None
    except OSError as exc:
        return exc.strerror or str(exc) or type(exc).__name__


def connect() -> dict[str, Any] | None:
    """Connect to (or start) the Ray cluster of ``--executor ray``; None for ``local``.

    Returns:
        ``{"address": the cluster's GCS address, "nodes": alive nodes, "cpus": float,
        "model_slots": float}`` (slots: :data:`MODEL_SLOT` resources in the cluster).

    Raises:
        ClusterUnreachable: Ray is not installed, or the address does not answer (checked with a
            TCP connection first, so a wrong address fails in seconds), or ``ray.init`` fails.
    """
    s = _SETTINGS
    if s.kind != "ray":
        return None
    addr = s.address
    ray = _import_ray()
    if not ray.is_initialized():
        if addr and addr != "auto" and not addr.startswith("ray://"):
            why = _tcp_reachable(addr)
            if why:
                raise ClusterUnreachable(f"--ray-address {addr}: cannot reach the Ray cluster ({why})")
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                  "configure_logging": False}
        if addr is None:
            # "local": a new instance in this process (None would join the cluster that
            # RAY_ADDRESS or the last `ray start` on this machine names)
            kwargs["resources"] = {MODEL_SLOT: 1}
        try:
            ray.init(address=addr or "local", **kwargs)
        except Exception as exc:  # noqa: BLE001 - ConnectionError, RuntimeError, ValueError by version
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            # Ray turns token authentication on for a cluster started where ~/.ray/auth_token
            # exists; a driver given an explicit address sends the token only with RAY_AUTH_MODE=token
            hint = ("; if the cluster uses token authentication, set RAY_AUTH_MODE=token (and the token: "
                    "RAY_AUTH_TOKEN or ~/.ray/auth_token)" if addr and "RAY_AUTH_MODE" not in os.environ else "")
            raise ClusterUnreachable(f"--ray-address {addr or '(local instance)'}: cannot reach the Ray "
                                     f"cluster ({first}){hint}") from None
    res = ray.cluster_resources()
    return {"address": ray.get_runtime_context().gcs_address,
            "nodes": sum(1 for n in ray.nodes() if n.get("Alive")),
            "cpus": float(res.get("CPU", 0.0)), "model_slots": float(res.get(MODEL_SLOT, 0.0))}


def has_local_model(models: list[Any]) -> bool:
    """True when any of ``models`` (specs or chat-model objects) is the in-process GGUF model
    (``local`` / ``local:PATH`` specs, :class:`mas_agents.local_chat.LocalLlamaChat`)."""
    for m in models:
        inner = getattr(m, "model", m) if not isinstance(m, str) else m
        if isinstance(inner, str):
            text = inner.strip()
            if text == "local" or text.startswith("local:"):
                return True
            continue
        if type(inner).__name__ == "LocalLlamaChat" or type(m).__name__ == "LocalLlamaChat":
            return True
    return False


def cell_resources(models: list[Any], node_cpus: float = 1.0) -> dict[str, Any]:
    """Ray task options for a cell whose seats use ``models`` (see the module docstring);
    ``node_cpus``: the CPUs a local-model cell holds (those of the smallest node with a slot)."""
    if has_local_model(models):
        return {"num_cpus": node_cpus, "resources": {MODEL_SLOT: 1}, "max_calls": 1}
    return {"num_cpus": REMOTE_CELL_CPUS}


def default_concurrency(models: list[Any], local_default: int) -> int:
    """Cells in flight when the command gave no ``--concurrency``: ``local_default`` (the runner's
    own rule) on the local executor; on Ray the cluster's width: its model slots for local-model
    cells, else :func:`mas_agents.remote.usage.auto_concurrency` (``--max-connections`` per server).

    Raises:
        ClusterUnreachable: ``ray`` and the cluster cannot be reached.
    """
    if _SETTINGS.kind != "ray":
        return local_default
    if has_local_model(models):
        return max(1, int(connect()["model_slots"]))
    from mas_agents.remote.usage import auto_concurrency
    return auto_concurrency(models)


def _slot_node_cpus(ray: Any) -> float:
    """CPUs of the smallest alive node that declares a :data:`MODEL_SLOT` (1.0 when none says)."""
    cpus = [n["Resources"].get("CPU", 0.0) for n in ray.nodes()
            if n.get("Alive") and n["Resources"].get(MODEL_SLOT)]
    return max(1.0, min(cpus)) if cpus else 1.0


# ------------------------------------------------------------------------------- the cell runner

def run_cells(items: list, fn: Callable[[Any, Path], Any], *, root: Path, rel: Callable[[Any], str],
              models: list[Any], concurrency: int = 1, done: Callable[[Any, Any], None] | None = None,
              finished: Callable[[Any], bool] | None = None) -> list:
    """Run ``fn(item, root)`` for every item on the configured executor; results in the items' order
    (whatever order the cells finish in, so a report does not depend on the executor or the timing).

    Args:
        items: the cells (picklable for Ray: tuples, dicts, dataclasses).
        fn: writes the cell's files under the directory it is given (the run directory, or a
            worker's temporary copy of it on Ray) and returns a picklable result that holds no
            absolute path.
        root: the run directory.
        rel: the cell's own directory, relative to ``root`` (``"games/g0003"``); on Ray its files
            so far are sent to the worker, and every file the cell writes comes back.
        models: the models the cell's seats use (for :func:`cell_resources`).
        concurrency: cells at once (threads for ``local``; tasks in flight for ``ray``).
        done: called on this thread (the driver) with ``(item, result)`` as each cell finishes.
        finished: True for a cell already done in ``root`` (resume): on Ray it is not sent to a
            worker; ``fn(item, root)`` runs on the driver and reads it. Ignored by ``local``.

    Raises:
        ClusterUnreachable: ``ray`` and the cluster cannot be reached, or no node can run a local
            model (no :data:`MODEL_SLOT`).
        Exception: the first exception a cell raises (cells not started yet never start).
    """
    if _SETTINGS.kind == "local" or not items:
        pairs = run_each(list(enumerate(items)), _local_cell(fn, root, len(items), min(concurrency, len(items))),
                         concurrency=concurrency, done=(lambda ix, r: done(ix[1], r[1])) if done else None)
    else:
        pairs, todo = [], []
        for ix, it in enumerate(items):
            if finished is not None and finished(it):
                r = fn(it, root)
                pairs.append((ix, r))
                if done:
                    done(it, r)
            else:
                todo.append((ix, it))
        if todo:
            pairs += _run_on_ray(todo, fn, root=Path(root), rel=rel, models=models,
                                 concurrency=concurrency, done=done)
        else:   # every cell was finished: the runner's new config.json still names who ran them
            _record_nodes(Path(root), {"kind": "ray", "address": connect()["address"],
                                       "cells": _recorded_cells(Path(root))})
    return [r for _, r in sorted(pairs, key=lambda p: p[0])]


def _snapshot(d: Path) -> dict[str, bytes]:
    """Every file under ``d`` (relative POSIX path -> bytes); {} when ``d`` does not exist. Lines
    queued for the writer thread (:mod:`mas_agents.appender`) are written first."""
    appender.sync()
    if not d.is_dir():
        return {}
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _process_settings(window: int) -> dict[str, Any]:
    """What a worker process must share with the driver to run a cell the same way."""
    from mas_agents import remote
    from mas_agents.remote import endpoints as remote_endpoints
    rs = asdict(remote_endpoints.settings())
    share = max(1, rs["max_connections"] // max(1, window))
    rs["max_connections"] = share
    return {"remote": rs, "record_prompts": record_prompts(),
            "env": {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ}}


def _apply_process_settings(proc: dict[str, Any]) -> None:
    from mas_agents import remote
    from mas_agents.remote import endpoints
    os.environ.update(proc["env"])
    if asdict(endpoints.settings()) != proc["remote"]:
        endpoints.configure(**proc["remote"])
    set_record_prompts(proc["record_prompts"])


def cell_task(fn: Callable[[Any, Path], Any], item: Any, rel: str, files: dict[str, bytes],
              proc: dict[str, Any]) -> tuple[Any, dict[str, bytes], list[str], dict[str, Any]]:
    """The body of one cell's Ray task (runs in the worker process).

    Writes ``files`` (the cell's directory ``rel`` so far, paths relative to it) under a temporary
    run directory, runs ``fn(item, tmp)`` there and returns ``(result, every file now under the
    temporary run directory, files of the snapshot the cell deleted, the node that ran it)``; the
    returned paths are relative to the run directory (a file a cell writes outside its own
    directory comes back too). Text files have the temporary directory's path replaced by the
    placeholder ``\\0ROOT\\0``, which the driver turns into its run directory.
    """
    import tempfile
    _apply_process_settings(proc)
    with tempfile.TemporaryDirectory(prefix="mas-cell-") as tmp:
        root = Path(tmp)
        cell = root / rel
        for name, data in files.items():
            p = cell / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        result = fn(item, root)
        out = _snapshot(root)
        marker = str(root).encode()
        for name, data in out.items():
            if name.endswith(TEXT_SUFFIXES) and marker in data:
                out[name] = data.replace(marker, b"\0ROOT\0")
    deleted = sorted(f"{rel}/{name}" for name in set(files) if f"{rel}/{name}" not in out)
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        node = {"node_id": ray.get_runtime_context().get_node_id(), "ip": ray.util.get_node_ip_address()}
    else:   # called outside a Ray worker (tests)
        node = {"node_id": None, "ip": None}
    node.update(host=socket.gethostname(), pid=os.getpid())
    return result, out, deleted, node


def _write_back(root: Path, files: dict[str, bytes], deleted: list[str]) -> None:
    """Write a finished cell's files (paths relative to the run directory ``root``) into it, each
    atomically, and remove the ones the cell deleted."""
    marker = str(root).encode()
    for name, data in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(TEXT_SUFFIXES) and b"\0ROOT\0" in data:
            data = data.replace(b"\0ROOT\0", marker)
        tmp = p.with_name(p.name + ".part")
        tmp.write_bytes(data)
        os.replace(tmp, p)
    for name in deleted:
        (root / name).unlink(missing_ok=True)


def _recorded_cells(root: Path) -> dict[str, Any]:
    """The cells earlier Ray runs of ``root`` recorded in ``executor.json`` (a resume keeps them)."""
    p = root / "executor.json"
    return dict((read_json(p).get("executor") or {}).get("cells") or {}) if p.exists() else {}


def _record_nodes(root: Path, record: dict[str, Any]) -> None:
    """Write ``{"executor": record}`` to ``root/executor.json`` (the executor's own file, which no
    runner rewrites, so it lasts across resumes) and merge it into ``root/config.json`` when the
    runner keeps one there (a tournament's game folder has none)."""
    write_json(root / "executor.json", {"executor": record})
    cfg = RunDir(root).config
    if cfg.exists():
        data = read_json(cfg)
        data["executor"] = record
        write_json(cfg, data)


def _run_on_ray(items: list, fn: Callable, *, root: Path, rel: Callable[[Any], str], models: list[Any],
                concurrency: int, done: Callable[[Any, Any], None] | None) -> list:
    """:func:`run_cells` on Ray: ``items`` are ``(index, item)`` pairs; returns ``(index, result)``
    pairs in the order the cells finished."""
    ray = _import_ray()
    info = connect()
    opts = cell_resources(models, _slot_node_cpus(ray))
    if MODEL_SLOT in opts.get("resources", {}) and not info["model_slots"]:
        raise ClusterUnreachable(f"the Ray cluster at {info['address']} has no node that may run a local model: "
                                 f"start such nodes with ray start --resources='{{\"{MODEL_SLOT}\": 1}}'")
    window = max(1, min(concurrency, len(items)))
    proc = _process_settings(window)
    opts = dict(opts)
    max_calls = opts.pop("max_calls", None)        # a decorator option, not an .options() one
    remote_fn = ray.remote(max_calls=max_calls)(cell_task) if max_calls else ray.remote(cell_task)
    # SPREAD: cells go to every node from the start (Ray's default packs the driver's node first)
    task = remote_fn.options(max_retries=CELL_RETRIES, retry_exceptions=False, scheduling_strategy="SPREAD", **opts)
    fn_ref = ray.put(fn)
    record = {"kind": "ray", "address": info["address"], "cells_in_flight": window,
              "max_connections_per_cell": proc["remote"]["max_connections"], "cells": _recorded_cells(root)}
    say = _SETTINGS.progress or log.info
    queue = list(items)
    pending: dict[Any, Any] = {}
    results: list = []
    per_node: dict[str, int] = {}
    start = time.monotonic()
    try:
        while queue or pending:
            while queue and len(pending) < window:
                ix, it = queue.pop(0)
                r = rel(it)
                ref = task.remote(fn_ref, it, r, _snapshot(root / r), proc)
                pending[ref] = (ix, it, r)
            ready, _ = ray.wait(list(pending), num_returns=1)
            ref = ready[0]
            ix, it, r = pending.pop(ref)
            try:
                result, files, deleted, node = ray.get(ref)
            except ray.exceptions.RayTaskError as exc:
                cause = exc.cause if isinstance(getattr(exc, "cause", None), BaseException) else exc
                raise cause from None
            except ray.exceptions.RayError as exc:
                # the cell itself did not fail: Ray lost it (its node died more often than
                # CELL_RETRIES, out of memory, an exception that could not be sent back)
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise RunStopped(f"Ray could not finish cell {r} ({type(exc).__name__}: {first})") from None
            _write_back(root, files, deleted)
            label = f"{node['ip']}/{(node['node_id'] or '?')[:8]}"
            per_node[label] = per_node.get(label, 0) + 1
            record["cells"][r] = node
            _record_nodes(root, record)
            results.append((ix, result))
            if done:
                done(it, result)
            by_node = ", ".join(f"{k}: {v}" for k, v in sorted(per_node.items()))
            say(f"ray: {len(results)}/{len(items)} cells done, {len(pending)} in flight, "
                f"{(time.monotonic() - start) / 60:.1f} min; by node {by_node}")
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=False)
        raise
    return results
