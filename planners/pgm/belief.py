"""Two-hop beliefs about a hidden role, as an exact Bayesian network (MAgIC §3/§4).

MAgIC's PGM-aware agent keeps two hops of belief: *first hop*, what I believe about who holds the
hidden role (the chameleon, the undercover, the spy, the murderer); *second hop*, what each other
player believes about it, given what that player could see. We compute both with pgmpy, not with
prompts: one discrete Bayesian network per viewer, queried by variable elimination.

The network of a viewer (me, or another player ``q``)::

    H  ∈ players                    who holds the hidden role (root)
    O_k ∈ {fits, neutral, odd}      a reading of one player's clue          (child of H)
    A_k ∈ {fine, suspicious}        a reading of one player's answer        (child of H)
    V_k ∈ players - {voter}         one named player's vote                 (child of H)
    W_k ∈ players                   one anonymous vote (from a vote count)  (child of H)

Every observation adds one node, observed; ``P(H | all observed nodes)`` is the belief.

Modelling choices (our numbers; they are assumptions, not fitted):

* **Prior of H.** Uniform over the players still in the game. ``me_hidden=False`` (I know I do
  not hold the role: a non-chameleon, a murder-mystery civilian) drops me; ``me_hidden=True`` (I
  know I hold it: the chameleon, the murderer) puts all mass on me; ``None`` (nobody knows their
  role: undercover, Who is Spy) keeps me. A player voted out while the game went on is dropped
  from every viewer's prior (:meth:`TwoHopBelief.eliminate`): hard public evidence.
* **Clue readings** ``O`` (:data:`FIT_CPT`), about a *subject* read by a *reader*:
  ``P(· | H = subject) = P(· | H = reader) = (fits .2, neutral .3, odd .5)`` and
  ``P(· | H = anyone else) = (fits .6, neutral .3, odd .1)``. Why: the clue of the hidden player
  is about another word (or, for the chameleon, no word), so it tends to look odd; and when the
  *reader* is the hidden one, the reader's own word differs, so an honest clue looks odd to it
  just as often. "neutral" is equally likely either way: it carries no information. An "odd"
  reading is a likelihood ratio of 5 against the subject, "fits" 3 in its favour.
* **Answer readings** ``A`` (:data:`ANSWER_CPT`): ``P(suspicious | H = subject) = .6``,
  ``P(suspicious | otherwise) = .2`` (whether the reader is hidden does not matter: an answer is
  judged on its content, not against a word).
* **Noise.** Every reading CPT is mixed with the uniform distribution:
  ``(1 - alpha) · row + alpha / |states|`` (``alpha`` = how often the model's reading is just
  noise; default 0.1), so no single reading is ever decisive.
* **Votes** ``V`` (:data:`VOTE_RATIO` = 2): a voter who does not hold the role votes for the
  holder twice as often as for any one given innocent, i.e.
  ``P(V = t | H = h) ∝ 2 if t == h else 1`` over the voter's candidates; the holder itself votes
  uniformly at random among its candidates. An anonymous vote ``W`` (only a count was public) uses
  the same ratio over all players.
* **Self-evidence is skipped.** A viewer does not read its own clue, and its own vote is not
  evidence for itself (it followed from the belief).

Second hop (the approximation, stated): we cannot see another player's readings, so ``q``'s
network is built from *my* readings of the events ``q`` could see (public clues, public votes,
anything whose ``observer_can_see`` lists ``q``), with ``q`` in the reader role of each reading
CPT, without readings of ``q``'s own clues, and without ``q``'s own votes. My private readings
(``public=False``) never enter it. ``others_know_self=True`` models players who know they do not
hold the role (the chameleon game: a non-chameleon knows), dropping ``q`` from ``q``'s prior.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from mas_agents.planners.pgm._bn import Node, build, query

#: Reading scales: the discrete readings a model may give, per kind of observation.
SCALES: dict[str, tuple[str, ...]] = {
    "fit": ("fits", "neutral", "odd"),
    "answer": ("fine", "suspicious"),
}
#: CPT rows of a clue-fit reading: H is the subject / H is the reader / H is someone else.
FIT_CPT: dict[str, dict[str, float]] = {
    "subject": {"fits": 0.2, "neutral": 0.3, "odd": 0.5},
    "reader": {"fits": 0.2, "neutral": 0.3, "odd": 0.5},
    "other": {"fits": 0.6, "neutral": 0.3, "odd": 0.1},
}
#: CPT rows of an answer reading (same three cases).
ANSWER_CPT: dict[str, dict[str, float]] = {
    "subject": {"fine": 0.4, "suspicious": 0.6},
    "reader": {"fine": 0.8, "suspicious": 0.2},
    "other": {"fine": 0.8, "suspicious": 0.2},
}
CPTS = {"fit": FIT_CPT, "answer": ANSWER_CPT}
#: A non-holder votes for the holder this many times as often as for any one given innocent.
VOTE_RATIO = 2.0
#: Default noise level of a reading (weight of the uniform distribution in its CPT).
DEFAULT_ALPHA = 0.1


def scale_of(reading: str) -> str:
    """The scale (``fit``/``answer``) a reading belongs to.

    Raises:
        ValueError: the reading is on no scale.
    """
    for name, states in SCALES.items():
        if reading in states:
            return name
    known = ", ".join(s for states in SCALES.values() for s in states)
    raise ValueError(f"unknown reading {reading!r}; expected one of {known}")


@dataclass(frozen=True)
class Observation:
    """One piece of evidence.

    Attributes:
        kind: ``reading``, ``vote`` (named voter) or ``anon_vote`` (from a public count).
        target: the subject of a reading / the player voted for.
        value: the reading (``fits``...) or, for votes, the target again.
        source: the reader of a reading (me) / the voter ("" for an anonymous vote).
        seen_by: who saw the underlying event; None = everyone.
    """

    kind: str
    target: str
    value: str
    source: str = ""
    seen_by: frozenset[str] | None = None

    def visible_to(self, viewer: str) -> bool:
        return self.seen_by is None or viewer in self.seen_by

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "target": self.target, "value": self.value, "source": self.source,
                "seen_by": "*" if self.seen_by is None else sorted(self.seen_by)}


class TwoHopBelief:
    """First- and second-hop beliefs about who holds a hidden role.

    Args:
        me: the viewer's name.
        players: every player, ``me`` included, in seat order (ties break by this order).
        alpha: reading noise (see the module docstring), in ``[0, 1]``.
        me_hidden: ``None`` = I do not know my role (keep me in my prior); ``False`` = I know I do
            not hold it; ``True`` = I know I do.
        others_know_self: True when every other player knows whether it holds the role (drop
            ``q`` from ``q``'s prior: we predict what ``q`` thinks as a non-holder).
        vote_ratio: see :data:`VOTE_RATIO`.
    """

    def __init__(self, me: str, players: Iterable[str], alpha: float = DEFAULT_ALPHA,
                 me_hidden: bool | None = None, others_know_self: bool = False,
                 vote_ratio: float = VOTE_RATIO):
        self.players = list(dict.fromkeys(players))
        if me not in self.players:
            raise ValueError(f"{me!r} is not among the players {self.players}")
        if len(self.players) < 2:
            raise ValueError("a hidden-role belief needs at least two players")
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {alpha}")
        if vote_ratio <= 0:
            raise ValueError(f"vote_ratio must be positive, got {vote_ratio}")
        self.me = me
        self.alpha = float(alpha)
        self.me_hidden = me_hidden
        self.others_know_self = others_know_self
        self.vote_ratio = float(vote_ratio)
        self.observations: list[Observation] = []
        self.eliminated: list[str] = []
        self._cache: dict[str, dict[str, float]] = {}

    # -- evidence ----------------------------------------------------------------------------
    def _seen_by(self, public: bool, observer_can_see: Iterable[str] | None) -> frozenset[str] | None:
        if observer_can_see is not None:
            seen = set(observer_can_see)
            if "*" in seen:
                return None
            return frozenset(seen | {self.me})
        return None if public else frozenset({self.me})

    def _check(self, name: str) -> None:
        if name not in self.players:
            raise ValueError(f"{name!r} is not among the players {self.players}")

    def _add(self, obs: Observation) -> int:
        self.observations.append(obs)
        self._cache.clear()
        return len(self.observations) - 1

    def observe_reading(self, subject: str, reading: str, public: bool = True,
                        observer_can_see: Iterable[str] | None = None) -> int:
        """Add my reading of ``subject``'s clue or answer (``fits``/``neutral``/``odd`` or
        ``fine``/``suspicious``).

        ``public``: the event read was seen by everyone (it enters every second hop);
        ``observer_can_see``: who saw it, when only some did (overrides ``public``). A private
        reading (``public=False``) changes only my first hop. Returns the observation index.
        """
        self._check(subject)
        scale_of(reading)
        return self._add(Observation("reading", subject, reading, self.me, self._seen_by(public, observer_can_see)))

    def observe_vote(self, voter: str, target: str, public: bool = True,
                     observer_can_see: Iterable[str] | None = None) -> int:
        """Add ``voter``'s vote for ``target`` (a vote for p is more likely when p holds the role)."""
        self._check(voter)
        self._check(target)
        if voter == target:
            raise ValueError(f"{voter} cannot vote for themselves")
        return self._add(Observation("vote", target, target, voter, self._seen_by(public, observer_can_see)))

    def observe_vote_counts(self, counts: Mapping[str, int], minus: Mapping[str, int] | None = None,
                            public: bool = True) -> int:
        """Add anonymous votes from a public count ``{target: n}``, less the votes already
        observed by name (``minus``). Returns the number of votes added."""
        added = 0
        for target, n in counts.items():
            if target not in self.players:
                continue
            for _ in range(max(0, int(n) - int((minus or {}).get(target, 0)))):
                self._add(Observation("anon_vote", target, target, "", self._seen_by(public, None)))
                added += 1
        return added

    def eliminate(self, player: str) -> None:
        """Public hard evidence: ``player`` does not hold the role (voted out, game went on)."""
        self._check(player)
        if player not in self.eliminated:
            self.eliminated.append(player)
            self._cache.clear()

    def set_role_knowledge(self, me_hidden: bool | None, others_know_self: bool) -> None:
        """Change what the players know about their own roles (see the constructor)."""
        if (self.me_hidden, self.others_know_self) != (me_hidden, others_know_self):
            self.me_hidden, self.others_know_self = me_hidden, others_know_self
            self._cache.clear()

    # -- the networks ------------------------------------------------------------------------
    def prior(self, viewer: str | None = None) -> dict[str, float]:
        """The prior of ``H`` for ``viewer`` (default: me)."""
        viewer = viewer or self.me
        if viewer == self.me and self.me_hidden:
            return {p: float(p == self.me) for p in self.players}
        drop = set(self.eliminated)
        if viewer == self.me and self.me_hidden is False:
            drop.add(self.me)
        if viewer != self.me and self.others_know_self:
            drop.add(viewer)
        keep = [p for p in self.players if p not in drop] or list(self.players)
        return {p: (1.0 / len(keep) if p in keep else 0.0) for p in self.players}

    def _reading_row(self, reading: str, subject: str, reader: str, h: str) -> dict[str, float]:
        scale = scale_of(reading)
        rows = CPTS[scale]
        row = rows["subject"] if h == subject else rows["reader"] if h == reader else rows["other"]
        n = len(SCALES[scale])
        return {s: (1.0 - self.alpha) * row[s] + self.alpha / n for s in SCALES[scale]}

    def _vote_row(self, candidates: list[str], voter: str, h: str) -> dict[str, float]:
        if h == voter or h not in candidates:
            return {c: 1.0 for c in candidates}
        return {c: (self.vote_ratio if c == h else 1.0) for c in candidates}

    def network_nodes(self, viewer: str | None = None) -> tuple[list[Node], dict[str, str]]:
        """The nodes of ``viewer``'s network and the observed values ``{node: state}``."""
        viewer = viewer or self.me
        h_states = list(self.players)
        prior = self.prior(viewer)
        nodes = [Node("H", h_states, table=prior)]
        evidence: dict[str, str] = {}
        for i, ob in enumerate(self.observations):
            if not ob.visible_to(viewer):
                continue
            if ob.kind == "reading":
                if ob.target == viewer:
                    continue  # nobody reads their own clue
                scale = scale_of(ob.value)
                name = f"{'O' if scale == 'fit' else 'A'}{i}"
                nodes.append(Node(name, SCALES[scale], [("H", h_states)],
                                  prob=lambda pv, r=ob.value, s=ob.target: self._reading_row(r, s, viewer, pv[0])))
            elif ob.kind == "vote":
                if ob.source == viewer:
                    continue  # my own vote is no evidence for me
                cands = [p for p in self.players if p != ob.source]
                name = f"V{i}"
                nodes.append(Node(name, cands, [("H", h_states)],
                                  prob=lambda pv, c=cands, v=ob.source: self._vote_row(c, v, pv[0])))
            else:  # anonymous vote
                name = f"W{i}"
                nodes.append(Node(name, h_states, [("H", h_states)],
                                  prob=lambda pv: self._vote_row(h_states, "", pv[0])))
            evidence[name] = ob.value
        return nodes, evidence

    def posterior(self, viewer: str | None = None) -> dict[str, float]:
        """``P(H | evidence viewer saw)``: my belief (default) or the one I predict for ``viewer``.

        Built as a pgmpy Bayesian network and queried exactly by variable elimination.
        """
        viewer = viewer or self.me
        self._check(viewer)
        if viewer not in self._cache:
            nodes, evidence = self.network_nodes(viewer)
            post = query(build(nodes), "H", evidence)
            self._cache[viewer] = {p: post.get(p, 0.0) for p in self.players}
        return dict(self._cache[viewer])

    def others_beliefs(self) -> dict[str, dict[str, float]]:
        """Second hop: ``{q: q's predicted belief}`` for every other player still in the game."""
        return {q: self.posterior(q) for q in self.players if q != self.me and q not in self.eliminated}

    # -- reading the beliefs -----------------------------------------------------------------
    def _argmax(self, dist: Mapping[str, float], among: Iterable[str] | None) -> str | None:
        top = self.leaders(dist, among)
        return top[0] if top else None  # first in seat order on a tie

    def leaders(self, dist: Mapping[str, float], among: Iterable[str] | None = None) -> list[str]:
        """The players of ``among`` (default every player, in that order) that share the top of
        ``dist``. More than one means the MAP is only seat order, not evidence: the block then
        offers no "most likely" to the model."""
        cands = [p for p in (among if among is not None else self.players) if p in dist]
        if not cands:
            return []
        best = max(dist[p] for p in cands)
        return [p for p in cands if dist[p] >= best - 1e-12]

    def most_likely(self, among: Iterable[str] | None = None) -> str | None:
        """My MAP holder of the role (among ``among``, default every player)."""
        return self._argmax(self.posterior(), among)

    def predicted_suspect(self, q: str) -> str | None:
        """Whom I predict ``q`` suspects: the MAP of ``q``'s belief over the other players still
        in the game (``q`` never accuses itself)."""
        self._check(q)
        return self._argmax(self.posterior(q), [p for p in self.players if p != q and p not in self.eliminated])

    def table(self) -> dict[str, Any]:
        """A JSON-able record of both hops (the data of a ``belief_table`` event)."""
        post = self.posterior()
        others = self.others_beliefs()
        return {
            "me": self.me,
            "players": list(self.players),
            "alpha": self.alpha,
            "me_hidden": self.me_hidden,
            "eliminated": list(self.eliminated),
            "n_evidence": len(self.observations),
            "posterior": {p: round(v, 4) for p, v in post.items()},
            "most_likely": self.most_likely(),
            "others": {q: {p: round(v, 4) for p, v in d.items()} for q, d in others.items()},
            "predicted_suspects": {q: self.predicted_suspect(q) for q in others},
            "evidence": [o.as_dict() for o in self.observations],
        }

    def summary(self, lang: str = "en") -> str:
        """A short text of both hops for a prompt."""
        post = self.posterior()
        ranked = sorted((p for p in self.players if p not in self.eliminated), key=lambda p: -post[p])
        dist = ", ".join(f"{p} {post[p]:.2f}" for p in ranked)
        others = self.others_beliefs()
        others = {q: d for q, d in others.items() if self.predicted_suspect(q) is not None
                  and len(self.leaders(d, [p for p in self.players if p != q and p not in self.eliminated])) == 1}
        if lang == "zh":
            lines = [f"贝叶斯网络推断（{len(self.observations)} 条证据）谁是隐藏身份：{dist}。"]
            if others:
                lines.append("其他玩家可能怀疑：" + "；".join(
                    f"{q} 怀疑 {self.predicted_suspect(q)}（{others[q][self.predicted_suspect(q)]:.2f}）" for q in others) + "。")
            return "\n".join(lines)
        lines = [f"Bayesian-network belief about who holds the hidden role ({len(self.observations)} observations): {dist}."]
        if others:
            lines.append("What the others probably think: " + "; ".join(
                f"{q} suspects {self.predicted_suspect(q)} ({others[q][self.predicted_suspect(q)]:.2f})" for q in others) + ".")
        return "\n".join(lines)
