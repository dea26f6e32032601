"""The MMG graph end to end with fake chat models (no real LLM)."""

import json

import pytest

from mas_agents.graphs.mmg.session import run_game
from tests.fakes import polite_player
from tests.toy import TOY_PLAYERS as PLAYERS


def test_full_game_flow_and_files(tmp_path, toy_runtime):
    rules = {p: polite_player(vote_for="Bob") for p in PLAYERS}
    rules["Bob"] = polite_player(vote_for="Ann")
    rt, rec, _ = toy_runtime(tmp_path, rules)
    out = tmp_path / "run"
    res = run_game(rt, out, rec, {"model": "fake", "seed": 0})
    events = [json.loads(l) for l in (out / "events.jsonl").read_text().splitlines()]
    kinds = [e["kind"] for e in events]
    assert kinds.count("introduce") == 4
    assert kinds.count("ask") == 8 and kinds.count("answer") == 8   # 2 rounds x 4 players x 1
    assert kinds.count("vote") == 4
    assert [e["step"] for e in events] == list(range(len(events)))
    # introductions happen in seat order, before any question
    intro = [e["actor"] for e in events if e["kind"] == "introduce"]
    assert intro == PLAYERS
    assert kinds.index("ask") > max(i for i, k in enumerate(kinds) if k == "introduce")
    # every asker asked someone else and got an answer from that person
    for a, b in zip([e for e in events if e["kind"] == "ask"], [e for e in events if e["kind"] == "answer"]):
        assert a["data"]["target"] == b["actor"] != a["actor"]
    # votes are private
    assert all(e["visible_to"] == [e["actor"]] for e in events if e["kind"] == "vote")
    v = res["outcome"]["victims"][0]
    assert v["counts"] == {"Bob": 3, "Ann": 1} and v["accused"] == "Bob" and v["correct"]
    assert res["finished"] and res["invalid_actions"] == 0
    assert res["llm"]["calls"] == 4 + 16 + 4
    assert len((out / "llm_calls.jsonl").read_text().splitlines()) == 24
    t = (out / "transcript.md").read_text()
    assert "## Introductions" in t and "## Round 2" in t and "accuses Bob" in t


def test_dialogue_reaches_memory_of_everyone(tmp_path, toy_runtime):
    rt, rec, _ = toy_runtime(tmp_path, {p: polite_player() for p in PLAYERS}, rounds=1)
    run_game(rt, tmp_path / "run", rec, {})
    for a in rt.agents.values():
        chunks = a.memory.all_chunks("dialogue")
        assert sum("answered:" in c.text for c in chunks) == 4
        assert sum("introduced themselves" in c.text for c in chunks) == 4


