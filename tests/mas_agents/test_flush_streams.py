"""The stream flush before ``os._exit`` is one function (review finding 7), used by both ways a
Ctrl-C ends a command, and a closed pipe does not stop the exit."""

from __future__ import annotations

import io
import sys

import pytest

from mas_agents.cli import stops as cli_stops
import mas_agents.cli.stops as stops   # the stop's parts, patched where stopped() reads them


class _Closed(io.StringIO):
    def flush(self):
        raise ValueError("I/O operation on closed file")


class _Exited(Exception):
    pass


def test_a_closed_stream_is_passed_over_and_the_other_flushed(monkeypatch):
    flushed = []

    class _Open(io.StringIO):
        def flush(self):
            flushed.append(True)

    monkeypatch.setattr(sys, "stdout", _Closed())
    monkeypatch.setattr(sys, "stderr", _Open())
    cli_stops._flush_streams()
    assert flushed == [True]


def test_the_stop_after_a_real_ctrl_c_flushes_through_it(monkeypatch):
    calls = []
    monkeypatch.setattr(stops, "_SIGINTS", 1)
    monkeypatch.setattr(stops, "_ray_running", lambda: False)
    monkeypatch.setattr(stops, "_flush_logs", lambda timeout: calls.append("logs"))
    monkeypatch.setattr(stops, "_flush_streams", lambda: calls.append("streams"))

    def fake_exit(code):
        calls.append(code)
        raise _Exited

    monkeypatch.setattr(stops.os, "_exit", fake_exit)
    import threading
    announced = threading.Event()
    announced.set()
    monkeypatch.setattr(stops, "_ANNOUNCED", announced)   # the watchdog's line: already printed
    with pytest.raises(_Exited):
        cli_stops.stopped(KeyboardInterrupt())
    assert calls == ["logs", "streams", cli_stops.STOP_EXIT]
