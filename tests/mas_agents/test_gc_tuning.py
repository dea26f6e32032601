"""The engine's garbage-collector thresholds: raised while runs play, restored after, never lowered."""

import gc
import threading

import pytest

from mas_agents.gc_tuning import YOUNG_THRESHOLD, fewer_collections
from mas_agents.rundir import run_each


@pytest.fixture(autouse=True)
def default_thresholds():
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*before)


def test_raised_inside_and_restored_after_also_after_an_error():
    with pytest.raises(KeyError):
        with fewer_collections():
            assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
            raise KeyError("x")
    assert gc.get_threshold() == (700, 10, 10)


def test_nested_uses_restore_only_when_the_last_leaves():
    with fewer_collections():
        with fewer_collections():
            assert gc.get_threshold()[0] == YOUNG_THRESHOLD
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD
    assert gc.get_threshold() == (700, 10, 10)


def test_overlapping_runs_on_two_threads_restore_once_both_are_done():
    inside, release, seen = threading.Event(), threading.Event(), []

    def other():
        with fewer_collections():
            inside.set()
            release.wait(5)
            seen.append(gc.get_threshold()[0])

    t = threading.Thread(target=other)
    with fewer_collections():
        t.start()
        assert inside.wait(5)
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD   # the other thread's run is still playing
    release.set()
    t.join(5)
    assert seen == [YOUNG_THRESHOLD]
    assert gc.get_threshold() == (700, 10, 10)


@pytest.mark.parametrize("setting", [(0, 10, 10), (100_000, 5, 5)])
def test_a_user_setting_of_off_or_higher_is_left_alone(setting):
    gc.set_threshold(*setting)
    with fewer_collections():
        assert gc.get_threshold() == setting
    assert gc.get_threshold() == setting


def test_a_change_made_inside_the_block_is_kept():
    with fewer_collections():
        gc.set_threshold(1234, 3, 4)
    assert gc.get_threshold() == (1234, 3, 4)


@pytest.mark.parametrize("concurrency", [1, 4])
def test_run_each_runs_its_items_with_the_raised_threshold(concurrency):
    seen = run_each(list(range(6)), lambda _: gc.get_threshold()[0], concurrency=concurrency)
    assert seen == [YOUNG_THRESHOLD] * 6
    assert gc.get_threshold() == (700, 10, 10)
