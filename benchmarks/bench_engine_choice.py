"""Benchmark: the client's CPU per request for N requests in flight, threads against asyncio.

The measurement behind the engine choice of issue 29, part 1: before moving every game onto one
event loop, how much client CPU does a chat-completion request cost at 64 and 256 in flight when
the requests are made from N threads (today's engine) and from N asyncio tasks on one loop? The
game code above the request (LangGraph, prompts, parsing, records: about 3-4 ms a call,
``throughput.md``) is the same in both and is left out here; this is the transport alone.

Clients, each sending the same WiS description request (``bench_throughput.sample_body``) to the
stub of ``bench_throughput.py`` (its own process on 127.0.0.1, ``--latency`` s per reply):

* ``threads + openai SDK``: N threads, each ``OpenAI.post("/chat/completions", cast_to=object)``
  through a shared ``httpx2`` pool of N keep-alive connections (our ``RemoteChat`` path, without
  langchain);
* ``threads + openai SDK, pools of 16``: the same over one pool per 16 connections (what
  ``mas_agents.remote.endpoints.Endpoint`` does since this session);
* ``asyncio + openai SDK``: N tasks on one loop, ``AsyncOpenAI.post`` over one async pool;
* ``asyncio + httpx2``: N tasks, ``httpx2.AsyncClient.post`` and ``json.loads`` (no SDK);
* ``threads + http.client``: N threads, a stdlib keep-alive connection each (a floor).

For each: calls/s over the run against the ideal N / latency, and the client's CPU (user + system)
per request. Units: ms, calls/s. Run (serialised with other heavy runs)::

    flock /tmp/model.lock .venv/bin/python benchmarks/bench_engine_choice.py --inflight 64,256 --latency 0.3

Writes ``benchmarks/results/engine_choice.md`` (``--results DIR`` elsewhere).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_throughput as bt  # noqa: E402


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_threads(n: int, total: int, make: Callable[[], Callable[[], object]]) -> tuple[float, float]:
    """``total`` requests from ``n`` threads, each with its own ``make()`` sender; (wall s, cpu s)."""
    left = [total]
    lock = threading.Lock()
    senders = [make() for _ in range(n)]
    barrier = threading.Barrier(n + 1)

    def worker(send: Callable[[], object]) -> None:
        barrier.wait()
        while True:
            with lock:
                if left[0] <= 0:
                    return
                left[0] -= 1
            send()

    threads = [threading.Thread(target=worker, args=(s,)) for s in senders]
    for t in threads:
        t.start()
    c0, w0 = cpu_s(), time.perf_counter()
    barrier.wait()
    for t in threads:
        t.join()
    return time.perf_counter() - w0, cpu_s() - c0


def run_tasks(n: int, total: int, send) -> tuple[float, float]:
    """``total`` requests from ``n`` asyncio tasks sharing the coroutine ``send``; (wall s, cpu s)."""
    async def main() -> tuple[float, float]:
        left = [total]

        async def worker() -> None:
            while left[0] > 0:
                left[0] -= 1
                await send()

        c0, w0 = cpu_s(), time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(n)))
        return time.perf_counter() - w0, cpu_s() - c0

    return asyncio.run(main())


class Urllib3Transport:
    """A minimal ``httpx2`` transport over a urllib3 ``PoolManager`` (for measuring only)."""

    def __init__(self, maxsize: int):
        import urllib3
        self.pm = urllib3.PoolManager(maxsize=maxsize, block=False)

    def handle_request(self, request):
        import httpx2
        r = self.pm.urlopen(request.method, str(request.url), body=request.read(), headers=dict(request.headers),
                            retries=False, preload_content=True, redirect=False)
        return httpx2.Response(r.status, headers=list(r.headers.items()), content=r.data)

    def close(self) -> None:
        self.pm.clear()

    def __enter__(self):
        return self

    def __exit__(self, *a) -> None:
        self.close()


def measure(base_url: str, n: int, total: int) -> dict[str, tuple[float, float]]:
    import httpx2
    import openai
    from openai._base_client import AsyncHttpxClientWrapper, SyncHttpxClientWrapper

    body = bt.sample_body()
    raw = json.dumps(body).encode()
    host_port = base_url.split("//", 1)[1].split("/", 1)[0]
    out: dict[str, tuple[float, float]] = {}

    # threads + SDK, one pool
    pool = SyncHttpxClientWrapper(limits=httpx2.Limits(max_connections=None, max_keepalive_connections=n))
    client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0, http_client=pool)
    out["threads + openai SDK, one pool"] = run_threads(
        n, total, lambda: (lambda: client.post("/chat/completions", body=body, cast_to=object)))
    pool.close()

    # threads + SDK, pools of 16
    shards = max(1, -(-n // 16))
    pools = [SyncHttpxClientWrapper(limits=httpx2.Limits(max_connections=None, max_keepalive_connections=16))
             for _ in range(shards)]
    clients = [openai.OpenAI(base_url=base_url, api_key="x", max_retries=0, http_client=p) for p in pools]
    counter = iter(range(10 ** 9))
    out["threads + openai SDK, pools of 16"] = run_threads(
        n, total, lambda: (lambda c=clients[next(counter) % shards]: c.post("/chat/completions", body=body,
                                                                              cast_to=object)))
    for p in pools:
        p.close()

    # asyncio + SDK
    async def sdk_send_factory():
        apool = AsyncHttpxClientWrapper(limits=httpx2.Limits(max_connections=None, max_keepalive_connections=n))
        return openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0, http_client=apool)

    aclient = None

    async def sdk_send():
        nonlocal aclient
        if aclient is None:
            aclient = await sdk_send_factory()
        await aclient.post("/chat/completions", body=body, cast_to=object)

    out["asyncio + openai SDK"] = run_tasks(n, total, sdk_send)

    # asyncio + bare httpx2
    hclient = None

    async def httpx_send():
        nonlocal hclient
        if hclient is None:
            hclient = httpx2.AsyncClient(base_url=base_url, limits=httpx2.Limits(max_connections=None,
                                                                              max_keepalive_connections=n))
        r = await hclient.post("/chat/completions", content=raw, headers={"Content-Type": "application/json"})
        json.loads(r.content)

    out["asyncio + httpx2 (no SDK)"] = run_tasks(n, total, httpx_send)

    # threads + urllib3 (its own pool), bare
    import urllib3
    upool = urllib3.HTTPConnectionPool(host_port.split(":")[0], int(host_port.split(":")[1]), maxsize=n, block=False)

    def urllib3_sender():
        def send():
            r = upool.urlopen("POST", "/v1/chat/completions", body=raw, headers={"Content-Type": "application/json"},
                              retries=False)
            json.loads(r.data)
        return send

    out["threads + urllib3 (no SDK)"] = run_threads(n, total, urllib3_sender)

    # threads + SDK over a urllib3 transport (the SDK's request building, errors and parsing kept)
    transport = Urllib3Transport(maxsize=n)
    ucl = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0, http_client=httpx2.Client(transport=transport))
    out["threads + openai SDK over urllib3"] = run_threads(
        n, total, lambda: (lambda: ucl.post("/chat/completions", body=body, cast_to=object)))

    # threads + stdlib
    def stdlib_sender():
        conn = http.client.HTTPConnection(host_port)

        def send():
            conn.request("POST", "/v1/chat/completions", body=raw, headers={"Content-Type": "application/json"})
            json.loads(conn.getresponse().read())
        return send

    out["threads + http.client (floor)"] = run_threads(n, total, stdlib_sender)
    return out


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inflight", default="64,256")
    ap.add_argument("--latency", type=float, default=0.3)
    ap.add_argument("--rounds", type=int, default=8, help="requests per client per cell = rounds x in flight")
    ap.add_argument("--results", type=Path, default=REPO / "benchmarks" / "results")
    args = ap.parse_args(argv)
    ns = [int(x) for x in args.inflight.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp:
        reply = Path(tmp) / "replies.json"
        reply.write_text(json.dumps({"default": "Description: something round"}))
        with bt.StubProcess(args.latency, reply) as stub:
            for n in ns:
                total = args.rounds * n
                ideal = n / args.latency
                for name, (wall, cpu) in measure(stub.base_url, n, total).items():
                    rows.append((n, name, total, total / wall, total / wall / ideal, 1000 * cpu / total, cpu / wall))
    lines = [f"# Client CPU per request, threads against asyncio (`benchmarks/bench_engine_choice.py "
             f"{' '.join(argv if argv is not None else sys.argv[1:])}`)", "",
             f"Stub latency {args.latency} s; load average at the end {os.getloadavg()[0]:.2f}; requests of one "
             f"WiS description prompt; transport only (no game code).", "",
             "| in flight | client | requests | calls/s | ratio to ideal | client CPU ms / request | client cores |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {n} | {name} | {t} | {r:.1f} | {100 * q:.0f} % | {c:.2f} | {k:.2f} |"
              for n, name, t, r, q, c, k in rows]
    text = "\n".join(lines) + "\n"
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "engine_choice.md").write_text(text)
    print(text)
    return text


if __name__ == "__main__":
    main()
