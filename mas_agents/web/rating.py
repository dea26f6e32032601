"""Who-is-Spy ratings with uncertainty, from the games stored in the leaderboard database.

The paper ranks agents by rank score = 100 + Σ game scores − games played (WiS §4, computed by
:func:`eval.metrics.wis.agent_metrics`); that sum says nothing of how sure it is. Beside it, each
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
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable


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
