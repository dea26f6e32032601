"""The public face of mas-agents: ``import mas_agents as mas`` (issue 49 items 1-2).

Everything here composes what the CLI composes, so a call from Python is recorded and accounted
as ``mas`` records it (``config.json``, ``events.jsonl``, ``llm_calls.jsonl`` and the prompt log,
``result.json``; the run-record contract of :mod:`mas_agents.game.record`):

* :func:`agent` builds an agent from a spec (``"plain+player_star"``) and a model (a spec string
  such as ``"local"`` or ``"openai:NAME"``, or a langchain-core chat model); :func:`recipe` is
  the same agent as a small picklable value (what a seat of an experiment cell can carry to a
  Ray worker, :mod:`mas_agents.cells`).
* :func:`play` plays any registered game (:mod:`mas_agents.game.contract`) through the one runner
  (:func:`mas_agents.game.runner.run`); a seat takes a spec string, an agent or a recipe, and the
  persona and system prompt of a seat always come from the game (what the seat is told).
* :func:`evaluate` is the WellPlay evaluation (``mas wellplay eval``), :func:`reproduce` a
  paper's protocol (``mas reproduce``).
* :func:`builder` gives a built-in game's uncompiled ``StateGraph``; ``mas.node`` and
  ``mas.end_round`` (:mod:`mas_agents.graph_nodes`) make agents nodes of the user's own graph.
* :func:`games`, :func:`register_game`, :func:`blocks`, :func:`register_block`: the registries.

This module is the top layer of the import contracts (``pyproject.toml``, beside the CLI): it
may import ``eval`` and ``graphs``, and nothing below imports it. ``mas_agents/__init__.py``
reaches it lazily (PEP 562), so ``import mas_agents`` alone imports none of this.

Imports sit inside the functions: the runners would bring LangGraph to a script that only reads
``mas.games``. The public functions take keywords (named as the CLI's options) and build the
runners' typed configurations from them. One idea, the public face; most lines are docstrings.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, TypeAlias, TypedDict, Unpack

if TYPE_CHECKING:   # the types of the signatures only: the imports that run stay inside the functions
    from langchain_core.language_models import BaseChatModel
    from langgraph.graph import StateGraph

    from mas_agents.accounting import AccountedModel
    from mas_agents.agents import Agent, Persona
    from mas_agents.call_log import CallRecorder
    from mas_agents.graphs.mmg.dataset import Script
    from mas_agents.game.contract import GameDef
    from mas_agents.game.seats import Hand
    from mas_agents.memory.vector_memory import MemorySettings, VectorMemory
    from mas_agents.planners.base import GameInfo, PlannerBlock
    from mas_agents.remote.limits import RemoteSettings

#: A model: a spec string (``"local"``: the embedded SmolLM2; ``"openai:NAME"``; ``"replay:RUN_DIR"``;
#: :func:`mas_agents.llm.make_chat_model`) or a langchain-core chat model object.
Model: TypeAlias = "str | BaseChatModel"

#: What takes a place at a game's table in :func:`play`: a spec string (``"plain+pgm@local"``), a
#: built agent (:func:`agent`) or an :class:`AgentRecipe`.
Seat: TypeAlias = "str | Agent | AgentRecipe"

#: A JSON document read or written by a run: ``result.json`` (what :func:`play`, :func:`evaluate`
#: and :func:`reproduce` return), keyed by its field names.
RunResult: TypeAlias = "dict[str, Any]"

#: A built-in game's uncompiled LangGraph graph (:func:`builder`); its state and context are the
#: game's own.
GameGraph: TypeAlias = "StateGraph[Any, Any, Any, Any]"


# ------------------------------------------------------------------------------------ agents
@dataclass(frozen=True)
class AgentRecipe:
    """An agent as a value: its blocks, its model and its budgets, nothing built yet.

    Picklable when ``model`` is a spec string (or None), so it travels to another process (a Ray
    worker) and is built there into the run's own accounted model. :func:`play` builds it at the
    seat it is given, with the persona, memory and :class:`mas_agents.planners.base.GameInfo` the game makes
    for that seat.

    Attributes:
        spec: ``BLOCKS[@MODEL]`` (:mod:`mas_agents.specs`), e.g. ``"plain+pgm"``.
        model: the model spec (``"local"``, ``"openai:NAME"``) or a chat-model object; None: the
            ``@MODEL`` of ``spec``, else the run's default model.
        settings: retrieval budgets (:class:`memory.MemorySettings`); None: the defaults.
        constrained: :attr:`mas_agents.agents.Agent.constrained` (None: whenever the model takes a
            reply format).
    """

    spec: str = "plain"
    model: Model | None = None
    settings: MemorySettings | None = None
    constrained: bool | None = None

    def __post_init__(self) -> None:
        from mas_agents.specs import parse_spec, split_model
        parse_spec(split_model(self.spec)[0])   # ValueError: an unknown block, an empty model

    @property
    def blocks(self) -> str:
        """The spec's blocks without ``@MODEL`` (``"plain+pgm"``)."""
        from mas_agents.specs import split_model
        return split_model(self.spec)[0]

    @property
    def model_spec(self) -> Model | None:
        """The model this recipe names: :attr:`model`, else ``@MODEL`` of :attr:`spec`, else None."""
        from mas_agents.specs import split_model
        return self.model if self.model is not None else split_model(self.spec)[1]

    def build(self, persona: Persona, game: GameInfo, model: AccountedModel, memory: VectorMemory | None = None) -> Agent:
        """The :class:`mas_agents.agents.Agent` of this recipe playing ``persona`` with the
        accounted ``model`` (:class:`mas_agents.accounting.AccountedModel`) and ``memory``."""
        from mas_agents.agents import Agent
        from mas_agents.specs import build_blocks
        from mas_agents.memory import MemorySettings
        return Agent(persona=persona, model=model, memory=memory, blocks=build_blocks(self.blocks),
                     settings=self.settings or MemorySettings(), spec=self.blocks, constrained=self.constrained,
                     game=game)


