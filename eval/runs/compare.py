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
``result.json``, ``report.md`` and ``scores.png`` (weighted score with its 95 % interval and n:
over seeds when there are several, else the cell's interval over questions; a std over one seed is
never shown as ± 0).

Cost (PLAYER* §4, Table A5 "Efficiency and Cost Comparison"): besides every game's total, a
method's gameplay cost is counted over the seats it plays (``game_seat_*``: every character but
the murderer, who plays the fixed ``plain`` agent whatever the method), and set against the
cheapest game-playing baseline (:data:`GAME_BASELINES`) and ``plain`` (:func:`cost_comparison`).
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any, Callable

from mas_agents.eval.metrics.cost import actor_cost, method_seats
from mas_agents.eval.runs.wellplay_eval import CATEGORIES, MODEL_FREE
from mas_agents.eval.stats import Estimate, bootstrap_mean, wilson
from mas_agents.accounting import record_prompts
from mas_agents.cells import default_concurrency, run_cells
from mas_agents.llm import spec_text
from mas_agents.eval.runs.record import NOT_CONFIGURATION, check_same_run, model_fields, recorded_models
from mas_agents.rundir import marks_run, read_json, versions, write_json

EVAL_ONLY = ("pp", "op") + MODEL_FREE
#: The game-playing baselines of PLAYER* §4 (Table A5), in the order a tie for cheapest is broken.
GAME_BASELINES = ("werewolf", "ocot", "thinkthrice")
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


def cell_finished(d: Path) -> bool:
    """Whether the cell in directory ``d`` is done: its evaluation wrote ``eval/result.json``."""
    return (d / "eval" / "result.json").exists()


def run_cell(*, out: Path, method: str, sc: Any, seed: int, data_root: Path, model: Any, lang: str,
             rounds: int, questions: int, settings=None, play: Callable | None = None,
             evaluate: Callable | None = None) -> dict:
    """Play (if needed) and evaluate one cell; returns a summary row. Skips finished work.

    ``play`` / ``evaluate`` default to :func:`mas_agents.eval.runs.mmg_session.play_script` and
    :func:`mas_agents.eval.runs.wellplay_run.run_wellplay_eval` (tests inject fakes through ``model``).
    """
    if play is None:
        from mas_agents.eval.runs.mmg_session import play_script as play
    if evaluate is None:
        from mas_agents.eval.runs.wellplay_run import run_wellplay_eval as evaluate
    d = cell_dir(out, method, sc.id, seed)
    game = d / "game"
    ev = d / "eval"
    if cell_finished(d):
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


def game_seat_cost(game: Path) -> dict | None:
    """The gameplay cost of the seats a method plays in one finished game directory ``game``.

    The seats are the characters whose role in ``game/result.json`` (``roles``: name -> role) is
    not ``"murderer"``: the murderer plays :data:`mas_agents.graphs.mmg.rules.MURDERER_SPEC` whatever the
    method (PLAYER* §4.1), so its calls are not the method's cost. The calls are the lines of
    ``game/llm_calls.jsonl`` whose ``actor`` is one of those seats (every call of the game, a
    resumed game's calls before the resume too; :func:`mas_agents.eval.metrics.cost.actor_cost` over
    :func:`mas_agents.eval.metrics.cost.method_seats`).

    Returns:
        ``{"calls": int, "input_tokens": int, "output_tokens": int}`` (counts, summed over the
        seats), or None when ``result.json`` records no roles (the seats are unknown).
    """
    roles = read_json(game / "result.json").get("roles")
    if not roles:
        return None
    c = actor_cost(game / "llm_calls.jsonl", method_seats(roles))
    return {k: c[k] for k in ("calls", "input_tokens", "output_tokens")}


