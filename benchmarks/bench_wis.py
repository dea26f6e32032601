"""Benchmark: wall time of one 6-player Who-is-Spy game on the embedded model.

Our target: ``mas spy play`` with the embedded model completes a 6-player game in at
most 60 s on the 2-core machine. This plays ``--games`` games (seeds 0..N-1, word pairs drawn
from the dataset as ``mas spy play`` does) in one process, after loading the model once, and
records per game: wall seconds, rounds played, LLM calls, prompt/completion tokens, timeouts and invalid actions; plus the model load time and the 1-minute load average
before and after (other processes on the 2 cores distort the numbers; llama.cpp busy-waits).

Run: ``.venv/bin/python benchmarks/bench_wis.py [--games 5] [--agents plain]``.
Writes ``benchmarks/results/wis.json`` and ``benchmarks/results/wis.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=5)
    ap.add_argument("--agents", default="plain")
    ap.add_argument("--data-dir", type=Path, default=None)
    args = ap.parse_args()

    from mas_agents.game.data import resolve_data_dir
    from mas_agents.graphs.wis.dataset import load_pairs
    from mas_agents.graphs.wis.session import WisGameConfig, play_game
    from mas_agents.llm import make_chat_model

    root = resolve_data_dir(args.data_dir)
    pairs = load_pairs(root, "en")
    load0 = os.getloadavg()[0]
    from langchain_core.messages import HumanMessage
    t = time.perf_counter()
    make_chat_model("local").invoke([HumanMessage(content="hi")], max_tokens=1)  # the model loads lazily: force it
    load_s = time.perf_counter() - t
    games = []
    specs = [s for s in args.agents.split(",") if s]
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.games):
            pair = random.Random(seed).choice(pairs)
            rec = play_game(Path(tmp) / f"g{seed}", WisGameConfig(agents=[specs[i % len(specs)] for i in range(6)],
                                                                  pair=pair, model="local", seed=seed))
            games.append({"seed": seed, "pair": f"{pair['civilian']}/{pair['spy']}", "wall_s": rec["wall_time_s"],
                          "rounds": rec["outcome"]["rounds_played"], "end": rec["outcome"]["end_reason"],
                          "calls": rec["llm"]["calls"], "input_tokens": rec["llm"]["input_tokens"],
                          "output_tokens": rec["llm"]["output_tokens"],
                          "timeouts": rec["timeouts"], "invalid_actions": rec["invalid_actions"]})
    walls = [g["wall_s"] for g in games]
    out = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "agents": specs,
           "model": "local (SmolLM2-135M-Instruct Q4_1)", "cpu_count": os.cpu_count(),
           "loadavg_1m_before": load0, "loadavg_1m_after": os.getloadavg()[0], "model_load_s": round(load_s, 2),
           "games": games, "wall_s_median": statistics.median(walls), "wall_s_max": max(walls),
           "target_s": 60, "all_within_target": all(w <= 60 for w in walls)}
    res = REPO / "benchmarks" / "results"
    res.mkdir(parents=True, exist_ok=True)
    (res / "wis.json").write_text(json.dumps(out, indent=2) + "\n")
    lines = [f"# Who-is-Spy game wall time ({out['date']})", "",
             f"6 players, agents {', '.join(specs)}, embedded model, {os.cpu_count()} cores; load average "
             f"{load0:.2f} before, {out['loadavg_1m_after']:.2f} after; model load + first call {load_s:.1f} s (once, not in the game times).", "",
             "| seed | pair | wall s | rounds | end | calls | tokens in/out | timeouts | invalid |", "|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {g['seed']} | {g['pair']} | {g['wall_s']:.1f} | {g['rounds']} | {g['end']} | {g['calls']} | "
              f"{g['input_tokens']}/{g['output_tokens']} | {g['timeouts']} | {g['invalid_actions']} |" for g in games]
    lines += ["", f"Median {out['wall_s_median']:.1f} s, max {out['wall_s_max']:.1f} s; target 60 s: "
              f"{'met by every game' if out['all_within_target'] else 'NOT met by every game'}.", ""]
    (res / "wis.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
