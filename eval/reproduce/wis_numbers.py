"""``mas reproduce wis``, our numbers: Table 2's quantities per pool member (:func:`model_estimates`),
one experiment arm's (:func:`arm_estimates`), and the checks any reimplementation must pass, on the
games played (:func:`checks`) and on the paper's own Table 2 (:func:`paper_checks`).
"""

from __future__ import annotations

from collections import Counter

from mas_agents.graphs.wis.metrics import agent_metrics, player_rows
from mas_agents.eval.reproduce.common import PaperTable
from mas_agents.eval.reproduce.wis_protocol import MAX_ROUNDS, PLAYERS, SPIES, game_index
from mas_agents.stats import bootstrap_mean, bootstrap_ratio, wilson
from mas_agents.graphs.wis import rules


def _rate(k: int, n: int) -> dict:
    return wilson(int(k), int(n)).to_dict()


def model_estimates(games: list[dict], label: str, seed: int = 0) -> dict:
    """Table 2's quantities of one pool member over relabelled games, each with its 95 % interval:
    win rates (Wilson over seats), average score (bootstrap over games of the member's summed
    score / its seats in the game), vote accuracy and foul rate (Wilson), rank score (point value).
    """
    rows_by_game = [[r for r in player_rows(g) if r["agent"] == label] for g in games]
    rows = [r for rs in rows_by_game for r in rs]
    spy = [r for r in rows if r["role"] == "spy"]
    civ = [r for r in rows if r["role"] != "spy"]
    m = next((x for x in agent_metrics(games) if x["agent"] == label), None)
    num = [sum(r["score"] for r in rs) for rs in rows_by_game if rs]
    den = [len(rs) for rs in rows_by_game if rs]
    return {
        "agent": label, "seats": len(rows), "spy_seats": len(spy), "civilian_seats": len(civ),
        "games": sum(1 for rs in rows_by_game if rs),
        "win_rate_spy": _rate(sum(r["won"] for r in spy), len(spy)),
        "win_rate_civilian": _rate(sum(r["won"] for r in civ), len(civ)),
        "win_rate": _rate(sum(r["won"] for r in rows), len(rows)),
        "avg_score": bootstrap_ratio(num, den, seed=seed).to_dict(),
        "vote_accuracy": _rate(sum(r["correct_votes"] for r in rows), sum(r["votes_cast_as_civilian"] for r in rows)),
        "foul_rate": _rate(sum(r["fouls"] for r in rows), sum(r["descriptions"] for r in rows)),
        "own_word_fouls": 0,  # filled by the caller from the descriptions
        "total_score": sum(r["score"] for r in rows),
        "rank_score": m["rank_score"] if m else None,
    }