def summary_row(method: str, sc: Any, seed: int, d: Path) -> dict:
    """One (method, script, seed) row from the cell's result files.

    ``game_calls`` / ``game_*_tokens`` are the game's totals (``game/result.json``, every
    character); ``game_seat_calls`` / ``game_seat_*_tokens`` those of the seats the method plays
    (:func:`game_seat_cost`; 0 for a method that plays no game, None when the seats are unknown).
    ``*_model_s`` is the summed latency of the part's model calls in seconds (every call in
    ``llm_calls.jsonl``, so it includes a game's calls before a resume); ``*_wall_s`` is the
    wall time of the process that finished the part (a resumed game counts only its last run)."""
    ev = read_json(d / "eval" / "result.json")
    row = {"method": method, "script": sc.name, "seed": seed, "weighted_score": ev["weighted_score"],
           "interval": ev.get("interval"),
           "accuracy": ev["accuracy"], "counts": ev.get("counts"),
           "abstained": ev["runs"][0]["abstained"] if ev.get("runs") else 0,
           "eval_calls": ev["llm"]["calls"], "eval_input_tokens": ev["llm"]["input_tokens"],
           "eval_output_tokens": ev["llm"]["output_tokens"], "eval_wall_s": ev["wall_time_s"],
           "eval_model_s": ev["llm"]["latency_s"], "eval_cache_hit": ev["llm"].get("cache_hit"),
           "eval_reusable": (ev["llm"].get("prompt_cost") or {}).get("reusable_share"), "game_reusable": None,
           "game_cache_hit": None, "game_calls": 0, "game_input_tokens": 0, "game_output_tokens": 0, "game_wall_s": 0.0, "game_model_s": 0.0,
           "game_seat_calls": 0, "game_seat_input_tokens": 0, "game_seat_output_tokens": 0,
           "murderer_caught": None, "invalid_actions": None}
    g = d / "game" / "result.json"
    if g.exists():
        gr = read_json(g)
        llm = gr["llm"]
        row.update(game_calls=llm["calls"], game_input_tokens=llm["input_tokens"],
                   game_output_tokens=llm["output_tokens"], game_wall_s=gr["wall_time_s"],
                   game_model_s=llm["latency_s"], game_cache_hit=llm.get("cache_hit"),
                   game_reusable=(llm.get("prompt_cost") or {}).get("reusable_share"),
                   murderer_caught=(gr.get("outcome") or {}).get("murderer_caught"),
                   invalid_actions=gr.get("invalid_actions"))
        seat = game_seat_cost(d / "game")
        row.update({f"game_seat_{k}": None if seat is None else seat[k]
                    for k in ("calls", "input_tokens", "output_tokens")})
    return row


SEAT_KEYS = ("game_seat_calls", "game_seat_input_tokens", "game_seat_output_tokens")


def aggregate(rows: list[dict], methods: list[str]) -> list[dict]:
    """Per method: weighted score mean ± std over seeds (each seed = mean over scripts),
    per-category accuracy means, vote outcome (share of games whose murderer was caught) and
    cost means per game (calls, tokens, wall seconds) for gameplay and evaluation.

    Gameplay cost comes twice: ``game_*`` counts every character of the game, ``game_seat_*``
    only the seats the method plays (mean over the cells whose seats are known; None when none
    is). Each row also gets ``seat_calls_vs_cheapest_baseline`` and ``seat_calls_vs_plain``
    (:func:`cost_comparison`; None for a method that plays no game)."""
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
        agg["weighted_score_interval"] = score_interval(rs, seeds, per_seed)
        agg["accuracy_interval"] = accuracy_intervals(rs)
        caught = [r["murderer_caught"] for r in rs if r["murderer_caught"] is not None]
        agg["murderer_caught"] = statistics.fmean(caught) if caught else None
        agg["murderer_caught_interval"] = wilson(sum(bool(c) for c in caught), len(caught)).to_dict()
        # servers that report no cache, runs without prompt records: None
        for k in ("game_cache_hit", "eval_cache_hit", "game_reusable", "eval_reusable"):
            hits = [r[k] for r in rs if r.get(k) is not None]
            agg[k] = statistics.fmean(hits) if hits else None
        for k in ("game_calls", "game_input_tokens", "game_output_tokens", "game_wall_s", "game_model_s",
                  "eval_calls", "eval_input_tokens", "eval_output_tokens", "eval_wall_s", "eval_model_s", "abstained"):
            agg[k] = statistics.fmean(r[k] for r in rs)
        for k in SEAT_KEYS:
            known = [r[k] for r in rs if r.get(k) is not None]
            agg[k] = statistics.fmean(known) if known else None
        out.append(agg)
    ratios = cost_comparison(out)["ratios"]
    for agg in out:
        agg.update(ratios.get(agg["method"], {"seat_calls_vs_cheapest_baseline": None, "seat_calls_vs_plain": None}))
    return out


