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

What the agent does is written for these tests in :mod:`tests.wis_sdk.deterministic` (a
sibling module, shared with the in-process look-alike :mod:`tests.wis_sdk.sdk_mimic`): it
perceives with the data flow of the SDK's example agent (``agent_build_sdk/example/spy_agent.py``,
``SpyAgent.perceive``: own name from ``start.message``, word from ``distribution.word``, history
of speeches and votes, the ``vote_result`` name; a ``None`` where the example concatenates
strings raises, so the server answers ``success: false``), describes with a sentence unique per
(stored name, round) that never holds the stored word, and votes for the first candidate of
``req.message.split(",")`` that differs from the stored name; any other interact status raises
(HTTP 500, as an example agent would).

The log (``--log``, JSON lines, appended and flushed per request; :mod:`tests.wis_sdk.recorder`)
has one object per HTTP request: ``path``, ``request`` (the JSON body, or its text when not JSON), ``http_status``,
``response`` (the JSON reply or its text), ``memory`` (the stored ``name`` and ``word`` after
the request, ``null`` when unset) and, for a vote, ``vote`` = ``{candidates, offered_self,
offered_self_stripped}`` (whether the list held the stored name, raw and after stripping).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import socket
import sys

import uvicorn
from agent_build_sdk.model.model import AgentReq, AgentResp
from agent_build_sdk.sdk.agent import BasicAgent
from agent_build_sdk.server.server import EndpointServer

# sibling modules (stdlib only), shared with the in-process look-alike tests/wis_sdk/sdk_mimic.py
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deterministic
from recorder import Recorder, file_sink


class DeterministicSdkAgent(BasicAgent):
    """An SDK agent that perceives like the example agent and acts by fixed rules
    (:func:`deterministic.perceive` / :func:`deterministic.interact` on the SDK's own memory)."""

    def __init__(self, name: str, model_name: str):
        super().__init__(name, model_name=model_name)
        self.note: dict | None = None     # what the last interact wants logged (read by the recorder)

    def perceive(self, req=AgentReq):
        deterministic.perceive(self.memory, req)

    def interact(self, req=AgentReq) -> AgentResp:
        result, self.note = deterministic.interact(self.memory, req)
        return AgentResp(success=True, result=result, errMsg=None)


def snapshot(agent: DeterministicSdkAgent):
    """What the log keeps after each request: the stored name and word, the last vote's note."""
    def take() -> dict:
        note, agent.note = agent.note, None
        out = {"memory": {"name": deterministic.stored(agent.memory, "name"),
                          "word": deterministic.stored(agent.memory, "word")}}
        out.update(note or {})
        return out
    return take


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0: a free port")
    ap.add_argument("--log", required=True, help="JSON-lines log of every request (appended)")
    ap.add_argument("--model-name", default=None, help="what /agent/init and /agent/getModelName answer")
    args = ap.parse_args(argv)
    version = importlib.metadata.version("spy-agent-build-sdk")
    agent = DeterministicSdkAgent("sdk-det", model_name=args.model_name or f"sdk-det-{version}")
    app = Recorder(EndpointServer(agent).app, snapshot(agent), file_sink(args.log))
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
