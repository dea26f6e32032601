"""The run directories under ``--runs``: what each is, and paths that never leave ``--runs``.

A run directory is what a command writes (README, "What a run writes"). Its kind is read from
its files, as each runner writes them:

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
==================  ===========================================================================

Every path the web app is given is resolved with :func:`confine` first: symbolic links are
followed, and anything that is not ``--runs`` or inside it is refused.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

GAME_KINDS = ("mmg", "wis", "magic")
#: Kinds in the order the runs list offers them as filters.
KINDS = ("mmg", "wis", "magic", "wellplay-eval", "wellplay-compare", "magic-bench", "ablation",
         "wis-tournament", "wis-experiment")
#: Folders never descended into while scanning (they hold no run of their own).
_SKIP = {"human", "__pycache__", ".git"}
MAX_DEPTH = 8


class OutsideRuns(PermissionError):
    """A path that resolves outside ``--runs`` (through ``..``, an absolute path or a symlink)."""


def confine(root: Path, rel: str | os.PathLike[str]) -> Path:
    """``root / rel`` with symlinks resolved, if it is ``root`` or inside it.

    Args:
        root: the ``--runs`` directory (resolved here too).
        rel: a path relative to ``root`` as the URL gives it (may hold ``..``, start with ``/``).

    Raises:
        OutsideRuns: the resolved path is outside ``root`` (the web app answers 403).
    """
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


def detect_kind(d: Path) -> str | None:
    """The kind of run in ``d`` (see the module table), or None when ``d`` is not a run."""
    cfg = _read(d / "config.json") if (d / "config.json").is_file() else None
    if isinstance(cfg, dict):
        k = cfg.get("kind")
        if k in ("mmg", "wis", "magic", "wellplay-eval", "wellplay-compare"):
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
        date: modification time of its ``config.json`` (else the folder), local time text.
        mtime: the same as Unix seconds (for sorting).
        model: the model spec, or ``""``. agents: agent specs / methods it ran.
        headline: a few numbers in words (outcome, score with interval, progress...).
        finished: its ``result.json`` exists. parent: ``rel`` of the run it is part of, or None.
        depth: how many runs it is nested in.
    """

    rel: str
    kind: str
    date: str
    mtime: float
    model: str = ""
    agents: list[str] = field(default_factory=list)
    headline: str = ""
    finished: bool = False
    parent: str | None = None
    depth: int = 0

    @property
    def is_game(self) -> bool:
        return self.kind in GAME_KINDS


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
            kind = detect_kind(sub)
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


def _date(path: Path) -> tuple[str, float]:
    p = path / "config.json" if (path / "config.json").exists() else path
    t = p.stat().st_mtime
    return datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M"), t


def _pct(x: Any) -> str:
    return "-" if not isinstance(x, (int, float)) else f"{100 * x:.1f} %"


def _iv(iv: Any) -> str:
    if not isinstance(iv, dict) or iv.get("low") is None:
        return ""
    return f" [{100 * iv['low']:.1f}, {100 * iv['high']:.1f}] (n={iv.get('n')})"


def _uniq(xs) -> list[str]:
    return list(dict.fromkeys(str(x) for x in xs if x))


def describe(root: Path, d: Path, kind: str, parent: str | None = None, depth: int = 0) -> Run:
    """The :class:`Run` of directory ``d`` of kind ``kind`` (read from its files; missing or
    malformed files give empty fields, never an error)."""
    cfg = _read(d / "config.json") or {}
    res = _read(d / "result.json")
    date, mtime = _date(d)
    run = Run(rel=relpath(root, d), kind=kind, date=date, mtime=mtime, model=str(cfg.get("model") or ""),
              finished=isinstance(res, dict), parent=parent, depth=depth)
    res = res if isinstance(res, dict) else {}
    try:
        _fill(run, kind, cfg, res, d)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        run.headline = run.headline or "(result not readable)"
    return run


