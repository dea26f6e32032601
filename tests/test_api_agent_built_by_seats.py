"""``mas.agent`` builds its agent the one way every seat of a game is built (review finding 4,
issue 51 item 4): its model from a :class:`mas_agents.llm.ModelPool` (an ``openai:`` model is the
process's shared one), a scripted agent's memory by :func:`mas_agents.specs.build_agent`."""

from __future__ import annotations

import mas_agents as mas
from mas_agents.call_log import CallRecorder
from mas_agents.llm import ModelPool
from mas_agents.memory import MemorySettings
from tests.fakes import RuleChat, wis_player


def test_an_openai_agent_uses_the_pools_shared_model(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    rec = CallRecorder(None)
    a = mas.agent("plain", model="openai:api-agent-m", seed=4, recorder=rec)
    b = mas.agent("plain+pgm", model="openai:api-agent-m", seed=4)
    shared = ModelPool(CallRecorder(None), seed=4).get("openai:api-agent-m").model
    assert a.model.model is shared and b.model.model is shared      # one SDK client, as in a game
    assert a.model.recorder is rec and a.model.phase == "gameplay"
    assert a.recipe.model == "openai:api-agent-m" and a.spec == "plain" and b.spec == "plain+pgm"


def test_a_scripted_agent_gets_build_agents_memory_and_its_budgets(monkeypatch):
    import mas_agents.specs as specs
    built = []
    real = specs.build_agent

    def spy(*args, **kw):
        built.append(args[1])
        return real(*args, **kw)

    monkeypatch.setattr(specs, "build_agent", spy)
    settings = MemorySettings(script_budget=123)
    a = mas.agent("plain+pgm", model=RuleChat(rule=wis_player()), name="Ann", script="Ann keeps the key.",
                  settings=settings)
    assert built == ["plain+pgm"]
    assert a.settings is settings and a.memory is not None
    plain = mas.agent("plain", model=RuleChat(rule=wis_player()), name="Bob", settings=settings)
    assert plain.memory is None and plain.settings is settings and built == ["plain+pgm"]
