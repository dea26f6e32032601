"""PLAYER* sensors (§2.2, Appendix C.5): structured judgements about one (character, victim) pair.

A sensor reading is ONE strict pick-one-option model call made through
:meth:`mas_agents.agent.Agent.choose` (which retrieves the agent's own script and dialogue
excerpts for the sensor's query, parses ``Choice: <option>`` strictly, re-prompts once, decodes
under a grammar on local models, and counts malformed replies). A reply that still names no legal
option becomes the reading ``"unknown"``; it is never guessed from prose.

The four sensors and their options follow the paper's Appendix C.5 and the upstream
``utils/sensors.json`` (alickzhu/PLAYER): emotion (Positive / Neutral / Negative), motivation
(Yes / No), opportunity — upstream "suspicion": whether the character objectively had the chance
to commit the crime — (Yes / No), information value (High / Medium / Low). The prompt wording is
ours.

Each reading is cached in the agent's :class:`~planners.player_star.state.PlayerStarState` under
``(epoch, sensor, character, victim)`` (epoch = rounds completed), so one agent never reads the
same sensor on the same pair twice between two round ends, and is emitted as a private ``sensor``
planning event (``data`` = the reading as a dict) so it appears in ``events.jsonl`` and the
transcript.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from planners.base import Contribution
from planners.player_star.state import SENSORS, UNKNOWN, PlayerStarState, SensorReading

#: The judgement each sensor asks for ({c} = character, {v} = victim). Our wording.
QUESTIONS = {
    "emotion": "How do you feel about {c} after everything you have read and heard?",
    "motivation": "Think about how {c} is connected to {v}. Did {c} have a motive to kill {v}?",
    "opportunity": ("Did {c} have the opportunity to kill {v}? For example: was {c} near the scene at the "
                    "time, or is {c}'s account of that time missing or doubtful?"),
    "information": ("If you question {c} again, how likely are you to learn something new and useful about "
                    "the death of {v}?"),
}

#: The retrieval query of each sensor: it selects which script and dialogue excerpts the model sees.
#: One retrieval query per (character, victim) pair, shared by every sensor. Sharing it makes
#: the retrieved excerpts (the long part of the prompt) identical across the sensors read on one
#: pair, so llama.cpp's KV cache (and vLLM's prefix cache) evaluates only the short sensor
#: question of the 2nd, 3rd and 4th reading (prefix caching: the stable part of the prompt first, :mod:`mas_agents.prompts`). It names what each
#: sensor needs: relation and motive, whereabouts and alibi, what was said, done and hidden.
PAIR_QUERY = ("{c} and {v}: relationship, grudge, money, motive; {c}'s whereabouts and alibi when {v} died; "
              "what {c} said, did, knows or hides")

HEADER = "Private assessment (not said aloud) of {c} in connection with the death of {v}."
CIVILIAN_NOTE = "Keep in mind that the murderer may have lied in what you heard."
MURDERER_NOTE = ("You know the truth; judge as an innocent player would from what was said, so that you "
                 "can act like one.")


def sensor_prompt(sensor: str, character: str, victim: str, *, holder: bool = False, relations: str = "") -> str:
    """The task text of one sensor call (the agent appends the numbered options and the
    ``Choice:`` format line).

    Args:
        sensor: key of :data:`~planners.player_star.state.SENSORS`.
        character, victim: the pair judged.
        holder: the agent holds the game's hidden role (``GameInfo.hidden_role``: the murderer),
            and is told to judge as an innocent player would.
        relations: an optional relationship-map summary placed before the question.

    Raises:
        KeyError: unknown sensor.
    """
    parts = [HEADER.format(c=character, v=victim), MURDERER_NOTE if holder else CIVILIAN_NOTE]
    if relations:
        parts.append(f"What you know of their relations: {relations}")
    parts.append(QUESTIONS[sensor].format(c=character, v=victim) + " Options:")
    return "\n".join(parts)


def _holds_hidden_role(agent: Any, role: str) -> bool:
    """True when ``role`` is the hidden role of the agent's game (:attr:`GameInfo.hidden_role`)."""
    hidden = getattr(getattr(agent, "game", None), "hidden_role", None)
    return bool(hidden) and role == hidden


def sensor_query(sensor: str, character: str, victim: str) -> str:
    """The memory retrieval query of one sensor call: the same for every ``sensor`` on one
    pair (see :data:`PAIR_QUERY`).

    Raises:
        KeyError: unknown sensor.
    """
    SENSORS[sensor]
    return PAIR_QUERY.format(c=character, v=victim)


