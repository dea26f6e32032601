"""The report of a WellPlay comparison (:mod:`mas_agents.eval.compare.run`): the numbers of its table
(:mod:`mas_agents.eval.compare.table`) as text, ``report.md`` and the ``scores.png`` chart.

``matplotlib`` is imported inside :func:`bar_chart` only (a heavy dependency the text does not need).
"""

from __future__ import annotations

from pathlib import Path

from mas_agents.eval.compare.table import GAME_BASELINES, SCORE_AGGREGATION, cost_comparison, is_game_method
from mas_agents.eval.wellplay.evaluate import CATEGORIES
from mas_agents.stats import Estimate

def accuracy_text(t: dict, c: str) -> str:
    """A category's accuracy in the report: the pooled proportion with its Wilson interval and n
    (:func:`accuracy_intervals`), else the bare mean over cells, else ``-``."""
    iv = (t.get("accuracy_interval") or {}).get(c)
    if iv:
        return Estimate(iv["mean"], iv["low"], iv["high"], iv["n"]).fmt(unit="")
    acc = t.get("accuracy") or {}
    return f"{100 * acc[c]:.1f}" if c in acc else "-"


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
             f"| method | weighted, {SCORE_AGGREGATION} [95 % interval] (n) | std over seeds | objective | reasoning | relation | murderer caught | "
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
              f"Weighted score, {SCORE_AGGREGATION}: per seed the unweighted mean of the scripts' weighted scores "
              "(every script counts the same whatever its number of questions; not PLAYER* App. B.3's pooled "
              "aggregation, Σ points won / Σ points possible over the scripts, which `mas reproduce player-star` "
              "leads with), then the mean over seeds with its 95 % percentile-bootstrap interval and n: over seeds "
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
              f"![weighted score, {SCORE_AGGREGATION}](scores.png)", ""]
    return "\n".join(lines)


def bar_chart(table: list[dict], path: Path, *, aggregation: str = SCORE_AGGREGATION) -> None:
    """Weighted score per method with its 95 % interval as error bars (none where there is no
    interval), as a PNG (matplotlib, Agg backend).

    Args:
        table: rows with ``"method"`` (the bar's label), ``"weighted_score"`` (0..1) and
            ``"weighted_score_interval"`` (``{"low", "high"}`` 0..1, or None).
        path: the PNG written.
        aggregation: how the scores were aggregated over scripts, named in the title and the
            axis (a comparison's :data:`SCORE_AGGREGATION` unless told)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # at least 6 in wide: at 4 in the title was cut at both ends (issue 57, E15)
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(table)), 3.8))
    names = [t["method"] for t in table]
    def err(t, side):
        iv = t.get("weighted_score_interval") or {}
        if iv.get("low") is None or iv.get("high") is None:
            return 0.0
        return 100 * max(0.0, (t["weighted_score"] - iv["low"]) if side == 0 else (iv["high"] - t["weighted_score"]))
    ax.bar(names, [100 * t["weighted_score"] for t in table],
           yerr=[[err(t, 0) for t in table], [err(t, 1) for t in table]], capsize=4, color="#4C72B0")
    ax.set_ylabel(f"weighted score (%),\n{aggregation}", fontsize=9)
    ax.set_ylim(0, 100)
    ax.set_title(f"WellPlay weighted score, {aggregation} (95 % interval)", fontsize=11)
    ax.tick_params(axis="x", rotation=30)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
