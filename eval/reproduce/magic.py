"""``mas reproduce magic``: MAgIC's protocol (Xu et al., arXiv 2311.08562 / EMNLP 2024) in one run,
the paper's Tables 1, 4 and 2 beside ours.

Protocol (MAgIC §3.2 "competition", §4, Appendix A.1; issue 27):

* **Seats.** The model under test (``--model``) is the *challenger*; every other seat is the fixed
  *defender* (``--others``; default ``--model``; the paper: GPT-4). Every seat's model runs at
  temperature 0 (:data:`TEMPERATURE`; the released configs give every backend ``temperature: 0``).
* **Settings.** All 103 released settings (20 Chameleon, 20 Undercover, 21 each of Cost Sharing,
  Prisoner's Dilemma and Public Good; :data:`mas_agents.eval.datasets.magic.SETTING_COUNTS`); in the two
  social-deduction games the challenger plays each side of every setting (chameleon and
  non-chameleon; undercover and civilian), elsewhere the setting's test seat: 40 + 40 + 63 = 143
  games per condition (:data:`GAMES_PER_CONDITION`).
* **Conditions** (:data:`CONDITIONS`, issue 47 item 5): ``vanilla`` (the challenger is
  ``plain``); ``pgm_paper`` (``plain+pgm_paper``: the PGM-aware agent as the paper built it, §4.1,
  §4.2, App. A.7: the LLM writes the two-hop analysis in the paper's template, then decides with
  it, :mod:`mas_agents.planners.pgm_paper`), the like-for-like counterpart of the paper's "+PGM" rows; and
  ``pgm`` (``plain+pgm``: this project's pgmpy Bayesian networks, :mod:`mas_agents.planners.pgm`, including
  the two-hop share model of Cost Sharing, :mod:`mas_agents.planners.pgm.shares`). The defenders are
  ``plain`` in all three. Each condition is one :func:`mas_agents.eval.runs.magic_bench.run_magic` run under
  ``out/<condition>/`` (resumable game by game). ``conditions=`` runs a subset (the report names
  those left out); a rerun may add conditions.
* **Openings.** Defenders seated before the challenger replay the setting's recorded round-1
  clues (the data README's rule for the paper's ``gpt-4-fix`` defenders).
* ``limit=N``: the first N settings of every scenario (ids 0..N-1, the same sides); the report
  says it is partial.

Resuming: rerunning with the same ``out`` reuses every finished game; another model, others or
seed is refused (:func:`mas_agents.eval.runs.record.check_same_run`, here and in each condition's run). Another
``limit`` is allowed: the games both plans share are the same games, so a ``--limit 1`` run grows
into the full run in place.

Report (``out/report.md``, with ``radar_vanilla.png`` and ``radar_pgm.png`` beside it):

1. **Table 1**: win rate and the seven metrics of each condition (95 % interval and n as
   :func:`mas_agents.eval.runs.magic_bench.intervals` computes them) beside the paper's Table 1 rows
   (``papers/magic_table1.csv``, the EMNLP 2024 table) and the pre-EMNLP leaderboard as a second,
   labelled reference (``papers/magic_table1_pre_emnlp.csv``).
2. **Table 4**: the pooled values of every condition run and the paired differences over
   settings (:func:`mas_agents.eval.stats.paired_difference`, the unit a setting of a scenario that both
   conditions played; :data:`PAIRS`): ``pgm_paper − vanilla``, the like-for-like counterpart of the
   paper's improvement, beside the paper's per-model improvements (each "X+PGM" row minus the "X"
   row of ``papers/magic_table4.csv``), its printed average and the mean of its improvements
   computed here (the printed average for Deception and Self-awareness does not follow from its
   rows); then ``pgm − pgm_paper``, what the pgmpy model adds on top of the paper's agent, and
   ``pgm − vanilla``.
3. **Table 2**: Cost Sharing win rate / cost, Prisoner's Dilemma win rate / score, Public Good
   win rate / payback from our games (:func:`game_theory`) beside the paper's
   (``papers/magic_table2.csv``).
4. **Protocol differences** (:data:`DIFFERENCES` plus what the run itself shows).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from mas_agents.eval.reproduce.common import (
    PaperDataError,
    PaperTable,
    Progress,
    differences,
    fmt_estimate,
    load_table,
    md_table,
    partial_note,
    source_line,
    write_report,
)
from mas_agents.eval.runs.record import NOT_CONFIGURATION, check_same_run
from mas_agents.rundir import marks_run, read_json, write_json

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
#: The metrics each scenario measures here (eval/metrics/magic.py): MAgIC Table 3's marks but where
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
LABELS = {"win_rate": "Win rate", "judgement": "Judgement", "reasoning": "Reasoning", "deception": "Deception",
          "self_awareness": "Self-awareness", "cooperation": "Cooperation", "coordination": "Coordination",
          "rationality": "Rationality"}
#: Table 2's columns: (csv column, our key, label).
TABLE2 = (("cs_wr", "cs_wr", "Cost Sharing WR"), ("cs_cost", "cs_cost", "Cost Sharing cost"),
          ("pd_wr", "pd_wr", "PD WR"), ("pd_score", "pd_score", "PD score"),
          ("pg_wr", "pg_wr", "PG WR"), ("pg_payback", "pg_payback", "PG payback"))

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
    "the Deception parts: eval/metrics/magic.py); Table 4 here is a paired difference over settings, the "
    "paper prints one difference per model without an interval.",
    "Table 2 quantities: the paper defines cost as the challenger's average final cost after the "
    "negotiation (§5.3, RQ2) and score and payback no further; ours are under Table 2.",
)


# --------------------------------------------------------------------------------- the plan


def settings_for(limit: int | None) -> str | None:
    """The ``run_magic`` settings range of ``--limit``: ``None`` (every setting) or ``"0-<N-1>"``.

    A limit of 21 or more covers every scenario (the largest has 21 settings), so it is the full
    protocol (``None``).

    Raises:
        ValueError: ``limit`` < 1.
    """
    from mas_agents.eval.datasets.magic import SETTING_COUNTS
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

    Every condition plays the same games (:func:`mas_agents.eval.runs.magic_bench.plan` of all scenarios on
    :func:`settings_for`): 143 per condition in full, 7 per condition with ``limit=1``;
    ``conditions`` as :func:`check_conditions` takes them.

    Raises:
        FileNotFoundError / ValueError: a missing or malformed setting file (named), a bad condition.
    """
    from mas_agents.eval.runs.magic_bench import plan
    from mas_agents.graphs.magic.events import SCENARIOS
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


