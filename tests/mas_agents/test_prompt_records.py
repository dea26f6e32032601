"""The prompt log (``llm_prompts.jsonl`` / ``.gz``, mas_agents/accounting.py PROMPTS_FORMAT): what
every call's model saw and said, the agent's reading of it, ``--no-record-prompts``, the reader,
and a resumed murder mystery's reply counters (kept in the checkpointed state).

The fakes answer only what they recognise (tests/fakes.py); every reply a test checks is the one
the fake returned, logged beside the messages it received.
"""

from __future__ import annotations

import gzip
import json
import threading
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from typer.testing import CliRunner

import mas_agents.accounting as accounting
from mas_agents import prompt_log
from mas_agents.graphs.mmg.session import run_game
from mas_agents.remote import endpoints
from mas_agents.remote import dialects
from mas_agents.accounting import AccountedModel
from mas_agents.call_log import CallRecorder, LLMCall
from mas_agents.prompt_log import read_prompts
from tests.fakes import RuleChat, polite_player, wis_player
from tests.toy import TOY_PLAYERS as PLAYERS

ROLE = {SystemMessage: "system", HumanMessage: "user", AIMessage: "assistant"}


def sent(messages: list[BaseMessage]) -> list[dict]:
    """The messages a fake received, as the prompt log must hold them."""
    return [{"role": ROLE[type(m)], "content": m.content} for m in messages]


class GrammarChat(RuleChat):
    """A :class:`RuleChat` that takes a reply format as the local model does (a GBNF ``grammar``
    invoke kwarg) and logs ``(messages, kwargs, reply)`` of every call."""

    log: list = []

    def constrain(self, fmt: Any) -> dict:
        return {"grammar": fmt.gbnf()}

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any):
        res = super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
        self.log.append((list(messages), dict(kwargs), res.generations[0].message.content))
        return res


def second_try(messages):
    """Unreadable first reply; the re-prompt is answered as a polite player answers the request."""
    if "could not read your reply" in str(messages[-1].content):
        return polite_player(vote_for="Bob")(messages[:2])
    return "no format here"


def rambler(messages):
    return "I am not sure what to say about all this."


def calls_of(out) -> list[dict]:
    return [json.loads(line) for line in (out / "llm_calls.jsonl").read_text(encoding="utf-8").splitlines()]


def toy_game(tmp_path, toy_runtime, rules, **kw):
    """The toy murder mystery with a GrammarChat per player; returns (runtime, recorder, out, chats)."""
    rt, rec, out = toy_runtime(tmp_path, rules, **kw)
    chats = {}
    for p, a in rt.agents.items():
        chats[p] = GrammarChat(rule=a.model.model.rule, seen=[], log=[])
        a.model.model = chats[p]
    return rt, rec, out, chats


# ---------------------------------------------------------------------------------------------


