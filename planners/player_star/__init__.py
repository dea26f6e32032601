"""PLAYER* planner blocks (Zhu et al. 2024, "PLAYER*: Enhancing LLM-based Multi-Agent
Communication and Interaction in Murder Mystery Games", arXiv 2404.17662, §2.2–2.3, App. C.5).

An agent's PLAYER* planning is split into blocks that share ONE
:class:`~mas_agents.planners.player_star.state.PlayerStarState` per agent:

=================================  ==========================================================
block (module)                     what it does
=================================  ==========================================================
:class:`SensorNotes` (sensors)      sensor readings (emotion, motivation, opportunity,
                                    information value; one ``form`` call per pass) shown at votes
:class:`Questioning` (questioning)  picks whom to question from the suspect list
                                    (suspicion × information / (1 + times asked))
:class:`Pruner` (pruner)            refines the suspect list per victim after each round;
                                    restricts votes to it
:class:`RelationMap` (relations)    networkx relationship map, updated after every exchange,
                                    logged per round, ``relation_summary(a, b)``
:class:`DeductionSensors`           the word games (Who is Spy, Undercover, Chameleon): clue
  (deduction)                       sensors (specificity, fit, copying), a suspect list and
                                    votes narrowed to it
=================================  ==========================================================

Build them with :func:`player_star_blocks` (one fresh state and fresh blocks per call, i.e. per
agent). Private planning events they emit: ``sensor``, ``target_choice``, ``suspect_list``,
``relations``.
"""

from __future__ import annotations

from mas_agents.planners.base import PlannerBlock
from mas_agents.planners.cot import ChainOfThought
from mas_agents.planners.player_star.deduction import WORD_SENSORS, DeductionSensors
from mas_agents.planners.player_star.pruner import PruneDecision, Pruner, decide_suspects, judge
from mas_agents.planners.player_star.questioning import (
    Questioning, choose_target, information_weight, suspicion_score, target_scores, weakest_point,
)
from mas_agents.planners.player_star.relations import RelationMap, agent_relation_summary
from mas_agents.planners.player_star.relation_graph import relation_summary
from mas_agents.planners.player_star.sensors import SensorNotes, batch_request, read_batch
from mas_agents.planners.player_star.state import (
    SENSORS, UNKNOWN, PlayerStarConfig, PlayerStarState, SensorReading, SensorSpec, find_state,
)

__all__ = [
    "PlayerStarConfig", "PlayerStarState", "SensorReading", "SensorSpec", "SENSORS", "UNKNOWN",
    "SensorNotes", "Questioning", "Pruner", "RelationMap", "PruneDecision", "DeductionSensors", "WORD_SENSORS",
    "player_star_blocks", "find_state", "read_batch", "batch_request",
    "suspicion_score", "information_weight", "target_scores", "choose_target", "weakest_point",
    "judge", "decide_suspects", "relation_summary", "agent_relation_summary",
]


def player_star_blocks(config: PlayerStarConfig | None = None) -> list[PlannerBlock]:
    """The PLAYER* blocks for ONE agent, sharing one fresh state.

    Order: chain-of-thought (so ``player_star`` is a superset of ``plain``), sensors, questioning,
    pruner, relations. The relationship map is updated from events as they are heard (before any
    planning); its per-round log comes last so that it includes the pruner's new emotion readings.

    Args:
        config: which blocks and sensors; default: everything on.

    Returns:
        ``[ChainOfThought(), SensorNotes?, Questioning?, Pruner?, RelationMap?, DeductionSensors?]``
        (``?`` = present when enabled in ``config``; the first five act in the murder mystery, the
        last in the word games).
    """
    cfg = config or PlayerStarConfig()
    state = PlayerStarState(config=cfg)
    blocks: list[PlannerBlock] = [ChainOfThought()]
    if cfg.sensors:
        blocks.append(SensorNotes(state=state))
    if cfg.questioning:
        blocks.append(Questioning(state=state))
    if cfg.pruner:
        blocks.append(Pruner(state=state))
    if cfg.relations:
        blocks.append(RelationMap(state=state))
    if cfg.sensors:  # the word games' sensor list; acts only in Who is Spy, Undercover, Chameleon
        blocks.append(DeductionSensors(pruner=cfg.pruner, max_suspects=cfg.max_suspects or 2))
    return blocks
