"""The run directories under ``--runs``: what each is, and paths that never leave ``--runs``.

A run directory is what a command writes (README, "What a run writes"). Its kind is read from
its files, as each runner writes them (newer runs name it in ``config.json`` ``kind``, every
kind below; the other rules read runs written before):

==================  ===========================================================================
kind                how it is recognised (writer)
==================  ===========================================================================
``mmg``             ``config.json`` ``kind: "mmg"`` (``eval/runs/mmg_session.py``)
``wis``             ``config.json`` ``kind: "wis"`` (``eval/runs/wis_session.py``)
``magic``           ``config.json`` ``kind: "magic"`` (``eval/runs/magic_session.py``)
``wellplay-eval``   ``config.json`` ``kind: "wellplay-eval"`` (``eval/runs/wellplay_run.py``)
``wellplay-compare`` ``config.json`` ``kind: "wellplay-compare"`` (``eval/runs/compare.py``)
``magic-bench``     ``config.json`` with ``challenger`` and ``scenarios`` (``eval/runs/magic_bench.py``)
``ablation``        ``config.json`` with ``base`` and ``benches`` (``eval/runs/ablate.py``)
``wis-experiment``  ``result.json`` with ``rows`` and ``kind`` attack/defense/reasoning
                    (``mas spy experiment``)
``wis-tournament``  no ``config.json``, a ``games/`` folder of ``wis`` games
                    (``eval/runs/wis_tournament.py``)
``reproduce``       ``config.json`` ``kind: "reproduce"`` (``eval/reproduce/common.py``)
``incomplete``      only a ``run.lock`` (:data:`UNCONFIGURED`): a run that failed, or is starting,
                    before it wrote ``config.json`` (listed with the marker's error)
any other game      ``config.json`` ``kind`` a game registered in :mod:`eval.games` (its runs
                    are written by :func:`eval.runs.session.run`; its ``GameDef.headline``
                    gives the runs list's line)
==================  ===========================================================================

Every path the web app is given is resolved with :func:`confine` first: symbolic links are
followed, and anything that is not ``--runs`` or inside it is refused.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from eval import games as game_registry
from mas_agents.rundir import RUN_MARKER

GAME_KINDS = ("mmg", "wis", "magic")
#: The kind of a folder holding only a ``run.lock``: a run that failed (or is starting) before it
#: wrote its ``config.json`` (a game started from ``/play`` whose model could not be built). It is
#: listed, with the marker's error as its reason, so that a start that failed is not invisible.
UNCONFIGURED = "incomplete"


def all_kinds() -> tuple[str, ...]:
    """:data:`KINDS` and then every other registered game kind (the runs list's filters)."""
    return KINDS + tuple(k for k in game_registry.kinds() if k not in KINDS)
#: Kinds in the order the runs list offers them as filters.
KINDS = ("mmg", "wis", "magic", "wellplay-eval", "wellplay-compare", "magic-bench", "ablation",
         "wis-tournament", "wis-experiment", "reproduce")
#: Folders never descended into while scanning (they hold no run of their own).
_SKIP = {"human", "__pycache__", ".git"}
MAX_DEPTH = 8


class OutsideRuns(PermissionError):
    """A path that resolves outside ``--runs`` (through ``..``, an absolute path or a symlink)."""


class BadPath(ValueError):
    """A path no file can have (a NUL byte, a name over 255 bytes, over 4096 bytes in all): the
    web app answers 400 without asking the file system."""


#: Longest file name and path Linux accepts (NAME_MAX, PATH_MAX).
NAME_MAX, PATH_MAX = 255, 4096


def check_path(rel: str) -> None:
    """Raise :class:`BadPath` for a path no file can have (before any file system call, which
    would fail with ``ValueError: embedded null byte`` or ``OSError: File name too long``)."""
    text = str(rel)
    if "\x00" in text:
        raise BadPath("The address holds a NUL byte (%00); no file name can.")
    raw = text.encode("utf-8", "surrogateescape")
    if len(raw) > PATH_MAX:
        raise BadPath(f"The path in the address is {len(raw)} bytes long; a path has at most {PATH_MAX}.")
    for seg in text.split("/"):
        n = len(seg.encode("utf-8", "surrogateescape"))
        if n > NAME_MAX:
            raise BadPath(f"A part of the path in the address is {n} bytes long; a file name has at most {NAME_MAX}.")


def confine(root: Path, rel: str | os.PathLike[str]) -> Path:
    """``root / rel`` with symlinks resolved, if it is ``root`` or inside it.

    Args:
        root: the ``--runs`` directory (resolved here too).
        rel: a path relative to ``root`` as the URL gives it (may hold ``..``, start with ``/``).

    Raises:
        OutsideRuns: the resolved path is outside ``root`` (the web app answers 403).
        BadPath: no file can have this path (the web app answers 400).
    """
    check_path(str(rel))
    base = Path(root).resolve()
    target = (base / str(rel).lstrip("/")).resolve() if str(rel).strip("/") else base
    if target != base and base not in target.parents:
        raise OutsideRuns(f"{rel!r} is outside the runs directory")
    if str(rel).startswith("/") and str(rel).strip("/"):
        # an absolute path names a place, not a run under --runs: refused even if it lands inside
        raise OutsideRuns(f"{rel!r} is an absolute path; give a path under the runs directory")
    return target


def relpath(root: Path, path: Path) -> str:
    """``path`` relative to ``root`` in URL form (``a/b``; ``""`` for the root itself)."""
    rel = Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    return "" if rel == "." else rel


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _holds_runs(d: Path) -> bool:
    """``d`` has a sub-folder (a composite run's parts may be inside: walk it instead)."""
    try:
        return any(p.is_dir() for p in d.iterdir())
    except OSError:
        return False


def kind_of(d: Path) -> str | None:
    """:func:`detect_kind`, or :data:`UNCONFIGURED` for a folder holding a ``run.lock`` and no
    run of a known kind (nor sub-folders), or None."""
    kind = detect_kind(d)
    if kind is None and (Path(d) / RUN_MARKER).is_file() and not _holds_runs(Path(d)):
        return UNCONFIGURED
    return kind


def detect_kind(d: Path) -> str | None:
    """The kind of run in ``d`` (see the module table), or None when ``d`` is not a run."""
    cfg = _read(d / "config.json") if (d / "config.json").is_file() else None
    if isinstance(cfg, dict):
        k = cfg.get("kind")
        if k in ("mmg", "wis", "magic", "wellplay-eval", "wellplay-compare", "reproduce",
                 "magic-bench", "ablation", "wis-tournament", "wis-experiment"):   # kinds the runners write
            return k
        if game_registry.find(k) is not None:
            return k
        if "base" in cfg and "benches" in cfg:
            return "ablation"
        if "challenger" in cfg and "scenarios" in cfg:
            return "magic-bench"
    res = _read(d / "result.json") if (d / "result.json").is_file() else None
    if isinstance(res, dict) and "rows" in res and res.get("kind") in ("attack", "defense", "reasoning"):
        return "wis-experiment"
    games = d / "games"
    if cfg is None and games.is_dir():
        for g in sorted(games.iterdir())[:3]:
            c = _read(g / "config.json")
            if isinstance(c, dict) and c.get("kind") == "wis":
                return "wis-tournament"
    return None


@dataclass
class Run:
    """One run directory, as the runs list shows it.

    Attributes:
        rel: path under ``--runs`` (URL form). kind: see :data:`KINDS`.
        date: when the run started, from its own record (:func:`run_date`), local time text.
        mtime: the same as Unix seconds (for sorting).
        models: the model specs its seats used (``config.json`` ``models``, the run-record
            contract; older runs: ``[model]``). model: the same as text (``", "``-joined), or ``""``.
        agents: agent specs / methods it ran.
        headline: a few numbers in words (outcome, score with interval, progress...).
        finished: its ``result.json`` exists. parent: ``rel`` of the run it is part of, or None.
        depth: how many runs it is nested in.
        state: ``finished``, ``running`` or ``stopped`` (:func:`run_state`); reason: why, in words
            (for ``stopped`` and a ``running`` told by the age of its files).
    """

    rel: str
    kind: str
    date: str
    mtime: float
    model: str = ""
    agents: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    headline: str = ""
    finished: bool = False
    parent: str | None = None
    depth: int = 0
    state: str = "finished"
    reason: str = ""

    @property
    def is_game(self) -> bool:
        return self.kind in GAME_KINDS or game_registry.find(self.kind) is not None


def scan(root: Path) -> list[Run]:
    """Every run directory under ``root`` (nested ones too, with their parent), newest first
    among the top-level runs, each followed by the runs inside it.

    Symbolic links are not followed while walking, and a folder that resolves outside ``root``
    is never listed.
    """
    root = Path(root).resolve()

    def walk(d: Path, parent: str | None, depth: int, level: int) -> list[Run]:
        out: list[Run] = []
        try:
            subs = sorted(p for p in d.iterdir() if p.is_dir() and not p.is_symlink() and p.name not in _SKIP)
        except OSError:
            return out
        for sub in subs:
            kind = kind_of(sub)
            if kind is not None:
                run = describe(root, sub, kind, parent=parent, depth=depth)
                out.append(run)
                if level < MAX_DEPTH and not run.is_game:
                    out.extend(walk(sub, run.rel, depth + 1, level + 1))
            elif level < MAX_DEPTH:
                out.extend(walk(sub, parent, depth, level + 1))
        return out

    found: list[Run] = walk(root, None, 0, 0)
    # newest top-level run first, each followed by its nested runs in path order
    tops = [r for r in found if r.parent is None]
    tops.sort(key=lambda r: (-r.mtime, r.rel))
    children: dict[str, list[Run]] = {}
    for r in found:
        if r.parent is not None:
            children.setdefault(r.parent, []).append(r)
    ordered: list[Run] = []

    def add(r: Run) -> None:
        ordered.append(r)
        for c in children.get(r.rel, []):
            add(c)

    for t in tops:
        add(t)
    return ordered


#: Keys of ``config.json`` that may hold when a run started (ISO 8601), in the order trusted.
_START_KEYS = ("started_at", "started", "created_at", "created")


def _iso(text: Any) -> float | None:
    """Unix seconds of an ISO 8601 time (a naive one is taken as UTC, as the runners write
    UTC), or None."""
    from datetime import timezone
    if not isinstance(text, str) or not text:
        return None
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()


def _first_call_time(d: Path) -> float | None:
    """``started_at`` of the first line of ``d/llm_calls.jsonl`` (its first model call), or None."""
    try:
        with (d / "llm_calls.jsonl").open(encoding="utf-8") as fh:
            line = fh.readline()
        return _iso(json.loads(line).get("started_at")) if line.strip() else None
    except (OSError, ValueError, AttributeError):
        return None


def run_date(d: Path, kind: str | None = None) -> float | None:
    """When the run in ``d`` started, in Unix seconds, read from the run's own record (never
    from the folder's modification time, which anything written into the folder moves: a
    leaderboard's ``-wal`` file, a zip extracted over it):

    1. a start time its ``config.json`` records (:data:`_START_KEYS`);
    2. the ``started_at`` of its first model call (``llm_calls.jsonl``; a resumed run keeps it);
    3. the ``started`` of its ``run.lock`` (a run that is running, or stopped: a run that failed
       before writing anything else has only this);
    4. for a run with a ``games/`` folder (a tournament, which has no ``config.json`` of its
       own, or a bench): its first game's date by these rules;
    5. the modification time of ``config.json``, else ``result.json``, else ``events.jsonl``
       (files the runner writes; reading never touches them).

    Returns None when none of these exists."""
    d = Path(d)
    cfg = _read(d / "config.json")
    for key in _START_KEYS if isinstance(cfg, dict) else ():
        t = _iso(cfg.get(key))
        if t is not None:
            return t
    t = _first_call_time(d)
    if t is not None:
        return t
    marker = _read(d / RUN_MARKER)
    t = _iso(marker.get("started")) if isinstance(marker, dict) else None
    if t is not None:
        return t
    try:
        first = min((g for g in (d / "games").iterdir() if g.is_dir()), default=None)
    except OSError:
        first = None
    if first is not None:
        t = run_date(first, "wis")
        if t is not None:
            return t
    for name in ("config.json", "result.json", "events.jsonl"):
        try:
            return (d / name).stat().st_mtime
        except OSError:
            continue
    return None


def _date(path: Path, kind: str | None = None) -> tuple[str, float]:
    """``(local time text, Unix seconds)`` of :func:`run_date` (``("-", 0.0)`` when unknown)."""
    t = run_date(path, kind)
    if t is None:
        return "-", 0.0
    return datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M"), t


def run_models(cfg: dict) -> list[str]:
    """The model specs a run's seats used: ``config.json`` ``models`` (the run-record contract:
    sorted distinct specs), else ``[model]`` for a run written before it (nothing for none)."""
    ms = cfg.get("models")
    if isinstance(ms, list) and ms:
        return [str(m) for m in ms if m]
    m = cfg.get("model")
    return [str(m)] if m else []


def _pct(x: Any) -> str:
    return "-" if not isinstance(x, (int, float)) else f"{100 * x:.1f} %"


def _iv(iv: Any) -> str:
    if not isinstance(iv, dict) or iv.get("low") is None:
        return ""
    return f" [{100 * iv['low']:.1f}, {100 * iv['high']:.1f}] (n={iv.get('n')})"


def _kn(r: dict, num: str, den: str, value: Any) -> str:
    """A rate with its n and Wilson 95 % interval from the row's counts (the bare rate when the
    row has no counts)."""
    k, n = r.get(num), r.get(den)
    if not isinstance(k, int) or not isinstance(n, int) or n <= 0 or not 0 <= k <= n:
        return _pct(value)
    from eval.stats import wilson
    return wilson(k, n).fmt()


def _score_iv(x: Any, iv: Any) -> str:
    """MAgIC Deception (a rate plus 0.25 × a rate, range [0, 1.25]) on the scale of MAgIC's
    tables (Table 1/4: percent, one decimal, so up to 125.0), with its interval and n: the
    same scale as the reports'."""
    if not isinstance(x, (int, float)):
        return "-"
    return f"{_pct(x)}{_iv(iv)}"


def _uniq(xs) -> list[str]:
    return list(dict.fromkeys(str(x) for x in xs if x))


def describe(root: Path, d: Path, kind: str, parent: str | None = None, depth: int = 0) -> Run:
    """The :class:`Run` of directory ``d`` of kind ``kind`` (read from its files; missing or
    malformed files give empty fields, never an error)."""
    cfg = _read(d / "config.json")
    cfg = cfg if isinstance(cfg, dict) else {}
    res = _read(d / "result.json")
    date, mtime = _date(d, kind)
    models = run_models(cfg)
    run = Run(rel=relpath(root, d), kind=kind, date=date, mtime=mtime, model=", ".join(models), models=models,
              finished=isinstance(res, dict), parent=parent, depth=depth)
    res = res if isinstance(res, dict) else {}
    try:
        _fill(run, kind, cfg, res, d)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        run.headline = run.headline or "(result not readable)"
    run.state, run.reason = run_state(d, kind)
    if run.state == "stopped" and run.headline in ("playing", ""):
        run.headline = "stopped before the end"
    if not run.model and run.models:
        run.model = ", ".join(run.models)
    return run


#: A run without a process marker (written before markers existed, or by a runner that does not
#: write one) counts as running while one of its files was written less than this many seconds
#: ago: longer than a human seat's default time to answer (120 s) or a slow local model's call.
FRESH_S = 300
#: The files whose age (with the directory's own) tells whether a run without a marker is still
#: being written.
_WRITTEN = ("events.jsonl", "llm_calls.jsonl", "config.json", "human")


def _age(d: Path, deep: bool) -> float | None:
    """Seconds since a file of ``d`` was last written (``deep``: of its sub-runs too), or None."""
    import time
    paths = [d] + [d / n for n in _WRITTEN]
    if deep:
        paths += [p for n in ("events.jsonl", "llm_calls.jsonl") for p in d.glob(f"**/{n}")][:2000]
    times = []
    for p in paths:
        try:
            times.append(p.stat().st_mtime)
        except OSError:
            pass
    return time.time() - max(times) if times else None


def run_state(d: Path, kind: str) -> tuple[str, str]:
    """``(state, reason)`` of the run in ``d``: ``finished`` (its result is written), ``running``
    (the process in its ``run.lock`` is alive on this host: :func:`mas_agents.rundir.marker_process`)
    or ``stopped`` (a marker whose process is gone, or that kept the runner's error). Without a
    marker: a composite run with a running sub-run is running; otherwise a run is running while a
    file of it is younger than :data:`FRESH_S` seconds, else ``stopped (no process marker)``. A
    marker of another host (a shared disk) is judged by the same age rule."""
    from mas_agents.rundir import marker_process, read_run_marker
    d = Path(d)
    marker = read_run_marker(d)
    if kind == "wis-tournament":
        games = [g for g in (d / "games").iterdir() if g.is_dir()] if (d / "games").is_dir() else []
        open_games = [g for g in games if not (g / "result.json").exists()]
        if marker is None and games and not open_games:
            return "finished", ""
    elif isinstance(_read(d / "result.json"), dict):
        return "finished", ""
    else:
        open_games = []
    if marker is not None:
        alive, why = marker_process(marker)
        if alive:
            return "running", ""
        if alive is False:
            return "stopped", why
    elif kind not in GAME_KINDS and game_registry.find(kind) is None:
        subs = open_games or [p.parent for p in d.glob("*/**/config.json") if not (p.parent / "result.json").exists()]
        for sub in subs[:50]:
            if read_run_marker(sub) is not None and marker_process(read_run_marker(sub))[0]:
                return "running", ""
    age = _age(d, deep=kind not in GAME_KINDS and game_registry.find(kind) is None)
    if age is not None and age < FRESH_S:
        return "running", (why + "; " if marker is not None else "no process marker; ") + f"last written {age:.0f} s ago"
    if marker is not None:
        return "stopped", why + f"; nothing written for {FRESH_S} s"
    return "stopped", "no process marker, and nothing written for " + (f"{age / 60:.0f} min" if age else "a while")


#: MAgIC's scenario keys and the challenger's sides in words (MAgIC §3.2, A.1), for headlines.
MAGIC_SCENARIOS = {"chameleon": "Chameleon", "undercover": "Undercover", "cost_sharing": "Cost sharing",
                   "prisoners_dilemma": "Prisoner's Dilemma", "public_good": "Public good"}
MAGIC_SIDES = {"chameleon": "the chameleon", "non_chameleon": "a non-chameleon", "undercover": "the undercover",
               "civilian": "a civilian", "test_seat": "the seat under test"}


def magic_words(key: Any, table: dict[str, str]) -> str:
    """A MAgIC key (scenario or side) in words (an unknown one with its underscores as spaces)."""
    k = str(key or "")
    return table.get(k, k.replace("_", " "))


def _fill(run: Run, kind: str, cfg: dict, res: dict, d: Path) -> None:
    if kind == UNCONFIGURED:
        marker = _read(d / RUN_MARKER)
        err = marker.get("error") if isinstance(marker, dict) else None
        # the error itself is the stopped run's reason, shown beside it
        run.headline = "failed before writing its configuration" if err else "starting"
        return
    if kind == "mmg":
        run.agents = _uniq([cfg.get("agent"), cfg.get("murderer_agent")])
        oc = res.get("outcome") or {}
        parts = [f"{v['victim']}: accused {v.get('accused') or 'no one'}, "
                 f"{'correct' if v.get('correct') else 'wrong'}" for v in oc.get("victims", [])]
        run.headline = "; ".join(parts) or ("playing" if not run.finished else "no outcome")
        if run.finished:
            run.headline += f"; {res.get('llm', {}).get('calls', 0)} LLM calls, {res.get('invalid_actions', 0)} invalid"
    elif kind == "wis":
        run.agents = _uniq(cfg.get("agents") or [])
        oc = res.get("outcome") or {}
        if oc:
            run.headline = (f"{oc.get('winner')} win after round {oc.get('rounds_played')}; spy {oc.get('spy')}; "
                            f"pair {cfg.get('pair', {}).get('civilian')}/{cfg.get('pair', {}).get('spy')}")
        else:
            run.headline = "playing"
    elif kind == "magic":
        run.agents = _uniq([cfg.get("challenger"), cfg.get("defender")])
        oc = res.get("outcome")
        from mas_agents.web.replay import magic_outcome
        run.headline = (f"{magic_words(cfg.get('scenario'), MAGIC_SCENARIOS)}, setting {cfg.get('setting_id')}, "
                        f"the challenger plays {magic_words(cfg.get('side'), MAGIC_SIDES)}"
                        + (". " + magic_outcome(oc, str(cfg.get("scenario") or "")) if isinstance(oc, dict)
                           else "; playing" if oc is None else f"; {oc}"))
    elif kind == "wellplay-eval":
        run.agents = _uniq([cfg.get("method"), cfg.get("agent")])
        if res:
            counts = res.get("counts") or {}
            chance = ((res.get("chance") or {}).get("always_a") or {}).get("weighted_score")
            run.headline = (f"{cfg.get('method')}: weighted {_pct(res.get('weighted_score'))}{_iv(res.get('interval'))}; "
                            + ", ".join(f"{c} {_kn(counts.get(c) or {}, 'correct', 'n', a)}"
                                        for c, a in (res.get("accuracy") or {}).items())
                            + (f"; always-a {_pct(chance)}" if isinstance(chance, (int, float)) else ""))
    elif kind == "wellplay-compare":
        run.agents = _uniq(cfg.get("methods") or [])
        table = res.get("table") or []
        best = sorted(table, key=lambda t: -(t.get("weighted_score") or 0))[:3]
        run.headline = ("best: " + ", ".join(f"{t['method']} {_pct(t.get('weighted_score'))}{_iv(t.get('weighted_score_interval'))}"
                                             for t in best)) if best else ""
        run.headline += f" ({progress(d, kind)['text']})"
    elif kind == "magic-bench":
        run.agents = _uniq([cfg.get("challenger"), cfg.get("defender")])
        m = res.get("metrics") or {}
        ivs = res.get("intervals") or {}
        run.headline = (f"win rate {_pct(m.get('win_rate'))}{_iv(ivs.get('win_rate'))}; " + ", ".join(
            f"{k.replace('self_', 'self-').replace('_', ' ')} "
            + (_score_iv(v, ivs.get(k)) if k == "deception" else f"{_pct(v)}{_iv(ivs.get(k))}")
            for k, v in m.items() if k != "win_rate")) if m else ""
        run.headline += f" ({progress(d, kind)['text']})"
    elif kind == "ablation":
        base = cfg.get("base", "")
        run.agents = _uniq([base] + [f"{base}+{b}" for b in cfg.get("blocks") or []])
        summary = str(res.get("summary") or "")
        run.headline = (summary[:220] + ("…" if len(summary) > 220 else "")) if summary else progress(d, kind)["text"]
    elif kind == "wis-tournament":
        cfgs = [_read(g / "config.json") or {} for g in sorted((d / "games").iterdir()) if g.is_dir()]
        run.agents = _uniq(a for c in cfgs for a in c.get("agents") or [])
        run.models = run.models or sorted(set(m for c in cfgs for m in run_models(c)))
        run.model = ", ".join(run.models)
        planned = cfg.get("games")   # the tournament's own config.json (newer runs) plans its games
        prog = progress(d, kind, db_total=planned if isinstance(planned, int) and not isinstance(planned, bool) else None)
        run.finished = not prog.get("running") and not prog.get("stopped")
        run.headline = prog["text"]
    elif kind == "reproduce":
        pool = cfg.get("pool") if isinstance(cfg.get("pool"), list) else []
        run.agents = _uniq([cfg.get("model"), *pool, cfg.get("others")])
        if not run.models:
            run.models = _uniq(pool)
            run.model = ", ".join(run.models)
        run.headline = (str(res.get("headline") or f"{cfg.get('paper')}: finished"
                            + (" (partial)" if res.get("partial") else "")) if res else "playing")
    elif kind == "wis-experiment":
        run.agents = _uniq([res.get("subject"), res.get("others")])
        rows = res.get("rows") or []
        run.headline = f"{res.get('kind')}: " + "; ".join(
            f"{r.get('arm')} win {_kn(r, 'wins', 'games', r.get('win_rate'))}, "
            f"vote acc {_kn(r, 'correct_votes', 'votes_cast_as_civilian', r.get('vote_accuracy'))}, "
            f"foul {_kn(r, 'fouls', 'descriptions', r.get('foul_rate'))}" for r in rows)
    elif (game := game_registry.find(kind)) is not None:   # a game registered beyond the built-in ones
        run.agents = _uniq(game.seat_specs(cfg)) if game.seat_specs else []
        if game.headline:
            run.headline = game.headline(cfg, res)
        elif res:
            run.headline = (f"{game.title}: {(res.get('llm') or {}).get('calls', 0)} LLM calls, "
                            f"{res.get('invalid_actions', 0)} invalid")
        else:
            run.headline = "playing"


def progress(d: Path, kind: str, db_total: int | None = None) -> dict[str, Any]:
    """How far a composite run is: ``{"done", "total" (None when unknown), "running": [rel
    names of sub-runs with a config but no result yet], "text"}``.

    Totals: a tournament's from ``db_total`` (the leaderboard's stored config) when given; a
    comparison's = methods × scripts × seeds (its ``config.json``); a MAgIC bench's = its games
    listed in ``result.json`` once finished; an ablation's = its ``benches``.
    """
    d = Path(d)
    cfg = _read(d / "config.json") or {}
    if kind == "ablation":
        benches = cfg.get("benches") or []
        done = [b for b in benches if _bench_done(d / b)]
        open_ = [p.parent for p in sorted(d.rglob("config.json")) if p.parent != d and not _is_finished(p.parent)]
        running, stopped = _split_open(d, open_)
        text = f"{len(done)} of {len(benches)} benches finished" + (f"; running {running[-1]}" if running else "")
        if stopped and not running:
            text += f"; {len(stopped)} stopped before the end"
        return {"done": len(done), "total": len(benches), "running": running, "stopped": stopped, "text": text}
    if kind == "wellplay-compare":
        cells = d / "cells"
        done = len(list(cells.glob("*/*/seed*/eval/result.json"))) if cells.is_dir() else 0
        total = len(cfg.get("methods") or []) * len(cfg.get("scripts") or []) * int(cfg.get("seeds") or 1) or None
        running, stopped = _split_open(d, [p.parent for p in sorted(cells.rglob("config.json"))
                                           if not (p.parent / "result.json").exists()] if cells.is_dir() else [])
    else:
        games = sorted(g for g in (d / "games").iterdir() if g.is_dir()) if (d / "games").is_dir() else []
        done = sum(1 for g in games if (g / "result.json").exists())
        running, stopped = _split_open(d, [g for g in games if not (g / "result.json").exists()])
        res = _read(d / "result.json") or {}
        total = db_total if db_total is not None else (len(res.get("games") or []) or None)
    what = {"wis-tournament": "games", "magic-bench": "games", "wellplay-compare": "cells"}.get(kind, "parts")
    text = f"{done} of {total} {what} finished" if total else f"{done} {what} finished"
    if running:
        text += f"; playing {running[-1]}"
    elif stopped:
        text += f"; {len(stopped)} stopped before the end"
    return {"done": done, "total": total, "running": running, "stopped": stopped, "text": text}


@functools.lru_cache(maxsize=16)
def _question_counts(data_root: Path, scripts: tuple[str, ...], lang: str) -> tuple[tuple[str, str, int], ...] | None:
    """``((script, character, questions), ...)`` in script, character order, from the WellPlay
    dataset under ``data_root`` (None when a script cannot be read there)."""
    from eval.datasets.wellplay import load_script
    out = []
    for name in scripts:
        try:
            sc = load_script(data_root, name, lang)
        except Exception:   # DataError, OSError: no such script here; the totals stay unknown
            return None
        out += [(sc.name, c.name, len(sc.questions.get(c.name, []))) for c in sc.characters
                if sc.questions.get(c.name)]
    return tuple(out)


def eval_progress(d: Path, data_root: Path | None = None) -> dict[str, Any]:
    """How far a WellPlay evaluation (``mas wellplay eval``) is, read from what its runner has
    written so far (``eval/runs/wellplay_run.py``): ``answers.jsonl`` holds the records of every
    finished run (of ``--runs``), rewritten as each run ends, and ``llm_calls.jsonl`` one line per
    model call as it returns; a question's first call is ``purpose`` ``mcq#1`` by the character
    (``actor``) answering it (:meth:`mas_agents.agent.Agent.act`; ``mcq#2`` is its re-prompt). A
    character's answered questions are the larger of its records and its first calls (the calls
    of earlier runs are in both). Totals (``runs`` × the questions of each character) come from
    the dataset's question files when ``data_root`` holds the run's scripts, else are None.
    Model-free methods (``always_a``, ``random``) make no calls: they show their answers when
    written.

    Returns:
        ``{"done", "total" (None: unknown), "text" ("k of N answered" / "k answered"),
        "characters": [{"script", "character", "done", "total"}], "running": [] (no sub-runs),
        "live": the run is running (the page polls), "finished": result.json is written}``.
    """
    d = Path(d)
    cfg = _read(d / "config.json")
    cfg = cfg if isinstance(cfg, dict) else {}
    runs = int(cfg.get("runs") or 1) if str(cfg.get("runs") or "1").isdigit() else 1
    scripts = tuple(str(x) for x in cfg.get("scripts") or [])
    counts = (_question_counts(Path(data_root).resolve(), scripts, str(cfg.get("lang") or "en"))
              if data_root is not None and scripts else None)
    recs: dict[tuple[str, str], int] = {}
    for r in _jsonl(d / "answers.jsonl"):
        key = (str(r.get("script") or ""), str(r.get("character") or ""))
        recs[key] = recs.get(key, 0) + 1
    firsts: dict[str, int] = {}
    for c in _jsonl(d / "llm_calls.jsonl"):
        if str(c.get("purpose") or "").startswith("mcq#1") and c.get("phase", "evaluation") == "evaluation":
            firsts[str(c.get("actor"))] = firsts.get(str(c.get("actor")), 0) + 1
    by_char = {ch: sum(n for (_, c), n in recs.items() if c == ch) for _, ch in recs}
    rows = []
    if counts is not None:
        for sc, ch, n in counts:
            done = max(recs.get((sc, ch), 0), firsts.get(ch, 0))
            rows.append({"script": sc, "character": ch, "done": min(done, runs * n), "total": runs * n})
        total: int | None = sum(r["total"] for r in rows)
    else:
        for ch in dict.fromkeys([c for _, c in recs] + list(firsts)):
            rows.append({"script": next((s for s, c in recs if c == ch), ""), "character": ch,
                         "done": max(by_char.get(ch, 0), firsts.get(ch, 0)), "total": None})
        total = None
    done = sum(r["done"] for r in rows)
    finished = isinstance(_read(d / "result.json"), dict)
    state = "finished" if finished else run_state(d, "wellplay-eval")[0]
    text = f"{done} of {total} answered" if total else f"{done} answered"
    if runs > 1 and total:
        text += f" ({runs} runs of {total // runs} questions)"
    return {"done": done, "total": total, "text": text, "characters": rows, "running": [],
            "live": state == "running", "finished": finished}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file ([] when missing; a line being written, not yet
    whole, or any other unreadable line is skipped)."""
    out = []
    try:
        with Path(path).open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    x = json.loads(line)
                except ValueError:
                    continue
                if isinstance(x, dict):
                    out.append(x)
    except OSError:
        pass
    return out


def _split_open(d: Path, subs: list[Path]) -> tuple[list[str], list[str]]:
    """Unfinished sub-runs of ``d`` as ``(running, stopped)`` rel names (:func:`run_state`)."""
    running, stopped = [], []
    for sub in subs:
        (running if run_state(sub, detect_kind(sub) or "wis")[0] == "running" else stopped).append(
            sub.relative_to(d).as_posix())
    return running, stopped


def _bench_done(d: Path) -> bool:
    """An ablation bench is done when it has sub-runs and every one of them is finished
    (:func:`_is_finished`)."""
    if not d.is_dir():
        return False
    subs = [p.parent for p in d.rglob("config.json")]
    return bool(subs) and all(_is_finished(p) for p in subs)


def _is_finished(d: Path) -> bool:
    """The run in ``d`` has its result: a tournament (which writes no ``result.json`` of its own)
    when it has games and every one has its ``result.json``; any other run when its
    ``result.json`` exists."""
    if detect_kind(d) == "wis-tournament" and not (d / "result.json").exists():
        games = [g for g in (d / "games").iterdir() if g.is_dir()] if (d / "games").is_dir() else []
        return bool(games) and all((g / "result.json").exists() for g in games)
    return (d / "result.json").exists()


def tournament_id(d: Path) -> str | None:
    """The leaderboard id of the tournament in ``d``, read from a game's ``game_id``
    (``<id>-g<index>``, ``eval/runs/wis_tournament.py``), or None."""
    for g in sorted((Path(d) / "games").glob("g*")):
        c = _read(g / "config.json")
        if isinstance(c, dict) and "-g" in str(c.get("game_id", "")):
            return str(c["game_id"]).rsplit("-g", 1)[0]
    return None


def filter_runs(runs: list[Run], kind: str = "", model: str = "", agent: str = "", nested: bool = False) -> list[Run]:
    """The runs matching every given filter (``agent``: a substring of one of its agents,
    case-insensitive; ``model``: one of the models its seats used, :attr:`Run.models`, exactly).
    Without any filter only top-level runs are listed unless ``nested``; with one, nested runs
    (games of a tournament...) match too."""
    def ok(r: Run) -> bool:
        return ((not kind or r.kind == kind) and (not model or model.strip() in r.models)
                and (not agent or any(agent.lower() in a.lower() for a in r.agents)))
    hits = [r for r in runs if ok(r)]
    if nested or kind or model or agent:
        return hits
    return [r for r in hits if r.parent is None]


#: File names a Who-is-Spy leaderboard database may have (``mas spy tournament --db FILE``).
DB_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def is_leaderboard_db(path: Path) -> bool:
    """``path`` is an SQLite file with the leaderboard's tables (opened read-only, never created,
    no ``-wal``/``-shm`` left beside it: :func:`eval.reports.wis_leaderboard.connect_read_only`;
    a murder mystery's ``checkpoints.sqlite`` is not one)."""
    import sqlite3
    from contextlib import closing

    from eval.reports.wis_leaderboard import connect_read_only
    try:
        with closing(connect_read_only(path)) as conn:
            names = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except (sqlite3.Error, OSError, ValueError):
        return False
    return {"tournaments", "games", "players"} <= names


def find_leaderboards(root: Path) -> list[Path]:
    """Every leaderboard database under ``root`` (symlinks not followed, never outside ``root``),
    in path order."""
    root = Path(root).resolve()
    out: list[Path] = []

    def walk(d: Path, level: int) -> None:
        try:
            entries = sorted(d.iterdir())
        except OSError:
            return
        for p in entries:
            if p.is_symlink():
                continue
            if p.is_dir() and p.name not in _SKIP and level < MAX_DEPTH:
                walk(p, level + 1)
            elif p.is_file() and p.suffix in DB_SUFFIXES and p.name != "checkpoints.sqlite" and is_leaderboard_db(p):
                out.append(p)

    walk(root, 0)
    return out