def checks(games: list[dict], *, seat_counts: Counter | None = None, labels: list[str] | None = None,
           metrics: list[dict] | None = None, can_balance: bool = True) -> list[dict]:
    """The checks any WiS reimplementation must pass, on ``games`` (records, each seat's ``agent`` its
    pool label): ``[{"check", "source", "passed", "evidence"}]``, ``passed`` None when there is nothing
    to check. ``metrics`` (:func:`mas_agents.graphs.wis.metrics.agent_metrics` of the games) adds the rank-score
    check (§3.5); ``seat_counts`` and ``labels`` the equal-seating check (§5.1), which passes only
    with equal counts and is n/a when ``can_balance`` is False (the game count cannot seat the pool
    equally) and the counts differ."""
    out: list[dict] = []

    def add(name: str, source: str, bad: list[str], n: int, what: str = "games") -> None:
        out.append({"check": name, "source": source, "passed": (not bad) if n else None,
                    "evidence": (f"{n - len(bad)}/{n} {what}" + (f"; fails: {', '.join(bad[:3])}" if bad else ""))})

    gid = [g["game_id"] for g in games]
    add("6 seats per game", "§3.1, App. A", [i for i, g in zip(gid, games) if len(g["players"]) != PLAYERS], len(games))
    add("exactly 1 spy per game", "§3.1, App. A",
        [i for i, g in zip(gid, games) if sum(p["role"] == "spy" for p in g["players"]) != SPIES], len(games))
    add("at most 3 rounds per game", "App. A",
        [i for i, g in zip(gid, games) if len(g["rounds"]) > MAX_ROUNDS or g["outcome"]["rounds_played"] > MAX_ROUNDS],
        len(games))
    add("scores sum to 12 per game", "§3.4, App. A",
        [i for i, g in zip(gid, games) if abs(sum(g["scores"].values()) - rules.TOTAL_POINTS) > 1e-9], len(games))

    def rescored(g: dict) -> bool:
        roles = {p["name"]: p["role"] for p in g["players"]}
        alive = set(g["rounds"][-1]["alive_after"]) if g["rounds"] and "alive_after" in g["rounds"][-1] else \
            {p for p in roles if p not in g["eliminated"]}
        want = rules.game_scores(roles, g["outcome"]["spy_eliminated_round"], alive,
                                 [r.get("votes") or {} for r in g["rounds"]])
        return all(abs(want[p] - g["scores"][p]) < 1e-9 for p in roles)
    add("scores as App. A recomputes them (spy 0/4/8/12 by round, ±1 per civilian vote for the spy)", "§3.4, App. A",
        [i for i, g in zip(gid, games) if not rescored(g)], len(games))

    def spy_wins_iff_alive(g: dict) -> bool:
        spy = g["outcome"]["spy"]
        return (g["outcome"]["winner"] == "spy") == (spy not in g["eliminated"])
    add("the spy wins iff it survives", "§3.1", [i for i, g in zip(gid, games) if not spy_wins_iff_alive(g)], len(games))

    def fouls_eliminate(g: dict) -> bool:
        for r in g["rounds"]:
            for d in r["descriptions"]:
                if d.get("foul") and g["eliminated"].get(d["player"], {}).get("by") != "foul":
                    return False
        return True
    add("a foul eliminates the speaker", "App. A", [i for i, g in zip(gid, games) if not fouls_eliminate(g)], len(games))

    def tie_no_one(g: dict) -> bool:
        for r in g["rounds"]:
            counts = r.get("vote_counts") or {}
            if not r.get("votes"):
                continue
            top = max(counts.values(), default=0)
            leaders = [p for p, c in counts.items() if c == top and top > 0]
            if r.get("voted_out") != (leaders[0] if len(leaders) == 1 else None):
                return False
        return True
    add("the top vote-getter is out; a tie eliminates no one", "App. A",
        [i for i, g in zip(gid, games) if not tie_no_one(g)], len(games))

    seats = sum(len(g["players"]) for g in games)
    mean = sum(sum(g["scores"].values()) for g in games) / seats if seats else None
    out.append({"check": "mean score per seat is 12 / 6 = 2.00", "source": "§3.4 (zero-sum, 12 points a game)",
                "passed": None if mean is None else abs(mean - 2.0) < 1e-9,
                "evidence": "no seats" if mean is None else f"{mean:.2f} over {seats} seats"})
    if metrics is not None:
        bad = []
        for m in metrics:
            scores = [float(g["scores"][p["name"]]) for g in games for p in g["players"] if p["agent"] == m["agent"]]
            if abs(m["rank_score"] - (100 + sum(scores) - len(scores))) > 1e-9:
                bad.append(m["agent"])
        add("rank score = Σ score − N + 100 for every model", "§3.5", bad, len(metrics), "models")
    if seat_counts is not None and labels is not None:
        counts = [seat_counts.get(lb, 0) for lb in labels]
        equal = len(set(counts)) == 1
        out.append({"check": "every model seated the same number of times", "source": "§5.1 (90 seats per model)",
                    "passed": equal if can_balance else (None if not equal else True),
                    "evidence": ", ".join(f"{lb}: {c}" for lb, c in zip(labels, counts))
                    + ("" if can_balance else " (this game count cannot seat them equally)")})
    return out


def paper_checks(t2: PaperTable) -> list[dict]:
    """Checks on the paper's own Table 2: the mean of its average scores is 2.00 when every model is
    seated equally (90 seats each, §5.1); overall win rate between the spy and civilian rates."""
    avg = [PaperTable.number(r["average_score"]) for r in t2.rows]
    mean = sum(avg) / len(avg)
    between = [r["agent"] for r in t2.rows
               if not min(PaperTable.number(r["spy_win_rate_pct"]), PaperTable.number(r["civilian_win_rate_pct"]))
               <= PaperTable.number(r["overall_win_rate_pct"])
               <= max(PaperTable.number(r["spy_win_rate_pct"]), PaperTable.number(r["civilian_win_rate_pct"]))]
    return [{"check": "Table 2: the mean of the models' average scores is 2.00", "source": "§3.4, §5.1",
             "passed": abs(mean - 2.0) < 0.005, "evidence": f"{mean:.3f} over {len(avg)} models"},
            {"check": "Table 2: overall win rate lies between the spy and civilian win rates", "source": "Table 2",
             "passed": not between, "evidence": f"{len(t2.rows) - len(between)}/{len(t2.rows)} models"}]


def arm_estimates(row: dict, games: list[dict], plan: list[dict], seed: int) -> dict:
    """One experiment arm: the subject's rates (Wilson) and average score (bootstrap over games),
    and the other seats' foul rate and vote accuracy (Wilson)."""
    seat_of = {g["index"]: g["subject_seat"] for g in plan}
    scores = []
    for g in games:
        s = seat_of[game_index(g)]
        name = next(p["name"] for p in g["players"] if p["seat"] == s)
        scores.append(float(g["scores"][name]))
    n = lambda key: int(row.get(key) or 0)  # noqa: E731
    return {
        "arm": row["arm"], "spec": row["spec"], "tournament": row["tournament"], "games": n("games"),
        "vote_accuracy": _rate(n("correct_votes"), n("votes_cast_as_civilian")),
        "foul_rate": _rate(n("fouls"), n("descriptions")),
        "avg_score": bootstrap_mean(scores, seed=seed).to_dict(),
        "win_rate": _rate(n("wins"), n("games")),
        "others_foul_rate": _rate(n("others_fouls"), n("others_descriptions")),
        "others_vote_accuracy": _rate(n("others_correct_votes"), n("others_votes")),
    }
