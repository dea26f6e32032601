"""The kinds of run directory ``mas serve`` knows, in one table: every game registered in
:mod:`mas_agents.game.contract` (a single game; its ``GameDef`` gives its headline, seats and replay), and the
runs of many games or of no game (:data:`RUN_KINDS`: tournaments, comparisons, benches,
ablations, evaluations, reproductions), each with how it is recognised, its runs-list line, what
its progress counts and which pages it has. A page asks this table (:func:`run_kind`) or the game
registry; no page branches on a kind's name.

A run's kind is read from its files, as each runner writes them (newer runs name it in
``config.json`` ``kind``; the other rules read runs written before):

==================  ===========================================================================
kind                how it is recognised (writer)
==================  ===========================================================================
a game              ``config.json`` ``kind`` a game registered in :mod:`mas_agents.game.contract` (``mmg``,
                    ``wis``, ``magic`` and any other; written by :func:`mas_agents.game.runner.run`)
``wellplay-eval``   ``config.json`` ``kind: "wellplay-eval"`` (``eval/wellplay/run.py``)
``wellplay-compare`` ``config.json`` ``kind: "wellplay-compare"`` (``eval/wellplay/compare.py``)
``magic-bench``     ``config.json`` with ``challenger`` and ``scenarios`` (``graphs/magic/bench.py``)
``ablation``        ``config.json`` with ``base`` and ``benches`` (``eval/ablate/grid.py``)
``wis-tournament``  no ``config.json``, a ``games/`` folder of games (``graphs/wis/tournament.py``)
``wis-experiment``  ``result.json`` with ``rows`` and ``kind`` attack/defense/reasoning
                    (``mas spy experiment``)
``reproduce``       ``config.json`` ``kind: "reproduce"`` (``eval/reproduce/common.py``)
``incomplete``      only a ``run.lock`` (:data:`UNCONFIGURED`): a run that failed, or is starting,
                    before it wrote ``config.json`` (listed with the marker's error)
==================  ===========================================================================

Over 400 lines because it is one idea: what each kind of run is (how it is recognised, its line,
its state and its progress); split, the rules of one kind would be spread over several files.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from mas_agents.game import contract as game_registry
from mas_agents.game.view import SeatInfo
from mas_agents.graphs.magic.metrics import COORDINATION_LABELS, undefined_reason
from mas_agents.eval.wellplay.compare_table import SCORE_AGGREGATION as COMPARE_AGGREGATION
from mas_agents.graphs.magic.bench_report import N_UNITS as MAGIC_N_UNITS, lower_first
from mas_agents.stats import n_text, wilson
from mas_agents.rundir import marker_process, read_run_marker
from mas_agents.web.paths import read_json as _read
from mas_agents.web.paths import recorded_run

#: The kind of a folder holding only a ``run.lock``: a run that failed (or is starting) before it
#: wrote its ``config.json`` (a game started from ``/play`` whose model could not be built). It is
#: listed, with the marker's error as its reason, so that a start that failed is not invisible.
UNCONFIGURED = "incomplete"


@dataclass(frozen=True)
class RunKind:
    """A kind of run that is not one game (its runs hold many games, or answer questions).

    Attributes:
        name: the kind (``config.json``'s ``kind`` where the runner writes one).
        fill: ``fill(run, config, result, d)``: sets the :class:`mas_agents.web.runs.Run`'s
            ``agents`` and ``headline`` (and ``models``/``finished`` where the run's own record
            lacks them) from its ``config.json``, ``result.json`` (``{}`` when missing) and folder.
        recognize: ``recognize(config, result, d) -> bool`` for runs whose ``config.json``
            names no kind (None: only by its ``kind``); ``config``/``result`` are None when missing.
        parts: what its progress counts (``games``, ``cells``...); composite: its run page shows
            that progress (:func:`progress`).
        own_result: it writes a ``result.json`` when it ends (a tournament does not: it is
            finished when each of its games is).
        evaluation: it answers questions (its progress is "k of N answered", it has the
            evaluation page ``/eval``, its replay shows every answer).
        replay: its ``events.jsonl`` is replayed (the calls pages link the replay).
        leaderboard: its games are in a leaderboard database (its run page links it).
        title: the replay's heading (else the game's title).
        seats: ``seats(events, config, result) -> mas_agents.game.view.SeatInfo``, the players panel of
            its replay (None: the game's).
    """

    name: str
    fill: Callable[[Any, dict, dict, Path], None]
    recognize: Callable[[Any, Any, Path], bool] | None = None
    parts: str = "parts"
    composite: bool = False
    own_result: bool = True
    evaluation: bool = False
    replay: bool = False
    leaderboard: bool = False
    title: str = ""
    seats: Callable[[list, dict, dict], Any] | None = None


def _pct(x: Any) -> str:
    return "-" if not isinstance(x, (int, float)) else f"{100 * x:.1f} %"


def _iv(iv: Any, n_unit: str = "") -> str:
    if not isinstance(iv, dict) or iv.get("low") is None:
        return ""
    n = n_text(iv["n"], n_unit) if isinstance(iv.get("n"), int) else iv.get("n")
    return f" [{100 * iv['low']:.1f}, {100 * iv['high']:.1f}] (n={n})"


def _kn(r: dict, num: str, den: str, value: Any) -> str:
    """A rate with its n and Wilson 95 % interval from the row's counts (the bare rate when the
    row has no counts)."""
    k, n = r.get(num), r.get(den)
    if not isinstance(k, int) or not isinstance(n, int) or n <= 0 or not 0 <= k <= n:
        return _pct(value)
    return wilson(k, n).fmt()


def _score_iv(x: Any, iv: Any, n_unit: str = "") -> str:
    """MAgIC Deception (a rate plus 0.25 × a rate, range [0, 1.25]) on the scale of MAgIC's
    tables (Table 1/4: percent, one decimal, so up to 125.0), with its interval and n: the
    same scale as the reports'."""
    if not isinstance(x, (int, float)):
        return "-"
    return f"{_pct(x)}{_iv(iv, n_unit)}"


