"""cells.cell_fanout: a game's parallel steps (a WiS round's votes) are narrowed while the process
plays several games at once, and the results do not change."""

from __future__ import annotations

import json
import re
import threading
import time
from collections import defaultdict

from mas_agents import cells
from mas_agents.remote import endpoints
from mas_agents.graphs.wis.session import WisGameConfig, play_game
from mas_agents.game.conformance_kit import untimed
from tests.fakes import RuleChat, wis_player

PAIRS = [{"civilian": f"c{i}", "spy": f"s{i}"} for i in range(6)]


def test_width_is_the_models_parallel_calls_over_the_cells_at_once_but_not_for_the_last_ones(tmp_path):
    endpoints.configure(max_connections=8)
    try:
        assert cells.cell_fanout(["openai:x"]) is None                   # one cell at a time: no limit
        seen = cells.run_cells(list(range(12)), lambda i, root: cells.cell_fanout(["openai:x"]), root=tmp_path,
                               rel=str, models=["openai:x"], concurrency=4)
        # 4 at once on 8 connections: 8 // 4 while >= 8 cells are left; the last 7 keep their full width
        assert seen == [2] * 5 + [None] * 7
        seen = cells.run_cells(list(range(16)), lambda i, root: cells.cell_fanout(["openai:x", "local"]),
                               root=tmp_path, rel=str, models=[], concurrency=4)
        assert seen == [1] * 16                                          # never below 1 (local: 1 call)
        seen = cells.run_cells(list(range(20)), lambda i, root: cells.cell_fanout(["openai:x"]), root=tmp_path,
                               rel=str, models=[], concurrency=20)
        assert seen == [1] * 13 + [None] * 7                             # all at once: still narrowed
        seen = cells.run_cells(list(range(3)), lambda i, root: cells.cell_fanout(["openai:x"]), root=tmp_path,
                               rel=str, models=[], concurrency=1)
        assert seen == [None] * 3                                        # one at a time
        assert cells.cell_fanout(["openai:x"]) is None                   # nothing left set on this thread
    finally:
        endpoints.configure(max_connections=8)


def _counting(rule):
    """A wis_player rule that records the most votes of one game (its word pair) in flight at once."""
    active: dict[int, int] = defaultdict(int)
    most: dict[int, int] = defaultdict(int)
    lock = threading.Lock()

    def wrapped(messages):
        last = str(messages[-1].content)
        if '"Vote: ..."' not in last:
            return rule(messages)
        word = re.search(r'Your word is "([^"]+)"', "\n".join(str(m.content) for m in messages)).group(1)
        game = int(word[1:])
        with lock:
            active[game] += 1
            most[game] = max(most[game], active[game])
        time.sleep(0.05)
        try:
            return rule(messages)
        finally:
            with lock:
                active[game] -= 1
    return wrapped, most


def _games(tmp_path, name, concurrency):
    """6 games (one word pair each) on the cell runner, ``concurrency`` at once."""
    rule, most = _counting(wis_player())
    fake = RuleChat(rule=rule)
    cells.run_cells(list(range(6)), lambda i, root: play_game(root / f"g{i}", WisGameConfig(agents=["plain"] * 6,
                                                            pair=PAIRS[i], model=fake, seed=i, speak_timeout=None)),
                    root=tmp_path / name, rel=lambda i: f"g{i}", models=[fake], concurrency=concurrency)
    results = {}
    for d in sorted((tmp_path / name).iterdir()):
        results[d.name] = untimed(json.loads((d / "result.json").read_text()), drop=True)
    return most, results


def test_games_played_at_once_vote_one_at_a_time_with_the_same_results(tmp_path):
    # the fake model is one call at a time (parallel_calls 1), so 2 games at once -> width 1
    # while at least 1 game is left: every game
    most_alone, alone = _games(tmp_path, "alone", 1)
    most_together, together = _games(tmp_path, "together", 2)
    assert all(most_alone[g] >= 2 for g in range(6))                  # one game at a time: votes in parallel
    assert [most_together[g] for g in range(6)] == [1] * 6            # 2 at a time: one by one
    assert alone == together and len(alone) == 6
