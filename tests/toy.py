"""The toy murder mystery the agent, planner and graph tests share, and the helpers that build it.

Four players (Ann, Bob, Cid, Dee); Bob poisoned Vic. :func:`make_agent` builds one agent on a
:class:`tests.fakes.RuleChat`; :func:`toy_runtime` builds a whole :class:`mas_agents.graphs.mmg.graph.MMGRuntime`.
``tests/conftest.py`` exposes :func:`make_agent` and :func:`toy_runtime` as fixtures; module-level
helpers of a test module, and the PLAYER* tests (:func:`star_agent`), import them from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping, NamedTuple, Sequence

from mas_agents.accounting import AccountedModel
from mas_agents.call_log import CallRecorder
from mas_agents.agents import Agent, Persona
from mas_agents.memory import HashEmbedder, MemorySettings, VectorMemory
from tests.fakes import RuleChat

#: Seat order of the toy game.
TOY_PLAYERS = ["Ann", "Bob", "Cid", "Dee"]
#: Victim and murderer of the toy game.
TOY_VICTIM, TOY_MURDERER = "Vic", "Bob"
#: Each player's private script.
TOY_SCRIPTS = {
    "Ann": "You are Ann, the baker. You saw Bob near the well at nine.",
    "Bob": "You are Bob, the smith. You poisoned Vic with arsenic at nine. Hide it.",
    "Cid": "You are Cid, the priest. You were praying all evening.",
    "Dee": "You are Dee, the teacher. Vic owed you money.",
}
#: Ann's script in the single-agent tests (what she saw, whom Vic owed).
ANN_SCRIPT = "You are Ann, the baker. You saw Bob near the well at nine. Bob owed Vic money. Cid was asleep."


class ToyAgent(NamedTuple):
    """What :func:`make_agent` returns."""

    agent: Agent
    recorder: CallRecorder
    chat: RuleChat


def make_agent(rule: Callable, blocks: Sequence = (), *, name: str = "Ann", role: str = "civilian",
               script: str = ANN_SCRIPT, memory_script: str | None = None, goals: str = "Find the killer.",
               victims: Sequence[str] = (TOY_VICTIM,), players: Sequence[str] = TOY_PLAYERS,
               script_budget: int = 80, dialogue_budget: int = 80, spec: str = "plain") -> ToyAgent:
    """One agent of the toy game on a :class:`RuleChat` fake replying ``rule(messages)``, with a new
    in-memory call recorder and the murder mystery's :class:`mas_agents.planners.base.GameInfo` (as the game's
    composition root sets it).

    Args:
        blocks: its planner blocks (a fresh list is made).
        script: the persona's script; ``memory_script`` (default: the same) is what its hash-embedding
            memory holds.
    """
    from mas_agents.graphs.mmg.rules import GAME as MMG
    rec = CallRecorder(None)
    chat = RuleChat(rule=rule, seen=[])
    model = AccountedModel(chat, rec, label="fake")
    mem = VectorMemory(HashEmbedder())
    mem.add_script(script if memory_script is None else memory_script)
    persona = _persona(name, role, script, goals, victims, players)
    agent = Agent(persona, model, mem, list(blocks), MemorySettings(script_budget=script_budget,
                                                                    dialogue_budget=dialogue_budget), spec=spec,
                  game=MMG)
    return ToyAgent(agent, rec, chat)


def star_agent(rule: Callable, *, config=None, **kw) -> ToyAgent:
    """:func:`make_agent` with the PLAYER* blocks (``config``: a ``PlayerStarConfig``)."""
    from mas_agents.planners.player_star import player_star_blocks
    return make_agent(rule, player_star_blocks(config), spec="player_star", **kw)


def state_of(agent: Agent):
    """The PLAYER* state of ``agent`` (set up for it)."""
    from mas_agents.planners.player_star import find_state
    st = find_state(agent)
    assert st is not None, f"{agent.name} has no PLAYER* blocks"
    return st.ensure(agent)


def _persona(name: str, role: str, script: str, goals: str, victims: Sequence[str], players: Sequence[str]) -> Persona:
    """A murder-mystery persona with the system prompt the game gives it."""
    from mas_agents.graphs.mmg.prompts import system_prompt
    return Persona(name=name, title="Toy", role=role, script=script, goals=goals, victims=list(victims),
                   players=list(players), system=system_prompt(name, "Toy", role, goals, list(victims), list(players)))


def toy_persona(name: str, goals: str = "Find the killer.", script: str | None = None) -> Persona:
    """The persona of ``name`` in the toy game (``script``: instead of its :data:`TOY_SCRIPTS` entry)."""
    return _persona(name, "murderer" if name == TOY_MURDERER else "civilian",
                    TOY_SCRIPTS[name] if script is None else script, goals, [TOY_VICTIM], TOY_PLAYERS)


def toy_runtime(tmp_path: Path, rules: Mapping[str, Callable] | Callable, *, rounds: int = 2, questions: int = 1,
                goals: str = "Find the killer.", build: Callable | None = None,
                scripts: Mapping[str, str] | None = None, script_budget: int = 60, dialogue_budget: int = 60):
    """A toy game ready for :func:`mas_agents.graphs.mmg.session.run_game`.

    Args:
        tmp_path: the run directory is ``tmp_path / "run"`` (created); the call log is its
            ``llm_calls.jsonl``.
        rules: player -> fake rule, or one rule for everyone (each player gets its own
            :class:`RuleChat`).
        build: ``build(persona, model, embedder, settings) -> Agent`` to build a player some other
            way; return None for the default plain agent.
        scripts: player -> script, for the players whose script differs from :data:`TOY_SCRIPTS`.

    Returns:
        ``(runtime, recorder, run_dir)``.
    """
    from mas_agents.graphs.mmg.graph import MMGRuntime
    from mas_agents.graphs.mmg.rules import GAME as MMG_GAME
    from mas_agents.specs import build_agent

    out = tmp_path / "run"
    out.mkdir(parents=True, exist_ok=True)
    recorder = CallRecorder(out / "llm_calls.jsonl")
    emb = HashEmbedder()
    settings = MemorySettings(script_budget=script_budget, dialogue_budget=dialogue_budget)
    agents = {}
    for p in TOY_PLAYERS:
        rule = rules[p] if isinstance(rules, Mapping) else rules
        model = AccountedModel(RuleChat(rule=rule, seen=[]), recorder, label="fake")
        persona = toy_persona(p, goals, (scripts or {}).get(p))
        agent = build(persona, model, emb, settings) if build is not None else None
        agents[p] = agent if agent is not None else build_agent(persona, "plain", model, emb, settings,
                                                                     game=MMG_GAME)
    rt = MMGRuntime(title="Toy", players=list(TOY_PLAYERS), victims=[TOY_VICTIM],
                    murderers={TOY_VICTIM: [TOY_MURDERER]}, agents=agents, rounds=rounds, questions=questions)
    return rt, recorder, out
