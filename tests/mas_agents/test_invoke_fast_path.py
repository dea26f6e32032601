"""RemoteChat.invoke skips langchain-core's run bookkeeping only when no callback handler listens."""

from __future__ import annotations

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from mas_agents import remote
from mas_agents.llm import make_chat_model
from tests.stub_openai import StubServer

MESSAGES = [SystemMessage("You play a game."), HumanMessage("Describe your word.")]


@pytest.fixture(autouse=True)
def fresh_endpoints():
    remote.configure(structured="prompt", context_window=None, max_connections=4, adaptive=False)
    yield
    remote.configure(structured="auto", context_window=None, max_connections=8, adaptive=False)


class Listener(BaseCallbackHandler):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_chat_model_start(self, serialized, messages, **kw):
        self.seen.append("start")

    def on_llm_end(self, response, **kw):
        self.seen.append("end:" + response.generations[0][0].text)


def _model(stub, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return make_chat_model("openai:stub", timeout=5.0)


def test_without_a_listener_the_reply_is_the_one_langchain_core_gives(monkeypatch):
    slow_path = []
    real_invoke = BaseChatModel.invoke
    monkeypatch.setattr(BaseChatModel, "invoke", lambda self, *a, **k: slow_path.append(1) or real_invoke(self, *a, **k))
    with StubServer(reply=lambda body: "Description: a warm drink") as stub:
        m = _model(stub, monkeypatch)
        fast = m.invoke(MESSAGES, max_tokens=32)
        assert slow_path == []                                   # the run bookkeeping was skipped
        listener = Listener()
        slow = m.invoke(MESSAGES, {"callbacks": [listener]}, max_tokens=32)
        assert slow_path == [1] and listener.seen == ["start", "end:Description: a warm drink"]
    assert fast.content == slow.content == "Description: a warm drink"
    assert fast.usage_metadata == slow.usage_metadata and fast.usage_metadata["input_tokens"] > 0
    # the same metadata (finish reason, token usage, our structured/max_tokens fields), not the run id
    assert {**fast.response_metadata, "id": None} == {**slow.response_metadata, "id": None}
    assert (fast.response_metadata["id"], slow.response_metadata["id"]) == ("chatcmpl-1", "chatcmpl-2")
    assert fast.response_metadata["finish_reason"] == "stop" and fast.response_metadata["max_tokens"] == 32
    assert fast.id is None and slow.id.startswith("lc_run-")
    assert [r["messages"][-1]["content"] for r in stub.requests] == ["Describe your word."] * 2


def test_a_handler_on_the_model_or_verbose_keeps_the_full_path(monkeypatch):
    with StubServer(reply=lambda body: "Vote: Bob") as stub:
        listener = Listener()
        m = _model(stub, monkeypatch)
        m.callbacks = [listener]
        m.invoke(MESSAGES)
        assert listener.seen == ["start", "end:Vote: Bob"]


def test_a_global_cache_is_still_used(monkeypatch):
    from langchain_core.caches import InMemoryCache
    from langchain_core.globals import set_llm_cache

    set_llm_cache(InMemoryCache())
    try:
        with StubServer(reply=lambda body: "Vote: Cy") as stub:
            m = _model(stub, monkeypatch)
            assert m.invoke(MESSAGES).content == m.invoke(MESSAGES).content == "Vote: Cy"
            assert len(stub.requests) == 1                       # the second came from the cache
    finally:
        set_llm_cache(None)