# ------------------------------------------------------------------------------------ the run


def check_out(*, out: Path, model: str | list[str], others: str | None = None, limit: int | None = None,
              seed: int = 0, conditions: object = None) -> dict:
    """Check the options and that ``out`` may hold this run, writing and running nothing: what
    :func:`reproduce` checks first, callable before a costly step (the CLI's estimate, ``mas
    reproduce all``'s other parts).

    Returns:
        The configuration compared with ``out/config.json`` (``model``, ``others``, ``seed``,
        ``temperature``, ``models``, ``default_model``). ``limit`` is not part of it: a rerun
        with another limit extends the run (each condition's run reuses its finished games).

    Raises:
        ValueError: a bad option (:func:`seat_specs`, :func:`settings_for`), or ``out`` holding
            a run with another model, others or seed (:class:`mas_agents.eval.runs.record.RunConflict`).
    """
    if isinstance(model, (list, tuple)):
        if len(model) != 1:
            raise ValueError(f"--model: magic takes one model, got {len(model)} ({', '.join(model)})")
        model = model[0]
    seat_specs(model, others, conditions)
    settings_for(limit)
    others = others or model
    cfg = {"model": model, "others": others, "seed": seed, "temperature": TEMPERATURE}
    # the models every seat ran (mas_agents.eval.runs.record): the challenger's and the defenders'
    cfg.update(models=sorted({model, others}), default_model=model)
    # "model" here is the model under test, part of the configuration; another limit may differ
    check_same_run(Path(out), {"kind": "reproduce", "paper": PAPER, **cfg}, ignore=NOT_CONFIGURATION - {"model"})
    return cfg


