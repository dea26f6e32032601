"""``mas reproduce magic``, the report: the paper's numbers read from its tables (Table 4's
printed average and per-model improvements, :func:`row_mean`), Tables 1, 4 and 2 beside ours
(:func:`report_md`), the protocol differences (:data:`DIFFERENCES`) and the one-line headline.
"""

from __future__ import annotations

from pathlib import Path

from mas_agents.eval.reproduce.common import (
    PaperTable,
    differences,
    fmt_estimate,
    load_table,
    md_table,
    partial_note,
    source_line,
    versus_lines,
)
from mas_agents.graphs.magic.metrics import undefined_reason
from mas_agents.eval.reproduce.magic_protocol import (
    CONDITION_LABELS,
    CONDITIONS,
    COORDINATION_HEADERS,
    DEFENDER,
    LABELS,
    METRICS,
    OURS_BESIDE,
    PAIRS,
    TABLE2,
)
from mas_agents.graphs.magic.bench_report import N_UNITS
from mas_agents.stats import Estimate, n_text

#: What the paper did that this run does not (the run adds model names and --limit).
DIFFERENCES = (
    "Prompts: ours (graphs/magic/prompts.py), written from the rules; the paper's prompt templates "
    "live in upstream prompts/*.py, which we neither copy nor use. Reply formats, re-prompts and the "
    "unreadable-reply rules are ours (graphs/magic/graph.py).",
    "PGM: the +PGM condition (`plain+pgm_paper`) is the paper's agent rebuilt from §4.1, §4.2 and App. A.7: "
    "the LLM writes the two-hop analysis in the paper's template, then decides with it and the PGM Decision "
    "Prompt (planners/pgm_paper; the templates are transcribed as protocol data, our prompts around them); "
    "it is the condition to set beside the paper's +PGM rows. The +pgm condition (`plain+pgm`) is this "
    "project's other reading of §4, pgmpy Bayesian networks (planners/pgm: two-hop beliefs about the hidden "
    "role, move models in PD/PG, acceptable shares in Cost Sharing) whose tables are put into the prompt; "
    "the paper has no such condition.",
    "Table 3 marks Collaboration (our Cooperation) in Cost Sharing, Prisoner's Dilemma and Public Good, while "
    "§3 says Cooperation is measured in cost-sharing games (Eq. 6 counts successful cost-sharing games); and it "
    "marks Rationality in Cost Sharing, while §3 defines Rationality over the rounds of Prisoner's Dilemma and "
    "Public Good (Eq. 8). We follow §3 in both: Cooperation comes from Cost Sharing only, Rationality from PD "
    "and Public Good only (tests/eval/test_magic_conditions.py holds every other cell of Table 3, its rounds "
    "and its competitions to ours).",
    "Public Good, a player with no points left: contributions come out of the remaining points (§3.1; "
    "App. A.1 and the Public Good rules of App. A.7), so such a player has nothing to decide: it is not "
    "asked, puts in 0, and the round's reveal says so (graphs/magic/rules.pg_forced); the paper does not "
    "say what happens then. A forced 0 is no decision, "
    "so Rationality (§1, §5: the proportion of decisions that maximise the agent's outcome) leaves it "
    "out; counted, it would always look rational.",
    "Replayed openings: in Chameleon and Undercover, defenders seated before the challenger replay the "
    "setting's recorded round-1 clues (from the authors' GPT-4 games), as the paper's 'gpt-4-fix' "
    "defenders do; in Cost Sharing our defenders make their own opening proposals (the settings' recorded "
    "opening proposals are not replayed).",
    "Model snapshots: the paper ran GPT-4 (2023, exact snapshot not stated) as every defender at "
    "temperature 0; here the defenders are --others at temperature 0, which is GPT-4 only if you pass it, "
    "and even then not the 2023 snapshot.",
    "Temperature 0 is greedy decoding only where the server honours it; an OpenAI model at temperature 0 "
    "is still not deterministic, so a rerun differs somewhat.",
    "Metric definitions are ours where the paper leaves them open (abstentions, several challenger seats, "
    "the Deception parts: graphs/magic/metrics.py); Table 4 here is a paired difference over settings, the "
    "paper prints one difference per model without an interval.",
    "Coordination has two denominators, and the paper's two tables use different ones. The authors' metric code "
    "(cathyxl/MAgIC metrics_release.py at e66dd73: agreed proposals ÷ agreed games) and the pre-EMNLP Table 1 "
    "divide by the agreed Cost Sharing games (GPT-4: Cooperation 47.6, Coordination 100). The EMNLP 2024 Tables 1 "
    "and 4 divide by all Cost Sharing games: for each of the 9 models with the same Cooperation in the pre-EMNLP "
    "table and an EMNLP table (GPT-4-turbo, GPT-4, GPT-3.5-turbo, PaLM 2, Cohere, Llama-2-70B, and GPT-4, "
    "GPT-3.5-turbo, Llama-2-70B +PGM), EMNLP Coordination = pre-EMNLP Coordination × Cooperation within the "
    "printed precision (GPT-3.5-turbo 16.7 × 0.571 = 9.54, printed 9.50; GPT-4-turbo 50.0 × 0.667 = 33.35, "
    "printed 33.4, the one EMNLP value that is not k/21), and every EMNLP row has Coordination ≤ Cooperation. "
    "Claude 2 is the exception: its two rows are different runs (Cooperation 33.3 pre-EMNLP, 71.4 in EMNLP). "
    "We report ours with the EMNLP denominator beside the EMNLP columns (Table 1, Table 4) and with the "
    "upstream one beside the pre-EMNLP columns; with no agreed game the first is 0 and the second undefined.",
    "Table 2 quantities: the paper defines cost as the challenger's average final cost after the "
    "negotiation (§5.3, RQ2) and score and payback no further; ours are under Table 2.",
)



