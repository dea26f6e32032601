"""Run-directory helpers."""

import pytest

from mas_agents.rundir import run_each, stable_run_dir


@pytest.mark.parametrize("concurrency", [1, 3])
def test_run_each_runs_everything_and_reports_each(concurrency):
    seen = []
    out = run_each(list(range(7)), lambda x: x * x, concurrency=concurrency, done=lambda it, r: seen.append((it, r)))
    assert sorted(out) == [x * x for x in range(7)]
    assert sorted(seen) == [(x, x * x) for x in range(7)]


def test_run_each_propagates_the_first_error():
    def boom(x):
        if x == 2:
            raise ValueError("bad item 2")
        return x
    for c in (1, 2):
        with pytest.raises(ValueError, match="bad item 2"):
            run_each([0, 1, 2, 3], boom, concurrency=c)


def test_stable_run_dir_has_no_timestamp():
    assert str(stable_run_dir("magic", "all", "plain+pgm", "0-1")) == "runs/magic-all-plain_pgm-0-1"
