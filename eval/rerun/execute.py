"""Re-execute a recorded run without its model and check it comes out the same (issue 50).

:func:`rerun` plays a run again from its ``config.json`` (the game, its parameters, the agents,
the seed and temperature) through the one runner (:func:`mas_agents.game.runner.run`), with every
model spec answering from the run's recording (:func:`mas_agents.replayed_model.replaying`), and
compares the new ``events.jsonl`` and ``result.json`` with the original's:

* ``identical``: equal once what a re-execution cannot repeat is set aside (:data:`CLOCK_KEYS`:
  wall and call times, a move's seconds; the transient retries a server caused; call ids, which
  are compared by their pattern: the n-th distinct id of one file stands where the other's does);
* ``data``: a dataset file the run read (``config.json``'s ``data_files``, :mod:`mas_agents.game.data`)
  is missing under the datasets root or its SHA-256 is not the recorded one: checked first, one
  line per file naming it and both hashes, and nothing is replayed (a changed script or setting
  is another game; the rerun would only stop at the first prompt that carries it);
* ``prompt``: a call asked something the recording does not hold (a prompt sentence, a reply
  format or a cap changed): the call, its actor and purpose, and the diff
  (:class:`mas_agents.replayed_model.ReplayMismatch`);
* ``events`` / ``result``: every call was answered as recorded, yet the first event (or
  ``result.json`` field) that differs does: a rule or a metric changed;
* ``calls``: the accounting differs: a recorded call was not made again, or the call records
  (``llm_calls.jsonl`` but ids, clocks and retries) differ;
* the package ``versions`` that differ from the recorded ones are listed either way (a change
  of langgraph or of our own package is the likely cause of a difference).

A WellPlay evaluation (``mas wellplay eval``, run kind ``wellplay-eval``) is re-executed by
:func:`mas_agents.eval.wellplay.run.run_wellplay_eval` from its ``config.json`` the same way
(:func:`wellplay_config`). A run whose prompts were not recorded (``--no-record-prompts``)
cannot be replayed (:class:`mas_agents.replayed_model.NotReplayable`). A run of many cells (a
tournament, ``mas magic run``, ``mas wellplay compare``, an ablation, ``mas reproduce``) is
re-executed cell by cell: every directory below it whose ``config.json`` names a registered
game or a WellPlay evaluation (:func:`game_cells`); the experiment's own aggregates
(leaderboard, report) are not re-executed.

Not repeated by a re-execution, so not compared: a Who-is-Spy move that fouled on the clock
(the replay answers at once; record with ``--speak-timeout 0``). A run written before
``data_files`` existed has no hashes to check: a changed script or setting then shows as a
changed prompt.
"""

from __future__ import annotations

import inspect
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from mas_agents.game.data import DataError, changed_files
from mas_agents.graphs.magic.dataset import load_setting
from mas_agents.graphs.mmg.dataset import load_script
from mas_agents.game.contract import find
from mas_agents.game import runner as session
from mas_agents.game.human import HUMAN
from mas_agents.eval.rerun.compare import compare_runs
from mas_agents.eval.wellplay.evaluate import MODEL_FREE
from mas_agents.eval.wellplay.run import WellPlayEvalConfig, run_wellplay_eval
from mas_agents.replayed_model import NotReplayable, ReplayMismatch, replayable, replaying
from mas_agents.rundir import CONFIG_FILE, RunDir, versions
from mas_agents.specs import is_remote

__all__ = ["Outcome", "EXIT_CODES", "rerun", "rerun_cells", "game_cells", "params_of"]

#: The run kind of a WellPlay evaluation (``mas wellplay eval``), re-executed by
#: :func:`mas_agents.eval.wellplay.run.run_wellplay_eval`.
WELLPLAY = "wellplay-eval"


#: ``mas rerun``'s exit code by :attr:`Outcome.status` (any other status is a difference, 1).
EXIT_CODES = {"identical": 0, "refused": 2, "failed": 2, "error": 3}


