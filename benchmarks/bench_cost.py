"""Benchmark: gameplay LLM calls of PLAYER* against the paper's baselines (PLAYER* §4, Table A5).

PLAYER*'s efficiency claim is that it makes the fewest gameplay calls of the methods compared.
Our targets (issue 15): on a 3-round "Sin" game with the embedded model, ``player_star`` makes no
more gameplay calls than the cheapest baseline (werewolf, ocot, thinkthrice) and at most 1.5×
``plain``'s. Calls are counted per seat the method plays: the murderer always plays the fixed
``plain`` agent (PLAYER* §4.1), so its calls are nobody's method cost
(:func:`mas_agents.game.cost.method_seats`).

This script plays nothing: it reads finished game directories, e.g. the cells of

    mas wellplay compare --methods plain,player_star,werewolf,ocot,thinkthrice --script Sin --seeds 1 --out DIR

(``DIR/cells/<method>/131/seed0/game``) or games played one by one with
``mas mmg run --script Sin --agent <method> --seed 0 --rounds 3 --out DIR/cells/<method>/131/seed0/game``
(the same directories, so the compare command reuses them), and writes
``benchmarks/results/cost.json`` and ``cost.md``.

Run: ``.venv/bin/python benchmarks/bench_cost.py DIR [--label TEXT]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

METHODS = ("plain", "player_star", "werewolf", "ocot", "thinkthrice")
BASELINES = ("werewolf", "ocot", "thinkthrice")


def game_cost(game_dir: Path) -> dict:
    """Calls of one finished game: every character's and the method seats' (murderer excluded),
    plus what its result.json says of the readings (sensor / pgm_reading events)."""
    from mas_agents.game.cost import actor_cost, method_seats
    result = json.loads((game_dir / "result.json").read_text())
    seats = method_seats(result["roles"])
    events = [json.loads(x) for x in (game_dir / "events.jsonl").read_text().splitlines() if x.strip()]
    from mas_agents.call_log import read_calls
    purposes: dict[str, int] = {}
    for c in read_calls(game_dir / "llm_calls.jsonl"):
        if c.actor in seats:
            k = c.purpose.split("#")[0]
            purposes[k] = purposes.get(k, 0) + 1
    return {"calls": actor_cost(game_dir / "llm_calls.jsonl", None)["calls"], "seat_purposes": purposes,
            "seat_calls": actor_cost(game_dir / "llm_calls.jsonl", seats)["calls"],
            "sensor_readings": sum(e["kind"] == "sensor" for e in events),
            "invalid_actions": result.get("invalid_actions"), "wall_s": round(result.get("wall_time_s", 0.0), 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path, help="a compare --out directory (holds cells/<method>/131/seed0/game)")
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    rows = {}
    for m in METHODS:
        d = args.root / "cells" / m / "131" / "seed0" / "game"
        if (d / "result.json").exists():
            rows[m] = game_cost(d)
    base = [m for m in BASELINES if m in rows]
    cheapest = min(base, key=lambda m: rows[m]["seat_calls"]) if base else None
    for m, r in rows.items():
        r["vs_plain"] = round(r["seat_calls"] / rows["plain"]["seat_calls"], 3) if "plain" in rows else None
        r["vs_cheapest_baseline"] = round(r["seat_calls"] / rows[cheapest]["seat_calls"], 3) if cheapest else None
    out = {"when": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "label": args.label,
           "root": str(args.root), "cheapest_baseline": cheapest, "methods": rows}
    res = REPO / "benchmarks" / "results"
    (res / "cost.json").write_text(json.dumps(out, indent=1) + "\n")
    lines = [f"# Gameplay calls, 3-round Sin game, embedded model ({out['when']})", "",
             args.label, "",
             "| method | calls (all) | calls (method seats) | ÷ plain | ÷ cheapest baseline | sensor readings | invalid | wall s |",
             "|---|---|---|---|---|---|---|---|"]
    for m, r in rows.items():
        lines.append(f"| {m} | {r['calls']} | {r['seat_calls']} | {r['vs_plain']} | {r['vs_cheapest_baseline']} | "
                     f"{r['sensor_readings']} | {r['invalid_actions']} | {r['wall_s']} |")
    lines += ["", "Method seats' calls by purpose (`llm_calls.jsonl`, murderer excluded; `<purpose>#<attempt>` "
              "counted once per call):", ""]
    lines += [f"- {m}: " + ", ".join(f"{k} {v}" for k, v in sorted(r["seat_purposes"].items())) for m, r in rows.items()]
    if "player_star" in rows and cheapest:
        ps, cb = rows["player_star"]["seat_calls"], rows[cheapest]["seat_calls"]
        lines += ["", f"Cheapest baseline: {cheapest} ({cb} seat calls). player_star {ps}: "
                      f"{'fewer' if ps < cb else 'equal' if ps == cb else 'more'}; target ≤ cheapest baseline "
                      f"{'met' if ps <= cb else 'not met'}, ≤ 1.5 × plain "
                      f"{'met' if 'plain' in rows and ps <= 1.5 * rows['plain']['seat_calls'] else 'not met'}."]
    (res / "cost.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
