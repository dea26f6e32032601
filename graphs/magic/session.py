"""Play one MAgIC game into a directory: ``config.json``, ``events.jsonl``, ``llm_calls.jsonl``,
``result.json`` (outcome, seats, cost) and ``transcript.md``. A game's configuration is
:class:`MagicGameConfig` (:mod:`mas_agents.game.run_config`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from mas_agents.agents import Persona
from mas_agents.game.contract import GameDef, Table, register
from mas_agents.graphs.magic import checks as magic_checks
from mas_agents.graphs.magic import view as magic_view
from mas_agents.game.run_config import NOT_RECORDED, RunConfig
from mas_agents.game.seats import Seats
from mas_agents.game.runner import run
from mas_agents.graphs.magic.graph import build_graph
from mas_agents.graphs.magic.runtime import MagicRuntime
from mas_agents.graphs.magic.rules import GAMES
from mas_agents.utterance import markdown, quote

#: The challenger's sides per scenario (MAgIC §3.2, A.1): in the deduction games it plays each
#: side in turn; in the others it plays the setting's test seat.
SIDES = {"chameleon": ("chameleon", "non_chameleon"), "undercover": ("undercover", "civilian"),
         "cost_sharing": ("test_seat",), "prisoners_dilemma": ("test_seat",), "public_good": ("test_seat",)}


def challenger_seats(scenario: str, setting: Any, side: str) -> list[str]:
    """The seats the challenger plays for ``side`` (``Player k`` names).

    Raises:
        ValueError: a side the scenario does not have.
    """
    if side not in SIDES[scenario]:
        raise ValueError(f"{scenario} has no side {side!r}; expected one of {', '.join(SIDES[scenario])}")
    if side == "test_seat":
        return [setting.test_player]
    roles = setting.roles
    return [p for p, r in roles.items() if r == side]


@dataclasses.dataclass(frozen=True, kw_only=True)
class MagicGameConfig(RunConfig):
    """One MAgIC game: what :func:`play_magic_game` takes and the game's part of its ``config.json``.

    ``config.json`` holds the recorded fields in this order with ``seats`` (``{"Player k": spec}``,
    which spec the set-up seated where: a consequence of the setting's roles, not a choice) after
    ``defender``.

    Attributes:
        scenario: a MAgIC scenario (:data:`SIDES`' keys).
        setting_id: the setting's id (``setting.id``; filled from ``setting`` when None).
        side: the challenger's side (:data:`SIDES`).
        challenger, defender: agent specs ``BLOCKS[@MODEL]``.
        seed: sampling seed of the models built from spec strings.
        temperature: sampling temperature of every seat's model built from a spec string
            (:class:`mas_agents.llm.ModelPool`); None keeps the model's default.
        replay_openings: defenders seated before the challenger replay the setting's recorded
            round-1 clues.
        setting: not recorded: the loaded setting (:mod:`mas_agents.graphs.magic.dataset`).
        model: not recorded: the default model spec (or a chat model object in tests);
            ``config.json`` records the models the seats used (:mod:`mas_agents.game.record`).

    Raises:
        ValueError: ``setting_id`` is not ``setting.id``.
    """

    KIND = "magic"
    scenario: str
    setting_id: int | None = None
    side: str
    challenger: str
    defender: str
    seed: int = 0
    temperature: float | None = None
    replay_openings: bool = False
    setting: Any = dataclasses.field(default=None, metadata=NOT_RECORDED)
    model: Any = dataclasses.field(default="local", metadata=NOT_RECORDED)

    def __post_init__(self) -> None:
        if self.setting is not None:
            if self.setting_id is None:
                object.__setattr__(self, "setting_id", self.setting.id)
            elif self.setting_id != self.setting.id:
                raise ValueError(f"setting_id {self.setting_id} is not the setting's id {self.setting.id}")


def play_magic_game(out: Path, config: MagicGameConfig) -> dict:
    """Play one game; the challenger spec plays :func:`challenger_seats`, the defender the rest
    (through the one runner, :func:`mas_agents.game.runner.run`, as the registered game ``magic``).

    Returns:
        ``result.json``: ``{"scenario", "setting_id", "side", "challenger", "defender", "seats",
        "outcome", "llm", "wall_time_s", "invalid_actions", "model_actions"}``.

    Raises:
        ValueError: a side the scenario does not have; an unknown block in a spec; no ``setting``.
    """
    if config.setting is None:
        raise ValueError("play_magic_game: the configuration has no setting (load it with mas_agents.graphs.magic.dataset)")
    return run("magic", out, model=config.model, seed=config.seed, temperature=config.temperature,
               scenario=config.scenario, setting=config.setting, side=config.side, challenger=config.challenger,
               defender=config.defender, replay_openings=config.replay_openings)


def setup(seats: Seats, *, out: Path, scenario: str, setting: Any, side: str, challenger: str, defender: str,
          replay_openings: bool = False) -> Table:
    """The MAgIC table of a :class:`MagicGameConfig` (:attr:`mas_agents.game.contract.GameDef.setup`): the
    registry passes the game's parameters by name, the configuration is built from them and ``seats``."""
    cfg = MagicGameConfig(scenario=scenario, setting=setting, side=side, challenger=challenger, defender=defender,
                          seed=seats.seed, temperature=seats.temperature, replay_openings=replay_openings,
                          model=seats.default_model)
    challenger_at = challenger_seats(scenario, setting, side)
    players = ["Player 1", "Player 2", "Player 3"]
    specs = {p: (challenger if p in challenger_at else defender) for p in players}
    rt = MagicRuntime(scenario=scenario, setting=setting, agents={}, challenger_seats=challenger_at, side=side,
                      replay_openings=replay_openings)
    system = rt.system()
    for p, spec in specs.items():
        persona = Persona(name=p, title=f"MAgIC {scenario}", role=rt.roles()[p], players=players, system=system)
        rt.agents[p] = seats.agent(persona, spec, GAMES[scenario])
    rec = cfg.record()
    config = {**{k: rec.pop(k) for k in ("scenario", "setting_id", "side", "challenger", "defender")},
              "seats": specs, **rec}

    def result(state: dict, *, llm: dict, wall_time_s: float) -> dict:
        return {"scenario": scenario, "setting_id": setting.id, "side": side, "challenger": challenger,
                "defender": defender, "seats": specs, "challenger_seats": challenger_at, "outcome": state["outcome"],
                "llm": llm, "wall_time_s": round(wall_time_s, 3),
                "invalid_actions": rt.stats["invalid_actions"], "model_actions": rt.stats["model_actions"]}

    return Table(graph=build_graph(rt), start={"events": [], "moves": []}, step_bound=300, config=config,
                 result=result, transcript=transcript)


def transcript(result: dict, events: list[dict]) -> str:
    """Markdown: public events in order, then private answers (self-awareness, beliefs, votes, moves).
    A player's own words (a clue with its text, its reasoning) are one quoted line, and every
    content has raw HTML escaped (:func:`mas_agents.utterance.markdown`, issue 57 E1 and E18)."""
    lines = [f"# MAgIC {result['scenario']} setting {result['setting_id']} (challenger side: {result['side']})", "",
             "Seats: " + ", ".join(f"{p} ({s})" for p, s in result["seats"].items()), ""]
    for e in events:
        if "*" in (e.get("visible_to") or []):
            lines.append(f"- **{e['actor']}** [{e['kind']}]: {_said(e)}")
    lines += ["", "## Private", ""]
    for e in events:
        if "*" not in (e.get("visible_to") or []) and e["kind"] not in ("setup",):
            lines.append(f"- {e['actor']} [{e['kind']}] r{e['round']}: {_said(e)}")
    return "\n".join(lines) + "\n"


def load(params: dict[str, Any], *, data_root: Path | None = None, seed: int = 0) -> dict[str, Any]:
    """The game's parameters with a ``setting`` given by its id (``--set setting=0``) loaded from
    the MAgIC data of its ``scenario`` (:func:`mas_agents.graphs.magic.dataset.load_setting`;
    :attr:`mas_agents.game.contract.GameDef.load`). ``seed``: not used (nothing is drawn).

    Raises:
        ValueError: a setting id without a ``scenario``, an unknown scenario, a bad id;
        FileNotFoundError: no such setting file; DataError: no datasets root.
    """
    from mas_agents.game.data import resolve_data_dir
    from mas_agents.graphs.magic.dataset import load_setting, scenario_name
    params = dict(params)
    if isinstance(params.get("scenario"), str):
        params["scenario"] = scenario_name(params["scenario"])    # ValueError: names the scenarios
    sid = params.get("setting")
    if isinstance(sid, str) and sid.strip().isdigit():
        sid = int(sid)
    if isinstance(sid, int) and not isinstance(sid, bool):
        if not isinstance(params.get("scenario"), str):
            raise ValueError(f"setting {sid}: give its scenario too (scenario=NAME, one of {', '.join(GAMES)})")
        params["setting"] = load_setting(resolve_data_dir(data_root), params["scenario"], sid)
    elif sid is not None and not hasattr(sid, "id"):
        raise ValueError(f"setting {sid!r}: expected a setting id, e.g. setting=0")
    return params


def _said(e: dict) -> str:
    """An event's content for the transcript: quoted when it is a player's own words."""
    own = e["kind"] == "reasoning" or (e["kind"] == "clue" and (e.get("data") or {}).get("text", e["content"]))
    return markdown(quote(e["content"]) if own else e["content"])


def graph_builder(variant: str | None = None) -> Any:
    """MAgIC's uncompiled ``StateGraph`` of one scenario (``"chameleon"``...) or graph kind
    (``"deduction"``, ``"cost_sharing"``, ``"repeated"``), for :func:`mas_agents.api.builder`
    (:func:`mas_agents.graphs.magic.graph.builder`).

    Raises:
        ValueError: no variant (MAgIC has one graph per kind of scenario), or an unknown one.
    """
    from mas_agents.graphs.magic.graph import builder, graph_kind
    if variant is None:
        raise ValueError("builder('magic', variant): name the scenario, e.g. 'chameleon'")
    return builder(variant if variant in ("deduction", "cost_sharing", "repeated") else graph_kind(variant))


GAME_DEF = register(GameDef(kind="magic", title="MAgIC", info=GAMES, setup=setup,
                            headline=magic_view.headline, seat_specs=magic_view.seat_specs, view=magic_view.VIEW,
                            conformance=magic_checks.CONFORMANCE, load=load, builder=graph_builder))