def accuracy_intervals(rs: list[dict]) -> dict[str, dict]:
    """Per question category, the answers pooled over a method's cells (every script, seed and
    evaluation run: ``counts`` of each cell's ``eval/result.json``) as a proportion with its Wilson
    95 % interval, n = answers (``Estimate.to_dict()``). Categories without counts (a result written
    before counts were kept) are left out, and the report then prints the bare mean."""
    out = {}
    for c in CATEGORIES:
        cells = [(r.get("counts") or {}).get(c) for r in rs]
        if not cells or any(not isinstance(x, dict) for x in cells):
            continue
        n = sum(int(x.get("n", 0)) for x in cells)
        if n:
            out[c] = wilson(sum(int(x.get("correct", 0)) for x in cells), n).to_dict()
    return out


def accuracy_text(t: dict, c: str) -> str:
    """A category's accuracy in the report: the pooled proportion with its Wilson interval and n
    (:func:`accuracy_intervals`), else the bare mean over cells, else ``-``."""
    iv = (t.get("accuracy_interval") or {}).get(c)
    if iv:
        return Estimate(iv["mean"], iv["low"], iv["high"], iv["n"]).fmt(unit="")
    acc = t.get("accuracy") or {}
    return f"{100 * acc[c]:.1f}" if c in acc else "-"


def score_interval(rs: list[dict], seeds: list[int], per_seed: list[float]) -> dict | None:
    """The 95 % interval of a method's weighted score and its unit (``Estimate.to_dict()`` plus
    ``"unit"``): over seeds (percentile bootstrap of the per-seed means) when there are several;
    with one seed and one script, that cell's own interval over questions (its
    ``eval/result.json``); with one seed and several scripts, a bootstrap over scripts."""
    if len(seeds) > 1:
        return {**bootstrap_mean(per_seed).to_dict(), "unit": "seed"}
    if len(rs) == 1:
        return rs[0].get("interval")
    return {**bootstrap_mean([r["weighted_score"] for r in rs]).to_dict(), "unit": "script"}


def score_text(t: dict, unit_sign: str = "") -> str:
    """``"41.2 [35.0, 47.9] (n=44 questions)"``; a bare mean only for a result.json from before
    intervals were kept."""
    iv = t.get("weighted_score_interval")
    if not iv:
        return f"{100 * t['weighted_score']:.1f}{' ' + unit_sign if unit_sign else ''} (no interval)"
    e = Estimate(**{**{k: iv[k] for k in ("low", "high", "n", "level", "method")}, "mean": t["weighted_score"]})
    text = e.fmt(unit=unit_sign)
    unit = iv.get("unit")
    return text[:-1] + f" {unit}{'s' if e.n != 1 else ''})" if unit and text.endswith(")") else text


def spread_text(t: dict) -> str:
    """The std over seeds, or ``"n=1 seed, no spread"``: a std over one seed is not a ± 0."""
    if t.get("seeds", 0) < 2:
        return f"n={t.get('seeds', 1)} seed, no spread"
    return f"± {100 * t['weighted_score_std']:.1f} (n={t['seeds']} seeds)"


