"""Per-agent metrics of Who is Spy? (WiS) games, computed from game records (no I/O).

A game record is a ``result.json`` dict as described in :mod:`mas_agents.graphs.wis.rules`. An *agent* is
the ``agent`` label of a seat (a spec such as ``plain+reasoning`` or a URL); several seats of one
game may hold the same agent.

Where the definitions come from:

* Scores, wins and the rank score follow the WiS paper (Hu et al. 2024, arXiv 2412.03359):
  zero-sum game scores per Appendix A (taken as recorded in ``scores``), win rates by role and
  average scores as reported in §4.1, and rank score = 100 + Σ game scores − number of games
  (§3.5, :func:`mas_agents.graphs.wis.rules.rank_score`).
* Vote accuracy (share of a civilian's votes that name the spy) and foul rate (share of
  descriptions the judge ruled a foul) are the attack/defence statistics of §4.1, as we compute
  them from the record.

Our choices (the paper does not pin them down):

* **Unit of counting.** Every seat is one "game played" by its agent. If an agent holds two
  seats of one game, both seats count, for the rank score as for every rate.
* **Vote accuracy** = correct votes / vote turns as a civilian, where an *abstention* (``None``
  in ``votes``, or a name that was not an alive player other than the voter, as in
  :func:`mas_agents.graphs.wis.rules.tally`) counts in the denominator: abstaining is
  a vote turn not used to find the spy. Votes cast as the spy are not counted.
* **Survival rounds** of a seat = number of rounds at whose end the player was still alive:
  eliminated in round ``r`` (by foul or by vote) → ``r − 1``; never eliminated →
  ``outcome.rounds_played``. The average is over all seats of the agent.
* **Wins.** The spy wins iff ``outcome.winner == "spy"``; every civilian wins iff it is
  ``"civilians"``, eliminated civilians included.
* A rate whose denominator is zero is ``None`` (not 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mas_agents.graphs.wis.rules import rank_score

__all__ = ["ROW_KEYS", "agent_metrics", "player_rows"]

#: Keys of a row from :func:`player_rows`, in order.
ROW_KEYS = ("game_id", "agent", "name", "seat", "role", "score", "won", "votes_cast_as_civilian",
            "correct_votes", "abstentions", "descriptions", "fouls", "timeouts", "survival_rounds")


def player_rows(game: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per seat of ``game`` (seat order), with the seat's counts in that game.

    Keys: ``game_id, agent, name, seat, role, score, won, votes_cast_as_civilian,
    correct_votes, abstentions, descriptions, fouls, survival_rounds`` where

    * ``votes_cast_as_civilian``: vote turns the player had as a civilian (abstentions included);
    * ``correct_votes``: those of them naming the spy;
    * ``abstentions``: vote turns with no valid target (any role);
    * ``descriptions``: descriptions the player was asked for; ``fouls``: those with a foul;
    * ``timeouts``: the fouls for answering too late (also counted in ``fouls``);
    * ``survival_rounds``: see the module docstring.

    Raises:
        ValueError: the record does not have exactly one spy.
    """
    players = game["players"]
    spies = [p["name"] for p in players if p["role"] == "spy"]
    if len(spies) != 1:
        raise ValueError(f"game {game.get('game_id')!r} needs exactly one spy, got {len(spies)}")
    spy = spies[0]
    outcome = game["outcome"]
    winner = outcome["winner"]
    rounds_played = int(outcome.get("rounds_played", len(game.get("rounds", []))))
    eliminated = game.get("eliminated") or {}
    scores = game.get("scores") or {}

    rows = []
    for p in players:
        name, role = p["name"], p["role"]
        votes = abstentions = correct = descriptions = fouls = timeouts = 0
        for rnd in game.get("rounds", []):
            for d in rnd.get("descriptions", []):
                if d["player"] == name:
                    descriptions += 1
                    fouls += d.get("foul") is not None
                    timeouts += d.get("foul") == "timeout"
            ballot = rnd.get("votes") or {}
            if name in ballot:
                target = ballot[name]
                if target is not None and "alive_after" in rnd:
                    # as mas_agents.graphs.wis.rules.tally: a name not on the list is an abstention
                    voters = set(rnd["alive_after"]) | {rnd.get("voted_out")}
                    if target not in voters or target == name:
                        target = None
                abstentions += target is None
                if role != "spy":
                    votes += 1
                    correct += target == spy
        out = eliminated.get(name)
        survival = int(out["round"]) - 1 if out else rounds_played
        rows.append({
            "game_id": game["game_id"],
            "agent": p["agent"],
            "name": name,
            "seat": p.get("seat"),
            "role": role,
            "score": float(scores.get(name, 0.0)),
            "won": winner == ("spy" if role == "spy" else "civilians"),
            "votes_cast_as_civilian": votes,
            "correct_votes": correct,
            "abstentions": abstentions,
            "descriptions": descriptions,
            "fouls": fouls,
            "timeouts": timeouts,
            "survival_rounds": survival,
        })
    return rows


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def agent_metrics(games: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Metrics per agent over ``games``, sorted by rank score (descending, then agent name).

    Each dict has ``agent, games, games_as_spy, games_as_civilian, wins, win_rate_spy,
    win_rate_civilian, win_rate, avg_score, avg_score_spy, avg_score_civilian,
    votes_cast_as_civilian, correct_votes, abstentions, vote_accuracy, descriptions, fouls,
    foul_rate, avg_survival_rounds, total_score, rank_score``. Rates with a zero denominator
    are None. See the module docstring for the definitions.
    """
    by_agent: dict[str, list[dict[str, Any]]] = {}
    for game in games:
        for row in player_rows(game):
            by_agent.setdefault(row["agent"], []).append(row)

    out = []
    for agent, rows in by_agent.items():
        spy = [r for r in rows if r["role"] == "spy"]
        civ = [r for r in rows if r["role"] != "spy"]
        scores = [r["score"] for r in rows]
        votes = sum(r["votes_cast_as_civilian"] for r in rows)
        correct = sum(r["correct_votes"] for r in rows)
        descriptions = sum(r["descriptions"] for r in rows)
        fouls = sum(r["fouls"] for r in rows)
        out.append({
            "agent": agent,
            "games": len(rows),
            "games_as_spy": len(spy),
            "games_as_civilian": len(civ),
            "wins": sum(r["won"] for r in rows),
            "win_rate_spy": _ratio(sum(r["won"] for r in spy), len(spy)),
            "win_rate_civilian": _ratio(sum(r["won"] for r in civ), len(civ)),
            "win_rate": _ratio(sum(r["won"] for r in rows), len(rows)),
            "avg_score": _mean(scores),
            "avg_score_spy": _mean([r["score"] for r in spy]),
            "avg_score_civilian": _mean([r["score"] for r in civ]),
            "votes_cast_as_civilian": votes,
            "correct_votes": correct,
            "abstentions": sum(r["abstentions"] for r in rows),
            "vote_accuracy": _ratio(correct, votes),
            "descriptions": descriptions,
            "fouls": fouls,
            "foul_rate": _ratio(fouls, descriptions),
            # timeouts are also fouls; shown apart because they depend on the machine's speed
            "timeout_rate": _ratio(sum(r["timeouts"] for r in rows), descriptions),
            "avg_survival_rounds": _mean([r["survival_rounds"] for r in rows]),
            "total_score": sum(scores),
            "rank_score": rank_score(scores),
        })
    out.sort(key=lambda m: (-m["rank_score"], m["agent"]))
    return out
