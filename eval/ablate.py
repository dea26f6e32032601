"""``mas ablate``: one agent design with planner blocks switched on and off, on three benchmarks.

The grid is every subset of ``blocks`` added to ``base`` (for ``--blocks player_star,pgm``:
``base``, ``base+player_star``, ``base+pgm``, ``base+player_star+pgm``), all run on the same
seeds, scripts, word pairs and settings (a paired design):

* **wellplay**: each variant plays the script and is evaluated with ``session``, beside ``pp``,
  ``op``, ``always_a`` and ``random`` under the same per-seed option shuffle
  (:mod:`eval.compare`). Unit = seed.
* **spy**: each variant is the subject of a tournament against the base agent: one seat is the
  subject, the others play ``base``; the subject is the spy in the even-numbered games and a
  civilian in the odd ones; seats, word pairs and first speakers are the same for every variant.
  Unit = game.
* **magic**: each variant is the challenger against ``base`` as defender (:mod:`eval.magic_run`).
  Unit = setting (a bootstrap resample draws setting ids and recomputes every metric from the
  events of those settings' games).

Every number carries n and a 95 % percentile-bootstrap interval (:mod:`eval.stats`); each
variant's paired difference from the base has its own interval, and the report says when an
interval includes zero. Costs (LLM calls, tokens, seconds) are summed per variant and bench.
Sub-runs are resumable (compare cells, the tournament database, MAgIC game directories), so
rerunning the same command reuses finished cells.

A Python user can pass a custom block: register it with :func:`mas_agents.specs.register_block`
and name it in ``blocks``.
"""

from __future__ import annotations

import itertools
import random
import statistics
from pathlib import Path
from typing import Any, Callable

import numpy as np

from eval.stats import Estimate, bootstrap_mean, paired_difference
from mas_agents.rundir import versions, write_json

BENCHES = ("wellplay", "spy", "magic")
BASELINES = ("pp", "op", "always_a", "random")


def variants(base: str, blocks: list[str]) -> list[str]:
    """``base`` plus every subset of ``blocks`` in order of size: ``[base, base+a, base+b, base+a+b]``.

    Raises:
        ValueError: an unknown block, or a block already in ``base``.
    """
    from mas_agents.specs import parse_spec
    parse_spec(base)
    have = set(base.split("+"))
    for b in blocks:
        parse_spec(b)
        if b in have:
            raise ValueError(f"--blocks: {b!r} is already part of the base {base!r}")
    out = [base]
    for k in range(1, len(blocks) + 1):
        for combo in itertools.combinations(blocks, k):
            out.append("+".join([base, *combo]))
    return out


def _est(values: list[float | None], seed: int) -> dict:
    return bootstrap_mean(values, seed=seed).to_dict()


# ---------------------------------------------------------------------------- WellPlay
def run_wellplay(out: Path, grid: list[str], *, data_root: Path, script: str, seeds: int, model: Any, lang: str,
                 rounds: int, concurrency: int, tick: Callable | None = None) -> dict:
    """The WellPlay part: compare cells for every variant and baseline; estimates per method."""
    from eval.compare import run_compare
    from eval.wellplay import load_script
    sc = load_script(data_root, script, lang)
    res = run_compare(data_root=data_root, out=out, methods=grid + list(BASELINES), scripts=[sc], seeds=seeds,
                      model=model, lang=lang, rounds=rounds, concurrency=concurrency, tick=tick)
    by = {m: {r["seed"]: r for r in res["cells"] if r["method"] == m} for m in grid + list(BASELINES)}
    rows = []
    for m in grid + list(BASELINES):
        cells = by[m]
        score = {s: r["weighted_score"] for s, r in cells.items()}
        row = {"variant": m, "n": len(cells), "weighted_score": _est(list(score.values()), 0),
               "accuracy": {c: _est([r["accuracy"].get(c) for r in cells.values()], 0)
                            for c in ("objective", "reasoning", "relation")},
               "cost": {"calls": sum(r["game_calls"] + r["eval_calls"] for r in cells.values()),
                        "input_tokens": sum(r["game_input_tokens"] + r["eval_input_tokens"] for r in cells.values()),
                        "output_tokens": sum(r["game_output_tokens"] + r["eval_output_tokens"] for r in cells.values()),
                        "wall_s": round(sum(r["game_wall_s"] + r["eval_wall_s"] for r in cells.values()), 1)}}
        if m in grid and m != grid[0]:
            base = {s: r["weighted_score"] for s, r in by[grid[0]].items()}
            row["diff_vs_base"] = {"weighted_score": paired_difference(score, base).to_dict()}
        rows.append(row)
    return {"unit": "seed", "rows": rows}