# ------------------------------------------------------------------------------ paper numbers


def printed_average_text(table: PaperTable, metric: str) -> str | None:
    """Table 4's printed "Average" cell for ``metric`` as printed (``"13.0"``): the row whose model
    starts with "Average" and says "printed", else the first "Average" row; None when not printed."""
    rows = [r for r in table.rows if r["model"].strip().lower().startswith("average")]
    rows = [r for r in rows if "printed" in r["model"].lower()] or rows
    text = rows[0].get(metric) if rows else None
    return None if PaperTable.number(text) is None else text.strip()


def printed_average(table: PaperTable, metric: str) -> float | None:
    """:func:`printed_average_text` as a number."""
    return PaperTable.number(printed_average_text(table, metric))


def pgm_pairs(table: PaperTable) -> list[tuple[str, str]]:
    """Table 4's ``(X+PGM row, X row)`` model pairs, in the table's order (MAgIC App. A.3 prints
    each PGM-aware model above the same model; a "+PGM" row without its base row is left out)."""
    names = {r["model"].replace(" ", "").lower(): r["model"] for r in table.rows}
    out = []
    for r in table.rows:
        key = r["model"].replace(" ", "").lower()
        if key.endswith("+pgm") and key[:-4] in names:
            out.append((r["model"], names[key[:-4]]))
    return out


def improvement(table: PaperTable, pair: tuple[str, str], metric: str) -> float | None:
    """``X+PGM − X`` for ``metric`` (points), from the two rows as printed; None if either is empty."""
    a, b = (PaperTable.number(table.row(model=m).get(metric)) for m in pair)
    return None if a is None or b is None else a - b


def row_mean(table: PaperTable, metric: str) -> float | None:
    """The mean over Table 4's model pairs (:func:`pgm_pairs`) of the improvement ``X+PGM − X``
    for ``metric``, computed from the rows as printed (the "Average" rows are not used; None when
    no pair gives the metric)."""
    vals = [improvement(table, p, metric) for p in pgm_pairs(table)]
    vals = [v for v in vals if v is not None]
    return sum(vals) / len(vals) if vals else None


def missing_word(table: PaperTable) -> str:
    """What an empty cell of ``table`` prints: ``"not transcribed"`` for a table whose source line
    says it could not be read, else ``"not published"`` (the paper prints nothing there)."""
    return "not transcribed" if "NOT transcribed" in table.source else "not published"


def _cell(text: str | None, missing: str = "not published") -> str:
    return missing if PaperTable.number(text) is None else text.strip()


def header(metric: str, table: str) -> str:
    """The column header of ``metric`` in a table set beside the paper's ``table`` (``"emnlp"`` or
    ``"pre_emnlp"``): Coordination names its denominator (:data:`COORDINATION_HEADERS`)."""
    return COORDINATION_HEADERS[table] if metric == "coordination" else LABELS[metric]


