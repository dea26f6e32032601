"""The players panel of a replay: one line per seat with its agent, model and role, the roles
hidden while a hidden-role game is played (see :mod:`mas_agents.web.replay_rows`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from mas_agents.game import contract as game_registry
from mas_agents.game.view import SeatInfo, default_seats, role_word
from mas_agents.game.human import seat_dirname
from mas_agents.specs import is_remote, split_model
from mas_agents.game import experiments
from mas_agents.web.views import hidden_roles, view_of

#: Roles of the run kinds that are not games (a WellPlay evaluation's characters); a game words
#: its own (:attr:`mas_agents.game.view.GameView.role_text`).
ROLE_TEXT = {"en": {"player": "player", "evaluated": "answers the questions"}, "zh": {"player": "玩家"}}


@dataclass
class Seat:
    """One line of the players panel.

    Attributes:
        seat: 1-based. name: the seat's name as the events write it (``Player 1``, a character).
        agent: its agent spec. model: the model spec it ran (:func:`seat_model`), "" when unknown.
        role: readable role, "" when unknown or hidden. hidden: True while the role is not shown.
        stopped: the role is shown because the game stopped before its end (it will not end).
        folder: the seat's folder name under ``<run>/human/``
            (:func:`mas_agents.game.human.seat_dirname`: ``Player 1`` -> ``Player_1``), to match the
            human seats a run has to their names.
    """

    seat: int
    name: str
    agent: str
    model: str
    role: str
    hidden: bool
    stopped: bool = False
    folder: str = ""


def seat_model(name: str, agent: str, config: Mapping[str, Any] | None, result: Mapping[str, Any] | None) -> str:
    """The model spec seat ``name`` ran: ``config["seat_models"][name]`` (the run-record contract:
    what the runner resolved for the seat), else the ``@MODEL`` of its agent spec ``agent``
    (``plain@openai:stub`` -> ``openai:stub``, :func:`mas_agents.specs.split_model`; runs written
    before ``seat_models``), else the run's ``model`` (``config.json``, then ``result.json``); ""
    when none is known. A remote agent (``http://...``) answers with its own model: "remote"."""
    seat_models = (config or {}).get("seat_models")
    if isinstance(seat_models, Mapping) and seat_models.get(name):
        return str(seat_models[name])
    if agent and is_remote(agent):
        return "remote"
    try:
        spec_model = split_model(agent)[1] if agent else None
    except ValueError:
        spec_model = None
    return str(spec_model or (config or {}).get("model") or (result or {}).get("model") or "")


def _seat_info(events: list[dict[str, Any]], game: str, cfg: dict, res: dict) -> SeatInfo:
    """The seats as the game reports them (:attr:`mas_agents.game.view.GameView.seats`), as a run kind
    that is not a game reports them (:attr:`mas_agents.game.experiments.ExperimentDef.seats`: a WellPlay evaluation's
    characters), else from the events and the game's ``seat_specs``."""

    rk = experiments.find(cfg.get("kind"))
    if rk is not None and rk.seats is not None:
        return rk.seats(events, cfg, res)
    hook = view_of(game).seats
    if hook is not None:
        return hook(events, cfg, res)
    registered = game_registry.find(game)
    specs = registered.seat_specs(cfg) if registered is not None and registered.seat_specs else []
    return default_seats(events, list(specs))


def players_panel(events: list[dict[str, Any]], game: str, config: Mapping[str, Any] | None,
                  result: Mapping[str, Any] | None, reveal: bool, lang: str = "en", stopped: bool = False) -> list[Seat]:
    """The players panel: one :class:`Seat` per player, in seat order.

    Args:
        events: the game's events. game: the run's game (a registered kind, or "" for defaults).
        config, result: the run's ``config.json`` and ``result.json`` (None when missing).
        reveal: show hidden roles (the game has ended, or the private view was asked for).
        lang: the replay's language (role names).
        stopped: the game stopped before its end (its process is gone: it will not end); its
            roles are shown, each seat marked :attr:`Seat.stopped`.

    Sources: the seats, agents and roles the game's view reports
    (:attr:`mas_agents.game.view.GameView.seats`; a run kind that is not a game: its
    :attr:`mas_agents.game.experiments.ExperimentDef.seats`), roles worded with its ``role_text``, hidden while
    :func:`hidden_roles` holds and nothing reveals them. Models: :func:`seat_model`. While the
    roles are hidden, a game that asks for it (:attr:`mas_agents.game.view.SeatInfo.uniform_while_hidden`:
    the murder mystery) shows the same joined text on every seat whose agents or models differ
    (else the odd one out would name the murderer).
    """

    cfg, res = dict(config or {}), dict(result or {})
    reveal = reveal or stopped
    info = _seat_info(events, game, cfg, res)
    rk = experiments.find(cfg.get("kind"))
    hide = hidden_roles(game, events, cfg) and not reveal and not (rk is not None and rk.seats is not None)
    names = [n for n in info.names if n != "game"]
    agents, roles = dict(info.agents), dict(info.roles)
    models = {n: seat_model(n, agents.get(n, ""), cfg, res) for n in names}
    if info.uniform_while_hidden and hide:
        for per in (agents, models):
            differ = sorted({per.get(n, "") for n in names} - {""})
            if len(differ) > 1:
                joined = info.hidden_agent_text if per is agents and info.hidden_agent_text else " / ".join(differ)
                per.update({n: joined for n in names})
    role_text = view_of(game).role_text
    out = []
    for i, n in enumerate(names):
        r = roles.get(n, "")
        text = info.role_labels.get(n) or role_word(role_text, lang, role_word(ROLE_TEXT, lang, r))
        try:
            folder = seat_dirname(n)
        except ValueError:
            folder = ""
        out.append(Seat(seat=i + 1, name=n, agent=agents.get(n, ""), model=models.get(n, ""),
                        role="" if hide else text, hidden=hide and bool(r), stopped=stopped and bool(r), folder=folder))
    return out
