"""``mas reproduce magic``: MAgIC's protocol (Xu et al., arXiv 2311.08562 / EMNLP 2024) in one run,
the paper's Tables 1, 4 and 2 beside ours.

Protocol (MAgIC §3.2 "competition", §4, Appendix A.1; issue 27):

* **Seats.** The model under test (``--model``) is the *challenger*; every other seat is the fixed
  *defender* (``--others``; default ``--model``; the paper: GPT-4). Every seat's model runs at
  temperature 0 (:data:`TEMPERATURE`; the released configs give every backend ``temperature: 0``).
* **Settings.** All 103 released settings (20 Chameleon, 20 Undercover, 21 each of Cost Sharing,
  Prisoner's Dilemma and Public Good; :data:`mas_agents.graphs.magic.dataset.SETTING_COUNTS`); in the two
  social-deduction games the challenger plays each side of every setting (chameleon and
  non-chameleon; undercover and civilian), elsewhere the setting's test seat: 40 + 40 + 63 = 143
  games per condition (:data:`GAMES_PER_CONDITION`).
* **Conditions** (:data:`CONDITIONS`, issue 47 item 5): ``vanilla`` (the challenger is
  ``plain``); ``pgm_paper`` (``plain+pgm_paper``: the PGM-aware agent as the paper built it, §4.1,
  §4.2, App. A.7: the LLM writes the two-hop analysis in the paper's template, then decides with
  it, :mod:`mas_agents.planners.pgm_paper`), the like-for-like counterpart of the paper's "+PGM" rows; and
  ``pgm`` (``plain+pgm``: this project's pgmpy Bayesian networks, :mod:`mas_agents.planners.pgm`, including
  the two-hop share model of Cost Sharing, :mod:`mas_agents.planners.pgm.shares`). The defenders are
  ``plain`` in all three. Each condition is one :func:`mas_agents.graphs.magic.bench.run_magic` run under
  ``out/<condition>/`` (resumable game by game). ``conditions=`` runs a subset (the report names
  those left out); a rerun may add conditions.
* **Openings.** Defenders seated before the challenger replay the setting's recorded round-1
  clues (the data README's rule for the paper's ``gpt-4-fix`` defenders).
* ``limit=N``: the first N settings of every scenario (ids 0..N-1, the same sides); the report
  says it is partial.

Resuming: rerunning with the same ``out`` reuses every finished game; another model, others or
seed is refused (:func:`mas_agents.game.record.check_same_run`, here and in each condition's run). Another
``limit`` is allowed: the games both plans share are the same games, so a ``--limit 1`` run grows
into the full run in place.

Report (``out/report.md``, with ``radar_vanilla.png`` and ``radar_pgm.png`` beside it):

1. **Table 1**: win rate and the seven metrics of each condition (95 % interval and n as
   :func:`mas_agents.graphs.magic.bench.intervals` computes them) beside the paper's Table 1 rows
   (``papers/magic_table1.csv``, the EMNLP 2024 table) and the pre-EMNLP leaderboard as a second,
   labelled reference (``papers/magic_table1_pre_emnlp.csv``).
2. **Table 4**: the pooled values of every condition run and the paired differences over
   settings (:func:`mas_agents.stats.paired_difference`, the unit a setting of a scenario that both
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

The modules: :mod:`~mas_agents.eval.reproduce.magic_protocol` (the protocol's numbers, conditions,
seats and games), :mod:`~mas_agents.eval.reproduce.magic_numbers` (our numbers from the games),
:mod:`~mas_agents.eval.reproduce.magic_report` (the paper's numbers and the report); this one holds
the run: its configuration (:class:`MagicRun`), :func:`check_out` and :func:`reproduce`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from mas_agents.eval.reproduce.common import (
    PaperRun,
    Progress,
    check_options,
    save_estimate,
    versus_actual,
    write_report,
)
from mas_agents.eval.reproduce.magic_numbers import (
    game_theory,
    paper_analyses,
    pgm_engagement,
    setting_metrics,
    table4_ours,
)
from mas_agents.eval.reproduce.magic_protocol import (
    CONDITION_LABELS,
    CONDITIONS,
    GAMES_PER_CONDITION,
    PAPER,
    TEMPERATURE,
    check_conditions,
    plan_games,
    seat_specs,
    settings_for,
)
from mas_agents.eval.reproduce.magic_report import headline, report_md
from mas_agents.graphs.magic.bench import MagicBenchConfig, game_dir, game_label, run_magic
from mas_agents.graphs.magic.bench_report import radar_chart
from mas_agents.graphs.magic.session import play_magic_game
from mas_agents.game.record import NOT_CONFIGURATION, check_same_run
from mas_agents.game.run_config import NOT_RECORDED
from mas_agents.graphs.magic.events import SCENARIOS
from mas_agents.rundir import RunDir, marks_run


@dataclass(frozen=True, kw_only=True)
class MagicRun(PaperRun):
    """The configuration of ``mas reproduce magic``.

    ``config.json`` holds, in this order: ``model``, ``others``, ``seed``, then the derived
    ``temperature`` (:data:`TEMPERATURE`), ``models`` and ``default_model`` (the run-record
    contract), then ``limit``, ``settings`` (:func:`settings_for` of ``limit``), ``conditions``
    (recorded with each one's seats: ``{condition: {"challenger", "defender"}}``) and, when a
    subset ran, ``left_out`` (:meth:`config_json`).

    Attributes:
        model: the challenger's model (``local``, ``openai:NAME``; a one-element list is accepted).
        others: the defenders' model (None: ``model``, as recorded; the paper: GPT-4 at temperature 0).
        seed: sampling seed of every model.
        limit: only the first N settings of every scenario (a partial, smoke run); None: all.
        conditions: the conditions to run (:func:`check_conditions`: a comma-separated string, a
            list, or the recorded mapping; default all three, in :data:`CONDITIONS` order).
        play: the game player (default :func:`mas_agents.graphs.magic.session.play_magic_game`; tests).
        concurrency: games at once (default: ``--max-connections`` when every model is remote).

    Raises:
        ValueError: a bad option (:func:`seat_specs`, :func:`settings_for`), named.
    """

    PAPER = PAPER

    model: str
    others: str | None = None
    seed: int = 0
    limit: int | None = None
    conditions: tuple[str, ...] = tuple(CONDITIONS)
    play: Callable | None = field(default=None, metadata=NOT_RECORDED)
    concurrency: int | None = field(default=None, metadata=NOT_RECORDED)

    def __post_init__(self) -> None:
        super().__post_init__()
        model = self.model
        if isinstance(model, (list, tuple)):
            if len(model) != 1:
                raise ValueError(f"--model: magic takes one model, got {len(model)} ({', '.join(model)})")
            model = model[0]
        conditions = check_conditions(self.conditions)
        seat_specs(model, self.others, conditions)
        settings_for(self.limit)
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "others", self.others or model)
        object.__setattr__(self, "conditions", conditions)

    @classmethod
    def from_options(cls, *, data_root: Path, out: Path, model: Any, others: str | None = None,
                     limit: int | None = None, seed: int = 0, options: Mapping[str, Any] | None = None) -> "MagicRun":
        """``options``: ``conditions`` (:meth:`PaperRun.from_options`)."""
        opts = check_options(PAPER, options or {})
        return cls(data_root=data_root, out=out, model=model, others=others, limit=limit, seed=seed,
                   **({"conditions": opts["conditions"]} if opts.get("conditions") is not None else {}))

    def as_options(self) -> dict[str, Any]:
        return {"model": self.model, "others": None if self.others == self.model else self.others,
                "limit": self.limit, "seed": self.seed,
                "options": {} if self.conditions == tuple(CONDITIONS) else {"conditions": ",".join(self.conditions)}}

    def seats(self) -> dict[str, tuple[str, str]]:
        """Condition -> ``(challenger spec, defender spec)`` (:func:`seat_specs`)."""
        return seat_specs(self.model, self.others, self.conditions)

    def record(self) -> dict[str, Any]:
        """The recorded fields, ``conditions`` with each one's seats (as ``config.json`` holds them)."""
        return {**super().record(), "conditions": {c: {"challenger": ch, "defender": de}
                                                   for c, (ch, de) in self.seats().items()}}

    def settings(self) -> dict[str, Any]:
        """What a rerun into ``out`` must share (``model``, ``others``, ``seed``, ``temperature``,
        ``models``, ``default_model``); ``limit`` and ``conditions`` may differ: another limit or
        more conditions extend the run (each condition's run reuses its finished games)."""
        return {"model": self.model, "others": self.others, "seed": self.seed, "temperature": TEMPERATURE,
                # the models every seat ran (mas_agents.game.record): the challenger's and the defenders'
                "models": sorted({self.model, self.others}), "default_model": self.model}

    def left_out(self) -> list[str]:
        """The conditions this run leaves out (:data:`CONDITIONS` order)."""
        return [c for c in CONDITIONS if c not in self.conditions]

    def config_json(self) -> dict[str, Any]:
        """``config.json`` after ``kind`` and ``paper`` (the class text gives the order)."""
        rec = self.record()
        config = {**self.settings(), "limit": self.limit, "settings": settings_for(self.limit),
                  "conditions": rec["conditions"]}
        if self.left_out():
            config["left_out"] = self.left_out()
        return config


def check_out(config: MagicRun) -> dict:
    """Check that ``config.out`` may hold this run, writing and running nothing: what
    :func:`reproduce` checks first, callable before a costly step (the CLI's estimate, ``mas
    reproduce all``'s other parts).

    Returns:
        The configuration compared with ``out/config.json`` (:meth:`MagicRun.settings`). ``limit``
        is not part of it: a rerun with another limit extends the run.

    Raises:
        ValueError: ``out`` holding a run with another model, others or seed
            (:class:`mas_agents.rundir.RunConflict`).
    """
    cfg = config.settings()
    # "model" here is the model under test, part of the configuration; another limit may differ
    check_same_run(config.out, {"kind": "reproduce", "paper": PAPER, **cfg}, ignore=NOT_CONFIGURATION - {"model"})
    return cfg


def reproduce(config: MagicRun) -> dict:
    """Play (or resume) the conditions of MAgIC's protocol under ``config.out`` and write the report.

    Args:
        config: the run (:class:`MagicRun`); its ``data_root`` holds ``magic/settings``;
            ``out/<condition>`` holds each condition's ``run_magic`` run.

    Returns:
        ``result.json``'s dict: ``conditions`` (each condition's ``run_magic`` result minus its
        game list), ``left_out`` (conditions not run), ``table4``, ``table2``,
        ``games_per_condition``, ``partial``, ``cost``.

    Raises:
        ValueError: ``out`` holds a run with another model, others or seed.
    """
    return _reproduce(config, out=config.out)


@marks_run
def _reproduce(config: MagicRun, *, out: Path) -> dict:
    """:func:`reproduce` with its run directory marked while it runs (:func:`mas_agents.rundir.marks_run`)."""
    check_out(config)
    model, seed, limit, estimate = config.model, config.seed, config.limit, config.estimate
    specs = config.seats()
    conds = config.conditions
    left_out = config.left_out()
    settings = settings_for(limit)
    partial = settings is not None or bool(left_out)
    config_json = config.config_json()
    out.mkdir(parents=True, exist_ok=True)
    RunDir(out).write_config({"kind": "reproduce", "paper": PAPER, **config_json})
    if estimate is not None:   # the estimate made before the run, kept for a resumed run's report
        save_estimate(out, estimate)
    planned = plan_games(config.data_root, limit, conds)
    progress = Progress(len(planned), config.tick, paper=PAPER)
    calls: dict[str, int] = {}
    play = config.play or play_magic_game

    def counting_play(d: Path, game: Any) -> dict:
        res = play(d, game)
        calls[str(d)] = int(((res or {}).get("llm") or {}).get("calls", 0))
        return res

    results = {}
    for cond, (challenger, defender) in specs.items():
        run_dir = out / cond

        def step(line: str, cond: str = cond, run_dir: Path = run_dir) -> None:
            sc, side, sid = line.split(" ")
            d = game_dir(run_dir, sc, side, int(sid[1:]))
            n = calls.pop(str(d), None)
            if n is None and RunDir(d).has_result():
                # played on a Ray worker (counting_play ran there): the game's own record
                n = int((RunDir(d).read_result().get("llm") or {}).get("calls", 0))
            progress.done(f"{CONDITION_LABELS.get(cond, cond)}: {game_label(line)}", n or 0)

        bench = MagicBenchConfig(data_root=config.data_root, out=run_dir, scenarios=list(SCENARIOS),
                                 challenger=challenger, defender=defender, settings=settings, model=model,
                                 seed=seed, replay_openings=True, concurrency=config.concurrency,
                                 temperature=TEMPERATURE)
        results[cond] = run_magic(bench, tick=step, play=counting_play)
        radar_chart(results[cond]["metrics"], out / f"radar_{cond}.png",
                    title=f"{cond}: {challenger} vs {defender}")

    per_setting = {c: setting_metrics(out / c, results[c]["games"]) for c in conds}
    t4 = table4_ours(results, per_setting)
    t2 = {c: game_theory(out / c, results[c]["games"]) for c in conds}
    cost = {k: sum(results[c]["cost"][k] for c in conds) for k in results[conds[0]]["cost"]}
    cost["wall_s"] = round(cost["wall_s"], 1)
    result = {**config_json, "partial": partial, "left_out": left_out,
              "games_per_condition": {c: len(results[c]["games"]) for c in conds},
              "full_games_per_condition": GAMES_PER_CONDITION,
              "conditions": {c: {k: v for k, v in r.items() if k != "games"} for c, r in results.items()},
              "table4": t4, "table2": t2,
              "pgm_engagement": pgm_engagement(out / "pgm", results["pgm"]["games"]) if "pgm" in results else {},
              "pgm_paper_analyses": (paper_analyses(out / "pgm_paper", results["pgm_paper"]["games"])
                                     if "pgm_paper" in results else {}),
              "cost": cost}
    if estimate is not None:
        result["estimate_vs_actual"] = versus_actual(estimate, cost)
    result["headline"] = headline(result)
    markdown = report_md(result, papers_dir=None)
    write_report(out, paper=PAPER, config=config_json, result=result, markdown=markdown)
    return RunDir(out).read_result()


__all__ = [
    "MagicRun",
    "check_out",
    "reproduce",
]