@dataclass
class Outcome:
    """What :func:`rerun` found.

    Attributes:
        run: the original run directory; out: where the rerun was written.
        status: ``"identical"``, ``"data"`` (a recorded dataset file is missing or changed: nothing
            was replayed), ``"prompt"`` (a request not in the recording), ``"events"`` (an
            event differs), ``"result"`` (``result.json`` differs), ``"calls"`` (the rerun made
            fewer calls than the run recorded, or its call records differ: tokens, caps, format,
            finish reasons), ``"refused"`` (the cell cannot be replayed:
            :class:`mas_agents.replayed_model.NotReplayable`), ``"failed"`` (bad input: a parameter or data
            file missing, ``out`` holds a run) or ``"error"`` (the rerun failed otherwise).
        detail: one paragraph saying what differs (empty when identical).
        versions: ``{package: (recorded, now)}`` of the package versions that differ.
        calls: model calls answered from the recording.
    """

    run: Path
    out: Path
    status: str
    detail: str = ""
    versions: dict = field(default_factory=dict)
    calls: int = 0

    @property
    def identical(self) -> bool:
        return self.status == "identical"

    @property
    def exit_code(self) -> int:
        """``mas rerun``'s exit code for this outcome: 0 identical, 1 a difference, 2 refused or
        failed on bad input, 3 a fault that stopped the rerun (``"error"``)."""
        return EXIT_CODES.get(self.status, 1)

    def text(self) -> str:
        """The outcome in a few lines, as ``mas rerun`` prints it."""
        if self.status in ("refused", "failed", "error"):
            return f"{self.run}: {self.status}: {self.detail}"
        if self.identical:
            head = f"{self.run}: identical ({self.calls} calls replayed)"
        elif self.status == "data":      # checked before replaying: no rerun to keep
            head = f"{self.run}: differs (data), not replayed: {self.detail}"
        else:
            head = f"{self.run}: differs ({self.status}): {self.detail}\n  the rerun is kept in {self.out}"
        if self.versions:
            head += "\n  package versions differ from the recorded ones: " + ", ".join(
                f"{k} {a} -> {b}" for k, a, b in ((k, *v) for k, v in self.versions.items()))
        return head


def params_of(config: dict, data_root: Path | None) -> tuple[str, dict[str, Any]]:
    """``(kind, the game's parameters)`` to set a recorded game up again from its ``config.json``.

    The parameters of the game's set-up (:attr:`mas_agents.game.contract.GameDef.params`) are taken from the
    ``config.json`` fields of the same name; the built-in games' data objects are loaded again:
    the murder mystery's WellPlay ``script`` (by ``script_id``, in ``lang``) and its memory
    ``settings``; a MAgIC ``setting`` (``scenario`` and ``setting_id``). ``data_root`` is where
    the datasets are (the run's own ``data_dir`` is used for the murder mystery when it exists).

    Raises:
        NotReplayable: not a game's run, or a seat no recording can play (a person's seat, a
            WiS-protocol agent over HTTP).
        ValueError: a parameter the game needs is not in ``config.json``; a data file is missing.
    """
    kind = config.get("kind")
    game = find(kind)
    if game is None:
        raise NotReplayable(f"config.json kind {kind!r} is no registered game")
    if config.get("human"):
        raise NotReplayable(f"a person played {config['human']!r}: a person's answers are not replayed")
    params: dict[str, Any] = {n: config[n] for n in game.params if n in config}
    if kind == "mmg":
        from mas_agents.memory import MemorySettings    # faiss: only for a murder mystery
        recorded = Path(config["data_dir"]) if config.get("data_dir") else None
        root = data_root_of(config, data_root)
        if root is None:
            raise ValueError("the murder mystery needs the WellPlay data: give --data-dir")
        params["script"] = load_script(root, str(config.get("script_id") or config["script"]), config.get("lang", "en"))
        params["settings"] = MemorySettings.from_record(config.get("settings"))
        params["data_root"] = recorded
        params.pop("human", None)
    elif kind == "magic":
        if data_root is None:
            raise ValueError("MAgIC needs its settings: give --data-dir")
        params["setting"] = load_setting(data_root, config["scenario"], int(config["setting_id"]))
    elif kind == "wis":
        others = [a for a in config.get("agents", []) if a == HUMAN or is_remote(a)]
        if others:
            raise NotReplayable(f"seat(s) {', '.join(others)} are no model of ours: their answers are not recorded")
        pair_files = {f: h for f, h in (config.get("data_files") or {}).items() if f.startswith("whoisspy/")}
        if isinstance(params.get("pair"), dict) and pair_files:
            # a pair drawn from the dataset names its file, so the game played again records it too
            # (the files themselves are checked against these hashes before anything replays)
            from mas_agents.graphs.wis.dataset import Pair
            params["pair"] = Pair(str(params["pair"]["civilian"]), str(params["pair"]["spy"]), pair_files)
    missing = [n for n in game.params if n not in params and _required(game, n)]
    if missing:
        raise ValueError(f"config.json lacks the {kind} parameter(s) {', '.join(missing)}: cannot set the game up again")
    return kind, params


