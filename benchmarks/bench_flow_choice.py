"""Benchmark: the CPU of the layers above the request, threads against asyncio.

The second half of the engine choice of issue 29, part 1 (the first, the transport alone, is
``bench_engine_choice.py``). An asyncio engine would run every game as a task: LangGraph's
``astream`` with async nodes, and each model call through langchain-core's ``ainvoke``. This
measures what those two layers cost per use, with nothing else in them, against the sync
``stream`` / ``invoke`` the thread engine uses, with G games (or G callers) at once:

* **flow**: a graph shaped like a Who-is-Spy round (``speak`` six times in a row, then a six-way
  ``Send`` fan-out ``vote``, then ``tally``; three rounds), nodes that do nothing but return their
  update. Sync: G threads, each ``graph.stream(..., stream_mode="values")`` with sync nodes (the
  fan-out on LangGraph's thread pool, narrowed to one at a time as ``cells.cell_fanout`` does with
  many games in flight, and at full width). Async: G tasks on one event loop, each
  ``graph.astream`` with async nodes. CPU (user + system) per node run.
* **model call**: a chat model whose reply is ready at once (``_generate`` and ``_agenerate``
  both native, so ``ainvoke`` does not fall back to a thread), called by G threads with
  ``invoke`` or by G tasks with ``ainvoke``, with no callback handler. CPU per call.

Units: microseconds of CPU per node run / per call; ratios async / sync. One run, on a shared
2-core machine: compare within a row. Run::

    flock /tmp/model.lock .venv/bin/python benchmarks/bench_flow_choice.py

Writes ``benchmarks/results/flow_choice.md`` and ``.json`` (``--results DIR`` elsewhere).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import operator
import platform
import resource
import sys
import threading
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SEATS = 6
ROUNDS = 3
#: node runs per game: per round 6 speaks + 6 votes + tally, plus the start node
NODES_PER_GAME = ROUNDS * (SEATS + SEATS + 1) + 1


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def threads_cpu_s(n: int, fn: Any) -> float:
    """CPU seconds of this process while ``n`` threads each run ``fn()`` to the end."""
    threads = [threading.Thread(target=fn) for _ in range(n)]
    c0 = cpu_s()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return cpu_s() - c0


class Round(TypedDict):
    n: int
    round: int
    events: Annotated[list, operator.add]


def _graph(asynchronous: bool):
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send

    def start(s):
        return {"round": 1, "n": 0}

    def speak(s):
        return {"n": s["n"] + 1, "events": [{"kind": "describe", "n": s["n"]}]}

    def vote(arg):
        return {"events": [{"kind": "vote", "voter": arg["voter"]}]}

    def tally(s):
        return {"round": s["round"] + 1, "n": 0, "events": [{"kind": "tally"}]}

    def after_speak(s):
        return "speak" if s["n"] < SEATS else [Send("vote", {"voter": i}) for i in range(SEATS)]

    def after_tally(s):
        return "speak" if s["round"] <= ROUNDS else END

    fns = {"start": start, "speak": speak, "vote": vote, "tally": tally}
    if asynchronous:
        def wrap(f):
            async def node(x):
                return f(x)
            return node
        fns = {k: wrap(f) for k, f in fns.items()}
    g = StateGraph(Round)
    for name, f in fns.items():
        g.add_node(name, f)
    g.add_edge(START, "start")
    g.add_edge("start", "speak")
    g.add_conditional_edges("speak", after_speak, ["speak", "vote"])
    g.add_edge("vote", "tally")
    g.add_conditional_edges("tally", after_tally, ["speak", END])
    return g.compile()


def flow_sync(games: int, width: int | None) -> float:
    """CPU µs per node run: ``games`` threads, each streaming one game."""
    graph = _graph(False)
    cfg: dict[str, Any] = {"recursion_limit": 200}
    if width:
        cfg["max_concurrency"] = width

    def one() -> None:
        for _ in graph.stream({"events": []}, cfg, stream_mode="values"):
            pass
    one()                                                    # warm-up
    return 1e6 * threads_cpu_s(games, one) / (games * NODES_PER_GAME)


def flow_async(games: int) -> float:
    """CPU µs per node run: ``games`` tasks on one loop, each ``astream``-ing one game."""
    graph = _graph(True)

    async def one() -> None:
        async for _ in graph.astream({"events": []}, {"recursion_limit": 200}, stream_mode="values"):
            pass

    async def main() -> float:
        await one()
        c0 = cpu_s()
        await asyncio.gather(*(one() for _ in range(games)))
        return cpu_s() - c0
    return 1e6 * asyncio.run(main()) / (games * NODES_PER_GAME)


def _chat_model():
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class Instant(BaseChatModel):
        """Replies "Vote: Player 2" at once, sync or async (no thread behind ``ainvoke``)."""

        @property
        def _llm_type(self) -> str:
            return "instant"

        def _generate(self, messages, stop=None, run_manager=None, **kw) -> ChatResult:
            return ChatResult(generations=[ChatGeneration(message=AIMessage("Vote: Player 2"))])

        async def _agenerate(self, messages, stop=None, run_manager=None, **kw) -> ChatResult:
            return self._generate(messages)
    return Instant()


def calls_sync(callers: int, per: int) -> float:
    """CPU µs per ``invoke``: ``callers`` threads, ``per`` calls each."""
    from langchain_core.messages import HumanMessage, SystemMessage
    m = _chat_model()
    msgs = [SystemMessage("You play a game."), HumanMessage("Vote for the spy.")]
    m.invoke(msgs)

    def one() -> None:
        for _ in range(per):
            m.invoke(msgs)
    return 1e6 * threads_cpu_s(callers, one) / (callers * per)


def calls_async(callers: int, per: int) -> float:
    """CPU µs per ``ainvoke``: ``callers`` tasks on one loop, ``per`` calls each."""
    from langchain_core.messages import HumanMessage, SystemMessage
    m = _chat_model()
    msgs = [SystemMessage("You play a game."), HumanMessage("Vote for the spy.")]

    async def one() -> None:
        for _ in range(per):
            await m.ainvoke(msgs)

    async def main() -> float:
        await m.ainvoke(msgs)
        c0 = cpu_s()
        await asyncio.gather(*(one() for _ in range(callers)))
        return cpu_s() - c0
    return 1e6 * asyncio.run(main()) / (callers * per)


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", default="1,64", help="games / callers at once, comma-separated")
    ap.add_argument("--repeats", type=int, default=3, help="alternating repeats of every cell")
    ap.add_argument("--calls", type=int, default=200, help="model calls per caller")
    ap.add_argument("--results", type=Path, default=REPO / "benchmarks" / "results")
    args = ap.parse_args(argv)
    from importlib import metadata
    rows: list[dict] = []
    for g in [int(x) for x in args.games.split(",")]:
        cells = {"flow: sync stream, fan-out one at a time": lambda: flow_sync(g, 1),
                 "flow: sync stream, fan-out at full width": lambda: flow_sync(g, None),
                 "flow: async astream, async nodes": lambda: flow_async(g),
                 "model call: invoke": lambda: calls_sync(g, max(1, args.calls // max(1, g // 8))),
                 "model call: ainvoke": lambda: calls_async(g, max(1, args.calls // max(1, g // 8)))}
        got: dict[str, list[float]] = {k: [] for k in cells}
        for _ in range(args.repeats):
            for k, f in cells.items():
                got[k].append(round(f(), 1))
        for k, v in got.items():
            rows.append({"at_once": g, "cell": k, "cpu_us": v, "median_us": sorted(v)[len(v) // 2]})
            print(g, k, v, flush=True)
    out = {"python": platform.python_version(), "langgraph": metadata.version("langgraph"),
           "langchain-core": metadata.version("langchain-core"), "date": time.strftime("%Y-%m-%d"),
           "command": "benchmarks/bench_flow_choice.py " + " ".join(argv if argv is not None else sys.argv[1:]),
           "rows": rows}
    md = render(out)
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "flow_choice.json").write_text(json.dumps(out, indent=2) + "\n")
    (args.results / "flow_choice.md").write_text(md)
    print(md)
    return md


def render(out: dict) -> str:
    lines = [f"# The layers above the request: threads against asyncio ({out['date']})", "",
             f"`{out['command']}`; Python {out['python']}, langgraph {out['langgraph']}, "
             f"langchain-core {out['langchain-core']}. CPU (user + system) of this process per node run "
             "(flow) or per model call, in µs; every cell run in turn, repeats alternating; the median of "
             "the repeats, then each repeat. See the module docstring for what each cell does.", "",
             "| at once | cell | median µs | repeats | async / sync |", "|---|---|---|---|---|"]
    by = {(r["at_once"], r["cell"]): r for r in out["rows"]}
    for r in out["rows"]:
        ratio = ""
        if r["cell"].startswith("flow: async"):
            base = by[(r["at_once"], "flow: sync stream, fan-out one at a time")]["median_us"]
            ratio = f"{r['median_us'] / base:.2f} (against one at a time)"
        if r["cell"] == "model call: ainvoke":
            ratio = f"{r['median_us'] / by[(r['at_once'], 'model call: invoke')]['median_us']:.2f}"
        lines.append(f"| {r['at_once']} | {r['cell']} | {r['median_us']:.0f} | "
                     f"{', '.join(f'{x:.0f}' for x in r['cpu_us'])} | {ratio} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
