"""``mas ablate``: one agent design with planner blocks switched on and off, on three benchmarks.

The grid is every subset of ``blocks`` added to ``base`` (for ``--blocks player_star,pgm``:
``base``, ``base+player_star``, ``base+pgm``, ``base+player_star+pgm``), all run on the same
seeds, scripts, word pairs and settings (a paired design):

* **wellplay**: each variant plays the script and is evaluated with ``session``, beside ``pp``,
  ``op``, ``always_a`` and ``random`` under the same per-seed option shuffle
  (:mod:`mas_agents.eval.runs.compare`). Unit = seed.
* **spy**: each variant is the subject of a tournament against the base agent: one seat is the
  subject, the others play ``base``; the subject is the spy in the even-numbered games and a
  civilian in the odd ones; seats, word pairs and first speakers are the same for every variant.
  Unit = game.
* **magic**: each variant is the challenger against ``base`` as defender (:mod:`mas_agents.eval.runs.magic_bench`).
  Unit = setting (a bootstrap resample draws setting ids and recomputes every metric from the
  events of those settings' games).

Every number carries n and a 95 % percentile-bootstrap interval (:mod:`mas_agents.eval.stats`); each
variant's paired difference from the base, for every metric, has its own interval, and the
report says when an interval includes zero. Costs (LLM calls, tokens, seconds of model time) are
summed per variant and bench over the variant's own seats: in WellPlay the characters it plays
(all but the murderer, who always plays ``plain``) and the whole evaluation, the subject's seat
in Who is Spy, the challenger's seats in MAgIC (the base agents around them are not counted). Who is Spy runs without a speaking limit by default (``speak_timeout=None``), so that a
block's extra model calls on a slow machine are not scored as timeout fouls. A rerun with other
settings in the same ``out`` is refused (``config.json``).
Sub-runs are resumable (compare cells, the tournament database, MAgIC game directories), so
rerunning the same command reuses finished cells.

A Python user can pass a custom block: register it with :func:`mas_agents.specs.register_block`
and name it in ``blocks``.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any, Callable


from mas_agents.eval.metrics.cost import actor_cost, method_seats
from mas_agents.eval.stats import Estimate, bootstrap_mean, bootstrap_units, clip, paired_difference
from mas_agents.accounting import record_prompts
from mas_agents.llm import spec_text
from mas_agents.eval.runs.record import check_same_run, model_fields
from mas_agents.rundir import marks_run, versions, write_json

BENCHES = ("wellplay", "spy", "magic")
#: ``config.json``'s ``kind`` of a ``mas ablate`` run directory.
KIND = "ablation"
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


def _paired(arm: dict, base: dict) -> dict:
    """Paired difference ``arm - base`` over the units (keys) present in both (:func:`mas_agents.eval.stats.paired_difference`)."""
    return paired_difference(arm, base).to_dict()


# ---------------------------------------------------------------------------- WellPlay
def wellplay_cost(d: Path) -> dict:
    """The variant's cost in one compare cell ``d``: every evaluation call, and the game's calls
    by the characters the variant played (not the murderer, whom PLAYER*'s protocol always gives
    the ``plain`` framework). Same units as :func:`actor_cost` (``wall_s`` = model seconds)."""
    from mas_agents.rundir import read_json
    parts = [actor_cost(d / "eval" / "llm_calls.jsonl", None)]
    if (d / "game" / "result.json").exists():
        roles = read_json(d / "game" / "result.json").get("roles") or {}
        parts.append(actor_cost(d / "game" / "llm_calls.jsonl", method_seats(roles)))
    return _sum_costs(parts)


COST_KEYS = ("calls", "input_tokens", "output_tokens", "wall_s", "cached_tokens", "cache_in")


def _sum_costs(parts) -> dict:
    """Sum the :data:`COST_KEYS` of ``parts`` (dicts that may hold other keys too) and add
    ``cache_hit`` = cached / prompt tokens over the calls that reported a cache count (None when
    no call did: llama-cpp-python's server and Ollama report none)."""
    parts = list(parts)
    out = {k: sum(c[k] for c in parts) for k in COST_KEYS}
    out["wall_s"] = round(out["wall_s"], 1)
    out["cache_hit"] = round(out["cached_tokens"] / out["cache_in"], 4) if out["cache_in"] else None
    return out


def _hit(cost: dict) -> str:
    """A cost's cache-hit ratio as a percentage, or '-' when the server reported none."""
    return "-" if cost.get("cache_hit") is None else f"{100 * cost['cache_hit']:.0f} %"


def run_wellplay(out: Path, grid: list[str], *, data_root: Path, script: str, seeds: int, model: Any, lang: str,
                 rounds: int, concurrency: int | None, tick: Callable | None = None) -> dict:
    """The WellPlay part: compare cells for every variant and baseline; estimates per method."""
    from mas_agents.eval.datasets.wellplay import load_script
    from mas_agents.eval.runs.compare import cell_dir, run_compare
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
               "cost": _sum_costs(wellplay_cost(cell_dir(out, m, sc.id, s)) for s in cells)}
        if m in grid and m != grid[0]:
            base = by[grid[0]]
            row["diff_vs_base"] = {"weighted_score": _paired(score, {s: r["weighted_score"] for s, r in base.items()}),
                                   **{c: _paired({s: r["accuracy"].get(c) for s, r in cells.items()},
                                                 {s: r["accuracy"].get(c) for s, r in base.items()})
                                      for c in ("objective", "reasoning", "relation")}}
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


