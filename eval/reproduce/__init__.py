"""``mas reproduce``: each paper's protocol in one command, the paper's numbers beside ours.

One run module per paper (:mod:`mas_agents.eval.reproduce.magic`,
:mod:`mas_agents.eval.reproduce.player_star`, :mod:`mas_agents.eval.reproduce.wis`), each with its
typed configuration, ``check_out(config)`` and ``reproduce(config)`` (see
:mod:`mas_agents.eval.reproduce.common` for the shared contract), beside three modules of its own:
``<paper>_protocol`` (the protocol's numbers, subsets, seating or plan), ``<paper>_numbers`` (what
we read back from the games played) and ``<paper>_report`` (the report, the protocol differences,
the headline). :mod:`mas_agents.eval.reproduce.all` runs the three;
:mod:`mas_agents.eval.reproduce.registry` finds a paper by name; :mod:`mas_agents.eval.reproduce.estimate`
prices a run before it runs. The papers' published numbers live in ``papers/*.csv``, each file
naming its source (paper, version, table) in its ``#`` header lines.
"""