def _caught_text(t: dict) -> str:
    iv = t.get("murderer_caught_interval")
    if t["murderer_caught"] is None:
        return "-"
    if not iv:
        return f"{100 * t['murderer_caught']:.0f} %"
    text = Estimate(**{k: iv[k] for k in ("mean", "low", "high", "n", "level", "method")}).fmt(digits=0)
    return text[:-1] + f" game{'s' if iv['n'] != 1 else ''})"


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def cost_comparison(table: list[dict]) -> dict:
    """Gameplay calls of the methods' own seats set against each other (PLAYER* §4, Table A5).

    Args:
        table: :func:`aggregate` rows (``game_seat_calls`` = mean calls per game by the seats
            the method plays, the murderer's excluded).

    Returns:
        ``{"unit", "cheapest_baseline": method | None, "cheapest_baseline_seat_calls",
        "plain_seat_calls", "player_star_seat_calls", "ratios": {method: {"seat_calls_vs_cheapest_baseline",
        "seat_calls_vs_plain"}}, "player_star_fewer_than": {method: bool},
        "player_star_fewer_than_each_baseline": bool | None}``. The cheapest baseline is the
        game-playing baseline (:data:`GAME_BASELINES`; pp/op/always_a/random play no game) with the
        fewest seat calls, ties broken in that order. Ratios are seat calls / the reference's,
        for every method that played (None when a count is unknown or the reference made none).
        "Fewer" is strictly fewer: equal counts are False. ``player_star_fewer_than_each_baseline``
        is None when player_star or every baseline is missing (or its count unknown).
    """
    seat = {t["method"]: t.get("game_seat_calls") for t in table if is_game_method(t["method"])}
    base = {m: seat[m] for m in GAME_BASELINES if seat.get(m) is not None}
    cheapest = min(base, key=lambda m: (base[m], GAME_BASELINES.index(m))) if base else None
    ps = seat.get("player_star")
    fewer = {m: ps < c for m, c in seat.items() if m != "player_star" and ps is not None and c is not None}
    return {"unit": "gameplay calls per game by the seats the method plays (the murderer's excluded)",
            "cheapest_baseline": cheapest, "cheapest_baseline_seat_calls": base.get(cheapest),
            "plain_seat_calls": seat.get("plain"), "player_star_seat_calls": ps,
            "ratios": {m: {"seat_calls_vs_cheapest_baseline": _ratio(c, base.get(cheapest)),
                           "seat_calls_vs_plain": _ratio(c, seat.get("plain"))} for m, c in seat.items()},
            "player_star_fewer_than": fewer,
            "player_star_fewer_than_each_baseline": all(fewer[m] for m in base) if ps is not None and base else None}


def count_text(x: float) -> str:
    """A mean count as text: ``"33"`` when whole, else one decimal (``"32.5"``)."""
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"


def _times(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}"