def describe(reading: SensorReading) -> str:
    """A one-line human-readable reading, e.g. ``motivation of Bob (victim Vic): Yes``."""
    return f"{reading.sensor} of {reading.character} (victim {reading.victim}): {reading.value}"


def read_sensor(agent: Any, state: PlayerStarState, sensor: str, character: str, victim: str, *,
                round: int) -> SensorReading:
    """Read one sensor on (character, victim), or return this epoch's cached reading.

    Makes one ``agent.choose`` call (two after a malformed reply), stores the reading in
    ``state`` and emits a private ``sensor`` event. A cached reading makes no call and no event.

    Args:
        agent: the agent (its own memory and model are used).
        state: the agent's PLAYER* state.
        sensor: key of ``SENSORS``.
        character, victim: the pair.
        round: the game round, recorded on the reading and its event.

    Returns:
        The reading; ``value`` is ``"unknown"`` when both replies were malformed.
    """
    hit = state.cached(sensor, character, victim)
    if hit is not None:
        return hit
    spec = SENSORS[sensor]
    rel = ""
    if state.graph is not None and sensor in ("motivation", "emotion"):
        from planners.player_star.relations import relation_summary
        pairs = [(character, victim)] if sensor == "motivation" else [(state.me, character)]
        rel = " ".join(s for s in (relation_summary(state.graph, a, b, max_evidence=2) for a, b in pairs)
                       if not s.startswith("No known relation"))
    query = sensor_query(sensor, character, victim)
    act = agent.choose(sensor_prompt(sensor, character, victim, holder=_holds_hidden_role(agent, state.role), relations=rel), list(spec.choices),
                       query=query, context={"sensor": sensor, "character": character, "victim": victim,
                                             "round": round}, purpose=f"sensor.{sensor}")
    value = act.value if act.valid and act.value in spec.choices else UNKNOWN
    evidence = f"query: {query}"
    reason = " ".join((act.reasoning or "").split())[:200] if act.valid else ""
    if reason:
        evidence += f"; reason: {reason}"
    reading = SensorReading(sensor=sensor, character=character, victim=victim, value=value, round=round,
                            evidence=evidence, call_ids=list(act.call_ids), epoch=state.epoch)
    state.store(reading)
    agent.emit("sensor", describe(reading), data=asdict(reading), round=round, llm_call_ids=reading.call_ids)
    return reading


def read_sensors(agent: Any, state: PlayerStarState, sensors: Iterable[str], character: str, victim: str, *,
                 round: int) -> dict[str, SensorReading]:
    """Read several sensors on one pair (cached ones cost nothing); sensor -> reading."""
    return {s: read_sensor(agent, state, s, character, victim, round=round) for s in sensors}


def readings_summary(state: PlayerStarState, character: str, victim: str) -> str:
    """One line of the latest readings on (character, victim), e.g.
    ``Bob: your feeling towards them Negative; motive Yes; opportunity unknown``."""
    prof = state.profile(character, victim)
    return f"{character}: " + "; ".join(f"{SENSORS[s].label} {v}" for s, v in prof.items())


@dataclass
class SensorNotes:
    """Block: shows the agent its latest sensor readings when it votes (§2.2: the sensors are the
    agent's state; the vote is decided from it).

    On a ``vote`` request (``context["victim"]``) it contributes one line of readings per character
    on the legal choices that the agent has read. It makes no model call (the readings were taken
    by the questioning block and the pruner). Other requests: None.

    Args:
        state: the agent's shared PLAYER* state (one per agent, built by the factory).
    """

    state: PlayerStarState = field(default_factory=PlayerStarState)
    name: str = "player_star.sensors"

    def contribute(self, agent: Any, request: Any) -> Contribution | None:
        if request.kind != "vote" or not self.state.config.sensors:
            return None
        st = self.state.ensure(agent)
        victim = (request.context or {}).get("victim") or (st.victims[0] if st.victims else "")
        lines = [readings_summary(st, c, victim) for c in (request.choices or [])
                 if any(st.latest(s, c, victim) for s in st.config.sensor_list)]
        if not lines:
            return None
        return Contribution(context=f"Your private sensor readings about the death of {victim}:\n" + "\n".join(lines),
                            notes={"victim": victim})

    def on_event(self, agent: Any, event: dict) -> None:
        self.state.ensure(agent).observe(event)
