"""The OpenAI-compatible model path against a stub server (tests/stub_openai.py): request fields,
structured-output dialects, context windows, faults, concurrency, cache accounting, one-line stops."""

from __future__ import annotations

import json
import threading

import openai
import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from typer.testing import CliRunner

import mas_agents.accounting as accounting
from mas_agents.remote import chat
from mas_agents.remote import endpoints
from mas_agents.remote import limits
from mas_agents.remote import dialects
from mas_agents.accounting import AccountedModel
from mas_agents.call_log import CallRecorder
from mas_agents.planners.base import ActionRequest
from mas_agents.agents import Agent, Persona
from mas_agents.errors import CallFailed, ContextOverflowError, ModelUnavailable
from mas_agents.llm import make_chat_model
from tests.stub_openai import StubServer
from tests.games import GAME

PROBE_GRAMMAR = f'root ::= "{dialects.PROBE_TEXT}"'


@pytest.fixture(autouse=True)
def fresh_endpoints():
    endpoints.configure(structured="auto", context_window=None, max_connections=8, adaptive=False)
    yield
    endpoints.configure(structured="auto", context_window=None, max_connections=8, adaptive=False)


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr(accounting, "_sleep", lambda s: slept.append(s) or False)
    return slept


def llama_like(answer: str):
    """A server that applies llama.cpp's ``grammar`` field: the probe grammar gets its string,
    any other request ``answer``; refuses what it does not know (fakes raise)."""
    def reply(body: dict) -> str:
        if body.get("grammar") == PROBE_GRAMMAR:
            return dialects.PROBE_TEXT
        if "grammar" in body or "Say anything." not in json.dumps(body):
            return answer
        raise AssertionError(f"unexpected request {body}")
    return reply


def model_for(stub: StubServer, monkeypatch, **kw):
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return make_chat_model("openai:stub", timeout=kw.pop("timeout", 5.0), **kw)


def accounted(stub, monkeypatch, rec=None, **kw) -> AccountedModel:
    return AccountedModel(model_for(stub, monkeypatch, **kw), rec or CallRecorder(None), label="openai:stub",
                          max_retries=3, backoff_s=0.01)


def vote_agent(model: AccountedModel) -> Agent:
    return Agent(persona=Persona(name="Ann", players=["Ann", "Bob", "Cy"], system="You play a game."),
                 model=model, memory=None)


def vote_request() -> ActionRequest:
    return ActionRequest(kind="vote", actor="Ann", prompt="Vote for the spy:", choices=["Bob", "Cy"],
                         game=GAME["wis"], context={})


# ---------------------------------------------------------------------------------------------
# requests and structured outputs


def test_token_cap_goes_out_as_max_tokens_with_the_grammar_the_server_applies(monkeypatch):
    with StubServer(reply=llama_like("Vote: Cy")) as stub:
        rec = CallRecorder(None)
        action = vote_agent(accounted(stub, monkeypatch, rec)).act(vote_request())
        assert action.valid and action.value == "Cy"
        probe, call = stub.requests[0], stub.requests[1]
        assert probe["grammar"] == PROBE_GRAMMAR and len(stub.requests) == 2
        assert call["max_tokens"] == 24 and "max_completion_tokens" not in call     # MAX_TOKENS_NO_THOUGHT["vote"]
        assert call["grammar"].startswith('root ::= "Vote: " name') and '"Bob" | "Cy"' in call["grammar"]
        assert "stop" not in call and "response_format" not in call
        [c] = rec.calls()
        assert (c.structured, c.max_tokens, c.finish_reason) == ("gbnf", 24, "stop")
        # the dialect is probed once per base URL, whatever the number of models and calls
        vote_agent(accounted(stub, monkeypatch)).act(vote_request())
        assert sum(1 for r in stub.requests if r.get("grammar") == PROBE_GRAMMAR) == 1


