"""The replayed model (issue 50, mas_agents/replayed_model.py): answers come from a run's recording,
matched by request content, with the recorded usage and metadata; a request not recorded is an
error naming the call with a diff; a run without prompts cannot be replayed."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from mas_agents.game import contract as games
from mas_agents.accounting import AccountedModel
from mas_agents.call_log import CallRecorder
from mas_agents.prompt_log import read_prompts, set_record_prompts
from mas_agents.planners.base import ActionRequest
from mas_agents.grammar import ReplyFormat
from mas_agents.llm import make_chat_model
from mas_agents.replayed_model import NotReplayable, Recording, ReplayChat, ReplayMismatch, replayable
from tests.test_toy_game import GuessChat

ROOT = Path(__file__).resolve().parents[2]
#: The toy game's own repository (a p-beauty contest), imported from its folder.
EXAMPLE = ROOT / "examples" / "toygame_repo"


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    import toygame.game as game
    games.register(game.GAME_DEF)
    yield game
    games.unregister("beauty_contest")


def _write_run(run: Path, calls: list[dict], prompts: list[dict]) -> Path:
    """A run directory holding the given call records and prompt records (gzip)."""
    run.mkdir(parents=True, exist_ok=True)
    base = {"input_tokens": None, "output_tokens": None, "latency_s": 0.1, "retries": 0, "ok": True, "error": None,
            "started_at": "2026-01-01T00:00:00.000+00:00", "prompt_chars": 1, "output_chars": 1, "phase": "gameplay",
            "cached_tokens": None, "max_tokens": None, "finish_reason": None, "structured": None}
    (run / "llm_calls.jsonl").write_text("".join(json.dumps({**base, **c}) + "\n" for c in calls))
    (run / "llm_prompts.jsonl.gz").write_bytes(gzip.compress("".join(json.dumps(p) + "\n" for p in prompts).encode()))
    return run


def _msgs(user: str) -> list[dict]:
    return [{"role": "system", "content": "You play."}, {"role": "user", "content": user}]


def _lc(user: str) -> list:
    return [SystemMessage(content="You play."), HumanMessage(content=user)]


def test_answers_by_content_in_any_order_and_repeats_in_recorded_order(tmp_path):
    run = _write_run(tmp_path / "r", [
        {"call_id": "a" * 32, "actor": "P1", "purpose": "vote#1", "model": "m"},
        {"call_id": "b" * 32, "actor": "P2", "purpose": "vote#1", "model": "m"},
        {"call_id": "c" * 32, "actor": "P3", "purpose": "vote#1", "model": "m"},
    ], [
        {"call_id": "a" * 32, "messages": _msgs("who? A"), "structured": None, "completion": "first A"},
        {"call_id": "b" * 32, "messages": _msgs("who? B"), "structured": None, "completion": "only B"},
        {"call_id": "c" * 32, "messages": _msgs("who? A"), "structured": None, "completion": "second A"},
    ])
    chat = ReplayChat(recording=Recording(run), label="m")
    # the threads' order differs from the recorded one: B first, then A twice
    assert chat.invoke(_lc("who? B")).content == "only B"
    assert chat.invoke(_lc("who? A")).content == "first A"
    assert chat.invoke(_lc("who? A")).content == "second A"
    with pytest.raises(ReplayMismatch, match="recorded 2 time\\(s\\) and is asked once more"):
        chat.invoke(_lc("who? A"))
    # another model's label holds none of these calls
    with pytest.raises(ReplayMismatch, match="recorded no call of model other"):
        ReplayChat(recording=Recording(run), label="other").invoke(_lc("who? B"))


def test_a_grammar_call_comes_back_with_the_recorded_usage_and_metadata(tmp_path):
    req = ActionRequest(kind="vote", actor="P1", prompt="Vote.", choices=["P2", "P3"])
    fmt = ReplyFormat(req, False)
    run = _write_run(tmp_path / "r", [
        {"call_id": "a" * 32, "actor": "P1", "purpose": "vote#1", "model": "local:x.gguf", "input_tokens": 120,
         "output_tokens": 7, "cached_tokens": 100, "max_tokens": 24, "finish_reason": "stop", "structured": "grammar"},
    ], [
        {"call_id": "a" * 32, "messages": _msgs("Vote."), "structured": {"grammar": fmt.gbnf()}, "completion": "Vote: P3"},
    ])
    rec = CallRecorder(tmp_path / "new" / "llm_calls.jsonl")
    model = AccountedModel(ReplayChat(recording=Recording(run), label="local:x.gguf"), rec, label="local:x.gguf")
    text, _ = model.chat(_lc("Vote."), actor="P1", purpose="vote#1", max_tokens=24, **model.constrain(fmt))
    assert text == "Vote: P3"
    c = rec.calls()[0]
    assert (c.input_tokens, c.output_tokens, c.cached_tokens, c.max_tokens, c.finish_reason, c.structured) == \
        (120, 7, 100, 24, "stop", "grammar")
    assert read_prompts(tmp_path / "new")[c.call_id]["structured"] == {"grammar": fmt.gbnf()}
    # the same messages with another cap or another format are not the recorded request
    model2 = AccountedModel(ReplayChat(recording=Recording(run), label="local:x.gguf"), rec, label="local:x.gguf")
    with pytest.raises(ReplayMismatch, match="reply cap differs \\(recorded max_tokens 24, asked 256\\)"):
        model2.chat(_lc("Vote."), actor="P1", purpose="vote#1", max_tokens=256, **model2.constrain(fmt))
    other = ReplyFormat(ActionRequest(kind="vote", actor="P1", prompt="Vote.", choices=["P2"]), False)
    with pytest.raises(ReplayMismatch, match="reply format differs"):
        model2.chat(_lc("Vote."), actor="P1", purpose="vote#1", max_tokens=24, **model2.constrain(other))


def test_a_changed_prompt_names_the_run_actor_purpose_and_diffs_the_nearest_request(tmp_path):
    run = _write_run(tmp_path / "r", [
        {"call_id": "a" * 32, "actor": "P1", "purpose": "describe#1", "model": "m"},
        {"call_id": "b" * 32, "actor": "P2", "purpose": "describe#1", "model": "m"},
    ], [
        {"call_id": "a" * 32, "messages": _msgs("Your word is tea.\nDescribe it in one sentence."),
         "structured": None, "completion": "x"},
        {"call_id": "b" * 32, "messages": _msgs("Something else entirely."), "structured": None, "completion": "y"},
    ])
    rec = CallRecorder(None)
    model = AccountedModel(ReplayChat(recording=Recording(run), label="m"), rec, label="m")
    with pytest.raises(ReplayMismatch) as info:
        model.chat(_lc("Your word is tea.\nDescribe it in two sentences."), actor="P1", purpose="describe#1")
    msg = str(info.value)
    assert f"replay of {run}: the call of P1 (describe#1) is not in the recording" in msg
    assert "message 2 (user) differs from the nearest recorded request, call " + "a" * 32 in msg
    assert "-Describe it in one sentence." in msg and "+Describe it in two sentences." in msg
    assert info.value.index == 1 and info.value.nearest == "a" * 32
    assert not rec.calls()[0].ok             # recorded as a failed call, never answered


def test_a_recorded_failure_is_replayed_as_that_call_failing(tmp_path):
    from mas_agents.errors import CallFailed
    run = _write_run(tmp_path / "r", [
        {"call_id": "a" * 32, "actor": "P1", "purpose": "vote#1", "model": "m", "ok": False,
         "error": "APITimeoutError: Request timed out."}],
        [{"call_id": "a" * 32, "messages": _msgs("Vote."), "structured": None, "completion": None,
          "error": "APITimeoutError: Request timed out."}])
    model = AccountedModel(ReplayChat(recording=Recording(run), label="m"), CallRecorder(None), label="m")
    with pytest.raises(CallFailed, match="APITimeoutError: Request timed out."):
        model.chat(_lc("Vote."), actor="P1", purpose="vote#1")


def test_replay_spec_plays_a_game_with_the_recorded_answers(toy, tmp_path):
    from mas_agents.game.runner import run
    first = run("beauty_contest", tmp_path / "a", model=GuessChat(), agents=["plain", "plain"], rounds=2)
    again = run("beauty_contest", tmp_path / "b", model=f"replay:{tmp_path / 'a'}", agents=["plain", "plain"],
                rounds=2)
    assert again["wins"] == first["wins"] and again["llm"]["calls"] == first["llm"]["calls"] == 4
    ev = [json.loads(x)["content"] for x in (tmp_path / "b" / "events.jsonl").read_text().splitlines()]
    assert ev == [json.loads(x)["content"] for x in (tmp_path / "a" / "events.jsonl").read_text().splitlines()]
    with pytest.raises(ValueError, match="missing run directory after 'replay:'"):
        make_chat_model("replay:")


def test_a_run_without_prompts_cannot_be_replayed(toy, tmp_path):
    from mas_agents.game.runner import run
    prev = set_record_prompts(False)
    try:
        run("beauty_contest", tmp_path / "np", model=GuessChat(), agents=["plain", "plain"], rounds=1)
    finally:
        set_record_prompts(prev)
    assert replayable(tmp_path / "np") == (False, "its prompts were not recorded (--no-record-prompts)")
    with pytest.raises(NotReplayable, match="its prompts were not recorded \\(a run made with --no-record-prompts\\)"):
        Recording(tmp_path / "np")
    proc = subprocess.run([str(Path(sys.executable).with_name("mas")), "rerun", str(tmp_path / "np"),
                           "--module", "toygame.game"], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(EXAMPLE), os.environ.get("PYTHONPATH", "")])})
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "cannot be replayed" in lines[0]
    assert "--no-record-prompts" in lines[0]
