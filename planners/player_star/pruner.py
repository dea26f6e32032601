"""PLAYER* pruner (§2.3): refine each victim's suspect list after every questioning round.

Upstream (alickzhu/PLAYER ``main.py``, ``constraints_space``) starts every agent with every other
character as suspect, and after each round reads all sensors on each current suspect and asks the
model to keep "one or more, as few as possible"; characters outside the list are never looked at
again, so the list can only shrink. Here the decision is a documented rule over the readings (no
extra model call, testable without a model), and the list can also grow or shift, because
characters outside it are re-checked when new dialogue about them arrives.

Pass per victim at the end of round r (:class:`Pruner.on_round_end`):

1. **Suspects** — every sensor of ``config.sensor_list`` on each current suspect, re-read only
   when dialogue from or about them was heard since their last reading
   (:meth:`PlayerStarState.has_news`); otherwise their readings stand.
2. **Outsiders** — a character outside the list is re-checked only if dialogue from or about them
   was heard since they were last read, on every sensor, so it is judged on equal terms.

   Steps 1 and 2 for every victim are ONE reading pass: one ``form`` model call
   (:func:`mas_agents.planners.player_star.sensors.read_batch`), none when nobody has news.
3. **Verdict** per candidate (:func:`judge`), on its latest known readings (a new "unknown" does
   not erase an earlier value):

   =========================================  =============================================
   motive / opportunity                        verdict
   =========================================  =============================================
   both Yes                                    keep (whatever the information value)
   exactly one Yes                             keep, unless information value is Low
   both No                                     drop
   no Yes, at least one unknown                unchanged (kept if a suspect, not added if not)
   =========================================  =============================================

   Motive and opportunity are the two facts the sensors establish about guilt (App. C.5);
   information value Low means further questioning is not expected to help (upstream's summary:
   "probability of obtaining valuable information by continuing to question"), so a character
   backed by only one fact and nothing more to learn is let go; one backed by both is never let
   go. Unknown readings are not evidence either way.
4. **Never empty** — if no candidate is kept, keep the candidates with the highest suspicion score
   (:func:`mas_agents.planners.player_star.questioning.suspicion_score`; all ties kept).
5. **Cap** — with ``config.max_suspects`` = k, keep the k highest suspicion scores (ties: seat
   order).
6. The list is in seat order and never holds the agent itself. Every change emits one private
   ``suspect_list`` event: ``data = {victim, round, old, new, added, removed, reason, verdicts,
   fallback}``.

Votes (:meth:`Pruner.contribute`): a ``vote`` request on ``context["victim"]`` gets the suspect list
with each suspect's reason as context, and its choices narrowed to the suspect list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from mas_agents.planners.base import BlockAgent, Contribution
from mas_agents.planners.player_star.questioning import suspicion_score
from mas_agents.planners.player_star.sensors import read_batch
from mas_agents.planners.player_star.state import UNKNOWN, PlayerStarState


def judge(profile: Mapping[str, str], was_suspect: bool) -> tuple[bool, str]:
    """The verdict on one candidate (table in the module docstring).

    Args:
        profile: sensor -> latest value (missing = unknown).
        was_suspect: whether the candidate is on the current list.

    Returns:
        ``(keep, why)`` with ``why`` a short English reason.
    """
    mot, opp = profile.get("motivation", UNKNOWN), profile.get("opportunity", UNKNOWN)
    info = profile.get("information", UNKNOWN)
    yes = [n for n, v in (("motive", mot), ("opportunity", opp)) if v == "Yes"]
    if len(yes) == 2:
        return True, "motive and opportunity"
    if len(yes) == 1:
        if info == "Low":
            return False, f"only {yes[0]}, and little left to learn (information Low)"
        return True, yes[0]
    if mot == "No" and opp == "No":
        return False, "no motive, no opportunity"
    return was_suspect, ("unclear readings: kept" if was_suspect else "unclear readings: not added")


@dataclass
class PruneDecision:
    """The outcome of one pruning pass for one victim.

    Attributes:
        old, new: the suspect list before and after (seat order).
        verdicts: candidate -> ``{"keep": bool, "why": str, "score": float}``.
        fallback: True when no candidate was kept and the top-scoring ones were used (rule 4).
        capped: characters dropped by ``max_suspects`` (rule 5).
    """

    old: list[str]
    new: list[str]
    verdicts: dict[str, dict[str, Any]]
    fallback: bool = False
    capped: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.new != self.old

    @property
    def added(self) -> list[str]:
        return [c for c in self.new if c not in self.old]

    @property
    def removed(self) -> list[str]:
        return [c for c in self.old if c not in self.new]

    def reason(self) -> str:
        """A readable reason for the change, e.g. ``removed Cid (no motive, no opportunity);
        added Dee (motive)``."""
        parts = []
        for c in self.removed:
            why = "over the max_suspects cap" if c in self.capped else self.verdicts.get(c, {}).get("why", "not re-read")
            parts.append(f"removed {c} ({why})")
        for c in self.added:
            parts.append(f"added {c} ({self.verdicts[c]['why']})")
        if self.fallback:
            parts.append("nobody met the rule, so the most suspicious were kept")
        return "; ".join(parts) or "unchanged"


def decide_suspects(old: list[str], profiles: Mapping[str, Mapping[str, str]], order: list[str], *,
                    max_suspects: int | None = None, me: str | None = None) -> PruneDecision:
    """Apply rules 3–6 of the module docstring.

    Args:
        old: the current suspect list.
        profiles: candidate -> sensor -> latest value; candidates = current suspects plus the
            re-checked outsiders (a current suspect missing here counts as all-unknown).
        order: every character in seat order (output order and tie-break).
        max_suspects: cap, or None.
        me: the agent's own name (never a suspect).

    Returns:
        A :class:`PruneDecision`; ``new`` is never empty while there is any candidate other than
        ``me`` (if there is none, ``new`` = ``old`` without ``me``).
    """
    pos = {c: i for i, c in enumerate(order)}
    rank = lambda c: pos.get(c, len(pos))  # noqa: E731
    candidates = sorted({c for c in list(old) + list(profiles) if c != me}, key=rank)
    verdicts: dict[str, dict[str, Any]] = {}
    for c in candidates:
        prof = profiles.get(c, {})
        keep, why = judge(prof, c in old)
        verdicts[c] = {"keep": keep, "why": why, "score": suspicion_score(prof)}
    new = [c for c in candidates if verdicts[c]["keep"]]
    fallback = False
    if not new and candidates:
        top = max(verdicts[c]["score"] for c in candidates)
        new = [c for c in candidates if verdicts[c]["score"] == top]
        fallback = True
        for c in new:
            verdicts[c]["why"] += "; kept as one of the most suspicious"
    capped: list[str] = []
    if max_suspects is not None and len(new) > max_suspects:
        best = sorted(new, key=lambda c: (-verdicts[c]["score"], rank(c)))[:max_suspects]
        capped = [c for c in new if c not in best]
        new = [c for c in new if c in best]
    if not new:
        new = [c for c in old if c != me]
    return PruneDecision(old=list(old), new=new, verdicts=verdicts, fallback=fallback, capped=capped)


@dataclass
class Pruner:
    """Block: the PLAYER* pruner (module docstring) and the vote restriction.

    Model calls per round end: one reading pass for all victims (+1 after a malformed reply), none
    when no suspect and no outsider has new dialogue. For 4 players and 1 victim (3 other
    characters) the pass has at most 3 × 4 = 12 lines.

    Args:
        state: the agent's shared PLAYER* state.
    """

    state: PlayerStarState = field(default_factory=PlayerStarState)
    name: str = "player_star.pruner"
    last: dict[str, PruneDecision] = field(default_factory=dict)

    def on_event(self, agent: BlockAgent, event: dict) -> None:
        self.state.ensure(agent).observe(event)

    def on_round_end(self, agent: BlockAgent, round: int) -> None:
        """Run one pruning pass per victim after questioning round ``round``."""
        st = self.state.ensure(agent)
        st.completed = max(st.completed, int(round))
        lists = {v: list(st.suspects.get(v) or st.others()) for v in st.victims}
        outsiders = {v: [c for c in st.others() if c not in lists[v] and st.has_news(c, v)] for v in st.victims}
        read_batch(agent, st, [(c, v) for v in st.victims for c in lists[v] + outsiders[v] if st.has_news(c, v)],
                   round=round)
        for victim in st.victims:
            old = lists[victim]
            profiles = {c: st.profile(c, victim) for c in old + outsiders[victim]}
            decision = decide_suspects(old, profiles, st.players, max_suspects=st.config.max_suspects, me=st.me)
            self.last[victim] = decision
            if not decision.changed:
                continue
            st.suspects[victim] = list(decision.new)
            agent.emit("suspect_list",
                       f"suspects for {victim}: {', '.join(decision.old)} -> {', '.join(decision.new)} "
                       f"({decision.reason()})",
                       data={"victim": victim, "round": int(round), "old": decision.old, "new": decision.new,
                             "added": decision.added, "removed": decision.removed, "reason": decision.reason(),
                             "verdicts": decision.verdicts, "fallback": decision.fallback},
                       round=round)

    def contribute(self, agent: BlockAgent, request: Any) -> Contribution | None:
        """On a ``vote``: the suspect list as context and as the narrowed choices. On a WellPlay
        objective or reasoning question (``mcq``): the final suspect lists as context."""
        if request.kind == "mcq" and (request.context or {}).get("category") in ("objective", "reasoning"):
            st = self.state.ensure(agent)
            lists = [f"{v}: {', '.join(st.suspects.get(v, [])) or 'none'}" for v in st.victims]
            return Contribution(context=f"Your final suspect list(s) after the game: {'; '.join(lists)}.")
        if request.kind != "vote":
            return None
        st = self.state.ensure(agent)
        victim = (request.context or {}).get("victim") or (st.victims[0] if st.victims else None)
        suspects = [c for c in st.suspects.get(victim, []) if c in (request.choices or [])]
        if not suspects:
            return None
        dec = self.last.get(victim)
        why = {c: dec.verdicts[c]["why"] for c in suspects if dec and c in dec.verdicts}
        listed = ", ".join(f"{c} ({why[c]})" if c in why else c for c in suspects)
        return Contribution(choices=suspects,
                            context=(f"Your suspect list for the death of {victim} after {st.completed} "
                                     f"round(s) of questioning: {listed}. Vote for one of them."),
                            notes={"victim": victim, "suspects": suspects})