def recipe(spec: str = "plain", *, model: Model | None = None, settings: MemorySettings | None = None,
           constrained: bool | None = None) -> AgentRecipe:
    """An :class:`AgentRecipe` (see there); ``mas.recipe("plain+pgm", model="local")``.

    Raises:
        ValueError: an unknown block in ``spec`` (the message lists the known ones).
    """
    return AgentRecipe(spec=spec, model=model, settings=settings, constrained=constrained)


def recorder(out: str | Path | None = None, *, prompts: bool | None = None) -> CallRecorder:
    """A call recorder (:class:`mas_agents.accounting.CallRecorder`) writing
    ``out/llm_calls.jsonl`` and the prompt log beside it, as a game's run does; ``out=None``
    accounts in memory only (``recorder.totals()``). Close it (``.close()``) when done: the
    prompt log is then compressed to ``llm_prompts.jsonl.gz``.

    Args:
        prompts: record prompts; None: the process-wide switch (on unless ``--no-record-prompts``).
    """
    from mas_agents.call_log import CallRecorder
    from mas_agents.rundir import RunDir
    return CallRecorder(None if out is None else RunDir(Path(out)).calls, prompts=prompts)


def _game_info(game: str | GameInfo | None) -> GameInfo:
    """The :class:`mas_agents.planners.base.GameInfo` of ``game``: a GameInfo as it is; a registered kind's
    own (``"wis"``, ``"mmg"``); a MAgIC scenario by its name (``"chameleon"``); None: UNSPECIFIED.

    Raises:
        ValueError: no such game (names the registered kinds), or a family of games (``magic``)
            named without its scenario.
    """
    from mas_agents.planners.base import UNSPECIFIED, GameInfo
    if game is None:
        return UNSPECIFIED
    if isinstance(game, GameInfo):
        return game
    from mas_agents.game import contract as registry
    for g in registry.games().values():
        if isinstance(g.info, Mapping) and game in g.info:
            return g.info[game]
    info = registry.get(game).info
    if isinstance(info, Mapping):
        raise ValueError(f"game {game!r} is a family: name one of {', '.join(info)} (e.g. game={next(iter(info))!r})")
    return info


