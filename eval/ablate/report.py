"""The report of an ablation (:mod:`mas_agents.eval.ablate.grid`): the summary paragraph, ``report.md``
and the figures, from its ``result.json``.

``matplotlib`` is imported inside :func:`figures` only (a heavy dependency the text does not need).
"""

from __future__ import annotations

from pathlib import Path

from mas_agents.eval.ablate.benches import MAGIC_KEYS
from mas_agents.stats import Estimate, clip


def _hit(cost: dict) -> str:
    """A cost's cache-hit ratio as a percentage, or '-' when the server reported none."""
    return "-" if cost.get("cache_hit") is None else f"{100 * cost['cache_hit']:.0f} %"


def _e(d: dict) -> Estimate:
    return Estimate(**{k: d[k] for k in ("mean", "low", "high", "n", "level", "method")})


# MAgIC Deception is not a rate: (won as chameleon/undercover ÷ those games) + 0.25 × (wrong word
# guesses ÷ word guesses) (mas_agents.graphs.magic.metrics, the paper's definition), so it lies in [0, 1.25].
# It is printed in percent like every other metric (one scale in every report and page, as MAgIC's
# Tables 1 and 4 print it), its interval clipped to [0, 125] % and its header saying so.
METRIC_MAX = {"deception": 1.25}


#: What n counts on each bench (its unit of resampling), written beside every n of the report
#: (issue 57, E20: a MAgIC bench run's own report counts votes, games... for the same metric).
N_UNITS = {"wellplay": "seeds", "spy": "games", "magic": "settings"}


def _rate(d: dict, n_unit: str = "") -> str:
    """A rate (fraction 0..1) in percent with its interval and n (of ``n_unit``), the interval
    clipped to [0, 100] %."""
    return clip(_e(d), 0.0, 1.0).fmt(n_unit=n_unit)


def _metric(d: dict, key: str) -> str:
    """A MAgIC metric in percent with its interval and n settings: a rate in [0, 100] %,
    Deception in [0, 125] %."""
    if key in METRIC_MAX:
        return clip(_e(d), 0.0, METRIC_MAX[key]).fmt(n_unit=N_UNITS["magic"])
    return _rate(d, N_UNITS["magic"])


def _header(key: str) -> str:
    from mas_agents.graphs.magic.bench_report import HEADERS
    name = HEADERS.get(key, key.replace("_", " "))
    return f"{name} (0–{100 * METRIC_MAX[key]:g} %)" if key in METRIC_MAX else name


def summary(result: dict) -> str:
    """One paragraph from the numbers: per bench, each variant's paired difference from the base
    with its interval and n, then its cost in LLM calls relative to the base, then which effects
    (if any) have intervals that exclude zero.

    E.g. ``"WellPlay, weighted score vs plain (unit: seed): plain+pgm +3.1 points [-2.0, 8.4]
    (n=2), ... LLM calls vs plain: plain+pgm ×1.4 on WellPlay, ... No interval excludes zero: ..."``
    """
    b = result["benches"]
    base = result["variants"][0] if result.get("variants") else "the base"
    specs = [("wellplay", "WellPlay", "weighted score", "seed", lambda r: r.get("diff_vs_base", {}).get("weighted_score"), 100, "points"),
             ("spy", "Who is Spy", "the subject's average score", "game", lambda r: r.get("diff_vs_base", {}).get("avg_score"), 1, ""),
             ("magic", "MAgIC", "win rate", "setting", lambda r: r["metrics"]["win_rate"].get("diff_vs_base"), 100, "points")]
    sentences, clear, unclear, costs = [], [], [], []
    for key, title, metric, unit, get, scale, u in specs:
        rows = (b.get(key) or {}).get("rows", [])
        base_calls = next((r["cost"]["calls"] for r in rows if r["variant"] == base), None)
        diffs = []
        for r in rows:
            d = get(r)
            if not d:
                continue
            e = _e(d)
            diffs.append(f"{r['variant']} {e.fmt(scale=scale, unit=u, signed=True, n_unit=N_UNITS[key])}")
            where = f"{r['variant']} on {title}"
            if e.includes_zero is False:
                clear.append(f"{where} ({'up' if e.mean > 0 else 'down'})")
            else:
                unclear.append(where)
            if base_calls:
                costs.append(f"{r['variant']} ×{r['cost']['calls'] / base_calls:.1f} on {title}")
        if diffs:
            sentences.append(f"{title}, {metric} vs {base} (unit: {unit}): " + "; ".join(diffs) + ".")
    if not sentences:
        return "Only the base variant was run; there is nothing to compare."
    if costs:
        sentences.append(f"LLM calls relative to {base}: " + "; ".join(costs) + ".")
    if clear:
        sentences.append("95 % intervals that exclude zero: " + "; ".join(clear) + ".")
    sentences.append("No 95 % interval excludes zero, so no block's effect is distinguishable from none at this sample size."
                     if not clear else
                     f"Every other interval includes zero ({len(unclear)} of {len(clear) + len(unclear)}): "
                     "those effects are not distinguishable from none." if unclear else "")
    return " ".join(x for x in sentences if x)


