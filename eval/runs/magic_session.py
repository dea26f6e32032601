"""Play one MAgIC game into a directory: ``config.json``, ``events.jsonl``, ``llm_calls.jsonl``,
``result.json`` (outcome, seats, cost) and ``transcript.md``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphs.magic.graph import MagicRuntime, build_graph
from graphs.magic.rules import GAMES
from mas_agents.accounting import CallRecorder, clear_call_log
from mas_agents.events import follow_events
from mas_agents.llm import spec_text
from mas_agents.remote import endpoint_report
from mas_agents.rundir import Stopwatch, marks_run, versions, write_json

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


@marks_run
def play_magic_game(out: Path, *, scenario: str, setting: Any, side: str, challenger: str, defender: str,
                    model: Any = "local", seed: int = 0, replay_openings: bool = False,
                    temperature: float | None = None) -> dict:
    """Play one game; the challenger spec plays :func:`challenger_seats`, the defender the rest.

    Args:
        challenger, defender: agent specs ``BLOCKS[@MODEL]``.
        model: default model spec (or a chat model object in tests).
        temperature: sampling temperature of every seat's model built from a spec string
            (:class:`mas_agents.llm.ModelPool`); None keeps the model's default.

    Returns:
        ``result.json``: ``{"scenario", "setting_id", "side", "challenger", "defender", "seats",
        "outcome", "llm", "wall_time_s", "invalid_actions", "model_actions"}``.
    """
    from mas_agents.agent import Agent, Persona
    from mas_agents.llm import ModelPool
    from mas_agents.specs import build_blocks, split_model

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    clear_call_log(out / "llm_calls.jsonl")   # a replayed game starts its call and prompt logs afresh
    recorder = CallRecorder(out / "llm_calls.jsonl")
    seats = challenger_seats(scenario, setting, side)
    players = ["Player 1", "Player 2", "Player 3"]
    specs = {p: (challenger if p in seats else defender) for p in players}
    rt = MagicRuntime(scenario=scenario, setting=setting, agents={}, challenger_seats=seats, side=side,
                      replay_openings=replay_openings)
    system = rt.system()
    pool = ModelPool(recorder, seed, temperature=temperature)
    for p, spec in specs.items():
        blocks, mspec = split_model(spec)
        rt.agents[p] = Agent(persona=Persona(name=p, title=f"MAgIC {scenario}", role=rt.roles()[p], players=players,
                                             system=system),
                             model=pool.get(mspec or model), memory=None, blocks=build_blocks(blocks), spec=blocks,
                             game=GAMES[scenario])
    write_json(out / "config.json", {"kind": "magic", "scenario": scenario, "setting_id": setting.id, "side": side,
                                     "challenger": challenger, "defender": defender, "seats": specs,
                                     "model": spec_text(model), "seed": seed, "temperature": temperature,
                                     "replay_openings": replay_openings, "endpoints": endpoint_report(pool.models()),
                                     "record_prompts": recorder.records_prompts,
                                     "versions": versions()})
    clock = Stopwatch()
    # streamed, not invoked, so events.jsonl grows as the game goes (watched live by mas serve)
    state = follow_events(out / "events.jsonl", build_graph(rt).stream(
        {"events": [], "moves": []}, {"recursion_limit": 300}, stream_mode="values"))
    events = state["events"]
    result = {"scenario": scenario, "setting_id": setting.id, "side": side, "challenger": challenger,
              "defender": defender, "seats": specs, "challenger_seats": seats, "outcome": state["outcome"],
              "llm": recorder.totals(), "wall_time_s": round(clock.seconds, 3),
              "invalid_actions": rt.stats["invalid_actions"], "model_actions": rt.stats["model_actions"]}
    write_json(out / "result.json", result)
    (out / "transcript.md").write_text(transcript(result, events), encoding="utf-8")
    recorder.close()    # the prompt log -> llm_prompts.jsonl.gz
    return result


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
