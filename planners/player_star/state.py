"""Shared state of one PLAYER* agent: sensor readings, suspect lists, questioning counts.

PLAYER* (Zhu et al. 2024, arXiv 2404.17662) describes an agent whose *state* is what its sensors
read about every (character, victim) pair (§2.2, Appendix C.5), whose questioning is steered by
those readings (§2.3), and whose *suspect list* per victim is refined by a pruner after every
round (§2.3). The blocks that do this (:mod:`.sensors`, :mod:`.questioning`, :mod:`.pruner`,
:mod:`.relations`) are separate planner blocks, but they plan from ONE state object per agent,
defined here; :func:`mas_agents.planners.player_star.player_star_blocks` builds a fresh state and fresh
blocks for every agent, so nothing is shared between agents (the upstream code let one process
plan for every character; here each agent plans from its own script and memory only).

Everything in this module is plain data and bookkeeping: no model calls.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mas_agents.planners.base import BlockAgent
from mas_agents.planners.player_star import relation_graph as relations

#: The value stored when a sensor call gave no legal option after its re-prompt.
UNKNOWN = "unknown"


@dataclass(frozen=True)
class SensorSpec:
    """One PLAYER* sensor (Appendix C.5; upstream ``utils/sensors.json``).

    Attributes:
        name: our key (``emotion``, ``motivation``, ``opportunity``, ``information``).
        label: how the reading is named in summaries shown to the model.
        choices: the legal readings, in the order shown to the model.
    """

    name: str
    label: str
    choices: tuple[str, ...]


#: The four sensors of PLAYER* Appendix C.5. Upstream names them sentiment, motivation,
#: suspicion and information value; "suspicion" there means whether the character objectively had
#: the opportunity to commit the crime, hence our name ``opportunity``.
SENSORS: dict[str, SensorSpec] = {
    "emotion": SensorSpec("emotion", "your feeling towards them", ("Positive", "Neutral", "Negative")),
    "motivation": SensorSpec("motivation", "motive", ("Yes", "No")),
    "opportunity": SensorSpec("opportunity", "opportunity", ("Yes", "No")),
    "information": SensorSpec("information", "information value of more questions", ("High", "Medium", "Low")),
}


@dataclass
class PlayerStarConfig:
    """Which PLAYER* blocks an agent gets (for ablations).

    Attributes:
        sensors: sensor readings steer questioning (target score, question context) and are shown
            at the vote. Off: the questioning block picks targets by the diminishing-value rule
            alone and no readings are shown (upstream flag ``--sensor``). The pruner reads its own
            sensors whatever this flag says (upstream reads them in ``constraints_space``).
        pruner: refine the suspect list after each round and restrict votes to it (§2.3).
        questioning: choose whom to question from the suspect list (§2.3).
        relations: keep a relationship map (§2.3) and give its summaries to the sensors.
        sensor_list: the sensors in use (keys of :data:`SENSORS`).
        max_suspects: cap on the suspect list length after pruning (``None`` = no cap).
        relation_model: also ask the model (one ``choose`` call per new pair of characters in an
            answer) for the relation label; off by default (rule-based labels only).

    Raises:
        ValueError: an unknown sensor name, or ``max_suspects`` < 1.
    """

    sensors: bool = True
    pruner: bool = True
    questioning: bool = True
    relations: bool = True
    sensor_list: tuple = ("emotion", "motivation", "opportunity", "information")
    max_suspects: int | None = None
    relation_model: bool = False

    def __post_init__(self) -> None:
        self.sensor_list = tuple(self.sensor_list)
        bad = [s for s in self.sensor_list if s not in SENSORS]
        if bad:
            raise ValueError(f"unknown sensor(s) {', '.join(bad)}; known: {', '.join(SENSORS)}")
        if self.max_suspects is not None and self.max_suspects < 1:
            raise ValueError(f"max_suspects must be >= 1 or None, not {self.max_suspects}")


@dataclass
class SensorReading:
    """One sensor reading: what the agent judged about one character for one victim.

    Attributes:
        sensor: key of :data:`SENSORS`.
        character: the character judged.
        victim: the victim the judgement is about.
        value: one of the sensor's choices, or ``"unknown"`` (no legal reply after a re-prompt).
        round: the game round in which it was read (0 = before the first round).
        evidence: the retrieval query that selected the script/dialogue excerpts the model saw,
            then the model's stated reason (if any), e.g. ``"query: Bob and Vic: ...; reason: ..."``.
        call_ids: ids of the model calls (``llm_calls.jsonl``) of the reading pass that took it
            (one ``form`` call for every reading of the pass; 2 after a re-prompt).
        epoch: rounds completed when it was read; the store key is ``(epoch, sensor, character,
            victim)``, so the readings of earlier rounds are kept beside the new ones.
    """

    sensor: str
    character: str
    victim: str
    value: str
    round: int
    evidence: str
    call_ids: list[str] = field(default_factory=list)
    epoch: int = 0

    @property
    def key(self) -> tuple[int, str, str, str]:
        return (self.epoch, self.sensor, self.character, self.victim)


@dataclass
class PlayerStarState:
    """Everything one PLAYER* agent's blocks know and share.

    Filled lazily from the agent on the first hook (:meth:`ensure`), because the factory builds
    blocks before the agent exists.

    Attributes:
        config: the block configuration.
        me: the agent's character name ('' until :meth:`ensure`).
        players: all characters, seat order (the order used to break ties).
        victims: the case's victims.
        role: the agent's ``persona.role``.
        suspects: victim -> suspect list (seat order; never empty, never ``me``). Initially every
            other character (upstream ``character_suspect``).
        readings: cache key (see :class:`SensorReading`) -> reading.
        asked: character -> how many questions this agent has put to them (from its own ``ask``
            events, so a resumed game rebuilds it).
        completed: questioning rounds completed (from ``round_end`` events and round hooks).
        news: character -> count of dialogue events this agent heard from or about them.
        checked: (victim, character) -> ``news[character]`` when the pair was last read.
        graph: the relationship map (a ``networkx.Graph``) or None when relations are off.
    """

    config: PlayerStarConfig = field(default_factory=PlayerStarConfig)
    me: str = ""
    players: list[str] = field(default_factory=list)
    victims: list[str] = field(default_factory=list)
    role: str = ""
    suspects: dict[str, list[str]] = field(default_factory=dict)
    readings: dict[tuple, SensorReading] = field(default_factory=dict)
    asked: Counter = field(default_factory=Counter)
    completed: int = 0
    news: Counter = field(default_factory=Counter)
    checked: dict[tuple[str, str], int] = field(default_factory=dict)
    graph: Any = None
    _lock: Any = field(default_factory=threading.RLock, repr=False)
    _last_event: Any = field(default=None, repr=False)

    # -- set-up ---------------------------------------------------------------------------------
    def ensure(self, agent: BlockAgent) -> "PlayerStarState":
        """Fill the state from ``agent.persona`` once (name, players, victims, initial suspect
        lists, the relationship map seeded from the agent's own script). Returns self."""
        with self._lock:
            if self.me:
                return self
            p = agent.persona
            self.me = p.name
            self.players = list(p.players)
            self.victims = list(p.victims)
            self.role = p.role
            for v in self.victims:
                self.suspects[v] = self.others()
            if self.config.relations:
                self.graph = relations.new_graph(self.players, self.victims)
                relations.add_script_relations(self.graph, self.me, p.script, self.names())
            return self

    def others(self) -> list[str]:
        """Every character but this agent, seat order."""
        return [c for c in self.players if c != self.me]

    def names(self) -> list[str]:
        """Every name the relationship map tracks: players then victims (no duplicates)."""
        return list(dict.fromkeys(self.players + self.victims))

    @property
    def epoch(self) -> int:
        """The current cache epoch: rounds completed."""
        return self.completed

    # -- readings --------------------------------------------------------------------------------
    def store(self, reading: SensorReading) -> None:
        """Keep ``reading`` (replacing one with the same key) and, for emotion readings, note it
        on the relationship map."""
        with self._lock:
            self.readings[reading.key] = reading
            if self.graph is not None and reading.sensor == "emotion":
                relations.note_emotion(self.graph, self.me, reading)

    def latest(self, sensor: str, character: str, victim: str) -> SensorReading | None:
        """The most recent reading of ``sensor`` on (character, victim), any epoch.

        A later ``"unknown"`` does not hide an earlier real value: the latest *known* value wins,
        and ``"unknown"`` is returned only when nothing else was ever read.
        """
        found = [r for (e, s, c, v), r in self.readings.items() if s == sensor and c == character and v == victim]
        if not found:
            return None
        found.sort(key=lambda r: r.epoch)
        known = [r for r in found if r.value != UNKNOWN]
        return (known or found)[-1]

    def profile(self, character: str, victim: str) -> dict[str, str]:
        """sensor -> latest value (``"unknown"`` when never read) for every sensor in use."""
        out = {}
        for s in self.config.sensor_list:
            r = self.latest(s, character, victim)
            out[s] = r.value if r else UNKNOWN
        return out

    def all_suspects(self) -> list[str]:
        """The union of the suspect lists of all victims, seat order."""
        union = {c for lst in self.suspects.values() for c in lst}
        return [c for c in self.players if c in union]

    def has_news(self, character: str, victim: str) -> bool:
        """True if dialogue from or about ``character`` arrived since they were last read for
        ``victim`` (or they were never read)."""
        last = self.checked.get((victim, character))
        return last is None or self.news[character] > last

    def mark_checked(self, character: str, victim: str) -> None:
        """Note that (character, victim) was read now: :meth:`has_news` is False until new
        dialogue from or about ``character`` arrives."""
        self.checked[(victim, character)] = self.news[character]

    # -- events ----------------------------------------------------------------------------------
    def observe(self, event: dict[str, Any]) -> None:
        """Book-keep one visible event (called by every PLAYER* block's ``on_event``; the same
        event object is processed once).

        * ``round_end``: rounds completed.
        * own ``ask``: one more question put to the target.
        * ``introduce`` / ``answer``: news about the speaker and every character named in it.
        * own ``sensor`` / ``suspect_list`` planning events: replayed into the state when missing,
          so an agent rebuilt on ``--resume`` gets back its readings and suspect lists.
        """
        with self._lock:
            if event is self._last_event:
                return
            self._last_event = event
            kind, actor, data = event.get("kind"), event.get("actor"), event.get("data") or {}
            if kind == "round_end":
                self.completed = max(self.completed, int(event.get("round", 0)))
            elif kind == "ask" and actor == self.me and data.get("target"):
                self.asked[data["target"]] += 1
            elif kind in ("introduce", "answer"):
                involved = {actor} | set(relations.mentioned_names(str(event.get("content", "")), self.players))
                for c in involved:
                    if c in self.players and c != self.me:
                        self.news[c] += 1
            elif kind == "sensor" and actor == self.me and event.get("phase") == "planning":
                try:
                    r = SensorReading(**{k: data[k] for k in SensorReading.__dataclass_fields__ if k in data})
                except TypeError:
                    return
                if r.key not in self.readings:
                    self.readings[r.key] = r
                    # replayed in order, so the news heard so far is what it was when read
                    self.checked[(r.victim, r.character)] = self.news[r.character]
                    if self.graph is not None and r.sensor == "emotion":
                        relations.note_emotion(self.graph, self.me, r)
            elif kind == "suspect_list" and actor == self.me and event.get("phase") == "planning":
                v, new = data.get("victim"), data.get("new")
                if v in self.suspects and new:
                    self.suspects[v] = [c for c in new if c != self.me]


def find_state(agent: BlockAgent) -> PlayerStarState | None:
    """The PLAYER* state shared by ``agent``'s blocks, or None if it has no PLAYER* block."""
    for b in getattr(agent, "blocks", []):
        st = getattr(b, "state", None)
        if isinstance(st, PlayerStarState):
            return st
    return None
