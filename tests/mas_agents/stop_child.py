"""Many ``mas spy play`` processes stopped by a real SIGINT, for tests/mas_agents/test_stop_sigint.py.

    python -m tests.mas_agents.stop_child --work DIR --tries N [--seed S] [--lo 0.3] [--hi 3.5]

needs ``OPENAI_BASE_URL`` (an OpenAI-compatible server, the stub of tests/stub_openai.py) in the
environment. The process imports the CLI and everything ``mas spy play`` loads once, then for each
try forks a child that runs ``mas spy play --model openai:stub --pair tea/coffee --out DIR/g<i>``
exactly as the ``mas`` script would (``mas_agents.cli.app()``, the interpreter's normal exit
afterwards: a hang at exit, the bug of issue 46 item 3, shows here), sends it SIGINT after a
random delay in ``[lo, hi]`` seconds (odd tries: 0-1.5 s after the game's first call is on disk,
so half the signals land mid-game even on a slow machine) and times how long it takes to end. Forking after the
imports lets a try start in milliseconds instead of the 3-10 s of a fresh interpreter on a loaded
2-core machine.

Prints one JSON line per try: ``{"try", "sigint_after_s" (after the fork, or after the first
call), "stop_s" (None: still running after
``--limit`` s, then killed), "exit" (exit code; None when killed), "stderr" (the child's last 2000
characters)}``. A child that hangs gets SIGABRT first, so its stderr holds every thread's stack
(faulthandler).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import threading
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--tries", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lo", type=float, default=0.3)
    ap.add_argument("--hi", type=float, default=3.5)
    ap.add_argument("--limit", type=float, default=15.0)
    args = ap.parse_args()

    import faulthandler

    import importlib

    from mas_agents.cli import app
    for name in ("mas_agents.graphs.wis.replay_html", "mas_agents.graphs.wis.session", "mas_agents.game.human", "mas_agents.graphs.wis.graph",
                 "mas_agents.graphs.wis.player", "mas_agents.agents", "mas_agents.remote.chat", "mas_agents.remote.usage", "mas_agents.specs",
                 "mas_agents.memory", "langchain_openai"):   # what `mas spy play` imports, loaded once here
        importlib.import_module(name)

    if threading.active_count() != 1:   # fork copies only this thread: no other may hold a lock
        raise SystemExit(f"threads before fork: {[t.name for t in threading.enumerate()]}")
    rng = random.Random(args.seed)
    for i in range(args.tries):
        out = os.path.join(args.work, f"g{i:02d}")
        err = os.path.join(args.work, f"g{i:02d}.stderr")
        at = rng.uniform(args.lo, args.hi)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:    # the child: `mas spy play ...`, then the interpreter's own exit
            fd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 2)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            faulthandler.enable(file=sys.stderr, all_threads=True)
            sys.argv = ["mas", "spy", "play", "--model", "openai:stub", "--pair", "tea/coffee", "--seed", str(i),
                        "--out", out]
            app()   # raises SystemExit: up through this loop to the interpreter's exit
            raise SystemExit(98)   # not reached: typer always exits
        if i % 2:   # every other try: the signal comes during the game, after its first recorded call
            calls = os.path.join(out, "llm_calls.jsonl")
            started = time.monotonic()
            while time.monotonic() - started < args.limit and not (os.path.exists(calls) and os.path.getsize(calls)):
                time.sleep(0.02)
            at = rng.uniform(0.0, 1.5)   # a game of 0.3 s calls lasts 2 s or more after its first call
        time.sleep(at)
        t0 = time.monotonic()
        os.kill(pid, signal.SIGINT)
        status = None
        while time.monotonic() - t0 < args.limit:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.005)
        else:
            status = None
        took = time.monotonic() - t0 if status is not None else None
        if status is None:
            os.kill(pid, signal.SIGABRT)
            time.sleep(1.0)
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        with open(err, encoding="utf-8", errors="replace") as fh:
            tail = fh.read()[-2000:]
        print(json.dumps({"try": i, "sigint_after_s": round(at, 3), "stop_s": None if took is None else round(took, 3),
                          "exit": None if status is None else os.waitstatus_to_exitcode(status), "stderr": tail}),
              flush=True)


if __name__ == "__main__":
    main()
