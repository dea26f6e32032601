"""Run one murder-mystery game into a run directory, resumably.

Writes (README, "What a run writes"): ``config.json``, ``events.jsonl`` (rewritten after every
graph step, so an interrupted game keeps what it did), ``llm_calls.jsonl`` and the prompt log
``llm_prompts.jsonl`` (by the recorder; compressed into ``llm_prompts.jsonl.gz`` when the game ends),
``checkpoints.sqlite`` (LangGraph ``SqliteSaver``; ``resume=True`` continues from it),
``result.json`` and ``transcript.md``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Callable

from mas_agents.eval.games import GameDef, Table, register
from mas_agents.eval.runs import mmg_checks, mmg_view
from mas_agents.eval.runs.seats import Seats
from mas_agents.graphs.mmg.graph import MMGRuntime, build_graph
from mas_agents.graphs.mmg.rules import GAME
from mas_agents.accounting import CallRecorder
from mas_agents.agent import Agent


def play_script(sc: Any, out: Path, *, agent: str = "plain", model: Any = "local", rounds: int = 3,
                questions: int = 1, seed: int = 0, lang: str = "en", resume: bool = False, settings=None,
                data_root: Path | None = None,
                progress: Callable[[int, int, str], None] | None = None, human: str | None = None) -> dict:
    """Build the agents for a loaded WellPlay script and play (or resume) one game into ``out``
    (through the one runner, :func:`mas_agents.eval.runs.session.run`, as the registered game ``mmg``).

    This is what ``mas mmg run`` and ``mas wellplay compare`` call.

    Args:
        sc: a loaded :class:`mas_agents.eval.datasets.wellplay.Script`.
        out: run directory.
        agent: agent spec of the non-murderer characters (the murderer plays
            :data:`mas_agents.graphs.mmg.rules.MURDERER_SPEC`).
        model: model spec or chat model object.
        rounds, questions, seed, lang: game options (recorded in ``config.json``).
        resume: continue the game in ``out``.
        settings: :class:`memory.MemorySettings` (retrieval budgets).
        data_root: recorded in ``config.json``.
        progress: ``progress(done_steps, step_bound, node_names)`` after each graph step.
        human: a character played by a person instead of its agent, through ``out/human/``
            (:class:`mas_agents.eval.runs.human.HumanCharacter`; ``mas serve`` shows the seat).

    Returns:
        The game's ``result.json`` content.

    Raises:
        ValueError: unknown agent spec, or ``human`` is not a character of the script.
        FileExistsError / FileNotFoundError: see :func:`run_game`.
    """
    from mas_agents.eval.runs.session import run
    return run("mmg", out, model=model, seed=seed, resume=resume, progress=progress, script=sc, agent=agent,
               rounds=rounds, questions=questions, lang=lang, settings=settings, data_root=data_root, human=human)


def setup(seats: Seats, *, out: Path, script: Any, agent: str = "plain", rounds: int = 3, questions: int = 1,
          lang: str = "en", settings=None, data_root: Path | None = None, human: str | None = None) -> Table:
    """The murder-mystery table of :func:`play_script`'s arguments (:attr:`mas_agents.eval.games.GameDef.setup`).

    Raises:
        ValueError: unknown agent spec, or ``human`` is not a character of the script.
    """
    from mas_agents.graphs.mmg.players import build_mmg_agents
    from mas_agents.graphs.mmg.rules import MURDERER_SPEC
    from mas_agents.specs import parse_spec
    from mas_agents.memory import MemorySettings, default_embedder

    sc = script
    parse_spec(agent)
    check_human(sc, human)
    settings = settings or MemorySettings()
    agents = build_mmg_agents(sc, agent, seats, default_embedder(), settings)
    if human is not None:   # a person plays this character (eval/runs/human.py)
        from mas_agents.eval.runs.human import HumanCharacter
        agents[human] = HumanCharacter(agents[human].persona, seats.human_dir)
    record_seats(seats, agents)
    rt = MMGRuntime(title=sc.name, players=[c.name for c in sc.characters], victims=sc.victims,
                    murderers={v: sc.murderers_of(v) for v in sc.victims}, agents=agents,
                    rounds=rounds, questions=questions)
    config = {"script": sc.name, "script_id": sc.id, "lang": lang, "agent": agent,
              "murderer_agent": MURDERER_SPEC, "seed": seats.seed, "rounds": rounds, "questions": questions, "settings": vars(settings),
              "data_dir": str(data_root) if data_root else None, **({"human": human} if human else {})}
    table = runtime_table(rt, config)
    if human is not None:   # the person sees the accusation and the truth too
        from mas_agents.events import read_events
        table.finished = lambda events: agents[human].observe(read_events(Path(out) / "events.jsonl"))
    return table


def record_seats(seats: Seats, agents: dict[str, Any]) -> None:
    """Record every character's model in ``seats`` (``config.json``'s ``seat_models``): the run's
    one model (the agent specs of a murder mystery name no model, :func:`setup`), or ``human``
    for a character a person plays."""
    from mas_agents.eval.runs.human import HUMAN, HumanCharacter
    for name, a in agents.items():
        seats.seat(name, HUMAN if isinstance(a, HumanCharacter) else "plain")


def runtime_table(rt: MMGRuntime, config: dict[str, Any]) -> Table:
    """The :class:`mas_agents.eval.games.Table` of a murder mystery whose runtime (agents included) is built."""
    def result(values: dict, *, llm: dict, wall_time_s: float) -> dict:
        return game_result(rt, values, llm, wall_time_s, config)

    return Table(graph=build_graph(rt), start={"events": []}, step_bound=rt.step_bound(), config=config,
                 result=result, transcript=lambda result_, events: transcript(rt, events, result_))


def check_human(sc: Any, human: str | None) -> None:
    """Raise ``ValueError`` (naming the characters) unless ``human`` is None or a character of
    the loaded script ``sc``; checked before anything is written or loaded."""
    names = [c.name for c in sc.characters]
    if human is not None and human not in names:
        raise ValueError(f"--human {human!r} is not a character of {sc.name}: {', '.join(names)}")


def run_game(rt: MMGRuntime, out: Path, recorder: CallRecorder, config: dict[str, Any], *,
             resume: bool = False, progress: Callable[[int, int, str], None] | None = None) -> dict:
    """Play (or resume) the game of an already built runtime ``rt`` into ``out`` (the runner,
    :func:`mas_agents.eval.runs.session.run`, with ``config``'s fields in ``config.json``).

    Args:
        rt: the runtime with agents.
        out: run directory (created).
        recorder: the LLM call recorder writing ``out/llm_calls.jsonl``.
        config: the game's fields of ``config.json`` (seed, model, options).
        resume: continue from ``out/checkpoints.sqlite``.
        progress: called as ``progress(done_steps, bound, node_name)`` after each step.

    Returns:
        The ``result.json`` content.

    Raises:
        FileExistsError: ``out`` already holds a game and ``resume`` is False.
        FileNotFoundError: ``resume`` is True but ``out`` holds no checkpoint.
    """
    from dataclasses import replace
    from mas_agents.eval.runs.session import run
    fields = {k: v for k, v in config.items()
              if k not in ("kind", "endpoints", "record_prompts", "versions", "models", "seat_models", "default_model")}
    def prebuilt(seats: Seats, out: Path) -> Table:
        record_seats(seats, rt.agents)   # the given model (config's "model") plays every agent
        return runtime_table(rt, fields)

    game = replace(GAME_DEF, setup=prebuilt)
    return run(game, out, resume=resume, progress=progress, recorder=recorder,
               model=config.get("model", "local"), seed=config.get("seed", 0))


def agent_stats(agents: dict[str, Agent], values: dict | None = None) -> dict[str, dict[str, int]]:
    """Malformed/invalid reply counters per agent: from the game's checkpointed state
    (``values["agent_stats"]``, every finished step of the game, before and after a resume)
    when given, else from the agents of this process."""
    if values is not None:
        counted = values.get("agent_stats") or {}
        return {n: dict(counted.get(n, {})) for n in agents}
    return {n: dict(a.stats) for n, a in agents.items()}


def game_result(rt: MMGRuntime, values: dict, llm: dict, wall_s: float, config: dict) -> dict:
    """Assemble ``result.json``: outcome per victim, counts, LLM cost, malformed-output counts.

    ``wall_time_s`` is the time of this process's run (a resumed game adds only its own part);
    ``llm`` is the recorder's totals, which count every call in ``llm_calls.jsonl``;
    ``malformed_replies`` from the checkpointed ``agent_stats`` (every finished step, across a
    resume; see :func:`agent_stats`).
    """
    events = values.get("events", [])
    invalid = [e for e in events if e["kind"] == "invalid"]
    return {
        "script": rt.title,
        "players": rt.players,
        "agents": {n: a.spec for n, a in rt.agents.items()},
        "roles": {n: a.persona.role for n, a in rt.agents.items()},
        "rounds": rt.rounds,
        "questions": rt.questions,
        "outcome": values.get("outcome"),
        "finished": values.get("outcome") is not None,
        "counts": {k: sum(1 for e in events if e["kind"] == k) for k in ("introduce", "ask", "answer", "vote")},
        "invalid_actions": len(invalid),
        "invalid_by_kind": dict(Counter(e["data"].get("action", e["kind"]) for e in invalid)),
        "malformed_replies": agent_stats(rt.agents, values),
        "llm": llm,
        "wall_time_s": wall_s,
        "model": config.get("model"),
        "seed": config.get("seed"),
    }


def transcript(rt: MMGRuntime, events: list[dict], result: dict) -> str:
    """A readable Markdown transcript: introductions, rounds of Q&A, votes, outcome, cost."""
    lines = [f"# {rt.title}: murder-mystery game", "",
             f"Players: {', '.join(f'{p} ({rt.agents[p].persona.role}, {rt.agents[p].spec})' for p in rt.players)}  ",
             f"Victim(s): {', '.join(rt.victims)}  ", f"Model: {result.get('model')}, seed {result.get('seed')}", ""]
    section = None
    for e in events:
        head = {"introduction": "## Introductions", "voting": "## Votes (private)", "outcome": "## Outcome"}.get(e["phase"])
        if e["phase"] == "questioning" or (e["phase"] == "planning" and e.get("round", 0) > 0):
            head = f"## Round {e['round']}"
        if head and head != section:
            lines += [head, ""]
            section = head
        k = e["kind"]
        if k == "introduce":
            lines.append(f"**{e['actor']}**: {e['content']}\n")
        elif k == "ask":
            lines.append(f"**{e['actor']}** asks **{e['data'].get('target')}**: {e['content']}\n")
        elif k == "answer":
            lines.append(f"**{e['actor']}** answers: {e['content']}\n")
        elif k == "vote":
            lines.append(f"- {e['actor']} {e['content']}")
        elif k == "invalid":
            raw = (e["data"].get("raw") or "").strip().replace("\n", " ")[:300]
            lines.append(f"- *{e['actor']}: invalid {e['data'].get('action', '')} "
                         f"({'; '.join(e['data'].get('errors', []))}). Raw reply: \"{raw}\"*\n")
        elif e["phase"] == "planning":
            lines.append(f"- *{e['actor']} (private {k}): {e['content']}*")
        elif k == "accuse":
            lines += ["", f"**{e['content']}**", ""]
    llm = result["llm"]
    lines += ["## Cost", "",
              f"LLM calls: {llm.get('calls')}, prompt tokens: {llm.get('input_tokens')}, "
              f"completion tokens: {llm.get('output_tokens')}, wall time: {result['wall_time_s']:.1f} s, "
              f"invalid actions: {result['invalid_actions']}", ""]
    if (llm.get("prompt_cost") or {}).get("calls"):   # what a prefix cache reused, and could have
        from mas_agents.eval.metrics.cost import cost_line
        lines += [f"Prompt cost: {cost_line(llm['prompt_cost'])}.", ""]
    return "\n".join(lines)


GAME_DEF = register(GameDef(kind="mmg", title="Murder mystery", info=GAME, setup=setup, checkpoint=True,
                            headline=mmg_view.headline, seat_specs=mmg_view.seat_specs, view=mmg_view.VIEW,
                            conformance=mmg_checks.CONFORMANCE))
