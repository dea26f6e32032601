"""A murder-mystery game stopped by a real Ctrl-C resumes from its checkpoint (issue 46, item 3).

The game runs in a child process under the CLI's stop handler
(:func:`mas_agents.cli.stops.install_stop_handler`); its fake model sends the process SIGINT
during the 9th model call, as a user's Ctrl-C would arrive. The child ends as ``mas`` does after a
stop (:func:`mas_agents.cli.stops.stopped`: one line, exit code 130, without the interpreter's
clean-up); a fresh runtime then resumes the game in ``--resume``'s way and finishes it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from mas_agents.graphs.mmg.session import run_game
from tests.fakes import polite_player
from tests.toy import TOY_PLAYERS, toy_runtime

REPO = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent("""
    import itertools, os, signal, sys, time
    from pathlib import Path
    from mas_agents.cli import stops
    from mas_agents.graphs.mmg.session import run_game
    from tests.fakes import polite_player
    from tests.toy import TOY_PLAYERS, toy_runtime

    stops.install_stop_handler()
    calls = itertools.count(1)
    polite = polite_player(vote_for="Bob")

    def ctrl_c_at_the_ninth_call(messages):
        if next(calls) == 9:
            os.kill(os.getpid(), signal.SIGINT)   # the user's Ctrl-C, while this call runs
            time.sleep(0.2)
        return polite(messages)

    rt, rec, _ = toy_runtime(Path(sys.argv[1]), {p: ctrl_c_at_the_ninth_call for p in TOY_PLAYERS}, rounds=2)
    try:
        run_game(rt, Path(sys.argv[1]) / "run", rec, {})
    except KeyboardInterrupt as exc:
        stops.stopped(exc)
    print("not stopped", file=sys.stderr)
    sys.exit(5)
""")


def _events(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "events.jsonl").read_text(encoding="utf-8").splitlines()]


def test_a_game_stopped_by_sigint_resumes_from_its_checkpoint(tmp_path):
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], cwd=REPO, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 130, r.stderr[-3000:]
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert lines[-1].startswith("stopped: Ctrl-C. Finished work is kept"), r.stderr
    assert "Traceback" not in r.stderr
    assert time.monotonic() - t0 < 60
    out = tmp_path / "run"
    marker = json.loads((out / "run.lock").read_text(encoding="utf-8"))
    assert marker["stopped"] == "Ctrl-C" and "error" not in marker
    before = _events(out)
    kinds = [e["kind"] for e in before]
    # the steps finished before the stop are in the checkpoint and the events, nothing after the end
    assert kinds[:9] == ["start"] + ["script"] * 4 + ["introduce"] * 4
    assert "vote" not in kinds and not (out / "result.json").exists()

    rt, rec, _ = toy_runtime(tmp_path, {p: polite_player(vote_for="Bob") for p in TOY_PLAYERS}, rounds=2)
    res = run_game(rt, out, rec, {}, resume=True)
    events = _events(out)
    assert events[: len(before)] == before
    assert [e["kind"] for e in events].count("introduce") == 4
    assert [e["kind"] for e in events].count("answer") == 8
    assert res["outcome"]["victims"][0]["accused"] == "Bob"
    assert not (out / "run.lock").exists()
