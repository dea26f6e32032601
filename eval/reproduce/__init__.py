"""``mas reproduce``: each paper's protocol in one command, the paper's numbers beside ours.

One module per paper (:mod:`eval.reproduce.magic`, :mod:`eval.reproduce.player_star`,
:mod:`eval.reproduce.wis`), each with ``reproduce(...)`` (see :mod:`eval.reproduce.common` for the
shared contract); the papers' published numbers live in ``papers/*.csv``, each file naming its
source (paper, version, table) in its ``#`` header lines.
"""
