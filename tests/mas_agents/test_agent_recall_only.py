"""An agent's memory is read one way, :meth:`mas_agents.agents.Agent.recall` (review finding 8:
``Agent.excerpts`` duplicated it and nothing called it)."""

from __future__ import annotations

from mas_agents.agents import Agent, Persona
from mas_agents.memory import HashEmbedder, MemorySettings, VectorMemory
from tests.fakes import RuleChat, wis_player


def test_recall_is_the_one_reader_of_the_memory():
    assert not hasattr(Agent, "excerpts")
    mem = VectorMemory(HashEmbedder(), chunk_tokens=16)
    mem.add_script("Ann keeps the key to the cellar. The cellar was locked at nine.")
    a = Agent(persona=Persona(name="Ann", script=""), model=RuleChat(rule=wis_player()), memory=mem,
              settings=MemorySettings(script_budget=1000, dialogue_budget=10))
    r = a.recall("who has the key")
    assert "Ann keeps the key to the cellar." in r.script and r.script_whole
    assert r.dialogue == ""
