"""mas_agents.appender: run-file lines written by one background thread, in order, with a barrier."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mas_agents import appender
from mas_agents.call_log import CallRecorder, LLMCall, read_calls


def _call(i: int) -> LLMCall:
    return LLMCall(call_id=f"c{i}", actor="A", purpose="p", model="m", input_tokens=i, output_tokens=1,
                   latency_s=0.1, retries=0, ok=True, error=None, started_at="2026-01-01T00:00:00.000+00:00",
                   prompt_chars=3, output_chars=1)


def test_lines_of_many_threads_keep_each_threads_order_and_sync_is_a_barrier(tmp_path):
    paths = [tmp_path / f"f{k}.jsonl" for k in range(3)]

    def writer(t: int) -> None:
        for i in range(200):
            appender.append(paths[i % 3], f"{t} {i}\n")

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    appender.sync()
    lines = [ln.split() for p in paths for ln in p.read_text().splitlines()]
    assert len(lines) == 8 * 200
    for t in range(8):
        for k in range(3):       # per file, each thread's lines in the order it appended them
            mine = [int(i) for tt, i in (ln.split() for ln in paths[k].read_text().splitlines()) if int(tt) == t]
            assert mine == [i for i in range(200) if i % 3 == k]


def test_a_line_reaches_the_file_without_sync_within_the_batch_time(tmp_path):
    path = tmp_path / "x.jsonl"
    appender.append(path, "one\n")
    deadline = time.monotonic() + 10 * appender.BATCH_S + 2
    while time.monotonic() < deadline and not (path.exists() and path.read_text() == "one\n"):
        time.sleep(0.02)
    assert path.read_text() == "one\n"


def test_a_removed_directory_is_made_again(tmp_path):
    path = tmp_path / "gone" / "deeper" / "x.jsonl"
    appender.append(path, "a\n")
    appender.sync()
    assert path.read_text() == "a\n"


def test_a_failed_write_is_raised_once_naming_the_file_and_other_lines_are_kept(tmp_path):
    bad = tmp_path / "a-dir.jsonl"
    bad.mkdir()                              # opening a directory for append fails
    good = tmp_path / "ok.jsonl"
    appender.append(bad, "x\n")
    appender.append(good, "kept\n")
    with pytest.raises(OSError, match="a-dir.jsonl"):
        appender.sync()
    appender.sync()                          # raised once: the writer goes on
    assert good.read_text() == "kept\n"
    appender.append(good, "more\n")
    appender.sync()
    assert good.read_text() == "kept\nmore\n"


def test_recorder_lines_are_read_back_at_once_and_flush_puts_them_on_disk(tmp_path):
    rec = CallRecorder(tmp_path / "llm_calls.jsonl", prompts=False)
    for i in range(5):
        rec.record(_call(i))
    assert [c.input_tokens for c in read_calls(tmp_path / "llm_calls.jsonl")] == [0, 1, 2, 3, 4]
    rec.record(_call(5))
    rec.flush()
    assert len((tmp_path / "llm_calls.jsonl").read_text().splitlines()) == 6


def test_to_dict_equals_asdict():
    import dataclasses
    c = _call(3)
    assert c.to_dict() == dataclasses.asdict(c) and list(c.to_dict()) == list(dataclasses.asdict(c))


def test_a_forked_child_has_a_writer_of_its_own(tmp_path):
    appender.append(tmp_path / "parent.jsonl", "p\n")
    pid = os.fork()
    if pid == 0:                              # the child: its own writer thread and queue
        try:
            appender.append(tmp_path / "child.jsonl", "c\n")
            appender.sync()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    appender.sync()
    assert (tmp_path / "child.jsonl").read_text() == "c\n"
    assert (tmp_path / "parent.jsonl").read_text() == "p\n"


@pytest.mark.parametrize("ending", ["", "raise KeyboardInterrupt", "raise SystemExit(3)"])
def test_what_is_queued_is_written_when_the_process_ends(tmp_path, ending):
    path = tmp_path / "late.jsonl"
    code = ("from mas_agents import appender\n"
            f"appender.append({str(path)!r}, 'one\\n')\n"
            f"appender.append({str(path)!r}, 'two\\n')\n" + ending + "\n")
    subprocess.run([sys.executable, "-c", code], cwd=str(Path(__file__).resolve().parents[2]),
                   capture_output=True, timeout=60)
    assert path.read_text() == "one\ntwo\n"


def test_text_that_is_not_utf8_is_an_error_naming_the_file_not_a_dead_writer(tmp_path):
    bad = tmp_path / "bad.jsonl"
    appender.append(bad, "\ud800 lone surrogate\n")
    with pytest.raises(OSError, match="bad.jsonl.*UnicodeEncodeError"):
        appender.sync()
    ok = tmp_path / "ok.jsonl"
    appender.append(ok, "fine\n")
    appender.sync()
    assert ok.read_text() == "fine\n"


def test_a_failed_write_at_exit_is_one_line_on_stderr(tmp_path):
    target = tmp_path / "a-dir.jsonl"
    target.mkdir()
    code = f"from mas_agents import appender\nappender.append({str(target)!r}, 'x\\n')\n"
    out = subprocess.run([sys.executable, "-c", code], cwd=str(Path(__file__).resolve().parents[2]),
                         capture_output=True, text=True, timeout=60)
    assert out.stderr.strip().splitlines() == [f"mas: {target}: could not append run records (Is a directory)"]
