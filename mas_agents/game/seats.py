"""The seats of one run: every model a game's agents use, and the agents built from specs.

One :class:`Seats` per run, made by :func:`mas_agents.game.runner.run` and given to the game's
:attr:`mas_agents.game.contract.GameDef.setup`: its models all record into the run's ``llm_calls.jsonl``
(one accounted wrapper per distinct model spec, :class:`mas_agents.llm.ModelPool`), and its
:meth:`Seats.agent` builds an agent from a spec ``BLOCKS[@MODEL]`` the same way for every game.

Its imports of the model layer (:mod:`mas_agents.llm`), the agent and the block registry
(:mod:`mas_agents.specs`) are inside its methods: ``mas spy`` imports this module when the CLI
starts, and those bring langchain and faiss, which ``mas --help`` must not load.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class Seats:
    """Builds the models and agents of one run.

    Args:
        recorder: the run's :class:`mas_agents.call_log.CallRecorder`.
        model: the default model, for specs without ``@MODEL`` (``local``, ``openai:NAME``) or a
            chat model object (tests pass fakes).
        seed: sampling seed of models built from spec strings.
        temperature: sampling temperature of models built from spec strings; None keeps the
            model's default.
        out: the run directory (a person's seat talks through ``out/human``).
        phase: the phase the models' calls are recorded under: ``"gameplay"`` for a game,
            ``"evaluation"`` for the WellPlay evaluation's answerers
            (:func:`mas_agents.eval.wellplay.agents.build_eval_agent`).
    """

    def __init__(self, recorder: Any, model: Any = "local", seed: int = 0, temperature: float | None = None,
                 out: Path | None = None, phase: str = "gameplay"):
        from mas_agents.llm import ModelPool
        self.recorder = recorder
        self.default_model = model
        self.seed = seed
        self.temperature = temperature
        self.out = Path(out) if out is not None else None
        self._pool = ModelPool(recorder, seed, temperature=temperature, phase=phase)
        #: seat name -> the model spec it plays with (:meth:`seat`), in seating order
        self.seat_models: dict[str, str] = {}

    def model(self, spec: Any = None):
        """The accounted chat model for ``spec`` (None: the default model); one per distinct spec."""
        return self._pool.get(self.default_model if spec is None else spec)

    def models(self) -> list:
        """The accounted models built so far (``config.json``'s ``endpoints``)."""
        return self._pool.models()

    def seat(self, name: str, spec: str) -> str:
        """Record that seat ``name`` (as the events name it) plays the agent spec ``spec`` and
        return the model spec it runs (:func:`mas_agents.game.record.seat_model`: ``@MODEL``, else the
        default; a URL or ``human`` as it is). :meth:`agent` records its persona's seat itself; a
        game that seats players another way calls this for each seat, so ``config.json`` says
        which model every seat used (``seat_models``, ``models``).

        Raises:
            ValueError: an empty model after ``@``.
        """
        from mas_agents.game.record import seat_model
        self.seat_models[name] = seat_model(spec, self.default_model)
        return self.seat_models[name]

    def used_models(self) -> list[str]:
        """The sorted distinct model specs the run's seats use: those of :attr:`seat_models`,
        else (a game that records no seat) those of the models built so far."""
        if self.seat_models:
            return sorted(set(self.seat_models.values()))
        return self._pool.specs()

    @property
    def human_dir(self) -> Path | None:
        """Where a person's seat keeps its files (``out/human``), None without a run directory."""
        return None if self.out is None else self.out / "human"

    def agent(self, persona: Any, spec: str, game: Any, *, memory: Any = None, embedder: Any = None,
              settings: Any = None, extra_scripts: Any = ()):
        """An :class:`mas_agents.agent.Agent` playing ``persona`` from the spec ``BLOCKS[@MODEL]``.

        Every agent of this repository is built here: the games' seats, the murder mystery's
        characters (:func:`mas_agents.graphs.mmg.players.build_mmg_agents`) and the WellPlay evaluation's
        answerers (:func:`mas_agents.eval.wellplay.agents.build_eval_agent`).

        Args:
            game: the :class:`mas_agents.planners.base.GameInfo` its requests carry.
            memory: the agent's memory (None: none), unless ``embedder`` is given: then a FAISS
                memory holding ``persona.script`` (and ``extra_scripts``, ``(name, text)`` of
                other characters' scripts) with the budgets ``settings``
                (:func:`mas_agents.specs.build_agent`).

        Raises:
            ValueError: an unknown block in the spec, or an empty model after ``@``.
        """
        from mas_agents.agent import Agent
        from mas_agents.specs import build_agent, build_blocks, split_model
        blocks, model_spec = split_model(spec)
        model = self.model(model_spec)
        self.seat(persona.name, spec)
        if embedder is not None:
            return build_agent(persona, blocks, model, embedder, settings, extra_scripts=list(extra_scripts), game=game)
        return Agent(persona=persona, model=model, memory=memory, blocks=build_blocks(blocks), spec=blocks, game=game,
                     **({} if settings is None else {"settings": settings}))