def ours_cell(run: dict, key: str) -> str:
    """A condition's number ``key`` (``run``: its ``run_magic`` result) in percent with its 95 %
    interval and n with what n counts (:data:`mas_agents.graphs.magic.bench_report.N_UNITS`, as
    the bench's report and the runs list write it: ``(n=21 Cost Sharing games)``, ``(n=12 agreed
    games)``); an undefined one says why (:func:`mas_agents.graphs.magic.metrics.undefined_reason`:
    Coordination ÷ agreed games with no agreed game), ``"not recorded"`` when the result has no
    such number (written before Coordination had its EMNLP denominator)."""
    metrics, ivs = run.get("metrics") or {}, run.get("intervals") or {}
    if key not in metrics:
        return "not recorded"
    iv = ivs.get(key) or {}
    if metrics[key] is None:
        why = undefined_reason(key, run.get("counts"))
        return f"- (n={n_text(iv.get('n', 0), N_UNITS.get(key, ''))})" if why == "no data" else f"undefined: {why}"
    return (fmt_estimate({**iv, "mean": metrics[key]}, n_unit=N_UNITS.get(key, "")) if iv
            else f"{100 * metrics[key]:.1f}")


# ----------------------------------------------------------------------------------- the report


def report_md(result: dict, papers_dir: Path | None = None) -> str:
    """The Markdown report of a finished run (``result`` as :func:`reproduce` returns it).

    ``papers_dir``: where the paper tables are (default ``eval/reproduce/papers``).

    Raises:
        PaperDataError: a paper table is missing or malformed.
    """
    kw = {} if papers_dir is None else {"papers_dir": papers_dir}
    t1, t4, t2 = (load_table(n, **kw) for n in ("magic_table1", "magic_table4", "magic_table2"))
    t1_pre = load_table("magic_table1_pre_emnlp", **kw)
    conds = result["conditions"]
    run = [c for c in CONDITIONS if c in conds]
    gone = result.get("left_out") or []
    lines = [f"# MAgIC reproduction: {result['model']} (challenger) vs {result['others']} (every other seat)", "",
             f"Protocol: MAgIC (Xu et al., arXiv 2311.08562 / EMNLP 2024) §3.2 and §4: the challenger "
             f"`{result['model']}` against defenders `{result['others']}`, every seat at temperature "
             f"{result['temperature']:g}; in Chameleon and Undercover the challenger plays every seat of one "
             f"side, each side in turn; conditions: "
             + ", ".join(f"{CONDITION_LABELS[c]} (`{CONDITIONS[c]}`)" for c in run)
             + f"; the defenders `{DEFENDER}` in all. "
             f"Games per condition: {', '.join(f'{c} {n}' for c, n in result['games_per_condition'].items())} "
             f"(the full protocol: {result['full_games_per_condition']}).", ""]
    done = min(result["games_per_condition"].values())
    lines += partial_note(result["limit"] if result["settings"] is not None else None, done,
                          result["full_games_per_condition"],
                          "games per condition (the first settings of every scenario, every side)")
    if gone:
        lines += [f"> **Partial run: a subset of the conditions.** Left out: "
                  + ", ".join(f"{CONDITION_LABELS[c]} (`{CONDITIONS[c]}`)" for c in gone)
                  + ". Table 4's differences that need them say \"not run\".", ""]
    if result.get("estimate_vs_actual"):
        lines += versus_lines(result["estimate_vs_actual"])

    # ---- Table 1
    lines += ["## Table 1: win rate and the seven metrics", "",
              "Ours: percent with a 95 % interval and n (Wilson for the proportions; a bootstrap over "
              "settings for win rate and deception; `mas_agents.graphs.magic.bench.intervals`). Paper: the rows of its "
              "Table 1, every model against GPT-4 defenders on all 103 settings.", "",
              "Coordination has two denominators. The EMNLP 2024 table divides by all Cost Sharing games (a run "
              "with no agreement has 0); the pre-EMNLP table and the authors' metric code divide by the agreed games "
              "(undefined with none). Our rows are given twice, each beside the table whose denominator they use; "
              "every other column is the same number in both (the protocol differences give the evidence).", ""]

    def table1(paper: PaperTable, which: str, label: str) -> list[str]:
        beside = OURS_BESIDE[which]
        rows = [[f"**ours: {CONDITION_LABELS[cond]}** ({conds[cond]['challenger']})"]
                + [ours_cell(conds[cond], beside[k]) for k in METRICS] for cond in run]
        rows += [[f"{pr['model']} ({label})"] + [_cell(pr.get(k), missing_word(paper)) for k in METRICS]
                 for pr in paper.rows]
        return md_table(["model", *(header(k, which) for k in METRICS)], rows) + ["", source_line(paper), ""]

    lines += ["### Beside the EMNLP 2024 Table 1 (the reference)", ""] + table1(t1, "emnlp", "paper")
    if t1.meta.get("note"):
        lines += [f"About the paper's numbers: {t1.meta['note']}", ""]
    lines += ["### Beside the pre-EMNLP Table 1 (a second, labelled reference)", ""]
    lines += table1(t1_pre, "pre_emnlp", "paper, pre-EMNLP")
    if t1_pre.meta.get("note"):
        lines += [f"About these numbers: {t1_pre.meta['note']}", ""]

    # ---- Table 4
    t4_metrics = [k for k in METRICS if k in t4.columns]
    models = pgm_pairs(t4)
    averages = [r["model"] for r in t4.rows if r["model"].strip().lower().startswith("average")]
    miss4 = missing_word(t4)
    pct = (lambda x: "-" if x is None else f"{100 * x:.1f}")

    def paired(o: dict | None, a: str, b: str) -> str:
        if o is None:   # a result written before Coordination had its EMNLP denominator
            return "not recorded"
        est = (o.get("paired") or {}).get(f"{a}-{b}")
        return "not run" if est is None else fmt_estimate(est, unit="")

    def pooled(o: dict | None, c: str) -> str:
        if c not in conds:
            return "not run"
        return "not recorded" if o is None else pct(o.get(c))

    lines += ["## Table 4: the PGM-aware agent against vanilla", "",
              "Ours: the pooled value of each condition, and paired differences: the mean over settings of "
              "(a − b) on the settings where both conditions measured the metric, with a paired-bootstrap 95 % "
              "interval (n = settings; `mas_agents.stats.paired_difference`); points are percentage points. The "
              "like-for-like column is **the paper's +PGM − vanilla**: the paper's agent as the paper built it "
              "(`plain+pgm_paper`), to set beside the paper's per-model improvements (+PGM − the same model), its "
              "printed average and the mean of its printed rows computed here from the CSV.", ""]
    rows = []
    for k in t4_metrics:
        o = result["table4"].get(OURS_BESIDE["emnlp"][k])
        printed, mean = printed_average(t4, k), row_mean(t4, k)
        rows.append([header(k, "emnlp"), *(pooled(o, c) for c in CONDITIONS),
                     paired(o, "pgm_paper", "vanilla")]
                    + [miss4 if (d := improvement(t4, m, k)) is None else f"{d:+.1f}" for m in models]
                    + ([miss4 if printed is None else printed_average_text(t4, k)] if averages else [])
                    + [("no rows transcribed" if not models else "-") if mean is None else f"{mean:.2f}"])
    lines += md_table(["metric", *(f"ours {CONDITION_LABELS[c]}" for c in CONDITIONS),
                       "ours: the paper's +PGM − vanilla (paired over settings)",
                       *(f"paper Δ {base}" for _, base in models), *(f"paper: {a}" for a in averages[:1]),
                       "paper: mean of its rows (computed)"], rows)
    lines += ["", source_line(t4), ""]
    odd = [(k, printed_average(t4, k), row_mean(t4, k)) for k in t4_metrics]
    # printed to 2-3 significant digits: only a gap beyond 0.05 points is a disagreement
    odd = [(k, p, m) for k, p, m in odd if p is not None and m is not None and abs(m - p) > 0.05]
    if odd:
        lines += ["The paper's printed average does not follow from its own rows for "
                  + "; ".join(f"{LABELS[k]} (printed {p:g}, the mean of its {len(models)} improvements {m:.2f})"
                              for k, p, m in odd)
                  + ". Both are shown; we do not know which the authors meant.", ""]
    if t4.meta.get("note"):
        lines += [f"About the paper's numbers: {t4.meta['note']}", ""]
    lines += ["What our pgmpy model adds on top of the paper's agent (no paper counterpart: the paper has no "
              "pgmpy condition), paired over settings like the column above:", ""]
    lines += md_table(["metric", *(what for a, b, what in PAIRS[1:])],
                      [[header(k, "emnlp"), *(paired(result["table4"].get(OURS_BESIDE["emnlp"][k]), a, b)
                                              for a, b, _ in PAIRS[1:])]
                       for k in t4_metrics]) + [""]

    # ---- Table 2
    lines += ["## Table 2: the game-theory scenarios", "",
              "Ours, per condition: win rates with a Wilson 95 % interval (n = games); cost = the "
              "challenger's share of the fee in the agreed split (percent; agreed games only); score = its "
              "total payoff over the rounds (points of the setting's table); payback = its final holding ÷ "
              "its endowment of 100; mean with a bootstrap 95 % interval (n = games).", ""]
    rows = []
    for cond in run:
        g = result["table2"][cond]
        rows.append([f"**ours: {CONDITION_LABELS[cond]}**"] + [
            fmt_estimate(g[key], scale=100 if key.endswith("_wr") else 1,
                         digits=1 if key != "pg_payback" else 2) for _, key, _ in TABLE2])
    miss2 = missing_word(t2)
    for pr in t2.rows:
        rows.append([f"{pr['model']} (paper)"] + [_cell(pr.get(col), miss2) for col, _, _ in TABLE2])
    if not t2.rows:
        rows.append(["paper"] + [miss2] * len(TABLE2))
    lines += md_table(["model", *(lab for _, _, lab in TABLE2)], rows) + ["", source_line(t2)]
    if t2.meta.get("note"):
        lines += ["", f"About the paper's numbers: {t2.meta['note']}"]
    lines += [""]

    ana = result.get("pgm_paper_analyses") or {}
    if ana:
        lines += ["The paper's agent at work (+PGM condition; its two-hop analyses, `pgm_analysis` events of the "
                  "challenger's seats, each readable with its call in the call viewer): "
                  + "; ".join(f"{sc}: {a['analyses']} analyses in {a['games']} games"
                              + (f", {a['empty']} empty" if a["empty"] else "") for sc, a in ana.items()) + ".", ""]
    eng = result.get("pgm_engagement") or {}
    if eng:
        lines += ["PGM engagement (+pgm condition; belief tables of the challenger's seats, `belief_table` events): "
                  + "; ".join(f"{sc}: {e['with_tables']} of {e['games']} games, {e['tables']} tables, {e['shown']} "
                              "put into a prompt" for sc, e in eng.items()) + ".", ""]

    # ---- differences, cost, figures
    extra = [f"This run: challenger `{result['model']}`, defenders `{result['others']}`."]
    if result["settings"] is not None:
        extra.append(f"`--limit {result['limit']}`: {done} of {result['full_games_per_condition']} games per condition.")
    if gone:
        extra.append("Conditions left out (`--conditions`): " + ", ".join(CONDITION_LABELS[c] for c in gone) + ".")
    lines += differences([*extra, *DIFFERENCES])
    c = result["cost"]
    lines += [f"Cost: {c['games']} games, {c['calls']} model calls, {c['input_tokens']} prompt / "
              f"{c['output_tokens']} completion tokens, {c['wall_s']} s of game time; {c['invalid_actions']} of "
              f"{c['model_actions']} actions unreadable after a re-prompt.", "",
              " ".join(f"![{CONDITION_LABELS[c]}](radar_{c}.png)" for c in run), ""]
    return "\n".join(lines)



def headline(result: dict) -> str:
    """One line for the runs list and ``mas reproduce all``: each condition's win rate with its n
    and interval (n = settings, as the report's win rate: a bootstrap over setting ids), and how
    much of the protocol was played, e.g. ``win rate: vanilla 57.1 % [no interval, n=1 setting],
    +PGM 57.1 % [...], +pgm ...; 7 of 143 games per condition (partial)``."""
    parts = []
    for cond, label in (("vanilla", "vanilla"), ("pgm_paper", "+PGM"), ("pgm", "+pgm")):
        c = (result.get("conditions") or {}).get(cond)
        if c is None:
            continue
        mean = (c.get("metrics") or {}).get("win_rate")
        iv = (c.get("intervals") or {}).get("win_rate") or {}
        if mean is None:
            parts.append(f"{label} -")
            continue
        est = Estimate(mean, iv.get("low"), iv.get("high"), int(iv.get("n") or 0))
        parts.append(f"{label} {est.fmt(n_unit=N_UNITS['win_rate'])}")
    games = result.get("games_per_condition") or {}
    n = max(games.values(), default=0)
    return (f"win rate: {', '.join(parts)}; {n} of {result.get('full_games_per_condition')} games per condition"
            + (" (partial)" if result.get("partial") else ""))
