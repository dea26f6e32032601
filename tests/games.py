"""Every game's :class:`mas_agents.planners.base.GameInfo` by name, for tests that build requests by hand,
read from the game registry (:mod:`mas_agents.game.contract`; MAgIC registers a family of five)."""

from mas_agents.game import contract as _games


def _infos() -> dict:
    out = {}
    for kind, game in _games.games().items():
        if isinstance(game.info, dict):
            out.update(game.info)
        else:
            out[kind] = game.info
    return out


GAME = _infos()