def subject_units(games: list[dict], subject_seat_of: dict[int, int], games_dir: Path) -> dict[int, dict]:
    """Per game index: the subject's score, role, whether it won, its civilian votes (correct,
    cast), fouls (of which timeouts), and the subject's own LLM cost (from
    ``games_dir/g<index>/llm_calls.jsonl``, see :func:`actor_cost`)."""
    from mas_agents.eval.metrics.wis import player_rows
    out = {}
    for g in games:
        idx = int(g["game_id"].rsplit("-g", 1)[1])
        row = next(r for r in player_rows(g) if r["seat"] == subject_seat_of[idx])
        name = next(p["name"] for p in g["players"] if p["seat"] == subject_seat_of[idx])
        cost = actor_cost(games_dir / f"g{idx:04d}" / "llm_calls.jsonl", {name})
        out[idx] = {"score": row["score"], "role": row["role"], "won": row["won"],
                    "correct": row["correct_votes"], "cast": row["votes_cast_as_civilian"],
                    "fouls": row["fouls"], "timeouts": row["timeouts"], "descriptions": row["descriptions"],
                    **cost}
    return out


def spy_measures(u: dict[int, dict]) -> dict[str, dict[int, float | None]]:
    """Per metric, the per-game values of one subject: ``avg_score`` (every game),
    ``vote_accuracy_civilian`` (civilian games: correct / cast, None with no vote cast),
    ``win_rate_spy`` (spy games), ``win_rate_civilian`` (civilian games). Vote accuracy is the
    mean of per-game accuracies (each game one unit), not the leaderboard's pooled ratio."""
    civ = {i: x for i, x in u.items() if x["role"] == "civilian"}
    spy = {i: x for i, x in u.items() if x["role"] == "spy"}
    return {"avg_score": {i: x["score"] for i, x in u.items()},
            "vote_accuracy_civilian": {i: (x["correct"] / x["cast"] if x["cast"] else None) for i, x in civ.items()},
            "win_rate_spy": {i: float(x["won"]) for i, x in spy.items()},
            "win_rate_civilian": {i: float(x["won"]) for i, x in civ.items()}}


SPY_KEYS = ("avg_score", "vote_accuracy_civilian", "win_rate_spy", "win_rate_civilian")


