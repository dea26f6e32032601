"""A platform-style judge: drives ONE agent URL through a scripted Who-is-Spy game, as the WiS
platform drives a contestant's SDK agent, and returns every exchange.

What "platform-style" means here, and where each fact comes from (``spy-agent-build-sdk==0.0.29``):

* the agent learns its own name only from the ``message`` of the ``start`` perceive, whose
  ``name`` is empty (the SDK's example agent stores ``req.message`` as its name:
  ``agent_build_sdk/example/spy_agent.py``, ``SpyAgent.perceive``);
* ``distribution`` carries only the ``word`` (ibid.: ``req.word``);
* a ``round`` perceive without ``name`` is the host's announcement (ibid.: ``if req.name: ...
  else`` host), with ``name`` it is that player's speech; the agent's own speech comes back too;
* ``interact`` ``round`` carries only ``status`` and ``round``; ``interact`` ``vote`` carries the
  candidates comma-joined *without* spaces and *including the voter* (the example removes its own
  name itself: ``[name for name in req.message.split(",") if name != <stored name>]``);
* ``vote`` perceive: ``name`` = voter, ``message`` = target; ``vote_result``: ``name`` = the
  player out, no field at all when nobody is out (the example reads only ``req.name``);
* ``result``: ``message`` = the end of the game (the example looks for ``卧底是<name>`` in it);
* fields the platform does not set are left out of the JSON body (the SDK's ``AgentReq``
  defaults every field to ``None``: ``agent_build_sdk/model/model.py``); no "Players:" line is
  sent (players are known from speeches and vote lists).

The game is a script, not a judge: six players, the driven agent at seat ``me`` (a civilian),
three rounds; the others' speeches and votes and each vote's outcome are fixed (round 1: Player 5
is out, round 2: nobody, round 3: the spy Player 6). The driven agent's replies are echoed back
(its speech as a ``round`` perceive, its vote as a ``vote`` perceive) but do not change the
script. Nothing is asserted here; the tests read the returned exchange.

Each exchange is ``{"path", "request", "http_status", "response"}`` (the same keys as the SDK
agent's log, :mod:`tests.wis_sdk.sdk_agent`), ``response`` being the JSON reply or its text.
"""

from __future__ import annotations

from typing import Any

import httpx

PLAYERS = [f"Player {i}" for i in range(1, 7)]
SPY = "Player 6"
WORDS = {"en": {"civilian": "tea", "spy": "coffee"}, "zh": {"civilian": "牛奶", "spy": "豆浆"}}
#: who is out after each round's vote ("" = nobody), and the others' votes (voter -> target)
OUT = {1: "Player 5", 2: "", 3: SPY}
VOTES = {1: {"Player 1": "Player 5", "Player 2": "Player 5", "Player 3": "Player 5", "Player 4": "Player 5",
             "Player 5": "Player 1", "Player 6": "Player 5"},
         2: {"Player 1": SPY, "Player 2": "Player 4", "Player 3": SPY, "Player 4": SPY, "Player 6": "Player 4"},
         3: {"Player 1": SPY, "Player 2": SPY, "Player 3": SPY, "Player 4": SPY, "Player 6": "Player 1"}}
HOST = {"en": {"round": "Round {r} begins. Describe your word in one sentence.",
               "result": "Game over. The spy was {spy}; the civilians win."},
        "zh": {"round": "第{r}轮开始，请用一句话描述你的词语。",
               "result": "游戏结束，卧底是{spy}，平民胜利。"}}
SPEECH = {"en": "It is something you often see at home ({who}, round {r}).",
          "zh": "家里经常能见到它（{who}，第{r}轮）。"}


def _body(**fields: Any) -> dict[str, Any]:
    """A request body with only the fields that are set (None = not sent)."""
    return {k: v for k, v in fields.items() if v is not None}


