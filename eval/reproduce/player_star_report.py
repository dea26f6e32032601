"""``mas reproduce player-star``, the report: per language our scores, App. B.3 pooled and the
plain mean over scripts (:data:`AGGREGATION_TEXT`), beside the authors' two released log sets
(:data:`RELEASED_LOGS`) and the cost in Table A5's form, the claims, the dataset against Table 1,
Table A6, the protocol differences (:data:`PROTOCOL_DIFFERENCES`) and the one-line headline;
and the report's charts, App. B.3 pooled (:func:`score_charts`).
"""

from __future__ import annotations

from pathlib import Path

from mas_agents.eval.reproduce.common import (
    PaperTable,
    claim,
    differences,
    md_table,
    partial_note,
    source_line,
    versus_lines,
)
from mas_agents.eval.reproduce.player_star_numbers import num as _num
from mas_agents.eval.reproduce.player_star_numbers import pct as _pct
from mas_agents.eval.reproduce.player_star_protocol import (
    CATEGORIES,
    CHANCE,
    EVAL_RUNS,
    GAME_METHODS,
    LABELS,
    METHODS,
    QUESTIONS,
    ROUNDS,
)
from mas_agents.eval.compare.table import SCORE_AGGREGATION as COMPARE_AGGREGATION
from mas_agents.stats import Estimate

def _pm(a: dict) -> str:
    """``"41.2 ± 1.3"`` (percent), ``"41.2 (1 run, no std)"``, ``"-"``."""
    if a["mean"] is None:
        return "-"
    return f"{_pct(a['mean'])} ± {_pct(a['std'])}" if a["std"] is not None else f"{_pct(a['mean'])} (no std, 1 run)"


#: The text above every score table: what each of its aggregations is (the same words as
#: docs/tutorials/reproduce.md, "Scores").
AGGREGATION_TEXT = (
    "Percent. **Ours, App. B.3 pooled** (PLAYER* App. B.3, the aggregation of the released-logs columns too): per "
    "evaluation run, a question type's accuracy is Σ right / Σ questions over the language's scripts (the scripts' "
    "accuracies weighted by their question counts) and the weighted score Σ points won / Σ points possible (10 / 5 / "
    "2 points a question; the scripts' scores weighted by their total points); then mean ± sample std (n − 1) over "
    "the runs. **Plain mean over scripts** (a second figure, not App. B.3): per run the unweighted mean of the "
    "scripts' weighted scores, then mean ± sample std (n − 1) over the runs; on the authors' kept logs it gives zh "
    "PLAYER* 49.77 against the pooled 46.07. **Interval** (ours): 95 % percentile bootstrap over questions, each "
    "question pooled over the runs (centred on the pooled mean; n = questions). The claims below are judged on "
    "the pooled means.")
#: Table key -> column label: the authors' two released log sets (scripts/player_star_logs.py).
RELEASED_LOGS = {"released_logs": "kept set, commit b6fcef9 (2024-06-05)",
                 "released_logs_earlier": "earlier set, commit b2483e3 (2024-03-29)"}


def _log_cell(table: PaperTable, lang: str, method: str) -> str:
    """A released-logs set's App. B.3 aggregate of ``method`` in ``lang``: ``"46.07 ± 1.15 (12
    scripts)"``, ``"-"`` when the set has none."""
    try:
        log = table.row(lang=lang, method=method, script_id="all", category="overall")
    except KeyError:
        return "-"
    return f"{log['mean']} ± {log['std']} ({log['scripts']} scripts)"


def chart_name(lang: str) -> str:
    """The file name, in the reproduce run's folder, of ``lang``'s App. B.3 pooled chart."""
    return f"scores_{lang}.png"


def score_charts(result: dict, out: Path) -> None:
    """Per language, the weighted score of every method App. B.3 pooled with its 95 % interval
    over questions, as ``out/scores_<lang>.png`` (:func:`chart_name`; the report's chart, beside
    the table whose pooled columns it draws; the per-language comparison runs' own ``scores.png``
    draw their plain mean over scripts). ``result``: :func:`reproduce`'s, ``langs`` -> lang ->
    ``methods`` -> :func:`method_summary`. Imports matplotlib (via
    :func:`mas_agents.eval.compare.report.bar_chart`)."""
    from mas_agents.eval.compare.report import bar_chart
    for lang, L in result["langs"].items():
        rows = [{"method": LABELS[m], "weighted_score": s["pooled"]["weighted_score"]["mean"],
                 "weighted_score_interval": s["interval"]}
                for m in (*METHODS, *CHANCE) for s in [L["methods"].get(m)]
                if s is not None and s["pooled"]["weighted_score"]["mean"] is not None]
        bar_chart(rows, out / chart_name(lang), aggregation=f"App. B.3 pooled, {lang}")


