"""``POST /verify`` runs one verification at a time (review finding 3): each holds a worker thread
for up to 600 s and starts a child process on a 2-core machine, so a second click while one runs
answers 409 "a verification is running" on the app's error page, and starts no process."""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

from fastapi.testclient import TestClient

from mas_agents.web.app import create_app
from mas_agents.web.routes import runs as routes

RECORDED = Path(__file__).resolve().parents[1] / "data" / "recorded"


def test_a_second_verification_while_one_runs_is_refused_with_409(tmp_path, monkeypatch):
    root = tmp_path / "runs"
    shutil.copytree(RECORDED / "wis", root / "ok")
    started, go, cmds = threading.Event(), threading.Event(), []

    def child(cmd, **kwargs):              # stands for `mas rerun` in its child process
        if cmd[3:5] != ["rerun", str(root / "ok")]:
            raise AssertionError(f"unexpected command {cmd}")
        if started.is_set() and not go.is_set():
            raise AssertionError("a second mas rerun started while one runs")
        cmds.append(cmd)
        started.set()
        assert go.wait(30), "the test never let the first verification finish"
        return subprocess.CompletedProcess(cmd, 0, f"{root / 'ok'}: identical (12 calls replayed)\n", "")
    monkeypatch.setattr(routes.subprocess, "run", child)
    c = TestClient(create_app(root, tmp_path / "none.sqlite"))
    first: dict = {}
    t = threading.Thread(target=lambda: first.setdefault("r", c.post("/verify/ok")))
    t.start()
    try:
        assert started.wait(30)
        second = c.post("/verify/ok")
    finally:
        go.set()
        t.join(30)
    assert second.status_code == 409
    assert '<h1 class="error-title">A verification is running</h1>' in second.text
    assert "ok: a verification is running on this server; try again when it has finished" in second.text
    assert '<a href="/">Back to the runs</a>' in second.text
    assert len(cmds) == 1                                     # the second click started no process
    assert first["r"].status_code == 200 and "<h1>ok: identical</h1>" in first["r"].text
    # once it has finished, the next verification runs
    go.set()
    again = c.post("/verify/ok")
    assert again.status_code == 200 and len(cmds) == 2
