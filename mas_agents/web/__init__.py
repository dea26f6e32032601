"""``mas serve``: a web app to watch, replay, rank and play the games of this project.

Modules:

* :mod:`mas_agents.web.runs` finds the run directories under ``--runs`` and says what each is
  (kind, date, model, agents, headline numbers, progress), never reading outside ``--runs``;
* :mod:`mas_agents.web.replay` turns a game's ``events.jsonl`` (alone) into display rows for the
  murder mystery, Who is Spy and MAgIC, and reads the ``llm_calls.jsonl`` call log;
* :mod:`mas_agents.web.rating` rates Who-is-Spy agents with openskill from stored games;
* :mod:`mas_agents.web.app` is the FastAPI app (Jinja2 templates with autoescaping, a small
  static script, no build step).

The app sits between the CLI and ``eval`` in the layer contracts (``pyproject.toml``,
ARCHITECTURE.md): it reads run directories and starts games through ``eval``'s composition roots.
"""
