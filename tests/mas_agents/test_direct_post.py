"""mas_agents.remote.transport.DirectPost: a chat-completion body posted with urllib3 keeps the SDK's headers,
key, timeout and error classes (the whole RemoteChat path over it is tested against the stub in
test_remote.py and test_probe_faults.py; here each mapping alone, against a tiny server)."""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pytest

from mas_agents.remote.transport import DirectPost, _plain_key_client


class Server:
    """Answers every POST with ``answer(handler) -> (status, content_type, body, headers)`` and
    keeps what it received."""

    def __init__(self, answer):
        self.answer = answer
        self.received: list[tuple[dict, bytes]] = []
        self.client_ports: list[int] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"     # keep-alive, as the model servers do

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.received.append((dict(self.headers), body))
                outer.client_ports.append(self.client_address[1])
                status, ctype, data, extra = outer.answer(self)
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                for k, v in extra:
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *a):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def ok(handler):
    return 200, "application/json", json.dumps({"choices": [{"message": {"content": "hi"}}]}).encode(), ()


@pytest.fixture
def serve():
    made = []

    def make(answer):
        made.append(Server(answer))
        return made[-1]

    yield make
    for s in made:
        s.close()


def client(url, **kw):
    return openai.OpenAI(base_url=url, api_key="k-123", max_retries=0, **kw)


def test_the_body_goes_as_json_with_the_clients_key_and_headers(serve):
    s = serve(ok)
    body = {"model": "m", "messages": [{"role": "user", "content": "héllo"}], "grammar": "root ::= \"a\""}
    got = DirectPost(s.url, 4).post(client(s.url, default_headers={"X-Extra": "1"}), "/chat/completions", body)
    assert got == {"choices": [{"message": {"content": "hi"}}]}
    headers, raw = s.received[0]
    assert json.loads(raw) == body
    assert headers["Authorization"] == "Bearer k-123" and headers["Content-Type"] == "application/json"
    assert headers["X-Extra"] == "1" and headers["User-Agent"].startswith("OpenAI/Python")
    assert not any("Omit" in v for v in headers.values())


def test_a_refused_connection_is_a_connection_error_not_a_timeout():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()   # nothing listens there now
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(openai.APIConnectionError) as err:
        DirectPost(url, 1).post(client(url), "/chat/completions", {})
    assert not isinstance(err.value, openai.APITimeoutError)


def test_a_slow_reply_is_a_timeout(serve):
    def slow(handler):
        time.sleep(1.5)
        return ok(handler)

    s = serve(slow)
    with pytest.raises(openai.APITimeoutError):
        DirectPost(s.url, 1).post(client(s.url, timeout=0.3), "/chat/completions", {})


def test_a_status_is_the_sdks_own_error_with_the_response(serve):
    s = serve(lambda h: (429, "application/json", b'{"error": {"message": "slow down"}}', (("Retry-After", "3"),)))
    with pytest.raises(openai.RateLimitError) as err:
        DirectPost(s.url, 1).post(client(s.url), "/chat/completions", {})
    assert err.value.status_code == 429 and err.value.response.headers["retry-after"] == "3"
    assert "slow down" in str(err.value)
    s2 = serve(lambda h: (400, "application/json", b'{"error": {"message": "bad"}}', ()))
    with pytest.raises(openai.BadRequestError):
        DirectPost(s2.url, 1).post(client(s2.url), "/chat/completions", {})


def test_a_reply_that_is_not_json_comes_back_as_text_and_bad_json_raises(serve):
    s = serve(lambda h: (200, "text/html", b"<html>proxy login</html>", ()))
    assert DirectPost(s.url, 1).post(client(s.url), "/chat/completions", {}) == "<html>proxy login</html>"
    s2 = serve(lambda h: (200, "application/json", b"{not json", ()))
    with pytest.raises(json.JSONDecodeError):
        DirectPost(s2.url, 1).post(client(s2.url), "/chat/completions", {})


def test_only_plain_key_clients_take_the_direct_path():
    assert _plain_key_client(client("http://127.0.0.1:9/v1"))
    provider = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key=lambda: "k", max_retries=0)
    assert not _plain_key_client(provider)


