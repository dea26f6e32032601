"""The options commands share: the model path's (:func:`remote_options`: ``--structured``,
``--context-window``, ``--max-connections``, ``--adaptive-connections``, ``--prefix-cache-mb``,
``--no-record-prompts``, with the one-line stop on a dead backend or an overflowing prompt), the
executor's (:func:`executor_options`), the game commands' single options (:data:`Model`,
:data:`Seed`, ...) and the datasets root (:func:`data_root`). Split from
the former ``cli/common.py`` (issue 51 item 6), which is gone: callers import from here (issue 58).

``mas_agents.remote`` is imported inside :func:`remote_options`'s wrapper only: it pulls in
langchain and the OpenAI SDK, which ``mas --help`` must not load.
"""

from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import Any, Callable, Optional

import typer

from mas_agents import cells
from mas_agents.cli.failure import _RESUME_HINT, DEFAULT_HINT, console, fail, set_resume_hint
from mas_agents.cli.paths import _COMMAND
from mas_agents.cli.stops import _kept, stopped
from mas_agents.embedded import DEFAULT_PREFIX_CACHE_MB, set_prefix_cache_mb
from mas_agents.errors import ContextOverflowError, RunStopped
from mas_agents.game import data as datasets
from mas_agents.game.data import ENV_VAR, DataError, resolve_data_dir
from mas_agents.prompt_log import set_record_prompts

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
    ("prefix_cache_mb", int, typer.Option(DEFAULT_PREFIX_CACHE_MB, "--prefix-cache-mb",
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
    ``--prefix-cache-mb`` (:func:`mas_agents.embedded.set_prefix_cache_mb`, put back after the command),
    ``--no-record-prompts`` and the one-line stop.

    The remote options configure :mod:`mas_agents.remote` for the whole process before the command
    runs; ``--no-record-prompts`` clears :func:`mas_agents.prompt_log.set_record_prompts` for the
    command's duration (the previous setting is restored after it). A :class:`mas_agents.errors.RunStopped` (the model server is down or refuses requests)
    or a :class:`mas_agents.errors.ContextOverflowError` raised by the command ends it with one
    line, exit code 3, naming what happened and how to continue (finished work is on disk); a
    Ctrl-C with :func:`stopped`'s line, exit code 130.
    """
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from mas_agents import remote
        from mas_agents.remote import endpoints

        opts = {name: kwargs.pop(name) for name, _, _ in _REMOTE_PARAMS}
        try:
            endpoints.configure(structured=opts["structured"], context_window=opts["context_window"],
                             max_connections=opts["max_connections"], adaptive=opts["adaptive_connections"])
            cache_before = set_prefix_cache_mb(opts["prefix_cache_mb"])
        except ValueError as exc:
            fail(str(exc))
        token = _RESUME_HINT.set(DEFAULT_HINT)
        set_resume_hint(DEFAULT_HINT)
        recording = set_record_prompts(opts["record_prompts"])
        try:
            return fn(*args, **kwargs)
        except (RunStopped, ContextOverflowError) as exc:
            fail(f"{exc}. Finished work is kept{_kept(exc)}; {_RESUME_HINT.get()}.", code=3)
        except KeyboardInterrupt as exc:    # here, while the command's resume hint is still set
            stopped(exc)
        finally:
            set_record_prompts(recording)
            set_prefix_cache_mb(cache_before)
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


def data_root(data_dir: Optional[Path], needs: tuple[str, ...] | None = None, *, holds: bool = False) -> Path:
    """The datasets root from ``--data-dir``, ``$MAS_DATA_DIR`` or ``../shared/datasets``; exit 2 with
    one line when it is missing (``holds``: also when it lacks one of the ``needs`` folders, for a
    command that checks a given ``--data-dir`` before it reads it, or without reading it).

    The line says where the data was looked for and how to point at the folder that holds
    ``needs`` (default: the datasets of the running command, :data:`_COMMAND_DATA`); the WellPlay
    licence note (it has no licence, so it is not shipped: ``mas_agents.game.data``) only when WellPlay
    is among them."""
    try:
        root = resolve_data_dir(data_dir)
        lacks = [n for n in (needs or _command_data()) if not (root / n).is_dir()] if holds else []
        if lacks:
            where = f"--data-dir {str(data_dir)!r}" if data_dir is not None else f"the datasets root {str(root)!r}"
            raise DataError(f"{where} holds no {' and no '.join(n + '/' for n in lacks)}")
        return root
    except DataError as exc:
        if needs is None:
            needs = _command_data()
        what = str(exc).replace(getattr(datasets, "_HOW_TO", "") or "\0", "").strip().rstrip(".")
        folders = " and ".join(f"{n}/" for n in needs)
        how = f"point at the folder that holds {folders} with --data-dir PATH or {ENV_VAR}=PATH"
        if "wellplay" in needs:
            how += (" (WellPlay comes from github.com/alickzhu/PLAYER and has no licence, so it is not shipped "
                    "with this repository)")
        fail(f"{what}; {how}")
