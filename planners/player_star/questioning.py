"""PLAYER* questioning (§2.3): whom to question next, and on what.

Rules (pure functions, no model):

* **Suspicion score** of a character for one victim, from its latest readings
  (:func:`suspicion_score`): motive Yes 1, unknown 0.5, No 0; opportunity the same; plus the
  agent's emotion towards them: Negative 0.5, Neutral or unknown 0.25, Positive 0. Range
  0–2.5. PLAYER* (App. C.5) defines the sensors but no numbers: motive and opportunity weigh most
  because they are the two facts the pruner tests; emotion is a weak prior (half a fact); unknown
  sits halfway, so a failed reading neither accuses nor clears.
* **Information weight** of a character (:func:`information_weight`) from its latest
  information-value reading: High 1.0, Medium 0.6, Low 0.2, unknown 0.6 (= Medium). Upstream reads
  this sensor in the pruner only (``question_ask`` = 0); we reuse the pruner's latest reading here
  when one exists, and read nothing extra.
* **Target score** (:func:`target_scores`)::

      score(c) = max over victims v with c in suspects[v] of  suspicion(c, v) × info(c, v)
                 ─────────────────────────────────────────────────────────────────────────
                                       1 + asked(c)

  ``asked(c)`` = questions this agent has already put to c. Source and rationale: PLAYER* §2.3
  steers questioning to the suspects whose answers are expected to be most informative (the v4/v5
  abstract: "a question-targeting mechanism guided by information gain"); suspicion × information
  value is our stand-in for that expected gain, and each question to the same character yields
  less new information (they have already told their story), so the value is discounted
  harmonically. Upstream (``main.py``, ``open_talk``) questions *every* suspect once per round; in
  this framework a turn holds one question, and with equal scores the 1/(1+n) discount makes the
  agent cycle through the suspect list exactly like upstream. With ``config.sensors`` off the
  suspicion × info factor is 1 for everyone (pure cycling).
* **Ties** (:func:`choose_target`): highest score, then fewer questions already asked, then seat
  order — deterministic.
* **Weakest point** (:func:`weakest_point`): what the question should probe, in this order:
  opportunity Yes (their account of the time of the death), motive Yes (their tie to the victim),
  opportunity unknown, motive unknown, otherwise contradictions in what they said. Upstream's
  question prompt asks to probe loopholes and contradictions and to name the victim; the order is
  ours (opportunity is the objective fact, §C.5).

The block (:class:`Questioning`) scores the suspects on their latest readings, emits a
``target_choice`` event with every score, and narrows the ask to the chosen target. With the
pruner on it reads nothing itself: the pruner's pass after every round reads the suspects
(upstream ``constraints_space`` reads the sensors after each round too), so the first round's
asks have no readings yet and cycle through the suspects in seat order, as upstream questions
every suspect in round one. With the pruner off it reads, in one call, the suspects never read
or with new dialogue since their last reading.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from mas_agents.planners.base import BlockAgent, Contribution
from mas_agents.planners.player_star.relation_graph import relation_summary
from mas_agents.planners.player_star.sensors import read_batch, readings_summary
from mas_agents.planners.player_star.state import UNKNOWN, PlayerStarState

#: Points per reading (see the module docstring).
YES_NO_POINTS = {"Yes": 1.0, "No": 0.0, UNKNOWN: 0.5}
EMOTION_POINTS = {"Negative": 0.5, "Neutral": 0.25, "Positive": 0.0, UNKNOWN: 0.25}
INFO_WEIGHT = {"High": 1.0, "Medium": 0.6, "Low": 0.2, UNKNOWN: 0.6}


def suspicion_score(profile: Mapping[str, str]) -> float:
    """Suspicion of one character for one victim from ``profile`` (sensor -> value; missing
    sensors count as unknown). Returns a float in [0, 2.5]."""
    return (YES_NO_POINTS.get(profile.get("motivation", UNKNOWN), 0.5)
            + YES_NO_POINTS.get(profile.get("opportunity", UNKNOWN), 0.5)
            + EMOTION_POINTS.get(profile.get("emotion", UNKNOWN), 0.25))


def information_weight(profile: Mapping[str, str]) -> float:
    """The information-value weight in (0, 1] of ``profile`` (unknown = Medium)."""
    return INFO_WEIGHT.get(profile.get("information", UNKNOWN), 0.6)


def target_scores(candidates: list[str], profiles: Mapping[str, Mapping[str, Mapping[str, str]]],
                  asked: Mapping[str, int], *, use_readings: bool = True) -> dict[str, dict[str, Any]]:
    """Score every candidate target (see the module docstring for the formula).

    Args:
        candidates: characters one may question (seat order).
        profiles: character -> victim -> profile, for the victims whose suspect list holds them.
        asked: character -> questions already asked (missing = 0).
        use_readings: False = the value factor is 1 for everyone (sensors off).

    Returns:
        character -> ``{"score", "value", "suspicion", "information", "asked", "victim"}`` with
        ``victim`` the victim that gave the best value (first in order on ties) and ``value`` the
        undiscounted suspicion × information.
    """
    out: dict[str, dict[str, Any]] = {}
    for c in candidates:
        n = int(asked.get(c, 0))
        best = None
        for v, prof in (profiles.get(c) or {}).items():
            s, i = (suspicion_score(prof), information_weight(prof)) if use_readings else (1.0, 1.0)
            if best is None or s * i > best[0]:
                best = (s * i, s, i, v)
        if best is None:  # no victim lists this character: score it as all-unknown
            s, i = (suspicion_score({}), information_weight({})) if use_readings else (1.0, 1.0)
            best = (s * i, s, i, None)
        value, s, i, v = best
        out[c] = {"score": round(value / (1 + n), 6), "value": round(value, 6), "suspicion": s,
                  "information": i, "asked": n, "victim": v}
    return out


def choose_target(scores: Mapping[str, Mapping[str, Any]], order: list[str]) -> str:
    """The best target: highest score, then fewer questions asked, then earlier in ``order``.

    Raises:
        ValueError: no candidates.
    """
    if not scores:
        raise ValueError("no candidate to question")
    pos = {c: i for i, c in enumerate(order)}
    return min(scores, key=lambda c: (-scores[c]["score"], scores[c]["asked"], pos.get(c, len(pos))))


def weakest_point(character: str, victim: str, profile: Mapping[str, str]) -> str:
    """What to probe when questioning ``character`` about ``victim`` (order in the module
    docstring)."""
    opp, mot = profile.get("opportunity", UNKNOWN), profile.get("motivation", UNKNOWN)
    if opp == "Yes":
        return (f"where {character} was and what {character} did around the time {victim} died; "
                "look for gaps in that account")
    if mot == "Yes":
        return f"what {character} stood to gain or lose from {victim}'s death and how they really got on"
    if opp == UNKNOWN:
        return f"{character}'s whereabouts when {victim} died, which you do not know yet"
    if mot == UNKNOWN:
        return f"how {character} was connected to {victim}, which you do not know yet"
    return f"anything {character} said about {victim} that does not fit what you know"


@dataclass
class Questioning:
    """Block: on an ``ask`` request, pick the character to question from the suspect list.

    Steps: (1) with ``config.sensors`` on and ``config.pruner`` off, read every sensor of
    ``config.sensor_list`` on the suspects never read or with new dialogue (one call); (2) score the suspects that are legal choices (:func:`target_scores`); (3) emit
    ``target_choice`` (data: round, target, victim, scores, suspects); (4) return
    ``Contribution(choices=[target], context=<readings about the target>,
    instructions=<ask about the weakest point>)``.

    Model calls per ask: 0 with the pruner on (it reads after each round); otherwise 0 or 1 (+1
    after a malformed reply).

    Args:
        state: the agent's shared PLAYER* state.
    """

    state: PlayerStarState = field(default_factory=PlayerStarState)
    name: str = "player_star.questioning"

    def contribute(self, agent: BlockAgent, request: Any) -> Contribution | None:
        if request.kind != "ask":
            return None
        st = self.state.ensure(agent)
        legal = list(request.choices or [])
        rnd = int((request.context or {}).get("round", st.completed + 1))
        st.completed = max(st.completed, rnd - 1)
        pool = [c for c in st.all_suspects() if c in legal] or [c for c in legal if c != st.me]
        if not pool:
            return None
        cfg = st.config
        pairs = [(c, v) for c in pool for v in ([v for v in st.victims if c in st.suspects.get(v, [])]
                                                or list(st.victims))]
        if cfg.sensors and not cfg.pruner:
            read_batch(agent, st, [(c, v) for c, v in pairs if st.has_news(c, v)], round=rnd)
        profiles: dict[str, dict[str, dict[str, str]]] = {}
        for c, v in pairs:
            profiles.setdefault(c, {})[v] = st.profile(c, v)
        scores = target_scores(pool, profiles, st.asked, use_readings=cfg.sensors)
        target = choose_target(scores, st.players)
        victim = scores[target]["victim"] or (st.victims[0] if st.victims else "the victim")
        agent.emit("target_choice",
                   f"questions {target} (score {scores[target]['score']:.3f}; asked {scores[target]['asked']} "
                   f"time(s) before) about {victim}; scores: "
                   + ", ".join(f"{c} {s['score']:.3f}" for c, s in scores.items()),
                   data={"round": rnd, "target": target, "victim": victim, "scores": scores,
                         "suspects": {v: list(l) for v, l in st.suspects.items()}},
                   round=rnd)
        prof = profiles.get(target, {}).get(victim, st.profile(target, victim))
        context = ""
        if cfg.sensors:
            context = (f"Your private notes on {target} regarding the death of {victim} "
                       f"(you have questioned {target} {scores[target]['asked']} time(s) so far):\n"
                       + readings_summary(st, target, victim))
            if st.graph is not None:
                rel = relation_summary(st.graph, st.me, target, max_evidence=1)
                if not rel.startswith("No known relation"):
                    context += "\n" + rel
        instructions = (f"Question {target}. Aim at the weakest point of their story: "
                        f"{weakest_point(target, victim, prof)}. Mention {victim} by name in your question.")
        return Contribution(choices=[target], context=context, instructions=instructions,
                            notes={"target": target, "victim": victim, "scores": scores})

    def on_event(self, agent: BlockAgent, event: dict) -> None:
        self.state.ensure(agent).observe(event)

    def on_round_end(self, agent: BlockAgent, round: int) -> None:
        """Advance the cache epoch (no model call), so the next ask reads afresh when no pruner
        ran."""
        st = self.state.ensure(agent)
        st.completed = max(st.completed, int(round))