def uniq(xs) -> list[str]:
    """The non-empty items of ``xs`` as text, each once, in order."""
    return list(dict.fromkeys(str(x) for x in xs if x))


def run_models(cfg: dict) -> list[str]:
    """The model specs a run's seats used: ``config.json`` ``models`` (the run-record contract:
    sorted distinct specs), else ``[model]`` for a run written before it (nothing for none)."""
    ms = cfg.get("models")
    if isinstance(ms, list) and ms:
        return [str(m) for m in ms if m]
    m = cfg.get("model")
    return [str(m)] if m else []


# ------------------------------------------------------------------ each kind's runs-list line
def _eval_fill(run: Any, cfg: dict, res: dict, d: Path) -> None:
    run.agents = uniq([cfg.get("method"), cfg.get("agent")])
    if cfg.get("method") == "session":   # the game's characters answered: its agent, not "session"
        root = d.resolve().parents[len(Path(run.rel).parts) - 1]   # --runs: d is root / run.rel
        game = recorded_run(root, cfg.get("run"))     # the game it evaluated, found as its page links it
        g = _read(game / "config.json") if game is not None else None
        run.agents = uniq([g.get("agent")]) if isinstance(g, dict) else []
    if res:
        counts = res.get("counts") or {}
        chance = ((res.get("chance") or {}).get("always_a") or {}).get("weighted_score")
        run.headline = (f"{cfg.get('method')}: weighted {_pct(res.get('weighted_score'))}{_iv(res.get('interval'))}; "
                        + ", ".join(f"{c} {_kn(counts.get(c) or {}, 'correct', 'n', a)}"
                                    for c, a in (res.get("accuracy") or {}).items())
                        + (f"; always-a {_pct(chance)}" if isinstance(chance, (int, float)) else ""))


