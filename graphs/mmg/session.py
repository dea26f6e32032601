"""Run one murder-mystery game into a run directory, resumably.

Writes (docs/reference/run-files.md): ``config.json``, ``events.jsonl`` (rewritten after every
graph step, so an interrupted game keeps what it did), ``llm_calls.jsonl`` and the prompt log
``llm_prompts.jsonl`` (by the recorder; compressed into ``llm_prompts.jsonl.gz`` when the game ends),
``checkpoints.sqlite`` (LangGraph ``SqliteSaver``; ``resume=True`` continues from it),
``result.json`` and ``transcript.md``. A game is configured by one :class:`MmgConfig` (issue 51 item 5).

Every import is at module level (this module builds the game's graph: langgraph and the memory's
faiss load with it anyway).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from mas_agents.graphs.mmg.dataset import Script, load_script
from mas_agents.game.contract import GameDef, Table, register, single_graph
from mas_agents.game.cost import cost_line
from mas_agents.graphs.mmg import checks as mmg_checks
from mas_agents.graphs.mmg import view as mmg_view
from mas_agents.game.human import HUMAN
from mas_agents.graphs.mmg.human import HumanCharacter
from mas_agents.game.run_config import NOT_RECORDED, RunConfig, ordered
from mas_agents.game.seats import Seats
from mas_agents.game.runner import run
from mas_agents.events import read_events
from mas_agents.graphs.mmg.graph import MMGRuntime, build_graph, builder as graph_of
from mas_agents.graphs.mmg.players import build_mmg_agents
from mas_agents.graphs.mmg.rules import GAME, MURDERER_SPEC
from mas_agents.call_log import CallRecorder
from mas_agents.agents import Agent
from mas_agents.memory import MemorySettings, default_embedder
from mas_agents.specs import parse_spec
from mas_agents.utterance import fold, markdown, quote
from mas_agents.rundir import RunDir


#: The order of config.json's first keys (as written before the typed configuration).
CONFIG_ORDER = ("kind", "script", "script_id", "lang", "agent", "murderer_agent", "seed", "rounds", "questions",
                "settings", "data_dir")

@dataclasses.dataclass(frozen=True, kw_only=True)
class MmgConfig(RunConfig):
    """The configuration of one murder-mystery game (``mas mmg run``, :func:`play_script`).

    Recorded in ``config.json`` (by :func:`setup`, through the runner
    :func:`mas_agents.game.runner.run`) under these names: ``script`` (the display name),
    ``lang``, ``agent``, ``seed``, ``rounds``, ``questions``, ``settings`` (the memory budgets as a
    dict), ``data_dir`` and ``human`` (only when a person plays); :func:`setup` adds ``script_id``
    and ``murderer_agent``, the runner ``kind``, the model fields and ``versions``.

    Attributes:
        script: a loaded :class:`mas_agents.graphs.mmg.dataset.Script`, or its name or id (then
            loaded from ``data_dir`` when the game is played); recorded by display name.
        lang: ``en`` or ``zh``.
        agent: agent spec of the non-murderer characters (the murderer plays
            :data:`mas_agents.graphs.mmg.rules.MURDERER_SPEC`).
        seed: the game's seed. rounds, questions: open questioning rounds and questions per player
            per round (PLAYER* §4.1).
        settings: :class:`mas_agents.memory.MemorySettings` (retrieval budgets; None = the defaults;
            a dict read back from ``config.json`` is rebuilt into one).
        data_dir: datasets root (recorded; needed when ``script`` is a name).
        human: a character played by a person instead of its agent, through ``out/human/``
            (:class:`mas_agents.graphs.mmg.human.HumanCharacter`; ``mas serve`` shows the seat).
        out: the run directory (not recorded). model: model spec or chat model object (not
            recorded as given: ``config.json``'s model fields say which model each seat ran).
    """

    KIND = "mmg"

    script: Any
    lang: str = "en"
    agent: str = "plain"
    seed: int = 0
    rounds: int = 3
    questions: int = 1
    settings: Any = None
    data_dir: Optional[Path] = None
    human: Optional[str] = None
    out: Path = dataclasses.field(metadata=NOT_RECORDED)
    model: Any = dataclasses.field(default="local", metadata=NOT_RECORDED)

    def __post_init__(self) -> None:
        s = self.settings
        object.__setattr__(self, "settings", MemorySettings.from_record(dict(s)) if isinstance(s, Mapping) else s or MemorySettings())

    def record(self) -> dict[str, Any]:
        """:meth:`RunConfig.record` with the script's display name, ``settings`` as its fields and
        no ``human`` when no person plays (``config.json`` as the game has always written it)."""
        rec = {**super().record(), "script": self.script_name, "settings": dict(vars(self.settings))}
        if rec["human"] is None:
            del rec["human"]
        return rec

    @property
    def script_name(self) -> str:
        """The script's display name (or the name or id given, before it is loaded)."""
        return self.script if isinstance(self.script, str) else self.script.name

    def loaded_script(self) -> Script:
        """:attr:`script` loaded (from :attr:`data_dir` when a name was given).

        Raises:
            ValueError: a name without ``data_dir``. DataError: an unknown script (names it).
        """
        if not isinstance(self.script, str):
            return self.script
        if self.data_dir is None:
            raise ValueError(f"MmgConfig: script {self.script!r} is a name; give data_dir to load it")
        return load_script(self.data_dir, self.script, self.lang)


def play_script(cfg: MmgConfig, *, resume: bool = False,
                progress: Callable[[int, int, str], None] | None = None) -> dict:
    """Build the agents for ``cfg``'s WellPlay script and play (or resume) one game into
    ``cfg.out`` (through the one runner, :func:`mas_agents.game.runner.run`, as the
    registered game ``mmg``).

    This is what ``mas mmg run`` and ``mas wellplay compare`` call.

    Args:
        cfg: the game (:class:`MmgConfig`).
        resume: continue the game in ``cfg.out``.
        progress: ``progress(done_steps, step_bound, node_names)`` after each graph step.

    Returns:
        The game's ``result.json`` content.

    Raises:
        ValueError: unknown agent spec, or ``human`` is not a character of the script.
        FileExistsError / FileNotFoundError: see :func:`run_game`.
    """
    return run("mmg", cfg.out, model=cfg.model, seed=cfg.seed, resume=resume, progress=progress,
               script=cfg.loaded_script(), agent=cfg.agent, rounds=cfg.rounds, questions=cfg.questions,
               lang=cfg.lang, settings=cfg.settings, data_root=cfg.data_dir, human=cfg.human)


def setup(seats: Seats, *, out: Path, script: Any, agent: str = "plain", rounds: int = 3, questions: int = 1,
          lang: str = "en", settings=None, data_root: Path | None = None, human: str | None = None) -> Table:
    """The murder-mystery table of the game's parameters (:attr:`mas_agents.game.contract.GameDef.setup`).

    Its keyword parameters are the game's parameters, one each, as every game's set-up declares
    them (:attr:`mas_agents.game.contract.GameDef.params`: ``mas game play`` and ``mas rerun`` read
    them by name); they are gathered into one :class:`MmgConfig`, whose record is ``config.json``.

    Raises:
        ValueError: unknown agent spec, or ``human`` is not a character of the script.
    """
    cfg = MmgConfig(out=out, script=script, agent=agent, rounds=rounds, questions=questions, lang=lang,
                    settings=settings, data_dir=data_root, human=human, seed=seats.seed)
    sc = script
    parse_spec(agent)
    check_human(sc, human)
    agents = build_mmg_agents(sc, agent, seats, default_embedder(), cfg.settings)
    if human is not None:   # a person plays this character (mas_agents/game/human.py)
        agents[human] = HumanCharacter(agents[human].persona, seats.human_dir)
    record_seats(seats, agents)
    rt = MMGRuntime(title=sc.name, players=[c.name for c in sc.characters], victims=sc.victims,
                    murderers={v: sc.murderers_of(v) for v in sc.victims}, agents=agents,
                    rounds=rounds, questions=questions)
    config = ordered({**cfg.record(), "script_id": sc.id, "murderer_agent": MURDERER_SPEC}, CONFIG_ORDER)
    table = runtime_table(rt, config)
    if human is not None:   # the person sees the accusation and the truth too
        table.finished = lambda events: agents[human].observe(read_events(RunDir(out).events))
    return table


def record_seats(seats: Seats, agents: dict[str, Any]) -> None:
    """Record every character's model in ``seats`` (``config.json``'s ``seat_models``): the run's
    one model (the agent specs of a murder mystery name no model, :func:`setup`), or ``human``
    for a character a person plays."""
    for name, a in agents.items():
        seats.seat(name, HUMAN if isinstance(a, HumanCharacter) else "plain")


def runtime_table(rt: MMGRuntime, config: dict[str, Any]) -> Table:
    """The :class:`mas_agents.game.contract.Table` of a murder mystery whose runtime (agents included) is built."""
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
    :func:`mas_agents.game.runner.run`, with ``config``'s fields in ``config.json``).

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
    fields = {k: v for k, v in config.items()
              if k not in ("kind", "endpoints", "record_prompts", "versions", "models", "seat_models", "default_model")}
    def prebuilt(seats: Seats, out: Path) -> Table:
        record_seats(seats, rt.agents)   # the given model (config's "model") plays every agent
        return runtime_table(rt, fields)

    game = dataclasses.replace(GAME_DEF, setup=prebuilt)
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
    """A readable Markdown transcript: introductions, rounds of Q&A, votes, outcome, cost. What a
    player said is one quoted line, and every content has raw HTML escaped
    (:func:`mas_agents.utterance.markdown`, issue 57 E1 and E18)."""
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
        said = markdown(quote(e["content"]))
        if k == "introduce":
            lines.append(f"**{e['actor']}**: {said}\n")
        elif k == "ask":
            lines.append(f"**{e['actor']}** asks **{e['data'].get('target')}**: {said}\n")
        elif k == "answer":
            lines.append(f"**{e['actor']}** answers: {said}\n")
        elif k == "vote":
            lines.append(f"- {e['actor']} {markdown(e['content'])}")
        elif k == "invalid":
            raw = markdown(quote(fold(e["data"].get("raw") or "")[:300]))
            lines.append(f"- *{e['actor']}: invalid {e['data'].get('action', '')} "
                         f"({markdown('; '.join(e['data'].get('errors', [])))}). Raw reply: {raw}*\n")
        elif e["phase"] == "planning":
            lines.append(f"- *{e['actor']} (private {k}): {markdown(e['content'])}*")
        elif k == "accuse":
            lines += ["", f"**{markdown(e['content'])}**", ""]
    llm = result["llm"]
    lines += ["## Cost", "",
              f"LLM calls: {llm.get('calls')}, prompt tokens: {llm.get('input_tokens')}, "
              f"completion tokens: {llm.get('output_tokens')}, wall time: {result['wall_time_s']:.1f} s, "
              f"invalid actions: {result['invalid_actions']}", ""]
    if (llm.get("prompt_cost") or {}).get("calls"):   # what a prefix cache reused, and could have
        lines += [f"Prompt cost: {cost_line(llm['prompt_cost'])}.", ""]
    return "\n".join(lines)


def load(params: dict[str, Any], *, data_root: Path | None = None, seed: int = 0) -> dict[str, Any]:
    """The game's parameters with a ``script`` given by name or id (``"Sin"``, ``"131"``) loaded
    from the WellPlay data in ``lang`` (:attr:`mas_agents.game.contract.GameDef.load`), and
    ``data_root`` set to the datasets root it was read from (recorded as ``config.json``'s
    ``data_dir``, where ``mas rerun`` reads it again). ``seed``: not used (nothing is drawn).

    Raises:
        mas_agents.game.data.DataError: no datasets root, or no such script (names it).
    """
    from mas_agents.game.data import resolve_data_dir
    params = dict(params)
    if isinstance(params.get("script"), (str, int)) and not isinstance(params["script"], bool):
        root = resolve_data_dir(params.get("data_root") or data_root)
        params["script"] = load_script(root, str(params["script"]), str(params.get("lang", "en")))
        params.setdefault("data_root", root)
    return params



GAME_DEF = register(GameDef(kind="mmg", title="Murder mystery", info=GAME, setup=setup, checkpoint=True,
                            headline=mmg_view.headline, seat_specs=mmg_view.seat_specs, view=mmg_view.VIEW,
                            conformance=mmg_checks.CONFORMANCE, load=load, builder=single_graph("mmg", graph_of)))
