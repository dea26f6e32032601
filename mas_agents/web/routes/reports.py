"""A run's ``report.md`` rendered (``/report/{rel}``): raw HTML off, its figures, each table
linked as CSV."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse
from markdown_it import MarkdownIt

from mas_agents.web import runs as rs
from mas_agents.web import run_kinds
from mas_agents.web import paths
from mas_agents.web.site import Site, get_site, not_withheld
from mas_agents.rundir import REPORT_FILE, RunDir

# nothing of a game being played with a person in it (its seat must not see it): 403
router = APIRouter(dependencies=[Depends(not_withheld)])


@router.get("/report/{rel:path}", response_class=HTMLResponse)
def report_page(rel: str, site: Site = Depends(get_site)):
    d = site.locate(rel)
    path = RunDir(d).report
    if not path.is_file():
        raise FileNotFoundError(f"{rel}/{REPORT_FILE}")
    body, used = render_markdown(path.read_text(encoding="utf-8"), site.rel(d), d)
    figures = sorted(p.name for p in d.glob("*.png") if p.name not in used)
    kind = run_kinds.detect_kind(d)
    return site.page("report.html", rel=site.rel(d), body=body, figures=figures,
                     run=rs.describe(site.root, d, kind or "") if kind else None)


def render_markdown(text: str, rel: str, d: Path) -> tuple[str, set[str]]:
    """``report.md`` as HTML with raw HTML disabled (it is escaped), GitHub tables on, and image
    paths relative to the run rewritten to ``/raw/<rel>/...``, and a link to each table as CSV
    (``/csv/<rel>?table=N``) after it; also returns the image paths it showed. An image path that
    leaves the run directory is dropped."""
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    used: set[str] = set()
    default_image = md.renderer.rules.get("image")

    def image(renderer, tokens, idx, options, env):
        tok = tokens[idx]
        src = tok.attrGet("src") or ""
        if "://" in src or src.startswith("/") or src.startswith("data:"):
            tok.attrSet("src", "")
        else:
            try:
                p = paths.confine(d, src)
                tok.attrSet("src", "/raw/" + quote(f"{rel}/{paths.relpath(d, p)}".lstrip("/"), safe="/"))
                used.add(src)
            except paths.OutsideRuns:
                tok.attrSet("src", "")
        img = default_image(tokens, idx, options, env)
        full = tok.attrGet("src")
        # shown at the page's width; the image itself, at full size, one click away
        return f'<a href="{full}" class="figure-link" title="full size">{img}</a>' if full else img

    tables = [0]

    def table_close(renderer, tokens, idx, options, env):
        n = tables[0]
        tables[0] += 1
        href = "/csv/" + quote(rel, safe="/") + f"?table={n}"
        return f'</table>\n<p class="csv"><a href="{href}" class="csv-link" download>table {n + 1} as CSV</a></p>\n'

    def link_open(renderer, tokens, idx, options, env):
        """A relative link inside the run: ``X/report.md`` -> that sub-run's report page, any other
        file -> ``/raw/...``; a link leaving the run is dropped (``#``); absolute links are kept."""
        tok = tokens[idx]
        href = tok.attrGet("href") or ""
        if href and "://" not in href and not href.startswith(("/", "#", "mailto:")):
            try:
                p = paths.confine(d, href)
                target = f"{rel}/{paths.relpath(d, p)}".strip("/")
                if p.name == REPORT_FILE:
                    tok.attrSet("href", "/report/" + quote(target.rsplit("/", 1)[0] if "/" in target else "", safe="/"))
                else:
                    tok.attrSet("href", "/raw/" + quote(target, safe="/"))
            except (paths.OutsideRuns, paths.BadPath):
                tok.attrSet("href", "#")
        return renderer.renderToken(tokens, idx, options, env)

    md.add_render_rule("image", image)
    md.add_render_rule("table_close", table_close)
    md.add_render_rule("link_open", link_open)
    return md.render(text), used
