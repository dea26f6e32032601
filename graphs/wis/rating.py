"""Who-is-Spy ratings with uncertainty, from the games stored in the leaderboard database.

The paper ranks agents by rank score = 100 + Σ game scores − games played (WiS §4, computed by
:func:`mas_agents.graphs.wis.metrics.agent_metrics`); that sum says nothing of how sure it is. Beside it, each
agent gets a Weng–Lin Bayesian rating (Weng & Lin 2011, "A Bayesian Approximation Method for
Online Ranking", JMLR 12) with the Plackett–Luce model of the ``openskill`` library: a mean
``mu`` and an uncertainty ``sigma`` (defaults 25 and 25/3), updated game by game.

One game is one match. The agents at the table are its teams: an agent holding several seats
(``plain`` in four of six seats) is one team whose result is the mean score of its seats (a game
record's ``scores``, WiS §3.1 zero-sum scoring), so that the size of a seat group does not change
its result. Teams are ranked by that mean (equal means tie). A game with one agent in every seat
tells nothing about agents relative to each other and is skipped (counted in ``skipped``).
Games are taken in the database's order (tournament, then game index), so the ratings are
reproducible. ``ordinal`` = mu − 3·sigma, a conservative rating that orders the table.

The games rated are one season's (the leaderboard route passes
:meth:`mas_agents.graphs.wis.leaderboard.Leaderboard.games` of one protocol fingerprint):
a rating never pools games played under two protocols (issue 56 item 4).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from mas_agents.graphs.wis.metrics import agent_metrics, player_rows
from mas_agents.graphs.wis.leaderboard import with_score_intervals


def ratings(games: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Rate the agents of ``games`` (game records as stored, ``result.json`` of a WiS game).

    Args:
        games: records with ``players`` (``[{"name", "agent", ...}]``) and ``scores`` (name ->
            points).

    Returns:
        ``{"rows": [{"agent", "mu", "sigma", "ordinal", "games"}...] sorted by ordinal,
        "rated": games used, "skipped": games with a single agent or no scores, "model":
        "Plackett-Luce (openskill)"}``.

    Raises:
        KeyError: a record without ``players``.
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    current: dict[str, Any] = {}
    played: dict[str, int] = defaultdict(int)
    rated = skipped = 0
    for g in games:
        scores = g.get("scores") or {}
        seats: dict[str, list[float]] = defaultdict(list)
        for p in g["players"]:
            if p["name"] in scores:
                seats[str(p["agent"])].append(float(scores[p["name"]]))
        if len(seats) < 2:
            skipped += 1
            continue
        agents = sorted(seats)
        teams = [[current.get(a) or model.rating(name=a)] for a in agents]
        means = [sum(seats[a]) / len(seats[a]) for a in agents]
        new = model.rate(teams, scores=means)
        for a, team in zip(agents, new):
            current[a] = team[0]
            played[a] += 1
        rated += 1
    rows = [{"agent": a, "mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal(), "games": played[a]}
            for a, r in current.items()]
    rows.sort(key=lambda r: (-r["ordinal"], r["agent"]))
    return {"rows": rows, "rated": rated, "skipped": skipped, "model": "Plackett-Luce (openskill)"}


# ---------------------------------------------------------------------- intervals of the rank table

Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval (95 % by default) of a proportion ``k / n``; None when ``n`` is 0.

    Wilson (1927), "Probable inference, the law of succession, and statistical inference", JASA 22.
    Unlike the normal (Wald) interval it stays inside [0, 1] and is not of width 0 at 0 % or
    100 %, which matters with a handful of games."""
    if n <= 0:
        return None
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5 / den
    return max(0.0, mid - half), min(1.0, mid + half)


def t_interval(xs: list[float], level: float = 0.95) -> tuple[float, float] | None:
    """Student-t interval of the mean of ``xs``; None with fewer than 2 values."""
    import statistics

    from scipy.stats import t
    n = len(xs)
    if n < 2:
        return None
    m, sd = statistics.fmean(xs), statistics.stdev(xs)
    half = float(t.ppf((1 + level) / 2, n - 1)) * sd / n ** 0.5
    return m - half, m + half


def rank_table(games: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The leaderboard's rows with intervals, from stored game records.

    Per agent (one row per seat it held, :func:`mas_agents.graphs.wis.metrics.player_rows`): ``rank_score``
    (WiS §4), ``avg_score`` (n = seats) with the percentile-bootstrap 95 % interval of
    :func:`mas_agents.graphs.wis.leaderboard.with_score_intervals` (whole games resampled, so
    an agent's seats in one game move together; it stays within the scores seen),
    win rates as spy and as civilian, vote accuracy (a civilian's votes naming the spy) and foul
    rate (fouls per description), each ``{"rate", "k", "n", "low", "high"}`` with a Wilson 95 %
    interval. The votes and descriptions of one seat, and the seats of one game, are not
    independent, so the Wilson intervals are somewhat too narrow for agents holding several seats
    of a game; they say how few games a number rests on.
    """
    games = list(games)
    seats: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for g in games:
        for r in player_rows(g):
            seats[str(r["agent"])].append(r)

    def prop(k: int, n: int) -> dict[str, Any]:
        iv = wilson(k, n)
        return {"rate": k / n if n else None, "k": k, "n": n, "low": iv[0] if iv else None, "high": iv[1] if iv else None}

    out = []
    for m in with_score_intervals(agent_metrics(games), games):   # the same interval as the CLI's
        rows = seats[m["agent"]]
        spy = [r for r in rows if r["role"] == "spy"]
        civ = [r for r in rows if r["role"] != "spy"]
        out.append({
            "agent": m["agent"], "seats": len(rows), "rank_score": m["rank_score"],
            "avg_score": {"mean": m["avg_score"], "n": len(rows), "low": m["avg_score_low"],
                          "high": m["avg_score_high"]},
            "win_spy": prop(sum(r["won"] for r in spy), len(spy)),
            "win_civilian": prop(sum(r["won"] for r in civ), len(civ)),
            "vote_accuracy": prop(m["correct_votes"], m["votes_cast_as_civilian"]),
            "foul_rate": prop(m["fouls"], m["descriptions"]),
            "avg_survival": m["avg_survival_rounds"],
        })
    ranks: list[int] = []
    for i, r in enumerate(out):
        ranks.append(ranks[-1] if i and r["rank_score"] == out[i - 1]["rank_score"] else i + 1)
    for rank, r in zip(ranks, out):
        r["rank"] = rank
    return out
