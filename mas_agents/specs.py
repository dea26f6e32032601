"""Agent specs: strings like ``plain`` that name a set of planner blocks.

A spec is ``BLOCK[+BLOCK...]``; each name maps to a factory in :data:`BLOCKS`. ``plain`` is
memory retrieval + script and goals + chain-of-thought (docs/guides/murder-mystery.md, "Agents").
``player_star``, ``pgm``, the baselines and the strategies are in the same table; your own
blocks join it with :func:`register_block`.
"""

from __future__ import annotations

from typing import Callable

from mas_agents.accounting import AccountedModel
from mas_agents.agents import Agent, Persona
from mas_agents.memory import Embedder, MemorySettings, VectorMemory
from mas_agents.planners.base import UNSPECIFIED, GameInfo, PlannerBlock
from mas_agents.planners.baselines import FACTORIES as BASELINES
from mas_agents.planners.cot import ChainOfThought
from mas_agents.planners.pgm import FACTORIES as PGM
from mas_agents.planners.pgm_paper import FACTORIES as PGM_PAPER
from mas_agents.planners.player_star import player_star_blocks
from mas_agents.planners.strategies import FACTORIES as WIS_STRATEGIES

#: spec name -> factory of the blocks it adds (fresh blocks per agent: blocks hold per-agent state).
BLOCKS: dict[str, Callable[[], list[PlannerBlock]]] = {
    "plain": lambda: [ChainOfThought()],
    "player_star": player_star_blocks,  # sensors + questioning + pruner + relation map (PLAYER* §2.3)
    **BASELINES,  # werewolf, ocot, thinkthrice (PLAYER* Appendix C.2)
    **WIS_STRATEGIES,  # attack, defense, reasoning (WiS §4.2)
    **PGM,  # pgm: pgmpy two-hop beliefs (MAgIC §4)
    **PGM_PAPER,  # pgm_paper: MAgIC's PGM-aware agent as the paper built it (LLM-written two-hop analyses, App. A.7)
}


def register_block(name: str, factory: Callable[[], list[PlannerBlock]]) -> None:
    """Make a custom block usable in agent specs (``plain+<name>``) everywhere: games, compare,
    tournaments, MAgIC and ``mas_agents.eval.ablate.grid.run_ablate``.

    Args:
        name: spec name (letters, digits, ``_``); must not contain ``+`` or ``@``.
        factory: returns fresh block objects for ONE agent (blocks may hold per-agent state).

    Raises:
        ValueError: a bad name, or a name that is already registered.
    """
    if not name or not all(ch.isalnum() or ch == "_" for ch in name):
        raise ValueError(f"block name {name!r}: use letters, digits and _ only")
    if name in BLOCKS:
        raise ValueError(f"block {name!r} is already registered")
    BLOCKS[name] = factory


def split_model(spec: str) -> tuple[str, str | None]:
    """Split ``BLOCKS@MODEL`` into ``(BLOCKS, MODEL)``; ``MODEL`` is None when absent.

    ``plain+reasoning@openai:gpt-4o-mini`` -> ``("plain+reasoning", "openai:gpt-4o-mini")``.

    Raises:
        ValueError: an empty model after ``@``.
    """
    blocks, at, model = spec.partition("@")
    if at and not model.strip():
        raise ValueError(f"agent spec {spec!r}: nothing after '@' (expected a model such as local or openai:NAME)")
    return blocks.strip(), (model.strip() or None)


def is_remote(spec: str) -> bool:
    """True for a WiS-protocol agent given by URL (``http://...`` or ``https://...``)."""
    return spec.startswith(("http://", "https://"))


def parse_spec(spec: str) -> list[str]:
    """Split ``a+b`` into block names and check each is known.

    Raises:
        ValueError: empty spec or an unknown block (the message lists the known ones).
    """
    names = [n.strip() for n in spec.split("+") if n.strip()]
    if not names:
        raise ValueError("empty agent spec")
    unknown = [n for n in names if n not in BLOCKS]
    if unknown:
        raise ValueError(f"unknown agent block(s) {', '.join(unknown)}; known: {', '.join(sorted(BLOCKS))}")
    return names


def build_blocks(spec: str) -> list[PlannerBlock]:
    """The planner blocks of ``spec``, in spec order, without duplicates by type."""
    blocks: list[PlannerBlock] = []
    for name in parse_spec(spec):
        for b in BLOCKS[name]():
            if not any(type(x) is type(b) for x in blocks):
                blocks.append(b)
    return blocks


def build_agent(persona: Persona, spec: str, model: AccountedModel, embedder: Embedder,
                settings: MemorySettings | None = None, extra_scripts: list[tuple[str, str]] = (),
                game: GameInfo = UNSPECIFIED) -> Agent:
    """Build one agent with its own FAISS memory holding its script.

    Args:
        persona: who it plays.
        spec: agent spec (see :func:`parse_spec`).
        model: accounted chat model.
        embedder: embedding model for the memory.
        settings: retrieval budgets; defaults to :class:`memory.MemorySettings`.
        extra_scripts: ``(name, text)`` of other characters' scripts to add to the script memory
            (the OP evaluation method reads every script).
    """
    settings = settings or MemorySettings()
    mem = VectorMemory(embedder, chunk_tokens=settings.chunk_tokens)
    mem.add_script(persona.script)
    for other, text in extra_scripts:
        if other != persona.name:
            mem.add_script(f"[From {other}'s script] {text}")
    return Agent(persona=persona, model=model, memory=mem, blocks=build_blocks(spec), settings=settings, spec=spec,
                 game=game)