# ---------------------------------------------------------------------------- Who is Spy
def spy_plan(games: int, players: int, pairs: list[dict], seed: int) -> list[dict]:
    """Seating shared by every variant: subject seat, spy seat, first speaker and pair per game
    (the subject is the spy in even-numbered games)."""
    rng = random.Random(seed)
    order = list(range(len(pairs)))
    rng.shuffle(order)
    plan = []
    for i in range(games):
        spy = rng.randrange(players)
        if i % 2 == 0:
            subject = spy
        else:
            subject = rng.choice([s for s in range(players) if s != spy])
        plan.append({"index": i, "spy_seat": spy, "subject_seat": subject, "first_speaker": rng.randrange(players),
                     "pair": pairs[order[i % len(order)]]})
    return plan


def subject_units(games: list[dict], subject_seat_of: dict[int, int]) -> dict[int, dict]:
    """Per game index: the subject's score, whether it won as spy / as civilian, and its civilian
    votes (correct, cast)."""
    from eval.wis_metrics import player_rows
    out = {}
    for g in games:
        idx = int(g["game_id"].rsplit("-g", 1)[1])
        row = next(r for r in player_rows(g) if r["seat"] == subject_seat_of[idx])
        out[idx] = {"score": row["score"], "role": row["role"], "won": row["won"],
                    "correct": row["correct_votes"], "cast": row["votes_cast_as_civilian"],
                    "fouls": row["fouls"], "descriptions": row["descriptions"],
                    "calls": g["llm"]["calls"], "input_tokens": g["llm"]["input_tokens"],
                    "output_tokens": g["llm"]["output_tokens"], "wall_s": g["wall_time_s"]}
    return out


def run_spy(out: Path, grid: list[str], *, data_root: Path, games: int, players: int, seed: int, model: Any,
            lang: str, tick: Callable | None = None) -> dict:
    """The Who-is-Spy part: one tournament per variant as subject vs the base (same plan)."""
    from eval.wis_leaderboard import Leaderboard
    from eval.wis_tournament import run_tournament
    from graphs.wis_session import load_pairs
    pairs = load_pairs(data_root, lang)
    plan = spy_plan(games, players, pairs, seed)
    base = grid[0]
    db = out / "wis.sqlite"
    units: dict[str, dict[int, dict]] = {}
    for v in grid:
        gp = [{"index": g["index"], "agents": [v if s == g["subject_seat"] else base for s in range(players)],
               "spy_seat": g["spy_seat"], "first_speaker": g["first_speaker"], "pair": g["pair"]} for g in plan]
        res = run_tournament(agents=[v, base], games=games, pairs=pairs, players=players, lang=lang, model=model,
                             seed=seed, db=db, out=out / v.replace("+", "_"), games_plan=gp,
                             tick=(lambda i: tick(f"spy {v} g{i}")) if tick else None)
        units[v] = subject_units(Leaderboard(db).games(res["id"]), {g["index"]: g["subject_seat"] for g in plan})
    rows = []
    for v in grid:
        u = units[v]
        civ = {i: x for i, x in u.items() if x["role"] == "civilian"}
        spy = {i: x for i, x in u.items() if x["role"] == "spy"}
        acc = {i: (x["correct"] / x["cast"] if x["cast"] else None) for i, x in civ.items()}
        row = {"variant": v, "n": len(u), "avg_score": _est([x["score"] for x in u.values()], 0),
               "vote_accuracy_civilian": _est(list(acc.values()), 0),
               "win_rate_spy": _est([float(x["won"]) for x in spy.values()], 0),
               "win_rate_civilian": _est([float(x["won"]) for x in civ.values()], 0),
               "cost": {k: round(sum(x[k] for x in u.values()), 1) for k in ("calls", "input_tokens", "output_tokens", "wall_s")}}
        if v != base:
            b = units[base]
            row["diff_vs_base"] = {"avg_score": paired_difference({i: x["score"] for i, x in u.items()},
                                                                  {i: x["score"] for i, x in b.items()}).to_dict()}
        rows.append(row)
    return {"unit": "game", "rows": rows}