def data_root_of(config: dict, data_root: Path | None) -> Path | None:
    """The datasets root a rerun of ``config`` reads: a murder mystery's recorded ``data_dir``
    when that directory still exists (the game recorded it), else ``data_root``."""
    recorded = Path(config["data_dir"]) if config.get("kind") == "mmg" and config.get("data_dir") else None
    return recorded if recorded is not None and recorded.is_dir() else data_root


def data_difference(config: dict, data_root: Path | None) -> str:
    """What differs between the dataset files ``config.json`` recorded (``data_files``) and
    those under the datasets root a rerun reads (:func:`data_root_of`): one line per file, naming
    it, the recorded SHA-256 and the one now (or "missing"); ``""`` when all are as recorded or
    none was recorded, or when no datasets root is known (the files cannot be checked; a game
    whose replay reads none, such as Who is Spy with its pair in ``config.json``, still reruns, and
    one that needs them stops with its own "give --data-dir" error)."""
    root = data_root_of(config, data_root)
    if root is None:
        return ""
    lines = []
    for rel, old, now in changed_files(config.get("data_files"), root):
        lines.append(f"data file {rel} under {root}: recorded sha256 {old}, now " +
                     (f"sha256 {now}" if now else "missing"))
    return "\n".join(lines)


def wellplay_config(config: dict, data_root: Path | None, model: Any = "local") -> Any:
    """The :class:`mas_agents.eval.wellplay.run.WellPlayEvalConfig` that evaluates again what a
    WellPlay evaluation's ``config.json`` records (its method, scripts, language, seed, runs,
    shuffle, scoring, memory settings, agent and, for ``session``, the game it read:
    :meth:`WellPlayEvalConfig.from_record`), on ``model``; its ``out`` is a placeholder (the
    recorded run's directory is not known here) to be replaced before it runs.

    Raises:
        NotReplayable: a model-free method (nothing was asked of a model).
        ValueError: no ``data_root``; a field is missing.
    """
    if config.get("method") in MODEL_FREE:
        raise NotReplayable(f"method {config['method']!r} asks no model: nothing to replay")
    if data_root is None:
        raise ValueError("the WellPlay evaluation needs the WellPlay data: give --data-dir")
    if not config.get("scripts"):
        raise ValueError("config.json lacks 'scripts': cannot evaluate again")
    try:
        return WellPlayEvalConfig.from_record(config, out=Path("."), model=model, data_root=data_root)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"config.json: {exc}: cannot evaluate again") from None


def _required(game: Any, name: str) -> bool:
    return inspect.signature(game.setup).parameters[name].default is inspect.Parameter.empty


def _versions_diff(config: dict) -> dict:
    old = config.get("versions") or {}
    now = versions()
    return {k: (old[k], now.get(k)) for k in old if now.get(k) != old[k]}


