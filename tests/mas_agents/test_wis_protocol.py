"""The WiS agent protocol over real HTTP: a uvicorn server on 127.0.0.1 and RemoteWisPlayer."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import httpx
import pytest
import uvicorn

from mas_agents.graphs.wis.protocol import RemoteWisPlayer, make_app
from mas_agents.graphs.wis.protocol_types import WisPlayer, request, response

DESCRIPTION = "It is round and you can eat it."
MODEL = "fake-model-1"


class Control:
    """Knobs the tests turn on every fake player the server creates."""

    def __init__(self) -> None:
        self.sleep = 0.0                      # seconds interact waits (cut short by `release`)
        self.release = threading.Event()
        self.raise_on: str | None = None      # interact raises when the message equals this
        self.players: list[FakePlayer] = []   # every player the factory built, oldest first

    def reset(self) -> None:
        self.sleep = 0.0
        self.raise_on = None
        self.release.clear()


class FakePlayer:
    """Records perceived requests, describes with a fixed text, votes for the first candidate."""

    label = "fake"

    def __init__(self, control: Control) -> None:
        self.control = control
        self.perceived: list[dict[str, Any]] = []
        self.interacted: list[dict[str, Any]] = []

    def perceive(self, req: dict[str, Any]) -> None:
        self.perceived.append(dict(req))

    def interact(self, req: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        self.interacted.append(dict(req))
        if self.control.sleep:
            self.control.release.wait(self.control.sleep)
        if self.control.raise_on is not None and req["message"] == self.control.raise_on:
            raise RuntimeError("fake player exploded")
        if req["status"] == "vote":
            return response(req["message"].split(",")[0].strip(), meta={"local": "only"})
        return response(DESCRIPTION, meta={"local": "only"})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    control = Control()

    def factory() -> FakePlayer:
        player = FakePlayer(control)
        control.players.append(player)
        return player

    app = make_app(factory, MODEL)
    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                            lifespan="off", timeout_graceful_shutdown=2)
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while not srv.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield {"url": f"http://127.0.0.1:{port}", "control": control, "app": app}
    finally:
        control.release.set()
        srv.should_exit = True
        thread.join(timeout=5)


@pytest.fixture
def control(server) -> Control:
    c: Control = server["control"]
    c.reset()
    yield c
    c.release.set()   # let an abandoned slow interact finish before the next test


@pytest.fixture
def remote(server):
    with RemoteWisPlayer(server["url"], timeout=5.0) as player:
        yield player


def test_remote_is_a_wis_player(remote):
    assert isinstance(remote, WisPlayer)
    assert remote.label.startswith("http://127.0.0.1:")


def test_init_model_name_health(server, control, remote):
    before = len(control.players)
    resp = remote.init()
    # as an agent built on the platform's SDK: init answers the model name, checkHealth null
    assert resp == {"success": True, "result": MODEL, "errMsg": None}
    assert len(control.players) == before + 1
    assert server["app"].state.player is control.players[-1]
    assert remote.model_name() == MODEL
    assert remote.health() is True
    assert remote.check_ready() == MODEL and len(control.players) == before + 2
    # GET is accepted on these two as well (the SDK answers only POST)
    for route, expected in (("getModelName", MODEL), ("checkHealth", None)):
        r = httpx.get(f"{server['url']}/agent/{route}")
        assert r.status_code == 200
        assert r.json() == {"success": True, "result": expected, "errMsg": None}


def test_perceive_sequence_reaches_player_in_order(control, remote):
    reqs = [
        request("start", name="Alice", message="Rules... Players: Alice, Bob, Carol"),
        request("distribution", name="Alice", word="apple"),
        request("round", message="Round 1 begins.", round=1),
        request("round", name="Bob", message="It grows on trees.", round=1),
        request("vote", name="Bob", message="Carol", round=1),
        request("vote_result", name="Carol", round=1),
        request("result", message="Civilians win."),
    ]
    for req in reqs:
        remote.perceive(req)
    player = control.players[-1]  # the start made a fresh one
    assert player.perceived == reqs
    assert player.perceived[1]["word"] == "apple"
    assert player.perceived[3] == {"status": "round", "name": "Bob", "message": "It grows on trees.",
                                   "word": "", "round": 1}


def test_interact_round_returns_description_without_meta(server, control, remote):
    remote.perceive(request("start", name="Alice", message="Players: Alice, Bob, Carol"))
    resp = remote.interact(request("round", name="Alice", round=1), timeout=5)
    assert resp == {"success": True, "result": DESCRIPTION, "errMsg": None}
    assert control.players[-1].interacted[-1]["status"] == "round"
    raw = httpx.post(f"{server['url']}/agent/interact", json=request("round", name="Alice", round=1))
    assert raw.json() == {"success": True, "result": DESCRIPTION, "errMsg": None}  # no "meta"


def test_interact_vote_returns_a_candidate(control, remote):
    candidates = ["Bob", "Carol", "Dave"]
    resp = remote.interact(request("vote", name="Alice", message=",".join(candidates), round=1), timeout=5)
    assert resp["success"] is True
    assert resp["result"] in candidates
    assert resp["result"] == "Bob"


def test_slow_player_times_out(control, remote):
    control.sleep = 5.0
    t0 = time.monotonic()
    resp = remote.interact(request("round", name="Alice", round=1), timeout=0.5)
    elapsed = time.monotonic() - t0
    assert resp["timed_out"] is True
    assert resp["success"] is False
    assert resp["errMsg"] == "timeout"
    assert resp["result"] is None
    assert 0.4 < elapsed < 2.5
    control.release.set()
    # the server recovers once the abandoned call ends
    control.sleep = 0.0
    assert remote.interact(request("round", name="Alice", round=1), timeout=5)["result"] == DESCRIPTION


def test_start_perceive_resets_player(server, control, remote):
    remote.perceive(request("start", name="Alice", message="Players: Alice, Bob"))
    first = control.players[-1]
    remote.perceive(request("distribution", name="Alice", word="apple"))
    assert len(first.perceived) == 2
    remote.perceive(request("start", name="Bob", message="Players: Alice, Bob"))
    second = control.players[-1]
    assert second is not first
    assert server["app"].state.player is second
    assert [r["status"] for r in second.perceived] == ["start"]
    assert second.perceived[0]["name"] == "Bob"
    assert len(first.perceived) == 2


def test_perceive_before_init_creates_player_lazily(server, control, remote):
    server["app"].state.player = None
    before = len(control.players)
    remote.perceive(request("round", message="Round 2 begins.", round=2))
    assert len(control.players) == before + 1
    assert control.players[-1].perceived[0]["message"] == "Round 2 begins."


def test_bad_requests_give_success_false(server, control, remote):
    url = server["url"]
    r = httpx.post(f"{url}/agent/perceive", json={"status": "bogus", "name": "Alice"})
    assert r.status_code == 200
    body = r.json()
    assert body["success"] is False and "bogus" in body["errMsg"]
    assert set(body) == {"success", "result", "errMsg"}

    # announcements are not questions
    resp = remote.interact(request("start", name="Alice"), timeout=5)
    assert resp["success"] is False and "start" in resp["errMsg"]
    assert "timed_out" not in resp

    r = httpx.post(f"{url}/agent/interact", json={"name": "Alice"})
    assert r.status_code == 200
    assert r.json()["success"] is False and "missing status" in r.json()["errMsg"]

    r = httpx.post(f"{url}/agent/perceive", json={"status": "round", "round": "not a number"})
    assert r.status_code == 200
    assert r.json()["success"] is False and "round" in r.json()["errMsg"]

    # perceive never raises, even when the server says no
    remote.perceive({"status": "bogus"})


def test_player_exception_gives_success_false(control, remote):
    control.raise_on = "Bob,Carol"
    resp = remote.interact(request("vote", name="Alice", message="Bob,Carol"), timeout=5)
    assert resp["success"] is False
    assert "fake player exploded" in resp["errMsg"]


def test_server_not_running_gives_success_false():
    port = _free_port()  # nothing listens there once the probe socket is closed
    with RemoteWisPlayer(f"http://127.0.0.1:{port}/", timeout=1.0) as dead:
        resp = dead.interact(request("round", name="Alice", round=1), timeout=0.5)
        assert resp["success"] is False
        assert resp["result"] is None
        assert "timed_out" not in resp
        assert resp["errMsg"]
        dead.perceive(request("start", name="Alice"))  # logged, not raised
        assert dead.init()["success"] is False
        assert dead.health() is False
        assert dead.model_name() is None