def _compare_fill(run: Any, cfg: dict, res: dict, d: Path) -> None:
    run.agents = uniq(cfg.get("methods") or [])
    table = res.get("table") or []
    best = sorted(table, key=lambda t: -(t.get("weighted_score") or 0))[:3]
    # the weighted score's aggregation named: a comparison's is the plain mean over scripts, not
    # the App. B.3 pooled one a reproduce run leads with
    run.headline = (f"best (weighted, {COMPARE_AGGREGATION}): " + ", ".join(f"{t['method']} {_pct(t.get('weighted_score'))}{_iv(t.get('weighted_score_interval'))}"
                                         for t in best)) if best else ""
    run.headline += f" ({progress(d, run.kind)['text']})"


def _bench_fill(run: Any, cfg: dict, res: dict, d: Path) -> None:
    run.agents = uniq([cfg.get("challenger"), cfg.get("defender")])
    m = res.get("metrics") or {}
    ivs = res.get("intervals") or {}
    units = MAGIC_N_UNITS   # what each n counts (votes, settings...), as in the bench's report.md
    # Coordination has two denominators (graphs/magic/metrics.py): each is named with its own, in the
    # words of every report (COORDINATION_LABELS, lower-case like the line's other names), and the
    # one ÷ agreed games, undefined with no agreed game, says so
    named = {k: lower_first(label) for k, label in COORDINATION_LABELS.items()}

    def value(k: str, v: Any) -> str:
        if k == "deception":
            return _score_iv(v, ivs.get(k), units.get(k, ""))
        why = undefined_reason(k, res.get("counts")) if v is None else "no data"
        return f"{_pct(v)}{_iv(ivs.get(k), units.get(k, ''))}" if why == "no data" else f"undefined: {why}"
    run.headline = (f"win rate {_pct(m.get('win_rate'))}{_iv(ivs.get('win_rate'), units['win_rate'])}; " + ", ".join(
        f"{named.get(k) or k.replace('self_', 'self-').replace('_', ' ')} {value(k, v)}"
        for k, v in m.items() if k != "win_rate")) if m else ""
    run.headline += f" ({progress(d, run.kind)['text']})"


def _ablation_fill(run: Any, cfg: dict, res: dict, d: Path) -> None:
    base = cfg.get("base", "")
    blocks = list(cfg.get("blocks") or [])   # every subset of the blocks on the base (eval/ablate/grid.py variants)
    run.agents = uniq(res.get("variants") or ["+".join([base, *c]) for k in range(len(blocks) + 1)
                                              for c in itertools.combinations(blocks, k)])
    summary = str(res.get("summary") or "")
    run.headline = _whole_sentences(summary) if summary else progress(d, run.kind)["text"]


def _whole_sentences(text: str, n: int = 600) -> str:
    """``text`` whole when it has at most ``n`` characters, else its sentences that fit in ``n``
    and "…": a headline cut mid-sentence (at 220 characters) lost the ablation's conclusion
    (issue 57, E15)."""
    if len(text) <= n:
        return text
    cut = text.rfind(". ", 0, n)
    return (text[:cut + 1] if cut > 0 else text[:n].rsplit(" ", 1)[0]) + " …"


def _tournament_fill(run: Any, cfg: dict, res: dict, d: Path) -> None:
    cfgs = [_read(g / "config.json") or {} for g in sorted((d / "games").iterdir()) if g.is_dir()]
    run.agents = uniq(a for c in cfgs for a in c.get("agents") or [])
    run.models = run.models or sorted(set(m for c in cfgs for m in run_models(c)))
    run.model = ", ".join(run.models)
    planned = cfg.get("games")   # the tournament's own config.json (newer runs) plans its games
    prog = progress(d, run.kind, db_total=planned if isinstance(planned, int) and not isinstance(planned, bool) else None)
    run.finished = not prog.get("running") and not prog.get("stopped")
    run.headline = prog["text"]


def _reproduce_fill(run: Any, cfg: dict, res: dict, d: Path) -> None:
    pool = cfg.get("pool") if isinstance(cfg.get("pool"), list) else []
    run.agents = uniq([cfg.get("model"), *pool, cfg.get("others")])
    if not run.models:
        run.models = uniq(pool)
        run.model = ", ".join(run.models)
    run.headline = (str(res.get("headline") or f"{cfg.get('paper')}: finished"
                        + (" (partial)" if res.get("partial") else "")) if res else "playing")


