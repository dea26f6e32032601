"""The start-up probes (mas_agents/remote.py: the structured-output dialect probe and the
context-window reads GET /models, GET /props) under the faults gameplay calls already survive,
against the stub server (tests/stub_openai.py).

A fault on the FIRST request of a run (the probe) must be retried like any call: the probe settles
the dialect the server really applies (gbnf) and a whole game finishes through the CLI (Who is
Spy, and a one-round murder mystery on the real "Sin"). Only a probe none of whose tries was
answered stops the run: one ``error:`` line, exit 3, no traceback. A context rejection that gives
no context size says what is known and invents no limit.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time

import pytest
from langchain_core.messages import HumanMessage, convert_to_messages
from typer.testing import CliRunner

import mas_agents.accounting as accounting
from mas_agents import stop
from mas_agents import remote
from mas_agents.remote import endpoints
from mas_agents.remote import dialects
from mas_agents.accounting import AccountedModel
from mas_agents.call_log import CallRecorder
from mas_agents.errors import ContextOverflowError, ModelUnavailable
from mas_agents.llm import make_chat_model
from tests.fakes import polite_player
from tests.mas_agents.test_remote import PROBE_GRAMMAR, llama_like, wis_reply
from tests.stub_openai import StubServer

#: The real backoff wait (Ctrl-C cuts it short), before the fixture below records waits instead.
REAL_SLEEP = accounting._sleep
#: The backoff of the probes during these tests (the sleeps themselves are recorded, not slept).
BACKOFF = 0.01
#: Faults a gameplay call survives, each put on the first request of a run: (chat fault, the
#: wait it causes, the fault of the first GET /models or None when the fault has no listing form).
FIRST_FAULTS = {
    "html": ("html", BACKOFF, "html"),
    "reset": ("reset", BACKOFF, "reset"),
    "empty_choices": ("empty_choices", BACKOFF, None),
    "500": ("500", BACKOFF, "500"),
    "429": ("429:2", 2.0, "429:2"),            # Retry-After: 2, longer than the backoff: waited as said
}
CTX = 8192
MODELS = [{"id": "stub", "object": "model", "owned_by": "stub", "max_model_len": CTX}]


@pytest.fixture(autouse=True)
def fresh_endpoints(monkeypatch):
    monkeypatch.setattr(dialects, "PROBE_BACKOFF_S", BACKOFF)
    endpoints.configure(structured="auto", context_window=None, max_connections=8, adaptive=False)
    yield
    endpoints.configure(structured="auto", context_window=None, max_connections=8, adaptive=False)


@pytest.fixture(autouse=True)
def waits(monkeypatch):
    """Every backoff wait (probes and gameplay calls share accounting._sleep), in order."""
    slept: list[float] = []
    monkeypatch.setattr(accounting, "_sleep", lambda s: slept.append(s) or False)
    return slept


def model_for(base_url: str, monkeypatch, timeout: float = 5.0):
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return make_chat_model("openai:stub", timeout=timeout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def probes(stub: StubServer) -> list[dict]:
    return [r for r in stub.requests if "Say anything." in json.dumps(r)]


# ---------------------------------------------------------------------------------------------
# the dialect probe


@pytest.mark.parametrize("name", [*FIRST_FAULTS, "timeout"])
def test_a_fault_on_the_dialect_probe_is_retried_and_gbnf_is_settled(monkeypatch, waits, name):
    fault, wait, _ = FIRST_FAULTS.get(name, ("hang:3", BACKOFF, None))
    with StubServer(reply=llama_like("ok")) as stub:
        stub.push_faults(fault)
        model = model_for(stub.base_url, monkeypatch, timeout=0.5)
        ep = endpoints.endpoint(stub.base_url)
        assert ep.dialect(model) == "gbnf"
        assert ep.report(model)["structured_probe"] == "probe: the server applied gbnf"
        # the same gbnf probe twice: the fault was not taken for "ignored" and vllm never asked
        assert [r.get("grammar") for r in stub.requests] == [PROBE_GRAMMAR, PROBE_GRAMMAR]
        assert waits == [wait] and stub.pending_faults == 0


def test_a_dialect_probe_that_fails_every_try_stops_in_one_line_and_caches_nothing(monkeypatch, waits):
    with StubServer(reply=llama_like("ok")) as stub:
        stub.push_faults(*["html"] * dialects.PROBE_TRIES)
        model = model_for(stub.base_url, monkeypatch)
        ep = endpoints.endpoint(stub.base_url)
        with pytest.raises(ModelUnavailable) as err:
            ep.dialect(model)
        msg = str(err.value)
        assert msg.startswith(f"model server {stub.base_url} is not ready: POST /chat/completions "
                              f"(structured-output probe, gbnf) failed all {dialects.PROBE_TRIES} tries (last: "
                              "MalformedResponse: a 200 that is not a completion (not JSON: '<html>")
        assert "\n" not in msg and "502 Bad Gateway" in msg
        assert waits == [BACKOFF * 2 ** k for k in range(dialects.PROBE_TRIES - 1)]
        assert len(stub.requests) == dialects.PROBE_TRIES and ep._dialect is None     # nothing cached
        assert ep.dialect(model) == "gbnf"                # the next call probes again, and settles


def test_ctrl_c_during_a_probe_backoff_stops_at_once(monkeypatch):
    monkeypatch.setattr(accounting, "_sleep", REAL_SLEEP)
    monkeypatch.setattr(dialects, "PROBE_BACKOFF_S", 30.0)
    with StubServer(reply=llama_like("ok")) as stub:
        stub.push_faults(*["503"] * dialects.PROBE_TRIES)
        model = model_for(stub.base_url, monkeypatch)
        timer = threading.Timer(0.3, stop.STOP.set)        # Ctrl-C while the probe waits 30 s
        timer.start()
        t0 = time.monotonic()
        try:
            with pytest.raises(stop.StopRequested):
                endpoints.endpoint(stub.base_url).dialect(model)
        finally:
            timer.cancel()
            stop.STOP.clear()
        assert time.monotonic() - t0 < 5 and len(stub.requests) == 1
        assert endpoints.endpoint(stub.base_url)._dialect is None


def test_a_rejecting_dialect_is_settled_at_once_not_retried(monkeypatch, waits):
    def reply(body):                   # applies only the vLLM field; refuses llama.cpp's
        assert "grammar" not in body
        return dialects.PROBE_TEXT if body.get("structured_outputs") else "whatever"
    with StubServer(reply=reply) as stub:
        stub.push_faults("400:unknown field 'grammar'")
        assert endpoints.endpoint(stub.base_url).dialect(model_for(stub.base_url, monkeypatch)) == "vllm"
        assert endpoints.endpoint(stub.base_url)._probe_note == "probe: the server applied vllm (not: gbnf: rejected (400))"
        assert len(stub.requests) == 2 and waits == []


# ---------------------------------------------------------------------------------------------
# GET /models (and /props)


@pytest.mark.parametrize("fault", ["html", "reset", "500", "429:2", "malformed", "hang:3"])
def test_a_fault_on_get_models_is_retried_and_the_window_read(monkeypatch, waits, fault):
    monkeypatch.setattr(dialects, "GET_TIMEOUT_S", 0.5, raising=False)      # for hang:3
    with StubServer(reply=llama_like("ok"), models=MODELS) as stub:
        stub.push_faults(fault, on="models")
        ctx = endpoints.endpoint(stub.base_url).context_window(model_for(stub.base_url, monkeypatch))
        assert ctx == (CTX, "server: /models max_model_len")
        assert stub.models_requests == 2 and stub.requests == []
        assert waits == [2.0 if fault == "429:2" else BACKOFF]


def test_get_models_answering_only_pages_leaves_the_window_unknown(monkeypatch, waits):
    with StubServer(reply=llama_like("ok"), models=MODELS) as stub:
        stub.push_faults(*["html"] * dialects.PROBE_TRIES, on="models")
        ctx = endpoints.endpoint(stub.base_url).context_window(model_for(stub.base_url, monkeypatch))
        assert ctx == (None, f"unknown (GET /models gave no JSON in {dialects.PROBE_TRIES} tries; pass --context-window)")
        assert stub.models_requests == dialects.PROBE_TRIES


def test_get_models_failing_every_try_stops_in_one_line(monkeypatch, waits):
    with StubServer(reply=llama_like("ok"), models=MODELS) as stub:
        stub.push_faults(*["503"] * dialects.PROBE_TRIES, on="models")
        ep = endpoints.endpoint(stub.base_url)
        with pytest.raises(ModelUnavailable) as err:
            ep.context_window(model_for(stub.base_url, monkeypatch))
        assert str(err.value).startswith(f"model server {stub.base_url} is not ready: GET /models failed all "
                                         f"{dialects.PROBE_TRIES} tries (last: InternalServerError: Error code: 503")
        assert ep._ctx is None and stub.models_requests == dialects.PROBE_TRIES


def test_a_server_that_comes_up_during_the_backoff_is_probed_not_declared_unreachable(monkeypatch, waits):
    """A refused connection (the server is restarting) is one fault, not a dead server."""
    port = free_port()
    stub = StubServer(reply=llama_like("ok"), models=MODELS, port=port)
    base = f"http://127.0.0.1:{port}/v1"
    monkeypatch.setattr(accounting, "_sleep", lambda s: waits.append(s) or (stub.start() and False))
    model = model_for(base, monkeypatch)
    try:
        assert endpoints.endpoint(base).context_window(model) == (CTX, "server: /models max_model_len")
        assert waits == [BACKOFF] and stub.models_requests == 1
        stub.stop()
        stub = StubServer(reply=llama_like("ok"), port=port)   # down again, up after one backoff
        assert endpoints.endpoint(base).dialect(model) == "gbnf"
        assert waits == [BACKOFF, BACKOFF] and len(stub.requests) == 1
    finally:
        stub.stop()


def test_a_dead_server_is_unreachable_after_every_try(monkeypatch, waits):
    base = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ModelUnavailable) as err:
        endpoints.endpoint(base).context_window(model_for(base, monkeypatch))
    assert re.fullmatch(rf"model server {re.escape(base)} is unreachable: GET /models failed all "
                        rf"{dialects.PROBE_TRIES} tries \(last: APIConnectionError: Connection error\.\)", str(err.value))
    assert len(waits) == dialects.PROBE_TRIES - 1


# ---------------------------------------------------------------------------------------------
# a context rejection without numbers


def test_a_context_rejection_without_a_size_says_what_is_known(monkeypatch):
    with StubServer(reply=llama_like("ok")) as stub:
        model = model_for(stub.base_url, monkeypatch)
        am = AccountedModel(model, CallRecorder(None), label="openai:stub", backoff_s=0.01)
        ep = endpoints.endpoint(stub.base_url)
        ep.dialect(model)
        stub.push_faults("400:context-nosize")
        msgs = [HumanMessage("tell me " * 50)]
        with pytest.raises(ContextOverflowError) as err:
            am.chat(msgs, actor="a", purpose="p", max_tokens=256)
        e = err.value
        assert (e.prompt_tokens, e.estimated, e.n_ctx, e.limit, e.max_tokens) == (ep.estimate_tokens(msgs), True,
                                                                                     None, None, 256)
        msg = str(e)
        assert f"prompt is about {e.prompt_tokens} tokens (our estimate) with max_tokens 256" in msg
        assert "the server did not say its context size" in msg
        assert "[the server said: Error code: 400" in msg and "exceeds the available context size" in msg
        assert "-256" not in msg and "n_ctx 0" not in msg and "only" not in msg and "\n" not in msg
        assert len(stub.requests) == 2                # not asked again: there is no room to compute


def test_the_context_message_says_whose_count_it_is_and_keeps_its_form_when_the_size_is_known():
    e = ContextOverflowError(5000, None, 256, where="http://h/v1", detail="the server said: too long")
    assert str(e) == ("model server http://h/v1: the server rejected the prompt as too long for its context: prompt "
                      "is 5000 tokens (the server's count) with max_tokens 256, and the server did not say its "
                      "context size; shorten the prompt, lower max_tokens or raise the server's context size "
                      "[the server said: too long]")
    assert str(ContextOverflowError(5000, 4096, 256)).startswith("prompt is 5000 tokens but only 3840 fit "
                                                                 "(n_ctx 4096 - max_tokens 256)")


def test_a_context_rejection_without_a_size_ends_the_cli_in_one_line(monkeypatch, tmp_path):
    from mas_agents.cli import app

    with StubServer(reply=wis_reply) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        stub.push_faults("ok", "400:context-nosize")      # the probe passes, the first description is rejected
        res = CliRunner().invoke(app, ["spy", "play", "--agents", "plain@openai:stub", "--pair", "tea/coffee",
                                       "--out", str(tmp_path / "g")])
    assert res.exit_code == 3 and "Traceback" not in res.output
    [line] = [x for x in res.output.splitlines() if x.startswith("error:")]
    assert re.match(rf"error: model server {re.escape(stub.base_url)}: the server rejected the prompt as too long "
                    r"for its context: prompt is about \d+ tokens \(our estimate\) with max_tokens \d+, and the "
                    r"server did not say its context size", line), line
    assert "-256" not in line and "n_ctx 0" not in line


# ---------------------------------------------------------------------------------------------
# whole games through the CLI


def spy_args(out) -> list[str]:
    return ["spy", "play", "--agents", "plain@openai:stub", "--pair", "tea/coffee", "--max-connections", "2",
            "--out", str(out)]


def mmg_reply(body: dict) -> str:
    """A server that applies llama.cpp's ``grammar`` field, playing every character of the murder
    mystery like :func:`tests.fakes.polite_player` (which raises on a prompt it does not know)."""
    if body.get("grammar") == PROBE_GRAMMAR:
        return dialects.PROBE_TEXT
    if "grammar" not in body:
        raise AssertionError(f"unexpected request without a grammar: {str(body)[:300]}")
    return polite_player()(convert_to_messages(body["messages"]))


def mmg_args(out, real_data_root) -> list[str]:
    return ["mmg", "run", "--script", "Sin", "--rounds", "1", "--model", "openai:stub", "--max-connections", "2",
            "--data-dir", str(real_data_root), "--out", str(out)]


def push_first(stub: StubServer, name: str) -> list[float]:
    """Put the fault on the first chat request (the dialect probe) and the first GET /models;
    returns the waits they cause."""
    fault, wait, models_fault = FIRST_FAULTS[name]
    stub.push_faults(fault)
    if models_fault is None:
        return [wait]
    stub.push_faults(models_fault, on="models")
    return [wait, wait]


def check_run(stub: StubServer, out, waits: list[float], expected: list[float]) -> dict:
    rec = json.loads((out / "result.json").read_text())
    [ep] = json.loads((out / "config.json").read_text())["endpoints"]
    assert (ep["structured"], ep["structured_probe"]) == ("gbnf", "probe: the server applied gbnf")
    assert (ep["context_window"], ep["context_window_source"]) == (CTX, "server: /models max_model_len")
    assert [r.get("grammar") for r in probes(stub)] == [PROBE_GRAMMAR, PROBE_GRAMMAR]
    calls = [json.loads(x) for x in (out / "llm_calls.jsonl").read_text().splitlines()]
    assert calls and all(c["ok"] and c["structured"] == "gbnf" and c["retries"] == 0 for c in calls)
    assert sorted(waits) == sorted(expected) and stub.pending_faults == 0
    return rec


@pytest.mark.parametrize("name", list(FIRST_FAULTS))
def test_who_is_spy_finishes_when_the_first_requests_fail(monkeypatch, tmp_path, waits, name):
    from mas_agents.cli import app

    with StubServer(reply=wis_reply, models=MODELS) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        expected = push_first(stub, name)
        res = CliRunner().invoke(app, spy_args(tmp_path / "g"))
        assert res.exit_code == 0, res.output
        rec = check_run(stub, tmp_path / "g", waits, expected)
    assert rec["outcome"]["winner"] in ("civilians", "spy") and rec["llm"]["failures"] == 0


@pytest.mark.realdata
@pytest.mark.parametrize("name", list(FIRST_FAULTS))
def test_a_murder_mystery_finishes_when_the_first_requests_fail(monkeypatch, tmp_path, waits, real_data_root, name):
    from mas_agents.cli import app

    with StubServer(reply=mmg_reply, models=MODELS) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        expected = push_first(stub, name)
        res = CliRunner().invoke(app, mmg_args(tmp_path / "m", real_data_root))
        assert res.exit_code == 0, res.output
        rec = check_run(stub, tmp_path / "m", waits, expected)
    assert rec["finished"] and rec["roles"]["Chief Wang"] == "murderer"
    assert rec["llm"]["failures"] == 0 and len(rec["outcome"]["victims"][0]["votes"]) == 4


@pytest.mark.parametrize("where", ["chat", "models"])
def test_a_probe_that_fails_every_try_ends_the_cli_with_one_line(monkeypatch, tmp_path, waits, where):
    from mas_agents.cli import app

    with StubServer(reply=wis_reply, models=MODELS) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        stub.push_faults(*["html" if where == "chat" else "500"] * dialects.PROBE_TRIES, on=where)
        res = CliRunner().invoke(app, spy_args(tmp_path / "g"))
    assert res.exit_code == 3 and "Traceback" not in res.output
    [line] = [x for x in res.output.splitlines() if x.startswith("error:")]
    request = "POST /chat/completions (structured-output probe, gbnf)" if where == "chat" else "GET /models"
    assert line.startswith(f"error: model server {stub.base_url} is not ready: {request} failed all "
                           f"{dialects.PROBE_TRIES} tries (last: ")
    assert "Finished work is kept" in line
    assert not (tmp_path / "g" / "result.json").exists()
