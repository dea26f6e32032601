"""Re-score a run from its events, without a model (``mas rerun --rescore``, issue 50 item 3).

Every number of a run is a function of its ``events.jsonl`` (and the game's facts the events
carry). :func:`rescore_run` reads the events of each game (or of a MAgIC bench), checks their
format version (``config.json``'s ``events_format``, :data:`mas_agents.events.EVENTS_FORMAT`;
a run written before the field existed has format 1), recomputes the scores with the games'
own rules and the metric modules of this version, and compares them with the run's
``result.json``:

* Who is Spy (``wis``): the rounds, eliminations, scores (``graphs.wis.rules.game_scores``) and
  outcome, from the ``describe`` / ``foul`` / ``vote_result`` events
  (:func:`eval.reports.wis_replay.record_from_events`);
* the murder mystery (``mmg``): each victim's accusation from the ballots
  (``graphs.mmg.rules.victim_outcome`` with the murderers its ``accuse`` event names), the
  game's outcome, the action counts and the invalid actions;
* a MAgIC bench (``magic-bench``, ``mas magic run``): the capability metrics, win rate, per-scenario
  values, components and counts (:func:`eval.metrics.magic.scenario_metrics`);
* any other game: the events are read and their format checked; there is no re-scorer for it yet
  (said in the outcome, never counted as equal).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from mas_agents.events import EVENTS_FORMAT, read_events
from mas_agents.rundir import read_json

__all__ = ["EventsFormatError", "Rescored", "events_format", "rescore_run", "RESCORERS"]

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
    """

    run: Path
    kind: str
    same: bool
    checked: tuple[str, ...] = ()
    detail: str = ""

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


def _wis(events: list[dict], config: dict, result: dict) -> dict[str, tuple[Any, Any]]:
    """Who is Spy re-scored (see the module text): ``{field: (recomputed, stored)}``."""
    from eval.reports.wis_replay import record_from_events
    from graphs.wis import rules
    rec = record_from_events(events, config)
    roles = {p["name"]: p["role"] for p in rec["players"]}
    spy = next(p for p, r in roles.items() if r == "spy")
    eliminated = rec["eliminated"]
    alive = [p for p in roles if p not in eliminated]
    spy_round = eliminated.get(spy, {}).get("round")
    votes = [r["votes"] for r in rec["rounds"]]
    scores = rules.game_scores(roles, spy_round, alive, votes)
    outcome = {"winner": "civilians" if spy_round else "spy", "spy": spy, "spy_eliminated_round": spy_round}
    keep = ("round", "fouled", "votes", "voted_out", "alive_after")
    return {"eliminated": (eliminated, result.get("eliminated")),
            "scores": (scores, result.get("scores")),
            "outcome": (outcome, {k: (result.get("outcome") or {}).get(k) for k in outcome}),
            "rounds": ([{k: r[k] for k in keep} for r in rec["rounds"]],
                       [{k: r.get(k) for k in keep} for r in result.get("rounds") or []])}


def _mmg(events: list[dict], config: dict, result: dict) -> dict[str, tuple[Any, Any]]:
    """The murder mystery re-scored (see the module text)."""
    from graphs.mmg import rules
    ballots: dict[str, dict[str, Any]] = {}
    for e in events:
        if e.get("phase") == "voting" and e.get("kind") in ("vote", "invalid") and "victim" in (e.get("data") or {}):
            ballots.setdefault(e["data"]["victim"], {})[e["actor"]] = e["data"].get("choice")
    per_victim = [rules.victim_outcome(e["data"]["victim"], ballots.get(e["data"]["victim"], {}), e["data"]["murderers"])
                  for e in events if e.get("kind") == "accuse"]
    counts = {k: sum(1 for e in events if e.get("kind") == k) for k in ("introduce", "ask", "answer", "vote")}
    return {"outcome": (rules.game_outcome(per_victim), result.get("outcome")),
            "counts": (counts, result.get("counts")),
            "invalid_actions": (sum(1 for e in events if e.get("kind") == "invalid"), result.get("invalid_actions"))}


def _magic_bench(run: Path, result: dict) -> dict[str, tuple[Any, Any]]:
    """A MAgIC bench re-scored from its games' events."""
    from eval.metrics.magic import load_games, scenario_metrics
    m = scenario_metrics(load_games(run))
    metrics = {k: m[k] for k in (result.get("metrics") or {})}
    return {"metrics": (metrics, result.get("metrics")), "per_scenario": (m["per_scenario"], result.get("per_scenario")),
            "components": (m["components"], result.get("components")), "counts": (m["counts"], result.get("counts"))}


#: Re-scorers of single games by run kind: ``(events, config, result) -> {field: (now, stored)}``.
RESCORERS: dict[str, Callable[[list, dict, dict], dict]] = {"wis": _wis, "mmg": _mmg}


def _one(d: Path) -> Rescored:
    config = read_json(d / "config.json")
    kind = str(config.get("kind"))
    events_format(config, d)
    if not (d / "result.json").is_file():
        return Rescored(d, kind, False, detail="no result.json (an unfinished run): nothing to compare with")
    result = read_json(d / "result.json")
    if kind == "magic-bench":
        checked = _magic_bench(d, result)
    else:
        events = read_events(d / "events.jsonl")
        fn = RESCORERS.get(kind)
        if fn is None:
            return Rescored(d, kind, False, detail=f"{len(events)} events read (format {config.get('events_format', 1)}); "
                                                   f"no re-scorer for run kind {kind!r} in this version")
        checked = fn(events, config, result)
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
    from eval.games import find
    run = Path(run)
    benches, games = [], []
    for cfg_path in sorted([run / "config.json", *run.rglob("*/config.json")]):
        if not cfg_path.is_file():
            continue
        d, kind = cfg_path.parent, read_json(cfg_path).get("kind")
        if kind == "magic-bench":
            benches.append(d)
        elif find(kind) is not None:
            games.append(d)
    for b in benches:
        for g in sorted((b / "games").glob("*/config.json")):
            events_format(read_json(g), g.parent)
    games = [g for g in games if not any(b in g.parents for b in benches)]
    if not benches and not games:
        raise ValueError(f"{run}: no game's run directory or MAgIC bench to re-score")
    return [_one(d) for d in sorted(benches + games)]