def fewer_calls_line(table: list[dict]) -> str:
    """One line: did PLAYER* use strictly fewer gameplay calls than each game-playing baseline?

    Counted over the seats each method plays (``game_seat_calls``, the murderer's ``plain`` seat
    excluded), with the ratios to the cheapest baseline and to ``plain``, then the yes/no against
    every other method that played, e.g. ``"PLAYER* used fewer gameplay calls than each baseline:
    no (player_star 33 per-seat calls; cheapest baseline ocot 33: ratio 1.00; plain 24: ratio 1.38).
    Strictly fewer per-seat calls per game than: plain no (33 vs 24); ocot no (33 vs 33)."``
    """
    others = [t for t in table if is_game_method(t["method"]) and t["method"] != "player_star"]
    if not any(t["method"] == "player_star" for t in table) or not others:
        return "PLAYER* gameplay calls: not compared (player_star or a game-playing baseline is missing)."
    c = cost_comparison(table)
    ps = c["player_star_seat_calls"]
    if ps is None:
        return "PLAYER* gameplay calls: not compared (the games' result.json records no roles, so the seats are unknown)."
    each = c["player_star_fewer_than_each_baseline"]
    head = ("not compared, no baseline (" + ", ".join(GAME_BASELINES) + ") played" if each is None
            else "yes" if each else "no")
    ref = [f"player_star {count_text(ps)} per-seat calls"]
    if c["cheapest_baseline"]:
        ref.append(f"cheapest baseline {c['cheapest_baseline']} {count_text(c['cheapest_baseline_seat_calls'])}: "
                   f"ratio {_times(c['ratios']['player_star']['seat_calls_vs_cheapest_baseline'])}")
    if c["plain_seat_calls"] is not None:
        ref.append(f"plain {count_text(c['plain_seat_calls'])}: ratio {_times(c['ratios']['player_star']['seat_calls_vs_plain'])}")
    parts = [f"{t['method']} {'yes' if c['player_star_fewer_than'][t['method']] else 'no'} "
             f"({count_text(ps)} vs {count_text(t['game_seat_calls'])})" for t in others if t["method"] in c["player_star_fewer_than"]]
    return (f"PLAYER* used fewer gameplay calls than each baseline: {head} ({'; '.join(ref)})."
            + (" Strictly fewer per-seat calls per game than: " + "; ".join(parts) + "." if parts else ""))


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f} %"


