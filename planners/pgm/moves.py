"""Predicting the next moves of the repeated MAgIC games with a learned Bayesian network.

For the Prisoner's Dilemma (moves ``cooperate``/``defect``) and the Public Good game (each
round's contribution discretised to ``low``/``mid``/``high`` by :func:`pg_level`), MAgIC's
PGM-aware agent reasons about what the others will do (first hop) and what they expect of it
(second hop). :class:`MovePredictor` builds one pgmpy network from the revealed history::

    Last_q ──┐
             ├──> Next_q      q's next move, given q's last move and how many of the others
    K_q   ───┘                (me included) played the "bad" move (defect / low) last round
    MyLast ──┐
             ├──> Expect_q    what q expects of me: my next move given my last move and q's
    Last_q ──┘                last move (q sees my revealed moves, so it can learn my rule)

Every CPT is learned from the transitions in the history (round t-1 -> round t) by counting,
with Laplace smoothing ``alpha`` (default 1) and a back-off to the player's overall move
frequencies with weight ``backoff`` (default 2), so that a cell seen once or never still follows
what the player usually does::

    P(m | cell) = (N(cell, m) + backoff · f(m) + alpha) / (N(cell) + backoff + alpha · |moves|)
    f(m)        = (N(player played m) + alpha) / (N(rounds) + alpha · |moves|)

The root nodes (``Last_q``, ``K_q``, ``MyLast``) get the smoothed empirical frequencies; the last
round is entered as evidence and every ``Next_q`` / ``Expect_q`` is queried exactly by variable
elimination. With no history every prediction is uniform. After three rounds in which q defected,
``P(Next_q = defect) = (2 + 2·0.8 + 1) / (2 + 2 + 2) ≈ 0.77``.

:meth:`MovePredictor.best_response` maximises my expected payoff with the others' predicted moves
taken as independent. :func:`pd_payoff_fn` and :func:`pg_payoff_fn` turn a game's public payoff
description into a payoff function; they restate the MAgIC rules (a planner block never imports
a game module).
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any, Callable, Iterable, Mapping, Sequence

from mas_agents.planners.pgm._bn import Node, build, query

PD_MOVES = ("cooperate", "defect")
PG_MOVES = ("low", "mid", "high")
#: Public-good discretisation: an amount below the first threshold is ``low``, below the second
#: ``mid``, else ``high`` (the fair share of 100 over 5 rounds is 20 a round).
PG_THRESHOLDS = (10, 30)
#: The amount each public-good level stands for when payoffs are computed.
PG_LEVEL_AMOUNTS = {"low": 0, "mid": 20, "high": 40}


def pg_level(amount: float | None, thresholds: tuple[float, float] = PG_THRESHOLDS) -> str | None:
    """The level (``low``/``mid``/``high``) of a public-good contribution; None stays None."""
    if amount is None:
        return None
    a = float(amount)
    return "low" if a < thresholds[0] else "mid" if a < thresholds[1] else "high"


def pd_payoff_fn(table: Mapping[str, float]) -> Callable[[str, Mapping[str, str]], float]:
    """My payoff in one round of the MAgIC prisoner's dilemma from its public payoff table.

    ``table`` has ``cooperate`` (all cooperate, each), ``defect`` (all defect, each),
    ``one_defect`` (the only defector), ``two_defect`` (each of two defectors); cooperators
    facing any defector get 0 (MAgIC's 3-player table; with more players "two" means "several").

    Raises:
        ValueError: a key is missing.
    """
    missing = [k for k in ("cooperate", "defect", "one_defect", "two_defect") if k not in table]
    if missing:
        raise ValueError(f"payoff table lacks {', '.join(missing)}")

    def payoff(my_move: str, others: Mapping[str, str]) -> float:
        moves = [my_move, *others.values()]
        k = sum(m == "defect" for m in moves)
        if k == 0:
            return float(table["cooperate"])
        if k == len(moves):
            return float(table["defect"])
        if my_move != "defect":
            return 0.0
        return float(table["one_defect"] if k == 1 else table["two_defect"])
    return payoff


def pg_payoff_fn(multiplier: float, n_players: int | None = None,
                 amounts: Mapping[str, float] = PG_LEVEL_AMOUNTS) -> Callable[[str, Mapping[str, str]], float]:
    """My payoff from one public-good round at the given levels: ``-mine + multiplier · pool / n``
    (the MAgIC final holding, one round's share of it)."""
    def payoff(my_move: str, others: Mapping[str, str]) -> float:
        n = n_players or (len(others) + 1)
        pool = amounts[my_move] + sum(amounts[m] for m in others.values())
        return -float(amounts[my_move]) + float(multiplier) * pool / n
    return payoff


class MovePredictor:
    """First hop (others' next moves) and second hop (what they expect of me), learned online.

    Args:
        me: my name.
        players: every player, me included.
        moves: the discrete moves (``PD_MOVES`` or ``PG_MOVES``).
        bad: the uncooperative move counted by ``K_q`` (default ``defect`` if a move, else the
            first move, e.g. ``low``).
        alpha: Laplace smoothing.
        backoff: weight of the back-off to a player's overall move frequencies.
    """

    def __init__(self, me: str, players: Iterable[str], moves: Sequence[str] = PD_MOVES,
                 bad: str | None = None, alpha: float = 1.0, backoff: float = 2.0):
        self.players = list(dict.fromkeys(players))
        if me not in self.players:
            raise ValueError(f"{me!r} is not among the players {self.players}")
        self.me = me
        self.others = [p for p in self.players if p != me]
        self.moves = [str(m) for m in moves]
        if len(self.moves) < 2:
            raise ValueError("need at least two moves")
        self.bad = bad if bad is not None else ("defect" if "defect" in self.moves else self.moves[0])
        if self.bad not in self.moves:
            raise ValueError(f"bad move {self.bad!r} is not one of {self.moves}")
        if alpha <= 0 or backoff < 0:
            raise ValueError("alpha must be positive and backoff non-negative")
        self.alpha = float(alpha)
        self.backoff = float(backoff)
        self.history: list[dict[str, str | None]] = []
        self._cache: tuple[dict, dict] | None = None

    # -- data --------------------------------------------------------------------------------
    def update(self, round_moves: Mapping[str, str | None]) -> None:
        """Add one revealed round ``{name: move}`` (an unknown move or a missing name = None)."""
        row = {p: (round_moves.get(p) if round_moves.get(p) in self.moves else None) for p in self.players}
        self.history.append(row)
        self._cache = None

    def _k(self, row: Mapping[str, str | None], q: str) -> int:
        """How many players other than ``q`` played the bad move in ``row``."""
        return sum(1 for p in self.players if p != q and row.get(p) == self.bad)

    def _freq(self, player: str) -> dict[str, float]:
        c = Counter(r[player] for r in self.history if r.get(player) is not None)
        total = sum(c.values())
        return {m: (c[m] + self.alpha) / (total + self.alpha * len(self.moves)) for m in self.moves}

    def _learned(self, player: str, cell_of: Callable[[dict], tuple | None]) -> Callable[[tuple], dict[str, float]]:
        """The CPT ``P(player's next move | cell of the previous round)`` as a row function."""
        counts: dict[tuple, Counter] = {}
        for prev, cur in zip(self.history, self.history[1:]):
            cell = cell_of(prev)
            if cell is None or cur.get(player) is None:
                continue
            counts.setdefault(cell, Counter())[cur[player]] += 1
        f = self._freq(player)
        a, w, n = self.alpha, self.backoff, len(self.moves)

        def row(pv: tuple) -> dict[str, float]:
            c = counts.get(tuple(pv), Counter())
            total = sum(c.values())
            return {m: (c[m] + w * f[m] + a) / (total + w + a * n) for m in self.moves}
        return row

    def _k_states(self) -> list[str]:
        return [str(i) for i in range(len(self.players))]  # 0..n-1 (never more than n-1 others)

    def network(self) -> tuple[Any, dict[str, str], dict[str, tuple[str, str]]]:
        """``(model, evidence, names)``: the pgmpy network, the last round as evidence, and for
        each other player ``q`` the names of its ``(Next_q, Expect_q)`` nodes."""
        ks = self._k_states()
        nodes: list[Node] = [Node("MyLast", self.moves, table=self._freq(self.me))]
        names: dict[str, tuple[str, str]] = {}
        for i, q in enumerate(self.others):
            last, k, nxt, exp = f"Last_{i}", f"K_{i}", f"Next_{i}", f"Expect_{i}"
            kc = Counter(str(self._k(r, q)) for r in self.history)
            kprior = {s: kc[s] + self.alpha for s in ks}
            nodes += [
                Node(last, self.moves, table=self._freq(q)),
                Node(k, ks, table=kprior),
                Node(nxt, self.moves, [(last, self.moves), (k, ks)],
                     prob=self._learned(q, lambda r, q=q: (r[q], str(self._k(r, q))) if r.get(q) is not None else None)),
                Node(exp, self.moves, [("MyLast", self.moves), (last, self.moves)],
                     prob=self._learned(self.me, lambda r, q=q: (r[self.me], r[q])
                                        if r.get(self.me) is not None and r.get(q) is not None else None)),
            ]
            names[q] = (nxt, exp)
        evidence: dict[str, str] = {}
        if self.history:
            prev = self.history[-1]
            if prev.get(self.me) is not None:
                evidence["MyLast"] = prev[self.me]
            for i, q in enumerate(self.others):
                if prev.get(q) is not None:
                    evidence[f"Last_{i}"] = prev[q]
                evidence[f"K_{i}"] = str(self._k(prev, q))
        return build(nodes), evidence, names

    def _predictions(self) -> tuple[dict, dict]:
        if self._cache is None:
            model, evidence, names = self.network()
            pred = {q: query(model, nxt, evidence) for q, (nxt, _) in names.items()}
            exp = {q: query(model, e, evidence) for q, (_, e) in names.items()}
            self._cache = (pred, exp)
        return self._cache

    # -- the hops ----------------------------------------------------------------------------
    def predict(self) -> dict[str, dict[str, float]]:
        """First hop: ``{q: {move: P(q plays move next round)}}``."""
        return {q: dict(d) for q, d in self._predictions()[0].items()}

    def expects_of_me(self) -> dict[str, dict[str, float]]:
        """Second hop: ``{q: {move: P(q expects me to play move)}}``."""
        return {q: dict(d) for q, d in self._predictions()[1].items()}

    def expected_payoffs(self, payoff_fn: Callable[[str, Mapping[str, str]], float]) -> dict[str, float]:
        """``{my move: expected payoff}`` with the others' predicted moves independent."""
        pred = self.predict()
        out = {}
        for mine in self.moves:
            total = 0.0
            for combo in itertools.product(self.moves, repeat=len(self.others)):
                prob = 1.0
                for q, m in zip(self.others, combo):
                    prob *= pred[q][m]
                if prob > 0:
                    total += prob * float(payoff_fn(mine, dict(zip(self.others, combo))))
            out[mine] = total
        return out

    def best_response(self, payoff_fn: Callable[[str, Mapping[str, str]], float]) -> str:
        """My move maximising the expected payoff (first in ``moves`` order on a tie)."""
        ev = self.expected_payoffs(payoff_fn)
        best = max(ev.values())
        return next(m for m in self.moves if ev[m] >= best - 1e-12)

    def table(self) -> dict[str, Any]:
        """A JSON-able record of both hops."""
        r4 = lambda d: {k: round(v, 4) for k, v in d.items()}  # noqa: E731
        return {"me": self.me, "moves": list(self.moves), "bad": self.bad, "rounds": len(self.history),
                "history": [dict(r) for r in self.history],
                "predict": {q: r4(d) for q, d in self.predict().items()},
                "expects_of_me": {q: r4(d) for q, d in self.expects_of_me().items()}}

    def summary(self, lang: str = "en") -> str:
        """A short text of both hops for a prompt."""
        fmt = lambda d: ", ".join(f"{m} {d[m]:.2f}" for m in sorted(d, key=lambda m: -d[m]))  # noqa: E731
        pred, exp = self.predict(), self.expects_of_me()
        if lang == "zh":
            return (f"贝叶斯网络根据已公开的 {len(self.history)} 轮预测其他玩家下一轮：" +
                    "；".join(f"{q}: {fmt(pred[q])}" for q in self.others) + "。\n他们对你的预期：" +
                    "；".join(f"{q}: {fmt(exp[q])}" for q in self.others) + "。")
        return (f"Bayesian-network prediction of the next moves, learned from {len(self.history)} revealed rounds: " +
                "; ".join(f"{q}: {fmt(pred[q])}" for q in self.others) + ".\nWhat they expect of you: " +
                "; ".join(f"{q}: {fmt(exp[q])}" for q in self.others) + ".")
