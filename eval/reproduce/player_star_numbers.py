"""``mas reproduce player-star``, our numbers read back from the cells: the two aggregations over
scripts (:func:`pooled_aggregate`, PLAYER* App. B.3, the one the report leads with and the
authors' released logs use; :func:`plain_mean_aggregate`, the unweighted mean, a labelled second
figure), one method's summary with its interval and cost (:func:`method_summary`), the dataset
statistics against the paper's Table 1 (:func:`dataset_summary`), the paper's claims judged on
the run (:func:`claims`) and what the run cost (:func:`actual_cost`).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Callable

from mas_agents.eval.reproduce.common import PaperTable
from mas_agents.eval.reproduce.player_star_protocol import CATEGORIES, LABELS, METHODS, WEIGHTS, dataset_stats
from mas_agents.eval.compare.run import cell_dir, game_seat_cost
from mas_agents.eval.wellplay.evaluate import score_interval
from mas_agents.rundir import RunDir

def weighted(accuracy: dict[str, float | None], counts: dict[str, int]) -> float | None:
    """The weighted score from per-category accuracies and question counts (PLAYER* §3):
    Σ_c w_c · correct_c / Σ_c w_c · n_c with w = 10 / 5 / 2; None when there is no question.

    >>> weighted({"objective": 0.5, "reasoning": 1.0, "relation": 0.0}, {"objective": 2, "reasoning": 1, "relation": 5})
    0.5
    """
    den = sum(WEIGHTS[c] * counts.get(c, 0) for c in CATEGORIES)
    if not den:
        return None
    return sum(WEIGHTS[c] * counts.get(c, 0) * (accuracy.get(c) or 0.0) for c in CATEGORIES) / den


#: What each aggregation over scripts is called in the result and the report.
AGGREGATIONS = {
    "pooled": "App. B.3 pooled: per run, Σ right / Σ questions (a type) and Σ points won / Σ points possible "
              "(weighted) over the scripts; mean ± sample std (n − 1) over the runs",
    "plain_mean": "plain mean: per run, the unweighted mean of the scripts' scores; mean ± sample std (n − 1) "
                  "over the runs",
}


def _check_runs(per_script_runs: list[list[dict]], name: str) -> int:
    if not per_script_runs:
        raise ValueError(f"{name}: no script")
    n_runs = {len(r) for r in per_script_runs}
    if len(n_runs) != 1 or 0 in n_runs:
        raise ValueError(f"{name}: scripts have {sorted(n_runs)} runs; every script needs the same")
    return n_runs.pop()


def _over_runs(values: list[float | None]) -> dict:
    """``{"mean", "std", "runs"}`` of the per-run values that are not None (std n − 1; None with
    fewer than two runs; all None for no value)."""
    means = [v for v in values if v is not None]
    if not means:
        return {"mean": None, "std": None, "runs": []}
    return {"mean": statistics.fmean(means), "std": statistics.stdev(means) if len(means) > 1 else None,
            "runs": means}


def pooled_aggregate(per_script_runs: list[list[dict]]) -> dict:
    """PLAYER* App. B.3's aggregation of one method in one language, the one the authors' released
    logs beside ours use (``scripts/player_star_logs.py``, the ``all`` rows): for each evaluation
    run ``i``, a question type's accuracy is the mean of the scripts' accuracies weighted by their
    question counts, i.e. Σ_s right / Σ_s questions, and the weighted score the mean of the
    scripts' scores weighted by their total points, i.e. Σ_s Σ_c w_c·right / Σ_s Σ_c w_c·questions
    (w = 10 / 5 / 2, §3 and App. B.2); then the mean ± the sample standard deviation (n − 1) of
    those per-run figures. (App. B.3 also names a weighted standard deviation whose formula the
    text we hold lost; the std here is over runs, as the released-logs column's.)

    Args:
        per_script_runs: one list per script of its runs, each with ``"counts": {category:
            {"n": questions, "correct": right}}`` (the eval ``result.json`` "runs",
            :func:`mas_agents.eval.wellplay.evaluate.summarise`). Every script must have the same
            number of runs.

    Returns:
        ``{"weighted_score": {"mean", "std", "runs"}, "<category>": {...}, "runs": n, "scripts": n,
        "aggregation": "pooled"}``, fractions 0..1; ``std`` is None with one run; a category no
        script has is ``{"mean": None, "std": None, "runs": []}``.

    Raises:
        ValueError: no script, scripts with different numbers of runs, or a run without
            ``counts`` (names the script's position and the run).
    """
    runs = _check_runs(per_script_runs, "pooled_aggregate")
    for k, script in enumerate(per_script_runs):
        for i, r in enumerate(script):
            if not all(isinstance((r.get("counts") or {}).get(c), dict) for c in CATEGORIES):
                raise ValueError(f"pooled_aggregate: script {k} run {i} has no question counts ('counts' per "
                                 f"{'/'.join(CATEGORIES)}, as an eval result.json's runs carry them)")
    n = [{c: sum(s[i]["counts"][c]["n"] for s in per_script_runs) for c in CATEGORIES} for i in range(runs)]
    right = [{c: sum(s[i]["counts"][c]["correct"] for s in per_script_runs) for c in CATEGORIES} for i in range(runs)]
    dens = [sum(WEIGHTS[c] * n[i][c] for c in CATEGORIES) for i in range(runs)]
    out = {"weighted_score": _over_runs([sum(WEIGHTS[c] * right[i][c] for c in CATEGORIES) / dens[i] if dens[i] else None
                                         for i in range(runs)])}
    for c in CATEGORIES:
        out[c] = _over_runs([right[i][c] / n[i][c] if n[i][c] else None for i in range(runs)])
    out["runs"], out["scripts"], out["aggregation"] = runs, len(per_script_runs), "pooled"
    return out


def plain_mean_aggregate(per_script_runs: list[list[dict]]) -> dict:
    """The plain mean over scripts of one method in one language, reported beside
    :func:`pooled_aggregate` as a labelled second figure (not App. B.3's: every script counts the
    same whatever its size; the aggregation of the upstream figures the WellPlay data README
    quotes, zh PLAYER* 49.8 on the authors' logs against App. B.3's 46.07): for each evaluation run
    ``i``, the mean over scripts of the script's score in run ``i``; then the mean ± the sample
    standard deviation (n − 1) of those run means, for the weighted score and each question type.

    Args:
        per_script_runs: one list per script of its runs, each ``{"weighted_score": float,
            "accuracy": {category: float | None}}`` (fractions 0..1; eval ``result.json`` "runs").
            Every script must have the same number of runs.

    Returns:
        ``{"weighted_score": {"mean", "std", "runs"}, "<category>": {...}, "runs": n, "scripts": n,
        "aggregation": "plain_mean"}``; ``std`` is None with one run; a category no script has is
        ``{"mean": None, "std": None, "runs": []}``.

    Raises:
        ValueError: no script, or scripts with different numbers of runs.
    """
    runs = _check_runs(per_script_runs, "plain_mean_aggregate")

    def over_runs(get: Callable[[dict], float | None]) -> dict:
        means = []
        for i in range(runs):
            vals = [get(s[i]) for s in per_script_runs if get(s[i]) is not None]
            means.append(statistics.fmean(vals) if vals else None)
        return _over_runs(means)

    out = {"weighted_score": over_runs(lambda r: r["weighted_score"])}
    for c in CATEGORIES:
        out[c] = over_runs(lambda r, c=c: (r.get("accuracy") or {}).get(c))
    out["runs"], out["scripts"], out["aggregation"] = runs, len(per_script_runs), "plain_mean"
    return out


def _cells(lang_out: Path, method: str, scripts: list) -> list[Path]:
    return [cell_dir(lang_out, method, s.id, 0) for s in scripts]


def method_summary(lang_out: Path, method: str, scripts: list) -> dict:
    """One method in one language from its finished cells: App. B.3's pooled aggregation
    (``"pooled"``, :func:`pooled_aggregate`, the figure beside the released logs), the plain mean
    over scripts (``"plain_mean"``, :func:`plain_mean_aggregate`, a labelled second figure), the
    95 % interval of the weighted score over questions (pooled over scripts and runs, so centred on
    the pooled mean; :func:`mas_agents.eval.wellplay.evaluate.score_interval`), and the cost means
    per script (gameplay of the seats the method plays, the whole game, evaluation: calls, tokens),
    and each script's own runs (``"per_script_runs"``: script id -> its eval ``result.json``
    "runs", what a one-script figure such as Table A6's row is aggregated from).

    Raises:
        FileNotFoundError: a cell has no ``eval/result.json`` (not finished).
        ValueError: a cell's runs carry no question counts (:func:`pooled_aggregate`)."""

    per_script, records, cost = [], [], []
    for d in _cells(lang_out, method, scripts):
        ev = RunDir(d / "eval").read_result()
        per_script.append(ev["runs"])
        with open(d / "eval" / "answers.jsonl", encoding="utf-8") as f:
            records += [json.loads(line) for line in f if line.strip()]
        c = {"eval_calls": ev["llm"]["calls"], "eval_input_tokens": ev["llm"]["input_tokens"],
             "eval_output_tokens": ev["llm"]["output_tokens"], "eval_model_s": ev["llm"]["latency_s"],
             "game_calls": 0, "game_input_tokens": 0, "game_output_tokens": 0, "game_model_s": 0.0,
             "seat_calls": 0, "seat_input_tokens": 0, "seat_output_tokens": 0, "games": 0}
        if RunDir(d / "game").has_result():
            g = RunDir(d / "game").read_result()
            seat = game_seat_cost(d / "game") or {}
            c.update(game_calls=g["llm"]["calls"], game_input_tokens=g["llm"]["input_tokens"],
                     game_output_tokens=g["llm"]["output_tokens"], game_model_s=g["llm"]["latency_s"],
                     seat_calls=seat.get("calls"), seat_input_tokens=seat.get("input_tokens"),
                     seat_output_tokens=seat.get("output_tokens"), games=1,
                     murderer_caught=(g.get("outcome") or {}).get("murderer_caught"))
        cost.append(c)
    agg = pooled_aggregate(per_script)
    mean_cost = {k: (statistics.fmean(v for v in vals) if vals else None)
                 for k in cost[0] if k != "murderer_caught"
                 for vals in [[c[k] for c in cost if c.get(k) is not None]]}
    caught = [c["murderer_caught"] for c in cost if c.get("murderer_caught") is not None]
    return {"method": method, "pooled": agg, "plain_mean": plain_mean_aggregate(per_script),
            "per_script_runs": {s.id: runs for s, runs in zip(scripts, per_script)},
            "interval": score_interval(records), "questions": len(records) // max(agg["runs"], 1),
            "cost": mean_cost, "games": sum(c["games"] for c in cost), "murderer_caught": caught}


def _gt(a: float | None, b: float | None) -> bool | None:
    return None if a is None or b is None else a > b


def claims(langs: dict[str, dict[str, dict]]) -> list[dict]:
    """The paper's qualitative claims judged on this run (PLAYER* abstract and §4, as listed in
    issue 27). ``langs``: lang -> method -> :func:`method_summary`. Each claim is
    ``{"text", "holds": True | False | None, "evidence"}``; None (cannot tell) when a number it
    needs is missing. Every verdict is judged on App. B.3's pooled means (``"pooled"``,
    :func:`pooled_aggregate`, the aggregation of the released-logs column), never on the plain
    mean; "above" is a strictly greater pooled mean.

    1. PLAYER* is best on every question type: its mean accuracy per type (and weighted) is above
       each game-playing baseline's (Werewolf, O-CoT, ThinkThrice) and PP's, in every language run.
    2. PLAYER* is above OP on objective questions, in every language run.
    3. English above Chinese: PLAYER*'s weighted score in en is above zh.
    4. PLAYER* is the cheapest in gameplay: fewer gameplay calls per game by the seats it plays
       than each game-playing baseline, in every language run (Table A5).
    """
    def mean(lang, m, key):
        s = langs.get(lang, {}).get(m)
        return None if s is None else s["pooled"][key]["mean"]

    out = []
    # 1
    verdicts, ev = [], []
    for lang in langs:
        for key in (*CATEGORIES, "weighted_score"):
            for m in ("werewolf", "ocot", "thinkthrice", "pp"):
                v = _gt(mean(lang, "player_star", key), mean(lang, m, key))
                verdicts.append(v)
                if v is False:
                    ev.append(f"{lang} {key}: PLAYER* {pct(mean(lang, 'player_star', key))} vs {LABELS[m]} {pct(mean(lang, m, key))}")
    out.append({"text": "PLAYER* is best on every question type (above Werewolf, O-CoT, ThinkThrice and PP)",
                "holds": _all(verdicts), "evidence": ("; ".join(ev[:6]) + (f"; {len(ev) - 6} more" if len(ev) > 6 else ""))
                if ev else f"{sum(1 for v in verdicts if v)} of {len(verdicts)} comparisons above"})
    # 2
    verdicts = [_gt(mean(lang, "player_star", "objective"), mean(lang, "op", "objective")) for lang in langs]
    out.append({"text": "PLAYER* is above OP on objective questions", "holds": _all(verdicts),
                "evidence": "; ".join(f"{lang}: PLAYER* {pct(mean(lang, 'player_star', 'objective'))} vs OP "
                                      f"{pct(mean(lang, 'op', 'objective'))}" for lang in langs)})
    # 3
    en, zh = mean("en", "player_star", "weighted_score"), mean("zh", "player_star", "weighted_score")
    others = [f"{LABELS[m]} {pct(mean('en', m, 'weighted_score'))} vs {pct(mean('zh', m, 'weighted_score'))}"
              for m in METHODS[1:] if mean("en", m, "weighted_score") is not None]
    out.append({"text": "English scores above Chinese", "holds": _gt(en, zh),
                "evidence": f"PLAYER* weighted en {pct(en)} vs zh {pct(zh)}; others en vs zh: " + ", ".join(others)})
    # 4
    verdicts, ev = [], []
    for lang in langs:
        ps = (langs[lang].get("player_star") or {}).get("cost", {}).get("seat_calls")
        vs = []
        for m in ("werewolf", "ocot", "thinkthrice"):
            c = (langs[lang].get(m) or {}).get("cost", {}).get("seat_calls")
            verdicts.append(None if ps is None or c is None else ps < c)
            vs.append(f"{LABELS[m]} {num(c)}")
        ev.append(f"{lang}: PLAYER* {num(ps)} vs " + ", ".join(vs))
    out.append({"text": "PLAYER* is the cheapest in gameplay (fewer gameplay calls per game by its own seats than each baseline)",
                "holds": _all(verdicts), "evidence": "; ".join(ev)})
    return out


def _all(verdicts: list[bool | None]) -> bool | None:
    """False if any is False, None if any is None (and none False), else True; None for []."""
    if not verdicts or (None in verdicts and False not in verdicts):
        return None
    return all(verdicts)


def pct(x: float | None, digits: int = 1) -> str:
    """A fraction as percent text (``0.412`` -> ``"41.2"``); ``"-"`` for None."""
    return "-" if x is None else f"{100 * x:.{digits}f}"


def num(x: float | None) -> str:
    """A count or mean as text: whole numbers without decimals, else one; ``"-"`` for None."""
    if x is None:
        return "-"
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"



def dataset_summary(ordered: dict[str, list], table1: PaperTable) -> dict:
    """The dataset statistics of every loaded script (``ordered``: lang -> scripts) against the
    paper's Table 1 totals: ``{"en": rows (English, else the first language), "by_lang", "totals",
    "zh_differs" (script id -> "same" or the zh counts that differ), "flags" (each difference,
    one phrase)}``."""
    stats = {lang: dataset_stats(sorted(ordered[lang], key=lambda s: s.id)) for lang in ordered}
    base = stats.get("en") or next(iter(stats.values()))
    zh_differs = {}
    if "en" in stats and "zh" in stats:
        zh = {r["id"]: r for r in stats["zh"]}
        for r in stats["en"]:
            diff = [k for k in ("characters", *CATEGORIES, "questions") if zh[r["id"]][k] != r[k]]
            zh_differs[r["id"]] = "same" if not diff else ", ".join(f"{k} {zh[r['id']][k]}" for k in diff)
    totals = {k: sum(r[k] for r in base) for k in ("characters", *CATEGORIES, "questions", "murderers")}
    paper = table1.row(row="total")
    flags = [f"{k}: paper {paper[k]}, data {len(base) if k == 'scripts' else totals[k]}"
             for k in ("scripts", "characters", *CATEGORIES, "questions")
             if paper.get(k) and PaperTable.number(paper[k]) != (len(base) if k == "scripts" else totals[k])]
    flags += [f"zh {sid}: {d}" for sid, d in zh_differs.items() if d != "same"]
    return {"en": base, "by_lang": stats, "totals": totals, "zh_differs": zh_differs, "flags": flags}


def actual_cost(out: Path, langs: tuple[str, ...], methods: list[str], chosen: dict[str, list]) -> dict[str, int]:
    """What the run's cells cost, from their records: ``{"calls", "input_tokens",
    "output_tokens"}`` summed over every game and evaluation of the chosen cells (a resumed
    evaluation's calls before the stop too)."""
    tot = {"calls": 0, "input_tokens": 0, "output_tokens": 0}
    for lang in langs:
        for m in methods:
            for sc in chosen[lang]:
                d = cell_dir(Path(out) / lang, m, sc.id, 0)
                for part in ("game", "eval"):
                    p = RunDir(d / part).result
                    if p.exists():
                        llm = json.loads(p.read_text(encoding="utf-8")).get("llm") or {}
                        for k in tot:
                            tot[k] += int(llm.get(k) or 0)
    return tot
