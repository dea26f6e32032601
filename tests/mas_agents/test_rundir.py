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


def test_read_jsonl_numbers_lines_and_names_a_bad_one(tmp_path):
    """One JSON-lines reader for events, call records and word pairs: values with their line
    numbers (blank lines skipped but counted), and a bad line named by file and number."""
    from mas_agents.accounting import read_calls
    from mas_agents.events import read_events
    from mas_agents.rundir import read_jsonl
    f = tmp_path / "x.jsonl"
    f.write_text('{"a": 1}\n\n[2]\n')
    assert read_jsonl(f) == [(1, {"a": 1}), (3, [2])]
    f.write_text('{"a": 1}\n{oops\n')
    with pytest.raises(ValueError, match=r"x.jsonl:2: not a JSON event"):
        read_events(f)
    f.write_text('{"call_id": "c"}\n')   # JSON, but not a whole call record
    with pytest.raises(ValueError, match=r"x.jsonl:1: not an LLM call record"):
        read_calls(f)
    f.write_text('[1]\n')
    with pytest.raises(ValueError, match=r"x.jsonl:1: not an LLM call record"):
        read_calls(f)
    assert read_calls(tmp_path / "missing.jsonl") == []
