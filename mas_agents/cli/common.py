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

The parts live beside it, one idea a module (issue 51 item 6); this module re-exports every name,
so commands keep importing them from here: :mod:`mas_agents.cli.failure` (the console, :func:`fail`,
the resume hint), :mod:`mas_agents.cli.options` (the shared options and :func:`data_root`),
:mod:`mas_agents.cli.stops` (Ctrl-C), :mod:`mas_agents.cli.guard` and :mod:`mas_agents.cli.paths`
(one line for a refused path), :mod:`mas_agents.cli.progress` (progress and logging).
"""

from __future__ import annotations

from rich.progress import Progress  # noqa: F401 - re-exported

from mas_agents.cli.failure import _RESUME_HINT, DEFAULT_HINT, console, fail, set_resume_hint  # noqa: F401
from mas_agents.cli.guard import guard, guard_commands  # noqa: F401
from mas_agents.cli.options import (  # noqa: F401 - re-exported
    _COMMAND_DATA,
    _EXECUTOR_PARAMS,
    _REMOTE_PARAMS,
    Concurrency,
    DataDir,
    Lang,
    Model,
    Seed,
    Verbose,
    _command_data,
    _with_options,
    data_root,
    executor_options,
    remote_options,
)
from mas_agents.cli.paths import _COMMAND, out_is_file, path_error  # noqa: F401
from mas_agents.cli.progress import progress, remote_activity, say, setup_logging, ticker  # noqa: F401
from mas_agents.cli.stops import (  # noqa: F401 - re-exported
    STOP_EXIT,
    STOP_GRACE_S,
    _flush_logs,
    _flush_streams,
    _kept,
    install_stop_handler,
    stopped,
)
