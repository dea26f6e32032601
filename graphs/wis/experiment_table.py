"""The table of a Who-is-Spy strategy experiment (WiS §5.3–5.4, Tables 3–4; :func:`experiment_markdown`):
one row per arm of :func:`mas_agents.graphs.wis.tournament.run_experiment`, every rate with its n and a
Wilson 95 % interval, the subject's average score with a bootstrap interval over games."""

from __future__ import annotations

from typing import Any

from mas_agents.stats import bootstrap_mean, wilson


def _fmt(x: Any) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"


# rate column -> (numerator, denominator, what n counts) in a subject_metrics row
EXPERIMENT_RATES = {
    "vote_accuracy": ("correct_votes", "votes_cast_as_civilian", "votes"),
    "foul_rate": ("fouls", "descriptions", "descriptions"),
    "win_rate": ("wins", "games", "games"),
    "others_foul_rate": ("others_fouls", "others_descriptions", "descriptions"),
    "others_vote_accuracy": ("others_correct_votes", "others_votes", "votes"),
}


def _rate(r: dict, key: str) -> str:
    """A rate in percent with its Wilson 95 % interval and n (``mas_agents.stats.wilson``), e.g.
    ``"100.0 % [34.2, 100.0] (n=2 games)"``; the bare rate for a row without its counts."""
    num, den, what = EXPERIMENT_RATES[key]
    if r.get(num) is None or r.get(den) is None:
        return _fmt(r.get(key))
    if not r[den]:
        return f"- (n=0 {what})"
    text = wilson(int(r[num]), int(r[den])).fmt()
    return text[:-1] + f" {what if r[den] != 1 else what[:-1]})"


def _avg_score(r: dict) -> str:
    """The subject's average score per game with a percentile-bootstrap 95 % interval over its games
    (``mas_agents.stats.bootstrap_mean``; games are the independent units), e.g. ``"2.40 [0.00, 4.80]
    (n=5 games)"``; the bare mean for a row without per-game scores."""
    if r.get("avg_score") is None:
        return "-"
    scores = r.get("scores")
    if not scores:
        return f"{r['avg_score']:.2f} (n={r.get('games', 0)} games)"
    e = bootstrap_mean(scores)
    if e.low is None:
        return f"{e.mean:.2f} [no interval, n=1 game]"
    return f"{e.mean:.2f} [{e.low:.2f}, {e.high:.2f}] (n={e.n} games)"


def experiment_markdown(kind: str, rows: list[dict], players: int | None = None) -> str:
    """The experiment table (like WiS Tables 3–4): one row per arm, every rate with its n and
    Wilson 95 % interval, and the chance level of a civilian's first-round vote."""
    lines = ["| arm | subject | games | vote accuracy | foul rate | avg score | win rate | others' foul rate | others' vote accuracy |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        avg = _avg_score(r)
        lines.append(f"| {r['arm']} | {r['spec']} | {r.get('games', 0)} | {_rate(r, 'vote_accuracy')} | "
                     f"{_rate(r, 'foul_rate')} | {avg} | {_rate(r, 'win_rate')} | "
                     f"{_rate(r, 'others_foul_rate')} | {_rate(r, 'others_vote_accuracy')} |")
    lines += ["", "Rates: percent with a Wilson 95 % interval (Wilson 1927) and n (votes, descriptions or games); "
              "avg score: the subject's mean score per game with a percentile-bootstrap 95 % interval over games. "
              "The votes and descriptions of one game are not independent, so read intervals over them as "
              "indicative; games are the independent units."]
    if players and players > 2:
        lines += ["", f"Chance: a civilian voting uniformly at random among the {players - 1} other players in the "
                  f"first round finds the spy with probability 1/{players - 1} = {100 / (players - 1):.1f} %."]
    note = {"attack": "The subject plays the spy in every game; an attack succeeds when the others foul more.",
            "defense": "The subject plays the spy in every game; a defense succeeds when fewer votes find it.",
            "reasoning": "The subject plays a civilian in every game; reasoning helps when its vote accuracy rises."}[kind]
    return "\n".join(lines) + f"\n\n{note} Both arms use the same seating, word pairs and seeds.\n"
