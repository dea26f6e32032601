"""One deterministic Who-is-Spy agent built on the platform's SDK, logging all it is sent.

Run it with the SDK venv's python (:mod:`tests.wis_sdk.env`), never ours::

    <sdk-venv>/bin/python tests/wis_sdk/sdk_agent.py --port P --log FILE [--host 127.0.0.1]

``--port 0`` binds a free port. Once the socket listens the script prints
``READY http://HOST:PORT`` (flushed), then serves until SIGTERM/SIGINT. One process is one agent:
the SDK's ``SimpleMemory.memories`` is a class attribute (``agent_build_sdk/memory/memory.py``),
so two agents in one process would share their memory.

What comes from the SDK (0.0.29) and is used as is:

* the HTTP service: ``EndpointServer(agent).app`` (``agent_build_sdk/server/server.py``):
  ``POST /agent/init`` clears the memory and answers the model name, ``/agent/checkHealth``
  answers ``result: null``, ``/agent/perceive`` answers ``success: false`` with
  ``errMsg "perceive error ..."`` when ``perceive`` raises, ``/agent/interact`` has no guard
  (an exception is an HTTP 500). ``AgentBuilder.start()`` binds 0.0.0.0:7860, hence our own
  uvicorn on a socket bound here;
* ``BasicAgent`` and its ``SimpleMemory`` (``agent_build_sdk/sdk/agent.py``).

What the agent does (written for these tests, mirroring the data flow of the SDK's example agent,
``agent_build_sdk/example/spy_agent.py``, ``SpyAgent.perceive``):

* ``start``: clears the memory and stores its own name from ``req.message`` (not ``req.name``);
* ``distribution``: stores ``req.word``;
* ``round``: with a ``name``, appends ``"<name>: <message>"`` to the history (a ``None`` message
  raises there, as in the example); without one it is the host's round announcement;
* ``vote``: appends ``"<name>: <message>"`` (voter and target; ``None`` for either raises);
* ``vote_result``: records ``req.name`` as voted out (empty: nobody);
* ``result``: looks for its stored name in ``req.message`` (``None`` raises, as in the example);
* any other status raises ``NotImplementedError`` (the server answers ``success: false``).

Interactions are deterministic (:mod:`deterministic`, a sibling module): ``round`` -> a short
sentence unique per (stored name, round) that never holds the stored word; ``vote`` -> the first
candidate of ``req.message.split(",")`` that differs from the stored name; any other status
raises (HTTP 500, as an example agent would).

The log (``--log``, JSON lines, appended and flushed per request) has one object per HTTP
request: ``path``, ``request`` (the JSON body, or its text when not JSON), ``http_status``,
``response`` (the JSON reply or its text), ``memory`` (the stored ``name`` and ``word`` after
the request, ``null`` when unset) and, for a vote, ``vote`` = ``{candidates, offered_self,
offered_self_stripped}`` (whether the list held the stored name, raw and after stripping).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import socket
import sys
import threading
import time

import uvicorn
from agent_build_sdk.model.model import (STATUS_DISTRIBUTION, STATUS_RESULT, STATUS_ROUND, STATUS_START,
                                         STATUS_VOTE, STATUS_VOTE_RESULT, AgentReq, AgentResp)
from agent_build_sdk.sdk.agent import BasicAgent
from agent_build_sdk.server.server import EndpointServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deterministic  # noqa: E402  (the sibling module, shared with our in-process fake)


def _get(memory, key):
    return memory.load_variable(key) if memory.has_variable(key) else None


class DeterministicSdkAgent(BasicAgent):
    """An SDK agent that perceives like the example agent and acts by fixed rules."""

    def __init__(self, name: str, model_name: str):
        super().__init__(name, model_name=model_name)
        self.note: dict | None = None     # what the last interact wants logged (read by the recorder)

    def perceive(self, req=AgentReq):
        mem = self.memory
        if req.status == STATUS_START:
            mem.clear()
            mem.set_variable("name", req.message)
            mem.set_variable("speeches", [])
            mem.set_variable("votes", [])
            mem.set_variable("out", [])
            mem.append_history("Host: a game begins.")
        elif req.status == STATUS_DISTRIBUTION:
            mem.set_variable("word", req.word)
            mem.append_history("Host: " + str(_get(mem, "name")) + " gets a word.")
        elif req.status == STATUS_ROUND:
            if req.name:
                mem.append_history(req.name + ": " + req.message)
                mem.load_variable("speeches").append([req.round, req.name, req.message])
            else:
                mem.set_variable("round", req.round)
                mem.append_history("Host: round " + str(req.round) + ".")
        elif req.status == STATUS_VOTE:
            mem.append_history(req.name + ": " + req.message)
            mem.load_variable("votes").append([req.round, req.name, req.message])
        elif req.status == STATUS_VOTE_RESULT:
            mem.load_variable("out").append(req.name or "")
            mem.append_history("Host: " + (req.name + " is out." if req.name else "nobody is out."))
        elif req.status == STATUS_RESULT:
            mem.set_variable("named_in_result", mem.load_variable("name") in req.message)
            mem.append_history(req.message)
        else:
            raise NotImplementedError(req.status)

    def interact(self, req=AgentReq) -> AgentResp:
        me, word = _get(self.memory, "name"), _get(self.memory, "word")
        if req.status == STATUS_ROUND:
            return AgentResp(success=True, result=deterministic.speech(me or "", req.round or 0, word), errMsg=None)
        if req.status == STATUS_VOTE:
            target, note = deterministic.vote(req.message, me)
            self.note = {"vote": note}
            return AgentResp(success=True, result=target, errMsg=None)
        raise NotImplementedError(req.status)


def _json_or_text(raw: bytes):
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


class Recorder:
    """ASGI wrapper around the SDK's app: logs every HTTP request, its reply and the memory."""

    def __init__(self, app, agent: DeterministicSdkAgent, log_path: str):
        self.app, self.agent, self.log_path = app, agent, log_path
        self.lock = threading.Lock()
        self.seq = 0

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        body, out, status = bytearray(), bytearray(), [None]

        async def rx():
            msg = await receive()
            if msg["type"] == "http.request":
                body.extend(msg.get("body", b""))
            return msg

        async def tx(msg):
            if msg["type"] == "http.response.start":
                status[0] = msg["status"]
            elif msg["type"] == "http.response.body":
                out.extend(msg.get("body", b""))
            await send(msg)

        try:
            await self.app(scope, rx, tx)
        finally:
            self._write(scope, bytes(body), status[0], bytes(out))

    def _write(self, scope, body: bytes, status, out: bytes) -> None:
        mem = self.agent.memory
        note, self.agent.note = self.agent.note, None
        with self.lock:
            self.seq += 1
            line = {"seq": self.seq, "t": round(time.time(), 4), "method": scope.get("method"),
                    "path": scope.get("path"), "request": _json_or_text(body), "http_status": status,
                    "response": _json_or_text(out),
                    "memory": {"name": _get(mem, "name"), "word": _get(mem, "word")}}
            if note:
                line.update(note)
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0: a free port")
    ap.add_argument("--log", required=True, help="JSON-lines log of every request (appended)")
    ap.add_argument("--model-name", default=None, help="what /agent/init and /agent/getModelName answer")
    args = ap.parse_args(argv)
    version = importlib.metadata.version("spy-agent-build-sdk")
    agent = DeterministicSdkAgent("sdk-det", model_name=args.model_name or f"sdk-det-{version}")
    app = Recorder(EndpointServer(agent).app, agent, args.log)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(128)            # connections queue from here on, before uvicorn accepts them
    port = sock.getsockname()[1]
    print(f"READY http://{args.host}:{port}", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
