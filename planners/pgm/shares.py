"""Two-hop beliefs about acceptable shares in a cost-sharing negotiation, as exact Bayesian networks.

The game (MAgIC, arXiv 2311.08562, §3 "Cost Sharing", the airport-fee scenario, and Appendix A;
our rules are :mod:`mas_agents.graphs.magic.rules`, but a block never imports a game): the parties split a
fixed fee. Each round every party *proposes* a split (a share per party, in percent, summing to
100, listed in seat order) and then *votes* publicly for one proposal, named by its proposer;
the negotiation succeeds when all votes go to identical splits. MAgIC's Cooperation metric is
the rate of agreement and its Coordination metric the rate at which the agreed split is the
test agent's own latest proposal (§4), so the agent gains by proposing what the others will
accept. The paper's PGM-aware agent reasons in two hops (what the others think; what they
think of me, §3/§4) but describes them in words; **everything below (the variables, the CPTs,
the grid, every number, the objective) is our own modelling.**

A share is discretised to :data:`LEVELS` (0, 5, ..., 100 percent; :func:`level` rounds to the
nearest). Each other party ``q`` gets its own network (first hop)::

    T   ∈ LEVELS            the highest share of the fee q accepts to pay (root, uniform prior)
    X_k ∈ LEVELS            the share q's k-th proposal asks q itself to pay      (child of T)
    V_k ∈ ballot proposers  q's k-th vote, among that round's valid proposals     (child of T)

and, for the second hop, what ``q`` believes *I* accept::

    M   ∈ LEVELS            my highest acceptable share as q estimates it (root, uniform prior)
    X_k, V_k                my own public proposals and votes, read as I read q's  (children of M)
    Y_k ∈ LEVELS            the share q's k-th proposal asks ME to pay             (child of M)

CPTs (ours; assumptions, not fitted):

* **A proposal haggles a little below the limit** (``X``): a party never asks itself to pay more
  than it accepts, and asks for a margin below its limit that is 0, 5, 10... points with
  weights 1, ``decay``, ``decay²``... (:data:`MARGIN_DECAY` = 0.5):
  ``P(X = x | T = t) ∝ decay^((t - x) / 5)`` for ``x ≤ t``, 0 above. So a party that proposes to
  pay 25 % is believed to accept 25 % (p ≈ .5), 30 % (≈ .25), 35 % (≈ .12)...; a later, higher
  own share (a concession) moves the belief up.
* **A vote goes to an acceptable proposal** (``V``): uniform over the proposals on the ballot
  whose share for the voter is at most ``t`` (uniform over all when none is). A vote for a
  proposal asking ``s`` of the voter makes ``T ≥ s`` likely; passing over (*rejecting*) one that
  asks ``s'`` for another makes every ``T ≥ s'`` half as likely when two were acceptable.
* **q asks me for about what it thinks I accept** (``Y``): ``P(Y = y | M = m) ∝ decay^(|y - m| / 5)``.
  q reads my proposals and votes with the same CPTs as I read q's (q sees them: they are public).
* **Noise.** Every CPT is mixed with the uniform distribution: ``(1 - alpha) · row + alpha / n``
  (``alpha`` = :data:`DEFAULT_ALPHA` = 0.1), so no single observation is ever decisive.

Every observation adds one observed node; ``P(T | evidence)`` / ``P(M | evidence)`` are queried
exactly by variable elimination (pgmpy, :mod:`mas_agents.planners.pgm._bn`).

**The implied proposal** (:meth:`ShareBelief.implied_split`): over every split on the grid, the
one maximising ``P(every other party accepts) · (fail - my share)``, the others' first hops taken
as independent: ``P(all accept) = Π_q P(T_q ≥ s_q)``. ``fail`` (:data:`FAIL_SHARE` = 100) values a
failed negotiation as paying the whole fee, the rules' "an agreement is better for everyone than
none" made a number (ours). **The vote suggestion** (:meth:`ShareBelief.vote_scores`) is the
ballot proposal maximising ``P(every other party votes for that split) · (fail - my share)``
with the vote CPT above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from mas_agents.planners.pgm._bn import Node, build, query

#: Grid step of a share, in percentage points.
STEP = 5
#: The discrete share levels (percent of the fee).
LEVELS: tuple[int, ...] = tuple(range(0, 101, STEP))
#: Weight ratio of each further ``STEP`` of haggling margin (and of distance in ``Y``).
MARGIN_DECAY = 0.5
#: Default noise: weight of the uniform distribution in every CPT.
DEFAULT_ALPHA = 0.1
#: What a failed negotiation is worth in the objective: paying this share of the fee.
FAIL_SHARE = 100.0
_STATES = [str(v) for v in LEVELS]


def level(share: float) -> int:
    """The grid level nearest to ``share`` (percent), clamped to 0..100 (halves round up)."""
    return int(min(100, max(0, STEP * math.floor(float(share) / STEP + 0.5))))


@dataclass(frozen=True)
class ShareObservation:
    """One public act of one party.

    Attributes:
        kind: ``proposal`` or ``vote``.
        actor: who proposed / voted.
        round: the negotiation round.
        split: the proposed split (``proposal``) or the split voted for (``vote``), in seat order.
        target: the proposer voted for (``vote``).
        ballot: ``{proposer: split}`` of every valid proposal of that round (``vote``).
    """

    kind: str
    actor: str
    round: int
    split: tuple[float, ...]
    target: str = ""
    ballot: tuple[tuple[str, tuple[float, ...]], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "actor": self.actor, "round": self.round, "split": list(self.split)}
        if self.kind == "vote":
            out["for"] = self.target
        return out


class ShareBelief:
    """First hop (the share each other party accepts) and second hop (what each thinks I accept).

    Args:
        me: my name.
        players: every party in seat order (the order of the shares in a split), me included.
        alpha: CPT noise (module docstring), in ``[0, 1]``.
        decay: :data:`MARGIN_DECAY`, in ``(0, 1]``.
        fail: :data:`FAIL_SHARE`.
    """

    def __init__(self, me: str, players: Iterable[str], alpha: float = DEFAULT_ALPHA,
                 decay: float = MARGIN_DECAY, fail: float = FAIL_SHARE):
        self.players = list(dict.fromkeys(players))
        if me not in self.players:
            raise ValueError(f"{me!r} is not among the players {self.players}")
        if len(self.players) < 2:
            raise ValueError("a cost-sharing belief needs at least two parties")
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {alpha}")
        if not 0.0 < decay <= 1.0:
            raise ValueError(f"decay must be in (0, 1], got {decay}")
        self.me = me
        self.others = [p for p in self.players if p != me]
        self.alpha, self.decay, self.fail = float(alpha), float(decay), float(fail)
        self.observations: list[ShareObservation] = []
        self._cache: dict[tuple[str, str], dict[int, float]] = {}

    # -- evidence ----------------------------------------------------------------------------
    def _split(self, split: Sequence[float] | None) -> tuple[float, ...] | None:
        if split is None or len(split) != len(self.players):
            return None
        try:
            out = tuple(float(x) for x in split)
        except (TypeError, ValueError):
            return None
        return out if all(math.isfinite(x) and x >= 0 for x in out) else None

    def _check(self, name: str) -> None:
        if name not in self.players:
            raise ValueError(f"{name!r} is not among the players {self.players}")

    def observe_proposal(self, proposer: str, split: Sequence[float] | None, round: int = 0) -> bool:
        """Add ``proposer``'s proposal (shares in seat order); a missing or malformed split is
        ignored. Returns whether it was added."""
        self._check(proposer)
        s = self._split(split)
        if s is None:
            return False
        self.observations.append(ShareObservation("proposal", proposer, int(round), s))
        self._cache.clear()
        return True

    def observe_vote(self, voter: str, target: str | None, ballot: Mapping[str, Sequence[float] | None],
                     round: int = 0) -> bool:
        """Add ``voter``'s vote for ``target``'s proposal among ``ballot`` (``{proposer: split}``
        of the round; proposals that are None are not on it). A vote for nobody, or for a
        proposal not on the ballot, is ignored. Returns whether it was added."""
        self._check(voter)
        valid = tuple((p, s) for p, s in ((p, self._split(x)) for p, x in ballot.items()) if s is not None)
        chosen = dict(valid).get(target or "")
        if chosen is None:
            return False
        self.observations.append(ShareObservation("vote", voter, int(round), chosen, target=str(target), ballot=valid))
        self._cache.clear()
        return True

    # -- CPT rows ----------------------------------------------------------------------------
    def _noisy(self, row: Mapping[str, float], states: Sequence[str]) -> dict[str, float]:
        total = sum(row.get(s, 0.0) for s in states)
        base = {s: (row.get(s, 0.0) / total if total > 0 else 1.0 / len(states)) for s in states}
        return {s: (1.0 - self.alpha) * base[s] + self.alpha / len(states) for s in states}

    def proposal_row(self, t: int) -> dict[str, float]:
        """``P(X | T = t)``: the own share proposed by a party whose limit is ``t``."""
        return self._noisy({str(x): self.decay ** ((t - x) / STEP) for x in LEVELS if x <= t}, _STATES)

    def vote_row(self, ob: ShareObservation, t: int, voter: str) -> dict[str, float]:
        """``P(V | T = t)``: uniform over the ballot proposals that ask ``voter`` for at most ``t``."""
        i = self.players.index(voter)
        names = [p for p, _ in ob.ballot]
        ok = {p: 1.0 for p, s in ob.ballot if level(s[i]) <= t}
        return self._noisy(ok, names)

    def asked_row(self, m: int) -> dict[str, float]:
        """``P(Y | M = m)``: the share a party asks me to pay when it thinks I accept ``m``."""
        return self._noisy({str(y): self.decay ** (abs(y - m) / STEP) for y in LEVELS}, _STATES)

    # -- the networks ------------------------------------------------------------------------
    def _acts_of(self, party: str, root: str, nodes: list[Node], evidence: dict[str, str]) -> None:
        """Add ``party``'s own proposals (``X``) and votes (``V``) as children of ``root``."""
        i = self.players.index(party)
        parent = [(root, _STATES)]
        for k, ob in enumerate(self.observations):
            if ob.actor != party:
                continue
            if ob.kind == "proposal":
                name = f"X{k}"
                nodes.append(Node(name, _STATES, parent, prob=lambda pv: self.proposal_row(int(pv[0]))))
                evidence[name] = str(level(ob.split[i]))
            else:
                name = f"V{k}"
                nodes.append(Node(name, [p for p, _ in ob.ballot], parent,
                                  prob=lambda pv, ob=ob: self.vote_row(ob, int(pv[0]), party)))
                evidence[name] = ob.target

    def network_nodes(self, q: str, hop: int = 1) -> tuple[list[Node], dict[str, str]]:
        """The nodes and evidence of ``q``'s first-hop network (``hop=1``, root ``T``) or of the
        second-hop network of what ``q`` believes I accept (``hop=2``, root ``M``)."""
        self._check(q)
        if q == self.me:
            raise ValueError("the networks are about the other parties")
        root = "T" if hop == 1 else "M"
        nodes = [Node(root, _STATES, table={s: 1.0 for s in _STATES})]
        evidence: dict[str, str] = {}
        if hop == 1:
            self._acts_of(q, root, nodes, evidence)
            return nodes, evidence
        self._acts_of(self.me, root, nodes, evidence)
        me_i = self.players.index(self.me)
        for k, ob in enumerate(self.observations):
            if ob.actor == q and ob.kind == "proposal":
                name = f"Y{k}"
                nodes.append(Node(name, _STATES, [(root, _STATES)], prob=lambda pv: self.asked_row(int(pv[0]))))
                evidence[name] = str(level(ob.split[me_i]))
        return nodes, evidence

    def _posterior(self, q: str, hop: int) -> dict[int, float]:
        key = (q, "T" if hop == 1 else "M")
        if key not in self._cache:
            nodes, evidence = self.network_nodes(q, hop)
            post = query(build(nodes), key[1], evidence)
            self._cache[key] = {v: post.get(str(v), 0.0) for v in LEVELS}
        return dict(self._cache[key])

    def limit(self, q: str) -> dict[int, float]:
        """First hop: ``{level: P(the highest share q accepts is level)}``."""
        return self._posterior(q, 1)

    def expects_of_me(self, q: str) -> dict[int, float]:
        """Second hop: ``{level: P(q believes the highest share I accept is level)}``."""
        return self._posterior(q, 2)

    def evidence_count(self, q: str, hop: int = 1) -> int:
        """How many observed nodes ``q``'s network of that hop has."""
        return len(self.network_nodes(q, hop)[1])

    # -- reading the beliefs -----------------------------------------------------------------
    def accept_prob(self, q: str, share: float) -> float:
        """``P(q accepts paying share)`` = ``P(T_q ≥ level(share))``."""
        lv = level(share)
        return sum(p for v, p in self.limit(q).items() if v >= lv)

    @staticmethod
    def mean(dist: Mapping[int, float]) -> float:
        return sum(v * p for v, p in dist.items())

    @staticmethod
    def mode(dist: Mapping[int, float]) -> int:
        best = max(dist.values())
        return next(v for v in LEVELS if dist.get(v, 0.0) >= best - 1e-12)

    def implied_split(self) -> tuple[tuple[int, ...], float, dict[str, float]]:
        """The split the first hops imply (module docstring): ``(shares in seat order, P(every
        other party accepts), {q: P(q accepts its share)})``. Ties go to the higher acceptance
        probability, then to the first split in grid order."""
        me_i = self.players.index(self.me)
        acc = {q: {v: self.accept_prob(q, v) for v in LEVELS} for q in self.others}
        best: tuple[float, float, tuple[int, ...]] | None = None
        n = len(self.players)
        for split in _grid_splits(n):
            p_all = 1.0
            for j, q in enumerate(self.players):
                if q != self.me:
                    p_all *= acc[q][split[j]]
            score = p_all * (self.fail - split[me_i])
            if best is None or score > best[0] + 1e-12 or (abs(score - best[0]) <= 1e-12 and p_all > best[1] + 1e-12):
                best = (score, p_all, split)
        assert best is not None
        split = best[2]
        return split, best[1], {q: acc[q][split[self.players.index(q)]] for q in self.others}

    def vote_probs(self, q: str, ballot: Mapping[str, Sequence[float] | None]) -> dict[str, float]:
        """``{proposer: P(q votes for that proposal)}`` over ``ballot``, from q's first hop and the
        vote CPT (the ballot as a hypothetical vote of q)."""
        valid = tuple((p, s) for p, s in ((p, self._split(x)) for p, x in ballot.items()) if s is not None)
        if not valid:
            return {}
        ob = ShareObservation("vote", q, 0, valid[0][1], target=valid[0][0], ballot=valid)
        dist = self.limit(q)
        out = {p: 0.0 for p, _ in valid}
        for t, pt in dist.items():
            row = self.vote_row(ob, t, q)
            for p in out:
                out[p] += pt * row[p]
        return out

    def vote_scores(self, ballot: Mapping[str, Sequence[float] | None]) -> dict[str, tuple[float, float]]:
        """``{proposer: (P(every other party votes for that split), score)}``: a vote for any
        proposal with the identical split counts for it; score = P · (fail - my share)."""
        valid = {p: s for p, s in ((p, self._split(x)) for p, x in ballot.items()) if s is not None}
        probs = {q: self.vote_probs(q, valid) for q in self.others}
        me_i = self.players.index(self.me)
        out = {}
        for r, split in valid.items():
            same = [p for p, s in valid.items() if s == split]
            p_all = math.prod(sum(probs[q][p] for p in same) for q in self.others)
            out[r] = (p_all, p_all * (self.fail - split[me_i]))
        return out

    def vote_suggestion(self, ballot: Mapping[str, Sequence[float] | None]) -> str | None:
        """The ballot proposer with the best :meth:`vote_scores` score (first on a tie); None
        for an empty ballot."""
        scores = self.vote_scores(ballot)
        if not scores:
            return None
        best = max(s for _, s in scores.values())
        return next(p for p, (_, s) in scores.items() if s >= best - 1e-12)

    def table(self) -> dict[str, Any]:
        """A JSON-able record of both hops and the implied split (a ``belief_table``'s data)."""
        r4 = lambda d: {str(k): round(v, 4) for k, v in d.items()}  # noqa: E731
        split, p_all, each = self.implied_split()
        return {
            "me": self.me, "players": list(self.players), "alpha": self.alpha, "decay": self.decay,
            "levels": list(LEVELS), "n_evidence": len(self.observations),
            "limits": {q: r4(self.limit(q)) for q in self.others},
            "limit_mean": {q: round(self.mean(self.limit(q)), 2) for q in self.others},
            "expects_of_me": {q: r4(self.expects_of_me(q)) for q in self.others},
            "expects_of_me_mean": {q: round(self.mean(self.expects_of_me(q)), 2) for q in self.others},
            "implied_split": list(split), "implied_p_all": round(p_all, 4),
            "implied_p_each": {q: round(p, 4) for q, p in each.items()},
            "evidence": [o.as_dict() for o in self.observations],
        }

    def summary(self, lang: str = "en", labels: Sequence[str] | None = None) -> str:
        """A short text of both hops and the implied split for a prompt; ``labels`` name the
        shares of a split in seat order (default: the players)."""
        labels = list(labels) if labels and len(labels) == len(self.players) else list(self.players)
        split, p_all, each = self.implied_split()
        firsts = [(q, self.mean(self.limit(q)), self.mode(self.limit(q))) for q in self.others]
        seconds = [(q, self.mean(self.expects_of_me(q))) for q in self.others if self.evidence_count(q, 2)]
        parts = ", ".join(f"{lab}: {v}%" for lab, v in zip(labels, split))
        odds = ", ".join(f"{q} {each[q]:.2f}" for q in self.others)
        if lang == "zh":
            lines = [f"贝叶斯网络根据 {len(self.observations)} 个公开的提议和投票，估计每方最多愿意承担的份额：" +
                     "；".join(f"{q} 约 {m:.0f}%（最可能 {mo}%）" for q, m, mo in firsts) + "。"]
            if seconds:
                lines.append("他们可能认为你最多愿意承担：" + "；".join(f"{q} 约 {m:.0f}%" for q, m in seconds) + "。")
            lines.append(f"按这些信念，对你最有利且最可能被接受的分摊：{parts}（各方接受的概率：{odds}；全部接受 {p_all:.2f}）。")
            return "\n".join(lines)
        lines = [f"Bayesian-network estimate, from {len(self.observations)} public proposals and votes, of the "
                 "highest share of the fee each other party will accept to pay: " +
                 "; ".join(f"{q} about {m:.0f}% (most likely {mo}%)" for q, m, mo in firsts) + "."]
        if seconds:
            lines.append("What they probably think you will accept: " +
                         "; ".join(f"{q} about {m:.0f}%" for q, m in seconds) + ".")
        lines.append(f"The split these beliefs imply (best for you among those likely to be accepted): {parts} "
                     f"(P(accepts): {odds}; all {p_all:.2f}).")
        return "\n".join(lines)


def _grid_splits(n: int) -> Iterable[tuple[int, ...]]:
    """Every split of 100 into ``n`` grid levels, in lexicographic order."""
    def rec(k: int, left: int) -> Iterable[tuple[int, ...]]:
        if k == 1:
            yield (left,)
            return
        for v in range(0, left + 1, STEP):
            for rest in rec(k - 1, left - v):
                yield (v, *rest)
    return rec(n, 100)
