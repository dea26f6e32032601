"""What a run keeps and says when it is stopped (issue 46: item 3 and its smaller items).

* :func:`mas_agents.rundir.run_each`: after Ctrl-C (a KeyboardInterrupt in the calling thread,
  wherever it waits) no queued item starts; the items running finish, and those that finish
  are still reported to ``done`` (a tournament's leaderboard); the exception says what was kept.
* :func:`mas_agents.cells.run_cells`: a cell does not start once Ctrl-C set the stop flag.
* ``run.lock`` (:func:`mas_agents.rundir.marks_run`): a stop is recorded as a stop, not as a
  failure, and the whole command line is kept.
"""

from __future__ import annotations

import signal
import sys
import threading
import time

import pytest

from mas_agents import stop
from mas_agents.rundir import RUN_MARKER, marker_process, marks_run, read_run_marker, run_each


@pytest.fixture
def alarm_interrupt():
    """``arm(seconds)``: a KeyboardInterrupt in the main thread after ``seconds``, as the CLI's
    Ctrl-C handler raises it (a real signal, so it lands wherever the thread waits)."""
    def raise_interrupt(signum, frame):
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGALRM, raise_interrupt)
    yield lambda seconds: signal.setitimer(signal.ITIMER_REAL, seconds)
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, before)


def test_ctrl_c_while_run_each_waits_starts_no_queued_item_and_records_the_running_ones(alarm_interrupt):
    started, recorded = [], []
    lock = threading.Lock()

    def cell(i):
        with lock:
            started.append(i)
        time.sleep(0.5)
        return i * 10

    alarm_interrupt(0.2)   # while the first two cells run and the main thread waits for them
    with pytest.raises(KeyboardInterrupt) as info:
        run_each(list(range(6)), cell, concurrency=2, done=lambda it, r: recorded.append((it, r)))
    assert sorted(started) == [0, 1]                # the four queued cells never started
    assert sorted(recorded) == [(0, 0), (1, 10)]    # the two that finished during the stop are recorded
    assert info.value.__notes__ == ["2 of 6 cells finished and kept, 0 stopped before the end "
                                    "(rerunning continues or replays them), 4 not started"]


def test_a_failing_cell_stops_the_queue_and_the_note_counts_each_kind():
    started = []
    lock = threading.Lock()

    def cell(i):
        with lock:
            started.append(i)
        if i == 1:
            time.sleep(0.1)
            raise stop.StopRequested("stop requested (Ctrl-C); finished work is saved")
        time.sleep(0.4)
        return i

    recorded = []
    with pytest.raises(stop.StopRequested) as info:
        run_each(list(range(5)), cell, concurrency=2, done=lambda it, r: recorded.append(it))
    assert sorted(started) == [0, 1, 2] or sorted(started) == [0, 1]
    # cell 0 was running when cell 1 stopped: it finished and is reported like the others
    assert 0 in recorded
    note = info.value.__notes__[-1]
    kept = len(recorded)
    assert note.startswith(f"{kept} of 5 cells finished and kept, 1 stopped before the end")
    assert note.endswith(f"{5 - kept - 1} not started")


def test_a_cell_does_not_start_once_the_stop_flag_is_set(tmp_path):
    from mas_agents.cells import run_cells

    ran = []
    stop.STOP.set()
    try:
        with pytest.raises(stop.StopRequested):
            run_cells([1, 2, 3], lambda it, root: ran.append(it), root=tmp_path, rel=str, models=["openai:x"],
                      concurrency=2)
    finally:
        stop.STOP.clear()
    assert ran == []


def test_a_stopped_run_is_marked_stopped_with_its_whole_command_line(tmp_path, monkeypatch):
    argv = ["mas", "spy", "tournament", "--agents", "plain,plain+pgm", "--games", "20", "--concurrency", "4",
            "--model", "openai:m", "--db", "x.sqlite", "--out", "runs/t", "--seed", "3", "--speak-timeout", "0"]
    monkeypatch.setattr(sys, "argv", argv)

    @marks_run
    def play(out):
        (out / "config.json").write_text("{}")
        raise stop.StopRequested("stop requested (Ctrl-C); finished work is saved")

    with pytest.raises(KeyboardInterrupt):
        play(out=tmp_path / "g")
    marker = read_run_marker(tmp_path / "g")
    assert marker["argv"] == argv
    assert marker["stopped"] == "Ctrl-C" and "error" not in marker and marker["ended"]
    alive, why = marker_process(marker)
    assert alive is False
    assert why == f"it was stopped (Ctrl-C, {marker['ended']})"
    assert "failed" not in why
    assert (tmp_path / "g" / RUN_MARKER).exists()