@marks_run
def reproduce(*, data_root: Path, out: Path, model: str | list[str], others: str | None = None,
              limit: int | None = None, seed: int = 0, tick: Callable[[str], None] | None = None,
              play: Callable | None = None, concurrency: int | None = None, conditions: object = None,
              estimate: dict | None = None) -> dict:
    """Play (or resume) the conditions of MAgIC's protocol under ``out`` and write the report.

    Args:
        data_root: datasets root holding ``magic/settings``.
        out: run directory; ``out/<condition>`` holds each condition's ``run_magic`` run.
        model: the challenger's model (``local``, ``openai:NAME``; a one-element list is accepted).
        others: the defenders' model (default ``model``; the paper: GPT-4 at temperature 0).
        limit: only the first N settings of every scenario (a partial, smoke run).
        seed: sampling seed of every model.
        tick: receives one progress line per finished game.
        play: the game player (default :func:`mas_agents.eval.runs.magic_session.play_magic_game`; tests).
        concurrency: games at once (default: ``--max-connections`` when every model is remote).
        conditions: the conditions to run (:func:`check_conditions`; default all three).
        estimate: :func:`mas_agents.eval.reproduce.estimate.estimate` of this run made before it: kept as
            ``out/estimate.json`` and set beside the actual calls and tokens in the report.

    Returns:
        ``result.json``'s dict: ``conditions`` (each condition's ``run_magic`` result minus its
        game list), ``left_out`` (conditions not run), ``table4``, ``table2``,
        ``games_per_condition``, ``partial``, ``cost``.

    Raises:
        ValueError: a bad option, or ``out`` holds a run with another model, others or seed.
    """
    from mas_agents.eval.runs.magic_bench import MagicBenchConfig, radar_chart, run_magic
    from mas_agents.graphs.magic.events import SCENARIOS

    cfg = check_out(out=out, model=model, others=others, limit=limit, seed=seed, conditions=conditions)
    model = cfg["model"]
    specs = seat_specs(model, others, conditions)
    conds = tuple(specs)
    left_out = [c for c in CONDITIONS if c not in specs]
    others = others or model
    out = Path(out)
    settings = settings_for(limit)
    partial = settings is not None or bool(left_out)
    config = {**cfg, "limit": limit, "settings": settings, "conditions": {c: {"challenger": ch, "defender": de}
                                                                          for c, (ch, de) in specs.items()}}
    if left_out:
        config["left_out"] = left_out
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "config.json", {"kind": "reproduce", "paper": PAPER, **config})
    if estimate is not None:   # the estimate made before the run, kept for a resumed run's report
        from mas_agents.eval.reproduce.common import save_estimate as save
        save(out, estimate)
    planned = plan_games(data_root, limit, conds)
    progress = Progress(len(planned), tick, paper=PAPER)
    calls: dict[str, int] = {}

    def counting_play(d, game):
        from mas_agents.eval.runs.magic_session import play_magic_game
        res = (play or play_magic_game)(d, game)
        calls[str(d)] = int(((res or {}).get("llm") or {}).get("calls", 0))
        return res

    results = {}
    for cond, (challenger, defender) in specs.items():
        run_dir = out / cond

        def step(line: str, cond=cond, run_dir=run_dir) -> None:
            sc, side, sid = line.split(" ")
            from mas_agents.eval.runs.magic_bench import game_dir
            d = game_dir(run_dir, sc, side, int(sid[1:]))
            n = calls.pop(str(d), None)
            if n is None and (d / "result.json").exists():
                # played on a Ray worker (counting_play ran there): the game's own record
                n = int((read_json(d / "result.json").get("llm") or {}).get("calls", 0))
            progress.done(f"{cond} {line}", n or 0)

        results[cond] = run_magic(MagicBenchConfig(data_root=Path(data_root), out=run_dir, scenarios=list(SCENARIOS),
                                                   challenger=challenger, defender=defender, settings=settings,
                                                   model=model, seed=seed, replay_openings=True,
                                                   concurrency=concurrency, temperature=TEMPERATURE),
                                  tick=step, play=counting_play)
        radar_chart(results[cond]["metrics"], out / f"radar_{cond}.png",
                    title=f"{cond}: {challenger} vs {defender}")

    per_setting = {c: setting_metrics(out / c, results[c]["games"]) for c in conds}
    t4 = table4_ours(results, per_setting)
    t2 = {c: game_theory(out / c, results[c]["games"]) for c in conds}
    cost = {k: sum(results[c]["cost"][k] for c in conds) for k in results[conds[0]]["cost"]}
    cost["wall_s"] = round(cost["wall_s"], 1)
    result = {**config, "partial": partial, "left_out": left_out,
              "games_per_condition": {c: len(results[c]["games"]) for c in conds},
              "full_games_per_condition": GAMES_PER_CONDITION,
              "conditions": {c: {k: v for k, v in r.items() if k != "games"} for c, r in results.items()},
              "table4": t4, "table2": t2,
              "pgm_engagement": pgm_engagement(out / "pgm", results["pgm"]["games"]) if "pgm" in results else {},
              "pgm_paper_analyses": (paper_analyses(out / "pgm_paper", results["pgm_paper"]["games"])
                                     if "pgm_paper" in results else {}),
              "cost": cost}
    if estimate is not None:
        from mas_agents.eval.reproduce.common import versus_actual
        result["estimate_vs_actual"] = versus_actual(estimate, cost)
    result["headline"] = headline(result)
    markdown = report_md(result, papers_dir=None)
    write_report(out, paper=PAPER, config=config, result=result, markdown=markdown)
    return read_json(out / "result.json")


