"""``mas reproduce``: each paper's protocol in one command, the paper's numbers beside ours.

One module per paper (:mod:`mas_agents.eval.reproduce.magic`, :mod:`mas_agents.eval.reproduce.player_star`,
:mod:`mas_agents.eval.reproduce.wis`), each with ``reproduce(...)`` (see :mod:`mas_agents.eval.reproduce.common` for the
shared contract); the papers' published numbers live in ``papers/*.csv``, each file naming its
source (paper, version, table) in its ``#`` header lines.
"""
