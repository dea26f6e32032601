"""An in-process look-alike of our test SDK agent, for fast tests without the SDK venv.

:func:`make_mimic_app` is a FastAPI app (our venv) that answers like the SDK's
``EndpointServer`` (``agent_build_sdk/server/server.py`` of ``spy-agent-build-sdk==0.0.29``)
around :mod:`tests.wis_sdk.sdk_agent`'s agent:

* every route takes a JSON body whose fields (``message, name, status, word, round``) default
  to ``null``, like the SDK's ``AgentReq`` (``agent_build_sdk/model/model.py``); a missing or
  non-JSON body or a non-integer ``round`` is an HTTP 422 (FastAPI's validation, as in the SDK);
* ``/agent/init`` clears the memory and answers the model name; ``/agent/getModelName`` the
  model name; ``/agent/checkHealth`` ``result: null``;
* ``/agent/perceive`` answers ``success: false, errMsg: "perceive error <exc>"`` when the agent
  raises; ``/agent/interact`` has no guard: an exception is an HTTP 500.

The agent is :func:`tests.wis_sdk.deterministic.perceive` / ``interact`` on a memory with the
SDK memory's methods, one memory per app (the SDK's is one per process). Every exchange is logged
by :class:`tests.wis_sdk.recorder.Recorder` in the SDK agent's log format.

:class:`MimicServer` serves one such app with uvicorn on 127.0.0.1 in a daemon thread.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import fastapi
import uvicorn
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel

from tests.wis_sdk import deterministic
from tests.wis_sdk.recorder import Recorder


class MimicReq(BaseModel):
    message: str | None = None
    name: str | None = None
    status: str | None = None
    word: str | None = None
    round: int | None = None


class MimicMemory:
    """The SDK memory's interface (``load_variable``, ``set_variable``, ``has_variable``,
    ``append_history``, ``clear``), on a dict of this instance."""

    def __init__(self) -> None:
        self.memories: dict[str, Any] = {}

    def load_variable(self, key: str) -> Any:
        return self.memories[key]

    def set_variable(self, key: str, value: Any) -> None:
        self.memories[key] = value

    def has_variable(self, key: str) -> bool:
        return key in self.memories

    def append_history(self, line: str) -> None:
        history = self.memories.setdefault("history", [])
        if line:
            history.append(line)

    def clear(self) -> None:
        self.memories.clear()


def _envelope(result: Any = None, success: bool = True, err: str | None = None) -> dict:
    return {"success": success, "result": result, "errMsg": err}


def make_mimic_app(model_name: str, log: list[dict]):
    """The look-alike app; every exchange is appended to ``log``. Returns the ASGI app."""
    app = fastapi.FastAPI()
    memory = MimicMemory()
    notes: list[dict] = []

    @app.post("/agent/init")
    def init(req: MimicReq) -> dict:
        memory.clear()
        return _envelope(model_name)

    @app.post("/agent/getModelName")
    def get_model_name(req: MimicReq) -> dict:
        return _envelope(model_name)

    @app.post("/agent/checkHealth")
    def check_health(req: MimicReq) -> dict:
        return _envelope()

    @app.post("/agent/perceive")
    def perceive(req: MimicReq) -> dict:
        try:
            deterministic.perceive(memory, req)
        except Exception as exc:  # noqa: BLE001 - the SDK's perceive route does the same
            return _envelope(success=False, err=f"perceive error {exc}")
        return _envelope()

    @app.post("/agent/interact")
    def interact(req: MimicReq):
        try:
            result, note = deterministic.interact(memory, req)
        except Exception:  # noqa: BLE001 - the SDK's interact route lets it become an HTTP 500
            return PlainTextResponse("Internal Server Error", status_code=500)
        if note:
            notes.append(note)
        return _envelope(result)

    def snapshot() -> dict:
        out = {"memory": {"name": deterministic.stored(memory, "name"), "word": deterministic.stored(memory, "word")}}
        while notes:
            out.update(notes.pop())
        return out

    return Recorder(app, snapshot, log.append)


class MimicServer:
    """One look-alike agent served on 127.0.0.1 (a free port) in a daemon thread."""

    def __init__(self, model_name: str = "sdk-det-mimic"):
        self.log: list[dict] = []
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(make_mimic_app(model_name, self.log), log_level="warning",
                                                    lifespan="off", access_log=False))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.sock = sock

    def start(self, timeout: float = 10.0) -> MimicServer:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the mimic agent at {self.url} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
