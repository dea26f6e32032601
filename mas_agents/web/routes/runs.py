"""The runs list (``/``), one run's page (``/run/{rel}``), its progress (``/api/progress/{rel}``)
and its check on its recording (``POST /verify/{rel}``: ``mas rerun``, issue 50)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse

from mas_agents.game import contract as game_registry
from mas_agents.replayed_model import replayable
from mas_agents.web import runs as rs
from mas_agents.web import paths
from mas_agents.game import experiments
from mas_agents.web import run_kinds
from mas_agents.web.evaluation import eval_progress
from mas_agents.web.site import HERE, RAW_TYPES, Site, as_dict, get_site
from mas_agents.rundir import RunDir

router = APIRouter()


@router.get("/favicon.ico", include_in_schema=False)
def favicon():
    # pages name /static/favicon.svg; a browser asks for /favicon.ico on files (a JSON, a PNG)
    return FileResponse(HERE / "static" / "favicon.svg", media_type="image/svg+xml",
                        headers={"Cache-Control": "max-age=86400"})


@router.get("/", response_class=HTMLResponse)
def index(kind: str = "", model: str = "", agent: str = "", nested: int = 0, site: Site = Depends(get_site)):
    every = rs.scan(site.root)
    shown = rs.filter_runs(every, kind=kind, model=model, agent=agent, nested=bool(nested))
    for r in shown:
        rk = experiments.find(r.kind)
        if rk is not None and rk.evaluation and not r.finished and not r.headline:
            r.headline = eval_progress(site.root / r.rel, site.data_root)["text"]   # "k of N answered"
    models = sorted({m for r in every for m in r.models})
    # a game being played with a person in it is not offered as a zip (it would answer 403)
    withheld = {r.rel for r in shown if r.state == "running" and site.withheld(site.root / r.rel) is not None}
    return site.page("index.html", runs=shown, total=len(every), kinds=run_kinds.all_kinds(), models=models, withheld=withheld,
                     f={"kind": kind, "model": model, "agent": agent, "nested": nested})


def _fork_of(site: Site, cfg: dict[str, Any]) -> dict[str, Any] | None:
    """A fork's lineage from its ``config.json`` ``forked_from`` (``mas fork``, issue 59): its parent
    (``rel`` under ``--runs``, or None when the parent is elsewhere), the fork point and the seats
    that changed, as ``"Player 4 → plain+reasoning"``; None for a run that is no fork."""
    ff = cfg.get("forked_from")
    if not isinstance(ff, dict):
        return None
    seats = ff.get("seats") if isinstance(ff.get("seats"), dict) else {}
    return {"parent": site.run_link(ff.get("run")), "parent_name": str(ff.get("run") or "?"), "at": ff.get("at"),
            "seats": [f"{s} → {v.get('spec', '?') if isinstance(v, dict) else v}" for s, v in seats.items()]}


@router.get("/run/{rel:path}", response_class=HTMLResponse)
def run_page(rel: str, site: Site = Depends(get_site)):
    d = site.locate(rel)
    kind = rs.kind_of(d)
    if kind is None:
        inside = [r for r in rs.scan(d)] if d.is_dir() else []
        return site.page("error.html", 404, title="Not a run", message=f"{rel or '.'} holds no run"
                         + (f" (it holds {len(inside)} runs: see the list)" if inside else ""))
    run = rs.describe(site.root, d, kind)
    rk = experiments.find(kind)
    evaluated_by = run.is_game and game_registry.view_of(kind).evaluations
    every = rs.scan(site.root) if not run.is_game or evaluated_by else []
    children = [r for r in every if r.parent == run.rel] if not run.is_game else []
    evaluation = rk is not None and rk.evaluation
    prog = (site.progress(d, kind) if (rk is not None and rk.composite) or (evaluation and not run.finished)
            else None)
    headline = run.headline
    if prog and prog["text"] in headline:
        # the headline of a composite run ends with its progress: said once, beside the bar
        headline = headline.replace(f" ({prog['text']})", "").replace(prog["text"], "").strip(" ;")
    # a link (a symlink) leading out of --runs is not listed: /raw refuses it (issue 57, E21)
    files = sorted(p.name for p in d.iterdir() if p.is_file() and p.suffix in RAW_TYPES and _inside(site.root, p))
    figures = [f for f in files if f.endswith(".png")]
    cfg = as_dict(paths.read_json(RunDir(d).config))
    leaderboard = rk is not None and rk.leaderboard
    return site.page("run.html", run=run, headline=headline, standings=standings(site, d) if leaderboard else None, children=children, progress=prog, files=files,
                     figures=figures, leaderboard=leaderboard, board=site.board_link(d) if leaderboard else None,
                     has_events=RunDir(d).events.exists(), has_calls=RunDir(d).calls.exists(),
                     has_report=RunDir(d).report.exists(), seats=site.seats(d), withheld=site.withheld(d),
                     has_eval=evaluation, evaluated=site.run_link(cfg.get("run")) if evaluation else None,
                     evaluations=_evaluations(site, d, every) if evaluated_by else [],
                     fork=_fork_of(site, cfg),
                     replay=verifiable(d, kind, run.state, run.reason))   # (whether mas rerun can check it, why)


def standings(site: Site, d: Path) -> dict | None:
    """The standings of the tournament in ``d`` over its games stored so far (a stopped one's
    finished games too, issue 57, E17): ``{"games": n, "rows": agent_metrics rows}`` from the
    leaderboard database that holds it (its board's ``metrics``,
    :attr:`mas_agents.game.experiments.ExperimentDef.board`: per agent, its seats over those games,
    wins, average score, civilian votes and fouls), or None when no database holds it."""
    tid = run_kinds.leaderboard_id(d)
    boards = experiments.board()
    if not tid or boards is None:
        return None
    for _, path in site.databases():
        board = boards.open(path)
        if board.config(tid) is not None:
            return {"games": len(board.finished_indices(tid)), "rows": board.metrics(tid)}
    return None


def _inside(root: Path, p: Path) -> bool:
    """``p`` resolves to a place under ``root`` (a symlink may lead elsewhere)."""
    try:
        return root in p.resolve().parents
    except (OSError, RuntimeError):
        return False


def verifiable(d: Path, kind: str, state: str | None = None, reason: str = "") -> tuple[bool, str]:
    """Whether ``POST /verify`` may re-execute the run in ``d``, and why not: its recording must be
    complete (:func:`mas_agents.replayed_model.replayable`, issue 50) and the run finished: a running or
    stopped run has no result for the rerun to be compared with (issue 57, E11)."""
    if state is None:
        state, reason = run_kinds.run_state(d, kind)
    if state == "running":
        return False, "it is still running; it can be verified when it has finished"
    if state != "finished":
        return False, f"it stopped before its end ({reason or 'no result was written'}), so there is no result to compare with"
    return replayable(d)


def _evaluations(site: Site, d: Path, every: list[rs.Run]) -> list[rs.Run]:
    """The evaluations under ``--runs`` whose ``config.json`` names the game in ``d``."""
    real = d.resolve()
    out = []
    for r in every:
        rk = experiments.find(r.kind)
        if rk is not None and rk.evaluation:
            named = as_dict(paths.read_json(RunDir(site.root / r.rel).config)).get("run")
            if named and site.run_link(named) == paths.relpath(site.root, real):
                out.append(r)
    return out


@router.get("/api/progress/{rel:path}")
def api_progress(rel: str, site: Site = Depends(get_site)):
    d = site.locate(rel)
    return JSONResponse(site.progress(d, run_kinds.detect_kind(d) or ""))


#: Seconds a ``POST /verify`` waits for ``mas rerun`` (a murder mystery's rerun loads the
#: retrieval embedder: ~20 s on the shared project machine, benchmarks/results/rerun.md).
VERIFY_TIMEOUT_S = 600
#: One ``POST /verify`` at a time per server: each holds a worker thread for up to
#: :data:`VERIFY_TIMEOUT_S` and starts a child process (the project machine has 2 cores shared
#: with the games the server plays). Taken without blocking: a second one answers 409.
VERIFYING = threading.BoundedSemaphore(1)


@router.get("/verify/{rel:path}", response_class=HTMLResponse)
def verify_form(rel: str, site: Site = Depends(get_site)):
    """What ``POST /verify/{rel}`` does, and its button (a GET never re-executes anything)."""
    d = site.locate(rel)
    site.check_open(d)
    ok, why = verifiable(d, rs.kind_of(d) or "")
    if not ok:
        return site.page("error.html", 409, title="Not replayable", message=f"{rel}: {why}")
    return site.page("verify.html", rel=rel, verdict=None, rc=None, output="")


@router.post("/verify/{rel:path}", response_class=HTMLResponse)
def verify(rel: str, site: Site = Depends(get_site)):
    """Re-execute the run on its recorded prompts and show whether it comes out identical.

    Runs ``mas rerun RUN_DIR`` in a child process (its replay replaces every model spec
    process-wide, which must not reach the games this server plays) into a temporary directory
    (nothing under ``--runs`` is written), with ``--data-dir`` of this server. Answers 409 for a
    run that cannot be replayed or while another verification runs (:data:`VERIFYING`), 504
    after :data:`VERIFY_TIMEOUT_S`; else the page with the command's exit code (0 identical,
    1 a difference, 2 refused) and its output.
    """
    d = site.locate(rel)
    site.check_open(d)
    ok, why = verifiable(d, rs.kind_of(d) or "")
    if not ok:
        return site.page("error.html", 409, title="Not replayable", message=f"{rel}: {why}")
    if not VERIFYING.acquire(blocking=False):
        return site.page("error.html", 409, title="A verification is running",
                         message=f"{rel}: a verification is running on this server; try again when it has finished")
    try:
        return _verify(d, rel, site)
    finally:
        VERIFYING.release()


def _verify(d: Path, rel: str, site: Site):
    """``mas rerun`` of ``d`` in a child process (:func:`verify`, which holds :data:`VERIFYING`)."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="mas-verify-") as tmp:
        cmd = [sys.executable, "-c", "from mas_agents.cli import app; app()", "rerun", str(d), "--out", tmp]
        if site.data_root is not None:
            cmd += ["--data-dir", str(site.data_root)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=VERIFY_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return site.page("error.html", 504, title="Verification too long",
                             message=f"{rel}: mas rerun did not finish in {VERIFY_TIMEOUT_S} s; run it from a shell")
    verdict = {0: "identical", 1: "differs"}.get(proc.returncode, "could not be re-executed")
    # the rerun's own directory is removed with the temporary one: its line is not shown
    output = "\n".join(x for x in (proc.stdout + proc.stderr).strip().splitlines()
                       if not x.strip().startswith("the rerun is kept in "))
    return site.page("verify.html", rel=rel, verdict=verdict, rc=proc.returncode, output=output)
