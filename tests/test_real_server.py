"""Integration: the games through ``openai:`` against a real OpenAI-compatible server.

llama-cpp-python's own server (``python -m llama_cpp.server``, the ``server`` extra) serves the
embedded SmolLM2 GGUF on a free 127.0.0.1 port. A 6-player Who-is-Spy game and a 1-round
murder-mystery game are played through the ``mas`` CLI as the README shows; the server is killed
in the middle of the murder mystery (one-line error, exit 3) and the rerun with ``--resume``
finishes the game. Checks: completion, format-valid actions (the reply grammar is sent in the
server's ``grammar`` field), every reply within its token cap, the call log. Minutes on 2 cores.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from mas_agents.remote import endpoints
from mas_agents.cli import app
from mas_agents.embedded import embedded_model_path

pytestmark = pytest.mark.integration

N_CTX = 4096
#: Smaller retrieval budgets for the murder mystery (defaults 4,000 script + 4,000 dialogue tokens, 6,000 together; 800 + 500 then):
#: the same path with shorter prompts; at the defaults the crash test took 453 s of the suite's
#: 2,832 s on 2 cores, with these 184 s (2026-11-27; tests/test_integration.py says more).
SMALL_BUDGETS = ["--script-budget", "200", "--dialogue-budget", "100"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """llama-cpp-python's server on 127.0.0.1:<port> with the embedded GGUF, alias ``smol``."""

    def __init__(self, port: int, log: Path):
        self.port, self.log, self.proc = port, log, None
        self.base_url = f"http://127.0.0.1:{port}/v1"

    def start(self) -> "LlamaServer":
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", embedded_model_path(), "--host", "127.0.0.1",
               "--port", str(self.port), "--model_alias", "smol", "--n_ctx", str(N_CTX)]
        self.proc = subprocess.Popen(cmd, stdout=self.log.open("ab"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.proc.returncode}: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise RuntimeError("llama_cpp.server did not answer within 120 s")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = LlamaServer(free_port(), tmp_path_factory.mktemp("srv") / "server.log").start()
    yield srv
    srv.stop()


@pytest.fixture(autouse=True)
def env(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yield
    endpoints.configure(structured="auto", context_window=None, max_connections=8, adaptive=False)


def calls_of(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "llm_calls.jsonl").read_text().splitlines()]


def check_calls(calls: list[dict]) -> None:
    assert calls and all(c["ok"] for c in calls)
    assert all(c["model"] == "openai:smol" and c["structured"] == "gbnf" for c in calls)
    # the cap reached the server as max_tokens and was honoured (it ignores max_completion_tokens)
    assert all(c["max_tokens"] and 0 < c["output_tokens"] <= c["max_tokens"] for c in calls)
    assert all(c["input_tokens"] > 0 for c in calls)


def test_who_is_spy_through_the_server(tmp_path, server):
    out = tmp_path / "spy"
    r = CliRunner().invoke(app, ["spy", "play", "--agents", "plain@openai:smol", "--pair", "tea/coffee",
                                 "--speak-timeout", "60", "--max-connections", "1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    rec = json.loads((out / "result.json").read_text())
    assert rec["outcome"]["winner"] in ("civilians", "spy") and rec["timeouts"] == 0
    describes = [e for e in map(json.loads, (out / "events.jsonl").read_text().splitlines()) if e["kind"] == "describe"]
    assert len(describes) >= 6
    assert all(e["data"]["valid"] for e in describes)              # every description in the format
    [ep] = json.loads((out / "config.json").read_text())["endpoints"]
    assert (ep["base_url"], ep["structured"], ep["context_window"]) == (server.base_url, "gbnf", None)
    check_calls(calls_of(out))


@pytest.mark.realdata          # plays the real WellPlay script "Sin"
def test_murder_mystery_through_the_server_survives_a_server_crash(tmp_path, server):
    out = tmp_path / "mmg"
    args = ["mmg", "run", "--script", "Sin", "--rounds", "1", "--model", "openai:smol", "--max-connections", "1",
            "--context-window", str(N_CTX), *SMALL_BUDGETS, "--out", str(out)]
    killed = threading.Event()

    def kill_after(n: int) -> None:     # the server dies once the game has made n calls
        path = out / "llm_calls.jsonl"
        while not killed.is_set():
            if path.exists() and len(path.read_text().splitlines()) >= n:
                server.stop()
                killed.set()
            time.sleep(0.2)

    watcher = threading.Thread(target=kill_after, args=(6,), daemon=True)
    watcher.start()
    r = CliRunner().invoke(app, args)
    killed.set()
    assert r.exit_code == 3, r.output
    assert "Traceback" not in r.output
    [line] = [x for x in r.output.splitlines() if x.startswith("error:")]
    assert "is unreachable" in line and f"--resume --out {out}" in " ".join(r.output.split())
    assert not (out / "result.json").exists()
    done_before = len([c for c in calls_of(out) if c["ok"]])

    server.start()
    r = CliRunner().invoke(app, ["mmg", "run", "--script", "Sin", "--resume", "--out", str(out),
                                 "--max-connections", "1", "--context-window", str(N_CTX)])
    assert r.exit_code == 0, r.output
    res = json.loads((out / "result.json").read_text())
    assert res["finished"] and res["invalid_actions"] == 0
    assert res["counts"]["introduce"] == 4 and res["counts"]["vote"] == 4
    calls = [c for c in calls_of(out) if c["ok"]]
    assert len(calls) > done_before >= 6           # the rerun went on from the checkpoint
    check_calls(calls)
    config = json.loads((out / "config.json").read_text())
    assert (config["settings"]["script_budget"], config["settings"]["dialogue_budget"]) == (200, 100)  # kept on resume
    [ep] = config["endpoints"]
    assert (ep["context_window"], ep["context_window_source"]) == (N_CTX, "--context-window")