def run_spy(out: Path, grid: list[str], *, data_root: Path, games: int, players: int, seed: int, model: Any,
            lang: str, speak_timeout: float | None = None, tick: Callable | None = None,
            concurrency: int | None = None) -> dict:
    """The Who-is-Spy part: one tournament per variant as subject vs the base (same plan).

    ``speak_timeout``: the WiS speaking limit in seconds (the answer's whole wall time, a block's
    readings included); ``None`` = no limit, the ablation default, so that a block's extra model
    calls on a slow machine are not scored as timeout fouls."""
    from mas_agents.eval.reports.wis_leaderboard import Leaderboard
    from mas_agents.eval.datasets.wis import load_pairs
    from mas_agents.eval.runs.wis_tournament import TournamentConfig, run_tournament
    pairs = load_pairs(data_root, lang)
    plan = spy_plan(games, players, pairs, seed)
    base = grid[0]
    db = out / "wis.sqlite"
    units: dict[str, dict[int, dict]] = {}
    for v in grid:
        gp = [{"index": g["index"], "agents": [v if s == g["subject_seat"] else base for s in range(players)],
               "spy_seat": g["spy_seat"], "first_speaker": g["first_speaker"], "pair": g["pair"]} for g in plan]
        vdir = out / v.replace("+", "_")
        res = run_tournament(TournamentConfig(agents=[v, base], games=games, pairs=pairs, players=players, lang=lang,
                                              model=model, seed=seed, db=db, out=vdir, games_plan=gp,
                                              speak_timeout=speak_timeout, concurrency=concurrency),
                             tick=(lambda i: tick(f"spy {v} g{i}")) if tick else None)
        units[v] = subject_units(Leaderboard(db).games(res["id"]), {g["index"]: g["subject_seat"] for g in plan},
                                 games_dir=vdir / "games")
    rows = []
    base_m = spy_measures(units[base])
    for v in grid:
        u = units[v]
        m = spy_measures(u)
        row = {"variant": v, "n": len(u), **{k: _est(list(m[k].values()), 0) for k in SPY_KEYS},
               "fouls": sum(x["fouls"] for x in u.values()), "timeouts": sum(x["timeouts"] for x in u.values()),
               "descriptions": sum(x["descriptions"] for x in u.values()),
               "cost": _sum_costs(u.values())}
        if v != base:
            row["diff_vs_base"] = {k: _paired(m[k], base_m[k]) for k in SPY_KEYS}
        rows.append(row)
    return {"unit": "game", "speak_timeout": speak_timeout, "cost_of": "the subject's seat", "rows": rows}


# ---------------------------------------------------------------------------- MAgIC
MAGIC_KEYS = ("judgement", "reasoning", "deception", "self_awareness", "cooperation", "coordination",
              "rationality", "win_rate")


def _magic_by_setting(run_dir: Path, names: list[str]) -> tuple[dict[int, list[list[dict]]], dict]:
    """The events of the games ``names`` (``run_magic``'s planned games, not every directory
    left in ``run_dir/games``) grouped by setting id, and the challenger's own cost over them."""
    from mas_agents.events import read_events
    from mas_agents.rundir import read_json
    out: dict[int, list] = {}
    costs = []
    for name in sorted(names):
        d = run_dir / "games" / name
        sid = int(name.rsplit("-s", 1)[1])
        out.setdefault(sid, []).append(read_events(d / "events.jsonl"))
        seats = set(read_json(d / "result.json").get("challenger_seats") or [])
        costs.append(actor_cost(d / "llm_calls.jsonl", seats))
    return out, _sum_costs(costs)


def magic_bootstrap(by_setting: dict[int, list], base_by_setting: dict[int, list] | None = None, *,
                    n_boot: int = 1000, seed: int = 0) -> dict[str, dict]:
    """Per MAgIC metric: the estimate over settings (resample setting ids, recompute from events),
    and with ``base_by_setting`` the paired difference (:func:`mas_agents.eval.stats.bootstrap_units`)."""
    from mas_agents.eval.metrics.magic import scenario_metrics

    def metrics(games_by_unit: list[list]) -> dict:
        return scenario_metrics([g for games in games_by_unit for g in games])

    return bootstrap_units(by_setting, metrics, MAGIC_KEYS, base_by_setting, n_boot=n_boot, seed=seed,
                           unit="settings")


