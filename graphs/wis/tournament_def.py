"""Who-is-Spy's runs of many games as experiments (:mod:`mas_agents.game.experiments`):
``wis-tournament`` (:func:`mas_agents.graphs.wis.tournament.run_tournament`: a ``games/`` folder
of WiS games stored in a leaderboard database) and ``wis-experiment``
(:func:`mas_agents.graphs.wis.tournament.run_experiment`: a baseline arm and a strategy arm, each
a tournament). Both record ``kind`` in their ``config.json``; the runs written before them are
recognised by their files (:func:`tournament_recognizes`, :func:`experiment_recognizes`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mas_agents.game import contract as game_registry
from mas_agents.game.experiments import ExperimentDef, LeaderboardDef, RunFiles, RunLine, register
from mas_agents.game.line_text import rate_text, read_json_or_none, run_models, uniq
from mas_agents.graphs.wis.leaderboard import Leaderboard, connect_read_only, default_db_path
from mas_agents.graphs.wis.rating import rank_table, ratings

#: The run kinds (:data:`mas_agents.graphs.wis.tournament.TOURNAMENT_KIND`, ``EXPERIMENT_KIND``).
TOURNAMENT_KIND = "wis-tournament"
EXPERIMENT_KIND = "wis-experiment"
#: The strategies of an experiment (:data:`mas_agents.graphs.wis.tournament.EXPERIMENT_KINDS`).
_STRATEGIES = ("attack", "defense", "reasoning")


def _games(d: Path) -> list[Path]:
    games = d / "games"
    return sorted(g for g in games.iterdir() if g.is_dir()) if games.is_dir() else []


def tournament_line(files: RunFiles) -> RunLine:
    """The agents and models of its games (its own record may predate ``models``) and its
    progress (the total from its ``config.json`` ``games`` when it plans them); finished when
    no game is running or stopped."""
    cfgs = [read_json_or_none(g / "config.json") or {} for g in _games(files.dir)]
    models = files.models or sorted(set(m for c in cfgs for m in run_models(c)))
    planned = files.config.get("games")   # the tournament's own config.json (newer runs) plans its games
    prog = files.progress(db_total=planned if isinstance(planned, int) and not isinstance(planned, bool) else None)
    return RunLine(agents=uniq(a for c in cfgs for a in c.get("agents") or []), headline=prog["text"], models=models,
                   finished=not prog.get("running") and not prog.get("stopped"))


def tournament_id(d: Path) -> str | None:
    """The leaderboard id of the tournament in ``d``, read from a game's ``game_id``
    (``<id>-g<index>``, :func:`mas_agents.graphs.wis.tournament.run_tournament`), or None."""
    for g in sorted((Path(d) / "games").glob("g*")):
        c = read_json_or_none(g / "config.json")
        if isinstance(c, dict) and "-g" in str(c.get("game_id", "")):
            return str(c["game_id"]).rsplit("-g", 1)[0]
    return None


def tournament_recognizes(cfg: Any, res: Any, d: Path) -> bool:
    """A tournament written before it wrote its own ``config.json``: no ``config.json`` and a
    ``games/`` folder whose first games are registered games."""
    games = d / "games"
    if cfg is not None or not games.is_dir():
        return False
    for g in sorted(games.iterdir())[:3]:
        c = read_json_or_none(g / "config.json")
        if isinstance(c, dict) and game_registry.find(c.get("kind")) is not None:
            return True
    return False


def experiment_line(files: RunFiles) -> RunLine:
    """The subject and the others; per arm its win rate, vote accuracy and foul rate with their
    Wilson intervals."""
    res = files.result
    rows = res.get("rows") or []
    headline = f"{res.get('kind')}: " + "; ".join(
        f"{r.get('arm')} win {rate_text(r, 'wins', 'games', r.get('win_rate'))}, "
        f"vote acc {rate_text(r, 'correct_votes', 'votes_cast_as_civilian', r.get('vote_accuracy'))}, "
        f"foul {rate_text(r, 'fouls', 'descriptions', r.get('foul_rate'))}" for r in rows)
    return RunLine(agents=uniq([res.get("subject"), res.get("others")]), headline=headline)


def experiment_recognizes(cfg: Any, res: Any, d: Path) -> bool:
    """An experiment written before its ``config.json`` recorded ``kind``: a ``result.json``
    with ``rows`` and a strategy as its ``kind``."""
    return isinstance(res, dict) and "rows" in res and res.get("kind") in _STRATEGIES


#: The WiS leaderboard database as ``mas serve`` reads it (:mod:`mas_agents.graphs.wis.leaderboard`,
#: :mod:`mas_agents.graphs.wis.rating`).
BOARD = LeaderboardDef(open=lambda path: Leaderboard(path, read_only=True),
                       default_db=lambda: default_db_path(create=False),
                       connect_read_only=connect_read_only, rank_table=rank_table, ratings=ratings)

TOURNAMENT_DEF = register(ExperimentDef(TOURNAMENT_KIND, tournament_line, recognizes=tournament_recognizes,
                                        parts="games", composite=True, own_result=False,
                                        leaderboard_id=tournament_id, board=BOARD))
EXPERIMENT_DEF = register(ExperimentDef(EXPERIMENT_KIND, experiment_line, recognizes=experiment_recognizes))
