"""Benchmark: LLM calls/s against a fixed-latency OpenAI-compatible stub, and overhead per call.

Measured here: a local stub server with a fixed latency (300 ms) and instant
replies; calls/s achieved against the ideal (in-flight / latency) at 1, 8, 64 and 256 connections
across a Who-is-Spy tournament and a WellPlay evaluation; and the framework's overhead per call
(median, p95, ms) against a zero-latency server. Targets: >= 90 % of the ideal at 64 in flight;
overhead < 2 ms median.

How:

* The stub (:mod:`tests.stub_openai`) runs as a separate process on 127.0.0.1, so its CPU does
  not share this process's GIL; its replies come from a generated reply file (see
  :func:`reply_table`) that keeps every action valid: six distinct descriptions per round
  (a repeat would be a foul), a vote for the first listed candidate, ``Answer: a`` for WellPlay.
* Every cell runs the real code paths: ``remote.configure(structured="prompt",
  max_connections=C)`` (no grammar probe), then ``mas_agents.graphs.wis.tournament.run_tournament(...,
  model="openai:stub", concurrency=C)`` or ``mas_agents.eval.wellplay.run.run_wellplay_eval(WellPlayEvalConfig(method="pp",
  model="openai:stub", concurrency=C, ...))``.
* **Calling phase**: from the ``llm_calls.jsonl`` records, first ``started_at`` to the last
  ``started_at + latency_s`` (``started_at`` has millisecond precision). For WellPlay this leaves
  out building the characters' FAISS memories (sentence-transformers, CPU-bound, before any
  call). calls/s = calls / calling-phase seconds.
* **Steady state**: the rate (and the client's cores) over the windows in which ``min(C, units)``
  games or characters were running at once, i.e. without ramp-up and tail.
* **Ideals**: ``C / latency`` (requests in flight / latency), ``min(C, P) / latency`` where P
  is the most calls the workload can have in flight (WiS: 6 seats x games; WellPlay: 68
  characters, each answering its own questions one at a time), and a **schedule bound**: calls
  over the shortest possible calling phase with zero overhead -- for WellPlay the exact makespan
  of the thread pool's in-order list scheduling of characters (questions x latency each) on C
  workers; for WiS the makespan of the engine's own policy with zero overhead
  (:func:`engine_schedule`: C games at once in order, a round's votes one at a time in a game
  that starts with at least C games left and in parallel in the last C - 1, at most C calls in
  flight, first come first served). ratio = achieved / ideal.
* **Overhead** (stub latency 0, one call at a time): the ``latency_s`` of each record (our
  ``RemoteChat`` + langchain-openai + openai SDK + httpx2 + loopback + the stub), median and p95;
  the wall time per call of whole sequential WiS games and of a WellPlay answering phase (adds
  prompt building, retrieval, parsing, event and record writing); and the same request sent
  through each layer alone (``http.client``, ``httpx2``, the openai SDK, ``ChatOpenAI``,
  ``RemoteChat``, ``AccountedModel``) so the stub's own share and each layer's can be told apart.
* **Where the time goes**: CPU seconds of this process and of the stub per cell (``getrusage``,
  ``/proc/<pid>/stat``); a cProfile with a per-thread CPU clock (``time.thread_time``, every
  thread) of sequential WiS games and of a WiS tournament at ``--profile-connections`` (run
  after the measured cells), by package (stdlib/builtin time charged to the caller) and through
  a few inclusive boundaries.

Units: seconds (``*_s``), milliseconds (``*_ms``), calls per second. The machine is shared (2
cores): ratios come from one run; load averages are recorded.

Run (serialised with other heavy runs on the shared lock)::

    flock /tmp/model.lock .venv/bin/python benchmarks/bench_throughput.py

Writes ``benchmarks/results/throughput.json`` and ``benchmarks/results/throughput.md``
(``--results DIR`` to write elsewhere).
"""

from __future__ import annotations

import argparse
import bisect
import collections
import cProfile
import datetime as dt
import heapq
import http.client
import itertools
import json
import math
import os
import platform
import pstats
import resource
import selectors
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PLAYERS = 6
MAX_ROUNDS = 3
MODEL = "openai:stub"
TARGET_RATIO = 0.90
TARGET_RATIO_AT = 64
TARGET_OVERHEAD_MS = 2.0
#: Descriptions the stub gives, ``<stem> <n>``: distinct per speaker so none is a repeat foul.
DESCRIPTION_STEM = "something you meet in daily life, clue"


# ---------------------------------------------------------------------------------------------
# the stub's replies


def description(n: int) -> str:
    return f"{DESCRIPTION_STEM} {n}"


def reply_table(words: list[str]) -> dict[str, str]:
    """The stub's reply file: ``{substring of the last user message: reply}``, first match wins.

    * WellPlay mcq prompts (``Answer this question about the case``): ``Answer: a``.
    * WiS votes: the prompt ends its candidate list (``Choose one of:\\n1. Player 1\\n...``) with a
      blank line; one key per possible list (every non-empty subset of the seats, in seat order)
      answers a vote for its first candidate, which is always a legal choice.
    * WiS descriptions: round r's first speaker (``Round r: it is your turn``) says description
      ``10(r-1)+1``; every later speaker sees the previous description as the last history line
      (``<text>\\n\\nYou are``) and says the next number, so no description repeats in a game.

    Raises:
        ValueError: a description would say one of ``words`` (the dataset's secret words).
    """
    from mas_agents.text import says_word

    texts = {n: description(n) for r in range(MAX_ROUNDS) for n in range(10 * r + 1, 10 * r + PLAYERS + 2)}
    said = sorted({w for w in words for t in texts.values() if says_word(t, w)})
    if said:
        raise ValueError(f"stub descriptions would say secret words {said}; change DESCRIPTION_STEM")
    table = {"Answer this question about the case": "Answer: a"}
    seats = [f"Player {i + 1}" for i in range(PLAYERS)]
    for k in range(PLAYERS - 1, 0, -1):
        for cands in itertools.combinations(seats, k):
            listing = "\n".join(f"{i + 1}. {c}" for i, c in enumerate(cands))
            table[f"Choose one of:\n{listing}\n\n"] = f"Vote: {cands[0]}"
    for n, text in texts.items():
        if n + 1 in texts:
            table[f"{text}\n\nYou are"] = f"Description: {texts[n + 1]}"
    for r in range(1, MAX_ROUNDS + 1):
        table[f"Round {r}: it is your turn"] = f"Description: {description(10 * (r - 1) + 1)}"
    table["default"] = "Answer: a"
    return table


# ---------------------------------------------------------------------------------------------
# the stub process