def report_md(result: dict, tables: dict[str, PaperTable]) -> str:
    """The Markdown report (see the module docstring for what each table holds)."""
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
                  "The aggregations, claims and cost below cover only what ran; a claim that needs "
                  "something left out says \"cannot tell\".", ""]
    if result.get("estimate_vs_actual"):
        lines += estimate_lines(result["estimate_vs_actual"])
    for lang in result["langs"]:
        L = result["langs"][lang]
        lines += [f"## {'English' if lang == 'en' else 'Chinese'} ({lang}): {', '.join(L['scripts'])}", "",
                  AGGREGATION_TEXT, ""]
        rows = []
        for m in (*METHODS, *CHANCE):
            s = L["methods"].get(m)
            if s is None:
                continue
            p = s["pooled"]
            iv = s["interval"]
            est = Estimate(**{k: iv[k] for k in ("mean", "low", "high", "n", "level", "method")})
            rows.append([LABELS[m], *(_pm(p[c]) for c in CATEGORIES), _pm(p["weighted_score"]),
                         _pm(s["plain_mean"]["weighted_score"]), est.fmt(unit=""),
                         "not published" if m not in CHANCE else "-",
                         *(_log_cell(tables[k], lang, m) for k in RELEASED_LOGS)])
        lines += md_table(["method", "objective (ours, pooled)", "reasoning (ours, pooled)", "relation (ours, pooled)",
                           "weighted (ours, App. B.3 pooled)", "weighted (ours, plain mean over scripts)",
                           "weighted, pooled [95 % interval] (n questions)", "paper (§4 results)",
                           *(f"authors' released logs, {label} (not the paper; App. B.3 pooled)"
                             for label in RELEASED_LOGS.values())], rows)
        lines += ["", "Paper: the text we hold of PLAYER* lost every number of its result tables (A3-A5), so that "
                  "column says \"not published\". Authors' released logs: their 2024 evaluation files recomputed "
                  "(`scripts/player_star_logs.py`), aggregated as ours (App. B.3 pooled, mean ± std (n − 1) over the 3 "
                  "passes). The repository held two log sets: the kept set (commit b6fcef9, 2024-06-05, "
                  "`player_star_released_logs.csv`) and an earlier set (commit b2483e3, 2024-03-29, kept until 79a17f4 "
                  "and deleted 40 s later by b6fcef9, `player_star_released_logs_earlier.csv`); their zh PLAYER* "
                  "differs in 8 of 12 scripts (pooled 42.66 ± 0.34 against 46.07 ± 1.15); every other method holds the "
                  "same per-script values (in another pass order, so another std). In both sets every PLAYER* question was written from the 4th character's "
                  "script, not the asker's (the sensor-loop confound, Protocol differences); what else their code ran "
                  "that the paper does not say is in `eval/reproduce/papers/player_star_protocol_differences.md`. "
                  + source_line(logs) + " " + source_line(tables["released_logs_earlier"]),
                  "", f"![weighted score by method, App. B.3 pooled]({chart_name(lang)})", "",
                  f"The chart: the weighted score App. B.3 pooled with its 95 % interval over questions (the "
                  f"table's \"weighted, pooled [95 % interval]\" column). The `{lang}/` comparison run's own "
                  f"report.md and scores.png show its weighted score as the {COMPARE_AGGREGATION} (the second "
                  "weighted column here), not App. B.3 pooled.", ""]
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
    lines += ["## The paper's claims on this run", "",
              "Judged on the App. B.3 pooled means (the score tables' first columns), never on the plain mean.", ""]
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
    if ours is None:
        rows.append([f"{result['model']} (this run, PLAYER*)", "not run (Solitary Boat Firefly not played)"])
    elif ours["lang"] == "zh":
        rows.append([f"{result['model']} (this run, PLAYER*, zh)", f"{ours['weighted_score']:.3f}"])
    else:
        rows.append([f"{result['model']} (this run, PLAYER*, {ours['lang']}, not like for like: Table A6 is zh)",
                     f"{ours['weighted_score']:.3f}"])
    lines += md_table(["model", "weighted score (0..1)"], rows)
    lines += ["", "Table A6 is the Chinese script 孤舟萤 (PLAYER* App. C.4); our row is that script's own score "
              "(its runs alone, not the language's mean over every script), from the zh run when one played it.",
              source_line(a6), ""]
    lines += differences(result["differences"])
    lines += ["Per-language cells, games and transcripts: `en/` and `zh/` (each a `mas wellplay compare` run "
              "directory with its own report.md).", ""]
    return "\n".join(lines)


