"""``mas wellplay compare``: play and evaluate several methods on the same scripts and seeds.

For every (method, seed, script) *cell*:

* an **agent method** (an agent spec such as ``plain``, ``player_star``, ``werewolf``) plays one
  game with that spec for every non-murderer character (the murderer keeps the fixed
  framework, PLAYER* §4.1), then is evaluated with ``session``;
* ``pp`` / ``op`` are evaluated without a game (``plain`` agents);
* ``always_a`` / ``random`` are the model-free baselines.

Every evaluation of seed ``s`` uses ``seed=s``, so all methods see the same option shuffle
(a paired comparison). A cell is finished when its ``eval/result.json`` exists: rerunning the
same command skips finished cells, and a game interrupted mid-way resumes from its checkpoint.

The run directory holds ``cells/<method>/<script id>/seed<s>/{game,eval}/``, plus
``result.json``, ``report.md`` and ``scores.png`` (weighted score, mean ± std over seeds).
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any, Callable

from eval.runs.wellplay_eval import CATEGORIES, MODEL_FREE
from mas_agents.llm import spec_text
from mas_agents.rundir import check_resume, read_json, run_each, versions, write_json

EVAL_ONLY = ("pp", "op") + MODEL_FREE
DEFAULT_METHODS = ("pp", "op", "plain", "player_star", "werewolf", "ocot", "thinkthrice", "always_a", "random")


def is_game_method(method: str) -> bool:
    """True for methods that play a game first (agent specs), False for pp/op/always_a/random."""
    return method not in EVAL_ONLY


def check_methods(methods: list[str]) -> None:
    """Raise ValueError naming any method that is neither an eval method nor a known agent spec."""
    from mas_agents.specs import parse_spec
    for m in methods:
        if m in EVAL_ONLY:
            continue
        try:
            parse_spec(m)
        except ValueError as exc:
            raise ValueError(f"--methods: {m!r} is neither one of {', '.join(EVAL_ONLY)} nor an agent spec ({exc})") from exc


def cell_dir(out: Path, method: str, script_id: str, seed: int) -> Path:
    return out / "cells" / method.replace("+", "_") / script_id / f"seed{seed}"


def run_cell(*, out: Path, method: str, sc: Any, seed: int, data_root: Path, model: Any, lang: str,
             rounds: int, questions: int, settings=None, play: Callable | None = None,
             evaluate: Callable | None = None) -> dict:
    """Play (if needed) and evaluate one cell; returns a summary row. Skips finished work.

    ``play`` / ``evaluate`` default to :func:`eval.runs.mmg_session.play_script` and
    :func:`eval.runs.wellplay_run.run_wellplay_eval` (tests inject fakes through ``model``).
    """
    if play is None:
        from eval.runs.mmg_session import play_script as play
    if evaluate is None:
        from eval.runs.wellplay_run import run_wellplay_eval as evaluate
    d = cell_dir(out, method, sc.id, seed)
    game = d / "game"
    ev = d / "eval"
    if (ev / "result.json").exists():
        return {**summary_row(method, sc, seed, d), "reused": True}
    if is_game_method(method):
        if not (game / "result.json").exists():
            resume = (game / "checkpoints.sqlite").exists()
            play(sc, game, agent=method, model=model, rounds=rounds, questions=questions, seed=seed,
                 lang=lang, resume=resume, settings=settings, data_root=data_root)
        evaluate(data_root=data_root, method="session", out=ev, run=game, lang=lang, model=model, seed=seed,
                 settings=settings)
    else:
        evaluate(data_root=data_root, method=method, out=ev, script=sc.id, lang=lang, model=model, seed=seed,
                 settings=settings)
    return {**summary_row(method, sc, seed, d), "reused": False}


def summary_row(method: str, sc: Any, seed: int, d: Path) -> dict:
    """One (method, script, seed) row from the cell's result files.

    ``*_model_s`` is the summed latency of the part's model calls in seconds (every call in
    ``llm_calls.jsonl``, so it includes a game's calls before a resume); ``*_wall_s`` is the
    wall time of the process that finished the part (a resumed game counts only its last run)."""
    ev = read_json(d / "eval" / "result.json")
    row = {"method": method, "script": sc.name, "seed": seed, "weighted_score": ev["weighted_score"],
           "accuracy": ev["accuracy"], "abstained": ev["runs"][0]["abstained"] if ev.get("runs") else 0,
           "eval_calls": ev["llm"]["calls"], "eval_input_tokens": ev["llm"]["input_tokens"],
           "eval_output_tokens": ev["llm"]["output_tokens"], "eval_wall_s": ev["wall_time_s"],
           "eval_model_s": ev["llm"]["latency_s"], "eval_cache_hit": ev["llm"].get("cache_hit"),
           "game_cache_hit": None, "game_calls": 0, "game_input_tokens": 0, "game_output_tokens": 0, "game_wall_s": 0.0, "game_model_s": 0.0,
           "murderer_caught": None, "invalid_actions": None}
    g = d / "game" / "result.json"
    if g.exists():
        gr = read_json(g)
        llm = gr["llm"]
        row.update(game_calls=llm["calls"], game_input_tokens=llm["input_tokens"],
                   game_output_tokens=llm["output_tokens"], game_wall_s=gr["wall_time_s"],
                   game_model_s=llm["latency_s"], game_cache_hit=llm.get("cache_hit"),
                   murderer_caught=(gr.get("outcome") or {}).get("murderer_caught"),
                   invalid_actions=gr.get("invalid_actions"))
    return row


def aggregate(rows: list[dict], methods: list[str]) -> list[dict]:
    """Per method: weighted score mean ± std over seeds (each seed = mean over scripts),
    per-category accuracy means, vote outcome (share of games whose murderer was caught) and
    cost means per game (calls, tokens, wall seconds) for gameplay and evaluation."""
    out = []
    for m in methods:
        rs = [r for r in rows if r["method"] == m]
        if not rs:
            continue
        seeds = sorted({r["seed"] for r in rs})
        per_seed = [statistics.fmean(r["weighted_score"] for r in rs if r["seed"] == s) for s in seeds]
        agg = {"method": m, "n_cells": len(rs), "seeds": len(seeds),
               "weighted_score": statistics.fmean(per_seed),
               "weighted_score_std": statistics.stdev(per_seed) if len(per_seed) > 1 else 0.0,
               "accuracy": {c: statistics.fmean(r["accuracy"][c] for r in rs if r["accuracy"].get(c) is not None)
                            for c in CATEGORIES if any(r["accuracy"].get(c) is not None for r in rs)}}
        caught = [r["murderer_caught"] for r in rs if r["murderer_caught"] is not None]
        agg["murderer_caught"] = statistics.fmean(caught) if caught else None
        for k in ("game_cache_hit", "eval_cache_hit"):   # servers that report no cache: None
            hits = [r[k] for r in rs if r.get(k) is not None]
            agg[k] = statistics.fmean(hits) if hits else None
        for k in ("game_calls", "game_input_tokens", "game_output_tokens", "game_wall_s", "game_model_s",
                  "eval_calls", "eval_input_tokens", "eval_output_tokens", "eval_wall_s", "eval_model_s", "abstained"):
            agg[k] = statistics.fmean(r[k] for r in rs)
        out.append(agg)
    return out


def fewer_calls_line(table: list[dict]) -> str:
    """One line: did PLAYER* use fewer gameplay LLM calls than each baseline that played?"""
    ps = next((t for t in table if t["method"] == "player_star"), None)
    others = [t for t in table if is_game_method(t["method"]) and t["method"] != "player_star"]
    if ps is None or not others:
        return "PLAYER* gameplay calls: not compared (player_star or a game-playing baseline is missing)."
    parts = [f"{t['method']} {'yes' if ps['game_calls'] < t['game_calls'] else 'no'} "
             f"({ps['game_calls']:.0f} vs {t['game_calls']:.0f})" for t in others]
    return "PLAYER* used fewer gameplay LLM calls per game than: " + "; ".join(parts) + "."


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f} %"


def report_md(result: dict) -> str:
    """The Markdown report of a comparison."""
    lines = ["# WellPlay comparison", "",
             f"Scripts: {', '.join(result['scripts'])} ({result['lang']}); seeds: {result['seeds']}; "
             f"model: {result['model']}; rounds {result['rounds']}, questions {result['questions']}; "
             f"scoring strict, options shuffled per seed (same order for every method).", "",
             "| method | weighted (mean ± std) | objective | reasoning | relation | murderer caught | "
             "game calls | game tokens in/out | game model s | eval calls | eval tokens in/out | eval model s | abstained | "
             "cache hit game/eval |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for t in result["table"]:
        acc = t["accuracy"]
        caught = "-" if t["murderer_caught"] is None else f"{100 * t['murderer_caught']:.0f} %"
        lines.append(
            f"| {t['method']} | {100 * t['weighted_score']:.1f} ± {100 * t['weighted_score_std']:.1f} | "
            + " | ".join(f"{100 * acc[c]:.1f}" if c in acc else "-" for c in CATEGORIES)
            + f" | {caught} | {t['game_calls']:.0f} | {t['game_input_tokens']:.0f}/{t['game_output_tokens']:.0f} | "
              f"{t['game_model_s']:.0f} | {t['eval_calls']:.0f} | {t['eval_input_tokens']:.0f}/{t['eval_output_tokens']:.0f} | "
              f"{t['eval_model_s']:.0f} | {t['abstained']:.1f} | {_pct(t.get('game_cache_hit'))}/{_pct(t.get('eval_cache_hit'))} |")
    lines += ["", result["fewer_calls"], "",
              "Costs are means per cell (one game and its evaluation for one script and seed); model s is "
              "the summed latency of the model calls, so it counts a resumed game's calls before the resume "
              "(result.json also keeps each part's wall time, which does not). Game costs count every "
              "character, the murderer too. Cache hit: prompt tokens the server served from its prefix cache, "
              "where it reports them (usage.prompt_tokens_details.cached_tokens; the local model's KV-cache "
              "reuse). "
              "Weighted score = Σ w·correct / Σ w, w = 10 / 5 / 2 (PLAYER* §3).", "",
              "![weighted score](scores.png)", ""]
    return "\n".join(lines)


def bar_chart(table: list[dict], path: Path) -> None:
    """Weighted score per method with ± std error bars, as a PNG (matplotlib, Agg backend)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(4, 1.1 * len(table)), 3.5))
    names = [t["method"] for t in table]
    ax.bar(names, [100 * t["weighted_score"] for t in table],
           yerr=[100 * t["weighted_score_std"] for t in table], capsize=4, color="#4C72B0")
    ax.set_ylabel("weighted score (%)")
    ax.set_ylim(0, 100)
    ax.set_title("WellPlay weighted score (mean ± std over seeds)")
    ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