def _experiment_fill(run: Any, cfg: dict, res: dict, d: Path) -> None:
    run.agents = uniq([res.get("subject"), res.get("others")])
    rows = res.get("rows") or []
    run.headline = f"{res.get('kind')}: " + "; ".join(
        f"{r.get('arm')} win {_kn(r, 'wins', 'games', r.get('win_rate'))}, "
        f"vote acc {_kn(r, 'correct_votes', 'votes_cast_as_civilian', r.get('vote_accuracy'))}, "
        f"foul {_kn(r, 'fouls', 'descriptions', r.get('foul_rate'))}" for r in rows)


def _eval_seats(events: list, cfg: dict, res: dict) -> Any:
    """A WellPlay evaluation's panel: the characters that answered (the ``mcq`` events' actors),
    each with the evaluated method or agent; nothing is hidden."""
    names = list(dict.fromkeys(str(e.get("actor")) for e in events if e.get("kind") == "mcq" and e.get("actor")))
    who = str(cfg.get("agent") or cfg.get("method") or "")
    return SeatInfo(names=names, agents={n: who for n in names}, roles={n: "evaluated" for n in names})


def _is_tournament(cfg: Any, res: Any, d: Path) -> bool:
    """No ``config.json`` and a ``games/`` folder whose first games are registered games."""
    games = d / "games"
    if cfg is not None or not games.is_dir():
        return False
    for g in sorted(games.iterdir())[:3]:
        c = _read(g / "config.json")
        if isinstance(c, dict) and game_registry.find(c.get("kind")) is not None:
            return True
    return False


#: The kinds of run that are not one game, in the order the runs list offers them as filters.
RUN_KINDS: dict[str, RunKind] = {k.name: k for k in (
    RunKind("wellplay-eval", _eval_fill, evaluation=True, replay=True, title="WellPlay evaluation", seats=_eval_seats),
    RunKind("wellplay-compare", _compare_fill, parts="cells", composite=True),
    RunKind("magic-bench", _bench_fill, parts="games", composite=True,
            recognize=lambda cfg, res, d: isinstance(cfg, dict) and "challenger" in cfg and "scenarios" in cfg),
    RunKind("ablation", _ablation_fill, composite=True,
            recognize=lambda cfg, res, d: isinstance(cfg, dict) and "base" in cfg and "benches" in cfg),
    RunKind("wis-tournament", _tournament_fill, parts="games", composite=True, own_result=False, leaderboard=True,
            recognize=_is_tournament),
    RunKind("wis-experiment", _experiment_fill,
            recognize=lambda cfg, res, d: (isinstance(res, dict) and "rows" in res
                                           and res.get("kind") in ("attack", "defense", "reasoning"))),
    RunKind("reproduce", _reproduce_fill),
)}


#: The kinds recognised by their files, in the order tried.
_RECOGNIZED_IN_ORDER = ("ablation", "magic-bench", "wis-experiment", "wis-tournament")


def run_kind(kind: Any) -> RunKind | None:
    """The :class:`RunKind` named ``kind``, or None (a game, or no known kind)."""
    return RUN_KINDS.get(kind) if isinstance(kind, str) else None


def is_game(kind: Any) -> bool:
    """``kind`` is a game registered in :mod:`mas_agents.game.contract` (a run of one game)."""
    return game_registry.find(kind) is not None


def all_kinds() -> tuple[str, ...]:
    """The kinds the runs list offers as filters: the built-in games, the other kinds of
    :data:`RUN_KINDS`, then every other registered game."""
    games = game_registry.kinds()
    built_in = [k for k in games if k in game_registry.BUILTIN]
    return tuple(built_in) + tuple(RUN_KINDS) + tuple(k for k in games if k not in built_in)