def test_a_plain_http_server_is_posted_over_kept_alive_stdlib_connections(serve):
    s = serve(ok)
    dp = DirectPost(s.url, 2)
    assert dp.plain is not None
    for _ in range(3):
        assert dp.post(client(s.url), "/chat/completions", {"n": 1}) == {"choices": [{"message": {"content": "hi"}}]}
    # one connection, reused: the server saw every request come from the same client port
    assert len(s.received) == 3 and len(set(s.client_ports)) == 1 and len(dp.plain._idle) == 1
    conn = dp.plain._idle[0]
    dp.post(client(s.url), "/chat/completions", {"n": 2})
    assert dp.plain._idle == [conn]
    assert conn.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)      # as urllib3 sets it


def test_an_idle_connection_the_server_closed_is_not_reused(serve):
    s = serve(ok)
    dp = DirectPost(s.url, 2)
    dp.post(client(s.url), "/chat/completions", {})
    stale = dp.plain._idle[0]
    stale.sock.shutdown(socket.SHUT_RD)     # reads now see EOF, as after the server's close
    assert dp.post(client(s.url), "/chat/completions", {}) == {"choices": [{"message": {"content": "hi"}}]}
    assert stale.sock is None and dp.plain._idle and dp.plain._idle[0] is not stale


def test_a_reply_that_closes_the_connection_is_not_kept(serve):
    s = serve(lambda h: (200, "application/json", b'{"choices": []}', (("Connection", "close"),)))
    dp = DirectPost(s.url, 2)
    assert dp.post(client(s.url), "/chat/completions", {}) == {"choices": []}
    assert dp.plain._idle == []
    assert dp.post(client(s.url), "/chat/completions", {}) == {"choices": []}
    assert len(set(s.client_ports)) == 2


def test_tls_and_proxied_servers_stay_on_urllib3(monkeypatch):
    assert DirectPost("https://api.example.com/v1", 1).plain is None
    monkeypatch.setenv("http_proxy", "http://proxy.example:3128")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    dp = DirectPost("http://10.1.2.3:8000/v1", 1)
    assert dp.plain is None and type(dp.pool).__name__ == "ProxyManager"
    monkeypatch.setenv("no_proxy", "10.1.2.3")
    assert DirectPost("http://10.1.2.3:8000/v1", 1).plain is not None


def test_a_request_goes_out_in_one_write_on_a_blocking_socket_with_the_kernels_timeouts(serve):
    s = serve(ok)
    dp = DirectPost(s.url, 1)
    dp.post(client(s.url, timeout=7.25), "/chat/completions", {"n": 1})
    conn = dp.plain._idle[0]
    # no socket timeout (which polls before every read and write); the kernel's instead
    assert conn.sock.gettimeout() is None
    for opt in (socket.SO_RCVTIMEO, socket.SO_SNDTIMEO):
        sec, usec = struct.unpack("@ll", conn.sock.getsockopt(socket.SOL_SOCKET, opt, struct.calcsize("@ll")))
        assert sec == 7 and abs(usec - 250000) <= 10000    # the kernel keeps it in its own ticks
    writes = []
    real = conn.sock

    class Counting:
        def sendall(self, data):
            writes.append(bytes(data))
            return real.sendall(data)

        def __getattr__(self, name):
            return getattr(real, name)

    conn.sock = Counting()
    body = {"n": 2, "text": "x" * 5000}   # over 2,920 bytes: http.client's request() writes it apart
    assert dp.post(client(s.url, timeout=7.25), "/chat/completions", body)["choices"]
    assert len(writes) == 1 and writes[0].startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert json.loads(writes[0].split(b"\r\n\r\n", 1)[1]) == body
    assert json.loads(s.received[-1][1]) == body


def test_a_server_that_stops_reading_is_a_send_timeout():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    held = []
    threading.Thread(target=lambda: held.append(srv.accept()), daemon=True).start()   # never reads
    url = f"http://127.0.0.1:{srv.getsockname()[1]}/v1"
    try:
        t0 = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            DirectPost(url, 1).post(client(url, timeout=0.5), "/chat/completions", {"text": "x" * 64_000_000})
        assert time.monotonic() - t0 < 30
    finally:
        srv.close()