def report_md(result: dict) -> str:
    """The Markdown report of a comparison."""
    lines = ["# WellPlay comparison", "",
             f"Scripts: {', '.join(result['scripts'])} ({result['lang']}); seeds: {result['seeds']}; "
             f"model: {result['model']}; rounds {result['rounds']}, questions {result['questions']}; "
             f"scoring strict, options shuffled per seed (same order for every method).", "",
             "| method | weighted [95 % interval] (n) | std over seeds | objective | reasoning | relation | murderer caught | "
             "seat calls | seat tokens in/out | seat calls ÷ cheapest baseline | seat calls ÷ plain | "
             "game calls | game tokens in/out | game model s | eval calls | eval tokens in/out | eval model s | abstained | "
             "cache hit game/eval | ideal-cache reusable game/eval |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for t in result["table"]:
        caught = _caught_text(t)
        seat = ("- | -" if t.get("game_seat_calls") is None else
                f"{count_text(t['game_seat_calls'])} | {t['game_seat_input_tokens']:.0f}/{t['game_seat_output_tokens']:.0f}")
        lines.append(
            f"| {t['method']} | {score_text(t)} | {spread_text(t)} | "
            + " | ".join(accuracy_text(t, c) for c in CATEGORIES)
            + f" | {caught} | {seat} | {_times(t.get('seat_calls_vs_cheapest_baseline'))} | "
              f"{_times(t.get('seat_calls_vs_plain'))} | {t['game_calls']:.0f} | {t['game_input_tokens']:.0f}/{t['game_output_tokens']:.0f} | "
              f"{t['game_model_s']:.0f} | {t['eval_calls']:.0f} | {t['eval_input_tokens']:.0f}/{t['eval_output_tokens']:.0f} | "
              f"{t['eval_model_s']:.0f} | {t['abstained']:.1f} | {_pct(t.get('game_cache_hit'))}/{_pct(t.get('eval_cache_hit'))} | "
              f"{_pct(t.get('game_reusable'))}/{_pct(t.get('eval_reusable'))} |")
    cheapest = (result.get("gameplay_cost") or {}).get("cheapest_baseline")
    lines += ["", result["fewer_calls"], "",
              "Weighted score: the mean over cells with its 95 % percentile-bootstrap interval and n: over seeds "
              "when there are several (n = seeds), else over the questions of the one cell (n = questions, "
              "the cell's eval/result.json) or over scripts. The std over seeds is shown only with two seeds "
              "or more. Objective / reasoning / relation: the answers of every cell and evaluation run pooled, "
              "in percent with a Wilson 95 % interval and n = answers. Murderer caught: the share of games whose vote caught the murderer, with its Wilson "
              "95 % interval and n = games. Chance: always_a and random (when run) answer the same questions "
              "without a model.", "",
              "Costs are means per cell (one game and its evaluation for one script and seed); model s is "
              "the summed latency of the model calls, so it counts a resumed game's calls before the resume "
              "(result.json also keeps each part's wall time, which does not). Seat calls and seat tokens "
              "count the gameplay calls of the seats the method plays, every character but the murderer, who "
              "plays the fixed `plain` agent whatever the method (PLAYER* §4.1): the method's own gameplay cost "
              "(PLAYER* Table A5). Game calls and game tokens count every character, the murderer too. "
              "Seat calls ÷ cheapest baseline / ÷ plain: a method's seat calls over those of the game-playing "
              f"baseline ({', '.join(GAME_BASELINES)}) with the fewest ({cheapest or 'none played'}) and over "
              "plain's. The PLAYER* line compares seat calls, and fewer means strictly fewer (equal counts are "
              "a no). Cache hit: prompt tokens the server served from its prefix cache, "
              "where it reports them (usage.prompt_tokens_details.cached_tokens; the local model's KV-cache "
              "reuse). "
              "Weighted score = Σ w·correct / Σ w, w = 10 / 5 / 2 (PLAYER* §3).", "",
              "![weighted score](scores.png)", ""]
    return "\n".join(lines)


def bar_chart(table: list[dict], path: Path) -> None:
    """Weighted score per method with its 95 % interval as error bars (none where there is no
    interval), as a PNG (matplotlib, Agg backend)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(4, 1.1 * len(table)), 3.5))
    names = [t["method"] for t in table]
    def err(t, side):
        iv = t.get("weighted_score_interval") or {}
        if iv.get("low") is None or iv.get("high") is None:
            return 0.0
        return 100 * max(0.0, (t["weighted_score"] - iv["low"]) if side == 0 else (iv["high"] - t["weighted_score"]))
    ax.bar(names, [100 * t["weighted_score"] for t in table],
           yerr=[[err(t, 0) for t in table], [err(t, 1) for t in table]], capsize=4, color="#4C72B0")
    ax.set_ylabel("weighted score (%)")
    ax.set_ylim(0, 100)
    ax.set_title("WellPlay weighted score (mean, 95 % interval)")
    ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


#: Fields of ``config.json`` a rerun into the same directory may change: it extends the run
#: (the models then follow the methods); see :mod:`mas_agents.eval.runs.record`.
EXTENDS = ("methods", "scripts", "seeds", "models")


@marks_run
def run_compare(*, data_root: Path, out: Path, methods: list[str], scripts: list[Any], seeds: int,
                model: Any = "local", lang: str = "en", rounds: int = 3, questions: int = 1,
                concurrency: int | None = None, settings=None, tick: Callable[[str], None] | None = None,
                play: Callable | None = None, evaluate: Callable | None = None) -> dict:
    """Run every cell (skipping finished ones) and write ``result.json``, ``report.md``, ``scores.png``.

    A rerun into the same ``out`` with other methods, scripts or seeds extends the run: only the
    cells asked are played; ``config.json`` and the result name the union of the stored and asked
    methods, scripts (a stored one is loaded by name), seeds (the larger count) and models, and the
    result counts every finished cell of that union (an unfinished earlier cell is not played unasked).

    Args:
        scripts: loaded :class:`mas_agents.eval.datasets.wellplay.Script` objects.
        seeds: seeds ``0 .. seeds-1``.
        concurrency: cells run at once on the configured executor (:func:`mas_agents.cells.run_cells`:
            threads, or Ray tasks in flight; in one process the local model serialises its own calls, so
            >1 helps remote models only); None = ``--max-connections`` for a remote model, else 1.
        tick: called with a cell label as each cell finishes.

    Raises:
        ValueError: an unknown method.
        RunConflict: ``out`` holds a comparison with another model, lang, rounds or questions
            (:func:`mas_agents.eval.runs.record.check_same_run`; other methods, scripts or seeds extend it).
    """
    check_methods(methods)
    out.mkdir(parents=True, exist_ok=True)
    # every seat of every game and every evaluation runs ``model``; model-free methods none
    used = model_fields([spec_text(model)] if any(m not in MODEL_FREE for m in methods) else [], model)
    config = {"kind": "wellplay-compare", "methods": methods, "scripts": [s.name for s in scripts],
              "seeds": seeds, "model": used.pop("model"), "lang": lang, "rounds": rounds, "questions": questions,
              **used}
    # a rerun may add methods, scripts or seeds (finished cells are reused); the model given
    # (default_model, which every seat runs), lang, rounds and questions must be the same
    stored = check_same_run(out, config, may_differ=EXTENDS, ignore=NOT_CONFIGURATION - {"default_model"})
    asked = [(m, sc, s) for s in range(seeds) for sc in scripts for m in methods]
    # an extending rerun adds to the record: config.json and the result keep what was run before
    # (the union of the stored and asked methods, scripts, seeds and models); only the cells asked
    # now are played, earlier ones count when they are finished (an unfinished one is not played
    # unasked: it is resumed by asking for it again)
    earlier: list = []
    if stored:
        held = set(methods)
        methods = list(methods) + [m for m in stored.get("methods") or [] if m not in held]
        names = {sc.name for sc in scripts}
        from mas_agents.eval.datasets.wellplay import load_script
        scripts = list(scripts) + [load_script(data_root, n, lang) for n in stored.get("scripts") or []
                                   if n not in names]
        seeds = max(seeds, int(stored.get("seeds") or 0))
        wanted = {(m, sc.name, s) for m, sc, s in asked}
        earlier = [(m, sc, s) for s in range(seeds) for sc in scripts for m in methods
                   if (m, sc.name, s) not in wanted and cell_finished(cell_dir(out, m, sc.id, s))]
        config.update(model_fields(recorded_models(stored) + list(config["models"]), model))
        config.update(methods=methods, scripts=[sc.name for sc in scripts], seeds=seeds)
    write_json(out / "config.json", {**config, "record_prompts": record_prompts(), "versions": versions()})
    cells = asked

    def one(cell, root: Path):
        m, sc, s = cell
        return run_cell(out=root, method=m, sc=sc, seed=s, data_root=data_root, model=model, lang=lang,
                        rounds=rounds, questions=questions, settings=settings, play=play, evaluate=evaluate)

    def rel(cell) -> str:
        return cell_dir(Path(), cell[0], cell[1].id, cell[2]).as_posix()

    if concurrency is None:
        from mas_agents.remote import auto_concurrency
        concurrency = default_concurrency([model], auto_concurrency([model]))
    rows = run_cells(cells, one, root=out, rel=rel, models=[model], concurrency=concurrency,
                     finished=lambda c: cell_finished(out / rel(c)),
                     done=(lambda c, r: tick(f"{c[0]} / {c[1].name} / seed {c[2]}")) if tick else None)
    rows = list(rows) + [{**summary_row(m, sc, s, cell_dir(out, m, sc.id, s)), "reused": True}
                         for m, sc, s in earlier]
    table = aggregate(rows, methods)
    result = {"methods": methods, "scripts": [s.name for s in scripts], "seeds": seeds, "lang": lang,
              "model": config["model"], "models": config["models"], "rounds": rounds,
              "questions": questions, "table": table, "cells": rows, "fewer_calls": fewer_calls_line(table),
              "gameplay_cost": cost_comparison(table),
              "reused_cells": sum(1 for r in rows if r.get("reused"))}
    write_json(out / "result.json", result)
    bar_chart(table, out / "scores.png")
    (out / "report.md").write_text(report_md(result), encoding="utf-8")
    return result
