"""Benchmark: many Who-is-Spy games in flight from one process against a stub (issue 29, part 4).

Plays ``--games`` 6-player WiS games (agents ``plain``) as one tournament with ``--games`` of them
in flight at once (``run_tournament(TournamentConfig(..., concurrency=games))``: one thread per game) over
``--connections`` connections to the stub of :mod:`benchmarks.bench_throughput` (its own process on
127.0.0.1, ``--latency`` seconds per reply, replies that keep every action valid), and records what
the client process needs to hold them all:

* peak threads (``threading.active_count``), open file descriptors (``/proc/self/fd``) and
  resident memory (``VmRSS`` of ``/proc/self/status``, and ``ru_maxrss``), sampled every 0.2 s;
* the process's limits (``RLIMIT_NOFILE``, the thread stack size) beside them;
* calls/s over the calling phase against the ideal ``connections / latency``, and the client's CPU
  per call; every game finished with a ``result.json``, none invalid.

Units: seconds (``*_s``), MiB, calls per second. Run (serialised with other heavy runs)::

    flock /tmp/model.lock .venv/bin/python benchmarks/bench_scale.py --games 1000 --connections 256 --latency 2

Writes ``benchmarks/results/scale.json`` and ``scale.md`` (``--results DIR`` elsewhere).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_throughput as bt  # noqa: E402  (the stub, its replies and the call-record readers)


def rss_mib() -> float:
    """This process's resident memory now (``VmRSS``), MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Peaks:
    """Samples threads, open file descriptors and RSS every ``every`` seconds in a daemon thread."""

    def __init__(self, every: float = 0.2):
        self.every = every
        self.threads = self.fds = 0
        self.rss = 0.0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.threads = max(self.threads, threading.active_count())
            try:
                self.fds = max(self.fds, len(os.listdir("/proc/self/fd")))
            except OSError:
                pass
            self.rss = max(self.rss, rss_mib())
            self._stop.wait(self.every)

    def __enter__(self) -> "Peaks":
        self._t.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._t.join()


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=1000, help="games, all in flight at once")
    ap.add_argument("--connections", type=int, default=256)
    ap.add_argument("--latency", type=float, default=2.0, help="stub seconds per reply")
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--results", type=Path, default=REPO / "benchmarks" / "results")
    args = ap.parse_args(argv)

    import logging
    logging.basicConfig(level=logging.WARNING)
    from mas_agents.game.data import resolve_data_dir
    from mas_agents.graphs.wis.dataset import load_pairs
    from mas_agents.graphs.wis.tournament import TournamentConfig, run_tournament

    pairs = load_pairs(resolve_data_dir(args.data_dir), "en")
    out: dict = {"command": " ".join(["benchmarks/bench_scale.py", *(argv if argv is not None else sys.argv[1:])]),
                 "games": args.games, "connections": args.connections, "latency_s": args.latency,
                 "nofile_limit": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
                 "thread_stack_size_mib": (threading.stack_size() or 8 * 1024 * 1024) / 2 ** 20,
                 "loadavg_1m_start": os.getloadavg()[0], "rss_mib_before": round(rss_mib(), 1)}
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp_s:
        tmp = Path(tmp_s)
        reply_file = tmp / "replies.json"
        reply_file.write_text(json.dumps(bt.reply_table([w for p in pairs for w in (p["civilian"], p["spy"])])))
        with bt.StubProcess(args.latency, reply_file) as stub:
            os.environ["OPENAI_BASE_URL"] = stub.base_url
            os.environ.setdefault("OPENAI_API_KEY", "stub")
            limiter = bt.configure(args.connections)
            cpu0, w0 = bt.self_cpu_s(), time.perf_counter()
            with Peaks() as peaks:
                run_tournament(TournamentConfig(agents=["plain"], games=args.games, pairs=pairs, players=bt.PLAYERS,
                                                model=bt.MODEL, speak_timeout=None, concurrency=args.games,
                                                db=tmp / "board.sqlite", out=tmp / "out", seed=0))
            wall, cpu = time.perf_counter() - w0, bt.self_cpu_s() - cpu0
            games = sorted((tmp / "out" / "games").iterdir())
            recs = [json.loads((g / "result.json").read_text()) for g in games if (g / "result.json").exists()]
            calls = [c for g in games for c in bt.read_calls([g / "llm_calls.jsonl"])]
            t0, t1, phase = bt.calling_phase(calls)
            out.update(
                finished_games=len(recs), invalid_actions=sum(r["invalid_actions"] for r in recs),
                calls=len(calls), failed_calls=sum(1 for c in calls if not c.get("ok", True)),
                run_wall_s=round(wall, 1), calling_phase_s=round(phase, 1),
                calls_per_s=round(len(calls) / phase, 1), ideal_calls_per_s=round(args.connections / args.latency, 1),
                ratio=round(len(calls) / phase / (args.connections / args.latency), 3),
                client_cpu_ms_per_call=round(1000 * cpu / len(calls), 2), client_cores=round(cpu / wall, 2),
                peak_in_flight=getattr(limiter, "peak", None),
                peak_threads=peaks.threads, peak_fds=peaks.fds, peak_rss_mib=round(peaks.rss, 1),
                ru_maxrss_mib=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                loadavg_1m_end=os.getloadavg()[0])
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "scale.json").write_text(json.dumps(out, indent=2) + "\n")
    (args.results / "scale.md").write_text(render_md(out))
    print(render_md(out))
    return out


def render_md(o: dict) -> str:
    """The result as a Markdown table."""
    rows = [("games in flight (one thread each)", o["games"]), ("connections", o["connections"]),
            ("stub latency", f"{o['latency_s']} s"), ("finished games", o.get("finished_games")),
            ("invalid actions / failed calls", f"{o.get('invalid_actions')} / {o.get('failed_calls')}"),
            ("calls", o.get("calls")), ("run wall time", f"{o.get('run_wall_s')} s"),
            ("calls/s (calling phase)", f"{o.get('calls_per_s')} = {100 * (o.get('ratio') or 0):.0f} % of "
                                        f"{o.get('ideal_calls_per_s')} (connections / latency)"),
            ("client CPU per call / client cores", f"{o.get('client_cpu_ms_per_call')} ms / {o.get('client_cores')}"),
            ("peak threads", o.get("peak_threads")),
            ("peak open file descriptors (limit)", f"{o.get('peak_fds')} ({o['nofile_limit']})"),
            ("peak RSS (ru_maxrss)", f"{o.get('peak_rss_mib')} MiB ({o.get('ru_maxrss_mib')} MiB; "
                                     f"{o['rss_mib_before']} MiB before the run)"),
            ("load average, 1 min, start / end", f"{o['loadavg_1m_start']:.2f} / {o.get('loadavg_1m_end', 0):.2f}")]
    lines = [f"# Many games in flight: `{o['command']}`", "", "| measure | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
