"""``mas reproduce magic``, the protocol: its numbers (MAgIC §3.2, §4, App. A.1), the conditions
and their seats (:func:`seat_specs`), and the games it plays (:func:`plan_games`).
"""

from __future__ import annotations

from pathlib import Path

from mas_agents.graphs.magic.dataset import SETTING_COUNTS
from mas_agents.graphs.magic.metrics import COORDINATION_EMNLP, COORDINATION_LABELS
from mas_agents.graphs.magic.bench import plan
from mas_agents.graphs.magic.events import SCENARIOS

PAPER = "magic"
#: Condition name -> the challenger's agent spec (MAgIC §4: vanilla LLM vs the PGM-aware agent, as
#: the paper built it and as our pgmpy model).
CONDITIONS = {"vanilla": "plain", "pgm_paper": "plain+pgm_paper", "pgm": "plain+pgm"}
#: Each condition's label in the report.
CONDITION_LABELS = {"vanilla": "vanilla", "pgm_paper": "+PGM (the paper's agent)", "pgm": "+pgm (pgmpy)"}
#: Table 4's paired differences ``(a, b, what a − b means)``: the first is the paper's improvement
#: like for like; the second what the pgmpy model adds on top of the paper's agent.
PAIRS = (("pgm_paper", "vanilla", "the paper's +PGM − vanilla (like for like with the paper's Δ)"),
         ("pgm", "pgm_paper", "pgmpy +pgm − the paper's +PGM (what the pgmpy model adds on top)"),
         ("pgm", "vanilla", "pgmpy +pgm − vanilla"))
#: The metrics each scenario measures here (graphs/magic/metrics.py): MAgIC Table 3's marks but where
#: its own §3 text defines the metric over fewer scenarios, which we follow (:data:`TABLE3_DIFFERENCE`):
#: Table 3 also marks Collaboration (Cooperation) in Prisoner's Dilemma and Public Good, while §3
#: says "Our benchmark measures it in cost-sharing games" (Eq. 6: successful ÷ total cost-sharing
#: games); and it marks Rationality in Cost Sharing, while §3 defines Rationality over the rounds of
#: Prisoner's Dilemma and Public Good only (Eq. 8).
MEASURES = {"chameleon": ("judgement", "reasoning", "deception", "self_awareness"),
            "undercover": ("judgement", "reasoning", "deception", "self_awareness"),
            "cost_sharing": ("cooperation", "coordination"),
            "prisoners_dilemma": ("rationality",),
            "public_good": ("rationality",)}
#: The cells where :data:`MEASURES` differs from Table 3 (``papers/magic_table3_coverage.csv``):
#: ``(scenario, metric)`` marked there and not measured here (§3's definitions, above).
TABLE3_DIFFERENCE = (("cost_sharing", "rationality"), ("prisoners_dilemma", "cooperation"),
                     ("public_good", "cooperation"))
#: The defenders' agent spec in both conditions (the paper's defender is the plain GPT-4 agent).
DEFENDER = "plain"
#: Sampling temperature of every seat (MAgIC's released configs: ``"temperature": 0`` for every backend).
TEMPERATURE = 0.0
#: Games per condition of the full protocol: 2 sides × (20 + 20) + 63 (MAgIC §3.2; issue 27).
GAMES_PER_CONDITION = 143
#: The metric columns of Table 1 / Table 4, in the paper's order.
METRICS = ("win_rate", "judgement", "reasoning", "deception", "self_awareness", "cooperation",
           "coordination", "rationality")
#: Our numbers per condition and per setting: :data:`METRICS` (Coordination ÷ agreed games) and
#: Coordination ÷ all Cost Sharing games.
OUR_METRICS = (*METRICS, COORDINATION_EMNLP)
#: Paper column -> our number set beside it, per paper table (issue 56 item 2). The EMNLP 2024
#: Tables 1 and 4 divide Coordination by all Cost Sharing games (their Coordination = the pre-EMNLP
#: Coordination × Cooperation, graphs/magic/metrics.py); the pre-EMNLP Table 1 and the authors'
#: metric code (cathyxl/MAgIC ``metrics_release.py``) by the agreed games. Every other column is
#: the same number in both.
OURS_BESIDE = {"emnlp": {**{k: k for k in METRICS}, "coordination": COORDINATION_EMNLP},
               "pre_emnlp": {k: k for k in METRICS}}
