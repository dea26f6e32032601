"""``mas reproduce player-star``: PLAYER* (Zhu, Zhao, Du, Gui, He 2024, arXiv:2404.17662) on WellPlay.

The protocol (issue 27, from PLAYER* §3-§4 and the authors' repository):

* every seat is played by one model (``--model``); the murderer plays the fixed framework
  :data:`mas_agents.graphs.mmg.rules.MURDERER_SPEC` (``plain``: the chain-of-thought agent) whatever the
  method, which is what ``mas wellplay compare`` does (PLAYER* §4.1);
* :data:`ROUNDS` = 3 open questioning rounds, :data:`QUESTIONS` = 1 question per agent per round;
* methods (:data:`METHODS`): ``player_star`` (PLAYER*), ``werewolf``, ``ocot`` (O-CoT),
  ``thinkthrice`` (the game-playing baselines, PLAYER* Appendix C.2), and ``pp`` / ``op``
  (personal / omniscient perspective: evaluation only, no game), plus the model-free chance
  lines ``always_a`` / ``random`` (:data:`CHANCE`);
* one game per (method, script) and :data:`EVAL_RUNS` = 3 evaluation runs of every character's
  question file (run ``i`` shuffles the options and seeds the model with ``i``; every method
  sees the same shuffles);
* English and Chinese scripts (:data:`LANGS`).

It composes :func:`mas_agents.eval.runs.compare.run_compare` once per language into ``out/<lang>/`` (the
cells, their games, evaluations, ``report.md`` and ``scores.png`` are compare's) and reads the
cells back for the paper's aggregation (:func:`paper_aggregate`), the per-question 95 %
intervals (:func:`mas_agents.eval.runs.wellplay_eval.score_interval`), the cost table in the form of
PLAYER* Table A5, the dataset statistics (Table 1) and the qualitative claims.

``--limit N`` keeps the first N scripts of each language in :func:`script_order` (fewest
characters first, then fewest questions: the cheapest games and evaluations first). Rounds and
questions per agent are never cut. A budget-limited or smoke run can also take a subset of the
languages (``--langs``), of the methods (``--methods``; the model-free chance lines always come
along, they cost nothing) and of the evaluation runs (``--eval-runs 1`` or 2 of the paper's 3):
:func:`left_out` lists what a run left out, and the report then marks itself partial and says so.
A rerun may add languages or methods to a run (finished cells are reused); the evaluation runs
must stay the same. An evaluation cut off midway resumes at its next unanswered question
(:func:`mas_agents.eval.runs.wellplay_run.run_wellplay_eval`).
"""

from __future__ import annotations

import functools
import json
import statistics
import threading
from pathlib import Path
from typing import Any, Callable

from mas_agents.eval.reproduce.common import (
    claim,
    differences,
    load_table,
    md_table,
    partial_note,
    source_line,
    write_report,
    PaperTable,
    Progress,
)

PAPER = "player-star"
#: The methods of PLAYER* §4 in the order of its tables: PLAYER*, the game-playing baselines
#: (Appendix C.2) and the evaluation-only perspectives PP / OP.
METHODS = ("player_star", "werewolf", "ocot", "thinkthrice", "pp", "op")
GAME_METHODS = ("player_star", "werewolf", "ocot", "thinkthrice")
#: The model-free chance lines on the same questions and shuffles (eval/runs/wellplay_eval.py).
CHANCE = ("always_a", "random")
LABELS = {"player_star": "PLAYER*", "werewolf": "Werewolf", "ocot": "O-CoT", "thinkthrice": "ThinkThrice",
          "pp": "PP", "op": "OP", "always_a": "always a", "random": "random"}
LANGS = ("en", "zh")
ROUNDS, QUESTIONS, EVAL_RUNS = 3, 1, 3
CATEGORIES = ("objective", "reasoning", "relation")
#: PLAYER* §3: question weights (objective 10, reasoning 5, relation 2).
WEIGHTS = {"objective": 10, "reasoning": 5, "relation": 2}
RESUME_KEYS = ("model", "limit", "rounds", "questions", "eval_runs", "methods")
#: The smoke subset of the README (issue 47 item 3): the cheapest script, English, PLAYER* alone, one
#: evaluation run: ``mas reproduce player-star --limit 1 --langs en --methods player_star --eval-runs 1``
#: (1 game and 36 questions: 77 calls, about 137,000 prompt tokens by ``--estimate``; on the embedded
#: model at the 2-core machine's idle 233 prompt tokens/s, benchmarks/results/llm.md, about 11 minutes
#: of model time). Adding O-CoT (95 calls, 160,000 prompt tokens) doubles it, past 20 minutes.
SMOKE = {"limit": 1, "langs": ("en",), "methods": ("player_star",), "eval_runs": 1}


