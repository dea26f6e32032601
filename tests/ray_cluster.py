"""A two-node Ray cluster on this machine for tests and benchmarks (issue 28).

A head and a worker node started with ``ray start --block``, one CPU each (two between them), each
in its own process group so the worker node can be killed on its own (:meth:`Cluster.kill_worker`).
Both run without authentication and with the repository on PYTHONPATH (Ray's worker processes
unpickle the tests' fake models). The driver is the process that builds the :class:`Cluster`: it
connects through :func:`mas_agents.cells.connect`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from mas_agents import cells

REPO = Path(__file__).resolve().parents[1]
RAY = str(Path(sys.executable).with_name("ray"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_node(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen([RAY, "start", "--block", "--disable-usage-stats", "--num-cpus=1",
                             "--object-store-memory=100000000", *args],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


def alive_nodes(ray) -> list[dict]:
    return [n for n in ray.nodes() if n.get("Alive")]


class Cluster:
    """A head and a worker node on this machine, and this process connected to them as the driver
    with ``--executor ray`` set (:func:`mas_agents.cells.configure`); :meth:`kill_worker` kills the
    worker node's whole process group (raylet, its Ray worker processes) with SIGKILL; :meth:`stop`
    ends both.

    Raises:
        AssertionError: a node exited while starting, or both were not up within 60 s.
    """

    def __init__(self) -> None:
        import ray
        self.head = self.worker = None
        # the driver (this process) without authentication too, like the nodes
        self._auth = os.environ.get("RAY_AUTH_MODE")
        os.environ["RAY_AUTH_MODE"] = "disabled"
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
               "RAY_USAGE_STATS_ENABLED": "0"}
        try:
            self.head = _start_node(["--head", f"--port={self.port}", "--include-dashboard=false"], env)
            deadline = time.monotonic() + 60
            while cells._tcp_reachable(self.address, timeout=1) and time.monotonic() < deadline:
                assert self.head.poll() is None, self.head.stderr.read().decode()[-2000:]
                time.sleep(0.5)
            self.worker = _start_node([f"--address={self.address}",
                                       f"--resources={json.dumps({cells.MODEL_SLOT: 1})}"], env)
            self._before = cells.configure("ray", self.address)
            cells.connect()
            while len(alive_nodes(ray)) < 2 and time.monotonic() < deadline:
                assert self.worker.poll() is None, self.worker.stderr.read().decode()[-2000:]
                time.sleep(0.5)
            nodes = alive_nodes(ray)
            assert len(nodes) == 2, nodes
        except BaseException:
            self.stop()
            raise
        self.worker_id = next(n["NodeID"] for n in nodes if "node:__internal_head__" not in n["Resources"])

    def kill_worker(self) -> None:
        os.killpg(self.worker.pid, signal.SIGKILL)
        self.worker.wait(timeout=30)

    def stop(self) -> None:
        """Disconnect the driver, stop both nodes, and put back the executor and RAY_AUTH_MODE."""
        import ray
        ray.shutdown()
        for p in (self.worker, self.head):
            if p is not None and p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
        cells.configure("local")
        if self._auth is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = self._auth