def test_malformed_replies_reprompt_once_then_abstain(tmp_path, toy_runtime):
    def rambler(messages):
        return "I am not sure what to say about all this."

    def second_try(messages):
        if "could not read your reply" in str(messages[-1].content):
            return polite_player(vote_for="Bob")(messages[:2])  # answer the original request
        return "no format here"

    rules = {p: polite_player(vote_for="Bob") for p in PLAYERS}
    rules["Ann"] = rambler
    rules["Cid"] = second_try
    rt, rec, _ = toy_runtime(tmp_path, rules, rounds=1)
    res = run_game(rt, tmp_path / "run", rec, {})
    # Ann fails twice on every action: one invalid action each, two malformed replies each;
    # Bob, Cid and Dee all ask their first choice, Ann, so she fails three answers
    assert rt.agents["Ann"].stats == {"malformed_introduce": 2, "invalid_introduce": 1, "malformed_ask": 2,
                                      "invalid_ask": 1, "malformed_answer": 6, "invalid_answer": 3,
                                      "malformed_vote": 2, "invalid_vote": 1}
    # Cid recovers on the re-prompt of each of its three actions (nobody asks Cid anything)
    assert rt.agents["Cid"].stats == {"malformed_introduce": 1, "malformed_ask": 1, "malformed_vote": 1,
                                      "recovered_after_reprompt": 3}
    events = [json.loads(l) for l in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    inv = [e for e in events if e["kind"] == "invalid"]
    assert [(e["actor"], e["phase"]) for e in inv] == [("Ann", "introduction")] + [("Ann", "questioning")] * 4 + \
        [("Ann", "voting")]
    assert res["invalid_actions"] == len(inv) == 6
    v = res["outcome"]["victims"][0]
    assert v["votes"]["Ann"] is None and v["abstained"] == 1


def test_resume_continues_an_interrupted_game(tmp_path, toy_runtime):
    import itertools
    calls = itertools.count(1)   # next() is atomic; a shared += lost counts when players act in parallel

    def crash_after_some(messages):
        if next(calls) == 9:
            raise KeyboardInterrupt("simulated interrupt")
        return polite_player(vote_for="Bob")(messages)

    rules = {p: crash_after_some for p in PLAYERS}
    rt, rec, _ = toy_runtime(tmp_path, rules, rounds=2)
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        run_game(rt, out, rec, {})
    before = [json.loads(l) for l in (out / "events.jsonl").read_text().splitlines()]
    # the 9th call (the third asker's question) is interrupted: every finished step before it,
    # the second answer too, is checkpointed and in the events (durability "sync")
    assert [e["kind"] for e in before] == ["start"] + ["script"] * 4 + ["introduce"] * 4 + ["ask", "answer"] * 2
    with pytest.raises(FileExistsError):
        run_game(rt, out, rec, {})
    # a fresh process: new agents, new memories
    rt2, rec2, _ = toy_runtime(tmp_path, {p: polite_player(vote_for="Bob") for p in PLAYERS}, rounds=2)
    res = run_game(rt2, out, rec2, {}, resume=True)
    events = [json.loads(l) for l in (out / "events.jsonl").read_text().splitlines()]
    assert [e["kind"] for e in events].count("introduce") == 4
    assert [e["kind"] for e in events].count("answer") == 8
    assert events[: len(before)] == before
    assert res["outcome"]["victims"][0]["accused"] == "Bob"
    # the resumed agents rebuilt their dialogue memory from the checkpointed events
    assert all(len(a.memory.all_chunks("dialogue")) == 12 for a in rt2.agents.values())


class RoundNotes:
    """A block that records a private note at every ask and after every round."""
    name = "notes"

    def __init__(self):
        self.heard = 0

    def contribute(self, agent, request):
        if request.kind == "ask":
            agent.emit("target_choice", "picking the first player", data={"n": 1})
        return None

    def on_event(self, agent, event):
        self.heard += 1

    def on_round_end(self, agent, round):
        agent.emit("suspect_list", f"after round {round}: still unsure", round=round)


def test_block_events_and_round_hooks_reach_the_log(tmp_path, toy_runtime):
    rt, rec, _ = toy_runtime(tmp_path, {p: polite_player(vote_for="Bob") for p in PLAYERS}, rounds=2)
    block = RoundNotes()
    rt.agents["Cid"].blocks.append(block)
    run_game(rt, tmp_path / "run", rec, {})
    events = [json.loads(l) for l in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    notes = [e for e in events if e["actor"] == "Cid" and e["phase"] == "planning"]
    assert [e["kind"] for e in notes] == ["target_choice", "suspect_list", "target_choice", "suspect_list"]
    assert all(e["visible_to"] == ["Cid"] for e in notes)
    # the note comes right before Cid's question, and the round hook after the round ends
    i = events.index(notes[0])
    assert events[i + 1]["kind"] == "ask" and events[i + 1]["actor"] == "Cid"
    ends = [j for j, e in enumerate(events) if e["kind"] == "round_end"]
    assert len(ends) == 2 and events.index(notes[1]) > ends[0]
    # every event Cid may see before its vote: start, its script, 4 introductions, 2 x (8 asks and
    # answers, its own target_choice, round_end, its suspect_list), the vote announcement
    assert block.heard == 1 + 1 + 4 + 2 * (8 + 1 + 1 + 1) + 1
    assert "(private suspect_list): after round 1: still unsure" in (tmp_path / "run" / "transcript.md").read_text()
