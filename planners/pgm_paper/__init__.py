"""MAgIC's own PGM-aware agent as the paper built it (arXiv 2311.08562 §4.1, §4.2, App. A.7).

The LLM writes the two-hop analysis in the paper's fixed form, one recorded model call with
purpose ``pgm_analysis``, and then decides with it and the paper's PGM Decision Prompt in its
prompt. The texts per kind of game (protocol data with their source) are
:mod:`mas_agents.planners.pgm_paper.templates`; the block is :mod:`mas_agents.planners.pgm_paper.block`.

It is the like-for-like counterpart of the paper's "+PGM" rows. The ``pgm`` block
(:mod:`mas_agents.planners.pgm`) is this project's other reading of §4: exact pgmpy Bayesian networks whose
tables go into the prompt. Both can be on one agent (``plain+pgm_paper+pgm``).
"""

from mas_agents.planners.pgm_paper.block import (ANALYSIS_MAX_TOKENS, PaperPGMBlock, event_line, parse_analysis,
                                      render_analysis_prompt, templates_for)
from mas_agents.planners.pgm_paper.templates import TEMPLATES, Analysis, Decision, GameTemplates, Line

#: spec name -> block factory, for registration in :data:`mas_agents.specs.BLOCKS`.
FACTORIES = {"pgm_paper": lambda: [PaperPGMBlock()]}

__all__ = [
    "ANALYSIS_MAX_TOKENS",
    "Analysis",
    "Decision",
    "FACTORIES",
    "GameTemplates",
    "Line",
    "PaperPGMBlock",
    "TEMPLATES",
    "event_line",
    "parse_analysis",
    "render_analysis_prompt",
    "templates_for",
]
