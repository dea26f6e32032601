"""PLAYER* sensors (§2.2, Appendix C.5): structured judgements about (character, victim) pairs.

The four sensors and their options follow the paper's Appendix C.5 and the upstream
``utils/sensors.json`` (alickzhu/PLAYER): emotion (Positive / Neutral / Negative), motivation
(Yes / No), opportunity — upstream "suspicion": whether the character objectively had the chance
to commit the crime — (Yes / No), information value (High / Medium / Low). The prompt wording is
ours.

**One call per reading pass.** :func:`read_batch` reads every sensor on every pair it is given in
ONE ``form`` model call through :meth:`mas_agents.agents.Agent.act`: one line
``<Character> <sensor label>: <option>`` per (pair, sensor), parsed strictly line by line (a
grammar locally, structured outputs remotely), one re-prompt for the whole form when any line is
missing or off its options, and ``"unknown"`` for a line still unreadable after it (the lines
given in format are kept: :attr:`mas_agents.planners.base.Action.partial`); nothing is guessed from prose.
PLAYER* §4 / Table A5 count the method as the cheapest in gameplay calls; one call per
(sensor, character, victim), as this module made before, cost 5× the plain agent.

**Only what new evidence can have changed is re-read.** A pair needs a reading when it was never
read or when dialogue from or about the character arrived since its last reading
(:meth:`~mas_agents.planners.player_star.state.PlayerStarState.has_news`); otherwise its readings stand.

Every reading is stored in the agent's :class:`~mas_agents.planners.player_star.state.PlayerStarState`
and emitted as a private ``sensor`` planning event (``data`` = the reading as a dict; the readings
of one pass share their ``call_ids``), so it appears in ``events.jsonl`` and the transcript.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from mas_agents.planners.base import ActionRequest, BlockAgent, Contribution
from mas_agents.planners.player_star.relation_graph import relation_summary
from mas_agents.planners.player_star.state import SENSORS, UNKNOWN, PlayerStarState, SensorReading

#: The judgement each sensor asks for ({v} = victim), said of "them" (every character of the
#: pass). Our wording.
QUESTIONS = {
    "emotion": "emotion: how do you feel about them after everything you have read and heard?",
    "motivation": "motive: did they have a motive to kill {v}?",
    "opportunity": ("opportunity: did they have the opportunity to kill {v}? For example: were they near the "
                    "scene at the time, or is their account of that time missing or doubtful?"),
    "information": ("information: if you question them again, how likely are you to learn something new and "
                    "useful about the death of {v}?"),
}

#: The field label of each sensor in a reply line (``Bob Smith motive: Yes``).
FIELD = {"emotion": "emotion", "motivation": "motive", "opportunity": "opportunity", "information": "information"}

#: The retrieval query of a pass: it selects which script and dialogue excerpts the model sees.
#: It names what the sensors need: relation and motive, whereabouts and alibi, what was said,
#: done and hidden.
BATCH_QUERY = ("{cs} and {vs}: relationship, grudge, money, motive; whereabouts and alibi when {vs} died; "
               "what each said, did, knows or hides")

HEADER = "Private assessment (not said aloud) of {cs} in connection with the death of {vs}."
CIVILIAN_NOTE = "Keep in mind that the murderer may have lied in what you heard."
MURDERER_NOTE = ("You know the truth; judge as an innocent player would from what was said, so that you "
                 "can act like one.")


def _names(xs: Iterable[str]) -> str:
    xs = list(dict.fromkeys(xs))
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def field_tag(sensor: str, character: str, victim: str, *, several_victims: bool = False) -> str:
    """The reply-line tag of one reading, e.g. ``Bob motive`` (``Bob motive (Vic)`` when the pass
    covers several victims).

    Raises:
        KeyError: unknown sensor.
    """
    return f"{character} {FIELD[sensor]}" + (f" ({victim})" if several_victims else "")


def batch_request(pairs: list[tuple[str, str]], sensors: list[str], *, holder: bool = False,
                  relations: dict[str, str] | None = None, actor: str = "", game: Any = None) -> ActionRequest:
    """The one ``form`` request of a reading pass.

    Args:
        pairs: ``[(character, victim), ...]`` to read, in order (non-empty).
        sensors: keys of :data:`~mas_agents.planners.player_star.state.SENSORS`, read on every pair.
        holder: the agent holds the game's hidden role (``GameInfo.hidden_role``: the murderer),
            and is told to judge as an innocent player would.
        relations: character -> relationship-map summary shown before the questions.
        actor, game: copied onto the request.

    Returns:
        An :class:`~mas_agents.planners.base.ActionRequest` of kind ``form`` with ``len(pairs) × len(sensors)``
        fields (tags from :func:`field_tag`) and ``context["private"] = True``.

    Raises:
        KeyError: unknown sensor. ValueError: no pairs or no sensors.
    """
    if not pairs or not sensors:
        raise ValueError("a reading pass needs at least one pair and one sensor")
    chars = [c for c, _ in pairs]
    victims = list(dict.fromkeys(v for _, v in pairs))
    several = len(victims) > 1
    parts = [HEADER.format(cs=_names(chars), vs=_names(victims)), MURDERER_NOTE if holder else CIVILIAN_NOTE]
    rel = [f"- {c}: {r}" for c, r in (relations or {}).items() if r]
    if rel:
        parts.append("What you know of their relations:\n" + "\n".join(rel))
    parts.append("For each of them, judge:\n" + "\n".join(f"- {QUESTIONS[s].format(v=_names(victims))}" for s in sensors))
    fields = [(field_tag(s, c, v, several_victims=several), list(SENSORS[s].choices)) for c, v in pairs for s in sensors]
    kw = {"game": game} if game is not None else {}
    return ActionRequest(kind="form", actor=actor, prompt="\n".join(parts), fields=fields,
                         query=BATCH_QUERY.format(cs=_names(chars), vs=_names(victims)),
                         context={"private": True, "purpose": "sensors"}, **kw)


def _holds_hidden_role(agent: BlockAgent, role: str) -> bool:
    """True when ``role`` is the hidden role of the agent's game (:attr:`GameInfo.hidden_role`)."""
    hidden = getattr(getattr(agent, "game", None), "hidden_role", None)
    return bool(hidden) and role == hidden