class PlatformJudge:
    """Drives one agent; see the module docstring.

    Args:
        url: the agent's base URL (``/agent/<route>`` is appended).
        lang: ``"en"`` or ``"zh"`` (host messages, the others' speeches, the words).
        me: the driven agent's name: a civilian who is never voted out (Player 1-4).
        timeout: seconds for each HTTP call (an interact waits for the agent's model).
        client: an ``httpx.Client`` to use instead of a new one (e.g. FastAPI's ``TestClient``).
    """

    def __init__(self, url: str, *, lang: str = "en", me: str = "Player 3",
                 timeout: float = 60.0, client: httpx.Client | None = None):
        if lang not in WORDS:
            raise ValueError(f"lang {lang!r}: expected one of {', '.join(WORDS)}")
        keep = [p for p in PLAYERS if p != SPY and p not in OUT.values()]
        if me not in keep:
            raise ValueError(f"me {me!r}: expected a civilian who stays in, one of {', '.join(keep)}")
        self.base = url.rstrip("/")
        self.lang, self.me = lang, me
        self.client = client or httpx.Client(timeout=timeout)
        self.exchange: list[dict[str, Any]] = []

    @property
    def word(self) -> str:
        """The driven agent's word (it is a civilian)."""
        return WORDS[self.lang]["civilian"]

    def call(self, route: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``/agent/<route>``; record and return the exchange (never raises on HTTP trouble)."""
        path = f"/agent/{route}"
        try:
            r = self.client.post(self.base + path, json=body)
            try:
                reply: Any = r.json()
            except ValueError:
                reply = r.text
            ex = {"path": path, "request": body, "http_status": r.status_code, "response": reply}
        except httpx.HTTPError as exc:
            ex = {"path": path, "request": body, "http_status": None, "response": f"{type(exc).__name__}: {exc}"}
        self.exchange.append(ex)
        return ex

    def perceive(self, **fields: Any) -> dict[str, Any]:
        return self.call("perceive", _body(**fields))

    def interact(self, **fields: Any) -> str | None:
        """The agent's ``result`` when it answered ``success: true`` with a string, else None."""
        ex = self.call("interact", _body(**fields))
        resp = ex["response"]
        if isinstance(resp, dict) and resp.get("success") and isinstance(resp.get("result"), str):
            return resp["result"]
        return None

    def play(self) -> list[dict[str, Any]]:
        """Play the scripted game; returns the exchange (also in :attr:`exchange`)."""
        host = HOST[self.lang]
        self.call("checkHealth", {})
        self.call("init", {})
        self.perceive(status="start", name="", message=self.me)
        self.perceive(status="distribution", word=self.word)
        alive = list(PLAYERS)
        for r in (1, 2, 3):
            self.perceive(status="round", round=r, name="", message=host["round"].format(r=r))
            for who in alive:
                if who == self.me:
                    said = self.interact(status="round", round=r)
                    if said is not None:
                        self.perceive(status="round", round=r, name=who, message=said)
                else:
                    self.perceive(status="round", round=r, name=who, message=SPEECH[self.lang].format(who=who, r=r))
            mine = self.interact(status="vote", round=r, message=",".join(alive))
            for voter in alive:
                target = (mine or "") if voter == self.me else VOTES[r][voter]
                self.perceive(status="vote", round=r, name=voter, message=target)
            out = OUT[r]
            self.perceive(status="vote_result", round=r, name=out or None)
            alive = [p for p in alive if p != out]
        self.perceive(status="result", round=3, message=host["result"].format(spy=SPY))
        return self.exchange

    def close(self) -> None:
        self.client.close()


def play(url: str, *, lang: str = "en", me: str = "Player 3", timeout: float = 60.0,
         client: httpx.Client | None = None) -> list[dict[str, Any]]:
    """Drive the agent at ``url`` through the scripted game; returns the exchange."""
    judge = PlatformJudge(url, lang=lang, me=me, timeout=timeout, client=client)
    try:
        return judge.play()
    finally:
        if client is None:
            judge.close()
