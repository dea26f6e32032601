"""The PLAYER* paper's baselines as planner blocks (PLAYER*, Zhu et al. 2024, Appendix C.2).

Each baseline shapes the ``ask`` and ``answer`` actions of the murder-mystery game and leaves
``introduce`` / ``vote`` / ``mcq`` to the agent's default behaviour + chain-of-thought. Its extra
model calls go through ``agent.choose`` / ``agent.think`` (so they are accounted like any call)
and what it decided is recorded with ``agent.emit`` as private planning events.

==============  ====================================================  ===============================
baseline        ask                                                   answer
==============  ====================================================  ===============================
werewolf        choose 1 of 10 prepared questions, then ask (2)       reflect, then answer (2)
ocot            reflect on each objective (<= 3), then ask (k + 1)    default (1)
thinkthrice     default (1)                                           timeline (first answer only),
                                                                      relevance, answer, Yes/No
                                                                      check, revision if "No"
                                                                      (4-5 first, 3-4 later)
==============  ====================================================  ===============================

Counts are model calls without re-prompts (a malformed reply costs one more call). The factories
build fresh blocks per agent (each block keeps its per-agent state on the instance); blocks never
import a game module. The murderer of a game keeps the one fixed framework whatever the others
play (PLAYER* §4.1; handled by :mod:`mas_agents.specs`).
"""

from mas_agents.planners.baselines.ocot import ObjectiveCoT, ocot_blocks, split_objectives
from mas_agents.planners.baselines.thinkthrice import ThinkThrice, thinkthrice_blocks
from mas_agents.planners.baselines.werewolf import TEMPLATES, Werewolf, template_choices, werewolf_blocks

#: spec name -> block factory, for registration in :data:`mas_agents.specs.BLOCKS`.
FACTORIES = {
    "werewolf": werewolf_blocks,
    "ocot": ocot_blocks,
    "thinkthrice": thinkthrice_blocks,
}

__all__ = [
    "FACTORIES",
    "ObjectiveCoT",
    "TEMPLATES",
    "ThinkThrice",
    "Werewolf",
    "ocot_blocks",
    "split_objectives",
    "template_choices",
    "thinkthrice_blocks",
    "werewolf_blocks",
]