def test_a_game_records_what_each_call_saw_and_said(tmp_path, toy_runtime):
    rules = {p: polite_player(vote_for="Bob") for p in PLAYERS}
    rules["Ann"], rules["Cid"] = rambler, second_try
    rt, rec, out, chats = toy_game(tmp_path, toy_runtime, rules, rounds=1)
    run_game(rt, out, rec, {})
    calls = calls_of(out)
    prompts = read_prompts(out)
    # one record per call, same ids; the game ended, so the log is compressed and the plain file gone
    assert [c["call_id"] for c in calls] and set(prompts) == {c["call_id"] for c in calls}
    assert len(prompts) == len(calls)
    assert (out / "llm_prompts.jsonl.gz").exists() and not (out / "llm_prompts.jsonl").exists()
    lines = [json.loads(line) for line in gzip.decompress((out / "llm_prompts.jsonl.gz").read_bytes()).splitlines()]
    assert sum(1 for r in lines if "messages" in r) == len(calls)       # exactly one call line per call
    # each player's calls, in order, are what its fake received and returned (a player's calls
    # never overlap: one action at a time, one vote)
    for p in PLAYERS:
        mine = [c["call_id"] for c in calls if c["actor"] == p]
        assert len(mine) == len(chats[p].log) > 0
        for cid, (messages, kwargs, reply) in zip(mine, chats[p].log):
            r = prompts[cid]
            assert r["messages"] == sent(messages)
            assert r["completion"] == reply
            assert r["structured"] == {"grammar": kwargs["grammar"]} and r["structured"]["grammar"].startswith("root ::=")
    # a readable reply: its parsed action; nothing re-prompted
    bob = [prompts[c["call_id"]] for c in calls if c["actor"] == "Bob"]
    assert bob[0]["parsed"] == {"kind": "introduce", "value": "I am a villager and I knew the victim."}
    assert all(r["parse_error"] is None and r["reprompt_of"] is None for r in bob)
    # Cid: unreadable first reply (parse error, no action), then the re-prompt pointing at it, read
    cid_ids = [c["call_id"] for c in calls if c["actor"] == "Cid"]
    first, again = prompts[cid_ids[0]], prompts[cid_ids[1]]
    assert first["completion"] == "no format here" and first["parsed"] is None
    assert "Introduction:" in first["parse_error"]
    assert again["reprompt_of"] == cid_ids[0] and again["parse_error"] is None
    assert again["parsed"] == {"kind": "introduce", "value": "I am a villager and I knew the victim."}
    assert again["messages"][:2] == first["messages"]
    assert again["messages"][2] == {"role": "assistant", "content": "no format here"}
    assert again["messages"][3]["role"] == "user" and "could not read your reply" in again["messages"][3]["content"]
    # Ann: unreadable twice, then abstains: both carry the parse error, the second points at the first
    ann_ids = [c["call_id"] for c in calls if c["actor"] == "Ann"]
    a1, a2 = prompts[ann_ids[0]], prompts[ann_ids[1]]
    assert a1["parse_error"] and a2["parse_error"] and a1["parsed"] is None is a2["parsed"]
    assert (a1["reprompt_of"], a2["reprompt_of"]) == (None, ann_ids[0])
    assert json.loads((out / "result.json").read_text())["llm"]["calls"] == len(prompts)