def agent(spec: str = "plain", *, model: Model = "local", game: str | GameInfo | None = None, name: str | None = None,
          script: str | Script | None = None, persona: Persona | None = None, recorder: CallRecorder | None = None,
          settings: MemorySettings | None = None, seed: int = 0, data_dir: str | Path | None = None,
          lang: str = "en") -> Agent:
    """An :class:`mas_agents.agents.Agent` from a spec, ready to act (``agent.act(request)``), to be
    a node of a LangGraph graph (:func:`node`) or to take a seat in :func:`play`.

    Args:
        spec: ``BLOCKS[@MODEL]``: ``"plain"``, ``"plain+player_star"``, ``"plain+pgm@openai:NAME"``.
        model: a model spec (``"local"``: the embedded SmolLM2; ``"openai:NAME"``) or a
            langchain-core chat model; ``@MODEL`` in ``spec`` wins.
        game: what the agent plays: a registered kind (``"mmg"``, ``"wis"``), a MAgIC scenario
            (``"chameleon"``), a :class:`mas_agents.planners.base.GameInfo` of one's own game, or None.
        name: the character or seat it plays (default ``"Player"``, or the script's first
            character).
        script: for ``game="mmg"``, a WellPlay script (its name or id, e.g. ``"Sin"``, read from
            ``data_dir``; or a loaded :class:`mas_agents.graphs.mmg.dataset.Script`): the persona and
            system prompt are the game's own (:func:`mas_agents.graphs.mmg.players.persona_for`). For any
            other game, the agent's private script text (kept in its FAISS memory).
        persona: for one's own game, the whole :class:`mas_agents.agents.Persona` (name, role,
            script, goals, victims, players, and the system prompt the game writes); ``name``
            and ``script`` are then not used.
        recorder: where its calls are recorded (:func:`recorder`); None: accounted in memory only.
            Seated in :func:`play`, an agent's calls go to that run's log whatever this is.
        settings: retrieval budgets (:class:`memory.MemorySettings`).
        seed: the sampling seed of a model built from a spec string.
        data_dir: the datasets root for a script named by name (default: ``$MAS_DATA_DIR``, then
            ``../shared/datasets``); lang: the script's language (``en``, ``zh``).

    Returns:
        The agent; ``agent.recipe`` is its :class:`AgentRecipe`.

    Raises:
        ValueError: an unknown block or game; ``name`` not a character of the script; a loaded
            WellPlay script given for a game other than ``mmg``.
        mas_agents.game.data.DataError: a script name not found under the datasets root.
    """
    from mas_agents.game.seats import Seats
    from mas_agents.call_log import CallRecorder
    from mas_agents.agents import Persona

    r = recipe(spec, model=model, settings=settings)
    info = _game_info(game)
    if persona is not None:
        pass
    elif game == "mmg" and script is not None:
        from mas_agents.graphs.mmg.players import persona_for
        sc = _load_script(script, data_dir, lang)
        who = name or sc.characters[0].name
        if who not in [c.name for c in sc.characters]:
            raise ValueError(f"name {who!r} is not a character of {sc.name}: {', '.join(c.name for c in sc.characters)}")
        persona = persona_for(sc, who)
    else:
        if script is not None and not isinstance(script, str):
            raise ValueError(f"script: a loaded WellPlay script is for game='mmg' (got game={game!r}); "
                             f"for another game give the agent's script text")
        persona = Persona(name=name or "Player", script=script or "")
    spec_model = r.model_spec if r.model_spec is not None else "local"
    # built as every seat of a game is (issue 51 item 4): the model from a ModelPool (an openai:
    # model is the process's shared one), a scripted agent's FAISS memory by specs.build_agent
    seats = Seats(recorder if recorder is not None else CallRecorder(None), spec_model, seed=seed)
    embedder = None
    if persona.script:
        from mas_agents.memory import default_embedder
        embedder = default_embedder()
    a: Agent = seats.agent(persona, r.blocks, info, embedder=embedder, settings=settings)
    setattr(a, "recipe", dataclasses.replace(r, model=spec_model))   # what built it (not a field of the core's Agent)
    return a


def _load_script(script: str | Script, data_dir: str | Path | None, lang: str) -> Script:
    """A loaded WellPlay script: ``script`` as it is, or loaded by name or id from the datasets root."""
    if not isinstance(script, str):
        return script
    from mas_agents.game.data import resolve_data_dir
    from mas_agents.graphs.mmg.dataset import load_script
    return load_script(resolve_data_dir(data_dir), script, lang)