def detect_kind(d: Path) -> str | None:
    """The kind of run in ``d`` (see the module table), or None when ``d`` is not a run."""
    d = Path(d)
    cfg = _read(d / "config.json") if (d / "config.json").is_file() else None
    k = cfg.get("kind") if isinstance(cfg, dict) else None
    if run_kind(k) is not None or is_game(k):
        return k
    res = _read(d / "result.json") if (d / "result.json").is_file() else None
    for name in _RECOGNIZED_IN_ORDER:   # an experiment may hold a games/ folder: it is tried first
        if RUN_KINDS[name].recognize(cfg, res, d):
            return name
    return None


# ------------------------------------------------------------------ state and progress
#: A run without a process marker (written before markers existed, or by a runner that does not
#: write one) counts as running while one of its files was written less than this many seconds
#: ago: longer than a human seat's default time to answer (120 s) or a slow local model's call.
FRESH_S = 300
#: The files whose age (with the directory's own) tells whether a run without a marker is still
#: being written.
_WRITTEN = ("events.jsonl", "llm_calls.jsonl", "config.json", "human")


def _age(d: Path, deep: bool) -> float | None:
    """Seconds since a file of ``d`` was last written (``deep``: of its sub-runs too), or None."""
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


def _single(kind: str) -> bool:
    """A run of ``kind`` is one game (or a kind not known here): no sub-run to look into."""
    return kind not in RUN_KINDS and kind != UNCONFIGURED


def run_state(d: Path, kind: str) -> tuple[str, str]:
    """``(state, reason)`` of the run in ``d`` of kind ``kind`` (``""``: unknown, read as one
    game): ``finished`` (its result is written), ``running`` (the process in its ``run.lock`` is
    alive on this host: :func:`mas_agents.rundir.marker_process`) or ``stopped`` (a marker whose
    process is gone, or that kept the runner's error). Without a marker: a run of many games with
    a running sub-run is running; otherwise a run is running while a file of it is younger than
    :data:`FRESH_S` seconds, else ``stopped (no process marker)``. A marker of another host (a
    shared disk) is judged by the same age rule."""
    d = Path(d)
    marker = read_run_marker(d)
    rk = run_kind(kind)
    if rk is not None and not rk.own_result:
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
    elif not _single(kind):
        subs = open_games or [p.parent for p in d.glob("*/**/config.json") if not (p.parent / "result.json").exists()]
        for sub in subs[:50]:
            if read_run_marker(sub) is not None and marker_process(read_run_marker(sub))[0]:
                return "running", ""
    age = _age(d, deep=not _single(kind))
    if age is not None and age < FRESH_S:
        return "running", (why + "; " if marker is not None else "no process marker; ") + f"last written {age:.0f} s ago"
    if marker is not None:
        return "stopped", why + f"; nothing written for {FRESH_S} s"
    return "stopped", "no process marker, and nothing written for " + (f"{age / 60:.0f} min" if age else "a while")


def progress(d: Path, kind: str, db_total: int | None = None) -> dict[str, Any]:
    """How far a run of many games is: ``{"done", "total" (None when unknown), "running": [rel
    names of sub-runs with a config but no result yet], "stopped", "text"}``.

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
    what = RUN_KINDS[kind].parts if kind in RUN_KINDS else "parts"
    text = f"{done} of {total} {what} finished" if total else f"{done} {what} finished"
    if running:
        text += f"; playing {running[-1]}"
    elif stopped:
        text += f"; {len(stopped)} stopped before the end"
    return {"done": done, "total": total, "running": running, "stopped": stopped, "text": text}


def _split_open(d: Path, subs: list[Path]) -> tuple[list[str], list[str]]:
    """Unfinished sub-runs of ``d`` as ``(running, stopped)`` rel names (:func:`run_state`)."""
    running, stopped = [], []
    for sub in subs:
        (running if run_state(sub, detect_kind(sub) or "")[0] == "running" else stopped).append(
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
    (``<id>-g<index>``, ``graphs/wis/tournament.py``), or None."""
    for g in sorted((Path(d) / "games").glob("g*")):
        c = _read(g / "config.json")
        if isinstance(c, dict) and "-g" in str(c.get("game_id", "")):
            return str(c["game_id"]).rsplit("-g", 1)[0]
    return None

