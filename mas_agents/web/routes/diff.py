"""Two runs of one game compared (``/diff?a=REL&b=REL``, issue 59 item 4): the report of ``mas diff``
(:func:`mas_agents.eval.rerun.diff.diff_runs`): "identical", or the configuration fields that
differ, the first event that differs with the model calls behind it and their prompt and
completion diffs, then the outcome and per-seat metrics that differ. Both runs must be under
``--runs`` and neither may be a game being played with a person in it (403). Without both
parameters the page is a form; a pair ``mas diff`` refuses (runs of two kinds, not a run) is
the page with that one-line reason (400)."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse

from mas_agents.web.site import Site, get_site

router = APIRouter()


@router.get("/diff", response_class=HTMLResponse)
def diff_page(a: str = "", b: str = "", site: Site = Depends(get_site)) -> HTMLResponse:
    if not a.strip() or not b.strip():
        return site.page("diff.html", a=a, b=b, report=None, identical=False, error=None)
    da, db = site.locate(a.strip()), site.locate(b.strip())        # outside --runs: 403; missing: 404
    site.check_open(da)
    site.check_open(db)                                              # a game a person plays: 403
    from mas_agents.eval.rerun.diff import DiffError, diff_runs       # eval's comparison: only when asked
    try:
        report = diff_runs(da, db)
    except (DiffError, ValueError, OSError) as exc:
        reason = " ".join(str(exc).split()).replace(str(site.root) + "/", "")
        return site.page("diff.html", 400, a=a, b=b, report=None, identical=False, error=reason)
    text = report.text().replace(str(site.root) + "/", "")            # paths as the runs list names them
    return site.page("diff.html", a=a, b=b, report=text, identical=report.identical, error=None,
                     rel_a=site.rel(da), rel_b=site.rel(db))