# ------------------------------------------------------------------------------------- play
def _seat_label(seat: Agent | AgentRecipe) -> str:
    """How ``config.json`` names what holds a hand-seated place (``"plain+pgm@local"``)."""
    from mas_agents.model_specs import spec_text
    if isinstance(seat, AgentRecipe):
        r = seat
    else:
        built: AgentRecipe | None = getattr(seat, "recipe", None)
        if built is None:   # a hand-built Agent
            return f"{seat.spec}@{spec_text(seat.model.model)}"
        r = built
    return r.blocks + (f"@{spec_text(r.model_spec)}" if r.model_spec is not None else "")


def _seat_model(seat: Agent | AgentRecipe) -> Model | None:
    """The model a hand-seated agent or recipe runs (a spec string or chat model), None: the run's default."""
    if isinstance(seat, AgentRecipe):
        return seat.model_spec
    r: AgentRecipe | None = getattr(seat, "recipe", None)
    if r is not None and r.model_spec is not None:
        return r.model_spec
    chat: BaseChatModel = seat.model.model   # a hand-built Agent: its chat model, recorded into the run
    return chat


def _placeholder(seat: Agent | AgentRecipe) -> str:
    """The spec a game's own set-up builds at a place that a hand-built agent or recipe then
    takes over (its blocks when every one is registered, else ``plain``; ``@MODEL`` when its
    model is a spec string, so the game's rules that read seat models, e.g. WiS's speaking
    limit, see the model that plays)."""
    from mas_agents.specs import parse_spec
    blocks = seat.blocks if isinstance(seat, AgentRecipe) else getattr(seat, "spec", "plain")
    try:
        parse_spec(blocks)
    except ValueError:
        blocks = "plain"
    m = _seat_model(seat)
    return f"{blocks}@{m}" if isinstance(m, str) else blocks


def _seated(seat: Agent | AgentRecipe, base: Agent, model: AccountedModel) -> Agent:
    """The agent that plays a place whose game-built agent is ``base``: the game's persona,
    system prompt and :class:`mas_agents.planners.base.GameInfo` (what the seat is told), with the blocks,
    budgets and model of ``seat`` (an :class:`AgentRecipe` or an Agent); ``model`` is its model
    recording into the run (:meth:`mas_agents.game.seats.Seats.model`). A hand-built agent keeps
    its own memory when it plays the same character, else takes the game's."""
    from mas_agents.agents import Agent
    if isinstance(seat, AgentRecipe):
        return seat.build(base.persona, base.game, model, base.memory)
    same = seat.memory is not None and seat.persona.name == base.persona.name
    return Agent(persona=base.persona, model=model, memory=seat.memory if same else base.memory, blocks=seat.blocks,
                 settings=seat.settings, spec=seat.spec, constrained=seat.constrained, game=base.game)


def _hand(seat: Agent | AgentRecipe) -> Hand:
    """``seat`` as the run's seats take a handed agent (:class:`mas_agents.game.seats.Hand`): the
    game builds the seat and :meth:`mas_agents.game.seats.Seats.agent` gives it this one."""
    from mas_agents.game.seats import Hand
    return Hand(model=_seat_model(seat), label=_seat_label(seat),
                seat=lambda base, model: _seated(seat, base, model))