def test_openai_api_gets_max_completion_tokens(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    m = make_chat_model("openai:gpt-4o-mini")
    payload = m._get_request_payload([HumanMessage("hi")], max_tokens=7)
    assert payload["max_completion_tokens"] == 7 and "max_tokens" not in payload   # OpenAI refuses both at once


def test_json_schema_dialect_renders_the_object_into_the_tagged_line(monkeypatch):
    def reply(body):
        rf = body.get("response_format")
        if rf is None:
            return "I think Cy."         # ignores grammar fields: the probe must not take it for one
        props = rf["json_schema"]["schema"]["properties"]
        if "answer" in props:
            return json.dumps({"answer": dialects.PROBE_TEXT})
        assert props["vote"] == {"type": "string", "enum": ["Bob", "Cy"]}
        return json.dumps({"vote": "Bob"})
    with StubServer(reply=reply) as stub:
        rec = CallRecorder(None)
        action = vote_agent(accounted(stub, monkeypatch, rec)).act(vote_request())
        assert action.valid and action.value == "Bob" and action.raw == "Vote: Bob"
        ep = endpoints.endpoint(stub.base_url)
        assert ep.report(model_for(stub, monkeypatch))["structured"] == "json"
        assert "gbnf: ignored" in ep.report(model_for(stub, monkeypatch))["structured_probe"]
        assert rec.calls()[0].structured == "json"


def test_json_reply_that_is_not_the_schema_is_not_scraped(monkeypatch):
    endpoints.configure(structured="json")
    with StubServer(reply=lambda body: '{"vote": "Bob", "why": "he fidgets"}') as stub:
        agent = vote_agent(accounted(stub, monkeypatch))
        action = agent.act(vote_request())
        assert not action.valid and action.attempts == 2         # re-prompted once, then abstained
        assert agent.stats["malformed_vote"] == 2


def test_prompt_mode_sends_no_structure_and_no_stop(monkeypatch):
    endpoints.configure(structured="prompt")
    with StubServer(reply=lambda body: "Vote: Bob") as stub:
        vote_agent(accounted(stub, monkeypatch)).act(vote_request())
        [call] = stub.requests                                   # no probe
        assert not {"grammar", "response_format", "structured_outputs", "ebnf"} & set(call)
        assert "stop" not in call        # no stop string is safe before the tagged line


def test_a_server_that_applies_nothing_is_prompted(monkeypatch):
    with StubServer(reply=lambda body: "Vote: Cy") as stub:
        model = model_for(stub, monkeypatch)
        rep = endpoints.endpoint(stub.base_url).report(model)
        assert rep["structured"] == "prompt"
        assert rep["structured_probe"] == "probe: gbnf: ignored, vllm: ignored, sglang: ignored, json: ignored"
        assert [set(r) & {"grammar", "structured_outputs", "ebnf", "response_format"} for r in stub.requests] == [
            {"grammar"}, {"structured_outputs"}, {"ebnf"}, {"response_format"}]


# ---------------------------------------------------------------------------------------------
# context windows


def test_context_window_from_the_model_list_lowers_the_cap(monkeypatch):
    models = [{"id": "stub", "object": "model", "max_model_len": 400}]
    with StubServer(reply=llama_like("Vote: Cy"), models=models) as stub:
        am = accounted(stub, monkeypatch)
        ctx, src = endpoints.endpoint(stub.base_url).context_window(am.model)
        assert (ctx, src) == (400, "server: /models max_model_len")
        # ~250 estimated tokens: the cap is lowered from 256 to what is left
        am.chat([HumanMessage("x" * 600)], actor="a", purpose="p", max_tokens=256)
        assert 100 < stub.requests[-1]["max_tokens"] < 256
        # a prompt our over-count says cannot fit still goes, at the smallest cap: the server decides
        am.chat([HumanMessage("x" * 2000)], actor="a", purpose="p", max_tokens=256)
        assert stub.requests[-1]["max_tokens"] == chat.MIN_FIT_TOKENS


def test_the_ratio_is_learned_from_usage(monkeypatch):
    with StubServer(reply=llama_like("ok")) as stub:      # the stub counts 4 characters a token
        am = accounted(stub, monkeypatch)
        ep = endpoints.endpoint(stub.base_url)
        msgs = [HumanMessage("y" * 4000)]
        assert ep.estimate_tokens(msgs) == int(4000 / endpoints.START_BYTES_PER_TOKEN) + 1 + 8
        am.chat([HumanMessage("q")], actor="a", purpose="p")           # too short to learn from
        assert ep._bytes_per_token == endpoints.START_BYTES_PER_TOKEN
        am.chat(msgs, actor="a", purpose="p")
        assert 3.9 < ep._bytes_per_token < 4.1
        assert ep.estimate_tokens(msgs) == pytest.approx(1000 + 9, abs=15)


def test_a_cap_too_large_for_the_context_is_asked_again_with_the_room_left(monkeypatch):
    with StubServer(reply=llama_like("ok")) as stub:
        am = accounted(stub, monkeypatch)
        endpoints.endpoint(stub.base_url).dialect(am.model)
        # vLLM: the prompt fits, prompt + cap does not
        vllm = ("'max_tokens' or 'max_completion_tokens' is too large: 256. This model's maximum context length is "
                "4096 tokens and your request has 4000 input tokens (256 > 4096 - 4000)")
        stub.push_faults("400:" + vllm)
        assert am.chat([HumanMessage("q")], actor="a", purpose="p", max_tokens=256)[0] == "ok"
        assert [r["max_tokens"] for r in stub.requests[-2:]] == [256, 96]


def test_context_window_option_when_the_server_reports_none(monkeypatch):
    endpoints.configure(context_window=2048)
    with StubServer(reply=llama_like("ok")) as stub:
        rep = endpoints.endpoint(stub.base_url).report(model_for(stub, monkeypatch))
        assert (rep["context_window"], rep["context_window_source"]) == (2048, "--context-window")


@pytest.mark.parametrize("fault,prompt,ctx", [("400:context", 5000, 4096), ("400:openai-context", 4744, 4096)])
def test_a_context_rejection_is_the_local_context_error(monkeypatch, fault, prompt, ctx):
    with StubServer(reply=llama_like("ok")) as stub:
        am = accounted(stub, monkeypatch)
        endpoints.endpoint(stub.base_url).dialect(am.model)
        stub.push_faults(fault)
        with pytest.raises(ContextOverflowError) as err:
            am.chat([HumanMessage("q")], actor="a", purpose="p", max_tokens=256)
        assert (err.value.prompt_tokens, err.value.n_ctx) == (prompt, ctx)
        assert "the server said" in str(err.value) and "\n" not in str(err.value)


# ---------------------------------------------------------------------------------------------
# faults


@pytest.mark.parametrize("fault", ["500", "503", "reset", "malformed", "empty_choices", "hang:2"])
def test_transient_faults_are_retried(monkeypatch, no_backoff, fault):
    with StubServer(reply=llama_like("Vote: Cy")) as stub:
        rec = CallRecorder(None)
        am = accounted(stub, monkeypatch, rec, timeout=0.5)
        endpoints.endpoint(stub.base_url).dialect(am.model)
        stub.push_faults(fault)
        text, _ = am.chat([HumanMessage("q")], actor="a", purpose="p")
        assert text == "Vote: Cy"
        [c] = rec.calls()
        assert (c.ok, c.retries) == (True, 1)


def test_429_waits_as_long_as_retry_after_says(monkeypatch, no_backoff):
    with StubServer(reply=llama_like("ok")) as stub:
        am = accounted(stub, monkeypatch)
        endpoints.endpoint(stub.base_url).dialect(am.model)
        stub.push_faults("429:3")
        assert am.chat([HumanMessage("q")], actor="a", purpose="p")[0] == "ok"
        assert no_backoff == [3.0]                  # not the 0.01 s backoff


def test_missing_usage_is_recorded_as_unknown(monkeypatch):
    with StubServer(reply=llama_like("ok")) as stub:
        rec = CallRecorder(None)
        am = accounted(stub, monkeypatch, rec)
        endpoints.endpoint(stub.base_url).dialect(am.model)
        stub.push_faults("no_usage")
        am.chat([HumanMessage("q")], actor="a", purpose="p")
        [c] = rec.calls()
        assert c.ok and (c.input_tokens, c.output_tokens, c.cached_tokens) == (None, None, None)


def test_a_failed_call_is_an_abstention_and_the_third_in_a_row_stops_the_run(monkeypatch):
    with StubServer(reply=llama_like("Vote: Cy")) as stub:
        am = accounted(stub, monkeypatch)
        agent = vote_agent(am)
        endpoints.endpoint(stub.base_url).dialect(am.model)
        stub.push_faults(*["500"] * 4)                  # one call: 1 try + 3 retries
        action = agent.act(vote_request())
        assert not action.valid and action.value is None and action.attempts == 1
        assert agent.stats["failed_calls"] == 1 and "Error code: 500" in action.errors[0]
        assert agent.act(vote_request()).valid          # the next call works: the streak is over
        stub.push_faults(*["503"] * 4)
        agent.act(vote_request())
        stub.push_faults(*["503"] * 4)
        agent.act(vote_request())
        stub.push_faults(*["503"] * 4)
        with pytest.raises(ModelUnavailable, match="3 calls in a row failed"):
            agent.act(vote_request())


def test_a_server_still_loading_is_probed_again_not_taken_for_prompt_only(monkeypatch):
    monkeypatch.setattr(dialects, "PROBE_BACKOFF_S", 0.01)
    with StubServer(reply=llama_like("ok")) as stub:
        stub.push_faults("503", "503")                  # llama.cpp answers 503 while loading
        assert endpoints.endpoint(stub.base_url).dialect(model_for(stub, monkeypatch)) == "gbnf"
    with StubServer(reply=llama_like("ok")) as stub:
        stub.push_faults(*["503"] * dialects.PROBE_TRIES)
        with pytest.raises(ModelUnavailable, match="not ready"):
            endpoints.endpoint(stub.base_url).dialect(model_for(stub, monkeypatch))
        assert endpoints.endpoint(stub.base_url)._dialect is None          # nothing cached


def test_a_server_that_is_down_stops_the_run_in_one_line(monkeypatch, no_backoff):
    monkeypatch.setattr(dialects, "PROBE_BACKOFF_S", 0.01)
    stub = StubServer(reply=llama_like("ok")).start()
    am = accounted(stub, monkeypatch)
    ep = endpoints.endpoint(stub.base_url)
    ep.dialect(am.model)
    ep.context_window(am.model)
    stub.stop()
    with pytest.raises(ModelUnavailable) as err:
        am.chat([HumanMessage("q")], actor="a", purpose="p")
    assert str(err.value).startswith(f"model server {stub.base_url} is unreachable after 3 retries")
    assert "\n" not in str(err.value)
    endpoints.configure()                  # a fresh start meets the dead server at every try of its first probe
    no_backoff.clear()
    with pytest.raises(ModelUnavailable) as err:
        am.chat([HumanMessage("q")], actor="a", purpose="p")
    assert str(err.value).startswith(f"model server {stub.base_url} is unreachable: GET /models failed all "
                                     f"{dialects.PROBE_TRIES} tries (last: APIConnectionError")
    assert no_backoff == [0.01, 0.02, 0.04]


def test_a_refused_request_stops_the_run(monkeypatch):
    endpoints.configure(structured="prompt")
    with StubServer(reply=llama_like("ok")) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url + "/wrong")     # every path there is a 404
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        rec = CallRecorder(None)
        am = AccountedModel(make_chat_model("openai:stub"), rec, label="s", backoff_s=0.01)
        with pytest.raises(ModelUnavailable, match=r"refused the request \(.*404"):
            am.chat([HumanMessage("q")], actor="a", purpose="p")
        [c] = rec.calls()
        assert (c.ok, c.retries) == (False, 0)          # not retried: a 404 is the same every time


