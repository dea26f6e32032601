"""The process-wide Ctrl-C stop of model calls: :data:`STOP`, set by the CLI's SIGINT watchdog, and
:class:`StopRequested`, raised by a call that would start after it. A light leaf (the standard
library only), so the CLI and the cell runner import it at start; split from
:mod:`mas_agents.accounting` (issue 51 item 6), which checks it before every call.
"""

from __future__ import annotations

import threading

__all__ = ["STOP", "StopRequested"]

#: Set to stop every accounted model: the next ``chat`` call in any thread raises
#: :class:`StopRequested`. The CLI sets it on Ctrl-C, because LangGraph runs nodes in worker
#: threads that a KeyboardInterrupt in the main thread does not reach.
STOP = threading.Event()


class StopRequested(KeyboardInterrupt):
    """Raised by :meth:`mas_agents.accounting.AccountedModel.chat` once :data:`STOP` is set (before
    calling the model), and by a queued cell that has not started (:mod:`mas_agents.cells`)."""
