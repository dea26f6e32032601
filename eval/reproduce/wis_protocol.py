"""``mas reproduce wis``, the protocol: its numbers (WiS v1 §3.1, §5.1, App. A), the model pool
and the seating of the main experiment (:func:`main_plan`).
"""

from __future__ import annotations

from collections import Counter, deque

from mas_agents.graphs.wis.tournament import schedule
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
#: embedded model (:func:`mas_agents.graphs.wis.session.speak_limit`, the rule of every WiS command).
SPEAK_TIMEOUT = rules.SPEAK_TIMEOUT
#: The experiments, in the paper's order: Table 3 (attack = PIA, defense = PID), Table 4.
EXPERIMENTS = ("attack", "defense", "reasoning")
LANG = "en"
#: Settings that must match to resume a run in the same ``--out``.
RESUME_KEYS = ("pool", "others", "limit", "seed", "lang")


# ---------------------------------------------------------------------- the pool and the seating

def parse_pool(model: str | list[str] | tuple[str, ...]) -> list[str]:
    """``"local,openai:gpt-4o"`` (or a list) -> the model specs, in order (duplicates kept: the pool
    ``local,local`` is two seats' worth of one model, told apart by seat).

    Raises:
        ValueError: an empty pool, or an entry that is an agent URL, an agent spec (``@``/``+``) or
            not a model spec (``local``, ``local:PATH``, ``openai:NAME``).
    """
    items = list(model) if isinstance(model, (list, tuple)) else str(model).split(",")
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
    """The main experiment's seating: :func:`mas_agents.graphs.wis.tournament.schedule` on the pool's labels
    (the spy seat rotates over the models, civilian seats cycle: equal seats and spy turns when
    ``games`` is a multiple of K), then, when that leaves the seats unequal, the civilian seats
    re-dealt (spies, words, seats and first speakers kept) so that each model has ``6 games / K``
    seats if that can be done (:func:`_deal_civilians`). Each game carries ``labels`` (the pool
    label of each seat) besides the schedule's fields.
    """
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


def game_index(game: dict) -> int:
    """The index of a game in its tournament, from its id (``...-g0007`` -> 7)."""
    return int(game["game_id"].rsplit("-g", 1)[1])


def relabel(games: list[dict], plan: list[dict]) -> list[dict]:
    """Game records whose seats' ``agent`` is the pool label of the seat (from the plan), so two
    seats of one model spec (``local,local``) count as the two pool members they are."""
    by_index = {g["index"]: g["labels"] for g in plan}
    out = []
    for g in games:
        labels = by_index[game_index(g)]
        out.append(dict(g, players=[dict(p, agent=labels[p["seat"]]) for p in g["players"]]))
    return out
