"""``mas fork`` (issue 59): a recorded Who-is-Spy game forked at round 2 with another agent in one
seat keeps the run's events before the fork point (clocks and call ids aside), answers every
call before it from the recording (none reaches a model), and plays the changed seat with the
new spec from the fork point on; an unreachable fork point or an unknown seat is one line, exit 1.
Games here are played by the fakes of tests/fakes.py."""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage
from typer.testing import CliRunner

from mas_agents.cli import app
from mas_agents.eval.rerun.fork import fork
from mas_agents.game.conformance_kit import untimed
from mas_agents.game.fork import fork_index
from mas_agents.game.runner import run
from mas_agents.planners.strategies import REASONING_TEXT
from mas_agents.prompt_log import read_prompts
from tests.fakes import RuleChat, numbered, unrecognised

PAIR = {"civilian": "tea", "spy": "coffee"}


def vague_player(messages: list[BaseMessage]) -> str:
    """Describes vaguely (a unique line per player and round) and votes for the first candidate,
    with an analysis first when the prompt asks for one; so civilians are voted out and the game
    lasts its three rounds."""
    everything = "\n".join(str(m.content) for m in messages)
    last = str(messages[-1].content)
    name = re.search(r"You are (Player \d+)", everything)
    if name is None:
        raise unrecognised("vague_player", messages)
    if '"Description: ..."' in last:
        rnd = re.search(r"^Round (\d+): it is your turn", last, re.M)
        if rnd is None:
            raise unrecognised("vague_player", messages)
        return f"Description: thing {zlib.crc32(name.group(1).encode()) % 97} of round {rnd.group(1)}"
    if '"Vote: ..."' in last:
        choice = numbered(last)[0]
        return f"I weigh the clues.\nVote: {choice}" if "analysis" in last else f"Vote: {choice}"
    raise unrecognised("vague_player", messages)


def events(d: Path) -> list[dict]:
    return [json.loads(x) for x in (d / "events.jsonl").read_text().splitlines()]