# ---------------------------------------------------------------------------- MAgIC
MAGIC_KEYS = ("judgement", "reasoning", "deception", "self_awareness", "cooperation", "coordination",
              "rationality", "win_rate")


def _magic_by_setting(run_dir: Path) -> dict[int, list[list[dict]]]:
    from mas_agents.events import read_events
    out: dict[int, list] = {}
    for d in sorted((run_dir / "games").glob("*")):
        if (d / "events.jsonl").exists():
            sid = int(d.name.rsplit("-s", 1)[1])
            out.setdefault(sid, []).append(read_events(d / "events.jsonl"))
    return out


def magic_bootstrap(by_setting: dict[int, list], base_by_setting: dict[int, list] | None = None, *,
                    n_boot: int = 1000, seed: int = 0) -> dict[str, dict]:
    """Per metric: the estimate over settings (resample setting ids, recompute from events), and
    with ``base_by_setting`` the paired difference (same resampled ids for both)."""
    from eval.magic_metrics import scenario_metrics
    ids = sorted(by_setting)
    if base_by_setting is not None:
        ids = [i for i in ids if i in base_by_setting]

    def metrics(id_list, source):
        return scenario_metrics([g for i in id_list for g in source[i]])

    full = metrics(ids, by_setting)
    full_base = metrics(ids, base_by_setting) if base_by_setting is not None else None
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {k: [] for k in MAGIC_KEYS}
    diffs: dict[str, list[float]] = {k: [] for k in MAGIC_KEYS}
    if len(ids) > 1:
        for _ in range(n_boot):
            pick = [ids[j] for j in rng.integers(0, len(ids), len(ids))]
            m = metrics(pick, by_setting)
            mb = metrics(pick, base_by_setting) if base_by_setting is not None else None
            for k in MAGIC_KEYS:
                if m[k] is not None:
                    draws[k].append(m[k])
                if mb is not None and m[k] is not None and mb[k] is not None:
                    diffs[k].append(m[k] - mb[k])
    out = {}
    for k in MAGIC_KEYS:
        def ci(vals, mean, method):
            if mean is None:
                return Estimate(None, None, None, len(ids), method=method).to_dict()
            if len(vals) < 2:
                return Estimate(mean, None, None, len(ids), method=method).to_dict()
            lo, hi = np.percentile(vals, [2.5, 97.5])
            return Estimate(mean, float(lo), float(hi), len(ids), method=method).to_dict()
        out[k] = {"estimate": ci(draws[k], full[k], "bootstrap over settings")}
        if full_base is not None:
            d = None if full[k] is None or full_base[k] is None else full[k] - full_base[k]
            out[k]["diff_vs_base"] = ci(diffs[k], d, "paired bootstrap over settings")
    return out


