"""mas_agents.graphs.fanout.fan_out: a step's parallel moves on the game's thread and the process's pool."""

import contextvars
import threading
import time

import pytest

from mas_agents.graphs.fanout import fan_out

WHO = contextvars.ContextVar("who", default="nobody")


def _tracker():
    """Calls that sleep ``secs`` and record the most running at once and their threads."""
    lock = threading.Lock()
    seen = {"in": 0, "most": 0, "threads": [], "who": []}

    def make(value, secs):
        def call():
            with lock:
                seen["in"] += 1
                seen["most"] = max(seen["most"], seen["in"])
                seen["threads"].append(threading.current_thread().name)
                seen["who"].append(WHO.get())
            time.sleep(secs)
            with lock:
                seen["in"] -= 1
            return value
        return call

    return make, seen


@pytest.mark.parametrize("width, most", [(None, 6), (6, 6), (10, 6), (4, 4), (2, 2), (1, 1)])
def test_results_come_in_call_order_with_at_most_width_running(width, most):
    make, seen = _tracker()
    # the first calls are the slowest, so the results come back out of order
    calls = [make(i * 10, 0.3 - 0.04 * i) for i in range(6)]
    assert fan_out(calls, width) == [0, 10, 20, 30, 40, 50]
    assert seen["most"] == most
    me = threading.current_thread().name
    assert me in seen["threads"]
    helpers = {t for t in seen["threads"] if t != me}
    assert all(t.startswith("mas-fanout") for t in helpers) and len(helpers) <= most - 1
    if width == 1:
        assert set(seen["threads"]) == {me}


def test_helpers_run_in_a_copy_of_the_callers_context():
    make, seen = _tracker()
    token = WHO.set("the game")
    try:
        fan_out([make(i, 0.2) for i in range(4)])
    finally:
        WHO.reset(token)
    assert seen["who"] == ["the game"] * 4 and len(set(seen["threads"])) == 4


def test_the_first_failing_call_in_call_order_is_raised_after_the_running_ones_finish():
    finished = []

    def ok(i, secs):
        def call():
            time.sleep(secs)
            finished.append(i)
            return i
        return call

    def boom(msg, secs):
        def call():
            time.sleep(secs)
            raise ValueError(msg)
        return call

    # call 1 fails last, call 2 first: call 1's error is the one raised; call 0 (running) finishes
    with pytest.raises(ValueError, match="one"):
        fan_out([ok(0, 0.4), boom("one", 0.2), boom("two", 0.05)])
    assert finished == [0]


def test_no_call_starts_after_a_failure():
    started = []

    def call(i):
        def f():
            started.append(i)
            if i == 1:
                raise RuntimeError("stop")
            return i
        return f

    with pytest.raises(RuntimeError, match="stop"):
        fan_out([call(i) for i in range(5)], 1)
    assert started == [0, 1]
    started.clear()
    with pytest.raises(RuntimeError, match="stop"):
        fan_out([call(i) for i in range(50)], 2)
    assert 1 in started and len(started) < 50


def test_no_calls_and_one_call():
    assert fan_out([]) == []
    assert fan_out([lambda: 7]) == [7]
