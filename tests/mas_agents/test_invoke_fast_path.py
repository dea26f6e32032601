"""RemoteChat.invoke skips langchain-core's run bookkeeping only when no callback handler listens."""

from __future__ import annotations

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from mas_agents.remote import endpoints
from mas_agents.llm import make_chat_model
from tests.stub_openai import StubServer

MESSAGES = [SystemMessage("You play a game."), HumanMessage("Describe your word.")]


@pytest.fixture(autouse=True)
def fresh_endpoints():
    endpoints.configure(structured="prompt", context_window=None, max_connections=4, adaptive=False)
    yield
    endpoints.configure(structured="auto", context_window=None, max_connections=8, adaptive=False)


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


@pytest.fixture
def cached_path(monkeypatch):
    """Records each call of langchain-core's ``_generate_with_cache``; yields ``(calls, the
    unpatched function)``."""
    calls = []
    real = BaseChatModel._generate_with_cache
    monkeypatch.setattr(BaseChatModel, "_generate_with_cache",
                        lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    return calls, real


def test_with_no_cache_limiter_or_streaming_the_call_skips_generate_with_cache(monkeypatch, cached_path):
    """The plain path (``_plain_generate``) gives the message ``_generate_with_cache`` gives: the
    same content, usage and response metadata (the generation's info merged as langchain-core
    merges it), the server's id aside."""
    calls, real = cached_path
    with StubServer(reply=lambda body: "Vote: Dee") as stub:
        m = _model(stub, monkeypatch)
        plain = m.invoke(MESSAGES, max_tokens=16)
        assert calls == []
        messages = [SystemMessage("You play a game."), HumanMessage("Describe your word.")]
        full = real(m, messages, max_tokens=16).generations[0].message
    assert plain.content == full.content == "Vote: Dee"
    assert plain.usage_metadata == full.usage_metadata
    assert {**plain.response_metadata, "id": None} == {**full.response_metadata, "id": None}
    assert plain.response_metadata["finish_reason"] == "stop" and plain.response_metadata["max_tokens"] == 16
    assert plain.response_metadata["model_provider"] == "openai"     # from the generation's info / llm_output


@pytest.mark.parametrize("setting", ["rate_limiter", "streaming", "output_version", "stream_kwarg", "model_cache"])
def test_a_limiter_streaming_v1_output_or_a_model_cache_keeps_generate_with_cache(monkeypatch, cached_path, setting):
    from langchain_core.caches import InMemoryCache
    from langchain_core.rate_limiters import InMemoryRateLimiter

    calls, _ = cached_path
    with StubServer(reply=lambda body: "Vote: Eve") as stub:
        m = _model(stub, monkeypatch)
        kwargs = {}
        if setting == "rate_limiter":
            m.rate_limiter = InMemoryRateLimiter(requests_per_second=1000, check_every_n_seconds=0.001)
        elif setting == "streaming":
            m.streaming = True
        elif setting == "output_version":
            m.output_version = "v1"
        elif setting == "stream_kwarg":
            kwargs["stream"] = True
        else:
            m.cache = InMemoryCache()
        assert m._plain_call(kwargs) is False
        if setting not in ("streaming", "stream_kwarg"):        # the stub does not stream
            reply = m.invoke(MESSAGES, **kwargs)
            assert calls == [1]
            assert "Vote: Eve" in str(reply.content)


def test_messages_with_block_content_still_go_through_langchain_cores_conversion(monkeypatch):
    from langchain_core.language_models import _utils

    normalized = []
    real = _utils._normalize_messages
    monkeypatch.setattr(_utils, "_normalize_messages", lambda ms: normalized.append(len(ms)) or real(ms))
    with StubServer(reply=lambda body: "Vote: Flo") as stub:
        m = _model(stub, monkeypatch)
        assert m.invoke(MESSAGES).content == "Vote: Flo"
        assert normalized == []                                  # text content: passed as they are
        blocks = [SystemMessage("You play a game."), HumanMessage([{"type": "text", "text": "Describe it."}])]
        assert m.invoke(blocks).content == "Vote: Flo"
        assert normalized == [2]
        assert stub.requests[-1]["messages"][-1]["content"] == [{"type": "text", "text": "Describe it."}]
        assert m.invoke("Describe it.").content == "Vote: Flo"   # a string prompt: converted too
        assert normalized == [2, 1]


def _graph_calling(m, n: int):
    """A one-node LangGraph graph whose step makes ``n`` calls of ``m``."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class S(TypedDict):
        replies: list

    def node(state: S) -> dict:
        return {"replies": [m.invoke(MESSAGES).content for _ in range(n)]}

    g = StateGraph(S)
    g.add_node("node", node)
    g.add_edge(START, "node")
    g.add_edge("node", END)
    return g.compile()


def test_a_graph_steps_calls_ask_for_handlers_once(monkeypatch):
    """The calls of one graph step share its callback manager: whether it configures a handler
    is asked by the first call only; the next step asks again."""
    from langchain_core.callbacks import CallbackManager

    asked = []
    real = CallbackManager.configure.__func__
    monkeypatch.setattr(CallbackManager, "configure",
                        classmethod(lambda cls, *a, **k: asked.append(1) or real(cls, *a, **k)))
    with StubServer(reply=lambda body: "Vote: Bob") as stub:
        graph = _graph_calling(_model(stub, monkeypatch), 3)
        asked.clear()
        assert graph.invoke({"replies": []})["replies"] == ["Vote: Bob"] * 3
        per_run = len(asked)            # LangGraph's own configure of the run, and one of ours
        graph.invoke({"replies": []})
        assert len(asked) == 2 * per_run and per_run <= 2
        assert len(stub.requests) == 6


def test_a_handler_on_a_graph_run_sees_every_call_of_the_step(monkeypatch):
    with StubServer(reply=lambda body: "Vote: Cy") as stub:
        graph = _graph_calling(_model(stub, monkeypatch), 3)
        listener = Listener()
        graph.invoke({"replies": []}, {"callbacks": [listener]})
        assert listener.seen == ["start", "end:Vote: Cy"] * 3
        graph.invoke({"replies": []})                 # a run without it: nothing more reaches it
        assert listener.seen == ["start", "end:Vote: Cy"] * 3


def test_calls_outside_a_graph_see_a_handler_added_between_them(monkeypatch):
    """Without a graph step's manager nothing is remembered: tracing switched on (here a
    configure hook's context variable, as LangSmith's tracing context sets one) between two
    calls reaches the second."""
    from contextvars import ContextVar

    from langchain_core.tracers.context import register_configure_hook

    var: ContextVar = ContextVar("mas_test_hook", default=None)
    register_configure_hook(var, inheritable=True)
    with StubServer(reply=lambda body: "Vote: Dee") as stub:
        m = _model(stub, monkeypatch)
        m.invoke(MESSAGES)
        listener = Listener()
        token = var.set(listener)
        try:
            m.invoke(MESSAGES)
        finally:
            var.reset(token)
        assert listener.seen == ["start", "end:Vote: Dee"]
