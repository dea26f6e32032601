"""Ctrl-C stops a game within seconds, every time (issue 46, item 3), and says what it kept.

A real SIGINT to real ``mas spy play`` processes (forked after the imports by
:mod:`tests.mas_agents.stop_child`) playing against the stub server of tests/stub_openai.py, which
answers each call after 0.3 s; the signal lands at a random moment of the start (even tries) or
of the game (odd tries); 20 tries, one to two minutes in all.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.stub_openai import HOST

REPO = Path(__file__).resolve().parents[2]
TRIES = 20
LIMIT_S = 5.0


def _text(n: int) -> str:
    return f"something you meet in daily life, clue {n}"


def reply_table(players: int = 6, rounds: int = 3) -> dict[str, str]:
    """Stub replies that keep a Who-is-Spy game valid: a vote for the first candidate listed, and
    descriptions that never repeat (each follows the one before it in the history)."""
    seats = [f"Player {i + 1}" for i in range(players)]
    table = {}
    for k in range(players - 1, 0, -1):
        for cands in itertools.combinations(seats, k):
            listing = "\n".join(f"{i + 1}. {c}" for i, c in enumerate(cands))
            table[f"Choose one of:\n{listing}\n\n"] = f"Vote: {cands[0]}"
    for n in range(1, 10 * rounds + players + 2):
        table[f"{_text(n)}\n\nYou are"] = f"Description: {_text(n + 1)}"
    for r in range(1, rounds + 1):
        table[f"Round {r}: it is your turn"] = f"Description: {_text(10 * (r - 1) + 1)}"
    table["default"] = f"Description: {_text(99)}"
    return table


@pytest.fixture
def stub_server(tmp_path):
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(reply_table()), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "tests.stub_openai", "--latency", "0.3", "--port", "0",
                             "--reply-file", str(replies)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("READY "), line
        url = line.split()[1]
        assert url.startswith(f"http://{HOST}:")
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.integration
def test_every_sigint_ends_the_game_within_seconds_with_one_line_saying_what_was_kept(stub_server, tmp_path):
    work = tmp_path / "games"
    work.mkdir()
    env = {**os.environ, "OPENAI_BASE_URL": stub_server, "OPENAI_API_KEY": "x"}
    r = subprocess.run([sys.executable, "-m", "tests.mas_agents.stop_child", "--work", str(work), "--tries",
                        str(TRIES), "--seed", "46", "--lo", "0.3", "--hi", "5.0", "--limit", "15"],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    tries = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(tries) == TRIES
    slow = [t for t in tries if t["stop_s"] is None or t["stop_s"] > LIMIT_S]
    assert not slow, "\n\n".join(f"try {t['try']}: SIGINT after {t['sigint_after_s']} s, stop took {t['stop_s']} s; "
                                 f"stderr:\n{t['stderr']}" for t in slow)
    mid_game = 0
    for t in tries:
        lines = [ln for ln in t["stderr"].splitlines() if ln.strip()]
        out = work / f"g{t['try']:02d}"
        if (out / "result.json").exists() and "stopped:" not in t["stderr"]:
            # the game had ended before the signal came: the process was on its way out (a
            # SIGINT then ends it the default way, -2, or it had ended already, 0)
            assert t["exit"] in (0, -2), t
            continue
        assert t["exit"] == 130, t
        assert "Traceback" not in t["stderr"], t["stderr"]
        assert lines[-1].startswith("stopped: Ctrl-C. Finished work is kept"), t["stderr"]
        calls = out / "llm_calls.jsonl"
        if calls.exists() and calls.read_text(encoding="utf-8").strip():
            mid_game += 1
            # the run's marker says it was stopped, not that it failed (what mas serve shows)
            marker = json.loads((out / "run.lock").read_text(encoding="utf-8"))
            assert marker["stopped"] == "Ctrl-C" and "error" not in marker, marker
            assert marker["argv"][-2:] == ["--out", str(out)]
            assert not (out / "result.json").exists()
    # half the signals landed while the game was playing (stop_child: odd tries), not only in its start
    assert mid_game >= TRIES // 2, [t["sigint_after_s"] for t in tries]
