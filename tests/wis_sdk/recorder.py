"""An ASGI wrapper that logs every HTTP request of an agent app with its reply (stdlib only).

Used by :mod:`tests.wis_sdk.sdk_agent` around the SDK's FastAPI app (in the SDK venv, imported as
a sibling module) and by :mod:`tests.wis_sdk.sdk_mimic` around its in-process look-alike, so both
logs have the same entries: ``seq``, ``t``, ``method``, ``path``, ``request`` (the JSON body, or
its text when it is not JSON), ``http_status``, ``response`` (the JSON reply or its text), plus
whatever ``snapshot()`` returns after the request (the agent's stored ``memory``, a ``vote``
note).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any


def json_or_text(raw: bytes) -> Any:
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def file_sink(path: str) -> Callable[[dict], None]:
    """Append each entry to ``path`` as a JSON line (flushed at once)."""
    def write(entry: dict) -> None:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")
    return write


class Recorder:
    """``Recorder(app, snapshot, sink)``: an ASGI app logging each HTTP exchange of ``app``.

    The entry is written after the reply was sent, also when the app raised (an HTTP 500).
    """

    def __init__(self, app, snapshot: Callable[[], dict], sink: Callable[[dict], None]):
        self.app, self.snapshot, self.sink = app, snapshot, sink
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
            with self.lock:
                self.seq += 1
                entry = {"seq": self.seq, "t": round(time.time(), 4), "method": scope.get("method"),
                         "path": scope.get("path"), "request": json_or_text(bytes(body)), "http_status": status[0],
                         "response": json_or_text(bytes(out))}
                entry.update(self.snapshot())
                self.sink(entry)
