"""``mas serve``: a web app to watch, replay, rank and play the games of this project.

It names no game: every game (the built-in ones as a new one) reaches it through its
:class:`mas_agents.game.contract.GameDef` (``headline``, ``seat_specs`` and ``view``: an
:class:`mas_agents.game.view.GameView` with its sentences, seats, titles, hidden roles, the truth, the
``/play`` form). Modules:

* :mod:`mas_agents.web.app` is the FastAPI app: :func:`~mas_agents.web.app.create_app` puts
  together the routers of :mod:`mas_agents.web.routes` (one per page family: runs, replay, calls,
  evaluation, reports, downloads, leaderboard, play), which share a
  :class:`mas_agents.web.site.Site` (Jinja2 templates with autoescaping, a small static script,
  no build step);
* :mod:`mas_agents.web.runs` finds the run directories under ``--runs`` and says what each is
  (kind, date, model, agents, headline), never reading outside ``--runs``
  (:mod:`mas_agents.web.paths`); :mod:`mas_agents.web.run_kinds` is the one table of the kinds of run
  that are not one game (tournaments, benches, evaluations...), with their state and progress;
  :mod:`mas_agents.web.evaluation` follows a WellPlay evaluation's answers;
* :mod:`mas_agents.web.replay_rows` turns a game's ``events.jsonl`` (alone) into display rows through
  its view (:mod:`mas_agents.web.views`), with the players panel (:mod:`mas_agents.web.panel`) and
  the readings tables (:mod:`mas_agents.web.readings`), and reads the ``llm_calls.jsonl`` call log;
  :mod:`mas_agents.web.calls` its calls and an evaluation's questions;
* the leaderboard pages read the leaderboard an experiment registers
  (:attr:`mas_agents.game.experiments.ExperimentDef.board`: its database, rank table and ratings).

The app sits between the CLI and ``eval`` in the layer contracts (``pyproject.toml``,
ARCHITECTURE.md): it reads run directories and starts games through ``eval``'s composition roots.
"""