def _fill(run: Run, kind: str, cfg: dict, res: dict, d: Path) -> None:
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
        run.headline = (f"{cfg.get('scenario')} setting {cfg.get('setting_id')}, challenger as {cfg.get('side')}; "
                        + (f"outcome {json.dumps(oc, ensure_ascii=False)[:80]}" if oc is not None else "playing"))
    elif kind == "wellplay-eval":
        run.agents = _uniq([cfg.get("method"), cfg.get("agent")])
        if res:
            run.headline = (f"{cfg.get('method')}: weighted {_pct(res.get('weighted_score'))}{_iv(res.get('interval'))}; "
                            + ", ".join(f"{c} {_pct(a)}" for c, a in (res.get("accuracy") or {}).items()))
    elif kind == "wellplay-compare":
        run.agents = _uniq(cfg.get("methods") or [])
        table = res.get("table") or []
        best = sorted(table, key=lambda t: -(t.get("weighted_score") or 0))[:3]
        run.headline = ("best: " + ", ".join(f"{t['method']} {_pct(t.get('weighted_score'))}" for t in best)) if best else ""
        run.headline += f" ({progress(d, kind)['text']})"
    elif kind == "magic-bench":
        run.agents = _uniq([cfg.get("challenger"), cfg.get("defender")])
        m = res.get("metrics") or {}
        run.headline = (f"win rate {_pct(m.get('win_rate'))}; " + ", ".join(
            f"{k.replace('_', ' ')} {_pct(v)}" for k, v in m.items() if k != "win_rate")) if m else ""
        run.headline += f" ({progress(d, kind)['text']})"
    elif kind == "ablation":
        base = cfg.get("base", "")
        run.agents = _uniq([base] + [f"{base}+{b}" for b in cfg.get("blocks") or []])
        summary = str(res.get("summary") or "")
        run.headline = (summary[:220] + ("…" if len(summary) > 220 else "")) if summary else progress(d, kind)["text"]
    elif kind == "wis-tournament":
        cfgs = [_read(g / "config.json") or {} for g in sorted((d / "games").iterdir()) if g.is_dir()]
        run.agents = _uniq(a for c in cfgs for a in c.get("agents") or [])
        run.model = _uniq(c.get("model") for c in cfgs)[0] if cfgs else ""
        run.finished = not progress(d, kind).get("running")
        run.headline = progress(d, kind)["text"]
    elif kind == "wis-experiment":
        run.agents = _uniq([res.get("subject"), res.get("others")])
        rows = res.get("rows") or []
        run.headline = f"{res.get('kind')}: " + "; ".join(
            f"{r.get('arm')} win {_pct(r.get('win_rate'))}, vote acc {_pct(r.get('vote_accuracy'))}, "
            f"foul {_pct(r.get('foul_rate'))}" for r in rows)


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
        running = [p.parent.relative_to(d).as_posix() for p in sorted(d.rglob("config.json"))
                   if p.parent != d and not (p.parent / "result.json").exists()]
        text = f"{len(done)} of {len(benches)} benches finished" + (f"; running {running[-1]}" if running else "")
        return {"done": len(done), "total": len(benches), "running": running, "text": text}
    if kind == "wellplay-compare":
        cells = d / "cells"
        done = len(list(cells.glob("*/*/seed*/eval/result.json"))) if cells.is_dir() else 0
        total = len(cfg.get("methods") or []) * len(cfg.get("scripts") or []) * int(cfg.get("seeds") or 1) or None
        running = [p.parent.relative_to(d).as_posix() for p in sorted(cells.rglob("config.json"))
                   if not (p.parent / "result.json").exists()] if cells.is_dir() else []
    else:
        games = sorted(g for g in (d / "games").iterdir() if g.is_dir()) if (d / "games").is_dir() else []
        done = sum(1 for g in games if (g / "result.json").exists())
        running = [g.relative_to(d).as_posix() for g in games if not (g / "result.json").exists()]
        res = _read(d / "result.json") or {}
        total = db_total if db_total is not None else (len(res.get("games") or []) or None)
    what = {"wis-tournament": "games", "magic-bench": "games", "wellplay-compare": "cells"}.get(kind, "parts")
    text = f"{done} of {total} {what} finished" if total else f"{done} {what} finished"
    if running:
        text += f"; playing {running[-1]}"
    return {"done": done, "total": total, "running": running, "text": text}


def _bench_done(d: Path) -> bool:
    """An ablation bench is done when it has sub-runs and every one of them has its result."""
    if not d.is_dir():
        return False
    subs = [p.parent for p in d.rglob("config.json")]
    return bool(subs) and all((p / "result.json").exists() for p in subs)


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
    ``model``: a substring of its model, case-insensitive). Without any filter only top-level
    runs are listed unless ``nested``; with one, nested runs (games of a tournament...) match too."""
    def ok(r: Run) -> bool:
        return ((not kind or r.kind == kind) and (not model or model.lower() in r.model.lower())
                and (not agent or any(agent.lower() in a.lower() for a in r.agents)))
    hits = [r for r in runs if ok(r)]
    if nested or kind or model or agent:
        return hits
    return [r for r in hits if r.parent is None]
