"""The table of a WellPlay comparison (``mas wellplay compare``, :mod:`mas_agents.eval.compare.run`): which
methods play a game, each method's aggregate over its cells with 95 % intervals, and the gameplay
cost of the methods' own seats set against each other (PLAYER* §4, Table A5).
"""

from __future__ import annotations

import statistics

from mas_agents.eval.wellplay.evaluate import CATEGORIES, MODEL_FREE
from mas_agents.stats import bootstrap_mean, wilson

#: The methods evaluated without a game of their own: ``pp``/``op`` and the model-free baselines.
EVAL_ONLY = ("pp", "op") + MODEL_FREE
#: The game-playing baselines of PLAYER* §4 (Table A5), in the order a tie for cheapest is broken.
GAME_BASELINES = ("werewolf", "ocot", "thinkthrice")
#: How :func:`aggregate` makes a seed's weighted score from its scripts, named wherever a
#: comparison's weighted score is shown (report, chart, runs list): every script counts the same
#: whatever its size. Not PLAYER* App. B.3's pooled aggregation (Σ points won / Σ points possible
#: over the scripts), which ``mas reproduce player-star`` leads with
#: (:func:`mas_agents.eval.reproduce.player_star_numbers.pooled_aggregate`).
SCORE_AGGREGATION = "plain mean over scripts"


def is_game_method(method: str) -> bool:
    """True for methods that play a game first (agent specs), False for pp/op/always_a/random."""
    return method not in EVAL_ONLY


SEAT_KEYS = ("game_seat_calls", "game_seat_input_tokens", "game_seat_output_tokens")


def aggregate(rows: list[dict], methods: list[str]) -> list[dict]:
    """Per method: weighted score mean ± std over seeds (each seed = the plain mean over its
    scripts' scores, :data:`SCORE_AGGREGATION`),
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
