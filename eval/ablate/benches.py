"""The three benches of an ablation (``mas ablate``, :mod:`mas_agents.eval.ablate.grid`): WellPlay
(compare cells, unit = seed), Who is Spy (a tournament per variant as the subject, unit = game) and
MAgIC (the variant as challenger, unit = setting), each with its estimates, paired differences from
the base and the variant's own cost.

Imports kept inside functions: the Who-is-Spy tournament and the MAgIC bench runners
(:mod:`mas_agents.graphs.wis.tournament`, :mod:`mas_agents.graphs.magic.bench`), which load
langgraph and faiss, in the bench that plays them.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Callable

from mas_agents.graphs.mmg.dataset import load_script
from mas_agents.graphs.wis.dataset import load_pairs
from mas_agents.game.cost import actor_cost, method_seats
from mas_agents.graphs.magic.metrics import scenario_metrics
from mas_agents.graphs.wis.metrics import player_rows
from mas_agents.graphs.wis.leaderboard import Leaderboard
from mas_agents.eval.compare.run import CompareConfig, cell_dir, run_compare
from mas_agents.stats import bootstrap_mean, bootstrap_units, paired_difference
from mas_agents.events import read_events
from mas_agents.graphs.magic.events import SCENARIOS
from mas_agents.rundir import RunDir

#: The type of the benches' ``cfg``: :class:`mas_agents.eval.ablate.grid.AblateConfig` (not imported:
#: the runner imports this module, and the layer check counts even an annotation's import as a cycle).
AblateConfig = Any

#: The WellPlay methods run beside every variant: the evaluations without a game and the model-free baselines.
BASELINES = ("pp", "op", "always_a", "random")


def _est(values: list[float | None], seed: int) -> dict:
    return bootstrap_mean(values, seed=seed).to_dict()


def _paired(arm: dict, base: dict) -> dict:
    """Paired difference ``arm - base`` over the units (keys) present in both (:func:`mas_agents.stats.paired_difference`)."""
    return paired_difference(arm, base).to_dict()


# ---------------------------------------------------------------------------- WellPlay
def wellplay_cost(d: Path) -> dict:
    """The variant's cost in one compare cell ``d``: every evaluation call, and the game's calls
    by the characters the variant played (not the murderer, whom PLAYER*'s protocol always gives
    the ``plain`` framework). Same units as :func:`actor_cost` (``wall_s`` = model seconds)."""
    parts = [actor_cost(RunDir(d / "eval").calls, None)]
    if RunDir(d / "game").has_result():
        roles = RunDir(d / "game").read_result().get("roles") or {}
        parts.append(actor_cost(RunDir(d / "game").calls, method_seats(roles)))
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


def run_wellplay(cfg: AblateConfig, grid: list[str], *, tick: Callable | None = None) -> dict:
    """The WellPlay part of ``cfg`` into ``cfg.out/wellplay``: compare cells for every variant of
    ``grid`` and baseline (:func:`mas_agents.eval.compare.run.run_compare`); estimates per method."""
    out = Path(cfg.out) / "wellplay"
    sc = load_script(cfg.data_root, cfg.script, cfg.lang)
    res = run_compare(CompareConfig(data_root=cfg.data_root, out=out, methods=grid + list(BASELINES), scripts=[sc],
                                    seeds=cfg.seeds, model=cfg.model, lang=cfg.lang, rounds=cfg.rounds,
                                    concurrency=cfg.concurrency), tick=tick)
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
    out = {}
    for g in games:
        idx = int(g["game_id"].rsplit("-g", 1)[1])
        row = next(r for r in player_rows(g) if r["seat"] == subject_seat_of[idx])
        name = next(p["name"] for p in g["players"] if p["seat"] == subject_seat_of[idx])
        cost = actor_cost(RunDir(games_dir / f"g{idx:04d}").calls, {name})
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


def run_spy(cfg: AblateConfig, grid: list[str], *, seed: int = 0, tick: Callable | None = None) -> dict:
    """The Who-is-Spy part of ``cfg`` into ``cfg.out/spy``: one tournament per variant of ``grid``
    as subject vs the base (same plan, from ``seed``).

    ``cfg.speak_timeout``: the WiS speaking limit in seconds (the answer's whole wall time, a block's
    readings included); ``None`` = no limit, the ablation default, so that a block's extra model
    calls on a slow machine are not scored as timeout fouls."""
    # langgraph (the game's graph): loaded when the part runs, not by the report readers of this package
    from mas_agents.graphs.wis.tournament import TournamentConfig, run_tournament
    out, data_root, games, players, lang = Path(cfg.out) / "spy", cfg.data_root, cfg.games, cfg.players, cfg.lang
    model, speak_timeout, concurrency = cfg.model, cfg.speak_timeout, cfg.concurrency
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
    out: dict[int, list] = {}
    costs = []
    for name in sorted(names):
        d = run_dir / "games" / name
        sid = int(name.rsplit("-s", 1)[1])
        out.setdefault(sid, []).append(read_events(RunDir(d).events))
        seats = set(RunDir(d).read_result().get("challenger_seats") or [])
        costs.append(actor_cost(RunDir(d).calls, seats))
    return out, _sum_costs(costs)


def magic_bootstrap(by_setting: dict[int, list], base_by_setting: dict[int, list] | None = None, *,
                    n_boot: int = 1000, seed: int = 0) -> dict[str, dict]:
    """Per MAgIC metric: the estimate over settings (resample setting ids, recompute from events),
    and with ``base_by_setting`` the paired difference (:func:`mas_agents.stats.bootstrap_units`)."""

    def metrics(games_by_unit: list[list]) -> dict:
        return scenario_metrics([g for games in games_by_unit for g in games])

    return bootstrap_units(by_setting, metrics, MAGIC_KEYS, base_by_setting, n_boot=n_boot, seed=seed,
                           unit="settings")


def run_magic_bench(cfg: AblateConfig, grid: list[str], *, seed: int = 0, tick: Callable | None = None) -> dict:
    """The MAgIC part of ``cfg`` into ``cfg.out/magic``: each variant of ``grid`` challenges the
    base on the same settings (``cfg.settings``), from ``seed``."""
    # langgraph (the games' graph): loaded when the part runs, not by the report readers of this package
    from mas_agents.graphs.magic.bench import MagicBenchConfig, game_label, run_magic
    from mas_agents.graphs.magic.bench_report import radar_chart
    out, data_root, settings = Path(cfg.out) / "magic", cfg.data_root, cfg.settings
    model, concurrency = cfg.model, cfg.concurrency
    base = grid[0]
    dirs, by_setting, costs = {}, {}, {}
    for v in grid:
        d = out / v.replace("+", "_")
        res = run_magic(MagicBenchConfig(data_root=data_root, out=d, scenarios=list(SCENARIOS), challenger=v,
                                         defender=base, settings=settings, model=model, seed=seed,
                                         concurrency=concurrency),
                        tick=(lambda label: tick(f"magic {v} {game_label(label)}")) if tick else None)
        dirs[v] = d
        by_setting[v], costs[v] = _magic_by_setting(d, res["games"])   # each game's events read once
        radar_chart(res["metrics"], d / "radar.png", title=v)
    rows = []
    for v in grid:
        b = magic_bootstrap(by_setting[v], None if v == base else by_setting[base], seed=seed)
        rows.append({"variant": v, "n": len(by_setting[v]), "metrics": b, "cost": costs[v],
                     "radar": str((dirs[v] / "radar.png").relative_to(out.parent))})
    return {"unit": "setting", "cost_of": "the challenger's seats", "rows": rows}