def run_magic_bench(out: Path, grid: list[str], *, data_root: Path, settings: str, seed: int, model: Any,
                    tick: Callable | None = None) -> dict:
    """The MAgIC part: each variant challenges the base on the same settings."""
    from eval.magic_run import radar_chart, run_magic
    from graphs.magic_events import SCENARIOS
    base = grid[0]
    dirs = {}
    costs = {}
    for v in grid:
        d = out / v.replace("+", "_")
        res = run_magic(data_root=data_root, out=d, scenarios=list(SCENARIOS), challenger=v, defender=base,
                        settings=settings, model=model, seed=seed,
                        tick=(lambda label: tick(f"magic {v} {label}")) if tick else None)
        dirs[v] = d
        costs[v] = res["cost"]
        radar_chart(res["metrics"], d / "radar.png", title=v)
    by_setting = {v: _magic_by_setting(dirs[v]) for v in grid}   # each run's events read once
    rows = []
    for v in grid:
        b = magic_bootstrap(by_setting[v], None if v == base else by_setting[base], seed=seed)
        rows.append({"variant": v, "n": len(by_setting[v]), "metrics": b,
                     "cost": {k: costs[v][k] for k in ("calls", "input_tokens", "output_tokens", "wall_s")},
                     "radar": str((dirs[v] / "radar.png").relative_to(out.parent))})
    return {"unit": "setting", "rows": rows}


# ---------------------------------------------------------------------------- runner + report
def run_ablate(*, out: Path, data_root: Path, benches: list[str], base: str = "plain", blocks: list[str],
               seeds: int = 2, model: Any = "local", script: str = "Sin", games: int = 4, players: int = 6,
               settings: str = "0-1", rounds: int = 3, lang: str = "en", concurrency: int = 1,
               command: str = "", tick: Callable | None = None) -> dict:
    """Run the grid on the chosen benches and write ``result.json``, ``report.md`` and figures.

    Raises:
        ValueError: unknown bench or block.
    """
    bad = [b for b in benches if b not in BENCHES]
    if bad or not benches:
        raise ValueError(f"--bench: unknown {', '.join(bad) or '(empty)'}; expected all or {', '.join(BENCHES)}")
    grid = variants(base, blocks)
    out.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"command": command, "base": base, "blocks": blocks, "variants": grid,
                              "model": model if isinstance(model, str) else type(model).__name__,
                              "seeds": seeds, "script": script, "games": games, "settings": settings,
                              "rounds": rounds, "lang": lang, "versions": versions(), "benches": {}}
    if "wellplay" in benches:
        result["benches"]["wellplay"] = run_wellplay(out / "wellplay", grid, data_root=data_root, script=script,
                                                     seeds=seeds, model=model, lang=lang, rounds=rounds,
                                                     concurrency=concurrency, tick=tick)
    if "spy" in benches:
        result["benches"]["spy"] = run_spy(out / "spy", grid, data_root=data_root, games=games, players=players,
                                           seed=0, model=model, lang=lang, tick=tick)
    if "magic" in benches:
        result["benches"]["magic"] = run_magic_bench(out / "magic", grid, data_root=data_root, settings=settings,
                                                     seed=0, model=model, tick=tick)
    result["summary"] = summary(result)
    write_json(out / "result.json", result)
    figures(result, out)
    (out / "report.md").write_text(report_md(result), encoding="utf-8")
    return result


