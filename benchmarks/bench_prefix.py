"""Prompt cost before and after the prefix-caching layout (issue 48): how many prompt tokens the
README demo, one Who-is-Spy game and one MAgIC game send, how many the engine served from its
prefix cache, and how many an ideal prefix cache could have reused; with wall times.

Not a timed test: a benchmark to run by hand on an idle machine (it plays the same games 4 times
on a 135M model: about an hour on 2 cores). It holds the embedded model the whole time, so::

    flock /tmp/model.lock .venv/bin/python benchmarks/bench_prefix.py [--before COMMIT] [--port 8931]

Engines: (a) the embedded model, in the ``mas`` process (``local``); (b) a real
``python -m llama_cpp.server`` on 127.0.0.1 serving the same GGUF with its RAM cache on
(``--cache true``) and ``--n_ctx 8192``, played as ``openai:smol`` with ``--context-window 8192`` and
the paper's retrieval budgets (4,000 / 4,000 tokens: the whole script of every Sin character fits).

Before / after: "before" runs the ``mas`` command of a git worktree of ``--before`` (default
``531ad79``, the commit the issue measured; the old layout, and on (a) only the last prompt's
state kept, and its defaults: ``n_ctx`` 4096, budgets 800 / 500), made under ``/tmp`` and put first on
``PYTHONPATH``; "after" runs this tree (the layout of :mod:`mas_agents.prompts`; on (a) the prefix
cache of ``--prefix-cache-mb``'s default, ``n_ctx`` 8192 and the budgets 4,000 / 4,000, at most 6,000 together, of
:class:`mas_agents.memory.MemorySettings`). On (b) both sides play the paper's budgets, and *served
from cache* comes from the server's own log (:func:`server_cache_share`).
Both are measured by this tree's :func:`mas_agents.game.cost.prompt_cost` on the run directories
(the prompt logs of both commits hold the messages as sent). Each pair runs back to back in one
invocation, so the machine's load is as alike as it gets.

Writes ``benchmarks/results/prefix.md`` (the table) and ``prefix.json`` (every number) beside it.
Errors: a failing ``mas`` command or a server that does not come up ends the run with its
stderr's last lines (exit 1); finished rows are written first.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mas_agents.game.cost import prompt_cost  # noqa: E402

PY = str(ROOT / ".venv" / "bin" / "python")
#: (name, phase to report, argv after ``mas``; {o} = the run's folder, {m} = the model, {b} = budgets)
PLAYS = [
    ("murder mystery (Sin)", "gameplay", "mmg run --script Sin --model {m} {b} --out {o}/sin"),
    ("WellPlay evaluation", "evaluation", "wellplay eval --method session --run {o}/sin --model {m} {b} --out {o}/eval"),
    ("Who is Spy", "gameplay", "spy play --agents plain --seed 0 --model {m} --out {o}/spy"),
    ("MAgIC cost sharing", "gameplay",
     "magic run --scenario cost_sharing --challenger plain --defender plain --settings 0 --model {m} --out {o}/magic"),
]


def worktree(commit: str) -> Path:
    """A detached git worktree of ``commit`` under /tmp (made once, reused)."""
    path = Path(tempfile.gettempdir()) / f"mas-bench-prefix-{commit[:12]}"
    if not path.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), commit], check=True,
                       capture_output=True)
    return path


def run_dirs(out: Path, name: str) -> list[Path]:
    """The game or evaluation folders of one play (a MAgIC run holds its games under games/)."""
    sub = {"murder mystery (Sin)": "sin", "WellPlay evaluation": "eval", "Who is Spy": "spy",
           "MAgIC cost sharing": "magic"}[name]
    d = out / sub
    games = d / "games"
    return sorted(p for p in games.iterdir() if p.is_dir()) if games.is_dir() else [d]


def merged_cost(dirs: list[Path]) -> dict:
    """:func:`prompt_cost` summed over folders (token sums; shares recomputed)."""
    tot = {"calls": 0, "prompt_tokens": 0, "cached_tokens": 0, "reusable_tokens": 0, "cache_in": 0, "rec": 0}
    for d in dirs:
        c = prompt_cost(d)
        tot["calls"] += c["calls"]
        tot["prompt_tokens"] += c["prompt_tokens"]
        tot["cached_tokens"] += c["cached_tokens"]
        tot["reusable_tokens"] += c["reusable_tokens"]
        if c["cached_share"] is not None:
            tot["cache_in"] += c["prompt_tokens"]
        if c["reusable_share"] is not None:
            tot["rec"] += c["prompt_tokens"]
    tot["cached_share"] = tot["cached_tokens"] / tot["cache_in"] if tot["cache_in"] else None
    tot["reusable_share"] = tot["reusable_tokens"] / tot["rec"] if tot["rec"] else None
    return tot


_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit")
_EVAL = re.compile(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")


def server_cache_share(text: str) -> tuple[int, int]:
    """``(served from cache, prompt tokens)`` from a segment of llama_cpp.server's verbose log: per
    request, llama-cpp-python prints ``Llama.generate: N prefix-match hit, remaining M prompt tokens to
    eval`` when it reuses a prefix (its live state, or a state its ``--cache`` RAM cache loaded), and
    then llama.cpp's ``prompt eval time = ... / M tokens``. The server's own account of its reuse: its
    HTTP responses carry no ``cached_tokens``."""
    served = evaluated = 0
    for line in text.splitlines():
        if m := _HIT.search(line):
            served += int(m.group(1))
        elif m := _EVAL.search(line):
            evaluated += int(m.group(1))
    return served, served + evaluated


def play(tree: Path | None, out: Path, model: str, budgets: str, env: dict, rows: list[dict],
         server_log: Path | None = None) -> list[dict]:
    """Every play of :data:`PLAYS` with the ``mas`` of ``tree`` (None: this one) into ``out``; each finished
    row is appended to ``rows`` at once (so a run stopped part-way still reports it); returns ``rows``.
    With ``server_log`` (engine (b)), *served from cache* is read from the part of the server's log the
    play wrote (:func:`server_cache_share`)."""
    for name, phase, argv in PLAYS:
        args = argv.format(o=out, m=model, b=budgets if "{b}" in argv else "").split()
        e = dict(env)
        if tree is not None:
            e["PYTHONPATH"] = str(tree)
        start = server_log.stat().st_size if server_log is not None else 0
        t0 = time.monotonic()
        p = subprocess.run([PY, "-c", "import sys; from mas_agents.cli import app; sys.exit(app())", *args],
                           cwd=tree or ROOT, env=e, capture_output=True, text=True)
        wall = time.monotonic() - t0
        if p.returncode != 0:
            raise RuntimeError(f"mas {' '.join(args[:2])} failed ({p.returncode}): {p.stderr.strip()[-800:]}")
        row = {"play": name, "wall_s": round(wall, 1), **merged_cost(run_dirs(out, name))}
        if server_log is not None:
            with open(server_log, "rb") as fh:
                fh.seek(start)
                served, total = server_cache_share(fh.read().decode("utf-8", "replace"))
            row.update(server_cached_tokens=served, server_prompt_tokens=total,
                       cached_share=served / total if total else None)
        rows.append(row)
        print(f"{out.name}: {rows[-1]}", file=sys.stderr, flush=True)
    return rows


def start_server(port: int, env: dict, log: Path) -> subprocess.Popen:
    """``python -m llama_cpp.server`` with its RAM cache on and n_ctx 8192, once it answers /v1/models.

    Its output goes to ``log`` (a file, never a pipe: with its default ``--verbose true`` the server
    writes about 215 KB to stderr before it listens, which fills a 64 KB pipe nobody reads and blocks it).
    Raises RuntimeError (with the log's tail) if it exits or does not answer within 300 s."""
    from mas_agents.embedded import embedded_model_path
    with open(log, "wb") as fh:
        proc = subprocess.Popen([PY, "-m", "llama_cpp.server", "--model", embedded_model_path(), "--host", "127.0.0.1",
                                 "--port", str(port), "--model_alias", "smol", "--n_ctx", "8192", "--cache", "true"],
                                env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)

    def tail() -> str:
        return log.read_text(encoding="utf-8", errors="replace")[-800:]

    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2).read()
            return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited ({log}): {tail()}")
            time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGTERM)
    raise RuntimeError(f"llama_cpp.server did not answer /v1/models within 300 s ({log}): {tail()}")


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f} %"