def play(game: str, *, out: str | Path | None = None,
         agents: Iterable[Seat] | Mapping[str, Seat] | Mapping[int, Seat] | None = None, model: Model = "local",
         seed: int = 0, temperature: float | None = None, resume: bool = False, data_dir: str | Path | None = None,
         progress: Callable[[int, int, str], None] | None = None, **params: object) -> RunResult:
    """Play one game of any registered kind into a run directory and return its ``result.json``.

    The one runner plays it (:func:`mas_agents.game.runner.run`, what ``mas game play`` runs): the run
    directory holds ``config.json`` (with ``models``/``seat_models``/``model``/``default_model``),
    ``events.jsonl``, ``llm_calls.jsonl`` and the prompt log, ``result.json``, ``transcript.md``.

    Args:
        game: a registered kind (``"wis"``, ``"mmg"``, ``"magic"``, or one a package registered).
        out: the run directory (default ``runs/<kind>-<UTC time>``).
        agents: the seats. A list, for a game whose seats are a list (``wis``: ``Player 1..N`` in
            order), or a dict seat name -> seat (any game that builds its agents through its seats:
            ``{"Officer Li": me}`` in ``mmg``, ``{"Player 2": me}`` in ``magic``). A seat is a spec
            string (``"plain+pgm"``, ``"plain@openai:NAME"``), an agent (:func:`agent`: its blocks,
            budgets and model play; the persona and system prompt are the game's for that seat) or
            an :class:`AgentRecipe`. Places not named keep the game's own agents (its
            parameters, e.g. ``agent=`` of ``mmg``, ``challenger=``/``defender=`` of ``magic``).
            ``config.json``'s ``seated`` names what holds each place given as an agent or recipe.
        model: the default model (spec string or chat model) of seats that name none.
        seed, temperature: sampling of models built from spec strings; the game's draws use ``seed``.
        resume: continue a game that checkpoints (``mmg``) from ``out``.
        data_dir: datasets root (default ``$MAS_DATA_DIR``, then ``../shared/datasets``) for what
            the game loads or draws from its data (:attr:`mas_agents.game.contract.GameDef.load`): a
            ``script`` given by name (``mmg``), a ``setting`` by id (``magic``), the word pair of a
            ``wis`` game given no ``pair=``.
        progress: ``progress(done_steps, step_bound, node_names)`` after each graph step.
        params: the game's own parameters (``mas game list``), e.g. ``pair={"civilian": "tea",
            "spy": "coffee"}`` (or ``"tea/coffee"``) for ``wis``, ``script="Sin"`` for ``mmg`` (a
            name is loaded), ``scenario="chameleon", setting=0`` for ``magic`` (an id is loaded).
            A ``wis`` game without ``pair`` plays one drawn from the dataset's
            ``whoisspy/pairs_<lang>.jsonl`` with ``random.Random(seed)``, as ``mas spy play``
            draws it without ``--pair`` (:func:`mas_agents.graphs.wis.session.draw_pair`).

    Raises:
        ValueError: an unknown game, seat, block or parameter (before anything is written but
            ``out`` itself); what the game's set-up refuses.
        FileNotFoundError / mas_agents.game.data.DataError: the data a parameter names (or a
            drawn pair needs) is not found under the datasets root.
        mas_agents.game.record.RunConflict: ``out`` holds a run of another configuration.
    """
    from mas_agents.game import contract as registry
    from mas_agents.game.runner import run
    from mas_agents.rundir import default_run_dir

    g = registry.get(game)
    if g.load is not None:   # a script by name (mmg), a setting by id (magic), a word pair drawn (wis)
        params = g.load(params, data_root=data_dir, seed=seed)
    hand: dict[str | int, Agent | AgentRecipe] = {}
    if isinstance(agents, Mapping):
        if "agents" in g.params:
            raise ValueError(f"agents: {g.kind} takes its seats as a list in seat order: agents=[seat, seat, ...]")
        hand = {place: recipe(seat) if isinstance(seat, str) else seat for place, seat in agents.items()}
    elif agents is not None:
        seats_list = list(agents)
        if "agents" not in g.params:
            raise ValueError(f"agents: {g.kind} takes no list of seats; name them: agents={{seat name: agent}}")
        hand = {i: s for i, s in enumerate(seats_list) if not isinstance(s, str)}
    for place, seat in hand.items():
        if not isinstance(seat, AgentRecipe) and not (hasattr(seat, "blocks") and hasattr(seat, "model")):
            raise ValueError(f"agents: seat {place!r} is a {type(seat).__name__}; give a spec string, "
                             f"an agent (mas.agent) or a recipe (mas.recipe)")
    if agents is not None and not isinstance(agents, Mapping):
        params["agents"] = [s if isinstance(s, str) else _placeholder(s) for s in seats_list]
    out = Path(out) if out is not None else default_run_dir(g.kind, "play")
    result: RunResult = run(g, out, model=model, seed=seed, temperature=temperature, resume=resume, progress=progress,
                            hand={place: _hand(seat) for place, seat in hand.items()} or None, **params)
    return result