def _e(d: dict) -> Estimate:
    return Estimate(**{k: d[k] for k in ("mean", "low", "high", "n", "level", "method")})


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
            diffs.append(f"{r['variant']} {e.fmt(scale=scale, unit=u, signed=True)}")
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
    """The Markdown report: summary, command/model/versions, one table per bench, cost, figures."""
    lines = ["# Ablation: " + ", ".join(result["variants"]), "", result["summary"], "",
             f"Command: `{result['command'] or '(Python API)'}`  ", f"Model: {result['model']}  ",
             "Versions: " + ", ".join(f"{k} {v}" for k, v in result["versions"].items()), "",
             "Every number is the mean with a 95 % percentile-bootstrap interval and its sample size n; "
             "\"diff\" is the paired difference from the base (same seeds / games / settings), and "
             "\"(includes 0)\" marks an interval that includes zero.", ""]
    b = result["benches"]
    if "wellplay" in b:
        lines += ["## WellPlay (unit: seed)", "",
                  "| variant | weighted score | objective | reasoning | relation | diff vs base | LLM calls | tokens in/out | s |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in b["wellplay"]["rows"]:
            d = r.get("diff_vs_base", {}).get("weighted_score")
            lines.append(f"| {r['variant']} | {_e(r['weighted_score']).fmt()} | "
                         + " | ".join(_e(r["accuracy"][c]).fmt() for c in ("objective", "reasoning", "relation"))
                         + f" | {_diff(d)} | {r['cost']['calls']} | {r['cost']['input_tokens']}/{r['cost']['output_tokens']} | {r['cost']['wall_s']} |")
        lines += ["", "![WellPlay](wellplay.png)", ""]
    if "spy" in b:
        lines += ["## Who is Spy (unit: game; subject vs the base agent)", "",
                  "| variant | avg score | vote accuracy (civilian) | win rate as spy | win rate as civilian | diff vs base (score) | LLM calls | tokens in/out | s |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in b["spy"]["rows"]:
            d = r.get("diff_vs_base", {}).get("avg_score")
            lines.append(f"| {r['variant']} | {_e(r['avg_score']).fmt(scale=1, unit='')} | {_e(r['vote_accuracy_civilian']).fmt()} | "
                         f"{_e(r['win_rate_spy']).fmt()} | {_e(r['win_rate_civilian']).fmt()} | {_diff(d, scale=1, unit='')} | "
                         f"{r['cost']['calls']:.0f} | {r['cost']['input_tokens']:.0f}/{r['cost']['output_tokens']:.0f} | {r['cost']['wall_s']} |")
        lines += ["", "![Who is Spy](spy.png)", ""]
    if "magic" in b:
        lines += ["## MAgIC (unit: setting; challenger vs the base as defender)", "",
                  "| variant | " + " | ".join(MAGIC_KEYS) + " | diff vs base (win rate) | LLM calls | tokens in/out | s |",
                  "|---|" + "---|" * (len(MAGIC_KEYS) + 4)]
        for r in b["magic"]["rows"]:
            m = r["metrics"]
            lines.append(f"| {r['variant']} | " + " | ".join(_e(m[k]["estimate"]).fmt() for k in MAGIC_KEYS)
                         + f" | {_diff(m['win_rate'].get('diff_vs_base'))} | {r['cost']['calls']} | "
                           f"{r['cost']['input_tokens']}/{r['cost']['output_tokens']} | {r['cost']['wall_s']} |")
        lines += ["", "![MAgIC](magic.png)", ""] + [f"![{r['variant']}]({r['radar']})" for r in b["magic"]["rows"]] + [""]
    return "\n".join(lines)


def _diff(d: dict | None, scale: float = 100, unit: str = "%") -> str:
    if not d:
        return "-"
    e = _e(d)
    s = e.fmt(scale=scale, unit=unit, signed=True)
    return s + (" (includes 0)" if e.includes_zero else "")


def figures(result: dict, out: Path) -> None:
    """Grouped bars with intervals per bench (``wellplay.png``, ``spy.png``, ``magic.png``)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def bars(path: Path, groups: list[str], series: dict[str, list[dict]], ylabel: str, scale: float) -> None:
        fig, ax = plt.subplots(figsize=(max(5, 1.3 * len(groups) * max(1, len(series)) / 2), 3.6))
        w = 0.8 / max(1, len(series))
        for j, (name, ests) in enumerate(series.items()):
            xs = [i + j * w for i in range(len(groups))]
            means = [scale * (e["mean"] or 0) for e in ests]
            err = [[scale * ((e["mean"] or 0) - (e["low"] if e["low"] is not None else e["mean"] or 0)) for e in ests],
                   [scale * ((e["high"] if e["high"] is not None else e["mean"] or 0) - (e["mean"] or 0)) for e in ests]]
            ax.bar(xs, means, w, yerr=err, capsize=3, label=name)
        ax.set_xticks([i + w * (len(series) - 1) / 2 for i in range(len(groups))])
        ax.set_xticklabels(groups, fontsize=8)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=7)
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
        bars(out / "magic.png", list(MAGIC_KEYS), {r["variant"]: [r["metrics"][k]["estimate"] for k in MAGIC_KEYS] for r in rows},
             "%", 100)