# ---------------------------------------------------------------------------------- our numbers


def _games_by_setting(run_dir: Path, names: list[str]) -> dict[str, list[list[dict]]]:
    """``"<scenario>/<id>"`` -> the event logs of that setting's games (both sides together)."""
    from mas_agents.events import read_events
    by: dict[str, list] = {}
    for name in names:
        d = Path(run_dir) / "games" / name
        r = read_json(d / "result.json")
        by.setdefault(f"{r['scenario']}/{int(r['setting_id']):02d}", []).append(read_events(d / "events.jsonl"))
    return by


def setting_metrics(run_dir: Path, names: list[str]) -> dict[str, dict[str, float | None]]:
    """Per setting (``"<scenario>/<id>"``), the eight numbers of
    :func:`mas_agents.eval.metrics.magic.scenario_metrics` over that setting's games (None where the setting's
    scenario does not measure a metric, e.g. Judgement in Cost Sharing). A setting's win rate is the
    mean of its scenario's win-rate parts."""
    from mas_agents.eval.metrics.magic import scenario_metrics
    out = {}
    for key, logs in _games_by_setting(run_dir, names).items():
        m = scenario_metrics(logs)
        out[key] = {k: m[k] for k in METRICS}
    return out


def table4_ours(results: dict[str, dict], per_setting: dict[str, dict]) -> dict[str, dict]:
    """Per metric: each condition run's pooled value (0–1, keyed by condition) and ``"paired"``:
    ``{"<a>-<b>": estimate}`` for every pair of :data:`PAIRS` whose two conditions ran, the mean
    of (a − b) over the settings where both measured the metric, with a percentile-bootstrap 95 %
    interval (:func:`mas_agents.eval.stats.paired_difference`, n = settings)."""
    from mas_agents.eval.stats import paired_difference
    out = {}
    for k in METRICS:
        row: dict = {c: results[c]["metrics"][k] for c in results}
        row["paired"] = {}
        for a, b, _ in PAIRS:
            if a in per_setting and b in per_setting:
                va = {s: m[k] for s, m in per_setting[a].items()}
                vb = {s: m[k] for s, m in per_setting[b].items()}
                row["paired"][f"{a}-{b}"] = paired_difference(va, vb, seed=0).to_dict()
        out[k] = row
    return out


def _seat(result: dict) -> str | None:
    seats = result.get("challenger_seats") or []
    return seats[0] if seats else None


