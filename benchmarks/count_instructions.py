"""Instructions per Who-is-Spy model call, counted by callgrind: a measure of the client's CPU
cost that does not move with the machine's load.

This 2-core machine's speed moves by up to 40 % within minutes, so CPU-time pairs cannot show a
3-6 % change; instruction counts of the same commit repeat to 0.05 %
(``benchmarks/results/throughput.md``, session 20). Run under callgrind with collection off;
the script switches it on after two warm-up games (imports, the server probes, first-call
caches) and off after the measured games, so the count is the games' alone::

    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.out \\
        .venv/bin/python benchmarks/count_instructions.py --games 10
    # prints "calls N"; instructions = the "Collected" line valgrind prints, or
    callgrind_annotate /tmp/cg.out | head -20

Instructions a call = collected / N. Every thread of this process is counted (the graph's
vote threads, the writer thread), not the stub (its own process, which callgrind does not
follow) and not the kernel (system calls count as the instructions that make them). The games
are sequential (one connection, zero-latency stub, agents ``plain``): the per-call cost of the
whole stack, game and engine included; at many games in flight the thread hand-offs add cost
this does not see. ``--narrow`` plays each round's votes as a game does at 64 in flight (one
after another on the game's thread): 2,845,519 instructions a call at ``90c7d55`` against
3,452,803 with the votes fanned out as LangGraph tasks (``Send``), and 2,867,554 with them fanned
out inside their step (``mas_agents.graphs.fanout``, session 23). About a minute for 10 games (callgrind
runs code ~50 times slower). Without valgrind the script just plays the games.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import bench_throughput as bt  # noqa: E402


def _collect(on: bool) -> None:
    """Switch callgrind's collection for this process (nothing when not under callgrind)."""
    tool = shutil.which("callgrind_control")
    if tool and "vgpreload" in os.environ.get("LD_PRELOAD", ""):
        subprocess.run([tool, "-i", "on" if on else "off", str(os.getpid())], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=10, help="measured games (after 2 warm-up games)")
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--narrow", action="store_true",
                    help="each round's votes one after another on the game's thread, as a game "
                         "plays while the process has as many games in flight as connections "
                         "(mas_agents.cells.cell_fanout); default: the votes fanned out to helper threads, as one "
                         "game alone plays")
    args = ap.parse_args(argv)
    if args.narrow:
        import mas_agents.cells as cells
        cells.cell_fanout = lambda models: 1
    from mas_agents.game.data import resolve_data_dir
    from mas_agents.graphs.wis.dataset import load_pairs
    from mas_agents.graphs.wis.tournament import TournamentConfig, run_tournament

    pairs = load_pairs(resolve_data_dir(args.data_dir), "en")
    with tempfile.TemporaryDirectory(prefix="mas-instr-") as t:
        tmp = Path(t)
        replies = tmp / "replies.json"
        table = bt.reply_table(sorted({w for p in pairs for w in p.values()}))
        replies.write_text(json.dumps({**table, "default": "?"}), encoding="utf-8")
        with bt.StubProcess(0.0, replies) as stub:
            os.environ["OPENAI_BASE_URL"] = stub.base_url
            os.environ.pop("OPENAI_API_KEY", None)
            bt.configure(1)

            def play(games: int, name: str) -> int:
                out = tmp / name
                run_tournament(TournamentConfig(agents=["plain"], games=games, pairs=pairs, players=bt.PLAYERS,
                                                model=bt.MODEL, speak_timeout=None, concurrency=1,
                                                db=tmp / f"{name}.sqlite", out=out, seed=0))
                return sum(len(g.joinpath("llm_calls.jsonl").read_text(encoding="utf-8").splitlines())
                           for g in (out / "games").iterdir())

            play(2, "warm")
            _collect(True)
            calls = play(args.games, "measured")
            _collect(False)
    print(f"calls {calls}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