# ---------------------------------------------------------------------------------------------
# concurrency and caching


def test_requests_in_flight_are_capped_per_base_url(monkeypatch):
    endpoints.configure(max_connections=4, structured="prompt")
    with StubServer(latency_s=0.15, reply=lambda body: "ok") as stub:
        models = [accounted(stub, monkeypatch) for _ in range(3)]      # separate models, one endpoint
        threads = [threading.Thread(target=models[i % 3].chat, args=([HumanMessage("q")],),
                                    kwargs={"actor": "a", "purpose": "p"}) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        lim = endpoints.endpoint(stub.base_url).limiter
        assert stub.in_flight_max == 4 and lim.peak == 4 and lim.completed == 16
        assert "0 in flight" in endpoints.activity()


def test_adaptive_limit_halves_on_429_and_grows_back():
    lim = limits.EndpointLimiter(8, adaptive=True)
    lim.rate_limited()
    lim.rate_limited()            # the same burst: one signal
    assert lim.limit == 4
    lim.completed += 4            # a generation later
    lim.rate_limited()
    assert lim.limit == 2
    for _ in range(20):
        lim.succeeded()
    assert lim.limit == 3
    fixed = limits.EndpointLimiter(8)
    fixed.rate_limited()
    assert fixed.limit == 8


def test_cached_prompt_tokens_are_recorded(monkeypatch):
    with StubServer(reply=llama_like("ok"), cached_tokens=30) as stub:
        rec = CallRecorder(None)
        am = accounted(stub, monkeypatch, rec)
        am.chat([SystemMessage("s" * 200), HumanMessage("q" * 200)], actor="a", purpose="p")
        [c] = rec.calls()
        assert (c.cached_tokens, c.input_tokens) == (30, 101)
        assert rec.totals()["cache_hit"] == pytest.approx(30 / 101, abs=1e-4)


# ---------------------------------------------------------------------------------------------
# the command line


def wis_reply(body: dict) -> str:
    if body.get("grammar") == PROBE_GRAMMAR:
        return dialects.PROBE_TEXT
    if "grammar" not in body:
        raise AssertionError(f"unexpected request {body}")
    g = body["grammar"]
    if g.startswith('root ::= "Description: "'):
        return "Description: something you drink warm in the morning"
    if g.startswith('root ::= "Vote: "'):
        return "Vote: " + g.split("name ::= ")[1].split(" | ")[0].strip().strip('"')
    raise AssertionError(f"unexpected grammar {g!r}")


def test_spy_play_against_a_server_and_a_one_line_stop_when_it_dies(monkeypatch, tmp_path):
    from mas_agents.cli import app

    with StubServer(reply=wis_reply) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        args = ["spy", "play", "--agents", "plain@openai:stub", "--pair", "tea/coffee", "--max-connections", "2"]
        res = CliRunner().invoke(app, args + ["--out", str(tmp_path / "g1")])
        assert res.exit_code == 0, res.output
        cfg = json.loads((tmp_path / "g1" / "config.json").read_text())
        [ep] = cfg["endpoints"]
        assert (ep["base_url"], ep["structured"], ep["max_connections"]) == (stub.base_url, "gbnf", 2)
        calls = [json.loads(x) for x in (tmp_path / "g1" / "llm_calls.jsonl").read_text().splitlines()]
        assert calls and all(c["ok"] and c["output_tokens"] <= c["max_tokens"] for c in calls)
    # the server is gone now
    res = CliRunner().invoke(app, args + ["--out", str(tmp_path / "g2")])
    assert res.exit_code == 3
    assert "Traceback" not in res.output
    [line] = [x for x in res.output.splitlines() if x.startswith("error:")]
    assert f"model server {stub.base_url} is unreachable" in line and "Finished work is kept" in line


def test_a_context_overflow_ends_any_command_with_exit_3(monkeypatch, tmp_path):
    from mas_agents.cli import app

    with StubServer(reply=wis_reply) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        stub.push_faults("ok", "400:context")      # the probe passes, the first description overflows
        res = CliRunner().invoke(app, ["spy", "play", "--agents", "plain@openai:stub", "--pair", "tea/coffee",
                                       "--out", str(tmp_path / "g")])
    assert res.exit_code == 3                        # spy play's own `except ValueError` sees it first
    [line] = [x for x in res.output.splitlines() if x.startswith("error:")]
    assert line.startswith(f"error: model server {stub.base_url}: prompt is 5000 tokens but only 3968 fit")
    assert "[the server said: Error code: 400" in line and "exceeds the available context size" in line
    assert "Finished work is kept" in " ".join(res.output.split())