def game_theory(run_dir: Path, names: list[str]) -> dict[str, dict]:
    """Table 2's six numbers of the challenger from the game-theory games' ``outcome`` events.

    * ``cs_wr``: Cost Sharing games that reached an agreement ÷ games (the win-rate part of Cost
      Sharing, = Cooperation); Wilson interval, n = games.
    * ``cs_cost``: the challenger's share of the fee in the agreed split, in percent, mean over the
      agreed games (a failed negotiation has no split and is left out); bootstrap, n = agreed games.
    * ``pd_wr`` / ``pg_wr``: games in which the challenger is among the winners ÷ games; Wilson.
    * ``pd_score``: the challenger's total payoff over the game's rounds (points of the setting's
      payoff table), mean over games; bootstrap, n = games.
    * ``pg_payback``: the challenger's final holding ÷ its endowment of 100, mean over games;
      bootstrap, n = games.

    Every value is an :meth:`mas_agents.eval.stats.Estimate.to_dict` (rates in 0–1).
    """
    from mas_agents.eval.stats import bootstrap_mean, wilson
    from mas_agents.graphs.magic.rules import PLAYERS
    cs_n = cs_agreed = pd_n = pd_won = pg_n = pg_won = 0
    costs: list[float] = []
    scores: list[float] = []
    paybacks: list[float] = []
    for name in names:
        d = Path(run_dir) / "games" / name
        r = read_json(d / "result.json")
        seat, oc = _seat(r), r.get("outcome") or {}
        if r["scenario"] == "cost_sharing":
            cs_n += 1
            if oc.get("agreed") and oc.get("split") and seat in PLAYERS:
                cs_agreed += 1
                costs.append(float(oc["split"][PLAYERS.index(seat)]))
        elif r["scenario"] == "prisoners_dilemma":
            pd_n += 1
            pd_won += seat in (oc.get("winners") or [])
            if seat in (oc.get("totals") or {}):
                scores.append(float(oc["totals"][seat]))
        elif r["scenario"] == "public_good":
            pg_n += 1
            pg_won += seat in (oc.get("winners") or [])
            if seat in (oc.get("finals") or {}):
                paybacks.append(float(oc["finals"][seat]) / 100.0)
    return {"cs_wr": wilson(cs_agreed, cs_n).to_dict(), "cs_cost": bootstrap_mean(costs, seed=0).to_dict(),
            "pd_wr": wilson(pd_won, pd_n).to_dict(), "pd_score": bootstrap_mean(scores, seed=0).to_dict(),
            "pg_wr": wilson(pg_won, pg_n).to_dict(), "pg_payback": bootstrap_mean(paybacks, seed=0).to_dict()}


def _challenger_events(run_dir: Path, names: list[str], kind: str):
    """Each game's scenario and its ``kind`` events made by a challenger seat, in ``names`` order:
    ``(scenario, [event, ...])`` per game of ``run_dir/games``."""
    from mas_agents.events import read_events
    for name in names:
        d = Path(run_dir) / "games" / name
        r = read_json(d / "result.json")
        seats = set(r.get("challenger_seats") or [])
        yield r["scenario"], [e for e in read_events(d / "events.jsonl") if e.get("kind") == kind and e.get("actor") in seats]


def paper_analyses(run_dir: Path, names: list[str]) -> dict[str, dict[str, int]]:
    """Per scenario, the paper's agent at work (+PGM condition): ``{"games", "analyses"
    (``pgm_analysis`` events of a challenger seat: one per analysis written, each readable in the
    call viewer through its ``llm_call_ids``), "empty" (analyses whose text is empty: the call
    failed or the reply was empty)}``."""
    out: dict[str, dict[str, int]] = {}
    for scenario, evs in _challenger_events(run_dir, names, "pgm_analysis"):
        row = out.setdefault(scenario, {"games": 0, "analyses": 0, "empty": 0})
        row["games"] += 1
        row["analyses"] += len(evs)
        row["empty"] += sum(1 for e in evs if str(e.get("content") or "").startswith("(no analysis"))
    return out