def check_subsets(langs: Any, methods: Any, eval_runs: Any) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """Validate ``--langs`` / ``--methods`` / ``--eval-runs`` (strings are comma-separated lists);
    returns ``(langs, methods, eval_runs)`` in the protocol's order (:data:`LANGS`, :data:`METHODS`).

    Raises:
        ValueError: an unknown or repeated language or method, an empty list, or ``eval_runs``
            outside 1..:data:`EVAL_RUNS` (the message names the option and the accepted values)."""
    def items(v: Any, opt: str, known: tuple[str, ...]) -> tuple[str, ...]:
        got = [x.strip() for x in (v.split(",") if isinstance(v, str) else v)]
        if not got or any(not x for x in got):
            raise ValueError(f"{opt}: give a comma-separated list from {', '.join(known)}")
        bad = [x for x in got if x not in known]
        if bad:
            raise ValueError(f"{opt}: unknown {', '.join(map(repr, bad))}; choose from {', '.join(known)}")
        if len(set(got)) != len(got):
            raise ValueError(f"{opt}: {', '.join(sorted({x for x in got if got.count(x) > 1}))} given twice")
        return tuple(x for x in known if x in got)
    langs_t = items(LANGS if langs is None else langs, "--langs", LANGS)
    methods_t = items(METHODS if methods is None else methods, "--methods",
                      METHODS)
    runs = EVAL_RUNS if eval_runs is None else eval_runs
    if not isinstance(runs, int) or not 1 <= runs <= EVAL_RUNS:
        raise ValueError(f"--eval-runs: 1 to {EVAL_RUNS} (the paper's {EVAL_RUNS} passes), got {runs!r}")
    return langs_t, methods_t, runs