def rerun(run: Path, out: Path | None = None, *, data_root: Path | None = None) -> Outcome:
    """Re-execute the single game (or WellPlay evaluation) in ``run`` on its recording into
    ``out`` and compare.

    Args:
        run: a game's run directory (``config.json`` with a registered ``kind``, ``events.jsonl``,
            ``result.json``, the call and prompt logs), or a WellPlay evaluation's.
        out: where to write the rerun (created; must not hold a run); None: a temporary
            directory, removed when the rerun is identical or raises.
        data_root: the datasets root (WellPlay scripts, MAgIC settings).

    Returns:
        The :class:`Outcome` (a changed dataset file, prompt, rule or metric is an outcome, not an
        exception; a changed or missing dataset file is found before anything is replayed).

    Raises:
        NotReplayable: the run's prompts were not recorded, it is not a finished game, or a seat
            is no model (a person, an HTTP agent).
        ValueError: ``config.json`` lacks a parameter, a data file is missing, ``out`` holds a run.
        FileNotFoundError: ``run/config.json`` is missing.
    """
    run = Path(run)
    config = RunDir(run).read_config()
    ok, why = replayable(run)
    if not ok:
        raise NotReplayable(f"{run} cannot be replayed: {why}")
    if not RunDir(run).result.is_file():
        raise NotReplayable(f"{run} holds no finished game (no result.json): nothing to compare with")
    changed = data_difference(config, data_root)
    if changed:          # another script or setting: checked before anything is loaded or replayed
        return Outcome(run=run, out=Path(out) if out is not None else run, status="data", detail=changed,
                       versions=_versions_diff(config))
    if config.get("kind") == WELLPLAY:
        kind, params = WELLPLAY, {"cfg": wellplay_config(config, data_root)}
    else:
        kind, params = params_of(config, data_root)
    temp = out is None
    if not temp and RunDir(out).has_config():
        raise ValueError(f"--out {out} already holds a run; choose an empty directory")
    out = Path(tempfile.mkdtemp(prefix="mas-rerun-")) if out is None else Path(out)
    model = config.get("default_model") or config.get("model") or "local"
    outcome = Outcome(run=run, out=out, status="error", versions=_versions_diff(config))
    keep = False          # a temporary directory is kept only for a finished rerun that differs
    try:
        with replaying(run) as rec:
            try:
                if kind == WELLPLAY:
                    run_wellplay_eval(params["cfg"].replace(out=out, model=model))
                else:
                    session.run(kind, out, model=model, seed=int(config.get("seed", 0)),
                                temperature=config.get("temperature"), **params)
            except ReplayMismatch as exc:
                outcome.status, outcome.detail = "prompt", str(exc)
            outcome.calls = sum(1 for r in rec.records if r.used)
            if outcome.status == "error" and rec.mismatches:      # swallowed by the game, still a changed prompt
                outcome.status, outcome.detail = "prompt", str(rec.mismatches[0])
            if outcome.status == "error":
                outcome.status, outcome.detail = compare_runs(run, out)
                left = rec.unused()
                if outcome.identical and left:
                    c = left[0]
                    outcome.status = "calls"
                    outcome.detail = (f"the rerun made {len(rec.records) - len(left)} of the {len(rec.records)} recorded "
                                      f"calls; first not made: {c['call_id']} of {c.get('actor')} ({c.get('purpose')})")
        keep = not outcome.identical
    finally:
        if temp and not keep:     # identical, or the rerun raised: nothing in it to look at
            shutil.rmtree(out, ignore_errors=True)
    return outcome


def game_cells(run: Path) -> list[Path]:
    """The game directories of a run, sorted: ``run`` itself when its ``config.json`` names a
    registered game or a WellPlay evaluation, else every directory below it whose
    ``config.json`` does (the cells of a tournament, a MAgIC bench, a comparison, an ablation,
    ``mas reproduce``)."""
    run = Path(run)

    def is_game(d: Path) -> bool:
        try:
            cfg = json.loads(RunDir(d).config.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return isinstance(cfg, dict) and (find(cfg.get("kind")) is not None or cfg.get("kind") == WELLPLAY)

    if is_game(run):
        return [run]
    return sorted(p.parent for p in run.rglob(CONFIG_FILE) if p.parent != run and is_game(p.parent))


def rerun_cells(run: Path, out: Path | None = None, *, data_root: Path | None = None,
                on_outcome: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """:func:`rerun` of every game cell of ``run`` (:func:`game_cells`), each into
    ``out / <its path below run>`` (or a temporary directory), one after another.

    A cell that cannot be rerun does not stop the others: it becomes an :class:`Outcome` of
    status ``"refused"`` (:class:`mas_agents.replayed_model.NotReplayable`), ``"failed"`` (bad input:
    ``ValueError``, ``OSError``, :class:`mas_agents.game.data.DataError`) or ``"error"`` (any other
    exception), its detail the one-line reason.

    Args:
        on_outcome: called with each cell's outcome as soon as it is known (``mas rerun`` prints
            it), so a long run shows its cells as they finish.

    Returns:
        One outcome per cell, in :func:`game_cells`'s order.

    Raises:
        NotReplayable: ``run`` holds no game (a WellPlay evaluation has no game to replay yet).
    """
    run = Path(run)
    cells = game_cells(run)
    if not cells:
        raise NotReplayable(f"{run} holds no game's run directory (a config.json whose kind is a registered game)")
    outcomes = []
    for c in cells:
        target = None if out is None else Path(out) / c.relative_to(run)
        try:
            o = rerun(c, target, data_root=data_root)
        except NotReplayable as exc:
            o = Outcome(run=c, out=target or c, status="refused", detail=_one_line(exc))
        except (ValueError, OSError, DataError) as exc:
            o = Outcome(run=c, out=target or c, status="failed", detail=_one_line(exc))
        except Exception as exc:  # noqa: BLE001 - a fault of one cell is that cell's outcome
            o = Outcome(run=c, out=target or c, status="error", detail=f"{type(exc).__name__}: {_one_line(exc)}")
        outcomes.append(o)
        if on_outcome is not None:
            on_outcome(o)
    return outcomes


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