def report_md(result: dict) -> str:
    """The Markdown report: summary, command/model/versions, per bench a table of estimates with
    cost and a table of paired differences from the base, and the figures."""
    n_units = [r["n"] for bench in result["benches"].values() for r in bench.get("rows", []) if r["n"]]
    lines = ["# Ablation: " + ", ".join(result["variants"]), "", result["summary"], "",
             f"Command: `{result['command'] or '(Python API)'}`  ", f"Model: {result['model']}  ",
             "Versions: " + ", ".join(f"{k} {v}" for k, v in result["versions"].items()), "",
             "Every number is the mean with a 95 % percentile-bootstrap interval and its sample size n; "
             "\"diff\" is the paired difference from the base (same seeds / games / settings), and "
             "\"(includes 0)\" marks an interval that includes zero. Costs are summed over the units: "
             "LLM calls, input/output tokens and seconds."]
    if n_units and min(n_units) < 10:
        lines += ["", f"Small samples (n = {min(n_units)} to {max(n_units)}): percentile intervals from fewer than "
                  "10 units are narrower than nominal (mas_agents/stats.py), and with n = 2 an interval is the range "
                  "of the two units. Read them as indicative; add seeds, games or settings to tighten them."]
    lines.append("")
    b = result["benches"]
    grid = result["variants"]

    def diff_table(rows: list[dict], keys: list[tuple[str, str]], get, scale: float = 100, unit: str = "pt",
                   n_unit: str = "") -> list[str]:
        out = ["Paired differences from the base (pt = percentage points):", "", "| variant | " + " | ".join(t for _, t in keys) + " |",
               "|---|" + "---|" * len(keys)]
        for r in rows:
            if r["variant"] in grid[1:]:
                out.append(f"| {r['variant']} | " + " | ".join(_diff(get(r, k), *((1, "") if k == "avg_score" else (scale, unit)),
                                                                   n_unit=n_unit)
                                                             for k, _ in keys) + " |")
        return out + [""]

    if "wellplay" in b:
        cats = ("objective", "reasoning", "relation")
        lines += ["## WellPlay (unit: seed)", "",
                  "| variant | weighted score | objective | reasoning | relation | LLM calls | tokens in/out | s | cache hit |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in b["wellplay"]["rows"]:
            lines.append(f"| {r['variant']} | {_rate(r['weighted_score'], N_UNITS['wellplay'])} | "
                         + " | ".join(_rate(r["accuracy"][c], N_UNITS["wellplay"]) for c in cats)
                         + f" | {r['cost']['calls']} | {r['cost']['input_tokens']}/{r['cost']['output_tokens']} | {r['cost']['wall_s']} | {_hit(r['cost'])} |")
        lines += [""] + diff_table(b["wellplay"]["rows"], [("weighted_score", "weighted score")] + [(c, c) for c in cats],
                                   lambda r, k: r.get("diff_vs_base", {}).get(k), n_unit=N_UNITS["wellplay"])
        lines += ["![WellPlay](wellplay.png)", ""]
    if "spy" in b:
        sp = b["spy"]
        limit = sp.get("speak_timeout")
        lines += ["## Who is Spy (unit: game; subject vs the base agent)", "",
                  f"Speaking limit: {'none' if limit is None else f'{limit:g} s'}. Cost: {sp.get('cost_of', 'whole games')}.", "",
                  "| variant | avg score | vote accuracy (civilian) | win rate as spy | win rate as civilian | fouls (timeouts) / descriptions | LLM calls | tokens in/out | s | cache hit |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in sp["rows"]:
            g = N_UNITS["spy"]
            lines.append(f"| {r['variant']} | {_e(r['avg_score']).fmt(scale=1, unit='', n_unit=g)} | {_rate(r['vote_accuracy_civilian'], g)} | "
                         f"{_rate(r['win_rate_spy'], g)} | {_rate(r['win_rate_civilian'], g)} | "
                         f"{r.get('fouls', '-')} ({r.get('timeouts', '-')}) / {r.get('descriptions', '-')} | "
                         f"{r['cost']['calls']:.0f} | {r['cost']['input_tokens']:.0f}/{r['cost']['output_tokens']:.0f} | {r['cost']['wall_s']} | {_hit(r['cost'])} |")
        lines += [""] + diff_table(sp["rows"], [("avg_score", "avg score"), ("vote_accuracy_civilian", "vote accuracy (civilian)"),
                                                ("win_rate_spy", "win rate as spy"), ("win_rate_civilian", "win rate as civilian")],
                                   lambda r, k: r.get("diff_vs_base", {}).get(k), n_unit=N_UNITS["spy"])
        lines += ["![Who is Spy](spy.png)", ""]
    if "magic" in b:
        mg = b["magic"]
        lines += ["## MAgIC (unit: setting id; challenger vs the base as defender)", "",
                  "A unit pools the games of every scenario with that setting id; a bootstrap draw resamples ids and "
                  f"recomputes each metric from the drawn games' events. Cost: {mg.get('cost_of', 'whole games')}.", "",
                  "Every metric is in percent (as MAgIC's Tables 1 and 4 print them); Deception is the paper's score, "
                  "(won as chameleon/undercover ÷ those games) + 0.25 × (wrong word guesses ÷ word guesses), so it "
                  "lies in [0, 125] %; differences are in percentage points.", "",
                  "| variant | " + " | ".join(_header(k) for k in MAGIC_KEYS) + " | LLM calls | tokens in/out | s | cache hit |",
                  "|---|" + "---|" * (len(MAGIC_KEYS) + 4)]
        for r in mg["rows"]:
            m = r["metrics"]
            lines.append(f"| {r['variant']} | " + " | ".join(_metric(m[k]["estimate"], k) for k in MAGIC_KEYS)
                         + f" | {r['cost']['calls']} | {r['cost']['input_tokens']}/{r['cost']['output_tokens']} | {r['cost']['wall_s']} | {_hit(r['cost'])} |")
        lines += [""] + diff_table(mg["rows"], [(k, _header(k).split(" (")[0]) for k in MAGIC_KEYS],
                                   lambda r, k: r["metrics"][k].get("diff_vs_base"), n_unit=N_UNITS["magic"])
        lines += ["![MAgIC](magic.png)", ""] + [f"![{r['variant']}]({r['radar']})" for r in mg["rows"]] + [""]
    return "\n".join(lines)


def _diff(d: dict | None, scale: float = 100, unit: str = "pt", digits: int = 1, n_unit: str = "") -> str:
    if not d:
        return "-"
    e = _e(d)
    s = e.fmt(scale=scale, unit=unit, signed=True, digits=digits, n_unit=n_unit)
    return s + (" (includes 0)" if e.includes_zero else "")


def figures(result: dict, out: Path) -> None:
    """Grouped bars with intervals per bench (``wellplay.png``, ``spy.png``, ``magic.png``)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def bars(path: Path, groups: list[str], series: dict[str, list[dict]], ylabel: str, scale: float) -> None:
        # width grows with the bars but stops at 10 in (1,100 px): MAgIC's 7 metrics x 5 variants were
        # 2,288 x 396 px with 8-pt labels, unreadable once a page scaled it down (issue 57, E15)
        n_bars = len(groups) * max(1, len(series))
        fig, ax = plt.subplots(figsize=(min(10.0, max(5.0, 0.3 * n_bars + 2)), 4.4))
        w = 0.8 / max(1, len(series))
        for j, (name, ests) in enumerate(series.items()):
            xs = [i + j * w for i in range(len(groups))]
            means = [scale * (e["mean"] or 0) for e in ests]
            err = [[scale * ((e["mean"] or 0) - (e["low"] if e["low"] is not None else e["mean"] or 0)) for e in ests],
                   [scale * ((e["high"] if e["high"] is not None else e["mean"] or 0) - (e["mean"] or 0)) for e in ests]]
            ax.bar(xs, means, w, yerr=err, capsize=3, label=name)
            for x, e in zip(xs, ests):   # no estimate (n=0): say so instead of drawing a zero
                if e["mean"] is None:
                    ax.text(x, 0, "n/a", ha="center", va="bottom", fontsize=6, rotation=90)
        ax.set_xticks([i + w * (len(series) - 1) / 2 for i in range(len(groups))])
        long = max((len(g) for g in groups), default=0) > 12   # variant names like plain+player_star+pgm overlap
        ax.set_xticklabels(groups, fontsize=10, rotation=25 if long else 0, ha="right" if long else "center")
        ax.tick_params(axis="y", labelsize=10)
        ax.set_ylabel(ylabel, fontsize=10)
        # above the bars, in columns: a legend inside the axes covered them
        ax.legend(fontsize=9, ncol=min(3, max(1, len(series))), loc="lower center", bbox_to_anchor=(0.5, 1.0),
                  frameon=False)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)

    b = result["benches"]
    if "wellplay" in b:
        rows = b["wellplay"]["rows"]
        bars(out / "wellplay.png", [r["variant"] for r in rows], {"weighted score": [r["weighted_score"] for r in rows]},
             "weighted score (%)", 100)
    if "spy" in b:
        rows = b["spy"]["rows"]
        bars(out / "spy.png", ["vote acc. (civ)", "win as spy", "win as civ"],
             {r["variant"]: [r["vote_accuracy_civilian"], r["win_rate_spy"], r["win_rate_civilian"]] for r in rows},
             "%", 100)
    if "magic" in b:
        rows = b["magic"]["rows"]
        # Deception is a rate plus 0.25 x a rate (the paper's definition, graphs/magic/metrics.py): in percent like
        # the others, up to 125 %, which its tick says
        labels = [("deception\n(0–125 %)" if k == "deception" else k.replace("_", " ")) for k in MAGIC_KEYS]
        bars(out / "magic.png", labels, {r["variant"]: [r["metrics"][k]["estimate"] for k in MAGIC_KEYS] for r in rows},
             "%", 100)
