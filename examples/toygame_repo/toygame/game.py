"""The p-beauty contest's registration: its :class:`mas_agents.game.contract.GameDef` (kind ``beauty_contest``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from mas_agents.game.conformance import Conformance, need, problems
from mas_agents.game.contract import GameDef, Table, register
from mas_agents.agents import Persona
from toygame import rules
from toygame.graph import Runtime_, build_graph


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


def walk(config: dict, events: list[dict], result: dict) -> None:
    """The contest's rules on one game's log: each round every player guesses in seat order, sealed
    (visible to the game only), a whole number in 0..MAX_GUESS or an unreadable reply (an
    ``invalid`` event, no guess); then the round's result: the guesses, the target
    (:func:`rules.target`) and the winners (:func:`rules.winners`); ``result.json`` names the
    seats and counts the rounds and invalid actions.

    Raises:
        mas_agents.game.conformance.Violation: a rule the log breaks.
    """
    names = list(result["players"])
    need(list(result["players"].values()) == config["agents"] and result["rounds"] == config["rounds"], result)
    i = 0
    for rnd in range(1, config["rounds"] + 1):
        guesses = {}
        for p in names:
            e = events[i]
            i += 1
            need(e["actor"] == p and e["round"] == rnd and e["visible_to"] == ["game"], e)
            if e["kind"] == "guess":
                g = e["data"]["guess"]
                need(isinstance(g, int) and 0 <= g <= rules.MAX_GUESS and e["content"] == str(g), e)
                guesses[p] = g
            else:
                need(e["kind"] == "invalid" and e["data"]["action"] == "contribute", e)
        e = events[i]
        i += 1
        t = rules.target(guesses)
        need(e["kind"] == "round_result" and e["round"] == rnd and e["data"]["guesses"] == guesses, e)
        need(e["data"]["target"] == [t.numerator, t.denominator] and e["data"]["winners"] == rules.winners(guesses), e)
    need(i == len(events), events[i:])
    need(result["invalid_actions"] == sum(1 for e in events if e["kind"] == "invalid"), result)


def rescore(config: dict, events: list[dict], result: dict) -> dict:
    """``{field: (recomputed, stored)}``: each player's wins and the rounds played, from the
    guesses of the log alone."""
    wins = {n: 0 for n in result["players"]}
    rounds = sorted({e["round"] for e in events if e["kind"] == "round_result"})
    for rnd in rounds:
        for w in rules.winners({e["actor"]: e["data"]["guess"] for e in events if e["kind"] == "guess" and e["round"] == rnd}):
            wins[w] += 1
    return {"wins": (wins, result["wins"]), "rounds": (len(rounds), result["rounds"])}


GAME_DEF = register(GameDef(kind="beauty_contest", title="p-beauty contest", info=rules.GAME, setup=setup,
                            headline=headline, seat_specs=lambda config: list(config.get("agents") or []),
                            conformance=Conformance(checks=lambda c, e, r: problems(walk, c, e, r), rescore=rescore)))
