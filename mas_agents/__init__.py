"""mas-agents: LLM multi-agent systems from planner blocks, measured in games.

``import mas_agents as mas`` is the public face (docs/api.md)::

    import mas_agents as mas
    me = mas.agent("plain+pgm", model="local")
    result = mas.play("wis", agents=[me, "plain", "plain", "plain"], pair={"civilian": "tea", "spy": "coffee"})

The names of :data:`__all__` live in :mod:`mas_agents.api` (the composition root, the top layer
of the import contracts: it reaches ``eval`` and ``graphs``), :mod:`mas_agents.graph_nodes`
(``node``, ``end_round``) and the block contract (:mod:`mas_agents.planners.base`). They are looked up on first use (PEP 562 ``__getattr__``), through
``importlib`` so that no import statement of this package names a module above the agent core:
``import mas_agents`` alone imports neither LangGraph nor torch, and ``from mas_agents import
prompts`` inside the core stays an import of the core. No submodule is named as a public name
(the agent core's module is :mod:`mas_agents.agents`, the public function ``mas.agent``), so
importing a submodule never binds over one.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module that defines it
_WHERE = {
    "agent": "mas_agents.api", "recipe": "mas_agents.api", "AgentRecipe": "mas_agents.api",
    "play": "mas_agents.api", "evaluate": "mas_agents.api", "reproduce": "mas_agents.api",
    "node": "mas_agents.graph_nodes", "end_round": "mas_agents.graph_nodes", "builder": "mas_agents.api",
    "recorder": "mas_agents.api", "games": "mas_agents.api", "register_game": "mas_agents.api",
    "blocks": "mas_agents.api", "register_block": "mas_agents.api", "servers": "mas_agents.api",
    "ActionRequest": "mas_agents.planners.base", "Action": "mas_agents.planners.base", "Contribution": "mas_agents.planners.base",
    "GameInfo": "mas_agents.planners.base", "Persona": "mas_agents.agents", "PlannerBlock": "mas_agents.planners.base", "BlockAgent": "mas_agents.planners.base",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    """The public name ``name`` (imported from its module on first use, then cached here).

    Raises:
        AttributeError: not a public name (nor a submodule being imported).
    """
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'mas_agents' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
