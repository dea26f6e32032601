"""Several servers for one model (``OPENAI_BASE_URL`` with comma-separated URLs) against two stub
servers on 127.0.0.1: fewest in flight, a cap per replica, a replica killed mid-run, every
replica down, config.json; and the request path (client.post) sending what the SDK's create sends."""

from __future__ import annotations

import json
import threading
import time

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

import mas_agents.accounting as accounting
from mas_agents.remote import usage
from mas_agents.remote import endpoints
from mas_agents.accounting import AccountedModel
from mas_agents.call_log import CallRecorder
from mas_agents.errors import ModelUnavailable
from mas_agents.llm import make_chat_model
from tests.stub_openai import StubServer

MSGS = [SystemMessage(content="You play a game."), HumanMessage(content="Say something.")]


@pytest.fixture(autouse=True)
def fresh_endpoints():
    endpoints.configure(structured="prompt", context_window=None, max_connections=2, adaptive=False)
    yield
    endpoints.configure(structured="auto", context_window=None, max_connections=8, adaptive=False)


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    monkeypatch.setattr(accounting, "_sleep", lambda s: False)


def two_stubs(latency_s: float = 0.05):
    return (StubServer(latency_s=latency_s, reply=lambda body: "Answer: a").start(),
            StubServer(latency_s=latency_s, reply=lambda body: "Answer: b").start())


def replicated(monkeypatch, *urls: str, **kw):
    monkeypatch.setenv("OPENAI_BASE_URL", ",".join(urls))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return make_chat_model("openai:stub", timeout=kw.pop("timeout", 5.0), **kw)


def test_base_urls_are_parsed_in_order_without_repeats():
    assert endpoints.parse_base_urls(None) == []
    assert endpoints.parse_base_urls("http://a:1/v1") == ["http://a:1/v1"]
    assert endpoints.parse_base_urls(" http://a:1/v1/, http://b:2/v1 ,http://a:1/v1,") == ["http://a:1/v1", "http://b:2/v1"]
    with pytest.raises(ValueError, match="'b:2/v1' is not an http"):
        endpoints.parse_base_urls("http://a:1/v1,b:2/v1")


def test_one_url_builds_a_model_without_replicas(monkeypatch):
    m = replicated(monkeypatch, "http://127.0.0.1:9/v1/")
    assert m.replica_urls is None and m.replicas() is None
    assert m.base_urls() == ["http://127.0.0.1:9/v1"]


def test_requests_spread_over_replicas_each_under_its_own_cap(monkeypatch):
    a, b = two_stubs()
    try:
        m = replicated(monkeypatch, a.base_url, b.base_url)
        assert m.base_urls() == [a.base_url, b.base_url]
        assert usage.parallel_calls(m) == 4 and usage.auto_concurrency(["openai:stub"]) == 4
        acc = AccountedModel(m, CallRecorder(None), label="openai:stub")
        replies: list[str] = []
        lock = threading.Lock()

        def worker():
            for _ in range(5):
                text, _ = acc.chat(MSGS, actor="p", purpose="t", max_tokens=16)
                with lock:
                    replies.append(text)

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(replies) == 40
        # fewest in flight: both replicas took work, neither more than its cap at once
        assert len(a.requests) >= 10 and len(b.requests) >= 10 and len(a.requests) + len(b.requests) == 40
        assert a.in_flight_max <= 2 and b.in_flight_max <= 2
        assert {endpoints.endpoint(a.base_url).limiter.peak, endpoints.endpoint(b.base_url).limiter.peak} <= {1, 2}
        report = usage.endpoint_report([acc])
        assert [r["base_url"] for r in report] == [a.base_url, b.base_url]
        assert all(r["replicas"] == [a.base_url, b.base_url] and r["max_connections"] == 2 for r in report)
    finally:
        a.stop()
        b.stop()


def test_a_replica_killed_mid_run_is_skipped_and_every_call_succeeds(monkeypatch):
    a, b = two_stubs(latency_s=0.02)
    try:
        m = replicated(monkeypatch, a.base_url, b.base_url)
        rec = CallRecorder(None)
        acc = AccountedModel(m, rec, label="openai:stub")
        errors: list[BaseException] = []

        def worker():
            try:
                for _ in range(15):
                    acc.chat(MSGS, actor="p", purpose="t", max_tokens=16)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        while len(b.requests) < 5:
            time.sleep(0.005)
        b.stop()                                  # killed mid-run: refused connections from now on
        n_b = len(b.requests)
        for t in threads:
            t.join()
        assert errors == []
        assert rec.totals()["calls"] == 60 and rec.totals()["failures"] == 0
        assert all(c.ok and c.retries == 0 for c in rec.calls())      # the other replica took them at once
        # b took nothing after it died; the requests it held when it died (at most its cap) went to a
        assert len(b.requests) == n_b and 60 - n_b <= len(a.requests) <= 60 - n_b + 2
        assert not endpoints.endpoint(b.base_url).is_up()
        assert endpoints.endpoint(a.base_url).is_up()
    finally:
        a.stop()
        b.stop()


