"""The report of a ``mas magic run`` (:func:`mas_agents.graphs.magic.bench.run_magic`): ``report.md``, our
row of the eight numbers beside the paper's pre-EMNLP Table 1 rows (MAgIC arXiv v1/v2 §4, the
leaderboard image of the authors' repository, transcribed in ``<data>/magic/results/
paper_table1_leaderboard.csv``) and the per-scenario credits, and ``radar.png``.

Coordination is shown with both denominators (:data:`mas_agents.graphs.magic.metrics.COORDINATION_LABELS`):
÷ agreed games beside the pre-EMNLP rows, which use it; ÷ all Cost Sharing games, the EMNLP 2024
definition, in a column of its own that those rows do not fill.

Function-level import kept: matplotlib (heavy, only for the radar chart; its Agg backend set first).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from mas_agents.graphs.magic.metrics import CAPABILITIES, COORDINATION_EMNLP, COORDINATION_LABELS, undefined_reason
from mas_agents.stats import Estimate, n_text

PAPER_TABLE = Path("magic") / "results" / "paper_table1_leaderboard.csv"


def paper_rows(data_root: Path) -> list[dict]:
    """The paper's Table 1 rows (percent) from ``<data>/magic/results/paper_table1_leaderboard.csv``
    ([] when the file is missing)."""
    path = Path(data_root) / PAPER_TABLE
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


#: Report headers and scenario / side names in words (the keys stay in result.json); the two
#: Coordinations are :data:`mas_agents.graphs.magic.metrics.COORDINATION_LABELS` (the report's note
#: says which paper table uses which; an ablation reuses these headers and has no paper rows).
HEADERS = {"win_rate": "Win rate", "judgement": "Judgement", "reasoning": "Reasoning", "deception": "Deception",
           "self_awareness": "Self-awareness", "cooperation": "Cooperation", **COORDINATION_LABELS,
           "rationality": "Rationality"}
NAMES = {"chameleon": "Chameleon", "undercover": "Undercover", "cost_sharing": "Cost Sharing",
         "prisoners_dilemma": "Prisoner's Dilemma", "public_good": "Public Good",
         "non_chameleon": "as non-chameleon", "civilian": "as civilian"}
SIDE_NAMES = {"chameleon": "as chameleon", "undercover": "as undercover"}

#: What each metric's n counts (the report's note: Wilson intervals over votes, questions,
#: answers, Cost Sharing games, agreed games, decisions; a bootstrap over setting ids for win rate
#: and deception), written beside n wherever it is shown (issue 57, E20: "n=4" here and "n=1" in
#: an ablation, whose unit is a setting id, read as a disagreement).
N_UNITS = {"win_rate": "settings", "judgement": "votes", "reasoning": "questions", "deception": "settings",
           "self_awareness": "answers", "cooperation": "Cost Sharing games", "coordination": "agreed games",
           COORDINATION_EMNLP: "Cost Sharing games", "rationality": "decisions"}

COLUMNS = ("win_rate", "judgement", "reasoning", "deception", "self_awareness", "cooperation", "coordination",
           COORDINATION_EMNLP, "rationality")


def lower_first(label: str) -> str:
    """``label`` with its first letter in lower case, for a label inside a line of lower-case
    names (``"Coordination ÷ agreed games (upstream code)"`` -> ``"coordination ÷ ..."``)."""
    return label[:1].lower() + label[1:]


def report_md(result: dict, paper: list[dict]) -> str:
    """Our row (percent; where a metric is undefined, why: :func:`mas_agents.graphs.magic.metrics.undefined_reason`)
    above the paper's pre-EMNLP Table 1 rows (they have no EMNLP Coordination: "not in this table").
    A ``result.json`` written before Coordination had two columns has no EMNLP value: "not recorded"."""
    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}"

    ivs = result.get("intervals") or {}

    def ours(c):
        """The value with its 95 % interval and n (the bare value for a result.json written before
        intervals were reported)."""
        if c not in result["metrics"]:
            return "not recorded"
        iv = ivs.get(c)
        if result["metrics"][c] is None:
            why = undefined_reason(c, result.get("counts"))
            if why == "no data":
                return f"- (n={n_text(iv['n'], N_UNITS.get(c, ''))})" if iv else "-"
            return f"undefined: {why}"
        if not iv:
            return pct(result["metrics"][c])
        return Estimate(**{**{f: iv[f] for f in ("low", "high", "n", "level", "method")},
                           "mean": result["metrics"][c]}).fmt(unit="", n_unit=N_UNITS.get(c, ""))
    head = "| model | " + " | ".join(HEADERS[c] for c in COLUMNS) + " |"
    lines = [f"# MAgIC: {result['challenger']} (challenger) vs {result['defender']} (defender)", "",
             f"Model: {result['model']}; scenarios: {', '.join(result['scenarios'])}; settings: {result['settings'] or 'all'}; "
             f"replay openings: {result['replay_openings']}; {result['cost']['games']} games.", "",
             head, "|" + "---|" * (len(COLUMNS) + 1),
             f"| **ours: {result['challenger']}** | " + " | ".join(ours(c) for c in COLUMNS) + " |"]
    for row in paper:
        lines.append(f"| {row['model']} (paper, pre-EMNLP) | "
                     + " | ".join("not in this table" if c == COORDINATION_EMNLP else row.get(c, "-") for c in COLUMNS) + " |")
    c = result["cost"]
    missing = result["components"].get("missing") or []
    lines += ["", f"Win rate = mean of {7 - len(missing)} of 7 parts" + (f" (missing: {', '.join(missing)})" if missing else "")
              + ". Our row: each value in percent with its 95 % interval and n: Wilson score intervals for the seven "
              "proportions (n = votes, questions, answers, Cost Sharing games, agreed games, Cost Sharing games, "
              "decisions); a percentile "
              "bootstrap over setting ids for win rate and deception (n = settings; one setting gives no interval). "
              "Deception is a rate plus 0.25 × a rate, so it lies in [0, 125]. "
              "Paper rows: the pre-EMNLP leaderboard (arXiv v1/v2 Table 1), GPT-4 etc. against GPT-4 defenders on all "
              "103 settings; ours uses the model above on the settings above, so the rows are comparable in definition "
              "only. Coordination has two denominators: the paper rows (pre-EMNLP) and the authors' metric code divide "
              "by the agreed games; the EMNLP 2024 tables divide by all Cost Sharing games (so a run with no agreement has 0 there, "
              "and no value ÷ agreed games).", "",
              "| scenario | challenger win rate / credit (percent, bootstrap 95 % interval over games) |", "|---|---|"]
    games = (result.get("counts") or {}).get("games") or {}

    def n_of(g):
        return "" if not isinstance(g, int) else f" (n={g} game{'s' if g != 1 else ''})"
    psi = result.get("per_scenario_intervals") or {}

    def with_iv(vv, iv, g):
        """A credit / rate in percent with its bootstrap interval over games, else with its n."""
        if iv and vv is not None:
            e = Estimate(iv["mean"], iv["low"], iv["high"], iv["n"])
            unit = "game" if e.n == 1 else "games"
            if e.low is None:
                return f"{pct(vv)} [no interval, n={e.n} {unit}]"
            return f"{pct(vv)} [{100 * e.low:.1f}, {100 * e.high:.1f}] (n={e.n} {unit})"
        return pct(vv) + n_of(g)
    for k, v in result["per_scenario"].items():
        if isinstance(v, dict):
            v = ", ".join(f"{SIDE_NAMES.get(kk) or NAMES.get(kk, kk)} "
                          f"{with_iv(vv, (psi.get(k) or {}).get(kk), (games.get(k) or {}).get(kk))}"
                          for kk, vv in v.items())
        else:
            v = with_iv(v, psi.get(k), games.get(k))
        lines.append(f"| {NAMES.get(k, k)} | {v} |")
    lines += ["", f"Cost: {c['calls']} LLM calls, {c['input_tokens']} prompt / {c['output_tokens']} completion tokens, "
              f"{c['wall_s']} s of game time; {c['invalid_actions']} of {c['model_actions']} actions unreadable after a re-prompt.",
              "", "![capabilities](radar.png)", ""]
    return "\n".join(lines)


def radar_chart(metrics: dict, path: Path, title: str = "") -> None:
    """A radar chart of the seven capabilities in percent, the scale of every report (a missing metric
    is drawn at 0 and marked '(n/a)'; Coordination is the one ÷ agreed games, and says so). Deception (a rate plus 0.25 × a rate) may reach 125 %: the
    axis then goes to 125 instead of cutting it at 100."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # the radar's Coordination is ÷ agreed games (the upstream denominator), named so, lower-case
    # like the radar's other axes
    names = {c: lower_first(COORDINATION_LABELS[c]) if c in COORDINATION_LABELS else c for c in CAPABILITIES}
    labels = [names[c] if metrics.get(c) is not None else f"{names[c]} (n/a)" for c in CAPABILITIES]
    labels = [f"{x} (0–125 %)" if x.startswith("deception") else x for x in labels]
    vals = [100 * (metrics.get(c) or 0.0) for c in CAPABILITIES]
    ang = [2 * math.pi * i / len(vals) for i in range(len(vals))]
    fig = plt.figure(figsize=(5, 5))
    ax = fig.add_subplot(111, polar=True)
    ax.plot(ang + ang[:1], vals + vals[:1], color="#4C72B0")
    ax.fill(ang + ang[:1], vals + vals[:1], color="#4C72B0", alpha=0.25)
    ax.set_xticks(ang)
    ax.set_xticklabels([x.replace("_", " ") for x in labels], fontsize=8)
    ax.set_ylim(0, 125 if max(vals) > 100 else 100)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
