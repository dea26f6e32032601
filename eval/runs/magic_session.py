"""Play one MAgIC game into a directory: ``config.json``, ``events.jsonl``, ``llm_calls.jsonl``,
``result.json`` (outcome, seats, cost) and ``transcript.md``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mas_agents.eval.games import GameDef, Table, register
from mas_agents.eval.runs import magic_checks, magic_view
from mas_agents.eval.runs.seats import Seats
from mas_agents.graphs.magic.graph import MagicRuntime, build_graph
from mas_agents.graphs.magic.rules import GAMES

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


def play_magic_game(out: Path, *, scenario: str, setting: Any, side: str, challenger: str, defender: str,
                    model: Any = "local", seed: int = 0, replay_openings: bool = False,
                    temperature: float | None = None) -> dict:
    """Play one game; the challenger spec plays :func:`challenger_seats`, the defender the rest
    (through the one runner, :func:`mas_agents.eval.runs.session.run`, as the registered game ``magic``).

    Args:
        challenger, defender: agent specs ``BLOCKS[@MODEL]``.
        model: default model spec (or a chat model object in tests).
        temperature: sampling temperature of every seat's model built from a spec string
            (:class:`mas_agents.llm.ModelPool`); None keeps the model's default.

    Returns:
        ``result.json``: ``{"scenario", "setting_id", "side", "challenger", "defender", "seats",
        "outcome", "llm", "wall_time_s", "invalid_actions", "model_actions"}``.

    Raises:
        ValueError: a side the scenario does not have; an unknown block in a spec.
    """
    from mas_agents.eval.runs.session import run
    return run("magic", out, model=model, seed=seed, temperature=temperature, scenario=scenario, setting=setting,
               side=side, challenger=challenger, defender=defender, replay_openings=replay_openings)


def setup(seats: Seats, *, out: Path, scenario: str, setting: Any, side: str, challenger: str, defender: str,
          replay_openings: bool = False) -> Table:
    """The MAgIC table of :func:`play_magic_game`'s arguments (:attr:`mas_agents.eval.games.GameDef.setup`)."""
    from mas_agents.agent import Persona

    challenger_at = challenger_seats(scenario, setting, side)
    players = ["Player 1", "Player 2", "Player 3"]
    specs = {p: (challenger if p in challenger_at else defender) for p in players}
    rt = MagicRuntime(scenario=scenario, setting=setting, agents={}, challenger_seats=challenger_at, side=side,
                      replay_openings=replay_openings)
    system = rt.system()
    for p, spec in specs.items():
        persona = Persona(name=p, title=f"MAgIC {scenario}", role=rt.roles()[p], players=players, system=system)
        rt.agents[p] = seats.agent(persona, spec, GAMES[scenario])
    config = {"scenario": scenario, "setting_id": setting.id, "side": side, "challenger": challenger,
              "defender": defender, "seats": specs, "seed": seats.seed,
              "temperature": seats.temperature, "replay_openings": replay_openings}

    def result(state: dict, *, llm: dict, wall_time_s: float) -> dict:
        return {"scenario": scenario, "setting_id": setting.id, "side": side, "challenger": challenger,
                "defender": defender, "seats": specs, "challenger_seats": challenger_at, "outcome": state["outcome"],
                "llm": llm, "wall_time_s": round(wall_time_s, 3),
                "invalid_actions": rt.stats["invalid_actions"], "model_actions": rt.stats["model_actions"]}

    return Table(graph=build_graph(rt), start={"events": [], "moves": []}, step_bound=300, config=config,
                 result=result, transcript=transcript)


def transcript(result: dict, events: list[dict]) -> str:
    """Markdown: public events in order, then private answers (self-awareness, beliefs, votes, moves)."""
    lines = [f"# MAgIC {result['scenario']} setting {result['setting_id']} (challenger side: {result['side']})", "",
             "Seats: " + ", ".join(f"{p} ({s})" for p, s in result["seats"].items()), ""]
    for e in events:
        if "*" in (e.get("visible_to") or []):
            lines.append(f"- **{e['actor']}** [{e['kind']}]: {e['content']}")
    lines += ["", "## Private", ""]
    for e in events:
        if "*" not in (e.get("visible_to") or []) and e["kind"] not in ("setup",):
            lines.append(f"- {e['actor']} [{e['kind']}] r{e['round']}: {e['content']}")
    return "\n".join(lines) + "\n"


GAME_DEF = register(GameDef(kind="magic", title="MAgIC", info=GAMES, setup=setup,
                            headline=magic_view.headline, seat_specs=magic_view.seat_specs, view=magic_view.VIEW,
                            conformance=magic_checks.CONFORMANCE))