def describe(reading: SensorReading) -> str:
    """A one-line human-readable reading, e.g. ``motivation of Bob (victim Vic): Yes``."""
    return f"{reading.sensor} of {reading.character} (victim {reading.victim}): {reading.value}"


def _relations(state: PlayerStarState, pairs: list[tuple[str, str]]) -> dict[str, str]:
    """character -> the relationship-map lines the motive and emotion sensors use (character and
    victim; this agent and the character), known relations only."""
    if state.graph is None:
        return {}
    out: dict[str, str] = {}
    for c, v in pairs:
        lines = [relation_summary(state.graph, a, b, max_evidence=2) for a, b in ((c, v), (state.me, c))]
        text = " ".join(x for x in lines if not x.startswith("No known relation"))
        if text and text not in out.get(c, ""):
            out[c] = f"{out[c]} {text}".strip() if c in out else text
    return out


def read_batch(agent: BlockAgent, state: PlayerStarState, pairs: Iterable[tuple[str, str]], *, round: int,
               sensors: Iterable[str] | None = None) -> dict[tuple[str, str], dict[str, SensorReading]]:
    """Read ``sensors`` on every pair in ONE ``form`` call (two after a malformed reply).

    Args:
        agent: the agent (its own memory and model are used; ``agent.act``).
        state: the agent's PLAYER* state; readings are stored there and each pair is marked
            read (:meth:`~PlayerStarState.mark_checked`).
        pairs: ``(character, victim)`` pairs; duplicates are read once. Empty: no call.
        round: the game round, recorded on the readings and their events.
        sensors: keys of ``SENSORS`` (default: ``state.config.sensor_list``).

    Returns:
        ``{(character, victim): {sensor: reading}}``; a reading's ``value`` is ``"unknown"`` when
        its line was unreadable after the re-prompt. One private ``sensor`` event per reading.
    """
    pairs = list(dict.fromkeys(pairs))
    sensors = list(sensors if sensors is not None else state.config.sensor_list)
    if not pairs or not sensors:
        return {}
    req = batch_request(pairs, sensors, holder=_holds_hidden_role(agent, state.role),
                        relations=_relations(state, pairs), actor=agent.name,
                        game=getattr(agent, "game", None))
    act = agent.act(req, phase="gameplay")
    values = act.value if act.valid else act.partial
    reason = " ".join((act.reasoning or "").split())[:200] if act.valid else ""
    evidence = f"query: {req.query}" + (f"; reason: {reason}" if reason else "")
    out: dict[tuple[str, str], dict[str, SensorReading]] = {}
    i = 0
    for c, v in pairs:
        for s in sensors:
            tag = req.fields[i][0]
            i += 1
            value = values.get(tag, UNKNOWN)
            r = SensorReading(sensor=s, character=c, victim=v, value=value, round=round, evidence=evidence,
                              call_ids=list(act.call_ids), epoch=state.epoch)
            state.store(r)
            agent.emit("sensor", describe(r), data=asdict(r), round=round, llm_call_ids=r.call_ids)
            out.setdefault((c, v), {})[s] = r
        state.mark_checked(c, v)
    return out


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

    def contribute(self, agent: BlockAgent, request: Any) -> Contribution | None:
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

    def on_event(self, agent: BlockAgent, event: dict) -> None:
        self.state.ensure(agent).observe(event)