def test_a_failed_call_is_recorded_with_its_messages_and_error(tmp_path):
    from mas_agents.errors import CallFailed

    def down(messages):
        raise TimeoutError("the fake server timed out")

    rec = CallRecorder(tmp_path / "llm_calls.jsonl", prompts=True)
    model = AccountedModel(RuleChat(rule=down, seen=[]), rec, label="fake", max_retries=0)
    with pytest.raises(CallFailed):
        model.chat([SystemMessage("s"), HumanMessage("u")], actor="a", purpose="p")
    [r] = read_prompts(tmp_path).values()
    assert r["messages"] == [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    assert r["completion"] is None and r["error"] == "TimeoutError: the fake server timed out"
    assert r["call_id"] == rec.calls()[0].call_id


# --- remote models: the structured-output fields the request carried --------------------------


@pytest.fixture
def fresh_endpoints(monkeypatch):
    endpoints.configure(structured="auto", context_window=None, max_connections=8, adaptive=False)
    monkeypatch.setattr(accounting, "_sleep", lambda s: False)
    yield
    endpoints.configure(structured="auto", context_window=None, max_connections=8, adaptive=False)


def remote_vote(stub, monkeypatch, tmp_path):
    from mas_agents.planners.base import ActionRequest
    from mas_agents.agents import Agent, Persona
    from mas_agents.llm import make_chat_model
    from tests.games import GAME

    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    rec = CallRecorder(tmp_path / "llm_calls.jsonl", prompts=True)
    model = AccountedModel(make_chat_model("openai:stub", timeout=5.0), rec, label="openai:stub", backoff_s=0.01)
    agent = Agent(persona=Persona(name="Ann", players=["Ann", "Bob", "Cy"], system="You play a game."),
                  model=model, memory=None)
    action = agent.act(ActionRequest(kind="vote", actor="Ann", prompt="Vote for the spy:", choices=["Bob", "Cy"],
                                     game=GAME["wis"], context={}))
    return action, read_prompts(tmp_path)


def test_a_remote_grammar_call_records_the_grammar_field_it_sent(fresh_endpoints, monkeypatch, tmp_path):
    from tests.stub_openai import StubServer

    probe = f'root ::= "{dialects.PROBE_TEXT}"'

    def reply(body):
        if body.get("grammar") == probe:
            return dialects.PROBE_TEXT
        if "grammar" in body:
            return "Vote: Cy"
        raise AssertionError(f"unexpected request {body}")

    with StubServer(reply=reply) as stub:
        action, prompts = remote_vote(stub, monkeypatch, tmp_path)
        call = stub.requests[-1]
    assert action.valid and action.value == "Cy"
    [r] = prompts.values()
    assert r["structured"] == {"grammar": call["grammar"]}
    assert r["messages"] == [{"role": m["role"], "content": m["content"]} for m in call["messages"]]
    assert r["completion"] == "Vote: Cy" and "rendered" not in r
    assert r["parsed"] == {"kind": "vote", "value": "Cy"}


def test_a_json_schema_call_records_the_schema_and_the_raw_json(fresh_endpoints, monkeypatch, tmp_path):
    from tests.stub_openai import StubServer

    def reply(body):
        rf = body.get("response_format")
        if rf is None:
            return "I think Cy."          # ignores grammar fields
        props = rf["json_schema"]["schema"]["properties"]
        if "answer" in props:
            return json.dumps({"answer": dialects.PROBE_TEXT})
        if "vote" in props:
            return json.dumps({"vote": "Bob"})
        raise AssertionError(f"unexpected request {body}")

    with StubServer(reply=reply) as stub:
        action, prompts = remote_vote(stub, monkeypatch, tmp_path)
        call = stub.requests[-1]
    assert action.valid and action.value == "Bob"
    [r] = prompts.values()
    assert r["structured"] == {"response_format": call["response_format"]}
    assert r["completion"] == '{"vote": "Bob"}' and r["rendered"] == "Vote: Bob"
    assert r["parsed"] == {"kind": "vote", "value": "Bob"}


# --- --no-record-prompts ---------------------------------------------------------------------


def spy_play(tmp_path, monkeypatch, out, *extra: str):
    from mas_agents import llm
    from mas_agents.cli import app

    monkeypatch.setattr(llm, "make_chat_model", lambda spec="local", **kw: RuleChat(rule=wis_player(), seen=[]))
    r = CliRunner().invoke(app, ["spy", "play", "--agents", "plain,plain,plain,plain", "--pair", "Tea/Coffee",
                                 "--seed", "1", "--out", str(out), *extra])
    assert r.exit_code == 0, r.output
    return json.loads((out / "config.json").read_text(encoding="utf-8"))


def test_no_record_prompts_writes_no_prompt_file_and_config_says_so(tmp_path, monkeypatch):
    out = tmp_path / "off"
    cfg = spy_play(tmp_path, monkeypatch, out, "--no-record-prompts")
    assert cfg["record_prompts"] is False
    assert calls_of(out) and not list(out.glob("llm_prompts*"))
    assert prompt_log.record_prompts()          # the switch is restored after the command
    out = tmp_path / "on"
    cfg = spy_play(tmp_path, monkeypatch, out)
    assert cfg["record_prompts"] is True
    assert set(read_prompts(out)) == {c["call_id"] for c in calls_of(out)}


# --- the reader and the file's life -------------------------------------------------------------


def call(cid: str) -> LLMCall:
    return LLMCall(call_id=cid, actor="a", purpose="p", model="m", input_tokens=None, output_tokens=None,
                   latency_s=0.0, retries=0, ok=True, error=None, started_at="t", prompt_chars=1, output_chars=1)


def test_the_reader_merges_the_lines_of_a_call_across_the_compressed_and_plain_parts(tmp_path):
    rec = CallRecorder(tmp_path / "llm_calls.jsonl", prompts=True)
    rec.record(call("a"), {"messages": [], "structured": None, "completion": "x"})
    rec.annotate("a", parsed=None, parse_error="bad", reprompt_of=None)
    rec.flush()
    assert (tmp_path / "llm_prompts.jsonl").exists()      # written as it goes (within BATCH_S): a crash keeps it
    rec.annotate("m", parsed={"kind": "mcq", "value": frozenset({"c", "a"})})   # an mcq's letters
    assert read_prompts(tmp_path)["m"]["parsed"]["value"] == ["a", "c"]
    assert read_prompts(tmp_path)["a"]["parse_error"] == "bad"
    rec.close()
    rec.close()                                            # twice is harmless
    assert not (tmp_path / "llm_prompts.jsonl").exists()
    rec.record(call("b"), {"messages": [], "structured": None, "completion": "y"})   # e.g. a resumed game
    rec.annotate("a", note="late")                         # a later line of a call wins / adds keys
    got = read_prompts(tmp_path)
    assert list(got) == ["a", "m", "b"]
    assert got["a"] == {"call_id": "a", "messages": [], "structured": None, "completion": "x", "parsed": None,
                        "parse_error": "bad", "reprompt_of": None, "note": "late"}
    rec.close()                                            # a second gzip member: still one valid file
    assert not (tmp_path / "llm_prompts.jsonl").exists()
    assert read_prompts(tmp_path) == got
    assert read_prompts(tmp_path / "llm_calls.jsonl") == got     # the call log's path works too
    assert read_prompts(tmp_path / "nowhere") == {}


def test_the_reader_names_a_bad_line(tmp_path):
    (tmp_path / "llm_prompts.jsonl").write_text('{"call_id": "a"}\n{"messages": []}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"llm_prompts.jsonl:2: not a prompt record"):
        read_prompts(tmp_path)


def test_concurrent_calls_write_whole_lines(tmp_path):
    rec = CallRecorder(tmp_path / "llm_calls.jsonl", prompts=True)

    def work(k):
        for i in range(50):
            cid = f"{k}-{i}"
            rec.record(call(cid), {"messages": [{"role": "user", "content": "x" * 5000}], "structured": None,
                                   "completion": cid})
            rec.annotate(cid, parsed={"kind": "vote", "value": cid}, parse_error=None, reprompt_of=None)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = read_prompts(tmp_path)
    assert len(got) == 200 and all(r["completion"] == r["parsed"]["value"] == cid for cid, r in got.items())


def test_a_recorder_without_a_path_or_switched_off_writes_nothing(tmp_path):
    prev = prompt_log.set_record_prompts(False)
    try:
        rec = CallRecorder(tmp_path / "llm_calls.jsonl")
    finally:
        prompt_log.set_record_prompts(prev)
    assert not rec.records_prompts
    rec.record(call("a"), {"messages": [], "structured": None, "completion": "x"})
    rec.annotate("a", parsed=None)
    rec.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["llm_calls.jsonl"]
    assert not CallRecorder(None).records_prompts


# --- a resumed murder mystery keeps its reply counters and its prompt records -------------------


def interrupted_then_resumed(tmp_path, toy_runtime) -> tuple[dict, dict]:
    """The toy game with Cid re-prompted once per action: played through (the reference), and played
    into ``tmp_path / "run"`` with the 9th call interrupted (a KeyboardInterrupt in the fake), then
    resumed by a fresh runtime (new agents). Returns ``(reference result, resumed result)``."""
    import itertools
    calls = itertools.count(1)

    def crash_on_ninth(rule):
        def wrapped(messages):
            if next(calls) == 9:
                raise KeyboardInterrupt("simulated interrupt")
            return rule(messages)
        return wrapped

    def rules():
        r = {p: polite_player(vote_for="Bob") for p in PLAYERS}
        r["Cid"] = second_try
        return r

    ref_rt, ref_rec, _ = toy_runtime(tmp_path / "ref", rules(), rounds=2)
    ref = run_game(ref_rt, tmp_path / "ref" / "run", ref_rec, {})
    rt, rec, out = toy_runtime(tmp_path, {p: crash_on_ninth(r) for p, r in rules().items()}, rounds=2)
    with pytest.raises(KeyboardInterrupt):
        run_game(rt, out, rec, {})
    assert next(calls) == 10, "the game was not interrupted at the 9th call"
    rt2, rec2, _ = toy_runtime(tmp_path, rules(), rounds=2)
    return ref, run_game(rt2, out, rec2, {}, resume=True)


def test_a_resumed_game_keeps_the_reply_counts_made_before_the_interruption(tmp_path, toy_runtime):
    ref, res = interrupted_then_resumed(tmp_path, toy_runtime)
    # Cid's introduction (call 3, re-prompted in call 4) came before the interruption at call 9
    assert ref["malformed_replies"]["Cid"]["malformed_introduce"] == 1
    assert res["malformed_replies"] == ref["malformed_replies"]


def test_a_resumed_game_keeps_the_prompts_recorded_before_the_interruption(tmp_path, toy_runtime):
    interrupted_then_resumed(tmp_path, toy_runtime)
    out = tmp_path / "run"
    calls = calls_of(out)
    assert len(calls) > 9
    assert set(read_prompts(out)) == {c["call_id"] for c in calls}
    assert not (out / "llm_prompts.jsonl").exists()          # compressed once the game finished
