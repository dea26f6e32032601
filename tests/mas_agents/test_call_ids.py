"""mas_agents.call_log.new_call_id: 32 hex characters, unique across threads, in start order,
and another prefix in a forked child."""

from __future__ import annotations

import os
import threading

from mas_agents.call_log import new_call_id


def test_ids_are_32_hex_chars_unique_across_threads_and_ordered_within_one():
    got: list[list[str]] = [[] for _ in range(8)]

    def draw(out: list[str]) -> None:
        for _ in range(2000):
            out.append(new_call_id())

    threads = [threading.Thread(target=draw, args=(out,)) for out in got]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for out in got for i in out]
    assert len(set(every)) == 16000
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in every)
    assert all(out == sorted(out) for out in got)        # a thread's ids follow the order it drew them


def test_a_forked_child_draws_another_prefix():
    parent = new_call_id()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                          # child: report its first id, exit at once
        os.write(w, new_call_id().encode())
        os._exit(0)
    os.close(w)
    child = os.read(r, 64).decode()
    os.close(r)
    os.waitpid(pid, 0)
    assert len(child) == 32 and child[:16] != parent[:16]
