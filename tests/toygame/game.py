"""The p-beauty contest's registration: its :class:`eval.games.GameDef` (kind ``beauty_contest``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from eval.games import GameDef, Table, register
from mas_agents.agent import Persona
from tests.toygame import rules
from tests.toygame.graph import Runtime_, build_graph


def setup(seats, *, out: Path, agents: list[str], rounds: int = 1) -> Table:
    """One seat per agent spec (``Player 1..N``), ``rounds`` sealed-guess rounds.

    Raises:
        ValueError: fewer than 2 players or rounds < 1.
    """
    if len(agents) < 2 or rounds < 1:
        raise ValueError(f"beauty_contest: need 2+ players and 1+ rounds, got {len(agents)} and {rounds}")
    names = [f"Player {i + 1}" for i in range(len(agents))]
    rt = Runtime_(players=names, agents={}, rounds=rounds)
    for name, spec in zip(names, agents):
        persona = Persona(name=name, title="p-beauty contest", role="player", players=names,
                          system="You are playing a number-guessing game against the other players.")
        rt.agents[name] = seats.agent(persona, spec, rules.GAME)

    def result(state: dict, *, llm: dict, wall_time_s: float) -> dict:
        won = Counter(w for e in state["events"] if e["kind"] == "round_result" for w in e["data"]["winners"])
        return {"players": dict(zip(names, agents)), "rounds": state["round"], "wins": {n: won[n] for n in names},
                "invalid_actions": rt.stats["invalid_actions"], "llm": llm, "wall_time_s": round(wall_time_s, 3)}

    def transcript(res: dict, events: list) -> str:
        lines = ["# p-beauty contest", ""]
        lines += [f"- round {e['round']}, {e['actor']}: {e['content']}" for e in events]
        return "\n".join(lines) + "\n"

    return Table(graph=build_graph(rt), start={"events": [], "round": 0}, step_bound=rounds + 5,
                 config={"agents": agents, "rounds": rounds}, result=result, transcript=transcript)


def headline(config: dict, result: dict) -> str:
    """The runs list's line: each player's wins, or "playing"."""
    if not result:
        return "playing"
    return "wins: " + ", ".join(f"{n} {w}" for n, w in result["wins"].items())


GAME_DEF = register(GameDef(kind="beauty_contest", title="p-beauty contest", info=rules.GAME, setup=setup,
                            headline=headline, seat_specs=lambda config: list(config.get("agents") or [])))
