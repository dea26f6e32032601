"""One model-spec check (mas_agents.model_specs.check_spec) for make_chat_model and mas serve's /play:
they accept and refuse the same specs (review finding 3: /play refused ``replay:RUN`` though it is
a listed form, and let ``OPENAI_BASE_URL=ftp://x`` through to fail in the game thread)."""

from __future__ import annotations

import pytest

from mas_agents.llm import make_chat_model
from mas_agents.model_specs import check_spec
from mas_agents.web.routes.play import check_model_spec


def test_play_accepts_a_replay_spec_of_an_existing_run(tmp_path):
    (tmp_path / "run").mkdir()
    check_model_spec(f"replay:{tmp_path / 'run'}")          # no error: a listed form
    check_spec(f"replay:{tmp_path / 'run'}")


@pytest.mark.parametrize("check", [check_spec, check_model_spec, make_chat_model])
def test_a_base_url_that_is_no_http_url_is_refused_by_both(check, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "ftp://x")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match=r"OPENAI_BASE_URL: 'ftp://x' is not an http\(s\) URL"):
        check("openai:m")


@pytest.mark.parametrize("spec, said", [
    ("foo:bar", "unknown model spec 'foo:bar'"),
    ("openai:", "missing model name after 'openai:'"),
    ("replay:", "missing run directory after 'replay:'"),
    ("local:/no/such.gguf", "GGUF file not found: /no/such.gguf"),
    ("replay:/no/such/run", "no run directory at /no/such/run"),
])
def test_both_refuse_the_same_specs_with_the_same_words(spec, said):
    with pytest.raises((ValueError, FileNotFoundError), match=said.replace("(", r"\(")):
        check_spec(spec)
    with pytest.raises(ValueError, match=said.replace("(", r"\(")):
        check_model_spec(spec)
    with pytest.raises((ValueError, FileNotFoundError), match=said.replace("(", r"\(")):
        make_chat_model(spec)


def test_openai_without_key_or_url_is_refused(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="set OPENAI_API_KEY"):
        check_model_spec("openai:m")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    check_model_spec("openai:m")
    assert make_chat_model("openai:m").metadata["mas_max_retries"] == 3