def calls(d: Path) -> list[dict]:
    return [json.loads(x) for x in (d / "llm_calls.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def parent(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rec") / "wis"
    run("wis", out, model=RuleChat(rule=vague_player), agents=["plain"] * 5, pair=PAIR, seed=3, spy_seat=4)
    rounds = {e["round"] for e in events(out)}
    assert {1, 2, 3} <= rounds          # the fork below is at a round the game played
    return out


class LiveModels:
    """The fork's live models: one fake per spec built, every call counted."""

    def __init__(self) -> None:
        self.built: list[str] = []
        self.models: list[RuleChat] = []

    def __call__(self, spec: str, **settings) -> RuleChat:
        self.built.append(spec)
        m = RuleChat(rule=vague_player, seen=[])
        self.models.append(m)
        return m

    @property
    def prompts(self) -> list[str]:
        return ["\n".join(str(x.content) for x in ms) for m in self.models for ms in m.seen]


def test_a_fork_at_round_2_replays_the_prefix_and_plays_the_new_seat_live(parent, tmp_path):
    live = LiveModels()
    out = tmp_path / "fork"
    o = fork(parent, "round:2", {"Player 2": "plain+reasoning"}, out, live=live)
    old, new = events(parent), events(out)
    at = next(i for i, e in enumerate(old) if e["round"] == 2)
    assert o.at == o.requested == at and old[at]["kind"] == "round_start"
    # the prefix is the parent's, byte for byte once clocks and call ids are set aside
    assert [untimed(e, drop=True) for e in new[:at]] == [untimed(e, drop=True) for e in old[:at]]
    assert o.prefix_identical and o.detail == ""
    # no live call before the fork: every call of round 1 was replayed, every live prompt is of round 2 on
    round1 = [c for c in calls(parent) if c["call_id"] in {i for e in old[:at] for i in e["llm_call_ids"]}]
    assert o.replayed == len(round1) > 0
    assert o.live == len(live.prompts) > 0
    assert len(calls(out)) == o.replayed + o.live
    assert not any(re.search(r"^Round 1: ", p, re.M) for p in live.prompts)
    assert all(re.search(r"^Round [23]: ", p, re.M) for p in live.prompts)
    # the changed seat's calls after the fork use the new spec: its vote prompts carry the reasoning block's text
    prompts = read_prompts(out)
    seat2 = [c for c in calls(out)[o.replayed:] if c["actor"] == "Player 2" and c["purpose"].startswith("vote")]
    assert seat2 and all(REASONING_TEXT["en"] in str(prompts[c["call_id"]]["messages"]) for c in seat2)
    others = [c for c in calls(out) if c["actor"] != "Player 2" and c["purpose"].startswith("vote")]
    assert others and not any(REASONING_TEXT["en"] in str(prompts[c["call_id"]]["messages"]) for c in others)
    reasoning = [e for e in new if e["kind"] == "reasoning"]
    assert reasoning and all(e["actor"] == "Player 2" and e["round"] >= 2 for e in reasoning)
    assert not any(e["kind"] == "reasoning" for e in old)
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["forked_from"] == {"run": str(parent), "at": at,
                                  "seats": {"Player 2": {"spec": "plain+reasoning", "model": "RuleChat"}}}
    assert cfg["agents"] == ["plain", "plain+reasoning", "plain", "plain", "plain"]
    assert json.loads((out / "result.json").read_text())["players"][1]["agent"] == "plain+reasoning"


def test_a_fork_point_inside_a_move_moves_back_to_the_start_of_that_move(tmp_path):
    parent = tmp_path / "wis"
    run("wis", parent, model=RuleChat(rule=vague_player), agents=["plain", "plain+reasoning", "plain", "plain", "plain"],
        pair=PAIR, seed=3, spy_seat=4)
    old = events(parent)
    vote = next(i for i, e in enumerate(old) if e["kind"] == "vote" and e["actor"] == "Player 2" and e["round"] == 2)
    assert old[vote - 1]["kind"] == "reasoning" and old[vote - 1]["actor"] == "Player 2"   # its move starts there
    o = fork(parent, vote, {"Player 2": "plain"}, tmp_path / "f", live=LiveModels())
    assert (o.requested, o.at) == (vote, vote - 1) and o.prefix_identical
    new = events(o.out)
    assert [untimed(e, drop=True) for e in new[:vote - 1]] == [untimed(e, drop=True) for e in old[:vote - 1]]
    # the move is the new agent's: a plain vote, no reasoning first
    assert new[vote - 1]["kind"] == "vote" and new[vote - 1]["actor"] == "Player 2"
    assert json.loads((o.out / "config.json").read_text())["forked_from"]["at"] == vote - 1


def test_a_fork_of_a_fork_is_refused_in_one_line(parent, tmp_path):
    first = fork(parent, "round:2", {"Player 2": "plain+reasoning"}, tmp_path / "a", live=LiveModels())
    r = CliRunner().invoke(app, ["fork", str(first.out), "--at", "3", "--seat", "Player 3", "--agent", "plain",
                                 "--out", str(tmp_path / "b")])
    assert r.exit_code == 1 and r.output.startswith("error: ") and "is itself a fork of" in r.output, r.output


def test_a_model_given_for_the_changed_seat_is_recorded_and_used(parent, tmp_path):
    live = LiveModels()
    o = fork(parent, 5, {"Player 1": "plain"}, tmp_path / "f", model="other-model", live=live)
    cfg = json.loads((tmp_path / "f" / "config.json").read_text())
    assert cfg["forked_from"]["seats"] == {"Player 1": {"spec": "plain@other-model", "model": "other-model"}}
    assert cfg["seat_models"]["Player 1"] == "other-model"
    assert sorted(live.built) == ["RuleChat", "other-model"]
    assert {c["model"] for c in calls(o.out) if c["actor"] == "Player 1"} == {"other-model"}


@pytest.mark.parametrize("at, message", [
    ("999", "--at 999: {run} has events 0..{last}; the last step a fork can start from is {last}"),
    ("round:9", "--at round:9: {run} has no round 9; its last round is 3 (its events run 0..{last})"),
])
def test_an_unreachable_fork_point_is_one_line_exit_1(parent, tmp_path, at, message):
    last = len(events(parent)) - 1
    r = CliRunner().invoke(app, ["fork", str(parent), "--at", at, "--seat", "Player 2", "--agent", "plain",
                                 "--out", str(tmp_path / "f")])
    assert r.exit_code == 1, r.output
    assert r.output.strip() == "error: " + message.format(run=parent, last=last)
    assert "Traceback" not in r.output and not (tmp_path / "f").exists()


def test_an_unknown_seat_is_one_line_naming_the_seats(parent, tmp_path):
    r = CliRunner().invoke(app, ["fork", str(parent), "--at", "round:2", "--seat", "Player 9", "--agent", "plain",
                                 "--out", str(tmp_path / "f")])
    assert r.exit_code == 1, r.output
    seats = ", ".join(f"Player {i}" for i in range(1, 6))
    assert r.output.strip() == f"error: --seat Player 9: no such seat in {parent}; its seats: {seats}"


def test_seats_and_agents_must_pair_up(parent, tmp_path):
    r = CliRunner().invoke(app, ["fork", str(parent), "--at", "3", "--seat", "Player 1", "--seat", "Player 2",
                                 "--agent", "plain", "--out", str(tmp_path / "f")])
    assert r.exit_code == 1 and "2 --seat but 1 --agent" in r.output


def test_fork_index_reads_an_index_or_a_round():
    evs = [{"round": 0}, {"round": 1}, {"round": 1}, {"round": 2}]
    assert fork_index(evs, "2") == 2 and fork_index(evs, 0) == 0 and fork_index(evs, "round:2") == 3
    with pytest.raises(ValueError, match="expected an event index"):
        fork_index(evs, "step7")


def test_the_cli_forks_and_says_what_was_replayed(parent, tmp_path, monkeypatch):
    from mas_agents.game import fork as kit
    live = LiveModels()
    monkeypatch.setattr(kit, "build_live", live)
    out = tmp_path / "f"
    r = CliRunner().invoke(app, ["fork", str(parent), "--at", "round:2", "--seat", "Player 2", "--agent",
                                 "plain+reasoning", "--out", str(out)])
    assert r.exit_code == 0, r.output
    n = len(calls(out))
    at = next(i for i, e in enumerate(events(parent)) if e["round"] == 2)
    assert r.output.strip().startswith(f"{parent} forked at event {at} into {out}: Player 2 -> plain+reasoning; ")
    assert r.output.strip().endswith(f"calls replayed, {len(live.prompts)} live")
    replayed = int(r.output.split("; ")[1].split()[0])
    assert replayed + len(live.prompts) == n and replayed > 0


def test_the_cli_names_a_model_it_cannot_build_in_one_line(parent, tmp_path):
    r = CliRunner().invoke(app, ["fork", str(parent), "--at", "round:2", "--seat", "Player 2", "--agent", "plain",
                                 "--out", str(tmp_path / "f")])
    assert r.exit_code == 1 and r.output.startswith("error: ") and "RuleChat" in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1
