"""``mas magic run``: a challenger against a fixed defender on the MAgIC settings (MAgIC §3.2, A.1).

Plan: for each scenario and setting id, one game per challenger side (chameleon and
non-chameleon; undercover and civilian; the test seat in the other three). Games go to
``<out>/games/<scenario>-<side>-s<id>/``; a game with a ``result.json`` is finished and is skipped
when the same command is rerun. Metrics (:mod:`mas_agents.graphs.magic.metrics`) are computed from the games'
``events.jsonl`` only. Writes ``result.json`` (the eight numbers, Coordination also with the EMNLP
denominator, per-scenario win rates, counts, cost), ``report.md`` (our row beside the paper's Table 1 rows) and ``radar.png``. The run is
configured by :class:`MagicBenchConfig` (:mod:`mas_agents.game.run_config`). The report and
the chart are drawn by :mod:`mas_agents.graphs.magic.bench_report` (``paper_rows``, ``report_md``
and ``radar_chart``). Every import of our own packages is at module level.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable

from mas_agents.prompt_log import record_prompts
from mas_agents.cells import default_concurrency, run_cells
from mas_agents.game.data import data_files, merge_data_files
from mas_agents.graphs.magic.dataset import load_settings, parse_range, setting_ids
from mas_agents.graphs.magic.metrics import METRIC_KEYS, scenario_metrics
from mas_agents.graphs.magic.bench_report import paper_rows, radar_chart, report_md
from mas_agents.graphs.magic.session import SIDES, MagicGameConfig, play_magic_game
from mas_agents.game.record import check_same_run, model_fields, seat_model
from mas_agents.game.run_config import NOT_RECORDED, RunConfig
from mas_agents.stats import Estimate, bootstrap_mean, bootstrap_units, clip, wilson
from mas_agents.events import read_events
from mas_agents.graphs.magic.events import SCENARIOS
from mas_agents.remote.usage import auto_concurrency
from mas_agents.rundir import RunDir, marks_run, versions
from mas_agents.specs import split_model

#: ``config.json``'s ``kind`` of a ``mas magic run`` run directory.
KIND = "magic-bench"


def parse_scenarios(text: str) -> list[str]:
    """``all`` or a comma-separated list of scenario names.

    Raises:
        ValueError: an unknown scenario.
    """
    if text.strip() == "all":
        return list(SCENARIOS)
    out = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in out if s not in SCENARIOS]
    if bad or not out:
        raise ValueError(f"--scenario: unknown {', '.join(bad) or '(empty)'}; expected all or one of {', '.join(SCENARIOS)}")
    return out


def game_label(line: str) -> str:
    """A finished game's progress label (``run_magic``'s ``tick``: ``"chameleon non_chameleon
    s3"``, scenario, challenger side, setting id) in words, for the lines a person reads:
    ``"Chameleon as non-chameleon, setting 3"``, ``"Cost Sharing, setting 0"``. A label of
    another shape is returned as it is."""
    from mas_agents.graphs.magic.bench_report import NAMES, SIDE_NAMES
    parts = line.split(" ")
    if len(parts) != 3 or not parts[2][1:].isdigit():
        return line
    scenario, side, sid = parts
    side_text = "" if side == "test_seat" else " " + (SIDE_NAMES.get(side) or NAMES.get(side) or side.replace("_", " "))
    return f"{NAMES.get(scenario, scenario.replace('_', ' '))}{side_text}, setting {int(sid[1:])}"


def plan(data_root: Path, scenarios: list[str], settings: str | None) -> list[tuple[str, Any, str]]:
    """``[(scenario, setting, side), ...]`` for the given settings range (default: all of each)."""
    games = []
    for sc in scenarios:
        ids = parse_range(settings, sc) if settings else setting_ids(sc)
        for st in load_settings(data_root, sc, ids):
            for side in SIDES[sc]:
                games.append((sc, st, side))
    return games


def union_settings(a: str | None, b: str | None) -> str | None:
    """The settings of two runs into one directory: None (all of each scenario) when either is
    None, else both id lists joined (:func:`mas_agents.graphs.magic.dataset.parse_range` syntax, parts not
    repeated): ``union_settings("0-1", "3") == "0-1,3"``."""
    if a is None or b is None:
        return None
    parts: list[str] = []
    for p in f"{a},{b}".replace(" ", "").split(","):
        if p and p not in parts:
            parts.append(p)
    return ",".join(parts)


def finished_games(out: Path, scenarios: list[str], settings: str | None) -> list[Path]:
    """The game directories under ``out`` of ``scenarios`` x ``settings`` (None: all of each; ids
    a scenario does not have are passed over) x each side that hold a ``result.json``."""
    found = []
    for sc in scenarios:
        have = setting_ids(sc)
        ids = [i for i in parse_range(settings) if i in have] if settings else have
        found += [d for i in ids for side in SIDES[sc]
                  if RunDir(d := game_dir(out, sc, side, i)).has_result()]
    return found


def game_dir(out: Path, scenario: str, side: str, setting_id: int) -> Path:
    return out / "games" / f"{scenario}-{side}-s{setting_id:02d}"


@dataclasses.dataclass(frozen=True, kw_only=True)
class MagicBenchConfig(RunConfig):
    """A ``mas magic run`` (:func:`run_magic`).

    Recorded (``<out>/config.json`` holds ``kind``, ``challenger``, ``defender``, then the models
    the seats used as ``model``, then ``replay_openings``, ``seed``, ``temperature``, the other
    model fields, ``scenarios`` and ``settings``: those of every run into ``out``, see
    :func:`run_magic`; then ``data_files``, the setting files of all those games,
    :func:`mas_agents.game.data.merge_data_files`):

    Attributes:
        challenger, defender: agent specs ``BLOCKS[@MODEL]``.
        replay_openings: defenders seated before the challenger replay the setting's recorded round-1 clues.
        seed: sampling seed of the models built from spec strings.
        temperature: sampling temperature of every seat's model built from a spec string (MAgIC
            §4 runs every agent at 0); None keeps the model's default.
        scenarios: the scenarios to play (:func:`parse_scenarios`; a list is kept as a tuple).
        settings: setting ids (:func:`mas_agents.graphs.magic.dataset.parse_range` syntax); None: all.

    Not recorded:
        data_root: datasets root (holds ``magic/``).
        out: the run directory.
        model: default model spec (or a chat model in tests); recorded as ``default_model``.
        concurrency: games at once on the configured executor (:func:`mas_agents.cells.run_cells`:
            threads, or Ray tasks in flight); None = ``--max-connections`` when every seat's model
            is remote, else 1.
    """

    KIND = KIND
    challenger: str
    defender: str
    replay_openings: bool = False
    seed: int = 0
    temperature: float | None = None
    scenarios: tuple[str, ...]
    settings: str | None = None
    data_root: Path = dataclasses.field(metadata=NOT_RECORDED)
    out: Path = dataclasses.field(metadata=NOT_RECORDED)
    model: Any = dataclasses.field(default="local", metadata=NOT_RECORDED)
    concurrency: int | None = dataclasses.field(default=None, metadata=NOT_RECORDED)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scenarios", tuple(self.scenarios))
        object.__setattr__(self, "out", Path(self.out))


@marks_run
def run_magic(config: MagicBenchConfig, *, tick: Callable[[str], None] | None = None,
              play: Callable[[Path, MagicGameConfig], dict] | None = None) -> dict:
    """Play (or finish) every planned game of ``config`` and write the reports; returns ``result.json``.

    ``config.json`` records the models the seats used (``models``: the challenger's and the
    defender's, :mod:`mas_agents.game.record`) beside the ``--model`` default (``default_model``).
    ``tick`` is called with ``"<scenario> <side> s<id>"`` as each game finishes; ``play`` plays one
    game (default :func:`mas_agents.graphs.magic.session.play_magic_game`).

    Raises:
        ValueError: bad scenario/settings.
        RunConflict: ``out`` holds a run of another configuration (another challenger, defender,
            models, replay setting, seed or temperature; more scenarios or settings extend it),
            before anything is written (:func:`mas_agents.game.record.check_same_run`).
    """
    play = play or play_magic_game
    out, model, data_root = config.out, config.model, config.data_root
    challenger, defender, scenarios, settings = config.challenger, config.defender, list(config.scenarios), config.settings
    out.mkdir(parents=True, exist_ok=True)
    used = model_fields([seat_model(a, model) for a in (challenger, defender)], model)
    cfg = {"challenger": challenger, "defender": defender, "model": used.pop("model"),
           "replay_openings": config.replay_openings, "seed": config.seed, "temperature": config.temperature, **used}
    # more scenarios or settings extend the run (finished games are reused); nothing else may differ
    stored = check_same_run(out, {"kind": KIND, **cfg, "scenarios": scenarios, "settings": settings},
                            may_differ=("scenarios", "settings"))
    games = plan(data_root, scenarios, settings)
    # an extending rerun adds to the record: config.json names the scenarios and settings of every
    # run into ``out`` (the union; None = all settings), the result counts every finished game there
    held_scenarios, held_settings = scenarios, settings
    if stored:
        held = MagicBenchConfig.from_record({**stored, "scenarios": stored.get("scenarios") or []},
                                           data_root=data_root, out=out)
        held_scenarios = [s for s in SCENARIOS if s in set(scenarios) | set(held.scenarios)]
        held_settings = union_settings(held.settings, settings)
    # the setting files of every game: those planned now and those an earlier run into ``out`` recorded
    files = merge_data_files((stored or {}).get("data_files"), data_files([st for _, st, _ in games]))
    RunDir(out).write_config({"kind": KIND, **cfg, "scenarios": held_scenarios, "settings": held_settings,
                                     **({"data_files": files} if files else {}),
                                     "record_prompts": record_prompts(), "versions": versions()})

    def rel(g) -> str:
        sc, st, side = g
        return game_dir(Path(), sc, side, st.id).as_posix()

    def finished(g, root: Path = out) -> bool:
        return RunDir(root / rel(g)).has_result()

    def one(g, root: Path):
        sc, st, side = g
        d = root / rel(g)
        if finished(g, root):
            return rel(g), True
        play(d, MagicGameConfig(scenario=sc, setting=st, side=side, challenger=challenger, defender=defender,
                                model=model, seed=config.seed, replay_openings=config.replay_openings,
                                temperature=config.temperature))
        return rel(g), False

    seat_models = [split_model(a)[1] or model for a in (challenger, defender)]
    concurrency = config.concurrency
    if concurrency is None:   # --max-connections when every seat's model is remote, else 1
        concurrency = default_concurrency(seat_models, auto_concurrency(seat_models))
    done = run_cells(games, one, root=out, rel=rel, models=seat_models, concurrency=concurrency,
                     finished=finished,
                     done=(lambda g, r: tick(f"{g[0]} {g[2]} s{g[1].id}")) if tick else None)
    # the games asked now, and those of the held scenarios and settings an earlier run into ``out``
    # finished (same configuration: check_same_run above), so that a rerun naming other scenarios
    # or settings drops none; a game directory outside them is no part of the run
    dirs = sorted({out / r for r, _ in done} | set(finished_games(out, held_scenarios, held_settings)))
    logs = [read_events(RunDir(d).events) for d in dirs]
    m = scenario_metrics(logs)
    results = [RunDir(d).read_result() for d in dirs]
    cost = {"games": len(results), "calls": sum(r["llm"]["calls"] for r in results),
            "input_tokens": sum(r["llm"]["input_tokens"] for r in results),
            "output_tokens": sum(r["llm"]["output_tokens"] for r in results),
            "wall_s": round(sum(r["wall_time_s"] for r in results), 1),
            "invalid_actions": sum(r["invalid_actions"] for r in results),
            "model_actions": sum(r["model_actions"] for r in results)}
    result = {**cfg, "scenarios": held_scenarios, "settings": held_settings,
              "metrics": {k: m[k] for k in METRIC_KEYS},
              "intervals": intervals(m, dirs, logs),
              "per_scenario": m["per_scenario"], "per_scenario_intervals": per_scenario_intervals(logs),
              "components": m["components"], "counts": m["counts"],
              "cost": cost, "reused_games": len(dirs) - sum(1 for _, r in done if not r), "games": [str(d.name) for d in dirs]}
    RunDir(out).write_result(result)
    radar_chart(result["metrics"], out / "radar.png", title=f"{challenger} vs {defender}")
    RunDir(out).write_report(report_md(result, paper_rows(data_root)))
    return result


# The proportions among the metrics: metric -> (numerator, denominator) from ``counts``.
PROPORTIONS = {
    "judgement": (("correct_votes",), ("votes",)),
    "reasoning": (("gold_hits", "inter_hits"), ("gold_questions", "inter_questions")),
    "self_awareness": (("self_awareness_correct",), ("self_awareness_answers",)),
    "cooperation": (("agreed",), ("games", "cost_sharing")),
    "coordination": (("coordinated",), ("agreed",)),
    "coordination_emnlp": (("coordinated",), ("games", "cost_sharing")),
    "rationality": (("pd_defections", "pg_minimal"), ("pd_choices", "pg_contributions")),
}


def _count(counts: dict, keys: tuple) -> int:
    if keys == ("games", "cost_sharing"):
        return int(counts["games"]["cost_sharing"])
    return int(sum(counts[k] for k in keys))


def per_scenario_intervals(logs: list) -> dict[str, Any]:
    """Each scenario's challenger credit / win rate (``per_scenario`` of
    :func:`mas_agents.graphs.magic.metrics.scenario_metrics`) with a percentile-bootstrap 95 % interval over the
    games (``mas_agents.stats.bootstrap_mean``; one game's value is ``per_scenario`` of that game alone,
    so the mean over games equals the pooled value when every game of a side weighs the same).
    Shape: ``{"chameleon": {"chameleon": Estimate dict, ...}, "cost_sharing": Estimate dict, ...}``;
    a side or scenario with no game is left out."""
    values: dict[tuple, list[float]] = {}
    for log in logs:
        one = scenario_metrics([log])["per_scenario"]
        for k, v in one.items():
            for kk, vv in (v.items() if isinstance(v, dict) else [(None, v)]):
                if vv is not None:
                    values.setdefault((k, kk), []).append(float(vv))
    out: dict[str, Any] = {}
    for (k, kk), vals in values.items():
        est = bootstrap_mean(vals).to_dict()
        if kk is None:
            out[k] = est
        else:
            out.setdefault(k, {})[kk] = est
    return out


def intervals(m: dict, dirs: list[Path], logs: list) -> dict[str, dict]:
    """95 % interval and n of every metric (:meth:`mas_agents.stats.Estimate.to_dict`).

    The seven proportions (judgement, reasoning, self-awareness, cooperation, coordination with
    each of its two denominators, rationality) get the Wilson score interval over their counts
    (n = votes, questions, answers, Cost Sharing games, agreed games or decisions;
    :func:`mas_agents.stats.wilson`). Win rate (a mean of seven parts) and Deception
    (a rate plus 0.25 × a rate, range [0, 1.25]) are not proportions: they get a percentile
    bootstrap over setting ids (n = settings; every game of a setting id is drawn together,
    :func:`mas_agents.stats.bootstrap_units`), clipped to their range; one setting gives no interval.
    """
    counts = m["counts"]
    out = {}
    for k, (num, den) in PROPORTIONS.items():
        out[k] = wilson(_count(counts, num), _count(counts, den)).to_dict()
    by_setting: dict[int, list] = {}
    for d, log in zip(dirs, logs):
        by_setting.setdefault(int(d.name.rsplit("-s", 1)[1]), []).append(log)

    def metrics(units: list[list]) -> dict:
        return scenario_metrics([g for games in units for g in games])

    boot = bootstrap_units(by_setting, metrics, ("win_rate", "deception"), n_boot=1000, seed=0, unit="settings")
    for k, top in (("win_rate", 1.0), ("deception", 1.25)):
        e = boot[k]["estimate"]
        out[k] = clip(Estimate(**{f: e[f] for f in ("mean", "low", "high", "n", "level", "method")}), 0.0, top).to_dict()
    return out
