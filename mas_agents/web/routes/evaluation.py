"""An evaluation's questions (``/eval/{rel}``): every question with its options as shown, the
model's letter, the key and right/wrong; while it runs, "k of N answered" per character."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from fastapi.responses import HTMLResponse

from mas_agents.web import calls as cl
from mas_agents.web import replay_rows as rp
from mas_agents.web import paths
from mas_agents.web import runs as rs
from mas_agents.game import experiments
from mas_agents.web import run_kinds
from mas_agents.web.evaluation import eval_progress
from mas_agents.web.site import Site, get_site, not_withheld, query
from mas_agents.rundir import RunDir

# nothing of a game being played with a person in it (its seat must not see it): 403
router = APIRouter(dependencies=[Depends(not_withheld)])


@router.get("/eval/{rel:path}", response_class=HTMLResponse)
def eval_page(rel: str, category: str = "", character: str = "", result: str = "", q: str = "", call: str = "",
              page_no: int = Query(1, alias="page"), site: Site = Depends(get_site)):
    d = site.locate(rel)
    kind = run_kinds.detect_kind(d)
    rk = experiments.find(kind)
    if rk is None or not rk.evaluation:
        return site.page("error.html", 404, title="Not an evaluation",
                         message=f"{rel or '.'} is not a WellPlay evaluation; "
                                 "the evaluation view shows the questions of `mas wellplay eval` runs.")
    records = rp.load_events(d / "answers.jsonl") if (d / "answers.jsonl").is_file() else []
    cfg = paths.read_json(RunDir(d).config) or {}
    res = paths.read_json(RunDir(d).result)
    res = res if isinstance(res, dict) else {}
    log = cl.load_log(d)
    texts = cl.dataset_options(site.data_root, list(cfg.get("scripts") or []), str(cfg.get("lang") or "en"),
                               rk.script)
    qs = cl.questions(records, texts, log.prompts)
    if call:
        qs_f = [x for x in qs if call in (x.record.get("call_ids") or [])]
    else:
        qs_f = cl.filter_questions(qs, category=category, character=character, outcome=result, q=q)
    shown, page_no, pages = cl.paginate(qs_f, page_no, cl.QUESTIONS_PER_PAGE)
    f = {"category": category, "character": character, "result": result, "q": q}
    run = rs.describe(site.root, d, kind)
    return site.page("eval.html", rel=site.rel(d), run=run, cfg=cfg, res=res,
                     progress=None if res else eval_progress(d, site.data_root), evaluated=site.run_link(cfg.get("run")),
                     qs=shown, n_hits=len(qs_f), n_all=len(qs), tot=cl.totals(qs, res), f=f,
                     categories=list(dict.fromkeys(str(x.record.get("category")) for x in qs)),
                     characters=list(dict.fromkeys(str(x.record.get("character")) for x in qs)),
                     page_no=page_no, pages=pages, per=cl.QUESTIONS_PER_PAGE, query=query(f),
                     sources={x.source for x in qs}, has_calls=bool(log.calls), recorded=log.recorded,
                     call_ids={str(c.get("call_id")) for c in log.calls}, multi_runs=len({r.get("run") for r in records}) > 1)