LABELS = {"win_rate": "Win rate", "judgement": "Judgement", "reasoning": "Reasoning", "deception": "Deception",
          "self_awareness": "Self-awareness", "cooperation": "Cooperation", "coordination": "Coordination",
          "rationality": "Rationality"}
#: The Coordination header beside each paper table, ``{table: header}``: the one wording of
#: :data:`mas_agents.graphs.magic.metrics.COORDINATION_LABELS` of the number set beside it
#: (:data:`OURS_BESIDE`); the report's note says which paper table uses which denominator.
COORDINATION_HEADERS = {table: COORDINATION_LABELS[beside["coordination"]] for table, beside in OURS_BESIDE.items()}
#: Table 2's columns: (csv column, our key, label).
TABLE2 = (("cs_wr", "cs_wr", "Cost Sharing WR"), ("cs_cost", "cs_cost", "Cost Sharing cost"),
          ("pd_wr", "pd_wr", "PD WR"), ("pd_score", "pd_score", "PD score"),
          ("pg_wr", "pg_wr", "PG WR"), ("pg_payback", "pg_payback", "PG payback"))

# --------------------------------------------------------------------------------- the plan


def settings_for(limit: int | None) -> str | None:
    """The ``run_magic`` settings range of ``--limit``: ``None`` (every setting) or ``"0-<N-1>"``.

    A limit of 21 or more covers every scenario (the largest has 21 settings), so it is the full
    protocol (``None``).

    Raises:
        ValueError: ``limit`` < 1.
    """
    if limit is None:
        return None
    if limit < 1:
        raise ValueError(f"--limit: must be >= 1, got {limit}")
    if limit >= max(SETTING_COUNTS.values()):
        return None
    return f"0-{limit - 1}"


def check_conditions(conditions: object = None) -> tuple[str, ...]:
    """``--conditions`` (a comma-separated string or a list; None = all) as a tuple in
    :data:`CONDITIONS` order.

    Raises:
        ValueError: an unknown or repeated condition, or none (the message lists the accepted)."""
    if conditions is None:
        return tuple(CONDITIONS)
    got = [c.strip() for c in (conditions.split(",") if isinstance(conditions, str) else conditions)]
    known = ", ".join(CONDITIONS)
    if not got or any(not c for c in got):
        raise ValueError(f"--conditions: give a comma-separated list from {known}")
    if bad := [c for c in got if c not in CONDITIONS]:
        raise ValueError(f"--conditions: unknown {', '.join(map(repr, bad))}; choose from {known}")
    if len(set(got)) != len(got):
        raise ValueError(f"--conditions: {', '.join(sorted({c for c in got if got.count(c) > 1}))} given twice")
    return tuple(c for c in CONDITIONS if c in got)


def plan_games(data_root: Path, limit: int | None = None,
               conditions: object = None) -> list[tuple[str, str, str, int]]:
    """Every game of the protocol: ``[(condition, scenario, side, setting_id), ...]``.

    Every condition plays the same games (:func:`mas_agents.graphs.magic.bench.plan` of all scenarios on
    :func:`settings_for`): 143 per condition in full, 7 per condition with ``limit=1``;
    ``conditions`` as :func:`check_conditions` takes them.

    Raises:
        FileNotFoundError / ValueError: a missing or malformed setting file (named), a bad condition.
    """
    conds = check_conditions(conditions)
    games = plan(Path(data_root), list(SCENARIOS), settings_for(limit))
    return [(cond, sc, side, st.id) for cond in conds for sc, st, side in games]


def seat_specs(model: str, others: str | None, conditions: object = None) -> dict[str, tuple[str, str]]:
    """Condition -> ``(challenger spec, defender spec)``, e.g. ``{"pgm": ("plain+pgm@openai:m",
    "plain@openai:gpt-4")}``; ``others`` None means ``model``; ``conditions`` as
    :func:`check_conditions` takes them (default every condition).

    Raises:
        ValueError: an empty model, a model holding ``@`` (a spec, not a model) or a comma (a pool);
            a bad condition.
    """
    others = others or model
    for opt, m in (("--model", model), ("--others", others)):
        if not isinstance(m, str) or not m.strip() or "@" in m or "," in m:
            raise ValueError(f"{opt}: magic takes one model such as local or openai:NAME, got {m!r}")
    return {cond: (f"{CONDITIONS[cond]}@{model.strip()}", f"{DEFENDER}@{others.strip()}")
            for cond in check_conditions(conditions)}