# --------------------------------------------------------------------- evaluation, papers
class EvalOptions(TypedDict, total=False):
    """The keywords :func:`evaluate` takes besides its own: the rest of
    :class:`mas_agents.eval.wellplay.run.WellPlayEvalConfig` and the hooks of
    :func:`mas_agents.eval.wellplay.run.run_wellplay_eval` (every one optional).

    Attributes:
        agent: the agent spec answering for ``pp``/``op`` (default ``"plain"``); agent_spec: the
            same, by its name before the typed configuration.
        lang: ``"en"`` or ``"zh"``. seed, runs: run ``i`` uses seed ``seed + i``.
        shuffle, scoring: see :mod:`mas_agents.eval.wellplay.metrics`.
        run: the game directory a ``session`` evaluation reads.
        settings: retrieval budgets (:class:`mas_agents.memory.MemorySettings`, or a mapping of its
            fields).
        concurrency: characters answering at once (None: as many as the model serves).
        make_agent, tick, total: the runner's hooks (an agent factory, a progress tick per
            answer, the number of answers once known).
    """

    agent: str | None
    agent_spec: str | None
    lang: str
    seed: int
    runs: int
    shuffle: bool
    scoring: str
    run: Path | None
    settings: MemorySettings | Mapping[str, int] | None
    concurrency: int | None
    make_agent: Callable[..., Agent] | None
    tick: Callable[[], None] | None
    total: Callable[[int], None] | None


def evaluate(method: str = "pp", *, out: str | Path, script: str | None = None, model: Model = "local",
             data_dir: str | Path | None = None, **options: Unpack[EvalOptions]) -> RunResult:
    """The WellPlay evaluation (``mas wellplay eval``: PLAYER* §4.2's multiple-choice questions
    after a game) into ``out``; returns its ``result.json``.

    Args:
        method: one of :data:`mas_agents.eval.wellplay.evaluate.METHODS` (``pp``, ``op``, ``session``, and
            the model-free ``always_a``/``random``).
        out: the run directory (rerun the same call to resume it).
        script: a script's name or id, or ``"all"``; model: model spec or chat model.
        data_dir: datasets root (default ``$MAS_DATA_DIR``, then ``../shared/datasets``).
        options: the rest of :class:`mas_agents.eval.wellplay.run.WellPlayEvalConfig` (``lang``, ``seed``,
            ``runs``, ``shuffle``, ``scoring``, ``run``, ``settings``, ``agent``, ``concurrency``) and
            :func:`mas_agents.eval.wellplay.run.run_wellplay_eval`'s ``make_agent``, ``tick``, ``total``.

    Raises:
        ValueError: an unknown method or script; mas_agents.game.data.DataError: no datasets root.
    """
    from mas_agents.game.data import resolve_data_dir
    from mas_agents.eval.wellplay.run import WellPlayEvalConfig, run_wellplay_eval
    opts: dict[str, Any] = dict(options)
    if "agent_spec" in opts:   # its name before the typed configuration (WellPlayEvalConfig.agent)
        opts["agent"] = opts.pop("agent_spec")
    hooks = {k: opts.pop(k) for k in ("make_agent", "tick", "total") if k in opts}
    result: RunResult = run_wellplay_eval(WellPlayEvalConfig(data_root=resolve_data_dir(data_dir), method=method,
                                                             out=Path(out), script=script, model=model, **opts), **hooks)
    return result


def reproduce(paper: str, *, out: str | Path, model: Model | Sequence[str] = "local", data_dir: str | Path | None = None,
              **options: object) -> RunResult:
    """A paper's protocol (``mas reproduce``): ``"magic"``, ``"player-star"``, ``"wis"`` or
    ``"all"``, into ``out`` (rerun to resume), with the paper's numbers beside ours in
    ``out/report.md``; returns its ``result.json``.

    Args:
        model: the model under test (``wis``: a list of specs, the pool).
        options: the protocol's own (``others``, ``limit``, ``seed``, ``conditions``, ``langs``,
            ``methods``, ``eval_runs``: see ``mas reproduce --help``), and the hooks its
            configuration takes (``tick`` progress callback; ``play``/``evaluate`` runners;
            ``concurrency`` for ``magic``).

    Raises:
        ValueError: an unknown paper or option value.
    """
    from mas_agents.game.data import resolve_data_dir
    from mas_agents.eval.reproduce import registry
    hooks = {k: options.pop(k) for k in _REPRODUCE_HOOKS if k in options}
    config = registry.build(paper, data_root=resolve_data_dir(data_dir), out=Path(out), model=model, options=options)
    fields = {f.name for f in dataclasses.fields(config)}
    for name in hooks:
        if name not in fields:
            raise ValueError(f"{name}: mas reproduce {paper} takes no such hook; its hooks: "
                             f"{', '.join(h for h in _REPRODUCE_HOOKS if h in fields)}")
    result: RunResult = registry.run(config.replace(**hooks) if hooks else config)
    return result


