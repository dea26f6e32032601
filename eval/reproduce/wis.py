"""``mas reproduce wis``: the WiS paper's protocol (Hu et al., arXiv:2412.03359 v1), its Tables 2–4
beside ours.

What it plays (every game through :mod:`mas_agents.eval.runs.wis_tournament`, stored in ``<out>/wis.sqlite``):

* **Main experiment** (v1 §5.1, Table 2): a pool of K models (``--model A,B,...``), 6-seat games with
  1 spy and at most 3 rounds (§3.1, App. A), :func:`mas_agents.eval.runs.wis_tournament.schedule` seating:
  every model holds the spy seat in game ``i`` when ``i mod K`` is its index, the civilian seats
  cycle through the others, so with a multiple of K games every model is seated equally often (and
  is the spy equally often). The paper: ten models, "each experiment was repeated over 90 times";
  Table 2's rates fit 90 seats per model, i.e. 150 games. The full protocol here is 90 seats per
  pool model: ``15 K`` games. Metrics per model: win rate as spy / civilian / overall, average
  score per seat-game, and the rank score 100 + Σ score − N (§3.5) of the leaderboard
  (:func:`mas_agents.eval.metrics.wis.agent_metrics`).
* **Attack / defense** (§5.3, Table 3) and **reasoning** (§5.4, Table 4): for each distinct model
  of the pool, :func:`mas_agents.eval.runs.wis_tournament.run_experiment` (baseline arm vs the strategy arm on
  the same seating, words and seeds) with the paper's prompts verbatim (v1 Table 1, in
  :mod:`mas_agents.planners.strategies`); the other seats are ``--others`` or the same model. The paper:
  "each experiment being repeated more than 24 times"; here 24 games per arm.

``--limit N`` plays the first N games of the main experiment and N games per experiment arm; the
report says it is partial, and whether N lets every model be seated (and be the spy) equally
often.

Checks any reimplementation must pass (run on every game played, each reported pass/fail): 6
seats and 1 spy per game, at most 3 rounds, fouls eliminate, a tie eliminates no one, scores as
App. A recomputes them and summing to 12 per game (so the mean score per seat is 2.00), the rank
score formula, and equal seating.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from mas_agents.eval.reproduce.common import (
    PaperTable,
    Progress,
    differences,
    fmt_estimate,
    load_table,
    md_table,
    partial_note,
    source_line,
    write_report,
)
from mas_agents.eval.stats import bootstrap_mean, bootstrap_ratio, wilson
from mas_agents.graphs.wis import rules

PAPER = "wis"
#: Seats per model in the paper's main experiment (v1 §5.1 "repeated over 90 times"; Table 2's
#: rates fit 90 seats per model, 150 games for its ten models).
SEATS_PER_MODEL = 90
#: Games per experiment arm (v1 §5.1: "each experiment being repeated more than 24 times").
EXPERIMENT_GAMES = 24
#: Players and spies per game, rounds at most (v1 §3.1 and Appendix A).
PLAYERS, SPIES, MAX_ROUNDS = rules.DEFAULT_PLAYERS, 1, rules.MAX_ROUNDS
#: Seconds to describe before it is a foul (v1 Appendix A); not applied when a seat plays on the
#: embedded model (:func:`mas_agents.eval.runs.wis_session.speak_limit`, the rule of every WiS command).
SPEAK_TIMEOUT = rules.SPEAK_TIMEOUT
#: The experiments, in the paper's order: Table 3 (attack = PIA, defense = PID), Table 4.
EXPERIMENTS = ("attack", "defense", "reasoning")
LANG = "en"
#: Settings that must match to resume a run in the same ``--out``.
RESUME_KEYS = ("pool", "others", "limit", "seed", "lang")


# ---------------------------------------------------------------------- the pool and the seating

def parse_pool(model: str | list[str]) -> list[str]:
    """``"local,openai:gpt-4o"`` (or a list) -> the model specs, in order (duplicates kept: the pool
    ``local,local`` is two seats' worth of one model, told apart by seat).

    Raises:
        ValueError: an empty pool, or an entry that is an agent URL, an agent spec (``@``/``+``) or
            not a model spec (``local``, ``local:PATH``, ``openai:NAME``).
    """
    items = model if isinstance(model, list) else str(model).split(",")
    pool = [str(m).strip() for m in items if str(m).strip()]
    if not pool:
        raise ValueError("--model: give at least one model (e.g. local,local or openai:A,openai:B)")
    for m in pool:
        if m.startswith(("http://", "https://")):
            raise ValueError(f"--model {m!r}: mas reproduce wis seats models, not agent URLs (a URL agent "
                             "holds one seat per game; use mas spy tournament --agents for it)")
        if "@" in m or "+" in m:
            raise ValueError(f"--model {m!r}: give a model (local, local:/path.gguf, openai:NAME), not an agent spec")
        if not (m == "local" or m.startswith(("local:", "openai:"))):
            raise ValueError(f"--model {m!r}: expected local, local:/path.gguf or openai:NAME")
    return pool


def pool_labels(pool: list[str]) -> list[str]:
    """One unique label per pool entry: the model spec, ``#i`` appended when it occurs twice."""
    counts = Counter(pool)
    return [m if counts[m] == 1 else f"{m} #{i + 1}" for i, m in enumerate(pool)]


def agent_spec(model: str) -> str:
    """The seat spec of a pool model: our plain agent (chain of thought) on that model."""
    return f"plain@{model}"


def full_games(k: int) -> int:
    """Games of the full main experiment for a pool of ``k`` models: 90 seats each (v1 §5.1)."""
    return SEATS_PER_MODEL * k // PLAYERS


def balance_note(k: int, games: int, plan: list[dict]) -> tuple[bool, bool, str]:
    """Whether the seating ``plan`` (from :func:`main_plan`) seats ``k`` models equally often and
    gives each the spy seat equally often: ``(seats_equal, spy_equal, sentence for the report)``.
    Equal spy turns need ``games`` to be a multiple of ``k``; equal seats also need the civilian
    seats to be dealable (a model is never a civilian in a game where it is the spy)."""
    seats = Counter(a for g in plan for a in g["labels"])
    spies = Counter(g["labels"][g["spy_seat"]] for g in plan)
    seats_eq = len(seats) == k and len(set(seats.values())) == 1
    spy_eq = len(spies) == k and len(set(spies.values())) == 1
    if seats_eq and spy_eq:
        return True, True, (f"{games} games for {k} models: every model is seated {games * PLAYERS // k} times and holds "
                            f"the spy seat in {games // k} of them.")
    if seats_eq:
        return True, False, (f"{games} games for {k} models: every model is seated {games * PLAYERS // k} times, but the "
                             f"spy seat cannot be shared equally ({games} is not a multiple of {k}).")
    return False, spy_eq, (f"{games} games for {k} models: the seats cannot be shared equally (a model is never a "
                           f"civilian in a game where it is the spy); use --limit a multiple of {k} for equal seats "
                           "and spy turns.")


def _deal_civilians(labels: list[str], spies: list[str], target: int) -> list[list[str]] | None:
    """Civilian seats per game giving every label ``target`` seats in all (spy seats included), none
    in a game where it is the spy; None when that cannot be done. A transportation problem solved as
    a maximum flow (source -> label: its civilian seats still needed; label -> each game where it is
    not the spy: unbounded; game -> sink: 5 civilian seats), by shortest augmenting paths."""
    from collections import deque
    n, k = len(spies), len(labels)
    need = [target - spies.count(lb) for lb in labels]
    if any(v < 0 for v in need) or sum(need) != (PLAYERS - 1) * n:
        return None
    src, sink = 0, 1 + k + n
    cap: dict[tuple[int, int], int] = {}
    adj: dict[int, list[int]] = {v: [] for v in range(sink + 1)}

    def edge(u: int, v: int, c: int) -> None:
        cap[(u, v)] = cap.get((u, v), 0) + c
        cap.setdefault((v, u), 0)
        adj[u].append(v)
        adj[v].append(u)
    for j, lb in enumerate(labels):
        edge(src, 1 + j, need[j])
        for i, spy in enumerate(spies):
            if spy != lb:
                edge(1 + j, 1 + k + i, PLAYERS)
    for i in range(n):
        edge(1 + k + i, sink, PLAYERS - 1)
    flow = 0
    while True:
        prev = {src: src}
        q = deque([src])
        while q and sink not in prev:
            u = q.popleft()
            for v in adj[u]:
                if v not in prev and cap[(u, v)] > 0:
                    prev[v] = u
                    q.append(v)
        if sink not in prev:
            break
        path, v = [], sink
        while v != src:
            path.append((prev[v], v))
            v = prev[v]
        push = min(cap[e] for e in path)
        for u, v in path:
            cap[(u, v)] -= push
            cap[(v, u)] += push
        flow += push
    if flow != (PLAYERS - 1) * n:
        return None
    out = []
    for i in range(n):   # interleave the models round-robin, in pool order
        left = {lb: cap[(1 + k + i, 1 + j)] for j, lb in enumerate(labels) if (1 + k + i, 1 + j) in cap}
        seq: list[str] = []
        while any(left.values()):
            for lb in labels:
                if left.get(lb):
                    seq.append(lb)
                    left[lb] -= 1
        out.append(seq)
    return out


def main_plan(labels: list[str], games: int, pairs: list[dict], seed: int) -> list[dict]:
    """The main experiment's seating: :func:`mas_agents.eval.runs.wis_tournament.schedule` on the pool's labels
    (the spy seat rotates over the models, civilian seats cycle: equal seats and spy turns when
    ``games`` is a multiple of K), then, when that leaves the seats unequal, the civilian seats
    re-dealt (spies, words, seats and first speakers kept) so that each model has ``6 games / K``
    seats if that can be done (:func:`_deal_civilians`). Each game carries ``labels`` (the pool
    label of each seat) besides the schedule's fields.
    """
    from mas_agents.eval.runs.wis_tournament import schedule
    plan = schedule(labels, games, PLAYERS, pairs=pairs, seed=seed)
    k = len(labels)
    seats = Counter(a for g in plan for a in g["agents"])
    if k > 1 and (games * PLAYERS) % k == 0 and len(set(seats[lb] for lb in labels)) > 1:
        spies = [g["agents"][g["spy_seat"]] for g in plan]
        dealt = _deal_civilians(labels, spies, games * PLAYERS // k)
        if dealt is not None:
            for g, civ in zip(plan, dealt):
                s = g["spy_seat"]
                g["agents"] = civ[:s] + [g["agents"][s]] + civ[s:]
    for g in plan:
        g["labels"] = list(g["agents"])
    return plan


def _index(game: dict) -> int:
    return int(game["game_id"].rsplit("-g", 1)[1])


def relabel(games: list[dict], plan: list[dict]) -> list[dict]:
    """Game records whose seats' ``agent`` is the pool label of the seat (from the plan), so two
    seats of one model spec (``local,local``) count as the two pool members they are."""
    by_index = {g["index"]: g["labels"] for g in plan}
    out = []
    for g in games:
        labels = by_index[_index(g)]
        out.append(dict(g, players=[dict(p, agent=labels[p["seat"]]) for p in g["players"]]))
    return out


# ---------------------------------------------------------------------- estimates

def _rate(k: int, n: int) -> dict:
    return wilson(int(k), int(n)).to_dict()


def model_estimates(games: list[dict], label: str, seed: int = 0) -> dict:
    """Table 2's quantities of one pool member over relabelled games, each with its 95 % interval:
    win rates (Wilson over seats), average score (bootstrap over games of the member's summed
    score / its seats in the game), vote accuracy and foul rate (Wilson), rank score (point value).
    """
    from mas_agents.eval.metrics.wis import agent_metrics, player_rows
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


# ---------------------------------------------------------------------- checks

def checks(games: list[dict], *, seat_counts: Counter | None = None, labels: list[str] | None = None,
           metrics: list[dict] | None = None, can_balance: bool = True) -> list[dict]:
    """The checks any WiS reimplementation must pass, on ``games`` (records, each seat's ``agent`` its
    pool label): ``[{"check", "source", "passed", "evidence"}]``, ``passed`` None when there is nothing
    to check. ``metrics`` (:func:`mas_agents.eval.metrics.wis.agent_metrics` of the games) adds the rank-score
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


# ---------------------------------------------------------------------- the run

def _write_json(path: Path, data: Any) -> None:
    from mas_agents.rundir import write_json
    write_json(path, data)


def check_out(*, out: Path, model: str | list[str], others: str | None = None, limit: int | None = None,
              seed: int = 0) -> dict:
    """Check the options and that ``out`` may hold this run, writing and running nothing: what
    :func:`reproduce` checks first, callable before a costly step (the CLI's estimate, ``mas
    reproduce all``'s other parts).

    Returns:
        The settings compared with ``out/config.json``: ``pool``, ``others``, ``limit``, ``seed``,
        ``lang``, ``models``. Every one must match: another ``limit`` plays other games per arm.

    Raises:
        ValueError: a bad ``--model``/``--others``/``--limit``, or ``out`` holding a run with
            other settings (:class:`mas_agents.eval.runs.record.RunConflict`, names config.json).
    """
    from mas_agents.eval.runs.record import check_same_run
    pool = parse_pool(model)
    if others is not None:
        others = others.strip()
        parse_pool(others)
        if "," in others:
            raise ValueError(f"--others {others!r}: give one model for the other seats of the experiments")
    if limit is not None and limit < 1:
        raise ValueError(f"--limit {limit}: must be >= 1")
    settings = {"pool": pool, "others": others, "limit": limit, "seed": seed, "lang": LANG,
                "models": sorted(set(pool) | ({others} if others else set()))}   # every seat's (mas_agents.eval.runs.record)
    check_same_run(Path(out), {"kind": "reproduce", "paper": PAPER, **settings})
    return settings


def reproduce(*, data_root: Path, out: Path, model: str | list[str], others: str | None = None,
              limit: int | None = None, seed: int = 0, tick: Callable[[str], None] | None = None,
              play: Callable | None = None, estimate: dict | None = None) -> dict:
    """Play (or resume) the WiS protocol under ``out`` and write ``report.md`` / ``result.json``.

    Args:
        data_root: datasets root (``whoisspy/pairs_en.jsonl``).
        out: run directory; rerunning with the same settings reuses finished games.
        model: the pool, ``"A,B,..."`` or a list of model specs (``local``, ``openai:NAME``).
        others: model of the other seats in the experiments (default: the subject's own model).
        limit: N games of the main experiment and N per experiment arm (a smoke run).
        seed: seating, word pairs and game seeds.
        tick: receives one progress line per finished game.
        estimate: :func:`mas_agents.eval.reproduce.estimate.estimate` of this run made before it: kept as
            ``out/estimate.json`` and set beside the actual calls and tokens in the report.
        play: game function (tests; default :func:`mas_agents.eval.runs.wis_session.play_game`).

    Returns:
        ``result.json``'s dict (``main``, ``experiments``, ``checks``, ``partial``...).

    Raises:
        ValueError: a bad ``--model``/``--others``/``--limit``, or ``out`` holding a run with other settings.
        FileNotFoundError: the word pairs are missing.
    """
    from mas_agents.eval.datasets.wis import load_pairs
    from mas_agents.eval.reports.wis_leaderboard import Leaderboard
    from mas_agents.eval.runs.wis_session import speak_limit
    from mas_agents.eval.runs.wis_tournament import ExperimentConfig, TournamentConfig, run_experiment, run_tournament, schedule

    settings = check_out(out=out, model=model, others=others, limit=limit, seed=seed)
    pool, others = settings["pool"], settings["others"]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if not (out / "config.json").exists():
        _write_json(out / "config.json", {"kind": "reproduce", "paper": PAPER, **settings})
    if estimate is not None:   # the estimate made before the run, kept for a resumed run's report
        from mas_agents.eval.reproduce.common import save_estimate
        save_estimate(out, estimate)
    pairs = load_pairs(data_root, LANG)
    labels = pool_labels(pool)
    spec_of = dict(zip(labels, (agent_spec(m) for m in pool)))
    k = len(pool)
    n_full, g_full = full_games(k), EXPERIMENT_GAMES
    n_main = min(limit, n_full) if limit else n_full
    g_exp = min(limit, g_full) if limit else g_full
    subjects = list(dict.fromkeys(pool))
    # the rule of every WiS command: no limit when a seat plays on the embedded model, else 10 s
    speak_timeout = speak_limit([agent_spec(m) for m in pool + ([others] if others else [])], "local")
    db = out / "wis.sqlite"

    total = n_main + len(subjects) * len(EXPERIMENTS) * 2 * g_exp
    progress = Progress(total, tick, PAPER)

    def ticker(games_dir: Path, what: str) -> Callable[[int], None]:
        before = {p.parent.name for p in games_dir.glob("g*/result.json")} if games_dir.exists() else set()

        def t(index: int) -> None:
            name = f"g{index:04d}"
            calls = 0
            if name not in before:
                try:
                    calls = json.loads((games_dir / name / "result.json").read_text(encoding="utf-8"))["llm"]["calls"]
                except (OSError, KeyError, ValueError):
                    calls = 0
            progress.done(f"{what} game {index + 1}", calls)
        return t

    # -- main experiment (Table 2)
    plan = main_plan(labels, n_main, pairs, seed)
    run_plan = [dict(g, agents=[spec_of[lb] for lb in g["labels"]]) for g in plan]
    res = run_tournament(TournamentConfig(agents=[spec_of[lb] for lb in labels], games=n_main, pairs=pairs,
                                          players=PLAYERS, lang=LANG, model="local", seed=seed,
                                          speak_timeout=speak_timeout, db=db, out=out / "main", games_plan=run_plan), play=play, tick=ticker(out / "main" / "games", "main"))
    board = Leaderboard(db)
    main_games = relabel(board.games(res["id"]), plan)
    from mas_agents.eval.metrics.wis import agent_metrics
    metrics = agent_metrics(main_games)
    seat_counts = Counter(p["agent"] for g in main_games for p in g["players"])
    spy_counts = Counter(p["agent"] for g in main_games for p in g["players"] if p["role"] == "spy")
    seats_possible, spy_possible, balance = balance_note(k, n_main, plan)
    per_model = []
    for lb in labels:
        est = model_estimates(main_games, lb, seed=seed)
        est["own_word_fouls"] = sum(1 for g in main_games for r in g["rounds"] for d in r["descriptions"]
                                    if d.get("foul") == "own_word"
                                    and next(p for p in g["players"] if p["name"] == d["player"])["agent"] == lb)
        per_model.append(est)

    # -- experiments (Tables 3 and 4)
    experiments = []
    all_games = list(main_games)
    for mdl in subjects:
        subject, other = agent_spec(mdl), agent_spec(others or mdl)
        for kind in EXPERIMENTS:
            d = out / f"exp-{kind}-{subjects.index(mdl) + 1}"
            r = run_experiment(ExperimentConfig(experiment=kind, subject=subject, others=other, games=g_exp,
                                                data_root=data_root, players=PLAYERS, lang=LANG, model="local",
                                                seed=seed, speak_timeout=speak_timeout, db=db, out=d), play=play, tick=_arm_ticker(d, kind, progress, g_exp))
            arms = []
            for row in r["rows"]:
                xplan = schedule([row["spec"], other], g_exp, PLAYERS, pairs=pairs, seed=seed,
                                 spy_agent=row["spec"] if kind in ("attack", "defense") else None,
                                 civilians_only=row["spec"] if kind == "reasoning" else None)
                games = board.games(row["tournament"])
                all_games += games
                arms.append(_arm_estimates(row, games, xplan, seed))
            experiments.append({"kind": kind, "model": mdl, "subject": subject, "others": other, "games": g_exp,
                                "arms": arms})

    all_games = list({g["game_id"]: g for g in all_games}.values())   # the shared baseline arm once
    run_checks = checks(all_games)
    main_only = [dict(c, check=c["check"] + " (main experiment)")
                 for c in checks(main_games, seat_counts=seat_counts, labels=labels, metrics=metrics,
                                 can_balance=seats_possible)[len(run_checks):]]
    tables = {n: load_table(n) for n in ("wis_table1_prompts", "wis_table2", "wis_table3", "wis_table4")}
    # attack and defense share their baseline arm (same seating, words and seeds); with a one-model
    # pool and no --others, that arm is also the main experiment's seating, and its games are reused
    planned_full = n_full + len(subjects) * 5 * g_full
    played = len(all_games)
    calls = sum(int((g.get("llm") or {}).get("calls", 0)) for g in all_games)
    result = {
        "pool": pool, "labels": labels, "others": others, "limit": limit, "seed": seed, "partial": limit is not None,
        "speak_timeout": speak_timeout, "main": {"games": len(main_games), "planned_full": n_full, "tournament": res["id"],
                                                 "seats": dict(seat_counts), "spy_seats": dict(spy_counts),
                                                 "balance": balance, "models": per_model,
                                                 "leaderboard": [{k2: m[k2] for k2 in ("agent", "rank_score", "avg_score", "games")}
                                                                 for m in metrics]},
        "experiments": experiments, "checks": run_checks + main_only,
        "paper_checks": paper_checks(tables["wis_table2"]),
        "games_played": played, "games_planned_full": planned_full, "llm_calls": calls,
    }
    if estimate is not None:
        from mas_agents.eval.reproduce.common import versus_actual
        result["estimate_vs_actual"] = versus_actual(estimate, {k: sum(int((g.get("llm") or {}).get(k) or 0)
                                                                       for g in all_games)
                                                                for k in ("calls", "input_tokens", "output_tokens")})
    result["headline"] = headline(result)
    markdown = report_markdown(result, tables, main_games)
    write_report(out, paper=PAPER, config=settings, result=result, markdown=markdown)
    return {"kind": "reproduce", "paper": PAPER, **result}


def _arm_ticker(d: Path, kind: str, progress: Progress, games: int) -> Callable[[int], None]:
    """Progress for run_experiment: its tick gets the game index of the baseline arm, then of the
    strategy arm; the n-th call belongs to arm ``n // games``."""
    seen = {"n": 0}
    arms = ("baseline", kind)
    before = {str(p) for p in d.glob("*/games/g*/result.json")} if d.exists() else set()

    def t(index: int) -> None:
        arm = arms[min(seen["n"] // games, 1)]
        seen["n"] += 1
        path = d / arm / "games" / f"g{index:04d}" / "result.json"
        calls = 0
        if str(path) not in before and path.exists():
            try:
                calls = json.loads(path.read_text(encoding="utf-8"))["llm"]["calls"]
            except (OSError, KeyError, ValueError):
                calls = 0
        progress.done(f"{kind} {arm} game {index + 1}", calls)
    return t


def _arm_estimates(row: dict, games: list[dict], plan: list[dict], seed: int) -> dict:
    """One experiment arm: the subject's rates (Wilson) and average score (bootstrap over games),
    and the other seats' foul rate and vote accuracy (Wilson)."""
    seat_of = {g["index"]: g["subject_seat"] for g in plan}
    scores = []
    for g in games:
        s = seat_of[_index(g)]
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


# ---------------------------------------------------------------------- the report

def _pct(est: dict | None) -> str:
    return fmt_estimate(est, scale=100, digits=1)


def _score(est: dict | None) -> str:
    return fmt_estimate(est, scale=1, digits=2)


def _verdict(p: bool | None) -> str:
    return {True: "pass", False: "**FAIL**", None: "n/a"}[p]


DIFFERENCES = [
    "Paper version: v1 of arXiv:2412.03359 (Dec 2024), the one transcribed; v2 (Jun 2025, retitled) was not "
    "checked and may differ.",
    "Models: the paper's ten models (GPT-4o, o1-mini, Qwen2.5-72B-Instruct, ... as served in late 2024, same "
    "unpublished generation parameters for all) against the pool given with --model, at this project's defaults.",
    "Word list: the platform's word list is unpublished (v1 prints only Tea/Coffee and Sand/Soil in its case "
    "studies); we draw English pairs from the dataset (`whoisspy/pairs_en.jsonl`, from leaf-playground-hub and "
    "LLMArena), without replacement, reshuffled when used up.",
    "Judge: the platform's judge code is unpublished; ours is `mas_agents.graphs.wis.rules.foul` (own word after "
    "normalisation, repeat of any earlier description, no answer, time).",
    "Agents: the platform's agents ran the authors' agent code; ours are this project's `plain` agent (chain of "
    "thought) with our prompts, told only their word, never their role.",
    "Time limit: 10 s per description (App. A) for remote models; none when a seat runs on the embedded model "
    "(its speed is the machine's, so a time foul would measure the CPU).",
    "Main experiment size: the paper says only 'repeated over 90 times' (§5.1); Table 2's rates fit 90 seats per "
    "model (150 games for ten models). We play 90 seats per pool model (15 games per model).",
    "Seating: the paper does not say how seats were assigned, and Table 2's rates fit unequal spy turns per model; "
    "we rotate the spy seat over the pool (`schedule`), so every model is the spy equally often when the game count "
    "allows.",
    "Rank score: the paper's Table 2 prints no rank score (Σ score − N + 100, §3.5) and no game counts; ours are "
    "computed, the paper's are not published.",
    "Experiments: the paper's tested model 'played spy and civilian equally often', each experiment repeated "
    "'more than 24 times' (§5.1), and Table 3 does not say whose votes and fouls it counts. Ours (`mas spy "
    "experiment`): the attacking/defending model is the spy in every game (our blocks act only as the spy), the "
    "reasoning model a civilian in every game, 24 games per arm, the other seats --others or the same model. So "
    "our Table 3 subject never votes as a civilian: beside the paper's vote accuracy we print the other seats' "
    "vote accuracy (how often the civilians' votes found the subject) and their foul rate.",
    "Prompts: the attack, defense and reasoning texts are the paper's (v1 Table 1, verbatim); the paper's case "
    "study (Table 6) shows o1-mini injecting a different text, not used. The reasoning prompt speaks of 'other "
    "people's analysis', so the paper's analyses may have been public; ours stay private (the thought before the vote).",
    "Language: English games only (the platform also plays Chinese).",
]


def report_markdown(result: dict, tables: dict[str, PaperTable], main_games: list[dict]) -> str:
    """The report: partial note, checks, Tables 2–4 beside the paper's, protocol differences."""
    t2, t3, t4 = tables["wis_table2"], tables["wis_table3"], tables["wis_table4"]
    main = result["main"]
    L: list[str] = ["# WiS (Hu et al., arXiv:2412.03359 v1): the paper's protocol on this pool", ""]
    limit_text = "none (embedded model)" if result["speak_timeout"] is None else f"{result['speak_timeout']:g} s"
    L += partial_note(result["limit"], result["games_played"], result["games_planned_full"], "games (main experiment "
                      "plus every experiment arm)")
    if result.get("estimate_vs_actual"):
        from mas_agents.eval.reproduce.common import versus_lines
        L += versus_lines(result["estimate_vs_actual"])
    L += [f"Pool: {', '.join(f'`{lb}`' for lb in result['labels'])} (each seat: our `plain` agent on that model); "
          f"experiments' other seats: `{result['others'] or 'the subject model'}`; seed {result['seed']}; "
          f"time limit {limit_text}. "
          f"Main experiment: {main['games']} of {main['planned_full']} games (6 seats, 1 spy, at most 3 rounds). "
          f"{result['games_played']} distinct games in all (arms with the same seating share games), "
          f"{result['llm_calls']} model calls.", "",
          f"Seating: {main['balance']} Seats played: "
          + ", ".join(f"{lb} {main['seats'].get(lb, 0)} ({main['spy_seats'].get(lb, 0)} as spy)" for lb in result["labels"])
          + ".", ""]

    L += ["## Checks any reimplementation must pass", "",
          "On every game this run played (main experiment and experiment arms), except those marked main experiment.", ""]
    L += md_table(["check", "rule", "result", "evidence"],
                  [[c["check"], c["source"], _verdict(c["passed"]), c["evidence"]] for c in result["checks"]])
    L += ["", "On the paper's own Table 2:", ""]
    L += md_table(["check", "rule", "result", "evidence"],
                  [[c["check"], c["source"], _verdict(c["passed"]), c["evidence"]] for c in result["paper_checks"]])
    L += [""]

    L += ["## Table 2: the main experiment", ""]
    head = ["agent", "source", "spy win rate %", "civilian win rate %", "overall win rate %", "average score",
            "rank score (Σ−N+100)", "seats (spy)"]
    rows = [[r["agent"], "paper", r["spy_win_rate_pct"], r["civilian_win_rate_pct"], r["overall_win_rate_pct"],
             r["average_score"], "not published", "90 (§5.1); spy seats not published"] for r in t2.rows]
    for m in main["models"]:
        rows.append([m["agent"], "this run", _pct(m["win_rate_spy"]), _pct(m["win_rate_civilian"]), _pct(m["win_rate"]),
                     _score(m["avg_score"]), "-" if m["rank_score"] is None else f"{m['rank_score']:.1f}",
                     f"{m['seats']} ({m['spy_seats']})"])
    L += md_table(head, rows)
    L += ["", source_line(t2), "",
          "Ours: win rates with a Wilson 95 % interval over seats (n = seats; a model holding several seats of one "
          "game is not independent across them, so read these as indicative); average score per seat with a "
          "percentile-bootstrap 95 % interval over games (n = games). The paper prints no n or interval.", ""]
    from mas_agents.eval.reports.wis_leaderboard import leaderboard_markdown
    from mas_agents.eval.metrics.wis import agent_metrics
    L += ["Our leaderboard (`mas spy leaderboard` columns; vote accuracy and foul rate as §4.1 defines them):", "",
          leaderboard_markdown(agent_metrics(main_games)).rstrip(), ""]
    L += ["Own-word fouls at our table (the description said the speaker's word): "
          + ", ".join(f"{m['agent']} {m['own_word_fouls']}" for m in main["models"]) + ". The agent we serve to the "
          "platform (`mas spy serve-agent`) is re-prompted once when its description holds its word and then "
          "answers the safest legal description, counted as `own_word_safe_reply` (tests: "
          "`tests/graphs/test_wis_platform.py`, `tests/eval/test_reproduce_wis.py`).", ""]

    exps = result["experiments"]
    L += ["## Table 3: attack (PIA) and defense (PID)", ""]
    head = ["model", "source", "metric", "Baseline", "PIA (attack)", "PID (defense)"]
    rows = [[r["model"], "paper", r["metric"], r["baseline"], r["PIA"], r["PID"]] for r in t3.rows]
    for mdl in dict.fromkeys(e["model"] for e in exps):
        arms = {}
        for e in exps:
            if e["model"] == mdl and e["kind"] in ("attack", "defense"):
                for a in e["arms"]:
                    arms.setdefault("baseline" if a["arm"] == "baseline" else e["kind"], a)
        b, at, de = arms.get("baseline"), arms.get("attack"), arms.get("defense")

        def cells(key: str, fmt=_pct) -> list[str]:
            return [fmt(x[key]) if x else "-" for x in (b, at, de)]
        rows += [[mdl, "this run", "Vote Accuracy (%) (the subject's, as a civilian: it is always the spy here)",
                  "-", "-", "-"],
                 [mdl, "this run", "Others' vote accuracy (%) (civilians' votes finding the subject)", *cells("others_vote_accuracy")],
                 [mdl, "this run", "Foul Rate (%) (the subject's)", *cells("foul_rate")],
                 [mdl, "this run", "Others' foul rate (%)", *cells("others_foul_rate")],
                 [mdl, "this run", "Average score (the subject's)", *cells("avg_score", _score)],
                 [mdl, "this run", "Win Rate (%) (the subject's, as the spy)", *cells("win_rate")]]
    L += md_table(head, rows)
    L += ["", source_line(t3), "",
          f"Ours: {exps[0]['games'] if exps else 0} games per arm; rates with a Wilson 95 % interval (n = votes, "
          "descriptions or games), average score with a percentile-bootstrap 95 % interval over games. The baseline "
          "arm is shared by attack and defense (same seating, words and seeds; with a one-model pool it is also "
          "the main experiment's seating, so those games are reused). Prompts (the paper's Table 1, verbatim): "
          f"attack `{tables['wis_table1_prompts'].row(method='Attacking')['prompt']}`; defense "
          f"`{tables['wis_table1_prompts'].row(method='Defense')['prompt']}`.", "",
          source_line(tables["wis_table1_prompts"]), ""]

    L += ["## Table 4: reasoning", ""]
    head = ["setting", "agent", "source", "vote accuracy %", "civilian win rate %", "civilian average score"]
    rows = [[r["setting"], r["agent"], "paper", r["vote_acc"], r["civ_win_rate"], r["civ_avg_score"]] for r in t4.rows]
    for e in exps:
        if e["kind"] != "reasoning":
            continue
        for a in e["arms"]:
            rows.append(["Baseline" if a["arm"] == "baseline" else "Reasoning", e["model"], "this run",
                         _pct(a["vote_accuracy"]), _pct(a["win_rate"]), _score(a["avg_score"])])
    L += md_table(head, rows)
    L += ["", source_line(t4), "",
          "Ours: the tested model is a civilian in every game; same intervals as above. Prompt: "
          f"`{tables['wis_table1_prompts'].row(method='Reasoning')['prompt']}`.", ""]
    L += differences(DIFFERENCES)
    return "\n".join(L) + "\n"


def headline(result: dict) -> str:
    """One line for the runs list and ``mas reproduce all``: games played of the protocol's, the
    checks passed, and the leaderboard's top rank score, e.g. ``10 of 150 games; checks 11/11
    passed; top local #1 rank score 110.0 (partial)``."""
    checks_ = result.get("checks") or []
    board = (result.get("main") or {}).get("leaderboard") or []
    top = max(board, key=lambda m: m.get("rank_score") or 0, default=None)
    return (f"{result.get('games_played')} of {result.get('games_planned_full')} games; "
            f"checks {sum(1 for c in checks_ if c.get('passed'))}/{len(checks_)} passed"
            + (f"; top {top['agent']} rank score {top['rank_score']:.1f}" if top and top.get("rank_score") is not None else "")
            + (" (partial)" if result.get("partial") else ""))
