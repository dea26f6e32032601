"""Run-directory helpers."""

import json
import pytest

import dataclasses

from mas_agents.rundir import RunDir, run_each, stable_run_dir


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
    from mas_agents.call_log import read_calls
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


def _json_reference(data) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n").encode("utf-8")


def test_indented_json_is_the_standard_librarys_text():
    """jsonl.indented takes orjson only where both write the same bytes: the values
    where they differ (floats outside [1e-4, 1e16), enums, dataclasses, datetimes, subclasses,
    non-string keys, huge integers, lone surrogates, NaN) still read as json.dumps writes them."""
    import dataclasses
    import enum
    import random
    from datetime import datetime, timezone

    from mas_agents.jsonl import _orjson_alike
    from mas_agents.jsonl import indented as indented_json

    class Colour(enum.Enum):
        RED = 1

    @dataclasses.dataclass
    class Point:
        x: int

    class Name(str):
        pass

    odd = [1e-05, -2.5e-7, 1e16, 1.2345678901234568e+17, float("nan"), float("inf"), Colour.RED, Point(1),
           datetime(2026, 11, 27, tzinfo=timezone.utc), Name("a"), {1: "int key"}, {"s": {1, 2}}]
    for value in odd:
        doc = {"ok": [1, 2.5, "é\u2028\x01\"\\"], "odd": value}
        assert indented_json(doc) == _json_reference(doc), value
        assert not _orjson_alike(doc)
    huge = {"n": [2 ** 70, -2 ** 64]}          # passes the type check; orjson refuses it
    assert _orjson_alike(huge) and indented_json(huge) == _json_reference(huge)
    with pytest.raises(UnicodeEncodeError):    # a lone surrogate has no UTF-8 form, as before
        indented_json({"s": "\ud800"})

    rng = random.Random(7)

    def draw(depth: int):
        kind = rng.randrange(9 if depth < 4 else 6)
        if kind == 0:
            return rng.choice([None, True, False])
        if kind == 1:
            return rng.randint(-2 ** 63, 2 ** 64 - 1)
        if kind == 2:
            return rng.choice([0.0, -0.0, rng.uniform(1e-4, 1.0) * 10 ** rng.randint(0, 15), round(rng.random(), 4)])
        if kind in (3, 4, 5):
            return "".join(rng.choice("ab é中\n\t\"\\/\x00\x1f\u2028") for _ in range(rng.randrange(6)))
        if kind == 6:
            return [draw(depth + 1) for _ in range(rng.randrange(4))]
        if kind == 7:
            return tuple(draw(depth + 1) for _ in range(rng.randrange(3)))
        return {f"k{i}é": draw(depth + 1) for i in range(rng.randrange(4))}

    alike = 0
    for _ in range(2000):
        doc = draw(0)
        alike += _orjson_alike(doc)
        assert indented_json(doc) == _json_reference(doc), doc
    assert alike == 2000     # every drawn document took the orjson path


def test_write_json_writes_indented_json(tmp_path):
    from mas_agents.rundir import write_json

    data = {"kind": "wis", "scores": [0.5, 1e-05], "players": {"A": {"won": True}}}
    write_json(tmp_path / "r.json", data)
    assert (tmp_path / "r.json").read_bytes() == _json_reference(data)
    assert not (tmp_path / "r.json.tmp").exists()


def test_run_dir_names_the_files_a_run_writes(tmp_path):
    rd = RunDir(str(tmp_path))          # a str is kept as a Path
    assert rd.path == tmp_path
    assert {k: getattr(rd, k).name for k in ("config", "result", "events", "calls", "prompts", "transcript",
                                             "report", "checkpoints", "lock")} == {
        "config": "config.json", "result": "result.json", "events": "events.jsonl", "calls": "llm_calls.jsonl",
        "prompts": "llm_prompts.jsonl.gz", "transcript": "transcript.md", "report": "report.md",
        "checkpoints": "checkpoints.sqlite", "lock": "run.lock"}
    assert all(getattr(rd, k).parent == tmp_path for k in ("config", "result", "lock"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        rd.path = tmp_path / "x"


def test_run_dir_reads_and_writes_config_result_and_report(tmp_path):
    rd = RunDir(tmp_path)
    assert not rd.has_config() and not rd.has_result()
    with pytest.raises(FileNotFoundError, match="result.json"):
        rd.read_result()
    rd.write_config({"seed": 1, "name": "é"})
    rd.write_result({"winner": "spy"})
    rd.write_report("# report\n")
    assert rd.has_config() and rd.has_result()
    assert rd.read_config() == {"seed": 1, "name": "é"} and rd.read_result() == {"winner": "spy"}
    assert (tmp_path / "config.json").read_bytes() == b'{\n  "seed": 1,\n  "name": "\xc3\xa9"\n}\n'
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == "# report\n"
    (tmp_path / "config.json").write_text("{bad", encoding="utf-8")
    with pytest.raises(ValueError, match="config.json:1: invalid JSON"):
        rd.read_config()