def run_magic_bench(out: Path, grid: list[str], *, data_root: Path, settings: str, seed: int, model: Any,
                    tick: Callable | None = None, concurrency: int | None = None) -> dict:
    """The MAgIC part: each variant challenges the base on the same settings."""
    from mas_agents.eval.runs.magic_bench import MagicBenchConfig, radar_chart, run_magic
    from mas_agents.graphs.magic.events import SCENARIOS
    base = grid[0]
    dirs, by_setting, costs = {}, {}, {}
    for v in grid:
        d = out / v.replace("+", "_")
        res = run_magic(MagicBenchConfig(data_root=data_root, out=d, scenarios=list(SCENARIOS), challenger=v,
                                         defender=base, settings=settings, model=model, seed=seed,
                                         concurrency=concurrency),
                        tick=(lambda label: tick(f"magic {v} {label}")) if tick else None)
        dirs[v] = d
        by_setting[v], costs[v] = _magic_by_setting(d, res["games"])   # each game's events read once
        radar_chart(res["metrics"], d / "radar.png", title=v)
    rows = []
    for v in grid:
        b = magic_bootstrap(by_setting[v], None if v == base else by_setting[base], seed=seed)
        rows.append({"variant": v, "n": len(by_setting[v]), "metrics": b, "cost": costs[v],
                     "radar": str((dirs[v] / "radar.png").relative_to(out.parent))})
    return {"unit": "setting", "cost_of": "the challenger's seats", "rows": rows}


# ---------------------------------------------------------------------------- runner + report
@marks_run
def run_ablate(*, out: Path, data_root: Path, benches: list[str], base: str = "plain", blocks: list[str],
               seeds: int = 2, model: Any = "local", script: str = "Sin", games: int = 4, players: int = 6,
               settings: str = "0-1", rounds: int = 3, lang: str = "en", concurrency: int | None = None,
               speak_timeout: float | None = None, command: str = "", tick: Callable | None = None) -> dict:
    """Run the grid on the chosen benches and write ``result.json``, ``report.md`` and figures.

    ``speak_timeout``: the Who-is-Spy speaking limit in seconds (None: no limit; see :func:`run_spy`).

    Raises:
        ValueError: unknown bench, block, script or settings range.
        RunConflict: ``out`` holds a run of another configuration (:func:`mas_agents.eval.runs.record.check_same_run`;
            ``<out>/config.json`` names the field). Benches may differ: a run can be extended
            bench by bench, and the report keeps the benches run before.
        FileNotFoundError / DataError: a data file is missing or malformed.
    """
    bad = [b for b in benches if b not in BENCHES]
    if bad or not benches:
        raise ValueError(f"--bench: unknown {', '.join(bad) or '(empty)'}; expected all or {', '.join(BENCHES)}")
    grid = variants(base, blocks)
    _check_inputs(data_root, benches, script=script, lang=lang, settings=settings)
    out.mkdir(parents=True, exist_ok=True)
    used = model_fields([spec_text(model)], model)   # the agent specs name no model: every seat runs it
    cfg = {"kind": KIND, "base": base, "blocks": list(blocks), "seeds": seeds, "script": script, "games": games,
           "players": players, "settings": settings, "rounds": rounds, "lang": lang, "speak_timeout": speak_timeout,
           "model": used.pop("model"), **used}
    # a resumed grid must not mix settings; more benches extend it
    stored = check_same_run(out, {**cfg, "benches": benches}, may_differ=("benches",))
    # config.json names every bench the run holds: those run before and those asked now
    held = set(benches) | set((stored or {}).get("benches") or [])
    write_json(out / "config.json", {**cfg, "benches": [b for b in BENCHES if b in held], "command": command,
                                     "record_prompts": record_prompts(), "versions": versions()})
    result: dict[str, Any] = {"command": command, "base": base, "blocks": blocks, "variants": grid,
                              "model": cfg["model"], "models": cfg["models"],
                              "seeds": seeds, "script": script, "games": games, "settings": settings,
                              "rounds": rounds, "lang": lang, "players": players, "speak_timeout": speak_timeout,
                              "versions": versions(), "benches": {}}
    if "wellplay" in benches:
        result["benches"]["wellplay"] = run_wellplay(out / "wellplay", grid, data_root=data_root, script=script,
                                                     seeds=seeds, model=model, lang=lang, rounds=rounds,
                                                     concurrency=concurrency, tick=tick)
    if "spy" in benches:
        result["benches"]["spy"] = run_spy(out / "spy", grid, data_root=data_root, games=games, players=players,
                                           seed=0, model=model, lang=lang, speak_timeout=speak_timeout, tick=tick,
                                           concurrency=concurrency)
    if "magic" in benches:
        result["benches"]["magic"] = run_magic_bench(out / "magic", grid, data_root=data_root, settings=settings,
                                                     seed=0, model=model, tick=tick, concurrency=concurrency)
    if (out / "result.json").exists():   # a run extended bench by bench keeps the benches it ran before
        from mas_agents.rundir import read_json
        earlier = read_json(out / "result.json").get("benches") or {}
        result["benches"] = {b: result["benches"].get(b) or earlier[b] for b in BENCHES
                             if b in result["benches"] or b in earlier}
    result["summary"] = summary(result)
    write_json(out / "result.json", result)
    figures(result, out)
    (out / "report.md").write_text(report_md(result), encoding="utf-8")
    return result


