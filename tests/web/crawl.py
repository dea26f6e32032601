"""A crawler of the web app for the tests: every same-site link and image reachable from ``/``,
fetched without following redirects, with what each page shows that a reader should not see."""

from __future__ import annotations

import html as htmllib
import re
from collections import deque
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin, urlsplit

#: ``href``/``src`` values of a page (attributes as Jinja2 writes them, double-quoted).
LINK = re.compile(r'(?:href|src|action)="([^"]*)"')
#: A number printed with more decimals than any page means (``2.33333``), outside code and ids.
LONG_DECIMAL = re.compile(r"(?<![\w.#-])\d+\.\d{5,}(?![\w.-])")


@dataclass
class Crawl:
    """What :func:`crawl` found: ``status`` per URL, the pages linking to each URL (``from_``),
    pages with long decimals in their visible text (``decimals``)."""

    status: dict[str, int] = field(default_factory=dict)
    from_: dict[str, str] = field(default_factory=dict)
    decimals: dict[str, list[str]] = field(default_factory=dict)

    def bad(self) -> dict[str, tuple[int, str]]:
        """``{url: (status, a page linking to it)}`` of every answer that is not 200."""
        return {u: (s, self.from_.get(u, "")) for u, s in self.status.items() if s != 200}


def visible_text(page: str) -> str:
    """A page's text without scripts, styles, tags, ``<pre>``/``<code>`` blocks (prompts and raw
    completions are shown as written) and attribute values."""
    page = re.sub(r"(?is)<(script|style|pre|code|textarea)\b.*?</\1>", " ", page)
    return htmllib.unescape(re.sub(r"(?s)<[^>]+>", " ", page))


def crawl(client, start: str = "/", limit: int = 1500, skip: tuple[str, ...] = ("/zip/",),
          per_prefix: int = 60) -> Crawl:
    """Fetch every same-site link reachable from ``start`` (breadth first, at most ``limit`` URLs,
    at most ``per_prefix`` URLs sharing the first two path parts and a query, so that 300
    call pages of one run do not crowd out the other runs). URLs starting with one of ``skip`` are
    fetched (their status counts) but not parsed. Only GET; forms' actions are not posted."""
    out = Crawl()
    queue = deque([start])
    seen = {start}
    per: dict[str, int] = {}
    while queue and len(out.status) < limit:
        url = queue.popleft()
        r = client.get(url, follow_redirects=False)
        out.status[url] = r.status_code
        ctype = r.headers.get("content-type", "")
        if r.status_code != 200 or "text/html" not in ctype or url.startswith(skip):
            continue
        text = r.text
        dec = LONG_DECIMAL.findall(visible_text(text))
        if dec:
            out.decimals[url] = dec[:5]
        for raw in LINK.findall(text):
            link = urldefrag(urljoin(url, htmllib.unescape(raw)))[0]
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or not parts.path.startswith("/") or link in seen:
                continue
            if link.startswith("/play") and "answer" in link:
                continue
            key = "/".join(parts.path.split("/")[:3]) + ("?" if parts.query else "")
            if per.get(key, 0) >= per_prefix:
                continue
            per[key] = per.get(key, 0) + 1
            seen.add(link)
            out.from_[link] = url
            queue.append(link)
    return out
