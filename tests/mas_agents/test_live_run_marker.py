"""A second run into a ``--out`` that a live process still plays is refused before anything is
written; a marker whose process is gone is replaced; a refused run leaves the marker that was there
(review finding 1: two processes must never write one run's events and call log)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mas_agents.game.record import check_same_run
from mas_agents.rundir import RUN_MARKER, RunConflict, _proc_stat, _boot_id, marks_run


def _marker_of(pid: int, argv: list[str]) -> dict:
    import socket
    stat = _proc_stat(pid)
    return {"pid": pid, "host": socket.gethostname(), "proc_start": stat[19] if stat else None,
            "boot_id": _boot_id(), "started": "2026-11-28T09:00:00+00:00", "argv": argv}


@marks_run
def _runner(out, calls):
    calls.append(out)
    (out / "events.jsonl").write_text("{}\n")
    return "played"


def test_a_live_other_process_keeps_its_run(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "events.jsonl").write_text("live\n")
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        marker = _marker_of(sleeper.pid, ["mas", "play", "mmg", "--out", str(out)])
        (out / RUN_MARKER).write_text(json.dumps(marker))
        calls: list = []
        with pytest.raises(RunConflict) as e:
            _runner(out, calls)
        msg = str(e.value)
        assert f"is being played by pid {sleeper.pid} (mas play mmg --out {out})" in msg
        assert "choose another --out" in msg and "\n" not in msg
        assert calls == []                                        # the runner never ran
        assert json.loads((out / RUN_MARKER).read_text()) == marker   # its marker untouched
        assert (out / "events.jsonl").read_text() == "live\n"
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_marker_of_a_dead_process_is_replaced(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (out / RUN_MARKER).write_text(json.dumps(_marker_of(gone.pid, ["mas", "play"]) | {"proc_start": "1"}))
    calls: list = []
    assert _runner(out, calls) == "played"
    assert calls == [out]
    assert not (out / RUN_MARKER).exists()                       # removed when the runner returned


def test_a_refused_run_writes_the_previous_marker_back(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_text(json.dumps({"kind": "mmg", "seed": 1}))
    stopped = {"pid": 1234567, "host": "h", "started": "2026-11-28T08:00:00+00:00",
               "argv": ["mas", "play", "mmg", "--seed", "1"], "stopped": "Ctrl-C",
               "ended": "2026-11-28T08:10:00+00:00"}
    (out / RUN_MARKER).write_text(json.dumps(stopped))

    @marks_run
    def other_seed(out):
        check_same_run(out, {"kind": "mmg", "seed": 2})

    with pytest.raises(RunConflict, match="field 'seed' is 1"):
        other_seed(out)
    assert json.loads((out / RUN_MARKER).read_text()) == stopped


def test_a_refused_run_without_a_previous_marker_leaves_none(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_text(json.dumps({"kind": "mmg", "seed": 1}))

    @marks_run
    def other_seed(out):
        check_same_run(out, {"kind": "mmg", "seed": 2})

    with pytest.raises(RunConflict):
        other_seed(out)
    assert not (out / RUN_MARKER).exists()


def test_a_runner_that_takes_a_typed_configuration_is_marked_by_its_out_field(tmp_path):
    """The runners take one typed run configuration (issue 51 item 5); the marker follows its
    ``out`` field: a live other process refuses a Who-is-Spy tournament before anything runs."""
    from mas_agents.graphs.wis.tournament import TournamentConfig, run_tournament

    out = tmp_path / "tour"
    out.mkdir()
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        marker = _marker_of(sleeper.pid, ["mas", "spy", "tournament", "--out", str(out)])
        (out / RUN_MARKER).write_text(json.dumps(marker))
        played: list = []
        cfg = TournamentConfig(agents=("plain", "plain"), games=1, out=out,
                               pairs=[{"civilian": "tea", "spy": "coffee"}])
        with pytest.raises(RunConflict, match=f"is being played by pid {sleeper.pid}"):
            run_tournament(cfg, play=lambda *a, **kw: played.append(a))
        assert played == [] and sorted(p.name for p in out.iterdir()) == [RUN_MARKER]
    finally:
        sleeper.kill()
        sleeper.wait()