RESUME_KEYS = ("model", "lang", "rounds", "questions")


def run_compare(*, data_root: Path, out: Path, methods: list[str], scripts: list[Any], seeds: int,
                model: Any = "local", lang: str = "en", rounds: int = 3, questions: int = 1,
                concurrency: int | None = None, settings=None, tick: Callable[[str], None] | None = None,
                play: Callable | None = None, evaluate: Callable | None = None) -> dict:
    """Run every cell (skipping finished ones) and write ``result.json``, ``report.md``, ``scores.png``.

    Args:
        scripts: loaded :class:`eval.datasets.wellplay.Script` objects.
        seeds: seeds ``0 .. seeds-1``.
        concurrency: cells run at once (threads; the local model serialises its own calls, so
            >1 helps remote models only); None = ``--max-connections`` for a remote model, else 1.
        tick: called with a cell label as each cell finishes.

    Raises:
        ValueError: an unknown method.
    """
    check_methods(methods)
    out.mkdir(parents=True, exist_ok=True)
    check_resume(out, RESUME_KEYS, model=spec_text(model), lang=lang, rounds=rounds,
                 questions=questions)
    write_json(out / "config.json", {"kind": "wellplay-compare", "methods": methods, "scripts": [s.name for s in scripts],
                                     "seeds": seeds, "model": spec_text(model),
                                     "lang": lang, "rounds": rounds, "questions": questions,
                                     "versions": versions()})
    cells = [(m, sc, s) for s in range(seeds) for sc in scripts for m in methods]

    def one(cell):
        m, sc, s = cell
        return run_cell(out=out, method=m, sc=sc, seed=s, data_root=data_root, model=model, lang=lang,
                        rounds=rounds, questions=questions, settings=settings, play=play, evaluate=evaluate)

    if concurrency is None:
        from mas_agents.remote import auto_concurrency
        concurrency = auto_concurrency([model])
    rows = run_each(cells, one, concurrency=concurrency,
                    done=(lambda c, r: tick(f"{c[0]} / {c[1].name} / seed {c[2]}")) if tick else None)
    table = aggregate(rows, methods)
    result = {"methods": methods, "scripts": [s.name for s in scripts], "seeds": seeds, "lang": lang,
              "model": spec_text(model), "rounds": rounds,
              "questions": questions, "table": table, "cells": rows, "fewer_calls": fewer_calls_line(table),
              "reused_cells": sum(1 for r in rows if r.get("reused"))}
    write_json(out / "result.json", result)
    bar_chart(table, out / "scores.png")
    (out / "report.md").write_text(report_md(result), encoding="utf-8")
    return result
