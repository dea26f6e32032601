"""Benchmark of the embedded local model (SmolLM2-135M-Instruct Q4_1 via llama-cpp-python).

Measures, through :class:`mas_agents.local_chat.LocalLlamaChat` (i.e. what the games actually call):

* load time of the GGUF (first ``Llama`` construction);
* cold prompt evaluation throughput (prompt tokens / s) for ~300- and ~1500-token chat prompts, KV
  cache reset before each call, ``max_tokens=1``;
* generation throughput (generated tokens / s) after a short and after a ~1500-token prompt: the
  prompt is first evaluated by a ``max_tokens=1`` call, then the same prompt is sent again with
  ``max_tokens=N`` (all but one prompt token come from the KV cache): ``out_tokens / latency``;
* warm-prefix latency: a second call sharing a ~1500-token system prefix with the first (different
  question) vs. the same call cold; llama-cpp-python re-evaluates only the differing suffix.

Every figure is the median of ``--repeats`` runs (all runs are kept in the JSON). Results go to
``benchmarks/results/llm.json`` and ``benchmarks/results/llm.md``.

Usage: ``python benchmarks/bench_llm.py [--threads 2,1] [--n-ctx 4096] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_core.messages import HumanMessage, SystemMessage  # noqa: E402

from mas_agents.local_chat import LocalLlamaChat
from mas_agents.embedded import embedded_model_path  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
SENTENCES = [
    "At {h} o'clock the butler carried a tray of tea to room {n} and saw the study door ajar.",
    "Witness {n} said the gardener argued with Lord Ashby near the greenhouse about unpaid wages.",
    "The inspector found a torn letter numbered {n}, signed only with the initial M, beside the fireplace.",
    "Miss Clara claims she played the piano from {h} until midnight, but nobody heard the music in hall {n}.",
    "A muddy footprint of size {n} led from the garden window to the locked cabinet of rare poisons.",
]


def filler(tokens: int, model: LocalLlamaChat, question: str, salt: int = 0) -> list:
    """Chat messages (system = story text, human = question) whose formatted prompt is ~``tokens`` long."""
    parts: list[str] = []
    i = 0
    while True:
        parts.append(SENTENCES[i % len(SENTENCES)].format(h=(i + salt) % 12 + 1, n=i * 7 + salt))
        i += 1
        if i % 10 == 0:
            msgs = [SystemMessage(" ".join(parts)), HumanMessage(question)]
            if model.get_num_tokens_from_messages(msgs) >= tokens:
                break
    # trim back to just under the target
    while len(parts) > 1:
        msgs = [SystemMessage(" ".join(parts[:-1])), HumanMessage(question)]
        if model.get_num_tokens_from_messages(msgs) < tokens:
            break
        parts.pop()
    return [SystemMessage(" ".join(parts)), HumanMessage(question)]


def timed(model: LocalLlamaChat, msgs: list, max_tokens: int, cold: bool) -> dict:
    if cold:
        with model.lock():
            model.load().reset()           # forget the KV cache: the whole prompt is evaluated
    t0 = time.perf_counter()
    r = model.invoke(msgs, max_tokens=max_tokens)
    dt = time.perf_counter() - t0
    u = r.usage_metadata
    return {"latency_s": round(dt, 4), "input_tokens": u["input_tokens"], "output_tokens": u["output_tokens"],
            "cache_read": u.get("input_token_details", {}).get("cache_read", 0)}


def med(xs):
    return round(statistics.median(xs), 3)


def bench_threads(threads: int, n_ctx: int, repeats: int, gen_tokens: int) -> dict:
    model = LocalLlamaChat(model_path=embedded_model_path(), n_ctx=n_ctx, n_threads=threads, temperature=0.7,
                           seed=0, max_tokens=gen_tokens)
    t0 = time.perf_counter()
    model.load()
    load_s = time.perf_counter() - t0
    out: dict = {"threads": threads, "load_s": round(load_s, 3), "loadavg_start": os.getloadavg()}

    # cold prompt throughput
    prompt = {}
    for target in (300, 1500):
        runs = [timed(model, filler(target, model, "Who had the key to the cabinet?", salt=r), 1, cold=True)
                for r in range(repeats)]
        prompt[str(target)] = {"prompt_tokens": runs[0]["input_tokens"],
                               "prompt_tok_s": med([x["input_tokens"] / x["latency_s"] for x in runs]),
                               "latency_s": med([x["latency_s"] for x in runs]), "runs": runs}
    out["cold_prompt"] = prompt

    # generation throughput
    gen = {}
    short = [SystemMessage("You are a storyteller."),
             HumanMessage("Write a long, detailed story about a detective solving a murder in an old manor.")]
    for name, make in (("short_prompt", lambda r: short),
                       ("after_1500_prompt", lambda r: filler(1500, model, "Retell the whole story in detail.",
                                                              salt=100 + r))):
        runs = []
        for r in range(repeats):
            msgs = make(r)
            timed(model, msgs, 1, cold=True)                     # evaluate (cache) the prompt
            full = timed(model, msgs, gen_tokens, cold=False)    # re-evaluates 1 token, then generates
            runs.append({"prompt_tokens": full["input_tokens"], "cache_read": full["cache_read"],
                         "output_tokens": full["output_tokens"], "t_gen_s": full["latency_s"],
                         "gen_tok_s": round(full["output_tokens"] / full["latency_s"], 2)})
        gen[name] = {"prompt_tokens": runs[0]["prompt_tokens"],
                     "output_tokens": med([x["output_tokens"] for x in runs]),
                     "gen_tok_s": med([x["gen_tok_s"] for x in runs if x["gen_tok_s"]]), "runs": runs}
    out["generation"] = gen

    # warm prefix: same ~1500-token system prefix, a different question
    runs = []
    for r in range(repeats):
        first = filler(1500, model, "Who had the key to the cabinet?", salt=200 + r)
        second = [first[0], HumanMessage("Where was Miss Clara at midnight?")]
        c1 = timed(model, first, 1, cold=True)
        warm = timed(model, second, 1, cold=False)
        cold = timed(model, second, 1, cold=True)
        runs.append({"prompt_tokens": warm["input_tokens"], "cache_read": warm["cache_read"],
                     "first_cold_s": c1["latency_s"], "second_warm_s": warm["latency_s"],
                     "second_cold_s": cold["latency_s"]})
    out["warm_prefix"] = {"prompt_tokens": runs[0]["prompt_tokens"], "cache_read": runs[0]["cache_read"],
                          "second_warm_s": med([x["second_warm_s"] for x in runs]),
                          "second_cold_s": med([x["second_cold_s"] for x in runs]),
                          "speedup": med([x["second_cold_s"] / x["second_warm_s"] for x in runs]), "runs": runs}
    out["loadavg_end"] = os.getloadavg()
    return out


def write_md(res: dict, path: Path) -> None:
    lines = [
        "# Embedded model benchmark (`benchmarks/bench_llm.py`)",
        "",
        f"- date (UTC): {res['date']}",
        f"- model: `{res['model']}` (trained context {res['n_ctx_train']})",
        f"- llama_cpp_python {res['llama_cpp_version']}, n_ctx {res['n_ctx']}, nproc {res['nproc']}, "
        f"{res['platform']}, python {res['python']}",
        f"- medians of {res['repeats']} runs; cold = KV cache reset before the call; "
        f"prompt tok/s = prompt tokens / latency of a `max_tokens=1` call; "
        f"gen tok/s = output tokens / latency of a `max_tokens={res['gen_tokens']}` call whose prompt is already "
        f"in the KV cache.",
        "",
        "| threads | load s | cold prompt tok/s (~300) | cold prompt tok/s (~1500) | gen tok/s (short prompt) "
        "| gen tok/s (after ~1500) | warm 2nd call s | same call cold s | speedup | load avg (1 min) start/end |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["by_threads"]:
        cp, g, w = r["cold_prompt"], r["generation"], r["warm_prefix"]
        lines.append(
            f"| {r['threads']} | {r['load_s']} | {cp['300']['prompt_tok_s']} ({cp['300']['prompt_tokens']} tok, "
            f"{cp['300']['latency_s']} s) | {cp['1500']['prompt_tok_s']} ({cp['1500']['prompt_tokens']} tok, "
            f"{cp['1500']['latency_s']} s) | {g['short_prompt']['gen_tok_s']} | {g['after_1500_prompt']['gen_tok_s']} "
            f"| {w['second_warm_s']} ({w['cache_read']}/{w['prompt_tokens']} tok cached) | {w['second_cold_s']} "
            f"| {w['speedup']}x | {r['loadavg_start'][0]:.2f} / {r['loadavg_end'][0]:.2f} |")
    lines += ["", "Other processes on the machine distort these numbers (llama.cpp's threads spin at barriers: with "
              "threads = nproc a competing process can halve throughput); the load averages show whether the "
              "machine was otherwise idle.", ""]
    path.write_text("\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", default=f"{os.cpu_count()},1", help="comma-separated thread counts")
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--gen-tokens", type=int, default=128)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    import llama_cpp

    threads = list(dict.fromkeys(int(t) for t in args.threads.split(",")))
    by_threads = []
    for t in threads:
        print(f"benchmarking threads={t} ...", flush=True)
        by_threads.append(bench_threads(t, args.n_ctx, args.repeats, args.gen_tokens))
    probe = LocalLlamaChat(model_path=embedded_model_path(), n_ctx=args.n_ctx, n_threads=threads[0])
    res = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "nproc": os.cpu_count(),
           "llama_cpp_version": llama_cpp.__version__, "model": Path(embedded_model_path()).name,
           "n_ctx": args.n_ctx, "n_ctx_train": probe.n_ctx_train, "repeats": args.repeats,
           "gen_tokens": args.gen_tokens, "platform": platform.platform(), "python": platform.python_version(),
           "by_threads": by_threads}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "llm.json").write_text(json.dumps(res, indent=2) + "\n")
    write_md(res, args.out / "llm.md")
    print((args.out / "llm.md").read_text())


if __name__ == "__main__":
    main()
