"""Fork a recorded run at one of its events with other agents in some seats (issue 59, ``mas fork``).

:func:`fork` plays the game of ``run`` again from its ``config.json`` through the one runner
(:func:`mas_agents.game.runner.run`), as :func:`mas_agents.eval.rerun.execute.rerun` does, with
these differences:

* every model call before the fork point is answered from the run's recording (no model is
  called), every call from the fork point on by the spec's live model
  (:func:`mas_agents.game.fork.forking`): the fork's ``events.jsonl`` before the fork point is the
  run's (checked after the game: :attr:`ForkOutcome.prefix_identical`);
* each changed seat is played from the fork point on by its new agent spec, on ``model`` or the
  model the run recorded for that seat; before it, the seat's recorded agent makes its recorded
  moves, and the new agent only observes what the seat sees (the game's part:
  :data:`FORKABLE`);
* ``config.json`` records ``forked_from``: ``{"run", "at" (the event index), "seats": {seat:
  {"spec", "model"}}}``; its ``agents`` name the new specs.

Supported games: Who is Spy? (``wis``). A fork of another game is refused with one line.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from mas_agents.events import read_events
from mas_agents.game import runner as session
from mas_agents.game.conformance_kit import untimed
from mas_agents.game.contract import GameDef, get
from mas_agents.game.fork import ForkPlan, fork_index, forking, plan_fork
from mas_agents.game.human import HUMAN
from mas_agents.game.record import seat_model
from mas_agents.eval.rerun.execute import params_of
from mas_agents.replayed_model import NotReplayable, replayable
from mas_agents.rundir import RunDir
from mas_agents.specs import is_remote, parse_spec, split_model

__all__ = ["FORKABLE", "ForkOutcome", "fork", "new_spec"]

#: The games a run of which can be forked.
FORKABLE = ("wis",)


@dataclass
class ForkOutcome:
    """What :func:`fork` did.

    Attributes:
        run: the forked run; out: the fork's run directory.
        requested: the fork point asked for (an event index); at: the one used (moved back to the
            first event of a move that began before ``requested``: its private reasoning).
        seats: seat -> ``{"spec", "model"}`` of each changed seat.
        replayed: model calls answered from the recording; live: model calls made.
        prefix_identical: the fork's events before ``at`` equal the run's (clocks and call ids
            aside); detail: the first that differs, else ``""``.
        result: the fork's ``result.json``.
    """

    run: Path
    out: Path
    requested: int
    at: int
    seats: dict[str, dict[str, str]]
    replayed: int = 0
    live: int = 0
    prefix_identical: bool = True
    detail: str = ""
    result: dict = field(default_factory=dict)

    def text(self) -> str:
        """The outcome in a few lines, as ``mas fork`` prints it."""
        moved = f" (moved back from {self.requested} to the start of that move)" if self.at != self.requested else ""
        who = ", ".join(f"{s} -> {v['spec']}" for s, v in self.seats.items())
        head = (f"{self.run} forked at event {self.at}{moved} into {self.out}: {who}; "
                f"{self.replayed} calls replayed, {self.live} live")
        if not self.prefix_identical:
            head += f"\n  the events before the fork point differ from the run's: {self.detail}"
        return head


def new_spec(spec: str, model: str | None, recorded_model: str, default_model: str) -> tuple[str, str]:
    """``(the seat's spec, its model)``: ``spec`` as given when it names its ``@MODEL``; else on
    ``model``, else on the model the run recorded for the seat (written without ``@`` when that is
    the run's default model).

    Raises:
        ValueError: an unknown block, an empty model, a person's or an HTTP agent's seat.
    """
    if spec == HUMAN or is_remote(spec):
        raise ValueError(f"--agent {spec}: a fork's seat is one of our agents (BLOCKS[@MODEL]), not a person or a URL")
    blocks, at_model = split_model(spec)
    parse_spec(blocks)
    if at_model is not None:
        return spec, at_model
    m = model or recorded_model
    return (blocks if m == default_model else f"{blocks}@{m}"), m


def _first_difference(a: list[dict], b: list[dict]) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"event {i} ({x.get('kind')} by {x.get('actor')}) was {str(x)[:200]}, now {str(y)[:200]}"
    return f"{len(a)} events recorded before the fork point, {len(b)} in the fork"


def fork(run: Path, at: str | int, changes: Mapping[str, str], out: Path, *, model: str | None = None,
         data_root: Path | None = None, live: Callable[..., Any] | None = None) -> ForkOutcome:
    """Fork the game in ``run`` at event ``at`` with the seats of ``changes`` played by new agents.

    Args:
        run: a finished game's run directory (recorded with its prompts).
        at: an event index of ``events.jsonl`` (0-based) or ``round:N``
            (:func:`mas_agents.game.fork.fork_index`).
        changes: seat name -> agent spec ``BLOCKS[@MODEL]`` (at least one).
        out: the fork's run directory (must not hold a run).
        model: the live model of the changed seats whose spec names none (None: the model the
            run recorded for the seat).
        data_root: the datasets root (as :func:`mas_agents.eval.rerun.execute.params_of`).
        live: ``live(spec, **sampling) -> chat model`` for the live calls (None: the spec's own
            model, :func:`mas_agents.game.fork.build_live`).

    Returns:
        The :class:`ForkOutcome`.

    Raises:
        NotReplayable: the run cannot be replayed, or its game cannot be forked yet.
        ValueError: an unreachable fork point (the message names the last event or round), a seat
            the game does not have (the message lists its seats), a bad spec, ``out`` holds a run.
        FileNotFoundError: ``run/config.json`` or ``run/events.jsonl`` is missing.
        ReplayMismatch: a call before the fork point is not in the recording.
    """
    run, out = Path(run), Path(out)
    config = RunDir(run).read_config()
    kind = config.get("kind")
    if kind not in FORKABLE:
        raise NotReplayable(f"{run}: forking a {kind!r} run is not supported yet (supported: {', '.join(FORKABLE)})")
    if config.get("forked_from"):
        parent = config["forked_from"]
        raise NotReplayable(f"{run} is itself a fork of {parent.get('run')} (at event {parent.get('at')}): forking a "
                            f"fork is not supported yet; fork {parent.get('run')} instead")
    ok, why = replayable(run)
    if not ok:
        raise NotReplayable(f"{run} cannot be forked: {why}")
    if not changes:
        raise ValueError("give at least one --seat NAME --agent SPEC")
    events = read_events(RunDir(run).events)
    index = fork_index(events, at, run=run)
    from mas_agents.graphs.wis import fork as wis_fork
    names = wis_fork.seat_names(config)
    unknown = [s for s in changes if s not in names]
    if unknown:
        raise ValueError(f"--seat {', '.join(unknown)}: no such seat in {run}; its seats: {', '.join(names)}")
    if RunDir(out).has_config():
        raise ValueError(f"--out {out} already holds a run; choose an empty directory")
    kind, params = params_of(config, data_root)
    default_model = str(config.get("default_model") or config.get("model") or "local")
    recorded = list(config["agents"])
    now = list(recorded)
    seats: dict[str, dict[str, str]] = {}
    for seat, spec in changes.items():
        i = names.index(seat)
        rec_model = (config.get("seat_models") or {}).get(seat) or seat_model(recorded[i], default_model)
        now[i], m = new_spec(spec, model, rec_model, default_model)
        seats[seat] = {"spec": now[i], "model": m}
    plan = plan_fork(events, index, wis_fork.is_move)
    spy_seat = int(params["spy_seat"])
    roles = {s: ("spy" if i == spy_seat else "civilian") for i, s in enumerate(names)}
    forked_from = {"run": str(Path(run).resolve()), "at": plan.at, "seats": seats}
    g = _forked_game(get(kind), forked_from, lambda s: wis_fork.fork_players(
        s, recorded=recorded, now=now, roles=roles, lang=str(params.get("lang", "en")),
        speak_timeout=params.get("speak_timeout"), plan=plan))
    params["agents"] = now
    outcome = ForkOutcome(run=run, out=out, requested=index, at=plan.at, seats=seats)
    with forking(run, live) as fk:
        outcome.result = session.run(g, out, model=default_model, seed=int(config.get("seed", 0)),
                                     temperature=config.get("temperature"), **params)
        outcome.replayed, outcome.live = fk.replayed, fk.live
        mismatches = list(fk.recording.mismatches)
    _check_prefix(outcome, events, read_events(RunDir(out).events), plan)
    if mismatches and outcome.prefix_identical:
        # a call before the fork point that the recording did not hold, which the game absorbed (a
        # Who-is-Spy seat's failed call is a foul): the prefix was not replayed as recorded
        outcome.prefix_identical = False
        outcome.detail = " ".join(str(mismatches[0]).split())
    return outcome


def _forked_game(game: GameDef, forked_from: dict, players: Callable[[Any], dict]) -> GameDef:
    """``game`` whose set-up seats the fork's players and records ``forked_from`` in ``config.json``."""
    real = game.setup

    @functools.wraps(real)
    def setup(seats: Any, **kw: Any) -> Any:
        kw["players"] = players(seats)
        table = real(seats, **kw)
        table.config["forked_from"] = forked_from
        return table

    return replace(game, setup=setup)


def _check_prefix(outcome: ForkOutcome, parent: list[dict], child: list[dict], plan: ForkPlan) -> None:
    a = [untimed(e, drop=True) for e in parent[:plan.at]]
    b = [untimed(e, drop=True) for e in child[:plan.at]]
    outcome.prefix_identical = a == b
    outcome.detail = "" if a == b else _first_difference(a, b)
