"""A real headless Chromium for the browser tests: Debian's ``/usr/bin/chromium`` driven by the
``playwright`` package (never ``playwright install``, which downloads browser builds), and the web
app served by uvicorn in a thread on a free port of 127.0.0.1."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

CHROMIUM = os.environ.get("MAS_CHROMIUM", "/usr/bin/chromium")
#: Without the background-networking flags Chromium's own connections are refused here and it
#: stalls (the task's finding); a fresh user-data-dir per run keeps runs independent.
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def need_chromium() -> None:
    """Skip without Chromium on a developer's machine; fail in CI (``CI`` set), where
    ``scripts/setup.sh`` installs it."""
    try:
        import playwright  # noqa: F401
    except ImportError:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("the playwright package is missing (pip install -e '.[dev]')")
    if not os.access(CHROMIUM, os.X_OK):
        (pytest.fail if os.environ.get("CI") else pytest.skip)(f"{CHROMIUM} is missing (apt-get install -y chromium)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve(app) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 in a thread; yields its base URL."""
    import uvicorn
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    th = threading.Thread(target=server.run, daemon=True)
    th.start()
    t0 = time.monotonic()
    while not server.started:
        if time.monotonic() - t0 > 20:
            raise RuntimeError("the web app did not start within 20 s")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        th.join(10)


@contextmanager
def chromium() -> Iterator[object]:
    """A playwright browser context of Debian's Chromium with a fresh user-data-dir."""
    from playwright.sync_api import sync_playwright
    ud = tempfile.mkdtemp(prefix="mas-chromium-")
    try:
        with sync_playwright() as pw:
            ctx = pw.chromium.launch_persistent_context(ud, executable_path=CHROMIUM, headless=True, args=ARGS,
                                                        viewport={"width": 1280, "height": 900})
            try:
                yield ctx
            finally:
                ctx.close()
    finally:
        shutil.rmtree(ud, ignore_errors=True)


def shot(page, name: str, out: Path, publish: bool = True) -> Path:
    """A screenshot (the viewport) ``out/name``; copied to ``docs/`` with ``MAS_UPDATE_SCREENSHOTS=1``
    (the README's pictures are made this way) unless ``publish`` is False (a page showing dataset
    text that may not be redistributed, such as WellPlay's questions)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    page.screenshot(path=str(path), full_page=False)
    if publish and os.environ.get("MAS_UPDATE_SCREENSHOTS") == "1":
        docs = Path(__file__).resolve().parents[2] / "docs"
        docs.mkdir(exist_ok=True)
        shutil.copy(path, docs / name)
    return path
