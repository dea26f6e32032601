"""The OpenAI-compatible stub server (tests/stub_openai.py), driven by the real ``openai`` client,
``httpx`` and raw sockets: normal replies, every fault, concurrency, HTTP framing, process mode."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import openai
import pytest

from tests.stub_openai import (HTML_ERROR_PAGE, LLAMA_CPP_CONTEXT_ERROR, NOSIZE_CONTEXT_ERROR, OPENAI_CONTEXT_ERROR,
                               StubServer, load_reply_file)

REPO = Path(__file__).resolve().parents[2]
MSGS = [{"role": "system", "content": "xy"}, {"role": "user", "content": "abcd" * 10}]   # 42 chars


def client(stub: StubServer, **kw) -> openai.OpenAI:
    return openai.OpenAI(base_url=stub.base_url, api_key="x", max_retries=0, **kw)


def ask(stub: StubServer, **kw):
    return client(stub, **kw).chat.completions.create(model="m", messages=MSGS)


@pytest.fixture
def stub():
    with StubServer(reply=lambda body: "hello") as s:
        yield s


@pytest.fixture
def quiet(caplog, capfd):
    """Asserts the test left no asyncio log records and nothing on stderr (no tracebacks)."""
    caplog.set_level(logging.DEBUG, logger="asyncio")
    yield
    records = [r for when in ("setup", "call") for r in caplog.get_records(when)]
    assert [r.getMessage() for r in records if r.name == "asyncio" and r.levelno >= logging.WARNING] == []
    assert capfd.readouterr().err == ""


def raw_exchange(stub: StubServer, *chunks: bytes, pause: float = 0.05, read_until_close: bool = True) -> bytes:
    """Send ``chunks`` on one TCP connection with a pause between them; return all bytes read."""
    with socket.create_connection(("127.0.0.1", stub.port), timeout=5) as sock:
        for i, chunk in enumerate(chunks):
            if i:
                time.sleep(pause)
            sock.sendall(chunk)
        data = b""
        while read_until_close:
            part = sock.recv(65536)
            if not part:
                break
            data += part
        return data


def chat_request(body: dict, *, close: bool = False) -> tuple[bytes, bytes]:
    payload = json.dumps(body).encode()
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n").encode()
    return head, payload


# -- normal answers ---------------------------------------------------------------------------


def test_normal_reply_usage_and_recorded_body(stub, quiet):
    resp = ask(stub)
    assert resp.choices[0].message.content == "hello"
    assert resp.choices[0].message.role == "assistant"
    assert resp.choices[0].finish_reason == "stop"
    assert resp.model == "m" and resp.object == "chat.completion" and resp.id.startswith("chatcmpl-")
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens, resp.usage.total_tokens) == (42 // 4 + 1, 2, 13)
    assert resp.usage.prompt_tokens_details is None
    assert stub.requests == [{"model": "m", "messages": MSGS}]
    ask(stub)
    assert len(stub.requests) == 2


def test_reply_sees_body_and_cached_tokens_and_usage_off():
    with StubServer(reply=lambda body: body["messages"][-1]["content"].upper(), cached_tokens=7) as s:
        resp = ask(s)
        assert resp.choices[0].message.content == "ABCD" * 10
        assert resp.usage.prompt_tokens_details.cached_tokens == 7
    with StubServer(reply=lambda body: "x", usage=False) as s:
        assert ask(s).usage is None


def test_default_reply_is_a_500_naming_the_missing_reply(quiet):
    with StubServer() as s:
        with pytest.raises(openai.InternalServerError, match="no reply function"):
            ask(s)
        assert len(s.requests) == 1


def test_reply_errors_and_non_strings_are_500s():
    with StubServer(reply=lambda body: 1 / 0) as s:
        with pytest.raises(openai.InternalServerError, match="ZeroDivisionError"):
            ask(s)
    with StubServer(reply=lambda body: None) as s:
        with pytest.raises(openai.InternalServerError, match="not str"):
            ask(s)


def test_models_404_405_and_streaming(stub, quiet):
    models = StubServer(models=[{"id": "a", "object": "model", "owned_by": "me"}])
    with models:
        assert [m.id for m in client(models).models.list()] == ["a"]
    assert [m.id for m in client(stub).models.list()] == ["stub"]
    with httpx.Client(base_url=stub.base_url) as h:
        r = h.get("/nope")
        assert r.status_code == 404 and "error" in r.json()
        assert h.get("/chat/completions").status_code == 405
        assert h.post("/chat/completions", content=b"[1]").status_code == 400
        assert h.post("/chat/completions", content=b"{not json").status_code == 400
        assert h.post("/chat/completions", json={"messages": []}).status_code == 400   # no model
    with pytest.raises(openai.BadRequestError, match="streaming not supported by the stub"):
        client(stub).chat.completions.create(model="m", messages=MSGS, stream=True)


# -- faults -----------------------------------------------------------------------------------


def test_fault_429_with_retry_after(stub, quiet):
    stub.push_faults("429", "429:2.5")
    with pytest.raises(openai.RateLimitError) as e1:
        ask(stub)
    with pytest.raises(openai.RateLimitError) as e2:
        ask(stub)
    assert e1.value.response.headers["retry-after"] == "1"
    assert e2.value.response.headers["retry-after"] == "2.5"
    assert e1.value.status_code == 429 and e1.value.code == "rate_limit_exceeded"
    assert ask(stub).choices[0].message.content == "hello"       # queue drained: normal again
    assert len(stub.requests) == 3 and stub.pending_faults == 0


@pytest.mark.parametrize("fault,status", [("500", 500), ("503", 503)])
def test_fault_5xx(stub, quiet, fault, status):
    stub.push_faults(fault)
    with pytest.raises(openai.InternalServerError) as e:
        ask(stub)
    assert e.value.status_code == status


@pytest.mark.parametrize("fault,body", [("400:context", LLAMA_CPP_CONTEXT_ERROR),
                                        ("400:openai-context", OPENAI_CONTEXT_ERROR),
                                        ("400:context-nosize", NOSIZE_CONTEXT_ERROR)])
def test_fault_context_overflow(stub, quiet, fault, body):
    stub.push_faults(fault)
    with pytest.raises(openai.BadRequestError) as e:
        ask(stub)
    assert e.value.status_code == 400
    assert e.value.response.json() == body
    assert body["error"]["message"] in str(e.value)


def test_fault_hang_times_out_the_client(stub, quiet):
    stub.push_faults("hang:3")
    t0 = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        ask(stub, timeout=0.3)
    assert time.monotonic() - t0 < 2
    assert ask(stub, timeout=5).choices[0].message.content == "hello"


def test_fault_hang_shorter_than_timeout_answers_normally(stub, quiet):
    stub.push_faults("hang:0.2")
    t0 = time.monotonic()
    assert ask(stub, timeout=5).choices[0].message.content == "hello"
    assert time.monotonic() - t0 >= 0.2


def test_fault_reset(stub, quiet):
    stub.push_faults("reset")
    with pytest.raises(openai.APIConnectionError):
        ask(stub)
    assert ask(stub).choices[0].message.content == "hello"


def test_fault_malformed(stub, quiet):
    stub.push_faults("malformed")
    with httpx.Client(base_url=stub.base_url) as h:
        r = h.post("/chat/completions", json={"model": "m", "messages": MSGS})
        assert (r.status_code, r.headers["content-type"], r.content) == (200, "application/json",
                                                                       b'{"id": "x", "choices": [')
    stub.push_faults("malformed")
    with pytest.raises(json.JSONDecodeError):      # what the installed openai (3.54) lets through, observed
        ask(stub)


def test_fault_html(stub, quiet):
    stub.push_faults("html")
    with httpx.Client(base_url=stub.base_url) as h:
        r = h.post("/chat/completions", json={"model": "m", "messages": MSGS})
        assert (r.status_code, r.headers["content-type"], r.content) == (200, "text/html", HTML_ERROR_PAGE)
    assert b"<title>502 Bad Gateway</title>" in HTML_ERROR_PAGE
    stub.push_faults("html")
    resp = ask(stub)                   # what the installed openai returns for a non-JSON 200, observed
    assert isinstance(resp, str) and resp == HTML_ERROR_PAGE.decode()
    assert ask(stub).choices[0].message.content == "hello"


def test_models_faults_have_their_own_queue(stub, quiet):
    stub.push_faults("500", on="models")
    stub.push_faults("503")                                     # for the chat queue: a listing leaves it
    stub.push_faults("html", "reset", "429:2", "malformed", on="models")
    with httpx.Client(base_url=stub.base_url) as h:
        assert h.get("/models").status_code == 500
        r = h.get("/models")
        assert (r.status_code, r.headers["content-type"], r.content) == (200, "text/html", HTML_ERROR_PAGE)
        with pytest.raises(httpx.TransportError):            # the connection dropped, nothing written
            h.get("/models")
        r = h.get("/models")
        assert (r.status_code, r.headers["retry-after"]) == (429, "2")
        assert h.get("/models").content == b'{"id": "x", "choices": ['
        assert h.get("/models").json()["data"][0]["id"] == "stub"     # the queue is drained: normal again
    assert stub.models_requests == 6 and stub.requests == [] and stub.pending_faults == 1
    with pytest.raises(openai.InternalServerError):             # the chat fault is still there, for chat
        ask(stub)
    assert stub.pending_faults == 0


@pytest.mark.parametrize("bad", ["empty_choices", "no_usage", "400:context", "400:x"])
def test_models_queue_refuses_chat_only_faults(stub, bad):
    with pytest.raises(ValueError, match="does not apply to GET /v1/models"):
        stub.push_faults("500", bad, on="models")
    with pytest.raises(ValueError, match="unknown stub fault queue"):
        stub.push_faults("500", on="props")
    assert stub.pending_faults == 0


def test_fault_empty_choices_and_no_usage(stub, quiet):
    stub.push_faults("empty_choices", "no_usage")
    resp = ask(stub)
    assert resp.choices == [] and resp.object == "chat.completion"
    resp = ask(stub)
    assert resp.usage is None and resp.choices[0].message.content == "hello"


@pytest.mark.parametrize("bad", ["nope", "429:x", "429:-1", "hang", "hang:", "hang:inf", "500:1", "", 429])
def test_unknown_fault_raises_and_queues_nothing(stub, bad):
    with pytest.raises(ValueError, match="stub fault"):
        stub.push_faults("500", bad)
    assert stub.pending_faults == 0


# -- concurrency and HTTP framing ---------------------------------------------------------------


def test_concurrent_requests_overlap():
    async def burst(s: StubServer):
        async with openai.AsyncOpenAI(base_url=s.base_url, api_key="x", max_retries=0) as c:
            return await asyncio.gather(*(c.chat.completions.create(model="m", messages=[
                {"role": "user", "content": f"q{i}"}]) for i in range(64)))

    with StubServer(latency_s=0.2, reply=lambda body: body["messages"][0]["content"]) as s:
        t0 = time.monotonic()
        results = asyncio.run(burst(s))
        elapsed = time.monotonic() - t0
        assert [r.choices[0].message.content for r in results] == [f"q{i}" for i in range(64)]
        assert elapsed < 64 * 0.2 / 4, elapsed
        assert s.in_flight_max >= 32 and s.in_flight == 0
        assert len(s.requests) == 64


def test_body_in_separate_segment_keepalive_and_pipelining(stub, quiet):
    head, payload = chat_request({"model": "m", "messages": MSGS})
    # headers split mid-way, body in two further segments, then a second request on the same connection
    head2, payload2 = chat_request({"model": "m2", "messages": MSGS}, close=True)
    data = raw_exchange(stub, head[:10], head[10:], payload[:5], payload[5:] + head2 + payload2)
    assert data.count(b"HTTP/1.1 200 OK") == 2
    assert b"Connection: keep-alive" in data and data.rstrip().endswith(b"}")
    assert [r["model"] for r in stub.requests] == ["m", "m2"]


def test_connection_close_is_honoured(stub, quiet):
    head, payload = chat_request({"model": "m", "messages": MSGS}, close=True)
    data = raw_exchange(stub, head + payload)          # returns only because the server closes
    assert data.startswith(b"HTTP/1.1 200 OK") and b"Connection: close" in data


def test_chunked_body_is_refused_explicitly(stub, quiet):
    data = raw_exchange(stub, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    assert data.startswith(b"HTTP/1.1 501") and b"chunked" in data


def test_client_disconnects_leave_no_tracebacks(quiet):
    with StubServer(latency_s=0.3, reply=lambda body: "late") as s:
        head, payload = chat_request({"model": "m", "messages": MSGS})
        for chunks in ([head[:20]], [head], [head + payload[:3]], [head + payload]):
            with socket.create_connection(("127.0.0.1", s.port)) as sock:
                for c in chunks:
                    sock.sendall(c)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")  # close with RST
        time.sleep(0.5)                                # the answer to the last one hits a closed socket
        assert ask(s).choices[0].message.content == "late"
        assert s.in_flight == 0
        s.push_faults("hang:5")                        # stop() while a request is hanging
        t = threading.Thread(target=lambda: pytest.raises(openai.APIConnectionError, ask, s), daemon=True)
        t.start()
        time.sleep(0.2)
    t.join(5)
    assert not t.is_alive()


def test_start_stop_lifecycle():
    s = StubServer(reply=lambda body: "x").start()
    assert s.base_url.startswith("http://127.0.0.1:") and s.base_url.endswith("/v1")
    with pytest.raises(RuntimeError):
        s.start()
    with s:                                            # entering a started stub does not restart it
        assert ask(s).choices[0].message.content == "x"
    s.stop()                                           # idempotent
    with pytest.raises(openai.APIConnectionError):
        ask(s)
    with pytest.raises(ValueError):
        StubServer(latency_s=-1)


# -- process mode -------------------------------------------------------------------------------


def test_reply_file(tmp_path):
    f = tmp_path / "r.json"
    f.write_text(json.dumps({"Vote": "Vote: Alice", "Introduction": "Introduction: hi", "default": "ok"}))
    reply = load_reply_file(str(f))
    body = lambda text: {"messages": [{"role": "user", "content": text}, {"role": "assistant", "content": "Vote"}]}
    assert reply(body("Introduction then Vote")) == "Vote: Alice"          # first key in file order wins
    assert reply(body("say your Introduction")) == "Introduction: hi"
    assert reply(body("anything")) == "ok"
    f.write_text(json.dumps({"Vote": "x"}))
    with pytest.raises(ValueError, match="default"):
        load_reply_file(str(f))


def test_process_mode_prints_ready_and_answers(tmp_path):
    f = tmp_path / "r.json"
    f.write_text(json.dumps({"Vote": "Vote: Bob", "default": "fine"}))
    proc = subprocess.Popen([sys.executable, "-m", "tests.stub_openai", "--latency", "0.05", "--reply-file", str(f)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()                  # the child prints READY within a second
        assert line.startswith("READY http://127.0.0.1:"), (line, proc.stderr.read() if proc.poll() else "")
        base_url = line.split()[1]
        c = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=5)
        r = c.chat.completions.create(model="m", messages=[{"role": "user", "content": "Vote now"}])
        assert r.choices[0].message.content == "Vote: Bob"
        r = c.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert r.choices[0].message.content == "fine"
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=5)
    assert proc.returncode == 0 and err == ""


def test_process_mode_rejects_a_bad_reply_file(tmp_path):
    f = tmp_path / "r.json"
    f.write_text("[]")
    r = subprocess.run([sys.executable, "-m", "tests.stub_openai", "--reply-file", str(f)], cwd=REPO,
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 2 and "default" in r.stderr