def _check_inputs(data_root: Path, benches: list[str], *, script: str, lang: str, settings: str) -> None:
    """Load what each bench needs before anything is written, so that a typo (a script or a
    settings range) fails at once and does not leave a ``config.json`` that refuses the fix."""
    if "wellplay" in benches:
        from mas_agents.eval.datasets.wellplay import load_script
        load_script(data_root, script, lang)
    if "spy" in benches:
        from mas_agents.eval.datasets.wis import load_pairs
        load_pairs(data_root, lang)
    if "magic" in benches:
        from mas_agents.eval.runs.magic_bench import plan
        from mas_agents.graphs.magic.events import SCENARIOS
        plan(data_root, list(SCENARIOS), settings)


def _e(d: dict) -> Estimate:
    return Estimate(**{k: d[k] for k in ("mean", "low", "high", "n", "level", "method")})


# MAgIC Deception is not a rate: (won as chameleon/undercover ÷ those games) + 0.25 × (wrong word
# guesses ÷ word guesses) (mas_agents.eval.metrics.magic, the paper's definition), so it lies in [0, 1.25].
# It is printed in percent like every other metric (one scale in every report and page, as MAgIC's
# Tables 1 and 4 print it), its interval clipped to [0, 125] % and its header saying so.
METRIC_MAX = {"deception": 1.25}


def _rate(d: dict) -> str:
    """A rate (fraction 0..1) in percent with its interval and n, the interval clipped to [0, 100] %."""
    return clip(_e(d), 0.0, 1.0).fmt()


def _metric(d: dict, key: str) -> str:
    """A MAgIC metric in percent with its interval and n: a rate in [0, 100] %, Deception in [0, 125] %."""
    if key in METRIC_MAX:
        return clip(_e(d), 0.0, METRIC_MAX[key]).fmt()
    return _rate(d)


