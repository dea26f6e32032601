"""Which view a run's replay uses (:class:`mas_agents.game.view.GameView` of its game, else the
defaults) and what the view says about the run: its game, language, variant and hidden roles."""

from __future__ import annotations

from typing import Any, Mapping

from mas_agents.game import contract as game_registry
from mas_agents.game.view import GameView
from mas_agents.game.view import players_of as _players_of


def view_of(game: str | GameView) -> GameView:
    """The :class:`mas_agents.game.view.GameView` of ``game`` (a run kind; a view is returned as it
    is): the registered game's own (:func:`mas_agents.game.contract.view_of`), else the defaults."""
    return game if isinstance(game, GameView) else game_registry.view_of(game)


def game_of(events: list[dict[str, Any]], kind_hint: str = "") -> str:
    """The game whose events these are: ``kind_hint`` when it is a registered game, else the
    first registered game whose :attr:`mas_agents.game.view.GameView.recognizes` holds a kind of the
    events (a run whose ``config.json`` names no kind), else ``""`` (the defaults)."""
    if game_registry.find(kind_hint) is not None:
        return kind_hint
    kinds = {e.get("kind") for e in events}
    for kind, game in game_registry.games().items():
        if game.view is not None and kinds & game.view.recognizes:
            return kind
    return ""


def lang_of(events: list[dict[str, Any]], game: str, config: Mapping[str, Any] | None = None) -> str:
    """The language a replay is written in, ``"en"`` or ``"zh"``: the game's
    :attr:`mas_agents.game.view.GameView.lang` (default: ``config["lang"]``)."""
    return "zh" if view_of(game).lang(events, dict(config or {})) == "zh" else "en"


def variant_of(events: list[dict[str, Any]], game: str, config: Mapping[str, Any] | None = None) -> str:
    """Which game of a family the run is (:attr:`mas_agents.game.view.GameView.variant`: MAgIC's
    scenario), or ""."""
    hook = view_of(game).variant
    return str(hook(events, dict(config or {})) or "") if hook else ""


def players_of(events: list[dict[str, Any]]) -> list[str]:
    """The players of a game, in the order the events first name them as an actor or owner
    (:func:`mas_agents.game.view.players_of`)."""
    return _players_of(events)


def hidden_roles(game: str, events: list[dict[str, Any]], config: Mapping[str, Any] | None = None) -> bool:
    """True when ``game`` hides its roles from the players (its
    :attr:`mas_agents.game.view.GameView.hidden_roles`: Who is Spy, the murder mystery, MAgIC's
    Chameleon and Undercover)."""
    hook = view_of(game).hidden_roles
    return bool(hook(events, dict(config or {}))) if hook else False


def scenario_of(events: list[dict[str, Any]], config: Mapping[str, Any] | None = None) -> str:
    """The scenario a ``setup`` event names, else ``config["scenario"]``, or "" (a game of a
    family: :func:`variant_of` asks the game)."""
    setup = next((e.get("data") or {} for e in events if e.get("kind") == "setup"), {})
    return str(setup.get("scenario") or (config or {}).get("scenario") or "")