PROTOCOL_DIFFERENCES = [
    "The model: the paper used GPT-3.5 (16k; the authors' README); this run uses `--model` for every seat.",
    "The paper's per-type scores (§4, Tables A3-A4) and its cost table (Table A5) lost their numbers in every "
    "text we hold, so those columns say \"not published\"; the authors' released 2024 logs stand beside ours "
    "instead (not the paper).",
    "The sensor-loop confound in the authors' released logs: in their June-2024 code (alickzhu/PLAYER b6fcef9) "
    "main.py:292 and :336 reuse `i`, the asking character's index, as the index of the 4 sensors, so after the "
    "sensor loop the retrieval (:348) and the question-writing call (:351) run as the 4th character. All 1,054 zh "
    "and 504 en PLAYER* question prompts in the kept logs (and all 1,053 zh of the earlier set) quote the 4th "
    "character's script, whoever asks; that character is a murderer in Riverside Inn, Oriental Star Cruise "
    "Incident and Solitary Boat Firefly. O-CoT's prompts quote the asker's own script (all 1,200 in the 10 of 16 "
    "O-CoT game logs read; 6 were missing from our copy of the repository). The released-logs columns beside ours carry this; our PLAYER* asks "
    "from its own script.",
    "Temperature of the authors' runs: the committed source passes none (utils/Chat_utils.py:78-86, the API "
    "default), but the compiled utils/__pycache__/Chat_utils.cpython-311.pyc in the same commits (2024-03-27 to "
    "2025-04-12) was built from a source dated 2024-02-28 whose get_reply_gpt passes temperature=0.9. Which one "
    "produced the logs is not recorded.",
    "The authors' released logs also scored an empty answer right on single-choice questions and showed the "
    "options unshuffled (eval/reproduce/papers/player_star_protocol_differences.md).",
    "Two released log sets: from b2483e3 (2024-03-29) to 79a17f4 (2024-06-05 07:14:54) the authors' repository "
    "held an earlier zh log set; b6fcef9, 40 s later, deleted it. Its PLAYER* scores differ in 8 of 12 scripts, "
    "App. B.3 pooled 42.66 ± 0.34 against the kept set's 46.07 ± 1.15; FSA (OP), O-CoT and the other methods hold "
    "the same per-script values in both (in another pass order), en is the same files. The report shows both, each "
    "named by its commit (player_star_released_logs.csv: b6fcef9; player_star_released_logs_earlier.csv: b2483e3).",
    "Aggregation over scripts: ours and the released logs' columns are both App. B.3's pooled points (per run Σ "
    "points won / Σ points possible over the scripts); the plain mean over scripts, shown beside it, weighs a "
    "4-character script as much as an 8-character one (zh PLAYER* on the kept logs: 49.77 plain, 46.07 pooled).",
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
    "Retrieval budgets: the paper's 4,000 script and 4,000 dialogue tokens a prompt (App. C.1), but at most 6,000 "
    "of the two together (the dialogue gets what the script leaves), so that a prompt and its reply fit the "
    "embedded model's 8,192-token context (memory.MemorySettings.total_budget; this framework defaulted to 800 / 500 before "
    "2026-11-28). The cap binds only when script and dialogue both run long: the script budget covers the whole "
    "script of 52 of the 68 English characters.",
    "Prompt layout (ours, for prefix caching): the character's whole script leads the user message when the "
    "retrieval budget covers it; retrieved excerpts are shown in script order, not ranked by similarity (the "
    "set a budget selects is the paper's, §2.2); in the evaluation the dialogue heard comes before the script "
    "excerpts, and when the dialogue budget does not cover it, its excerpts come after the question. The "
    "paper does not print its prompt order.",
]



def headline(result: dict) -> str:
    """One line for the runs list and ``mas reproduce all``: PLAYER*'s weighted score per language
    (App. B.3 pooled over scripts, mean over the evaluation runs, percent) beside always-a, and the
    scripts played, e.g. ``PLAYER* weighted (App. B.3 pooled): en 33.3 % (always-a 48.0 %), zh -; 1
    of 12 scripts per language (partial)``."""
    def pct(x):
        return "-" if x is None else f"{100 * x:.1f} %"

    def mean(lang, method):
        m = ((result.get("langs") or {}).get(lang) or {}).get("methods", {}).get(method)
        return None if not m else m["pooled"]["weighted_score"]["mean"]
    parts = [f"{lang} {pct(mean(lang, 'player_star'))} (always-a {pct(mean(lang, 'always_a'))})"
             for lang in (result.get("langs") or {})]
    return (f"PLAYER* weighted (App. B.3 pooled): {', '.join(parts) or '-'}; {result.get('scripts_run')} of "
            f"{result.get('scripts_full')} scripts per language"
            + (" (partial)" if result.get("partial", result.get("limit")) else ""))


def estimate_lines(rows: dict) -> list[str]:
    """The report's "estimate vs actual" table (:func:`mas_agents.eval.reproduce.common.versus_actual`)."""
    return versus_lines(rows)