def left_out(langs: tuple[str, ...], methods: tuple[str, ...], eval_runs: int) -> list[str]:
    """What a subset run leaves out of the protocol, one phrase each (``[]`` for the whole
    protocol), e.g. ``["language zh", "methods Werewolf, ThinkThrice, PP, OP", "evaluation runs
    2 of 3 (ran 1)"]``."""
    out = []
    if missing := [x for x in LANGS if x not in langs]:
        out.append(f"language{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    if missing := [LABELS[m] for m in METHODS if m not in methods]:
        out.append(f"method{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    if eval_runs < EVAL_RUNS:
        out.append(f"evaluation runs {EVAL_RUNS - eval_runs} of {EVAL_RUNS} (ran {eval_runs})")
    return out


# ----------------------------------------------------------------------------- scripts

def script_order(data_root: Path, lang: str) -> list:
    """Every WellPlay script of ``lang`` (loaded :class:`mas_agents.eval.datasets.wellplay.Script`), cheapest
    first: by number of characters (a game's calls grow with the seats), then number of
    per-character questions (an evaluation's calls), then script id. The order is the same in en
    and zh (the counts are identical, data README "Counts"); ``--limit N`` takes the first N.

    Raises:
        mas_agents.eval.datasets.DataError: a missing or malformed script (names the file)."""
    from mas_agents.eval.datasets.wellplay import load_all
    return sorted(load_all(data_root, lang), key=lambda s: (len(s.characters), len(s.all_questions()), s.id))


def dataset_stats(scripts: list) -> list[dict]:
    """Per script: ``{"id", "name", "characters", "objective", "reasoning", "relation",
    "questions", "murderers"}`` counted from the loaded scripts (per-character question files,
    PLAYER* Table 1's unit)."""
    rows = []
    for s in scripts:
        qs = s.all_questions()
        rows.append({"id": s.id, "name": s.name, "characters": len(s.characters),
                     **{c: sum(1 for q in qs if q.category == c) for c in CATEGORIES},
                     "questions": len(qs), "murderers": sum(1 for c in s.characters if c.is_murderer)})
    return rows


# ----------------------------------------------------------------------------- aggregation

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


def paper_aggregate(per_script_runs: list[list[dict]]) -> dict:
    """The paper's aggregation of one method in one language (PLAYER* §4; the authors' 2024
    result logs, data README "Upstream result logs"): for each evaluation run ``i``, the mean over
    scripts of the script's score in run ``i``; then the mean ± the sample standard deviation
    (n − 1) of those run means, for the weighted score and each question type.

    Args:
        per_script_runs: one list per script of its runs, each ``{"weighted_score": float,
            "accuracy": {category: float | None}}`` (fractions 0..1; eval ``result.json`` "runs").
            Every script must have the same number of runs.

    Returns:
        ``{"weighted_score": {"mean", "std", "runs"}, "<category>": {...}, "runs": n, "scripts": n}``;
        ``std`` is None with one run; a category no script has is ``{"mean": None, "std": None}``.

    Raises:
        ValueError: no script, or scripts with different numbers of runs.
    """
    if not per_script_runs:
        raise ValueError("paper_aggregate: no script")
    n_runs = {len(r) for r in per_script_runs}
    if len(n_runs) != 1 or 0 in n_runs:
        raise ValueError(f"paper_aggregate: scripts have {sorted(n_runs)} runs; every script needs the same")
    runs = n_runs.pop()

    def over_runs(get: Callable[[dict], float | None]) -> dict:
        means = []
        for i in range(runs):
            vals = [get(s[i]) for s in per_script_runs if get(s[i]) is not None]
            if vals:
                means.append(statistics.fmean(vals))
        if not means:
            return {"mean": None, "std": None, "runs": []}
        return {"mean": statistics.fmean(means), "std": statistics.stdev(means) if len(means) > 1 else None,
                "runs": means}

    out = {"weighted_score": over_runs(lambda r: r["weighted_score"])}
    for c in CATEGORIES:
        out[c] = over_runs(lambda r, c=c: (r.get("accuracy") or {}).get(c))
    out["runs"], out["scripts"] = runs, len(per_script_runs)
    return out


def _cells(lang_out: Path, method: str, scripts: list) -> list[Path]:
    from mas_agents.eval.runs.compare import cell_dir
    return [cell_dir(lang_out, method, s.id, 0) for s in scripts]


def method_summary(lang_out: Path, method: str, scripts: list) -> dict:
    """One method in one language from its finished cells: the paper's aggregation
    (:func:`paper_aggregate`), the 95 % interval of the weighted score over questions (pooled over
    scripts and runs, :func:`mas_agents.eval.runs.wellplay_eval.score_interval`), and the cost means per
    script (gameplay of the seats the method plays, the whole game, evaluation: calls, tokens).

    Raises:
        FileNotFoundError: a cell has no ``eval/result.json`` (not finished)."""
    from mas_agents.eval.runs.compare import game_seat_cost
    from mas_agents.eval.runs.wellplay_eval import score_interval
    from mas_agents.rundir import read_json

    per_script, records, cost = [], [], []
    for d in _cells(lang_out, method, scripts):
        ev = read_json(d / "eval" / "result.json")
        per_script.append(ev["runs"])
        with open(d / "eval" / "answers.jsonl", encoding="utf-8") as f:
            records += [json.loads(line) for line in f if line.strip()]
        c = {"eval_calls": ev["llm"]["calls"], "eval_input_tokens": ev["llm"]["input_tokens"],
             "eval_output_tokens": ev["llm"]["output_tokens"], "eval_model_s": ev["llm"]["latency_s"],
             "game_calls": 0, "game_input_tokens": 0, "game_output_tokens": 0, "game_model_s": 0.0,
             "seat_calls": 0, "seat_input_tokens": 0, "seat_output_tokens": 0, "games": 0}
        if (d / "game" / "result.json").exists():
            g = read_json(d / "game" / "result.json")
            seat = game_seat_cost(d / "game") or {}
            c.update(game_calls=g["llm"]["calls"], game_input_tokens=g["llm"]["input_tokens"],
                     game_output_tokens=g["llm"]["output_tokens"], game_model_s=g["llm"]["latency_s"],
                     seat_calls=seat.get("calls"), seat_input_tokens=seat.get("input_tokens"),
                     seat_output_tokens=seat.get("output_tokens"), games=1,
                     murderer_caught=(g.get("outcome") or {}).get("murderer_caught"))
        cost.append(c)
    agg = paper_aggregate(per_script)
    mean_cost = {k: (statistics.fmean(v for v in vals) if vals else None)
                 for k in cost[0] if k != "murderer_caught"
                 for vals in [[c[k] for c in cost if c.get(k) is not None]]}
    caught = [c["murderer_caught"] for c in cost if c.get("murderer_caught") is not None]
    return {"method": method, "paper": agg, "interval": score_interval(records), "questions": len(records) // max(agg["runs"], 1),
            "cost": mean_cost, "games": sum(c["games"] for c in cost), "murderer_caught": caught}


# ----------------------------------------------------------------------------- claims

def _gt(a: float | None, b: float | None) -> bool | None:
    return None if a is None or b is None else a > b


def claims(langs: dict[str, dict[str, dict]]) -> list[dict]:
    """The paper's qualitative claims judged on this run (PLAYER* abstract and §4, as listed in
    issue 27). ``langs``: lang -> method -> :func:`method_summary`. Each claim is
    ``{"text", "holds": True | False | None, "evidence"}``; None (cannot tell) when a number it
    needs is missing. "Above" is a strictly greater mean (the paper's aggregation).

    1. PLAYER* is best on every question type: its mean accuracy per type (and weighted) is above
       each game-playing baseline's (Werewolf, O-CoT, ThinkThrice) and PP's, in every language run.
    2. PLAYER* is above OP on objective questions, in every language run.
    3. English above Chinese: PLAYER*'s weighted score in en is above zh.
    4. PLAYER* is the cheapest in gameplay: fewer gameplay calls per game by the seats it plays
       than each game-playing baseline, in every language run (Table A5).
    """
    def mean(lang, m, key):
        s = langs.get(lang, {}).get(m)
        return None if s is None else s["paper"][key]["mean"]

    out = []
    # 1
    verdicts, ev = [], []
    for lang in langs:
        for key in (*CATEGORIES, "weighted_score"):
            for m in ("werewolf", "ocot", "thinkthrice", "pp"):
                v = _gt(mean(lang, "player_star", key), mean(lang, m, key))
                verdicts.append(v)
                if v is False:
                    ev.append(f"{lang} {key}: PLAYER* {_pct(mean(lang, 'player_star', key))} vs {LABELS[m]} {_pct(mean(lang, m, key))}")
    out.append({"text": "PLAYER* is best on every question type (above Werewolf, O-CoT, ThinkThrice and PP)",
                "holds": _all(verdicts), "evidence": ("; ".join(ev[:6]) + (f"; {len(ev) - 6} more" if len(ev) > 6 else ""))
                if ev else f"{sum(1 for v in verdicts if v)} of {len(verdicts)} comparisons above"})
    # 2
    verdicts = [_gt(mean(lang, "player_star", "objective"), mean(lang, "op", "objective")) for lang in langs]
    out.append({"text": "PLAYER* is above OP on objective questions", "holds": _all(verdicts),
                "evidence": "; ".join(f"{lang}: PLAYER* {_pct(mean(lang, 'player_star', 'objective'))} vs OP "
                                      f"{_pct(mean(lang, 'op', 'objective'))}" for lang in langs)})
    # 3
    en, zh = mean("en", "player_star", "weighted_score"), mean("zh", "player_star", "weighted_score")
    others = [f"{LABELS[m]} {_pct(mean('en', m, 'weighted_score'))} vs {_pct(mean('zh', m, 'weighted_score'))}"
              for m in METHODS[1:] if mean("en", m, "weighted_score") is not None]
    out.append({"text": "English scores above Chinese", "holds": _gt(en, zh),
                "evidence": f"PLAYER* weighted en {_pct(en)} vs zh {_pct(zh)}; others en vs zh: " + ", ".join(others)})
    # 4
    verdicts, ev = [], []
    for lang in langs:
        ps = (langs[lang].get("player_star") or {}).get("cost", {}).get("seat_calls")
        vs = []
        for m in ("werewolf", "ocot", "thinkthrice"):
            c = (langs[lang].get(m) or {}).get("cost", {}).get("seat_calls")
            verdicts.append(None if ps is None or c is None else ps < c)
            vs.append(f"{LABELS[m]} {_num(c)}")
        ev.append(f"{lang}: PLAYER* {_num(ps)} vs " + ", ".join(vs))
    out.append({"text": "PLAYER* is the cheapest in gameplay (fewer gameplay calls per game by its own seats than each baseline)",
                "holds": _all(verdicts), "evidence": "; ".join(ev)})
    return out


def _all(verdicts: list[bool | None]) -> bool | None:
    """False if any is False, None if any is None (and none False), else True; None for []."""
    if not verdicts or (None in verdicts and False not in verdicts):
        return None
    return all(verdicts)


def _pct(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{100 * x:.{digits}f}"


def _num(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"


# ----------------------------------------------------------------------------- report

def _pm(a: dict) -> str:
    """``"41.2 ± 1.3"`` (percent), ``"41.2 (1 run, no std)"``, ``"-"``."""
    if a["mean"] is None:
        return "-"
    return f"{_pct(a['mean'])} ± {_pct(a['std'])}" if a["std"] is not None else f"{_pct(a['mean'])} (no std, 1 run)"


def report_md(result: dict, tables: dict[str, PaperTable]) -> str:
    """The Markdown report (see the module docstring for what each table holds)."""
    from mas_agents.eval.stats import Estimate

    logs = tables["released_logs"]
    lines = ["# PLAYER* on WellPlay (Zhu et al. 2024, arXiv:2404.17662)", "",
             f"Model (every seat): `{result['model']}`; the murderer plays `{result['murderer_agent']}` whatever the "
             f"method; {ROUNDS} rounds × {QUESTIONS} question per agent; one game per (method, script); "
             f"{result['eval_runs']} evaluation run{'s' if result['eval_runs'] > 1 else ''} (option shuffle and "
             f"model seed {', '.join(map(str, range(result['eval_runs'])))}; the same for every method; the paper: "
             f"{EVAL_RUNS}); strict scoring.", ""]
    lines += partial_note(result["limit"], result["scripts_run"], result["scripts_full"],
                          f"scripts ({', '.join(result['langs'])})")
    if result.get("left_out"):
        lines += [f"> **Partial run: a subset of the protocol.** Left out: {'; '.join(result['left_out'])}. "
                  "The paper's aggregation, claims and cost below cover only what ran; a claim that needs "
                  "something left out says \"cannot tell\".", ""]
    if result.get("estimate_vs_actual"):
        lines += estimate_lines(result["estimate_vs_actual"])
    for lang in result["langs"]:
        L = result["langs"][lang]
        lines += [f"## {'English' if lang == 'en' else 'Chinese'} ({lang}): {', '.join(L['scripts'])}", "",
                  "Weighted mean ± std over the evaluation runs (the paper's aggregation: each run's mean over "
                  "scripts; std n − 1), percent. The 95 % interval is ours: percentile bootstrap over questions "
                  "(each question pooled over the runs and scripts; n = questions).", ""]
        rows = []
        for m in (*METHODS, *CHANCE):
            s = L["methods"].get(m)
            if s is None:
                continue
            p = s["paper"]
            iv = s["interval"]
            est = Estimate(**{k: iv[k] for k in ("mean", "low", "high", "n", "level", "method")})
            try:   # the App. B.3 aggregate over the language's scripts
                log = logs.row(lang=lang, method=m, script_id="all", category="overall")
                paper_log = f"{log['mean']} ± {log['std']} ({log['scripts']} scripts)"
            except KeyError:
                paper_log = "-"
            rows.append([LABELS[m], *(_pm(p[c]) for c in CATEGORIES), _pm(p["weighted_score"]), est.fmt(unit=""),
                         "not published" if m not in CHANCE else "-", paper_log])
        lines += md_table(["method", "objective (ours)", "reasoning (ours)", "relation (ours)", "weighted (ours)",
                           "weighted, pooled [95 % interval] (n questions)", "paper (§4 results)",
                           "authors' released logs (not the paper)"], rows)
        lines += ["", "Paper: the text we hold of PLAYER* lost every number of its result tables (A3-A5), so that "
                  "column says \"not published\". Authors' released logs: their 2024 evaluation files recomputed "
                  "(`scripts/player_star_logs.py`), the paper's App. B.3 weighting over scripts, mean ± std (n − 1) "
                  "over the 3 passes; what their code ran that the paper does not say is in "
                  "`eval/reproduce/papers/player_star_protocol_differences.md`. " + source_line(logs),
                  "", f"![weighted score by method]({lang}/scores.png)", ""]
        # cost: Table A5 form
        lines += [f"### Cost ({lang}, PLAYER* Table A5 form; means per script)", ""]
        rows = []
        for m in METHODS:
            s = L["methods"].get(m)
            if s is None:
                continue
            c = s["cost"]
            rows.append([LABELS[m], _num(c["seat_calls"]) if m in GAME_METHODS else "0",
                         f"{_num(c['seat_input_tokens'])} / {_num(c['seat_output_tokens'])}" if m in GAME_METHODS else "0 / 0",
                         _num(c["game_calls"]), _num(c["eval_calls"]),
                         f"{_num(c['eval_input_tokens'])} / {_num(c['eval_output_tokens'])}",
                         f"{_num(c['game_model_s'])} / {_num(c['eval_model_s'])}", "not published"])
        lines += md_table(["method", "gameplay calls (its seats)", "gameplay tokens in / out (its seats)",
                           "gameplay calls (whole game, murderer too)", "evaluation calls",
                           "evaluation tokens in / out", "model s game / eval", "paper (Table A5)"], rows)
        lines += ["", "Gameplay counts the seats the method plays (every character but the murderer, who plays "
                  f"`{result['murderer_agent']}`); PP and OP play no game. Evaluation: {result['eval_runs']} run(s) of every "
                  "character's questions. Table A5's numbers could not be read here (not published in this report).", ""]
    # claims
    lines += ["## The paper's claims on this run", ""]
    lines += [claim(c["text"], c["holds"], c["evidence"]) for c in result["claims"]]
    if result["limit"] is not None:
        lines += ["", f"(A `--limit {result['limit']}` run: {result['scripts_run']} script(s); the verdicts say what "
                  "these scripts show, not the paper's full protocol.)"]
    lines += [""]
    # dataset
    t1 = tables["table1"]
    lines += ["## Dataset statistics (PLAYER* Table 1) against the data", ""]
    rows = [[r["id"], r["name"], r["characters"], *(r[c] for c in CATEGORIES), r["questions"], r["murderers"],
             result["dataset"]["zh_differs"].get(r["id"], "same")] for r in result["dataset"]["en"]]
    tot = result["dataset"]["totals"]
    paper = t1.row(row="total")
    rows.append(["", f"**total (data, {len(result['dataset']['en'])} scripts)**", tot["characters"], *(tot[c] for c in CATEGORIES), tot["questions"],
                 tot["murderers"], ""])
    rows.append(["", f"**total (paper, {paper['scripts'] or 'not published'} scripts)**", paper["characters"] or "not published",
                 *((paper[c] or "not published") for c in CATEGORIES), paper["questions"] or "not published", "-", ""])
    lines += md_table(["id", "script (en)", "characters", "objective", "reasoning", "relation", "questions",
                       "murderers", "zh counts"], rows)
    flags = result["dataset"]["flags"]
    lines += ["", ("Differences: " + "; ".join(flags)) if flags else
              "No difference between the totals of the paper's Table 1 and the data (its per-script rows are "
              "checked against the data by tests/eval/test_paper_tables.py; its printed average of questions, "
              "125.50, is wrong: 1,482 / 12 = 123.50).", source_line(t1), ""]
    # Table A6
    a6 = tables["table_a6"]
    lines += ["## Table A6 (the paper's reference: open models on \"Solitary Boat Firefly\")", ""]
    rows = [[r["model"], r["weighted_score"]] for r in a6.rows]
    ours = result.get("solitary_boat_firefly")
    rows.append([f"{result['model']} (this run, PLAYER*, en)", "not run (--limit)" if ours is None else f"{ours:.3f}"])
    lines += md_table(["model", "weighted score (0..1)"], rows)
    lines += ["", source_line(a6), ""]
    lines += differences(result["differences"])
    lines += ["Per-language cells, games and transcripts: `en/` and `zh/` (each a `mas wellplay compare` run "
              "directory with its own report.md).", ""]
    return "\n".join(lines)


PROTOCOL_DIFFERENCES = [
    "The model: the paper used GPT-3.5 (16k; the authors' README); this run uses `--model` for every seat.",
    "The paper's per-type scores (§4, Tables A3-A4) and its cost table (Table A5) lost their numbers in every "
    "text we hold, so those columns say \"not published\"; the authors' released 2024 logs stand beside ours "
    "instead (not the paper).",
    "The authors' released logs ran at the API's default temperature (no temperature is passed), scored an empty "
    "answer right on single-choice questions and showed the options unshuffled "
    "(eval/reproduce/papers/player_star_protocol_differences.md).",
    "Options are shuffled per evaluation run (the upstream keys are position-biased: always-a scores 48.9 %, data "
    "README); the paper showed them in upstream order. always_a and random are reported on the same shuffles.",
    "Strict scoring: a multi-select answer counts only with the culprit among at most two letters; upstream "
    "accepted any answer containing the key letter.",
    "OP here is every character answering its own questions with every script in its memory; the authors' FSA "
    "log is one reader over the pooled file.",
    "The agents are this framework's reimplementations (planners/player_star, planners/baselines), not the "
    "authors' code; the murderer's framework is `plain` (chain of thought), the paper's is not stated in the "
    "text we could read.",
    "Per-question 95 % intervals and the chance lines are ours; the paper reports mean ± std over runs only.",
    "Prompt layout (ours, for prefix caching): the character's whole script leads the user message when the "
    "retrieval budget covers it; retrieved excerpts are shown in script order, not ranked by similarity (the "
    "set a budget selects is the paper's, §2.2); in the evaluation the dialogue heard comes before the script "
    "excerpts, and when the dialogue budget does not cover it, its excerpts come after the question. The "
    "paper does not print its prompt order.",
]


# ----------------------------------------------------------------------------- run

def plan_line(chosen: dict[str, list], methods: tuple[str, ...] = METHODS, eval_runs: int = EVAL_RUNS) -> str:
    """One line saying what the run will play before it starts: games, evaluation calls (one per
    question, run and model method, re-prompts not counted) and the game calls of a plain game
    (per character an introduction and a vote, per round a question and an answer; the methods'
    own planning calls come on top)."""
    n_game = sum(1 for m in methods if m in GAME_METHODS)
    games = sum(len(v) for v in chosen.values()) * n_game
    evals = sum(len(s.all_questions()) for v in chosen.values() for s in v) * eval_runs * len(methods)
    plain = sum((2 + 2 * ROUNDS * QUESTIONS) * len(s.characters) for v in chosen.values() for s in v) * n_game
    return (f"{PAPER}: plan: {', '.join(f'{lang} {[s.name for s in v]}' for lang, v in chosen.items())}; "
            f"{games} games (at least {plain} model calls, more with each method's planning calls) and "
            f"{evals} evaluation calls ({eval_runs} runs x {len(methods)} methods x the questions)")


def check_out(*, out: Path, model: Any, others: str | None = None, limit: int | None = None, seed: int = 0,
              langs: Any = None, methods: Any = None, eval_runs: int | None = None) -> dict:
    """Check the options and that ``out`` may hold this run, writing and running nothing: what
    :func:`reproduce` checks first, callable before a costly step (the CLI's estimate, ``mas
    reproduce all``'s other parts).

    Returns:
        The settings compared with ``out/config.json``: ``model`` (its text), ``limit``, ``rounds``,
        ``questions``, ``eval_runs``, ``methods`` (the model's then the chance lines), ``models``,
        ``langs``. A rerun may add methods or languages; another ``limit`` is another run (other
        scripts, so other tables), refused.

    Raises:
        ValueError: the option errors listed in :func:`reproduce`, or ``out`` holding a run with
            other settings (:class:`mas_agents.eval.runs.record.RunConflict`, names config.json).
    """
    from mas_agents.llm import spec_text
    from mas_agents.eval.runs.record import NOT_CONFIGURATION, check_same_run
    if isinstance(model, (list, tuple)):
        if len(model) != 1:
            raise ValueError(f"--model: player-star plays every seat with one model, got {len(model)}")
        model = model[0]
    if others is not None and others != model:
        raise ValueError("--others: player-star seats every character with --model (the paper: one model); drop --others")
    if seed != 0:
        raise ValueError("--seed: player-star runs seed 0 only (one game per method and script, evaluation runs 0, 1, 2)")
    if limit is not None and limit < 1:
        raise ValueError(f"--limit must be at least 1, got {limit}")
    langs, model_methods, eval_runs = check_subsets(langs, methods, eval_runs)
    label = spec_text(model)
    settings = {"model": label, "limit": limit, "rounds": ROUNDS, "questions": QUESTIONS, "eval_runs": eval_runs,
                "methods": [*model_methods, *CHANCE], "models": [label]}   # one model seats every character
    # a rerun may add languages or methods (finished cells are reused); the rest must be the same
    check_same_run(Path(out), {"kind": "reproduce", "paper": PAPER, **settings, "langs": list(langs)},
                   may_differ=("methods", "langs"), ignore=NOT_CONFIGURATION - {"model"})
    return {**settings, "langs": list(langs)}


def reproduce(*, data_root: Path, out: Path, model: Any, others: str | None = None, limit: int | None = None,
              seed: int = 0, tick: Callable[[str], None] | None = None, play: Callable | None = None,
              evaluate: Callable | None = None, langs: Any = None, methods: Any = None,
              eval_runs: int | None = None, estimate: dict | None = None) -> dict:
    """Play and evaluate PLAYER*'s protocol (module docstring) and write ``out/report.md``.

    Args:
        data_root: datasets root holding ``wellplay/``.
        out: run directory; ``out/<lang>/`` is a ``mas wellplay compare`` run per language.
            Rerunning with the same arguments reuses finished cells (resumable).
        model: the model of every seat (a spec such as ``local`` / ``openai:NAME``, or a chat
            model object in tests); a one-element list is accepted.
        others: must be None or equal to ``model`` (all seats one model).
        limit: the first N scripts of each language in :func:`script_order`; None = all 12.
        seed: must be 0 (compare's seed 0: the games and evaluation runs use seeds 0, 1, 2).
        tick: one progress line per finished cell (:class:`mas_agents.eval.reproduce.common.Progress`).
        play, evaluate: passed to :func:`mas_agents.eval.runs.compare.run_compare` (tests inject counting
            wrappers); ``evaluate`` (default :func:`mas_agents.eval.runs.wellplay_run.run_wellplay_eval`) is
            called with ``runs=eval_runs``.
        langs, methods, eval_runs: a subset of the protocol (:func:`check_subsets`; default the
            whole: both languages, the six methods, 3 evaluation runs); the chance lines always run.
        estimate: :func:`mas_agents.eval.reproduce.estimate.estimate` of this run made before it (the report
            then sets it beside the actual calls and tokens); None: none.

    Returns:
        The ``result.json`` dict.

    Raises:
        ValueError: a list of several models, ``--others`` unlike ``--model``, ``--seed`` not 0,
            ``--limit`` < 1, a rerun into ``out`` with other settings (names config.json), or
            WellPlay data that is missing or malformed (names the file).
    """
    from mas_agents.eval.runs.compare import cell_dir, run_compare
    from mas_agents.eval.runs.wellplay_run import run_wellplay_eval
    from mas_agents.graphs.mmg.rules import MURDERER_SPEC
    from mas_agents.rundir import write_json

    if isinstance(model, (list, tuple)) and len(model) == 1:
        model = model[0]
    settings = check_out(out=out, model=model, others=others, limit=limit, seed=seed, langs=langs, methods=methods,
                         eval_runs=eval_runs)
    langs, eval_runs = tuple(settings.pop("langs")), settings["eval_runs"]
    model_methods = tuple(m for m in settings["methods"] if m not in CHANCE)
    out = Path(out)
    label = settings["model"]
    out.mkdir(parents=True, exist_ok=True)
    if estimate is not None:   # the estimate made before the run, kept for a resumed run's report
        from mas_agents.eval.reproduce.common import save_estimate as save
        save(out, estimate)
    tables = {"table1": load_table("player_star_table1"), "table_a6": load_table("player_star_table_a6"),
              "released_logs": load_table("player_star_released_logs")}
    from mas_agents.eval.datasets import DataError
    try:
        ordered = {lang: script_order(data_root, lang) for lang in langs}
    except DataError as exc:   # the CLI prints a ValueError as one line
        raise ValueError(f"--data-dir: {exc}") from exc
    chosen = {lang: s[:limit] if limit else s for lang, s in ordered.items()}
    write_json(out / "config.json", {"kind": "reproduce", "paper": PAPER, **settings, "langs": list(langs),
                                     "murderer_agent": MURDERER_SPEC,
                                     "scripts": {lang: [s.name for s in v] for lang, v in chosen.items()}})
    methods = [*model_methods, *CHANCE]
    progress = Progress(sum(len(v) for v in chosen.values()) * len(methods), tick, paper=PAPER,
                        free=sum(len(v) for v in chosen.values()) * len(CHANCE))
    if tick:
        tick(plan_line(chosen, model_methods, eval_runs))
    evaluate = functools.partial(evaluate or run_wellplay_eval, runs=eval_runs)
    lock = threading.Lock()   # compare runs cells in threads for a remote model
    result_langs = {}
    for lang in langs:
        lang_out = out / lang
        by_name = {s.name: s for s in chosen[lang]}
        finished = {(m, s.id) for m in methods for s in chosen[lang]
                    if (cell_dir(lang_out, m, s.id, 0) / "eval" / "result.json").exists()}

        def cell_done(label_: str, lang_out=lang_out, by_name=by_name, finished=finished, lang=lang) -> None:
            m, name, _ = [p.strip() for p in label_.split(" / ")]
            sc = by_name[name]
            calls = 0
            if (m, sc.id) not in finished:
                d = cell_dir(lang_out, m, sc.id, 0)
                for part in ("game", "eval"):
                    p = d / part / "result.json"
                    if p.exists():
                        calls += json.loads(p.read_text(encoding="utf-8")).get("llm", {}).get("calls", 0)
            with lock:
                progress.done(f"{lang} / {label_}", calls, free=m in CHANCE)

        run_compare(data_root=data_root, out=lang_out, methods=methods, scripts=chosen[lang], seeds=1, model=model,
                    lang=lang, rounds=ROUNDS, questions=QUESTIONS, tick=cell_done, play=play, evaluate=evaluate)
        result_langs[lang] = {"scripts": [s.name for s in chosen[lang]], "script_ids": [s.id for s in chosen[lang]],
                              "methods": {m: method_summary(lang_out, m, chosen[lang]) for m in methods}}
    # dataset statistics (all scripts, both languages when loaded)
    stats = {lang: dataset_stats(sorted(ordered[lang], key=lambda s: s.id)) for lang in ordered}
    base = stats.get("en") or next(iter(stats.values()))
    zh_differs = {}
    if "en" in stats and "zh" in stats:
        zh = {r["id"]: r for r in stats["zh"]}
        for r in stats["en"]:
            diff = [k for k in ("characters", *CATEGORIES, "questions") if zh[r["id"]][k] != r[k]]
            zh_differs[r["id"]] = "same" if not diff else ", ".join(f"{k} {zh[r['id']][k]}" for k in diff)
    totals = {k: sum(r[k] for r in base) for k in ("characters", *CATEGORIES, "questions", "murderers")}
    paper = tables["table1"].row(row="total")
    flags = [f"{k}: paper {paper[k]}, data {len(base) if k == 'scripts' else totals[k]}"
             for k in ("scripts", "characters", *CATEGORIES, "questions")
             if paper.get(k) and PaperTable.number(paper[k]) != (len(base) if k == "scripts" else totals[k])]
    flags += [f"zh {sid}: {d}" for sid, d in zh_differs.items() if d != "same"]
    sbf = None   # our PLAYER* score on Table A6's script, when this run played it
    if "en" in result_langs and "1702" in result_langs["en"]["script_ids"]:
        sbf = result_langs["en"]["methods"]["player_star"]["paper"]["weighted_score"]["mean"]
    gone = left_out(langs, model_methods, eval_runs)
    result = {"model": label, "murderer_agent": MURDERER_SPEC, "limit": limit, "rounds": ROUNDS,
              "questions": QUESTIONS, "eval_runs": eval_runs, "methods": methods, "left_out": gone,
              "partial": limit is not None or bool(gone),
              "scripts_run": max((len(v) for v in chosen.values()), default=0), "scripts_full": 12,
              "langs": result_langs, "claims": claims({lang: L["methods"] for lang, L in result_langs.items()}),
              "dataset": {"en": base, "by_lang": stats, "totals": totals, "zh_differs": zh_differs,
                          "flags": flags},
              "solitary_boat_firefly": sbf,
              "differences": PROTOCOL_DIFFERENCES + ([f"Left out of the protocol (a subset run): {'; '.join(gone)}."]
                                                     if gone else []),
              # the released logs' language aggregates only (their per-script rows stay in the CSV)
              "paper_tables": {k: {"source": t.source, "rows": [r for r in t.rows if r.get("script_id", "all") == "all"]}
                               for k, t in tables.items()}}
    if estimate is not None:
        from mas_agents.eval.reproduce.common import versus_actual
        result["estimate_vs_actual"] = versus_actual(estimate, actual_cost(out, langs, methods, chosen))
    result["headline"] = headline(result)
    write_report(out, paper=PAPER, config={**settings, "langs": list(langs), "murderer_agent": MURDERER_SPEC,
                                           "scripts": {lang: v["scripts"] for lang, v in result_langs.items()}},
                 result=result, markdown=report_md(result, tables))
    return {"kind": "reproduce", "paper": PAPER, **result}


def headline(result: dict) -> str:
    """One line for the runs list and ``mas reproduce all``: PLAYER*'s weighted score per language
    (mean over the evaluation runs, percent) beside always-a, and the scripts played, e.g.
    ``PLAYER* weighted: en 33.3 % (always-a 48.0 %), zh -; 1 of 12 scripts per language (partial)``."""
    def pct(x):
        return "-" if x is None else f"{100 * x:.1f} %"

    def mean(lang, method):
        m = ((result.get("langs") or {}).get(lang) or {}).get("methods", {}).get(method)
        return None if not m else m["paper"]["weighted_score"]["mean"]
    parts = [f"{lang} {pct(mean(lang, 'player_star'))} (always-a {pct(mean(lang, 'always_a'))})"
             for lang in (result.get("langs") or {})]
    return (f"PLAYER* weighted: {', '.join(parts) or '-'}; {result.get('scripts_run')} of "
            f"{result.get('scripts_full')} scripts per language"
            + (" (partial)" if result.get("partial", result.get("limit")) else ""))


def actual_cost(out: Path, langs: tuple[str, ...], methods: list[str], chosen: dict[str, list]) -> dict[str, int]:
    """What the run's cells cost, from their records: ``{"calls", "input_tokens",
    "output_tokens"}`` summed over every game and evaluation of the chosen cells (a resumed
    evaluation's calls before the stop too)."""
    from mas_agents.eval.runs.compare import cell_dir
    tot = {"calls": 0, "input_tokens": 0, "output_tokens": 0}
    for lang in langs:
        for m in methods:
            for sc in chosen[lang]:
                d = cell_dir(Path(out) / lang, m, sc.id, 0)
                for part in ("game", "eval"):
                    p = d / part / "result.json"
                    if p.exists():
                        llm = json.loads(p.read_text(encoding="utf-8")).get("llm") or {}
                        for k in tot:
                            tot[k] += int(llm.get(k) or 0)
    return tot


def estimate_lines(rows: dict) -> list[str]:
    """The report's "estimate vs actual" table (:func:`mas_agents.eval.reproduce.estimate.versus_actual`)."""
    from mas_agents.eval.reproduce.common import versus_lines
    return versus_lines(rows)