def pgm_engagement(run_dir: Path, names: list[str]) -> dict[str, dict[str, int]]:
    """Per scenario, whether the PGM blocks of the challenger took part: ``{"games", "with_tables"
    (games with at least one ``belief_table`` event of a challenger seat), "tables" (those events),
    "shown" (those put into a prompt: ``data.shown`` not false)}``."""
    out: dict[str, dict[str, int]] = {}
    for scenario, tables in _challenger_events(run_dir, names, "belief_table"):
        row = out.setdefault(scenario, {"games": 0, "with_tables": 0, "tables": 0, "shown": 0})
        row["games"] += 1
        row["with_tables"] += bool(tables)
        row["tables"] += len(tables)
        row["shown"] += sum(1 for e in tables if (e.get("data") or {}).get("shown") is not False)
    return out


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
        from mas_agents.eval.reproduce.common import versus_lines
        lines += versus_lines(result["estimate_vs_actual"])

    # ---- Table 1
    lines += ["## Table 1: win rate and the seven metrics", "",
              "Ours: percent with a 95 % interval and n (Wilson for the six proportions; a bootstrap over "
              "settings for win rate and deception; `mas_agents.eval.runs.magic_bench.intervals`). Paper: the rows of its "
              "Table 1, every model against GPT-4 defenders on all 103 settings.", ""]
    rows = []
    for cond in run:
        r = conds[cond]
        rows.append([f"**ours: {CONDITION_LABELS[cond]}** ({r['challenger']})"]
                    + [fmt_estimate({**r["intervals"][k], "mean": r["metrics"][k]}) if r["metrics"][k] is not None
                       else f"- (n={r['intervals'][k]['n']})" for k in METRICS])
    for pr in t1.rows:
        rows.append([f"{pr['model']} (paper)"] + [_cell(pr.get(k), missing_word(t1)) for k in METRICS])
    for pr in t1_pre.rows:
        rows.append([f"{pr['model']} (paper, pre-EMNLP)"] + [_cell(pr.get(k), missing_word(t1_pre)) for k in METRICS])
    lines += md_table(["model", *(LABELS[k] for k in METRICS)], rows) + ["", source_line(t1), source_line(t1_pre), ""]
    if t1.meta.get("note"):
        lines += [f"About the paper's numbers: {t1.meta['note']}", ""]

    # ---- Table 4
    t4_metrics = [k for k in METRICS if k in t4.columns]
    models = pgm_pairs(t4)
    averages = [r["model"] for r in t4.rows if r["model"].strip().lower().startswith("average")]
    miss4 = missing_word(t4)
    pct = (lambda x: "-" if x is None else f"{100 * x:.1f}")

    def paired(o: dict, a: str, b: str) -> str:
        est = (o.get("paired") or {}).get(f"{a}-{b}")
        return "not run" if est is None else fmt_estimate(est, unit="")

    lines += ["## Table 4: the PGM-aware agent against vanilla", "",
              "Ours: the pooled value of each condition, and paired differences: the mean over settings of "
              "(a − b) on the settings where both conditions measured the metric, with a paired-bootstrap 95 % "
              "interval (n = settings; `mas_agents.eval.stats.paired_difference`); points are percentage points. The "
              "like-for-like column is **the paper's +PGM − vanilla**: the paper's agent as the paper built it "
              "(`plain+pgm_paper`), to set beside the paper's per-model improvements (+PGM − the same model), its "
              "printed average and the mean of its printed rows computed here from the CSV.", ""]
    rows = []
    for k in t4_metrics:
        o = result["table4"][k]
        printed, mean = printed_average(t4, k), row_mean(t4, k)
        rows.append([LABELS[k], *(pct(o.get(c)) if c in conds else "not run" for c in CONDITIONS),
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
                      [[LABELS[k], *(paired(result["table4"][k], a, b) for a, b, _ in PAIRS[1:])]
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


__all__ = ["CONDITIONS", "PAIRS", "MEASURES", "TABLE3_DIFFERENCE", "check_conditions", "GAMES_PER_CONDITION", "TEMPERATURE", "reproduce", "plan_games", "seat_specs",
           "settings_for", "setting_metrics", "table4_ours", "game_theory", "report_md", "printed_average",
           "row_mean", "PaperDataError"]


def headline(result: dict) -> str:
    """One line for the runs list and ``mas reproduce all``: each condition's win rate with its n
    and interval, and how much of the protocol was played, e.g. ``win rate: vanilla 57.1 % [no
    interval, n=1], +PGM 57.1 % [...], +pgm ...; 7 of 143 games per condition (partial)``."""
    from mas_agents.eval.stats import Estimate

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
        parts.append(f"{label} {est.fmt()}")
    games = result.get("games_per_condition") or {}
    n = max(games.values(), default=0)
    return (f"win rate: {', '.join(parts)}; {n} of {result.get('full_games_per_condition')} games per condition"
            + (" (partial)" if result.get("partial") else ""))