#: What :func:`reproduce` passes to a paper's configuration besides its options: the progress
#: callback, the cost estimate made before the run, and the runners' test hooks.
_REPRODUCE_HOOKS = ("tick", "estimate", "play", "evaluate", "concurrency")


# ------------------------------------------------------------------------ registries, graphs
class ServerSettings(TypedDict, total=False):
    """The keywords :func:`servers` takes: fields of :class:`mas_agents.remote.RemoteSettings`.

    Attributes:
        structured: ``"auto"``, ``"grammar"``, ``"json"`` or ``"prompt"``.
        context_window: the server's context window in tokens (None: as the server reports it).
        max_connections: requests in flight per base URL (>= 1).
        adaptive: halve the limit on HTTP 429, grow it back after successes.
    """

    structured: str
    context_window: int | None
    max_connections: int
    adaptive: bool


def servers(**settings: Unpack[ServerSettings]) -> RemoteSettings:
    """Settings of every OpenAI-compatible server this process calls (what ``mas``'s
    ``--structured``, ``--context-window``, ``--max-connections`` and ``--adaptive`` set), e.g.
    ``mas.servers(structured="prompt")`` for a server that takes no reply format. Forgets what was
    probed of each server, so the next call starts from these settings; given nothing, changes
    nothing and returns the current settings.

    Args:
        settings: fields of :class:`mas_agents.remote.RemoteSettings`: ``structured`` (``auto``,
            ``grammar``, ``json``, ``prompt``), ``context_window`` (tokens), ``max_connections``
            (requests in flight per base URL), ``adaptive`` (halve on HTTP 429).

    Returns:
        The :class:`mas_agents.remote.RemoteSettings` now in force.

    Raises:
        ValueError: a value out of range; TypeError: an unknown setting.
    """
    from mas_agents.remote import endpoints as remote
    return remote.configure(**settings) if settings else remote.settings()


def games() -> Mapping[str, GameDef]:
    """Every registered game by kind (:class:`mas_agents.game.contract.GameDef`: ``title``, ``info``, ``params``)."""
    from mas_agents.game import contract as registry
    return registry.games()


def register_game(game: GameDef) -> GameDef:
    """Register an :class:`mas_agents.game.contract.GameDef` (ARCHITECTURE.md, "Adding a game"); returns it."""
    from mas_agents.game import contract as registry
    return registry.register(game)


def blocks() -> dict[str, Callable[[], list[PlannerBlock]]]:
    """The block registry: spec name -> factory of that block's fresh blocks (a copy)."""
    from mas_agents.specs import BLOCKS
    return dict(BLOCKS)


def register_block(name: str, factory: Callable[[], list[PlannerBlock]]) -> None:
    """:func:`mas_agents.specs.register_block`: ``plain+<name>`` in every spec from now on.

    Raises:
        ValueError: a bad or already registered name.
    """
    from mas_agents.specs import register_block as reg
    reg(name, factory)


def builder(game: str, variant: str | None = None) -> GameGraph:
    """A built-in game's uncompiled LangGraph ``StateGraph`` (``graphs/<game>/graph.py``:
    ``builder``), to compile with one's own checkpointer, interrupts or extra nodes; its nodes
    read the game's runtime from the run context (pass ``context=`` the runtime, e.g.
    ``table.graph.rt`` of a set-up table).

    Args:
        game: a registered game's kind (``"mmg"``, ``"wis"``, ``"magic"``...): its
            :attr:`mas_agents.game.contract.GameDef.builder`.
        variant: for ``magic``, the scenario (``"chameleon"``...) or graph kind (``"deduction"``,
            ``"cost_sharing"``, ``"repeated"``); None for a game of one graph.

    Raises:
        ValueError: no such game, a game that offers no builder, or a variant the game does not
            have (``magic`` without one).
    """
    from mas_agents.game import contract as registry
    g = registry.get(game)
    if g.builder is None:
        raise ValueError(f"builder: the game {game!r} offers no graph builder")
    graph: GameGraph = g.builder(variant)
    return graph
