"""Downloads of ``mas serve``: a whole run directory as a zip, streamed, and the tables of a
``report.md`` as CSV.

The zip holds every regular file under the run directory, read through
:func:`mas_agents.web.paths.confine` like every other path: a symbolic link that leads out of
``--runs`` is left out (and named in ``SKIPPED.txt`` inside the zip); one that stays inside is
followed. It is written to the response as it is read, a chunk at a time (``zipfile`` on an
unseekable stream writes data descriptors), so a large run is never held in memory.
"""

from __future__ import annotations

import csv
import io
import os
import zipfile
from pathlib import Path
from typing import Iterator

from mas_agents.web import paths

CHUNK = 1 << 16


class _Sink(io.RawIOBase):
    """A write-only, unseekable stream whose bytes are taken out by :meth:`take`."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:   # type: ignore[override]
        self.buf += b
        return len(b)

    def take(self) -> bytes:
        out, self.buf = bytes(self.buf), bytearray()
        return out


def run_files(root: Path, d: Path) -> tuple[list[tuple[Path, str]], list[str]]:
    """``([(file, name in the zip)], [skipped names])`` of run directory ``d`` under ``root``.

    Directories are walked without following links; a link (to a file or a folder) is taken only
    when it resolves inside ``root`` (a folder link is walked in turn, once)."""
    files: list[tuple[Path, str]] = []
    skipped: list[str] = []
    seen: set[Path] = set()

    def walk(here: Path, prefix: str) -> None:
        real = here.resolve()
        if real in seen:
            return
        seen.add(real)
        try:
            entries = sorted(os.scandir(here), key=lambda e: e.name)
        except OSError:
            return
        for e in entries:
            name = f"{prefix}{e.name}"
            p = Path(e.path)
            if e.is_symlink():
                try:
                    target = paths.confine(root, paths.relpath(root, p.resolve()))
                except (ValueError, paths.OutsideRuns, OSError):
                    skipped.append(name)
                    continue
                if target.is_dir():
                    walk(target, name + "/")
                elif target.is_file():
                    files.append((target, name))
                continue
            if e.is_dir(follow_symlinks=False):
                walk(p, name + "/")
            elif e.is_file(follow_symlinks=False):
                files.append((p, name))

    walk(d, "")
    return files, skipped


def zip_stream(root: Path, d: Path, top: str) -> Iterator[bytes]:
    """The zip of run directory ``d`` (its files under ``top/`` in the archive), in chunks."""
    files, skipped = run_files(root, d)
    sink = _Sink()
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for path, name in files:
            try:
                fh = path.open("rb")
            except OSError:
                skipped.append(name)
                continue
            with fh, zf.open(zipfile.ZipInfo.from_file(path, f"{top}/{name}"), "w") as dst:
                while chunk := fh.read(CHUNK):
                    dst.write(chunk)
                    if len(sink.buf) >= CHUNK:
                        yield sink.take()
            yield sink.take()
        if skipped:
            zf.writestr(f"{top}/SKIPPED.txt", "Left out (a link out of the runs directory, or not readable):\n"
                        + "\n".join(skipped) + "\n")
    yield sink.take()


def markdown_tables(text: str) -> list[list[list[str]]]:
    """The tables of a Markdown text (GitHub tables, as the report page renders them), each as
    rows of cell texts (the header row first; inline markup reduced to its text)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark", {"html": False}).enable("table").parse(text)
    tables: list[list[list[str]]] = []
    row: list[str] | None = None
    for tok in tokens:
        if tok.type == "table_open":
            tables.append([])
        elif tok.type == "tr_open":
            row = []
        elif tok.type == "tr_close" and row is not None:
            tables[-1].append(row)
            row = None
        elif tok.type == "inline" and row is not None:
            row.append("".join(c.content for c in tok.children or [] if c.type in ("text", "code_inline", "softbreak")))
    return tables


def table_csv(rows: list[list[str]]) -> str:
    """Rows as CSV text (RFC 4180 quoting, ``\\r\\n`` line ends)."""
    buf = io.StringIO()
    csv.writer(buf).writerows(rows)
    return buf.getvalue()
