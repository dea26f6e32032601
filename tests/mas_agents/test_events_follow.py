"""follow_events: a game's events reach events.jsonl while it is played (mas serve watches it)."""

import json

from mas_agents import appender
from mas_agents.events import follow_events, read_events


def test_events_are_on_disk_after_each_state_and_whole_at_the_end(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"stale": true}\n', encoding="utf-8")     # a replayed game starts afresh
    seen_mid_game = []

    def states():
        events = []
        for n in (1, 3, 3, 4):
            events = events + [{"kind": "k", "content": f"e{i}"} for i in range(len(events), n)]
            yield {"events": events, "other": n}
            appender.sync()    # the writer thread's batch (what mas serve sees within BATCH_S)
            seen_mid_game.append([json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()])
    last = follow_events(path, states())
    # after each state the file holds exactly that state's events, numbered by position
    assert [[(e["content"], e["step"]) for e in lines] for lines in seen_mid_game] == [
        [("e0", 0)], [("e0", 0), ("e1", 1), ("e2", 2)], [("e0", 0), ("e1", 1), ("e2", 2)],
        [("e0", 0), ("e1", 1), ("e2", 2), ("e3", 3)]]
    assert last["other"] == 4 and [e["step"] for e in read_events(path)] == [0, 1, 2, 3]


def test_events_published_inside_a_step_are_on_disk_at_once_and_not_written_twice(tmp_path):
    """A game whose step makes several moves publishes each move's events (``Table.watch``):
    they reach the file before the step ends, and the step's state adds only what is left."""
    path = tmp_path / "events.jsonl"
    hook = []

    def on_disk():
        appender.sync()
        return [(e["content"], e["step"]) for e in map(json.loads, path.read_text(encoding="utf-8").splitlines())]

    mid_step = []

    def states():
        publish = hook[0]
        first = [{"content": "a"}, {"content": "b"}]
        publish(first[:1])
        mid_step.append(on_disk())
        publish(first[1:])
        mid_step.append(on_disk())
        yield {"events": first}                              # the step's state: nothing new to write
        mid_step.append(on_disk())
        yield {"events": first + [{"content": "c"}]}         # a step that published nothing
    last = follow_events(path, states(), hook.append)
    assert mid_step == [[("a", 0)], [("a", 0), ("b", 1)], [("a", 0), ("b", 1)]]
    assert on_disk() == [("a", 0), ("b", 1), ("c", 2)] and len(last["events"]) == 3


def test_the_final_file_is_what_write_events_writes(tmp_path):
    """The rewrite at the end reuses the lines already encoded: the same bytes as encoding the
    final events again (non-ASCII text and a non-JSON value included)."""
    from pathlib import Path

    from mas_agents.events import write_events

    path = tmp_path / "events.jsonl"
    hook = []
    ev = [{"content": "描述", "data": {"path": Path("x")}}, {"content": "b"}, {"content": "c", "round": 2}]

    def states():
        hook[0](ev[:1])
        yield {"events": ev[:2]}
        yield {"events": [dict(e) for e in ev]}                 # equal copies, not the same objects
    follow_events(path, states(), hook.append)
    write_events(tmp_path / "again.jsonl", ev)
    assert path.read_bytes() == (tmp_path / "again.jsonl").read_bytes()
    assert [e["step"] for e in read_events(path)] == [0, 1, 2]


def test_a_state_that_does_not_keep_what_was_published_is_written_as_the_state_says(tmp_path):
    """A game that breaks publish's contract (its state's events are not the ones published):
    the final file is the state's events, not the lines appended during the game."""
    path = tmp_path / "events.jsonl"
    hook = []

    def states():
        hook[0]([{"content": "draft"}])
        yield {"events": [{"content": "kept"}, {"content": "more"}]}
    follow_events(path, states(), hook.append)
    assert [(e["content"], e["step"]) for e in read_events(path)] == [("kept", 0), ("more", 1)]
