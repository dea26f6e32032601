"""fan_out's helper threads never hold the process up at exit (issue 46, item 3).

A Ctrl-C reaches the game's thread between two bytecodes, possibly inside the fan-out's start of
a helper thread. With ``concurrent.futures.ThreadPoolExecutor`` helpers, a KeyboardInterrupt there
left the pool's first thread started but unregistered: at exit nothing woke it and the interpreter
waited for it forever (1 stop in 19 hung until a second Ctrl-C).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent("""
    import threading, time
    from mas_agents.graphs import fanout

    real_start = threading.Thread.start

    def start(self):
        real_start(self)
        if self.name.startswith("mas-fanout"):
            threading.Thread.start = real_start
            raise KeyboardInterrupt   # as a Ctrl-C landing in Thread.start's wait for the new thread

    threading.Thread.start = start
    try:
        fanout.fan_out([lambda: time.sleep(0.1), lambda: time.sleep(0.1)])
    except KeyboardInterrupt:
        print("interrupted", flush=True)
""")


def test_a_ctrl_c_while_a_helper_starts_does_not_hang_the_exit():
    t0 = time.monotonic()
    try:
        r = subprocess.run([sys.executable, "-c", CHILD], cwd=REPO, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise AssertionError("the process did not end within 30 s: its exit waits for a fan-out helper") from None
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "interrupted"
    assert time.monotonic() - t0 < 30


def test_helpers_are_daemon_threads_reused_across_fan_outs():
    import threading

    from mas_agents.graphs.fanout import _pool, fan_out

    seen = []

    def call():
        seen.append(threading.current_thread())
        time.sleep(0.05)

    fan_out([call] * 3)
    after_first = _pool().started
    time.sleep(0.1)   # the helpers are idle again
    fan_out([call] * 3)
    helpers = {t for t in seen if t.name.startswith("mas-fanout")}
    assert helpers and all(t.daemon for t in helpers)
    assert _pool().started == after_first   # the second fan-out started no thread: it reused idle helpers
