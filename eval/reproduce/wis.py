"""``mas reproduce wis``: the WiS paper's protocol (Hu et al., arXiv:2412.03359 v1), its Tables 2–4
beside ours.

What it plays (every game through :mod:`mas_agents.graphs.wis.tournament`, stored in ``<out>/wis.sqlite``):

* **Main experiment** (v1 §5.1, Table 2): a pool of K models (``--model A,B,...``), 6-seat games with
  1 spy and at most 3 rounds (§3.1, App. A), :func:`mas_agents.graphs.wis.tournament.schedule` seating:
  every model holds the spy seat in game ``i`` when ``i mod K`` is its index, the civilian seats
  cycle through the others, so with a multiple of K games every model is seated equally often (and
  is the spy equally often). The paper: ten models, "each experiment was repeated over 90 times";
  Table 2's rates fit 90 seats per model, i.e. 150 games. The full protocol here is 90 seats per
  pool model: ``15 K`` games. Metrics per model: win rate as spy / civilian / overall, average
  score per seat-game, and the rank score 100 + Σ score − N (§3.5) of the leaderboard
  (:func:`mas_agents.graphs.wis.metrics.agent_metrics`).
* **Attack / defense** (§5.3, Table 3) and **reasoning** (§5.4, Table 4): for each distinct model
  of the pool, :func:`mas_agents.graphs.wis.tournament.run_experiment` (baseline arm vs the strategy arm on
  the same seating, words and seeds) with the paper's prompts verbatim (v1 Table 1, in
  :mod:`mas_agents.planners.strategies`); the other seats are ``--others`` or the same model. The paper:
  "each experiment being repeated more than 24 times"; here 24 games per arm.

``--limit N`` plays the first N games of the main experiment and N games per experiment arm; the
report says it is partial, and whether N lets every model be seated (and be the spy) equally
often.

Checks any reimplementation must pass (run on every game played, each reported pass/fail): 6
seats and 1 spy per game, at most 3 rounds, fouls eliminate, a tie eliminates no one, scores as
App. A recomputes them and summing to 12 per game (so the mean score per seat is 2.00), the rank
score formula, and equal seating.

The modules: :mod:`~mas_agents.eval.reproduce.wis_protocol` (the protocol's numbers, the pool, the
seating), :mod:`~mas_agents.eval.reproduce.wis_numbers` (estimates and checks),
:mod:`~mas_agents.eval.reproduce.wis_report` (the report); this one holds the run: its configuration
(:class:`WisRun`), :func:`check_out` and :func:`reproduce`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from mas_agents.graphs.wis.dataset import load_pairs
from mas_agents.graphs.wis.metrics import agent_metrics
from mas_agents.graphs.wis.leaderboard import Leaderboard
from mas_agents.eval.reproduce.common import (
    PaperRun,
    Progress,
    check_options,
    load_table,
    save_estimate,
    versus_actual,
    write_report,
)
from mas_agents.eval.reproduce.wis_numbers import arm_estimates, checks, model_estimates, paper_checks
from mas_agents.eval.reproduce.wis_protocol import (
    EXPERIMENT_GAMES,
    EXPERIMENTS,
    LANG,
    PAPER,
    PLAYERS,
    agent_spec,
    balance_note,
    full_games,
    main_plan,
    parse_pool,
    pool_labels,
    relabel,
)
from mas_agents.eval.reproduce.wis_report import headline, report_markdown
from mas_agents.game.record import check_same_run
from mas_agents.game.run_config import NOT_RECORDED
from mas_agents.graphs.wis import session as wis_session
from mas_agents.graphs.wis.tournament import (
    ExperimentConfig,
    TournamentConfig,
    run_experiment,
    run_tournament,
    schedule,
)
from mas_agents.rundir import RESULT_FILE, RunDir


@dataclass(frozen=True, kw_only=True)
class WisRun(PaperRun):
    """The configuration of ``mas reproduce wis`` (recorded in ``config.json`` with ``models``,
    every seat's model).

    Attributes:
        pool: the pool's model specs in order (``"A,B,..."`` or a list is accepted and split;
            duplicates kept: ``local,local`` is two pool members), :func:`parse_pool`.
        others: the model of the other seats in the experiments (default: the subject's own).
        limit: N games of the main experiment and N per experiment arm (a smoke run); None: all.
        seed: seating, word pairs and game seeds.
        lang: the word pairs' language (the protocol plays English, :data:`LANG`).
        play: the game function (tests; default :func:`mas_agents.graphs.wis.session.play_game`).

    Raises:
        ValueError: a bad pool, ``others`` or ``limit`` (named as ``mas reproduce`` spells it).
    """

    PAPER = PAPER

    pool: tuple[str, ...]
    others: str | None = None
    limit: int | None = None
    seed: int = 0
    lang: str = LANG
    play: Callable | None = field(default=None, metadata=NOT_RECORDED)

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "pool", tuple(parse_pool(self.pool)))
        if self.others is not None:
            others = self.others.strip()
            parse_pool(others)
            if "," in others:
                raise ValueError(f"--others {others!r}: give one model for the other seats of the experiments")
            object.__setattr__(self, "others", others)
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"--limit {self.limit}: must be >= 1")

    @classmethod
    def from_options(cls, *, data_root: Path, out: Path, model: Any, others: str | None = None,
                     limit: int | None = None, seed: int = 0, options: Mapping[str, Any] | None = None) -> "WisRun":
        """``--model`` is the pool; WiS has no option of its own (:meth:`PaperRun.from_options`)."""
        check_options(PAPER, options or {})
        return cls(data_root=data_root, out=out, pool=model, others=others, limit=limit, seed=seed)

    def as_options(self) -> dict[str, Any]:
        return {"model": ",".join(self.pool), "others": self.others, "limit": self.limit, "seed": self.seed,
                "options": {}}

    def settings(self) -> dict[str, Any]:
        """What ``config.json`` holds besides ``kind``/``paper``/``versions``: the recorded fields
        and ``models`` (every seat's model, :mod:`mas_agents.game.record`)."""
        return {**self.record(),
                "models": sorted(set(self.pool) | ({self.others} if self.others else set()))}


def check_out(config: WisRun) -> dict:
    """Check that ``config.out`` may hold this run, writing and running nothing: what
    :func:`reproduce` checks first, callable before a costly step (the CLI's estimate, ``mas
    reproduce all``'s other parts).

    Returns:
        The settings compared with ``out/config.json`` (:meth:`WisRun.settings`). Every one must
        match: another ``limit`` plays other games per arm.

    Raises:
        ValueError: ``out`` holding a run with other settings
            (:class:`mas_agents.rundir.RunConflict`, names config.json).
    """
    settings = config.settings()
    check_same_run(config.out, {"kind": "reproduce", "paper": PAPER, **settings})
    return settings


def reproduce(config: WisRun) -> dict:
    """Play (or resume) the WiS protocol under ``config.out`` and write ``report.md`` / ``result.json``.

    Args:
        config: the run (:class:`WisRun`); its ``data_root`` holds ``whoisspy/pairs_en.jsonl``;
            rerunning with the same settings reuses finished games.

    Returns:
        ``result.json``'s dict (``main``, ``experiments``, ``checks``, ``partial``...).

    Raises:
        ValueError: ``out`` holding a run with other settings.
        FileNotFoundError: the word pairs are missing.
    """
    settings = check_out(config)
    pool, others, limit, seed = list(config.pool), config.others, config.limit, config.seed
    data_root, out, play, estimate = config.data_root, config.out, config.play, config.estimate
    out.mkdir(parents=True, exist_ok=True)
    if not RunDir(out).has_config():
        RunDir(out).write_config({"kind": "reproduce", "paper": PAPER, **settings})
    if estimate is not None:   # the estimate made before the run, kept for a resumed run's report
        save_estimate(out, estimate)
    pairs = load_pairs(data_root, LANG)
    labels = pool_labels(pool)
    spec_of = dict(zip(labels, (agent_spec(m) for m in pool)))
    k = len(pool)
    n_full, g_full = full_games(k), EXPERIMENT_GAMES
    n_main = min(limit, n_full) if limit else n_full
    g_exp = min(limit, g_full) if limit else g_full
    subjects = list(dict.fromkeys(pool))
    # the rule of every WiS command: no limit when a seat plays on the embedded model, else 10 s
    speak_timeout = wis_session.speak_limit([agent_spec(m) for m in pool + ([others] if others else [])], "local")
    db = out / "wis.sqlite"

    total = n_main + len(subjects) * len(EXPERIMENTS) * 2 * g_exp
    progress = Progress(total, config.tick, PAPER)

    def ticker(games_dir: Path, what: str) -> Callable[[int], None]:
        before = {p.parent.name for p in games_dir.glob(f"g*/{RESULT_FILE}")} if games_dir.exists() else set()

        def t(index: int) -> None:
            name = f"g{index:04d}"
            calls = 0
            if name not in before:
                try:
                    calls = json.loads(RunDir(games_dir / name).result.read_text(encoding="utf-8"))["llm"]["calls"]
                except (OSError, KeyError, ValueError):
                    calls = 0
            progress.done(f"{what} game {index + 1}", calls)
        return t

    # -- main experiment (Table 2)
    plan = main_plan(labels, n_main, pairs, seed)
    run_plan = [dict(g, agents=[spec_of[lb] for lb in g["labels"]]) for g in plan]
    res = run_tournament(TournamentConfig(agents=[spec_of[lb] for lb in labels], games=n_main, pairs=pairs,
                                          players=PLAYERS, lang=LANG, model="local", seed=seed,
                                          speak_timeout=speak_timeout, db=db, out=out / "main", games_plan=run_plan),
                         play=play, tick=ticker(out / "main" / "games", "main"))
    board = Leaderboard(db)
    main_games = relabel(board.games(res["id"]), plan)
    metrics = agent_metrics(main_games)
    seat_counts = Counter(p["agent"] for g in main_games for p in g["players"])
    spy_counts = Counter(p["agent"] for g in main_games for p in g["players"] if p["role"] == "spy")
    seats_possible, spy_possible, balance = balance_note(k, n_main, plan)
    per_model = []
    for lb in labels:
        est = model_estimates(main_games, lb, seed=seed)
        est["own_word_fouls"] = sum(1 for g in main_games for r in g["rounds"] for d in r["descriptions"]
                                    if d.get("foul") == "own_word"
                                    and next(p for p in g["players"] if p["name"] == d["player"])["agent"] == lb)
        per_model.append(est)

    # -- experiments (Tables 3 and 4)
    experiments = []
    all_games = list(main_games)
    for mdl in subjects:
        subject, other = agent_spec(mdl), agent_spec(others or mdl)
        for kind in EXPERIMENTS:
            d = out / f"exp-{kind}-{subjects.index(mdl) + 1}"
            r = run_experiment(ExperimentConfig(experiment=kind, subject=subject, others=other, games=g_exp,
                                                data_root=data_root, players=PLAYERS, lang=LANG, model="local",
                                                seed=seed, speak_timeout=speak_timeout, db=db, out=d),
                               play=play, tick=_arm_ticker(d, kind, progress, g_exp))
            arms = []
            for row in r["rows"]:
                xplan = schedule([row["spec"], other], g_exp, PLAYERS, pairs=pairs, seed=seed,
                                 spy_agent=row["spec"] if kind in ("attack", "defense") else None,
                                 civilians_only=row["spec"] if kind == "reasoning" else None)
                games = board.games(row["tournament"])
                all_games += games
                arms.append(arm_estimates(row, games, xplan, seed))
            experiments.append({"kind": kind, "model": mdl, "subject": subject, "others": other, "games": g_exp,
                                "arms": arms})

    all_games = list({g["game_id"]: g for g in all_games}.values())   # the shared baseline arm once
    run_checks = checks(all_games)
    main_only = [dict(c, check=c["check"] + " (main experiment)")
                 for c in checks(main_games, seat_counts=seat_counts, labels=labels, metrics=metrics,
                                 can_balance=seats_possible)[len(run_checks):]]
    tables = {n: load_table(n) for n in ("wis_table1_prompts", "wis_table2", "wis_table3", "wis_table4")}
    # attack and defense share their baseline arm (same seating, words and seeds); with a one-model
    # pool and no --others, that arm is also the main experiment's seating, and its games are reused
    planned_full = n_full + len(subjects) * 5 * g_full
    played = len(all_games)
    calls = sum(int((g.get("llm") or {}).get("calls", 0)) for g in all_games)
    result = {
        "pool": pool, "labels": labels, "others": others, "limit": limit, "seed": seed, "partial": limit is not None,
        "speak_timeout": speak_timeout, "main": {"games": len(main_games), "planned_full": n_full, "tournament": res["id"],
                                                 "seats": dict(seat_counts), "spy_seats": dict(spy_counts),
                                                 "balance": balance, "models": per_model,
                                                 "leaderboard": [{k2: m[k2] for k2 in ("agent", "rank_score", "avg_score", "games")}
                                                                 for m in metrics]},
        "experiments": experiments, "checks": run_checks + main_only,
        "paper_checks": paper_checks(tables["wis_table2"]),
        "games_played": played, "games_planned_full": planned_full, "llm_calls": calls,
    }
    if estimate is not None:
        result["estimate_vs_actual"] = versus_actual(estimate, {k: sum(int((g.get("llm") or {}).get(k) or 0)
                                                                       for g in all_games)
                                                                for k in ("calls", "input_tokens", "output_tokens")})
    result["headline"] = headline(result)
    markdown = report_markdown(result, tables, main_games)
    write_report(out, paper=PAPER, config=settings, result=result, markdown=markdown)
    return {"kind": "reproduce", "paper": PAPER, **result}



def _arm_ticker(d: Path, kind: str, progress: Progress, games: int) -> Callable[[int], None]:
    """Progress for run_experiment: its tick gets the game index of the baseline arm, then of the
    strategy arm; the n-th call belongs to arm ``n // games``."""
    seen = {"n": 0}
    arms = ("baseline", kind)
    before = {str(p) for p in d.glob(f"*/games/g*/{RESULT_FILE}")} if d.exists() else set()

    def t(index: int) -> None:
        arm = arms[min(seen["n"] // games, 1)]
        seen["n"] += 1
        path = RunDir(d / arm / "games" / f"g{index:04d}").result
        calls = 0
        if str(path) not in before and path.exists():
            try:
                calls = json.loads(path.read_text(encoding="utf-8"))["llm"]["calls"]
            except (OSError, KeyError, ValueError):
                calls = 0
        progress.done(f"{kind} {arm} game {index + 1}", calls)
    return t