def _header(key: str) -> str:
    return f"{key} (0–{100 * METRIC_MAX[key]:g} %)" if key in METRIC_MAX else key


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
                  "10 units are narrower than nominal (eval/stats.py), and with n = 2 an interval is the range "
                  "of the two units. Read them as indicative; add seeds, games or settings to tighten them."]
    lines.append("")
    b = result["benches"]
    grid = result["variants"]

    def diff_table(rows: list[dict], keys: list[tuple[str, str]], get, scale: float = 100, unit: str = "pt") -> list[str]:
        out = ["Paired differences from the base (pt = percentage points):", "", "| variant | " + " | ".join(t for _, t in keys) + " |",
               "|---|" + "---|" * len(keys)]
        for r in rows:
            if r["variant"] in grid[1:]:
                out.append(f"| {r['variant']} | " + " | ".join(_diff(get(r, k), *((1, "") if k == "avg_score" else (scale, unit)))
                                                             for k, _ in keys) + " |")
        return out + [""]

    if "wellplay" in b:
        cats = ("objective", "reasoning", "relation")
        lines += ["## WellPlay (unit: seed)", "",
                  "| variant | weighted score | objective | reasoning | relation | LLM calls | tokens in/out | s | cache hit |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in b["wellplay"]["rows"]:
            lines.append(f"| {r['variant']} | {_rate(r['weighted_score'])} | "
                         + " | ".join(_rate(r["accuracy"][c]) for c in cats)
                         + f" | {r['cost']['calls']} | {r['cost']['input_tokens']}/{r['cost']['output_tokens']} | {r['cost']['wall_s']} | {_hit(r['cost'])} |")
        lines += [""] + diff_table(b["wellplay"]["rows"], [("weighted_score", "weighted score")] + [(c, c) for c in cats],
                                   lambda r, k: r.get("diff_vs_base", {}).get(k))
        lines += ["![WellPlay](wellplay.png)", ""]
    if "spy" in b:
        sp = b["spy"]
        limit = sp.get("speak_timeout")
        lines += ["## Who is Spy (unit: game; subject vs the base agent)", "",
                  f"Speaking limit: {'none' if limit is None else f'{limit:g} s'}. Cost: {sp.get('cost_of', 'whole games')}.", "",
                  "| variant | avg score | vote accuracy (civilian) | win rate as spy | win rate as civilian | fouls (timeouts) / descriptions | LLM calls | tokens in/out | s | cache hit |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in sp["rows"]:
            lines.append(f"| {r['variant']} | {_e(r['avg_score']).fmt(scale=1, unit='')} | {_rate(r['vote_accuracy_civilian'])} | "
                         f"{_rate(r['win_rate_spy'])} | {_rate(r['win_rate_civilian'])} | "
                         f"{r.get('fouls', '-')} ({r.get('timeouts', '-')}) / {r.get('descriptions', '-')} | "
                         f"{r['cost']['calls']:.0f} | {r['cost']['input_tokens']:.0f}/{r['cost']['output_tokens']:.0f} | {r['cost']['wall_s']} | {_hit(r['cost'])} |")
        lines += [""] + diff_table(sp["rows"], [("avg_score", "avg score"), ("vote_accuracy_civilian", "vote accuracy (civilian)"),
                                                ("win_rate_spy", "win rate as spy"), ("win_rate_civilian", "win rate as civilian")],
                                   lambda r, k: r.get("diff_vs_base", {}).get(k))
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
        lines += [""] + diff_table(mg["rows"], [(k, k) for k in MAGIC_KEYS],
                                   lambda r, k: r["metrics"][k].get("diff_vs_base"))
        lines += ["![MAgIC](magic.png)", ""] + [f"![{r['variant']}]({r['radar']})" for r in mg["rows"]] + [""]
    return "\n".join(lines)


def _diff(d: dict | None, scale: float = 100, unit: str = "pt", digits: int = 1) -> str:
    if not d:
        return "-"
    e = _e(d)
    s = e.fmt(scale=scale, unit=unit, signed=True, digits=digits)
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
            for x, e in zip(xs, ests):   # no estimate (n=0): say so instead of drawing a zero
                if e["mean"] is None:
                    ax.text(x, 0, "n/a", ha="center", va="bottom", fontsize=6, rotation=90)
        ax.set_xticks([i + w * (len(series) - 1) / 2 for i in range(len(groups))])
        long = max((len(g) for g in groups), default=0) > 12   # variant names like plain+player_star+pgm overlap
        ax.set_xticklabels(groups, fontsize=8, rotation=25 if long else 0, ha="right" if long else "center")
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
        # Deception is a rate plus 0.25 x a rate (the paper's definition, eval/metrics/magic.py): in percent like
        # the others, up to 125 %, which its tick says
        labels = [("deception\n(0–125 %)" if k == "deception" else k.replace("_", " ")) for k in MAGIC_KEYS]
        bars(out / "magic.png", labels, {r["variant"]: [r["metrics"][k]["estimate"] for k in MAGIC_KEYS] for r in rows},
             "%", 100)