class StubProcess:
    """``python -m tests.stub_openai --latency L --reply-file F`` as a child process.

    ``with StubProcess(0.3, path) as stub:`` starts it, waits (at most 30 s) for ``READY <url>``
    and sets :attr:`base_url`; leaving the block sends SIGTERM (SIGKILL after 10 s).
    """

    def __init__(self, latency_s: float, reply_file: Path):
        self.latency_s = latency_s
        self.reply_file = reply_file
        self.proc: subprocess.Popen | None = None
        self.base_url = ""
        self.port = 0

    def __enter__(self) -> "StubProcess":
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.stub_openai", "--latency", str(self.latency_s), "--port", "0",
             "--reply-file", str(self.reply_file)], cwd=REPO, stdout=subprocess.PIPE, text=True)
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + 30
        line = ""
        while time.monotonic() < deadline and not line:
            if sel.select(timeout=max(0.0, deadline - time.monotonic())):
                line = self.proc.stdout.readline()
                if not line:
                    break
        sel.close()
        if not line.startswith("READY "):
            self.__exit__()
            raise RuntimeError(f"the stub did not start (said {line!r})")
        self.base_url = line.split()[1]
        self.port = int(self.base_url.rsplit(":", 1)[1].split("/", 1)[0])
        return self

    def cpu_s(self) -> float:
        """User + system CPU seconds the stub process has used so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def __exit__(self, *exc: Any) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self.proc = None


# ---------------------------------------------------------------------------------------------
# measuring


def self_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, linear interpolation."""
    v = sorted(values)
    if not v:
        return math.nan
    pos = (len(v) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def read_calls(paths: list[Path]) -> list[dict]:
    out = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            out += [json.loads(line) for line in fh if line.strip()]
    return out


def calling_phase(calls: list[dict]) -> tuple[float, float, float]:
    """``(first start, last end, seconds)`` of the records (epoch seconds)."""
    starts = [dt.datetime.fromisoformat(c["started_at"]).timestamp() for c in calls]
    ends = [s + c["latency_s"] for s, c in zip(starts, calls)]
    return min(starts), max(ends), max(ends) - min(starts)


def list_schedule(durations: list[float], workers: int) -> float:
    """Makespan of running ``durations`` in order on ``workers`` (each item goes to the first free
    worker), as a thread pool does with zero overhead."""
    free = [0.0] * min(workers, max(len(durations), 1))
    heapq.heapify(free)
    end = 0.0
    for d in durations:
        t = heapq.heappop(free) + d
        end = max(end, t)
        heapq.heappush(free, t)
    return end


class CpuSampler:
    """Samples ``(epoch s, this process's CPU s, the stub's CPU s)`` every ``every`` seconds in a
    thread, so the CPU used inside a window found afterwards (the calling phase) can be read."""

    def __init__(self, stub: StubProcess, every: float = 0.05):
        self.stub = stub
        self.every = every
        self.samples: list[tuple[float, float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-sampler", daemon=True)

    def _sample(self) -> None:
        self.samples.append((time.time(), self_cpu_s(), self.stub.cpu_s()))

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._sample()

    def __enter__(self) -> "CpuSampler":
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def at(self, t: float) -> tuple[float, float]:
        """(client CPU s, stub CPU s) at epoch ``t``, linearly interpolated."""
        s = self.samples
        if t <= s[0][0]:
            return s[0][1], s[0][2]
        for (ta, ca, sa), (tb, cb, sb) in zip(s, s[1:]):
            if ta <= t <= tb:
                f = (t - ta) / (tb - ta) if tb > ta else 1.0
                return ca + f * (cb - ca), sa + f * (sb - sa)
        return s[-1][1], s[-1][2]

    def between(self, t0: float, t1: float) -> tuple[float, float]:
        (c0, s0), (c1, s1) = self.at(t0), self.at(t1)
        return c1 - c0, s1 - s0


@contextmanager
def cell_meters(stub: StubProcess) -> Iterator[tuple[dict, CpuSampler]]:
    """Wall seconds and load average over the ``with`` block (into the yielded dict), and a
    :class:`CpuSampler` running during it."""
    m: dict[str, float] = {}
    w0, l0 = time.perf_counter(), os.getloadavg()[0]
    with CpuSampler(stub) as sampler:
        yield m, sampler
    m.update(run_wall_s=time.perf_counter() - w0, loadavg_1m_before=l0, loadavg_1m_after=os.getloadavg()[0])


def steady_state(units: list[list[dict]], c: int) -> tuple[float, int, list[tuple[float, float]]]:
    """``(seconds, calls, windows)`` of the windows in which ``min(c, len(units))`` units (games, characters)
    are running at once, a unit running from its first call's start to its last call's end; calls
    are counted by their end. The rate over these windows leaves out ramp-up and the tail."""
    k = min(c, len(units))
    spans = []
    for u in units:
        if u:
            t0, t1, _ = calling_phase(u)
            spans.append((t0, t1))
    events = sorted([(t0, 1) for t0, _ in spans] + [(t1, -1) for _, t1 in spans])
    windows, running, opened = [], 0, None
    for t, d in events:
        running += d
        if running >= k and opened is None:
            opened = t
        elif running < k and opened is not None:
            windows.append((opened, t))
            opened = None
    ends = sorted(dt.datetime.fromisoformat(x["started_at"]).timestamp() + x["latency_s"] for u in units for x in u)
    seconds = sum(b - a for a, b in windows)
    calls = sum(bisect.bisect_right(ends, b) - bisect.bisect_left(ends, a) for a, b in windows)
    return seconds, calls, windows


def configure(connections: int) -> Any:
    from mas_agents import remote
    from mas_agents.remote import endpoints

    endpoints.configure(structured="prompt", max_connections=connections)
    return endpoints.endpoint(os.environ["OPENAI_BASE_URL"]).limiter


def summarise_cell(kind: str, c: int, units: list[list[dict]], meters: dict, sampler: CpuSampler, limiter: Any,
                   latency: float, bound_s: float, **extra: Any) -> dict:
    """The numbers of one cell (see the module docstring for the definitions); ``units`` are the
    calls of each game or character."""
    calls = [x for u in units for x in u]
    parallelism = PLAYERS * len(units) if kind == "wis" else len(units)
    t0, t1, phase_s = calling_phase(calls)
    steady_s, steady_calls, windows = steady_state(units, c)
    steady_cpu = sum(sampler.between(a, b)[0] for a, b in windows)
    n = len(calls)
    rate = n / phase_s if phase_s > 0 else math.nan
    lat = [x["latency_s"] for x in calls]
    client_cpu, stub_cpu = sampler.between(t0, t1)
    out = {"workload": kind, "connections": c, "calls": n, "failed_calls": sum(1 for x in calls if not x["ok"]),
           "calling_phase_s": round(phase_s, 3), "calls_per_s": round(rate, 2),
           "limiter_peak_in_flight": limiter.peak, "limiter_completed": limiter.completed,
           "achievable_parallelism": parallelism,
           "latency_ms_median": round(1000 * statistics.median(lat), 3), "latency_ms_p95": round(1000 * pct(lat, 0.95), 3),
           **{k: round(v, 3) for k, v in meters.items()},
           "client_cpu_phase_s": round(client_cpu, 3), "stub_cpu_phase_s": round(stub_cpu, 3),
           "client_cpu_cores": round(client_cpu / phase_s, 3) if phase_s > 0 else None,
           "client_cpu_ms_per_call": round(1000 * client_cpu / n, 3) if n else None,
           "stub_cpu_ms_per_call": round(1000 * stub_cpu / n, 3) if n else None,
           "cpu_ceiling_calls_per_s": round(n / client_cpu, 1) if client_cpu > 0 else None,
           "steady_s": round(steady_s, 3), "steady_calls": steady_calls,
           "steady_calls_per_s": round(steady_calls / steady_s, 2) if steady_s > 0 else None,
           "steady_client_cpu_cores": round(steady_cpu / steady_s, 3) if steady_s > 0 else None, **extra}
    if latency > 0:
        ideal_plain = c / latency
        ideal_par = min(c, parallelism) / latency
        ideal_sched = n / bound_s if bound_s > 0 else math.nan
        out.update(ideal_plain=round(ideal_plain, 2), ideal=round(ideal_par, 2), ideal_schedule=round(ideal_sched, 2),
                   zero_overhead_phase_s=round(bound_s, 3), ratio_plain=round(rate / ideal_plain, 4),
                   ratio=round(rate / ideal_par, 4), ratio_schedule=round(rate / ideal_sched, 4),
                   steady_ratio=round(out["steady_calls_per_s"] / ideal_par, 4) if out["steady_calls_per_s"] else None)
    return out


# ---------------------------------------------------------------------------------------------
# workloads


def wis_stages(calls: list[dict]) -> list[int]:
    """A game's calls as the stages it runs one after another, in the order they were recorded:
    each call that is not a vote is a stage of 1; the votes of one round (consecutive calls with
    the same ``vote...`` purpose) one stage of that many calls, which may run in parallel."""
    stages: list[int] = []
    last = None
    for c in calls:
        p = c["purpose"]
        if p.startswith("vote") and p == last:
            stages[-1] += 1
        else:
            stages.append(1)
        last = p if p.startswith("vote") else None
    return stages


def engine_schedule(games: list[list[int]], c: int, latency: float) -> float:
    """Makespan (s) of ``games`` (each a list of stages, :func:`wis_stages`) with zero overhead
    under the engine's own policy, as the bench runs it (``concurrency = c``, ``c`` connections):
    the games start in order, ``min(c, games)`` at a time (a thread each); a game that starts with
    at least ``c`` games left (itself included) runs a parallel stage ``max(1, c // at_once)``
    calls at a time, the last ``c - 1`` games at full width (:func:`mas_agents.cells.cell_fanout`);
    at most ``c`` calls are in flight (the connection cap), waiting calls are served first come
    first served; every call takes ``latency``.

    The ideal ``c / latency`` assumes ``c`` calls in flight from the first call to the last,
    which no schedule of whole games reaches while the last games run with fewer; this bound says
    how far the policy itself stays below the ideal, and the measured rate over it how much the
    engine's overhead costs."""
    n = len(games)
    at_once = min(c, n)
    plan = []
    for i, st in enumerate(games):
        narrow = n - i >= c and at_once > 1
        width = max(1, c // at_once) if narrow else None
        seq: list[int] = []
        for k in st:
            if width is None:
                seq.append(k)
            else:
                seq.extend([width] * (k // width) + ([k % width] if k % width else []))
        plan.append(seq)
    queue: collections.deque = collections.deque()
    events: list = []
    stage = [0] * n
    pending = [0] * n
    in_service = 0
    started = 0
    end = 0.0

    def issue(g: int) -> None:
        pending[g] = plan[g][stage[g]]
        queue.extend([g] * pending[g])

    def pump(now: float) -> None:
        nonlocal in_service
        while queue and in_service < c:
            heapq.heappush(events, (now + latency, queue.popleft()))
            in_service += 1

    while started < at_once:
        issue(started)
        started += 1
    pump(0.0)
    while events:
        now, g = heapq.heappop(events)
        in_service -= 1
        end = now
        pending[g] -= 1
        if pending[g] == 0:
            stage[g] += 1
            if stage[g] < len(plan[g]):
                issue(g)
            elif started < n:
                issue(started)
                started += 1
        pump(now)
    return end


def time_wait_sockets(port: int) -> int:
    """TCP sockets in TIME_WAIT to or from ``port`` on 127.0.0.1 (connections closed in the last
    minute): how many connections a cell opened and closed, roughly."""
    n = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if f[3] == "06" and (int(f[1].rsplit(":", 1)[1], 16) == port or int(f[2].rsplit(":", 1)[1], 16) == port):
                n += 1
    return n


def wis_cell(stub: StubProcess, pairs: list[dict], c: int, games: int, latency: float, tmp: Path,
             profile: "ThreadProfile | None" = None) -> dict:
    """One tournament of ``games`` 6-player games (agents ``plain``) on ``c`` threads and ``c``
    connections; returns the cell's numbers."""
    from mas_agents.graphs.wis.tournament import TournamentConfig, run_tournament

    limiter = configure(c)
    d = Path(tempfile.mkdtemp(prefix=f"wis{c}-", dir=tmp))
    tw0 = time_wait_sockets(stub.port)
    with cell_meters(stub) as (m, sampler):
        with (profile.running() if profile else _nothing()):
            run_tournament(TournamentConfig(agents=["plain"], games=games, pairs=pairs, players=PLAYERS, model=MODEL,
                                            speak_timeout=None, concurrency=c, db=d / "board.sqlite", out=d / "out",
                                            seed=0))
    closed = max(0, time_wait_sockets(stub.port) - tw0)
    game_dirs = sorted((d / "out" / "games").iterdir())
    recs = [json.loads((g / "result.json").read_text()) for g in game_dirs]
    per_game = [read_calls([g / "llm_calls.jsonl"]) for g in game_dirs]
    calls = [x for g in per_game for x in g]
    bound = engine_schedule([wis_stages(g) for g in per_game], c, latency) if latency else 0.0
    desc = [x["latency_s"] for x in calls if not x["purpose"].startswith("vote")]
    return summarise_cell(
        "wis", c, per_game, m, sampler, limiter, latency, bound, games=games,
        invalid_actions=sum(r["invalid_actions"] for r in recs), timeouts=sum(r["timeouts"] for r in recs),
        rounds=sum(r["outcome"]["rounds_played"] for r in recs),
        fouls=sum(1 for r in recs for rd in r["rounds"] for x in rd.get("descriptions", []) if x.get("foul")),
        describe_latency_ms_median=round(1000 * statistics.median(desc), 3),
        describe_latency_ms_p95=round(1000 * pct(desc, 0.95), 3),
        connections_closed_approx=closed, run_wall_per_call_ms=round(1000 * m["run_wall_s"] / len(calls), 3))


def wellplay_cell(stub: StubProcess, data_root: Path, c: int, script: str, latency: float, tmp: Path,
                  vectors: str = "process", cache_dir: Path | None = None) -> dict:
    """One ``pp`` WellPlay evaluation of ``script`` with ``c`` characters answering at once.

    ``vectors``: where the retrieval vectors come from. ``process``: whatever this process has
    embedded so far (the in-process cache as earlier cells left it; no disk cache); ``cold``:
    nothing cached, every script chunk and query embedded in the run (the in-process cache
    cleared, ``cache_dir`` an empty folder), as a first evaluation on a machine; ``disk``: read
    from ``cache_dir``, which a ``cold`` cell filled (the in-process cache cleared), as any later
    evaluation in a new process. The disk cache is set through ``MAS_EMBED_CACHE``, which every
    commit since the cache exists reads; the caller's setting is restored afterwards.
    """
    from mas_agents.eval.wellplay.run import WellPlayEvalConfig, run_wellplay_eval, scripts_for
    import mas_agents.memory.embeddings as emb

    user_setting = os.environ.get("MAS_EMBED_CACHE")
    if vectors == "process":
        os.environ["MAS_EMBED_CACHE"] = "off"
    else:
        assert cache_dir is not None, f"a {vectors!r} WellPlay cell needs its cache folder"
        emb._mem_cache.clear()
        os.environ["MAS_EMBED_CACHE"] = str(cache_dir)
    limiter = configure(c)
    d = Path(tempfile.mkdtemp(prefix=f"wp{c}-", dir=tmp))
    tw0 = time_wait_sockets(stub.port)
    try:
        with cell_meters(stub) as (m, sampler):
            res = run_wellplay_eval(WellPlayEvalConfig(data_root=data_root, method="pp", out=d, script=script,
                                                       model=MODEL, seed=0, concurrency=c))
        cpu_run = sampler.between(0.0, math.inf)[0]          # the whole evaluation, builds included
    finally:
        if user_setting is None:
            os.environ.pop("MAS_EMBED_CACHE", None)
        else:
            os.environ["MAS_EMBED_CACHE"] = user_setting
    closed = max(0, time_wait_sockets(stub.port) - tw0)
    calls = read_calls([d / "llm_calls.jsonl"])
    answers = [json.loads(line) for line in (d / "answers.jsonl").read_text().splitlines() if line.strip()]
    scripts, _ = scripts_for(data_root, "pp", script, "en", None)
    per_char = [len(s.questions.get(ch.name, [])) for s in scripts for ch in s.characters]
    per_char = [n for n in per_char if n]
    extra_calls = len(calls) - len(answers)          # re-prompts (0 when every reply parses)
    # the zero-overhead makespan of the characters' chains on c workers in the order the pool
    # takes them: script order before session 14, longest first since; the shorter of the two,
    # so that both commits are held to the same bound (neither is a lower bound in general)
    sched = min(list_schedule([n * latency for n in per_char], c),
                list_schedule(sorted((n * latency for n in per_char), reverse=True), c))
    bound = max(sched, len(calls) * latency / c) if latency else 0.0
    _, _, phase_s = calling_phase(calls)
    owner = {cid: (a["script"], a["character"]) for a in answers for cid in a["call_ids"]}
    by_char: dict[tuple[str, str], list[dict]] = {}
    for x in calls:
        by_char.setdefault(owner.get(x["call_id"], ("?", x["actor"])), []).append(x)
    return summarise_cell(
        "wellplay", c, list(by_char.values()), m, sampler, limiter, latency, bound, script=script,
        characters=len(per_char), vectors=vectors,
        questions=len(answers), abstained=sum(1 for a in answers if a["abstained"]), reprompts=extra_calls,
        build_s=round(m["run_wall_s"] - phase_s, 3), eval_wall_s=res["wall_time_s"], connections_closed_approx=closed,
        run_cpu_s=round(cpu_run, 2), run_cpu_ms_per_call=round(1000 * cpu_run / len(calls), 2),
        phase_wall_per_call_ms=round(1000 * phase_s / len(calls), 3))


@contextmanager
def _nothing() -> Iterator[None]:
    yield


# ---------------------------------------------------------------------------------------------
# overhead of each layer, one call at a time


def layer_overhead(base_url: str, n: int, body: dict) -> dict:
    """Median and p95 ms of ``n`` sequential identical requests through each client layer, from the
    bare socket up to :class:`mas_agents.accounting.AccountedModel` (latency-0 stub)."""
    import httpx2
    import openai
    from langchain_core.messages import HumanMessage, SystemMessage
    from langchain_openai import ChatOpenAI

    from mas_agents.accounting import AccountedModel
    from mas_agents.call_log import CallRecorder
    from mas_agents.llm import make_chat_model

    host_port = base_url.split("//", 1)[1].split("/", 1)[0]
    path = "/v1/chat/completions"
    raw = json.dumps(body).encode()
    msgs = [SystemMessage(content=body["messages"][0]["content"]), HumanMessage(content=body["messages"][1]["content"])]

    conn = http.client.HTTPConnection(host_port)

    def stdlib() -> None:
        conn.request("POST", path, body=raw, headers={"Content-Type": "application/json"})
        json.loads(conn.getresponse().read())

    hc = httpx2.Client(base_url=base_url)               # the HTTP client the openai SDK 3.x uses
    oc = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0)
    lc = ChatOpenAI(model="stub", base_url=base_url, api_key="x", max_retries=0, max_tokens=256)
    configure(1)
    rc = make_chat_model(MODEL)
    acc = AccountedModel(rc, CallRecorder(None), label="stub")
    layers: list[tuple[str, Callable[[], Any]]] = [
        ("http.client (stdlib, keep-alive) + json.loads", stdlib),
        ("httpx2.Client.post + .json()", lambda: hc.post("/chat/completions", content=raw,
                                                           headers={"Content-Type": "application/json"}).json()),
        ("openai SDK chat.completions.create", lambda: oc.chat.completions.create(**body)),
        ("langchain-openai ChatOpenAI.invoke", lambda: lc.invoke(msgs)),
        ("RemoteChat.invoke (ours: limiter, context fit)", lambda: rc.invoke(msgs)),
        ("AccountedModel.chat (ours: + retries, record in memory)",
         lambda: acc.chat(msgs, actor="a", purpose="p", max_tokens=256)),
    ]
    times: dict[str, list[float]] = {name: [] for name, _ in layers}
    for name, fn in layers:                         # warm-up: connections, lazy imports, caches
        for _ in range(min(20, n)):
            fn()
    for _ in range(n):                              # interleaved, so load changes hit every layer alike
        for name, fn in layers:
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    conn.close()
    hc.close()
    return {name: {"n": n, "median_ms": round(1000 * statistics.median(ts), 3), "p95_ms": round(1000 * pct(ts, 0.95), 3)}
            for name, ts in times.items()}


def sample_body() -> dict:
    """A typical WiS description request (the first one of a game), to replay through each layer."""
    return {"model": "stub", "max_tokens": 256, "temperature": 0.7, "stop": ["\n\n"], "messages": [
        {"role": "system", "content": "You are playing the word game \"Who is Spy?\". " + "Rules. " * 90},
        {"role": "user", "content": "What has happened so far:\nHost: Round 1 begins. Speaking order: Player 1, "
                                    "Player 2, Player 3, Player 4, Player 5, Player 6.\n\nYou are Player 1. Your "
                                    "word is \"River\". If the others' descriptions do not fit your word, you may be "
                                    "the spy: then describe vaguely so you blend in.\nRound 1: it is your turn. "
                                    "Describe your secret word in one short sentence, without saying it and without "
                                    "repeating anything said before.\n\nEnd with a line \"Description: ...\" holding "
                                    "your description (never the word itself)."}]}


# ---------------------------------------------------------------------------------------------
# profiling


class ThreadProfile:
    """cProfile of every thread with a per-thread CPU clock (``time.thread_time``), so time a
    thread spends blocked (sockets, locks, the GIL) is not counted. ``with prof.running():``
    profiles the block: the calling thread and every thread started inside it."""

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []
        self._lock = threading.Lock()

    def _new(self) -> cProfile.Profile:
        p = cProfile.Profile(time.thread_time)
        with self._lock:
            self.profiles.append(p)
        return p

    @contextmanager
    def running(self) -> Iterator[None]:
        def hook(*_: Any) -> None:              # first event in a new thread: switch to a profiler
            sys.setprofile(None)
            self._new().enable()

        threading.setprofile(hook)
        main = self._new()
        main.enable()
        try:
            yield
        finally:
            main.disable()
            threading.setprofile(None)

    def stats(self) -> pstats.Stats | None:
        """Every thread's profile merged (None when nothing was profiled)."""
        merged = None
        for p in self.profiles:
            try:
                st = pstats.Stats(p)
            except TypeError:                   # a profiler that saw no call
                continue
            if merged is None:
                merged = st
            else:
                merged.add(st)
        return merged

    def summary(self, calls: int, unprofiled_cpu_ms_per_call: float | None) -> dict:
        """Where the profiled CPU went, per model call: by package (stdlib and builtin time charged
        to the first caller outside them) and through a few boundaries (inclusive time). Shares are
        of the profiled total; ``est_ms`` scales a share by the unprofiled CPU per call (the
        profiler inflates many small calls more than few big ones: an estimate)."""
        st = self.stats()
        if st is None:
            return {}
        raw = st.stats
        total = sum(v[2] for v in raw.values())
        groups: dict[str, float] = {}

        unattributed = "stdlib / builtins (no caller outside them: thread start-up, imports)"
        memo: dict[tuple, dict[str, float]] = {}

        def dist(func: tuple) -> dict[str, float]:
            """How ``func``'s own time splits over groups (a stdlib/builtin function's time goes to
            its callers, in proportion to the time each caller's calls took)."""
            if func in memo:
                return memo[func]
            g = group_of(func[0])
            if g is not None:
                memo[func] = {g: 1.0}
                return memo[func]
            memo[func] = {unattributed: 1.0}          # provisional: cuts call cycles
            callers = raw.get(func, (0, 0, 0, 0, {}))[4]
            weights = {k: v[2] for k, v in callers.items() if v[2] > 0 and k != func}
            wsum = sum(weights.values())
            if wsum:
                out: dict[str, float] = {}
                for k, w in weights.items():
                    for grp, f in dist(k).items():
                        out[grp] = out.get(grp, 0.0) + f * w / wsum
                memo[func] = out
            return memo[func]

        for func, (_, _, tt, _, _) in raw.items():
            if tt > 0:
                for g, f in dist(func).items():
                    groups[g] = groups.get(g, 0.0) + tt * f

        def est(share: float) -> float | None:
            return round(share * unprofiled_cpu_ms_per_call, 3) if unprofiled_cpu_ms_per_call else None

        by_group = [{"group": g, "share": round(v / total, 4), "profiled_ms_per_call": round(1000 * v / calls, 3),
                     "est_ms_per_call": est(v / total)} for g, v in sorted(groups.items(), key=lambda kv: -kv[1])]
        bounds = []
        for label, file_end, name in BOUNDARIES:
            ct = max((v[3] for (f, _, fn), v in raw.items() if fn == name and f.endswith(file_end)), default=0.0)
            bounds.append({"what": label, "share": round(ct / total, 4), "profiled_ms_per_call": round(1000 * ct / calls, 3),
                           "est_ms_per_call": est(ct / total)})
        top = sorted(raw.items(), key=lambda kv: -kv[1][2])[:12]
        top_funcs = [{"function": f"{short_path(f)}:{line}({fn})", "share": round(v[2] / total, 4),
                      "est_ms_per_call": est(v[2] / total)} for (f, line, fn), v in top]
        return {"calls": calls, "profiled_cpu_s": round(total, 3), "profiled_cpu_ms_per_call": round(1000 * total / calls, 3),
                "unprofiled_cpu_ms_per_call": unprofiled_cpu_ms_per_call, "by_package": by_group, "boundaries": bounds,
                "top_functions_own_time": top_funcs}


#: Inclusive-time boundaries reported by :meth:`ThreadProfile.summary`: (label, file suffix, function).
BOUNDARIES = (
    ("AccountedModel.chat: one model call, every layer below", "mas_agents/accounting.py", "chat"),
    ("langchain-core BaseChatModel.invoke (callbacks, RemoteChat._generate, langchain-openai)",
     "langchain_core/language_models/chat_models.py", "invoke"),
    ("openai SDK Completions.create", "openai/resources/chat/completions/completions.py", "create"),
    ("openai SDK maybe_transform (request params walked against their TypedDicts)", "openai/_utils/_transform.py",
     "maybe_transform"),
    ("RemoteChat.invoke (our fast path past langchain-core's run bookkeeping, and the call below)",
     "mas_agents/remote/chat.py", "invoke"),
    ("DirectPost.post (the body posted directly: JSON, headers, http.client or urllib3, socket)", "mas_agents/remote/transport.py", "post"),
    ("httpx2 Client.send (HTTP/1.1 over the pool: httpcore2, h11, socket)", "httpx2/_client.py", "send"),
    ("httpcore2 ConnectionPool._assign_requests_to_connections (walks every pooled connection, twice per request)",
     "httpcore2/_sync/connection_pool.py", "_assign_requests_to_connections"),
    ("EndpointLimiter.__enter__ (waiting for a connection slot; CPU only)", "mas_agents/remote/limits.py", "__enter__"),
    ("CallRecorder.record (llm_calls.jsonl line, queued to the writer thread)", "mas_agents/call_log.py", "record"),
    ("the writer thread's batches (mas_agents.appender)", "mas_agents/appender.py", "_run"),
    ("mas_agents.graphs.wis.graph.build_graph, once per game (langgraph walks node bytecode with dis)", "graphs/wis/graph.py",
     "build_graph"),
    ("importlib.metadata.version (rundir.versions(), per game config.json)", "importlib/metadata/__init__.py",
     "version"),
    ("Leaderboard.add_game (SQLite, per game)", "graphs/wis/leaderboard.py", "add_game"),
)
OURS = ("mas_agents", "graphs", "eval", "memory", "planners")   # the repository's top-level folders


def short_path(file: str) -> str:
    """A profile entry's file, shortened: ``pkg/mod.py`` for site-packages, repo-relative for ours."""
    if "site-packages/" in file:
        return file.split("site-packages/", 1)[1]
    if file.startswith(str(REPO) + "/"):
        return file[len(str(REPO)) + 1:]
    if "/lib/python3" in file:
        return "stdlib/" + file.split("/lib/python3", 1)[1].split("/", 1)[-1]
    return file


def group_of(file: str) -> str | None:
    """A profile entry's group: ``ours: <package>``, a third-party package, or None for the stdlib
    and builtins (whose time :meth:`ThreadProfile.summary` charges to their callers)."""
    if file == "~" or file.startswith("<"):
        return None
    parts = Path(file).parts
    if "site-packages" in parts:
        i = parts.index("site-packages")
        top = parts[i + 1].split(".")[0] if len(parts) > i + 1 else file
        if top in ("typing_extensions", "_distutils_hack"):
            return None
        return {"pydantic_core": "pydantic", "httpcore2": "httpx2 + httpcore2 + h11", "httpx2": "httpx2 + httpcore2 + h11",
                "h11": "httpx2 + httpcore2 + h11"}.get(top, top)
    try:
        rel = Path(file).resolve().relative_to(REPO)
    except ValueError:
        return None                             # the standard library
    if rel.parts and rel.parts[0] in OURS:
        return f"ours: {rel.parts[0]}"
    return f"other: {rel.parts[0]}" if rel.parts else None


# ---------------------------------------------------------------------------------------------
# main


def machine_facts() -> dict:
    from importlib import metadata

    vers = {"python": platform.python_version()}
    for name in ("openai", "langchain-openai", "langchain-core", "langgraph", "httpx2", "httpcore2", "h11", "httpx",
                 "sentence-transformers", "faiss-cpu", "torch"):
        try:
            vers[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "nproc": os.cpu_count(),
            "platform": platform.platform(), "versions": vers}


def wis_games(c: int, args: argparse.Namespace) -> int:
    """Games of the WiS cell at ``c`` connections."""
    return max(args.wis_min_games, min(args.wis_games_per_connection * c, args.wis_max_games))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency", type=float, default=0.3, help="stub latency in seconds for the throughput cells")
    ap.add_argument("--connections", default="1,8,64,256", help="comma-separated C: connections = threads")
    ap.add_argument("--wis-games-per-connection", type=int, default=3,
                    help="WiS games per cell = max(--wis-min-games, min(this x C, --wis-max-games))")
    ap.add_argument("--wis-min-games", type=int, default=2)
    ap.add_argument("--wis-max-games", type=int, default=256)
    ap.add_argument("--wellplay-c1-script", default="Riverside Inn",
                    help="the one script the C=1 WellPlay cell answers (all 12 take 1482 x latency s)")
    ap.add_argument("--wellplay-vectors", default="process",
                    help="comma-separated: where the C>1 WellPlay cells' vectors come from, each a cell: "
                         "process (this process's cache as left by earlier cells), cold (nothing cached), "
                         "disk (the disk cache the last cold cell filled; a new process's second run)")
    ap.add_argument("--overhead-games", type=int, default=6, help="sequential WiS games on the latency-0 stub")
    ap.add_argument("--overhead-wellplay-script", default="all",
                    help="script(s) of the sequential WellPlay run on the latency-0 stub")
    ap.add_argument("--layer-calls", type=int, default=1000, help="requests per client layer (latency-0 stub)")
    ap.add_argument("--profile-connections", type=int, default=64,
                    help="also profile a WiS tournament at this C (0: none), after the measured cells")
    ap.add_argument("--profile-games", type=int, default=48, help="games of that profiled tournament")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: layers,overhead,wis,wellplay,profile")
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--results", type=Path, default=REPO / "benchmarks" / "results", help="output folder")
    args = ap.parse_args(argv)
    conns = [int(x) for x in args.connections.split(",") if x.strip()]
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    wp_vectors = [v.strip() for v in args.wellplay_vectors.split(",") if v.strip()]
    bad = [v for v in wp_vectors if v not in ("process", "cold", "disk")]
    if bad:
        ap.error(f"--wellplay-vectors: unknown {', '.join(map(repr, bad))}; expected process, cold or disk")
    if "disk" in wp_vectors and "cold" not in wp_vectors[:wp_vectors.index("disk")]:
        ap.error("--wellplay-vectors: a disk cell reads what a cold cell before it wrote (e.g. cold,disk)")

    import logging
    logging.basicConfig(level=logging.WARNING)
    from mas_agents.game.data import resolve_data_dir
    from mas_agents.graphs.wis.dataset import load_pairs

    data_root = resolve_data_dir(args.data_dir)
    pairs = load_pairs(data_root, "en")
    out: dict[str, Any] = {**machine_facts(), "command": " ".join(["benchmarks/bench_throughput.py", *(argv if argv is not None else sys.argv[1:])]),
                           "latency_s": args.latency, "connections": conns,
                           "loadavg_1m_start": os.getloadavg()[0], "model": MODEL, "structured": "prompt",
                           "targets": {"ratio_at_64": TARGET_RATIO, "overhead_median_ms": TARGET_OVERHEAD_MS}}
    t_start = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t_start:6.1f}s] {msg}", flush=True)

    with tempfile.TemporaryDirectory(prefix="bench-throughput-") as tmp_s:
        tmp = Path(tmp_s)
        reply_file = tmp / "replies.json"
        reply_file.write_text(json.dumps(reply_table(sorted({w for p in pairs for w in p.values()}))))
        # ---- overhead: latency 0, one call at a time
        with StubProcess(0.0, reply_file) as stub:
            os.environ["OPENAI_BASE_URL"] = stub.base_url
            os.environ.pop("OPENAI_API_KEY", None)
            if "layers" not in skip:
                log("layers")
                out["layers"] = layer_overhead(stub.base_url, args.layer_calls, sample_body())
            if "overhead" not in skip:
                log("overhead: sequential WiS (one warm-up game first)")
                wis_cell(stub, pairs, 1, 1, 0.0, tmp)
                out["overhead_wis"] = wis_cell(stub, pairs, 1, args.overhead_games, 0.0, tmp)
                log("overhead: sequential WellPlay")
                out["overhead_wellplay"] = wellplay_cell(stub, data_root, 1, args.overhead_wellplay_script, 0.0, tmp)
            if "profile" not in skip:
                log("profile: sequential WiS")
                prof = ThreadProfile()
                cell = wis_cell(stub, pairs, 1, args.overhead_games, 0.0, tmp, profile=prof)
                ref = out.get("overhead_wis", {}).get("client_cpu_ms_per_call")
                out["profile_sequential_wis"] = {"connections": 1, "latency_s": 0.0, "games": args.overhead_games,
                                                 "calls_per_s_under_profiler": cell["calls_per_s"],
                                                 **prof.summary(cell["calls"], ref)}
        # ---- throughput: fixed latency
        with StubProcess(args.latency, reply_file) as stub:
            os.environ["OPENAI_BASE_URL"] = stub.base_url
            cells = []
            if "wis" not in skip:
                for c in conns:
                    g = wis_games(c, args)
                    log(f"WiS C={c}: {g} games")
                    cells.append(wis_cell(stub, pairs, c, g, args.latency, tmp))
                    log(f"  {cells[-1]['calls']} calls, {cells[-1]['calls_per_s']} calls/s")
            if "wellplay" not in skip:
                for c in conns:
                    script = args.wellplay_c1_script if c == 1 else "all"
                    cache_dir = None
                    for vectors in (["process"] if c == 1 else wp_vectors):
                        if vectors == "cold":       # a new empty folder; the disk cells after it read it
                            cache_dir = Path(tempfile.mkdtemp(prefix=f"emb{c}-", dir=tmp))
                        log(f"WellPlay C={c}: {script}, vectors: {vectors}")
                        cells.append(wellplay_cell(stub, data_root, c, script, args.latency, tmp, vectors, cache_dir))
                        log(f"  {cells[-1]['calls']} calls, {cells[-1]['calls_per_s']} calls/s, "
                            f"whole evaluation {cells[-1]['eval_wall_s']:.1f} s")
            out["cells"] = cells
            pc = args.profile_connections
            if pc and "profile" not in skip and "wis" not in skip:
                log(f"profile: WiS C={pc}, {args.profile_games} games")
                prof = ThreadProfile()
                cell = wis_cell(stub, pairs, pc, args.profile_games, args.latency, tmp, profile=prof)
                ref = next((x["client_cpu_ms_per_call"] for x in cells if x["workload"] == "wis"
                            and x["connections"] == pc), None)
                out["profile_wis_concurrent"] = {"connections": pc, "latency_s": args.latency, "games": args.profile_games,
                                                 "calls_per_s_under_profiler": cell["calls_per_s"],
                                                 **prof.summary(cell["calls"], ref)}
    out["loadavg_1m_end"] = os.getloadavg()[0]
    out["total_wall_s"] = round(time.perf_counter() - t_start, 1)
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "throughput.json").write_text(json.dumps(out, indent=2) + "\n")
    md = render_md(out)
    (args.results / "throughput.md").write_text(md)
    print(md)


def _f(x: Any, nd: int = 1) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{nd}f}" if isinstance(x, float) else str(x)


def _pc(x: Any) -> str:
    return "–" if x is None else f"{100 * x:.0f} %"


def render_md(out: dict) -> str:
    """The Markdown report of a run (``out`` as written to throughput.json)."""
    lat = out["latency_s"]
    v = out["versions"]
    cells = out.get("cells", [])
    lines = [f"# LLM call throughput against a stub server ({out['date']})", "",
             f"Stub: `tests/stub_openai.py` in its own process on 127.0.0.1, replies from a generated table that keeps "
             f"every action valid; `remote.configure(structured=\"prompt\", max_connections=C)`, C threads "
             f"(`concurrency=C`). Machine: {out['nproc']} cores, shared (1-min load average {out['loadavg_1m_start']:.2f} "
             f"at the start, {out['loadavg_1m_end']:.2f} at the end); Python {v.get('python')}, openai {v.get('openai')}, "
             f"langchain-openai {v.get('langchain-openai')}, langchain-core {v.get('langchain-core')}, langgraph "
             f"{v.get('langgraph')}, httpx2 {v.get('httpx2')} (the SDK's HTTP client; httpx {v.get('httpx')}). "
             f"Whole run {out['total_wall_s']:.0f} s, run as `flock /tmp/model.lock .venv/bin/python {out['command']}`.", ""]

    # ---- targets
    c64 = {x["workload"]: x for x in cells if x["connections"] == TARGET_RATIO_AT}
    ov = out.get("overhead_wellplay") or {}
    layers = out.get("layers") or {}
    stub_ms = next((x["median_ms"] for k, x in layers.items() if k.startswith("http.client")), None)
    lines += ["## Targets", "", "| target | reached | met |", "|---|---|---|"]
    at64 = [(x, "WiS tournament" if x["workload"] == "wis" else
             f"WellPlay evaluation (vectors: {x.get('vectors', 'process')})")
            for x in cells if x["connections"] == TARGET_RATIO_AT]
    for x, name in at64:
        if x:
            lines.append(f"| ≥ 90 % of ideal at {TARGET_RATIO_AT} in flight, {name} | {x['calls_per_s']:.1f} calls/s = "
                         f"{_pc(x['ratio'])} of {x['ideal']:.0f} (min(C, P) / latency); {_pc(x['ratio_schedule'])} of the "
                         f"zero-overhead schedule bound {x['ideal_schedule']:.0f} | "
                         f"{'yes' if x['ratio'] >= TARGET_RATIO else 'no'} |")
    if ov:
        ours = ov["latency_ms_median"] - stub_ms if stub_ms is not None else None
        lines.append(f"| overhead < {TARGET_OVERHEAD_MS:g} ms median per call | {ov['latency_ms_median']:.2f} ms median, "
                     f"{ov['latency_ms_p95']:.2f} ms p95 (`latency_s` of {ov['calls']} sequential WellPlay calls, "
                     f"stub included); the stub + loopback + a bare stdlib client take {_f(stub_ms, 2)} ms, so ours "
                     f"(RemoteChat + langchain + openai SDK + httpx2) ≈ {_f(ours, 2)} ms | "
                     f"{'yes' if ov['latency_ms_median'] < TARGET_OVERHEAD_MS else 'no'} |")
    lines.append("")

    # ---- throughput
    if cells:
        lines += [f"## Throughput, stub latency {lat * 1000:.0f} ms", "",
                  "calls/s over the calling phase (first call's start to last call's end, from `llm_calls.jsonl`). "
                  "Ideals: C / latency; min(C, P) / latency with P the calls the workload can have in flight "
                  "(WiS 6 x games, WellPlay 68 characters); and the schedule bound, calls over the shortest calling "
                  "phase possible with zero overhead (see the module docstring). Steady: the rate while min(C, units) "
                  "games or characters were running at once (no ramp-up, no tail), and the client's cores then. "
                  "The other CPU columns are over the calling "
                  "phase: cores = CPU seconds / phase seconds of this (client) process; ceiling = calls per client "
                  "CPU second.", "",
                  "| workload | C | work | calls | phase s | calls/s | C/lat | ideal min(C,P)/lat | ratio | schedule bound "
                  "| ratio to bound | steady calls/s (ratio, client cores) | peak in flight | client cores | client CPU ms/call | "
                  "stub CPU ms/call | CPU ceiling calls/s | call latency median / p95 ms | invalid |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for x in cells:
            work = (f"{x['games']} games" if x["workload"] == "wis"
                    else f"{x['characters']} characters" + ("" if x["script"] == "all" else f" ({x['script']})"))
            invalid = (x["invalid_actions"] if x["workload"] == "wis" else x["abstained"])
            lines.append(
                f"| {x['workload']} | {x['connections']} | {work} | {x['calls']} | {x['calling_phase_s']:.1f} | "
                f"{x['calls_per_s']:.1f} | {x['ideal_plain']:.1f} | {x['ideal']:.1f} | {_pc(x['ratio'])} | "
                f"{x['ideal_schedule']:.1f} | {_pc(x['ratio_schedule'])} | {_f(x['steady_calls_per_s'])} "
                f"({_pc(x['steady_ratio'])}, {_f(x.get('steady_client_cpu_cores'), 2)} cores) | "
                f"{x['limiter_peak_in_flight']} | "
                f"{_f(x['client_cpu_cores'], 2)} | {_f(x['client_cpu_ms_per_call'])} | {_f(x['stub_cpu_ms_per_call'], 2)} | "
                f"{_f(x['cpu_ceiling_calls_per_s'], 0)} | {x['latency_ms_median']:.0f} / {x['latency_ms_p95']:.0f} | "
                f"{invalid} |")
        wp = [x for x in cells if x["workload"] == "wellplay"]
        if wp:
            lines += ["", "WellPlay evaluations whole (building every character's memory included): vectors "
                      "`cold` = nothing cached (a first evaluation on a machine), `disk` = read from the disk "
                      "cache the cold cell filled (a later evaluation in a new process), `process` = this "
                      "process's cache as earlier cells left it.", "",
                      "| C | vectors | whole evaluation s | calls | calling phase s | calls/s over the phase (ratio to bound) "
                      "| client CPU s, whole | client CPU ms/call, whole |",
                      "|---|---|---|---|---|---|---|---|"]
            for x in wp:
                lines.append(f"| {x['connections']} | {x.get('vectors', 'process')} | {x['eval_wall_s']:.1f} | {x['calls']} | "
                             f"{x['calling_phase_s']:.1f} | {x['calls_per_s']:.1f} ({_pc(x['ratio_schedule'])}) | "
                             f"{_f(x.get('run_cpu_s'))} | {_f(x.get('run_cpu_ms_per_call'))} |")
        if any(x["workload"] == "wis" for x in cells):
            lines += ["", "WiS: " + ", ".join(
                f"C={x['connections']} {x['rounds']} rounds, {x['fouls']} fouls, {x['timeouts']} timeouts, "
                f"~{x['connections_closed_approx']} connections closed"
                for x in cells if x["workload"] == "wis") + "."]
        lines.append("")

    # ---- overhead
    if layers or ov:
        lines += [f"## Overhead per call, stub latency 0", ""]
    if layers:
        lines += ["The same request (a WiS description prompt, 1.1 kB) through each layer, one at a time, the layers "
                  f"interleaved ({next(iter(layers.values()))['n']} requests each):", "",
                  "| layer | median ms | p95 ms | added to the layer above it in the table |", "|---|---|---|---|"]
        prev = None
        for name, x in layers.items():
            add = "" if prev is None else f"{x['median_ms'] - prev:+.2f}"
            lines.append(f"| {name} | {x['median_ms']:.2f} | {x['p95_ms']:.2f} | {add} |")
            prev = x["median_ms"]
        lines.append("")
    ow = out.get("overhead_wis")
    if ow or ov:
        lines += ["| run | calls | call `latency_s` median / p95 ms | wall ms per call | client CPU ms per call |",
                  "|---|---|---|---|---|"]
        if ow:
            lines.append(f"| WiS, {ow['games']} games one after another, description calls (one in flight) | "
                         f"{ow['calls']} | {ow['describe_latency_ms_median']:.2f} / {ow['describe_latency_ms_p95']:.2f} | "
                         f"{ow['run_wall_per_call_ms']:.1f} (whole tournament) | {_f(ow['client_cpu_ms_per_call'])} |")
            lines.append(f"| WiS, same games, all calls (a round's votes run in parallel and queue for the one "
                         f"connection) | {ow['calls']} | {ow['latency_ms_median']:.2f} / {ow['latency_ms_p95']:.2f} | | |")
        if ov:
            lines.append(f"| WellPlay `pp`, {ov['characters']} characters one after another | {ov['calls']} | "
                         f"{ov['latency_ms_median']:.2f} / {ov['latency_ms_p95']:.2f} | "
                         f"{ov['phase_wall_per_call_ms']:.1f} (answering phase, which embeds each question for "
                         f"retrieval; memories built before it in {ov['build_s']:.0f} s) | "
                         f"{_f(ov['client_cpu_ms_per_call'])} (torch on both cores) |")
        lines.append("")

    # ---- where the time goes
    lines += ["## Where the time goes", ""]
    wis = {x["connections"]: x for x in cells if x["workload"] == "wis"}
    w64 = c64.get("wis")
    if w64:
        lines.append(f"* **One core, shared by every thread.** At C={TARGET_RATIO_AT} the WiS client process used "
                     f"{w64['client_cpu_cores']:.2f} cores at {w64['client_cpu_ms_per_call']:.1f} ms of CPU per call, "
                     f"which caps it near {w64['cpu_ceiling_calls_per_s']:.0f} calls/s however many connections are "
                     f"open: the threads share one GIL. The ideal {w64['ideal']:.0f} calls/s would need "
                     f"{w64['client_cpu_ms_per_call'] * w64['ideal'] / 1000:.1f} cores at that cost, or at most "
                     f"{1000 / (TARGET_RATIO * w64['ideal']):.1f} ms of CPU per call on one core for "
                     f"{TARGET_RATIO:.0%} of it. The stub used {w64['stub_cpu_ms_per_call']:.2f} ms per call on the "
                     f"other core: it is not the limit.")
        big = max(wis)
        if big > TARGET_RATIO_AT:
            x = wis[big]
            lines.append(f"* At C={big} the WiS rate stays at that ceiling ({x['calls_per_s']:.1f} calls/s, "
                         f"{x['client_cpu_cores']:.2f} cores, {x['client_cpu_ms_per_call']:.1f} ms CPU per call); the "
                         f"extra connections only queue (call latency median {x['latency_ms_median'] / 1000:.1f} s for a "
                         f"{lat * 1000:.0f} ms server), and about {x['connections_closed_approx']} connections were "
                         f"closed and reopened during the cell (mas_agents.remote sizes each server's pool of idle "
                         f"keep-alive connections to its connection cap; the SDK's default kept 100).")
    if layers:
        names = list(layers)
        med = dict(zip(names, [layers[n]["median_ms"] for n in names]))
        stdlib, ours = med[names[0]], med[names[-1]]
        sdk, lc = med.get(names[2]), med.get(names[3])
        lines.append(f"* **The call itself** (table above, one at a time): {ours:.2f} ms through AccountedModel, of "
                     f"which {stdlib:.2f} ms is the stub, loopback and a bare stdlib client. Our path posts the body "
                     f"directly (`remote.DirectPost`: http.client to a plain http:// server) and skips langchain-core's run bookkeeping when no "
                     f"callback listens, so it does not pass through the openai SDK's request machinery "
                     f"(an SDK `create` call: {sdk:.2f} ms) or `ChatOpenAI.invoke` ({lc:.2f} ms): those rows are "
                     f"what the libraries alone cost, not layers of our call.")
    ps, pcn = out.get("profile_sequential_wis"), out.get("profile_wis_concurrent")
    if ps and w64:
        b = {x["what"].split(" (")[0].split(":")[0]: x for x in ps["boundaries"]}
        call = b["AccountedModel.chat"]
        lines.append(f"* **Around the call** (WiS, profile below): the model call is {_pc(call['share'])} of the "
                     f"client's CPU one game at a time; the rest is the game: langgraph's steps and fan-out, our "
                     f"prompts, parsing, events and records.")
    if ps and pcn:
        hc = {g["group"]: g for g in pcn["by_package"]}
        top = ", ".join(f"{g['group']} {_pc(g['share'])}" for g in pcn["by_package"][:4])
        lines.append(f"* **At C={pcn['connections']}** the CPU goes to {top} (by package, profile below); "
                     f"no single function takes more than a few per cent.")
    w8 = wis.get(8)
    if w8 and w8.get("steady_ratio"):
        lines.append(f"* **Below the CPU ceiling** (WiS C=8: {w8['client_cpu_cores']:.2f} cores) the loss is ramp-down "
                     f"and turn-taking: while all 8 games were running the rate was {w8['steady_calls_per_s']:.1f} "
                     f"calls/s ({_pc(w8['steady_ratio'])} of ideal) against {w8['calls_per_s']:.1f} over the whole "
                     f"phase; a game's next description waits for the previous reply to be processed, and as the "
                     f"last games finish their threads and connections stay idle.")
    wp64 = c64.get("wellplay")
    if wp64:
        lines.append(f"* **WellPlay** at C={TARGET_RATIO_AT}: {wp64['calls_per_s']:.1f} calls/s, "
                     f"{_pc(wp64['ratio_schedule'])} of what its schedule allows: each character answers its own "
                     f"questions in order, so the character with the most questions sets the phase's length "
                     f"(zero-overhead {wp64['zero_overhead_phase_s']:.1f} s, i.e. {wp64['ideal_schedule']:.0f} "
                     f"calls/s), and in the ramp-down to that last character connections stay idle. While "
                     f"{min(TARGET_RATIO_AT, wp64['characters'])} characters were running the rate was "
                     f"{_f(wp64['steady_calls_per_s'])} calls/s ({_pc(wp64.get('steady_ratio'))} of ideal) with the "
                     f"client at {_f(wp64.get('steady_client_cpu_cores'), 2)} cores"
                     + (" -- the same one-core (GIL) ceiling as WiS, reached with retrieval from cached vectors, "
                        "prompt building and the call" if (wp64.get("steady_client_cpu_cores") or 0) >= 0.85 else "")
                     + ". 68 characters is also the most it can keep in flight, so C=256 runs like C=68.")
    for key, title in (("profile_sequential_wis", "sequential WiS games, stub latency 0"),
                       ("profile_wis_concurrent", f"WiS tournament at C={(pcn or {}).get('connections')}, "
                                                  f"stub latency {lat * 1000:.0f} ms")):
        pr = out.get(key)
        if not pr:
            continue
        lines += ["", f"cProfile with a per-thread CPU clock, every thread: {title} ({pr['games']} games, "
                      f"{pr['calls']} calls; {pr['profiled_cpu_ms_per_call']:.1f} ms CPU per call under the profiler "
                      f"against {_f(pr['unprofiled_cpu_ms_per_call'])} without it, so est. ms = share x the "
                      f"unprofiled cost).", "",
                  "| package (stdlib and builtins charged to their caller) | share | est. ms per call |", "|---|---|---|"]
        lines += [f"| {g['group']} | {_pc(g['share'])} | {_f(g['est_ms_per_call'], 2)} |" for g in pr["by_package"][:9]]
        lines += ["", "| inclusive | share | est. ms per call |", "|---|---|---|"]
        lines += [f"| {b['what']} | {_pc(b['share'])} | {_f(b['est_ms_per_call'], 2)} |" for b in pr["boundaries"]]
        if key == "profile_wis_concurrent":
            lines += ["", "| function, own time | share | est. ms per call |", "|---|---|---|"]
            lines += [f"| `{t['function']}` | {_pc(t['share'])} | {_f(t['est_ms_per_call'], 2)} |"
                      for t in pr["top_functions_own_time"][:10]]
    lines += ["", "## Notes", "",
              "* The stub answers instantly after its sleep, so these are upper bounds for a real server; the "
              "replies are short (`Description: ...`, `Vote: Player k`, `Answer: a`), with no reasoning text to parse.",
              "* `latency_s` (what `llm_calls.jsonl` records) is measured around `model.invoke`: it includes the wait "
              "for a connection slot (`EndpointLimiter`) and, under load, for the GIL.",
              "* WiS games are played by `run_tournament` exactly as `mas spy tournament` does (graph, files, SQLite "
              "leaderboard); a game's descriptions are sequential and a round's votes parallel, so C games keep "
              "between C and 5C calls wanting a connection. The C=1 WellPlay cell answers one script only "
              "(all 12 would take 1482 x latency).",
              "* WellPlay vectors are cached in process: only the first WellPlay run (the sequential overhead run) "
              "embeds; later cells find every script chunk and query in the cache, so their calls/s do not include "
              "retrieval embedding. WellPlay can use at most 68 characters at once: C=256 runs like C=68.",
              "* Connections closed: TIME_WAIT sockets on the stub's port after a cell minus before (approximate). "
              "mas_agents.remote keeps as many idle keep-alive connections per server as its connection cap "
              "(the SDK's default client kept at most 100).",
              "* One run, on a shared 2-core machine: four full runs on one afternoon differed by up to ~20 % per cell (other "
              "processes' load), so compare the ratios within one run.",
              "* Under cProfile everything is 3-5x slower, and more so code made of many small calls; the shares are a "
              "guide, the unprofiled CPU per call in the throughput table is the measurement.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
