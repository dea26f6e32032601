"""What the portable llama.cpp build costs: ``bench_llm.py`` on two llama-cpp-python wheels, in one run.

scripts/setup.sh builds llama-cpp-python for x86-64-v3 (``GGML_NATIVE=OFF``, AVX2/FMA/F16C/BMI2,
nothing newer) instead of pip's default ``-march=native`` build (README, "What the set-up does").
This benchmark measures the difference on the machine it runs on: each wheel is unpacked into its
own folder and put first on ``PYTHONPATH`` of a ``benchmarks/bench_llm.py`` subprocess (the rest of
the stack is the venv's), and the builds alternate round by round (A B, B A, ...) so that a change in
the machine's load falls on both. Reported per metric: each build's median over rounds and the
ratio portable / native of the medians (> 1: the portable build is faster for throughputs).

Results go to ``benchmarks/results/llm_build.json`` and ``llm_build.md``.

Usage::

    python benchmarks/bench_build.py --wheel native=/path/native.whl --wheel portable=/path/portable.whl \\
        [--rounds 2] [--threads 2] [--repeats 3]

A native wheel to compare with: ``CMAKE_ARGS=-DGGML_CCACHE=OFF pip wheel --no-deps --no-binary
llama-cpp-python llama-cpp-python==<locked version>`` (pip's default build, i.e. GGML_NATIVE=ON); the
portable one is in ``~/.cache/mas-agents/wheels/``. Never ship the native wheel: it is for this CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import zipfile
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

#: (label, path into bench_llm's per-thread result, higher is better)
METRICS = [
    ("cold prompt tok/s (~300)", ("cold_prompt", "300", "prompt_tok_s"), True),
    ("cold prompt tok/s (~1500)", ("cold_prompt", "1500", "prompt_tok_s"), True),
    ("gen tok/s (short prompt)", ("generation", "short_prompt", "gen_tok_s"), True),
    ("gen tok/s (after ~1500)", ("generation", "after_1500_prompt", "gen_tok_s"), True),
    ("warm 2nd call s", ("warm_prefix", "second_warm_s"), False),
    ("load s", ("load_s",), False),
]


def _get(d: dict, path: tuple[str, ...]) -> float:
    for k in path:
        d = d[k]
    return float(d)


def _system_info(folder: Path) -> str:
    code = "import llama_cpp; print(llama_cpp.llama_print_system_info().decode().strip())"
    env = {**os.environ, "PYTHONPATH": f"{folder}{os.pathsep}{ROOT}"}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


def run_once(folder: Path, threads: str, repeats: int) -> dict:
    """bench_llm.py with the llama_cpp unpacked in ``folder``; its JSON result."""
    with tempfile.TemporaryDirectory() as out:
        env = {**os.environ, "PYTHONPATH": f"{folder}{os.pathsep}{ROOT}"}
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_llm.py"), "--threads", threads,
                        "--repeats", str(repeats), "--out", out], env=env, check=True, stdout=subprocess.DEVNULL)
        return json.loads((Path(out) / "llm.json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", action="append", required=True, help="LABEL=path/to/llama_cpp_python.whl (twice)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", default="2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    wheels = dict(w.split("=", 1) for w in args.wheel)
    if len(wheels) != 2:
        sys.exit("error: give exactly two --wheel LABEL=PATH")
    labels = list(wheels)
    with tempfile.TemporaryDirectory() as tmp:
        folders = {}
        for label, path in wheels.items():
            folders[label] = Path(tmp) / label
            with zipfile.ZipFile(path) as z:
                z.extractall(folders[label])
        info = {label: _system_info(folders[label]) for label in labels}
        runs: dict[str, list[dict]] = {label: [] for label in labels}
        for r in range(args.rounds):
            order = labels if r % 2 == 0 else labels[::-1]
            for label in order:
                print(f"round {r + 1}/{args.rounds}: {label}", file=sys.stderr, flush=True)
                runs[label].append(run_once(folders[label], args.threads, args.repeats))
    threads = [int(t) for t in args.threads.split(",")]
    table = []
    for t in threads:
        for name, path, higher in METRICS:
            vals = {label: [_get(next(x for x in run["by_threads"] if x["threads"] == t), path) for run in runs[label]]
                    for label in labels}
            meds = {label: statistics.median(v) for label, v in vals.items()}
            table.append({"threads": t, "metric": name, "higher_is_better": higher, "values": vals, "medians": meds})
    res = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "wheels": wheels, "system_info": info,
           "rounds": args.rounds, "repeats": args.repeats, "nproc": os.cpu_count(), "platform": platform.platform(),
           "table": table, "runs": runs}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "llm_build.json").write_text(json.dumps(res, indent=2) + "\n")
    a, b = labels
    lines = ["# Portable vs native llama.cpp build (`benchmarks/bench_build.py`)", "",
             f"- date (UTC): {res['date']}; {platform.platform()}, nproc {os.cpu_count()}",
             f"- {args.rounds} rounds, builds alternating; each cell is the median over rounds of "
             f"`bench_llm.py` medians ({args.repeats} repeats each)", ""]
    for label in labels:
        lines.append(f"- **{label}** (`{Path(wheels[label]).name}`): `{info[label]}`")
    lines += ["", f"| threads | metric | {a} | {b} | {b} / {a} | per-round values ({a}; {b}) |", "|---|---|---|---|---|---|"]
    for row in table:
        ma, mb = row["medians"][a], row["medians"][b]
        lines.append(f"| {row['threads']} | {row['metric']} | {ma:.3f} | {mb:.3f} | {mb / ma:.3f} | "
                     f"{', '.join(f'{v:.2f}' for v in row['values'][a])}; {', '.join(f'{v:.2f}' for v in row['values'][b])} |")
    lines += ["", "Throughputs (tok/s): a ratio above 1 means the second build is faster; times (s): below 1. "
              "The machine is shared: compare the ratio with the spread of the per-round values."]
    (args.out / "llm_build.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
