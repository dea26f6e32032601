"""Start and stop the processes of the WiS SDK contract tests (all on 127.0.0.1).

* :func:`start_sdk_agents`: N processes of :mod:`tests.wis_sdk.sdk_agent` under the SDK venv's
  python, each on a free port (bound by the agent itself: it prints ``READY <url>``).
* :func:`start_serve_agent`: ``mas spy serve-agent`` (our CLI) on a free port, ready when
  ``/agent/checkHealth`` answers.
* :func:`mas_command`: our CLI as a subprocess command.

Our code runs with ``PYTHONPATH`` = this checkout, so a worktree tests its own code (the venv's
editable install may point at another checkout); the SDK's python gets no ``PYTHONPATH`` at all.
Every process started here is stopped by its own handle (SIGTERM, then SIGKILL after 10 s).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
SDK_AGENT = Path(__file__).with_name("sdk_agent.py")


def our_env(**extra: str) -> dict[str, str]:
    """The environment for a process running our code from this checkout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra)
    return env


def mas_command(*args: str) -> list[str]:
    """``mas ARGS...`` with the console script of the running venv (``mas_agents.cli`` has no
    ``__main__``: the console script is the one way in)."""
    return [str(Path(sys.executable).with_name("mas")), *args]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Proc:
    """One started process: its handle, URL, and where its output (and log) go."""

    popen: subprocess.Popen
    url: str
    out: Path
    log: Path | None = None
    files: list = field(default_factory=list)

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=10)
        for f in self.files:
            f.close()

    def output(self, chars: int = 3000) -> str:
        return self.out.read_text(encoding="utf-8", errors="replace")[-chars:] if self.out.exists() else ""

    def log_entries(self, start: int = 0) -> list[dict]:
        """The agent log's entries from line ``start`` on (SDK agents)."""
        if self.log is None or not self.log.exists():
            return []
        lines = self.log.read_text(encoding="utf-8").splitlines()
        return [json.loads(x) for x in lines[start:] if x.strip()]

    def log_length(self) -> int:
        return len(self.log.read_text(encoding="utf-8").splitlines()) if self.log and self.log.exists() else 0


def start_sdk_agents(python: Path, n: int, workdir: Path, timeout: float = 120.0) -> list[Proc]:
    """Start ``n`` SDK agents (one process each); returns them once all printed ``READY``.

    Raises:
        RuntimeError: one exited or did not get ready in ``timeout`` seconds (the others are
            stopped; the message quotes its output).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONNOUSERSITE"] = "1"
    procs: list[Proc] = []
    for i in range(n):
        out, log = workdir / f"sdk-agent-{i + 1}.out", workdir / f"sdk-agent-{i + 1}.jsonl"
        fh = out.open("w", encoding="utf-8")
        popen = subprocess.Popen([str(python), str(SDK_AGENT), "--port", "0", "--log", str(log)],
                                 stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=str(workdir))
        procs.append(Proc(popen, "", out, log, [fh]))
    deadline = time.monotonic() + timeout
    try:
        for p in procs:
            while not p.url:
                ready = [ln for ln in p.output().splitlines() if ln.startswith("READY ")]
                if ready:
                    p.url = ready[0].split()[1]
                elif p.popen.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"SDK agent {p.out.name} did not start "
                                       f"(exit {p.popen.poll()}):\n{p.output()}")
                else:
                    time.sleep(0.1)
    except BaseException:
        for p in procs:
            p.stop()
        raise
    return procs


def start_serve_agent(args: list[str], workdir: Path, env: dict[str, str], timeout: float = 120.0) -> Proc:
    """``mas spy serve-agent ARGS --port <free>``; returns once ``/agent/checkHealth`` succeeds.

    Raises:
        RuntimeError: it exited or did not answer in ``timeout`` seconds (stopped; output quoted).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    out = workdir / "serve-agent.out"
    fh = out.open("w", encoding="utf-8")
    popen = subprocess.Popen(mas_command("spy", "serve-agent", *args, "--host", "127.0.0.1", "--port", str(port)),
                             stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=str(REPO))
    proc = Proc(popen, f"http://127.0.0.1:{port}", out, None, [fh])
    deadline = time.monotonic() + timeout
    while True:
        try:
            r = httpx.post(f"{proc.url}/agent/checkHealth", json={}, timeout=2.0)
            if r.status_code == 200 and r.json().get("success"):
                return proc
        except (httpx.HTTPError, ValueError):
            pass
        if popen.poll() is not None or time.monotonic() > deadline:
            proc.stop()
            raise RuntimeError(f"mas spy serve-agent did not start (exit {popen.poll()}):\n{proc.output()}")
        time.sleep(0.25)