def table(results: dict) -> str:
    lines = ["| engine | play | layout | calls | prompt tokens | served from cache | reusable (ideal) | wall s |",
             "|---|---|---|---|---|---|---|---|"]
    for engine, sides in results.items():
        for i, row in enumerate(sides["before"]):
            for side in ("before", "after"):
                if i >= len(sides[side]):
                    lines.append(f"| {engine} | {row['play']} | {side} | not run (stopped) | | | | |")
                    continue
                r = sides[side][i]
                lines.append(f"| {engine} | {r['play']} | {side} | {r['calls']} | {r['prompt_tokens']:,} | "
                             f"{pct(r['cached_share'])} | {pct(r['reusable_share'])} | {r['wall_s']} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", default="531ad79", help="commit of the 'before' layout (a git worktree)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "prefix.md",
                    help="the table (Markdown); the numbers go to the same name with .json")
    ap.add_argument("--port", type=int, default=8931, help="port of the llama_cpp.server (b)")
    ap.add_argument("--engines", default="a,b", help="a (embedded), b (server), or both")
    ap.add_argument("--base-url", help="(b) on this running OpenAI-compatible server instead of starting "
                                       "llama_cpp.server (e.g. a vLLM, or the tests' stub to try the benchmark)")
    ap.add_argument("--default-budgets", action="store_true",
                    help="(b) at the default retrieval budgets (this tree's MemorySettings) instead of the paper's")
    ap.add_argument("--model-name", default="smol", help="the served model's name for (b) (openai:NAME)")
    ap.add_argument("--keep", action="store_true", help="keep the run folders (their path is printed) to read")
    args = ap.parse_args()
    # SIGTERM (e.g. a deadline's kill) ends through the finally below, so finished rows are written
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped by SIGTERM; finished rows written"))
    old = worktree(args.before)
    work = Path(tempfile.mkdtemp(prefix="bench-prefix-"))
    env = {**os.environ, "MAS_DATA_DIR": os.environ.get("MAS_DATA_DIR", str(ROOT.parent / "shared" / "datasets"))}
    results: dict = {}
    try:
        if "a" in args.engines:
            results["(a) embedded"] = sides = {"before": [], "after": []}
            for side, tree in (("before", old), ("after", None)):
                play(tree, work / f"a-{side}", "local", "", env, sides[side])
        if "b" in args.engines:
            log = None if args.base_url else work / "llama_cpp_server.log"
            server = None if log is None else start_server(args.port, env, log)
            try:
                senv = {**env, "OPENAI_BASE_URL": args.base_url or f"http://127.0.0.1:{args.port}/v1"}
                budgets = "" if args.default_budgets else "--script-budget 4000 --dialogue-budget 4000"
                label = (f"(b) {args.base_url}" if args.base_url else "(b) llama_cpp.server --cache true") + \
                    (", default budgets" if args.default_budgets else ", budgets 4000/4000")
                results[label] = sides = {"before": [], "after": []}
                for side, tree in (("before", old), ("after", None)):
                    play(tree, work / f"b-{side}", f"openai:{args.model_name}", budgets, {**senv}, sides[side], log)
            finally:
                if server is not None:
                    os.killpg(server.pid, signal.SIGTERM)
                    server.wait(timeout=30)
    finally:
        results = {k: v for k, v in results.items() if v["before"]}
        if results:
            args.out.with_suffix(".json").write_text(json.dumps(results, indent=1), encoding="utf-8")
            args.out.write_text(
                "# Prompt cost before and after the prefix-caching layout\n\n"
                f"`benchmarks/bench_prefix.py` (before = {args.before}, after = this tree), one run, "
                "2 cores. *Served from cache*: on (a) the engine's own `cached_tokens`; on (b) llama_cpp.server's own "
                "log (`prefix-match hit` tokens / prompt tokens it counted, `server_cache_share`), n/a on a "
                "server given by `--base-url`; *reusable (ideal)*: the prompt tokens an ideal prefix cache could reuse "
                "(`mas_agents.game.cost.prompt_cost`).\n\n" + table(results) + "\n", encoding="utf-8")
        if args.keep:
            print(f"run folders kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
