"""The seats of one run: every model a game's agents use, and the agents built from specs.

One :class:`Seats` per run, made by :func:`mas_agents.game.runner.run` and given to the game's
:attr:`mas_agents.game.contract.GameDef.setup`: its models all record into the run's ``llm_calls.jsonl``
(one accounted wrapper per distinct model spec, :class:`mas_agents.llm.ModelPool`), and its
:meth:`Seats.agent` builds an agent from a spec ``BLOCKS[@MODEL]`` the same way for every game.

Its imports of the model layer (:mod:`mas_agents.llm`), the agent and the block registry
(:mod:`mas_agents.specs`) are inside its methods: ``mas spy`` imports this module when the CLI
starts, and those bring langchain and faiss, which ``mas --help`` must not load.

A caller may hand the game built agents for some of its seats (:class:`Hand`, ``mas.play(...,
agents=...)``): the seats are given to the game, which builds every seat as it always does, and
:meth:`Seats.agent` gives it the handed agent for that seat; nothing reaches into a game's runtime.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Hand:
    """What plays a seat a caller hands to the game (:class:`Seats` ``hand``), made by
    :func:`mas_agents.api.play` from an agent or a recipe.

    Attributes:
        model: the model it runs: a spec string or a chat model; None: the run's default model.
        label: how ``config.json``'s ``seated`` names it (``"plain+pgm@RuleChat"``).
        seat: ``(the agent the game built for the seat, the accounted model of `model`) -> the agent
            that plays it``: the game's persona, memory and GameInfo (what the seat is told) with the
            handed blocks, budgets and model.
    """

    model: Any
    label: str
    seat: Callable[[Any, Any], Any]


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
        hand: place -> :class:`Hand`: the seats a caller hands built agents; a place is a seat
            name as the events name it, or a 0-based index in seating order (the order the game
            seats its players, :meth:`seat`). :meth:`agent` gives the game the handed agent for
            such a seat and :meth:`seat` records its model; :meth:`handed` checks, after the
            game's set-up, that every place was a seat.
    """

    def __init__(self, recorder: Any, model: Any = "local", seed: int = 0, temperature: float | None = None,
                 out: Path | None = None, phase: str = "gameplay", hand: Mapping[str | int, Hand] | None = None):
        from mas_agents.llm import ModelPool
        self.recorder = recorder
        self.default_model = model
        self.seed = seed
        self.temperature = temperature
        self.out = Path(out) if out is not None else None
        self._pool = ModelPool(recorder, seed, temperature=temperature, phase=phase)
        #: seat name -> the model spec it plays with (:meth:`seat`), in seating order
        self.seat_models: dict[str, str] = {}
        self._hand: dict[str | int, Hand] = dict(hand or {})
        #: place of :attr:`_hand` -> the seat name it turned out to be (when the game seated it)
        self._places: dict[str | int, str] = {}

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

        A seat handed a built agent (``hand``) records the model of what was handed, whatever
        ``spec`` the game seats there.

        Raises:
            ValueError: an empty model after ``@``; a person's seat (``human``) that was handed an agent.
        """
        from mas_agents.game.human import HUMAN
        from mas_agents.game.record import seat_model
        from mas_agents.model_specs import spec_text
        if name not in self.seat_models:   # seated for the first time: is it a handed place?
            index = len(self.seat_models)
            for place in (name, index):
                if place in self._hand and place not in self._places:
                    self._places[place] = name
                    break
        hand = self._hand_of(name)
        if hand is None:
            self.seat_models[name] = seat_model(spec, self.default_model)
        elif spec == HUMAN:
            raise ValueError(f"agents: seat {name!r} is played by a person; hand an agent another seat")
        else:
            self.seat_models[name] = spec_text(self.default_model if hand.model is None else hand.model)
        return self.seat_models[name]

    def _hand_of(self, name: str) -> Hand | None:
        """The :class:`Hand` given for seat ``name`` (by name or by index), None: the game's own."""
        for place, seated in self._places.items():
            if seated == name:
                return self._hand[place]
        return None

    def handed(self, kind: str) -> dict[str, str]:
        """After the game's set-up: seat name -> :attr:`Hand.label` of every handed seat, in the
        order of ``hand`` (``config.json``'s ``seated``); ``{}`` when nothing was handed.

        Raises:
            ValueError: a place of ``hand`` that the game ``kind`` did not seat (the message
                lists its seats).
        """
        for place in self._hand:
            if place not in self._places:
                if not self.seat_models:
                    raise ValueError(f"agents: {kind} seats no agent through its seats; "
                                     f"give its seats as its own parameters")
                raise ValueError(f"agents: no seat {place!r} in this {kind} game; its seats: {', '.join(self.seat_models)}")
        return {self._places[place]: hand.label for place, hand in self._hand.items()}

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
        """An :class:`mas_agents.agents.Agent` playing ``persona`` from the spec ``BLOCKS[@MODEL]``.

        Every agent of this repository is built here: the games' seats, the murder mystery's
        characters (:func:`mas_agents.graphs.mmg.players.build_mmg_agents`) and the WellPlay evaluation's
        answerers (:func:`mas_agents.eval.wellplay.agents.build_eval_agent`). A seat handed a
        built agent (``hand``) gets it: the agent built here for ``persona`` (its persona, memory
        and ``game``) played with the handed blocks, budgets and model (:attr:`Hand.seat`).

        Args:
            game: the :class:`mas_agents.planners.base.GameInfo` its requests carry.
            memory: the agent's memory (None: none), unless ``embedder`` is given: then a FAISS
                memory holding ``persona.script`` (and ``extra_scripts``, ``(name, text)`` of
                other characters' scripts) with the budgets ``settings``
                (:func:`mas_agents.specs.build_agent`).

        Raises:
            ValueError: an unknown block in the spec, or an empty model after ``@``.
        """
        from mas_agents.agents import Agent
        from mas_agents.specs import build_agent, build_blocks, split_model
        blocks, model_spec = split_model(spec)
        model = self.model(model_spec)
        self.seat(persona.name, spec)
        if embedder is not None:
            agent = build_agent(persona, blocks, model, embedder, settings, extra_scripts=list(extra_scripts), game=game)
        else:
            agent = Agent(persona=persona, model=model, memory=memory, blocks=build_blocks(blocks), spec=blocks,
                          game=game, **({} if settings is None else {"settings": settings}))
        hand = self._hand_of(persona.name)
        return agent if hand is None else hand.seat(agent, self.model(hand.model))
