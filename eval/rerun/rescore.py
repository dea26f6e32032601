"""Re-score a run from its events, without a model (``mas rerun --rescore``, issue 50 item 3).

Every number of a run is a function of its ``events.jsonl`` (and the game's facts the events
carry). :func:`rescore_run` reads the events of each game (or of a MAgIC bench), checks their
format version (``config.json``'s ``events_format``, :data:`mas_agents.events.EVENTS_FORMAT`;
a run written before the field existed has format 1), recomputes the scores with the games'
own rules and the metric modules of this version, and compares them with the run's
``result.json``:

Each game re-scores itself: the ``rescore`` hook of its registration
(:attr:`mas_agents.game.contract.GameDef.conformance`, :class:`mas_agents.game.conformance.Conformance`), the same the
conformance kit checks. The built-in games' hooks:

* Who is Spy (``wis``, :func:`mas_agents.graphs.wis.checks.rescore`): the rounds, eliminations, scores (``mas_agents.graphs.wis.rules.game_scores``) and
  outcome, from the ``describe`` / ``foul`` / ``vote_result`` events
  (:func:`mas_agents.graphs.wis.record.record_from_events`);
* the murder mystery (``mmg``, :func:`mas_agents.graphs.mmg.checks.rescore`): each victim's accusation from the ballots
  (``mas_agents.graphs.mmg.rules.victim_outcome`` with the murderers its ``accuse`` event names), the
  game's outcome, the action counts and the invalid actions;
* a MAgIC bench (``magic-bench``, ``mas magic run``): the capability metrics, win rate, per-scenario
  values, components and counts (:func:`mas_agents.graphs.magic.metrics.scenario_metrics`);
* a single MAgIC game (``magic``, :func:`mas_agents.graphs.magic.checks.rescore`): its outcome and invalid
  actions;
* a game registered without ``conformance``: the events are read and their format checked; no
  re-scorer (said in the outcome, never counted as equal).

A log a game's re-scorer cannot read (an event or field missing, a rule broken: ``KeyError``,
``StopIteration``, :class:`mas_agents.game.conformance.Violation`...) is a difference, named in the outcome.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mas_agents.events import EVENTS_FORMAT, read_events
from mas_agents.rundir import CONFIG_FILE, RunDir, read_json

__all__ = ["EventsFormatError", "Rescored", "events_format", "rescore_run"]

#: The events formats this version reads.
READS = (1,)


class EventsFormatError(ValueError):
    """A run's events are in a format this version does not read (the message names the run,
    its format and the formats read)."""


@dataclass
class Rescored:
    """The re-scoring of one game or bench.

    Attributes:
        run: its directory; kind: its run kind.
        same: the recomputed values equal ``result.json``'s (False also when no re-scorer).
        checked: the ``result.json`` fields recomputed.
        detail: what differs, or why nothing was recomputed.
        rescorer: False when the game declares no re-scorer (nothing could be compared:
            ``mas rerun --rescore`` exits 2, not 1).
    """

    run: Path
    kind: str
    same: bool
    checked: tuple[str, ...] = ()
    detail: str = ""
    rescorer: bool = True

    def text(self) -> str:
        if self.same:
            return f"{self.run}: re-scored from events.jsonl: {', '.join(self.checked)} equal result.json"
        return f"{self.run}: {self.detail}"


def events_format(config: dict, where: Path) -> int:
    """The events format of a run (``config.json``'s ``events_format``, else 1).

    Raises:
        EventsFormatError: a format not in :data:`READS`.
    """
    v = config.get("events_format", 1)
    if v not in READS:
        raise EventsFormatError(f"{where}: events format {v!r}; this version of mas-agents reads format "
                                f"{', '.join(map(str, READS))} (format {EVENTS_FORMAT} is written now): "
                                f"re-score it with the version that wrote it")
    return v


def _first_diff(checked: dict[str, tuple[Any, Any]]) -> str | None:
    for name, (now, stored) in checked.items():
        if json.loads(json.dumps(now, default=str)) != json.loads(json.dumps(stored, default=str)):
            s = json.dumps(stored, default=str, ensure_ascii=False)[:200]
            n = json.dumps(now, default=str, ensure_ascii=False)[:200]
            return f"{name}: result.json has {s}, the events give {n}"
    return None


def _magic_bench(run: Path, result: dict) -> dict[str, tuple[Any, Any]]:
    """A MAgIC bench re-scored from its games' events."""
    from mas_agents.graphs.magic.metrics import load_games, scenario_metrics
    m = scenario_metrics(load_games(run))
    # what the result.json recorded: a metric or count added since (coordination_emnlp, pg_forced)
    # is not in an older run's file, and is no difference; a changed definition shows in the metrics
    metrics = {k: m[k] for k in (result.get("metrics") or {})}
    stored = result.get("counts")
    counts = {k: v for k, v in m["counts"].items() if k in stored} if isinstance(stored, dict) else m["counts"]
    return {"metrics": (metrics, result.get("metrics")), "per_scenario": (m["per_scenario"], result.get("per_scenario")),
            "components": (m["components"], result.get("components")), "counts": (counts, stored)}


#: What a game's re-scorer raises on a log without the shape its rules give (an event or a
#: field missing, a wrong type): reported as a difference, never a traceback.
MALFORMED = (StopIteration, KeyError, IndexError, TypeError, AttributeError)


def _one(d: Path) -> Rescored:
    from mas_agents.game.conformance import Violation
    from mas_agents.game.contract import find
    config = RunDir(d).read_config()
    kind = str(config.get("kind"))
    events_format(config, d)
    if not RunDir(d).result.is_file():
        return Rescored(d, kind, False, detail="no result.json (an unfinished run): nothing to compare with")
    result = RunDir(d).read_result()
    try:
        if kind == "magic-bench":
            checked = _magic_bench(d, result)
        else:
            events = read_events(RunDir(d).events)
            game = find(kind)
            hook = game.conformance.rescore if game is not None and game.conformance is not None else None
            if hook is None:
                return Rescored(d, kind, False, rescorer=False,
                                detail=f"{len(events)} events read (format {config.get('events_format', 1)}); "
                                       f"the game {kind!r} declares no re-scorer (GameDef.conformance)")
            checked = hook(config, events, result)
    except Violation as exc:
        return Rescored(d, kind, False, detail=f"the events break a rule of the game: {exc}")
    except MALFORMED as exc:
        return Rescored(d, kind, False, detail=f"the events do not have the shape the game's re-scorer reads: "
                                               f"{type(exc).__name__}: {exc}")
    diff = _first_diff(checked)
    return Rescored(d, kind, diff is None, tuple(checked), diff or "")


def rescore_run(run: Path) -> list[Rescored]:
    """Re-score ``run``: a game, a MAgIC bench, or every game and MAgIC bench below an experiment
    run (a MAgIC game inside a bench is re-scored with its bench).

    Raises:
        EventsFormatError: a game's events are in a format this version does not read.
        FileNotFoundError, ValueError: ``config.json`` or ``events.jsonl`` missing or corrupt;
            nothing below ``run`` to re-score.
    """
    from mas_agents.game.contract import find
    run = Path(run)
    benches, games = [], []
    for cfg_path in sorted([RunDir(run).config, *run.rglob(f"*/{CONFIG_FILE}")]):
        if not cfg_path.is_file():
            continue
        d, kind = cfg_path.parent, read_json(cfg_path).get("kind")
        if kind == "magic-bench":
            benches.append(d)
        elif find(kind) is not None:
            games.append(d)
    for b in benches:
        for g in sorted((b / "games").glob(f"*/{CONFIG_FILE}")):
            events_format(read_json(g), g.parent)
    games = [g for g in games if not any(b in g.parents for b in benches)]
    if not benches and not games:
        raise ValueError(f"{run}: no game's run directory or MAgIC bench to re-score")
    return [_one(d) for d in sorted(benches + games)]