def test_every_replica_down_stops_with_the_one_line_error(monkeypatch):
    a, b = two_stubs()
    m = replicated(monkeypatch, a.base_url, b.base_url)
    acc = AccountedModel(m, CallRecorder(None), label="openai:stub", max_retries=1)
    acc.chat(MSGS, actor="p", purpose="t", max_tokens=16)
    a.stop()
    b.stop()
    with pytest.raises(ModelUnavailable) as info:
        acc.chat(MSGS, actor="p", purpose="t", max_tokens=16)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"model servers {a.base_url}, {b.base_url} are unreachable")


def test_every_replica_down_after_both_answered_is_retried_then_stops(monkeypatch):
    a, b = two_stubs()
    m = replicated(monkeypatch, a.base_url, b.base_url)
    acc = AccountedModel(m, CallRecorder(None), label="openai:stub", max_retries=1)
    for ep in (endpoints.endpoint(a.base_url), endpoints.endpoint(b.base_url)):    # both probed already
        ep.context_window(m)
    a.stop()
    b.stop()
    with pytest.raises(ModelUnavailable,
                       match=f"^model servers {a.base_url}, {b.base_url} are unreachable after 1 retry "):
        acc.chat(MSGS, actor="p", purpose="t", max_tokens=16)


def test_a_replica_down_at_start_is_recorded_and_passed_over(monkeypatch):
    a, b = two_stubs()
    b.stop()
    try:
        m = replicated(monkeypatch, a.base_url, b.base_url)
        report = usage.endpoint_report([m])
        assert report[0]["base_url"] == a.base_url and "unreachable" not in report[0]
        assert report[1]["base_url"] == b.base_url and "is unreachable" in report[1]["unreachable"]
        acc = AccountedModel(m, CallRecorder(None), label="openai:stub")
        for _ in range(4):
            assert acc.chat(MSGS, actor="p", purpose="t", max_tokens=16)[0] == "Answer: a"
    finally:
        a.stop()


def test_the_request_body_is_what_the_sdk_create_path_sends(monkeypatch):
    """RemoteChat posts langchain-openai's payload with client.post (no per-call TypedDict walk);
    the JSON the server receives is the one chat.completions.create sent."""
    endpoints.configure(structured="auto")
    with StubServer(reply=lambda body: "Answer: a") as stub:
        m = replicated(monkeypatch, stub.base_url)
        fmt_fields = {"grammar": 'root ::= "x"'}
        m.invoke(MSGS, max_tokens=40, extra_body=fmt_fields)
        ours = stub.requests[-1]
        ChatOpenAI._generate(m, MSGS, max_tokens=40, extra_body=fmt_fields)   # the SDK's create path
        theirs = stub.requests[-1]
    assert ours == theirs
    assert ours["max_tokens"] == 40 and ours["grammar"] == 'root ::= "x"' and "max_completion_tokens" not in ours


def test_spy_play_on_two_servers_one_killed_mid_game_then_both_gone(monkeypatch, tmp_path):
    """The CLI end to end: config.json records both replicas; a replica killed during the game
    costs nothing; with both gone the run stops with the one-line error, exit 3."""
    from typer.testing import CliRunner

    from mas_agents.cli import app
    from tests.mas_agents.test_remote import wis_reply

    a = StubServer(latency_s=0.01, reply=wis_reply).start()
    b = StubServer(latency_s=0.01, reply=wis_reply).start()
    killer = threading.Thread(target=lambda: (_wait_for(lambda: len(b.requests) >= 4), b.stop()))
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{a.base_url},{b.base_url}")
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        args = ["spy", "play", "--agents", "plain@openai:stub", "--pair", "tea/coffee", "--max-connections", "2"]
        killer.start()
        res = CliRunner().invoke(app, args + ["--out", str(tmp_path / "g1")])
        killer.join()
        assert res.exit_code == 0, res.output
        cfg = json.loads((tmp_path / "g1" / "config.json").read_text())
        assert [e["base_url"] for e in cfg["endpoints"]] == [a.base_url, b.base_url]
        assert all(e["replicas"] == [a.base_url, b.base_url] for e in cfg["endpoints"])
        calls = [json.loads(x) for x in (tmp_path / "g1" / "llm_calls.jsonl").read_text().splitlines()]
        assert calls and all(c["ok"] for c in calls)
        assert len(b.requests) >= 4 and len(a.requests) > 0
    finally:
        a.stop()
        b.stop()
    res = CliRunner().invoke(app, args + ["--out", str(tmp_path / "g2")])
    assert res.exit_code == 3
    assert "Traceback" not in res.output
    [line] = [x for x in res.output.splitlines() if x.startswith("error:")]
    assert f"model servers {a.base_url}, {b.base_url} are unreachable" in line and "Finished work is kept" in line


def _wait_for(cond, timeout_s: float = 30.0) -> None:
    end = time.monotonic() + timeout_s
    while not cond() and time.monotonic() < end:
        time.sleep(0.002)
