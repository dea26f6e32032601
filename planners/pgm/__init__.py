"""MAgIC's PGM-aware agent (arXiv 2311.08562 §3/§4) as a planner block, computed with pgmpy.

* :class:`TwoHopBelief` (:mod:`mas_agents.planners.pgm.belief`): who holds the hidden role (first hop) and
  what each other player believes about it (second hop), as exact Bayesian networks.
* :class:`MovePredictor` (:mod:`mas_agents.planners.pgm.moves`): the others' next moves in the repeated games
  and what they expect of me, learned from the revealed rounds.
* :class:`ShareBelief` (:mod:`mas_agents.planners.pgm.shares`): in cost sharing, the highest share each other
  party accepts (first hop) and what each thinks I accept (second hop), from proposals and votes.
* :class:`PGMBlock` (:mod:`mas_agents.planners.pgm.block`): the ``pgm`` planner block using both.

pgmpy itself is imported only when a network is first built.
"""

from mas_agents.planners.pgm.belief import ANSWER_CPT, FIT_CPT, VOTE_RATIO, TwoHopBelief
from mas_agents.planners.pgm.block import PGMBlock
from mas_agents.planners.pgm.reading import reading_request
from mas_agents.planners.pgm.moves import (PD_MOVES, PG_MOVES, MovePredictor, pd_payoff_fn, pg_level,
                                pg_payoff_fn)
from mas_agents.planners.pgm.shares import ShareBelief

#: spec name -> block factory, for registration in :data:`mas_agents.specs.BLOCKS`.
FACTORIES = {"pgm": lambda: [PGMBlock()]}

__all__ = [
    "ANSWER_CPT",
    "FACTORIES",
    "FIT_CPT",
    "MovePredictor",
    "PD_MOVES",
    "PG_MOVES",
    "PGMBlock",
    "ShareBelief",
    "TwoHopBelief",
    "VOTE_RATIO",
    "reading_request",
    "pd_payoff_fn",
    "pg_level",
    "pg_payoff_fn",
]
