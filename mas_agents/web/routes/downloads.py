"""A run's files as data (``/raw/{rel}``), the whole run as a streamed zip (``/zip/{rel}``) and a
table of its report as CSV (``/csv/{rel}?table=N``)."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse, StreamingResponse

from mas_agents.eval.reports.cells import numeric_columns
from mas_agents.web.downloads import markdown_tables, table_csv, zip_stream
from mas_agents.web.site import RAW_TYPES, Site, csv_response, get_site, not_withheld
from mas_agents.rundir import REPORT_FILE, RunDir

# nothing of a game being played with a person in it (its seat must not see it): 403
router = APIRouter(dependencies=[Depends(not_withheld)])


@router.get("/raw/{rel:path}")
def raw(rel: str, site: Site = Depends(get_site)):
    p = site.locate(rel)
    if not p.is_file() or p.suffix not in RAW_TYPES:
        raise FileNotFoundError(rel)
    return FileResponse(p, media_type=RAW_TYPES[p.suffix])


@router.get("/zip/{rel:path}")
def zip_run(rel: str, site: Site = Depends(get_site)):
    d = site.locate(rel)
    if not d.is_dir() or d == site.root:
        raise FileNotFoundError(f"{rel or '.'} (a run directory)")
    name = site.rel(d).replace("/", "_")
    return StreamingResponse(zip_stream(site.root, d, d.name), media_type="application/zip",
                             headers={"Content-Disposition": f'attachment; filename="{quote(name)}.zip"'})


@router.get("/csv/{rel:path}")
def report_csv(rel: str, table: int = 0, site: Site = Depends(get_site)):
    d = site.locate(rel)
    if not RunDir(d).report.is_file():
        raise FileNotFoundError(f"{rel}/{REPORT_FILE}")
    tables = markdown_tables(RunDir(d).report.read_text(encoding="utf-8"))
    if not 0 <= table < len(tables):
        raise FileNotFoundError(f"{rel}/report.md, table {table} (it has {len(tables)})")
    name = site.rel(d).replace("/", "_")
    # an estimate cell ("57.1 [35.0, 80.2] (n=7)") becomes numeric value / low / high / n columns
    return csv_response(table_csv(numeric_columns(tables[table])), f"{name}-table{table + 1}.csv")
