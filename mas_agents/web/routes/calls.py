"""A run's model calls (``/calls/{rel}``: filters, search, pages) and one call
(``/calls/{rel}/{call_id}``: the messages as sent, the reply, what it became)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Depends, Query
from fastapi.responses import HTMLResponse

from mas_agents.web import calls as cl
from mas_agents.game import experiments
from mas_agents.web import run_kinds
from mas_agents.web.paths import read_json
from mas_agents.web.site import Site, get_site, not_withheld, query, short
from mas_agents.rundir import RunDir

# nothing of a game being played with a person in it (its seat must not see it): 403
router = APIRouter(dependencies=[Depends(not_withheld)])


def has_replay(kind: str) -> bool:
    """Runs of ``kind`` have a replay (a game, or a run kind whose events are replayed)."""
    rk = experiments.find(kind)
    return run_kinds.is_game(kind) or (rk is not None and rk.replay)


def is_evaluation(kind: str) -> bool:
    """Runs of ``kind`` answer questions (they have the evaluation page)."""
    rk = experiments.find(kind)
    return rk is not None and rk.evaluation


@router.get("/calls/{rel:path}", response_class=HTMLResponse)
def calls_page(rel: str, actor: str = "", phase: str = "", purpose: str = "", failed: int = 0, q: str = "",
               page_no: int = Query(1, alias="page"), site: Site = Depends(get_site)):
    d = site.locate(rel, must_exist=False)
    if not d.is_dir() and "/" in rel.strip("/"):
        # /calls/RUN/CALL_ID: one call's page
        run_rel, call_id = rel.strip("/").rsplit("/", 1)
        return call_page(site, site.locate(run_rel), call_id)
    if not d.exists():
        raise FileNotFoundError(rel)
    log = cl.load_log(d)
    hits = cl.filter_calls(log, actor=actor, phase=phase, purpose=purpose, failed=bool(failed), q=q)
    shown, page_no, pages = cl.paginate(hits, page_no, cl.CALLS_PER_PAGE)
    f = {"actor": actor, "phase": phase, "purpose": purpose, "failed": failed, "q": q}
    kind = run_kinds.detect_kind(d) or ""
    # what the prompts cost and what a prefix cache reused (mas_agents.game.cost.prompt_cost, in result.json)
    cost = ((read_json(RunDir(d).result) or {}).get("llm") or {}).get("prompt_cost")
    return site.page("calls.html", rel=site.rel(d), log=log, calls=shown, n_hits=len(hits), total=log.totals,
                     prompt_cost=cost if isinstance(cost, dict) and cost.get("calls") else None,
                     columns=cl.columns(log.calls), actors=cl.choices(log.calls, "actor"),
                     phases=cl.choices(log.calls, "phase"), purposes=cl.choices(log.calls, "purpose"), f=f,
                     page_no=page_no, pages=pages, per=cl.CALLS_PER_PAGE, query=query(f), searched=bool(q.strip()),
                     kind=kind, has_replay=has_replay(kind), has_eval=is_evaluation(kind))


def call_page(site: Site, d: Path, call_id: str) -> HTMLResponse:
    """The page of call ``call_id`` of the run in ``d`` (404 page when the log has no such call)."""
    log = cl.load_log(d)
    ids = [str(c.get("call_id")) for c in log.calls]
    rel = site.rel(d)
    if call_id not in ids:
        return site.page("error.html", 404, title="No such call",
                         message=f"The run {rel or '.'} has no model call {short(call_id, 80)!r} "
                                 f"(its call log holds {len(ids)} calls).")
    i = ids.index(call_id)
    c = log.calls[i]
    rec = log.prompts.get(call_id) or {}
    kind = run_kinds.detect_kind(d) or ""
    return site.page("call.html", rel=rel, c=c, rec=rec, log=log, st=log.status(c),
                     prev_id=ids[i - 1] if i > 0 else "", next_id=ids[i + 1] if i + 1 < len(ids) else "",
                     index=i + 1, n_calls=len(ids), cited=log.cited.get(call_id, []),
                     followed_by=log.followed_by.get(call_id, []), pretty=cl.pretty, kind=kind,
                     has_replay=has_replay(kind), has_eval=is_evaluation(kind) and (d / "answers.jsonl").exists(),
                     columns=[k for k in cl.META_COLUMNS if c.get(k) not in (None, "")])
