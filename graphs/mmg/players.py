"""The players of a murder-mystery game: one persona (with its system prompt) and one agent per
character of a WellPlay script; the murderer plays the fixed :data:`~mas_agents.graphs.mmg.rules.MURDERER_SPEC`
(PLAYER* §4.1)."""

from __future__ import annotations

from typing import Any

from mas_agents.graphs.mmg.prompts import system_prompt
from mas_agents.graphs.mmg.rules import GAME, MURDERER_SPEC
from mas_agents.agents import Agent, Persona


def persona_for(script: Any, name: str, role: str | None = None) -> Persona:
    """A :class:`~mas_agents.agents.Persona` for character ``name`` of a loaded WellPlay script
    (:class:`mas_agents.graphs.mmg.dataset.Script`, duck-typed), with its murder-mystery system prompt.

    Args:
        script: the loaded script; name: one of its characters.
        role: overrides the script's role (``"respondent"`` for the evaluation after the game);
            default ``"murderer"`` / ``"civilian"`` from ``is_murderer``.

    Raises:
        KeyError: no such character (from ``script.character``).
    """
    ch = script.character(name)
    role = role or ("murderer" if ch.is_murderer else "civilian")
    players = [c.name for c in script.characters]
    victims = list(script.victims)
    return Persona(name=ch.name, title=script.name, role=role, script=ch.script, goals=ch.goals, victims=victims,
                   players=players, system=system_prompt(ch.name, script.name, role, ch.goals, victims, players))


def build_mmg_agents(script: Any, spec: str, seats: Any, embedder: Any,
                     settings: Any = None) -> dict[str, Agent]:
    """One agent per character of a loaded WellPlay script, each with its own FAISS memory, built
    by the run's seats as every game's agents are.

    Args:
        script: an :class:`mas_agents.graphs.mmg.dataset.Script` (duck-typed: ``characters``,
            ``character(name)``, ``name``, ``victims``).
        spec: the agent spec of every civilian; murderers play :data:`MURDERER_SPEC` (PLAYER* §4.1).
        seats: the run's :class:`mas_agents.game.seats.Seats` (duck-typed: ``agent(persona, spec, game,
            embedder=, settings=)``); the specs name no model, so every character plays the
            run's model. embedder: the memory's embedding model.
        settings: retrieval budgets (:class:`memory.MemorySettings`), default when None.

    Returns:
        ``{character name: Agent}`` in the script's character order.

    Raises:
        ValueError: an unknown block in ``spec`` (from :func:`mas_agents.specs.build_agent`).
    """
    agents = {}
    for ch in script.characters:
        persona = persona_for(script, ch.name)
        s = MURDERER_SPEC if persona.role == "murderer" else spec
        agents[ch.name] = seats.agent(persona, s, GAME, embedder=embedder, settings=settings)
    return agents
