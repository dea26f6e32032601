"""``--executor ray``: cells as Ray tasks on a two-node cluster on 127.0.0.1 (issue 28).

The cluster (:class:`tests.ray_cluster.Cluster`) is a head and a worker node started with
``ray start --block``, one CPU each, so two between them.

- seeded runs on the fake models give the same ``result.json`` (clock readings aside, as in
  ``scripts/fake_runs.py``) with ``--executor ray`` as with the default local executor;
- killing the worker node in the middle of a tournament loses no game and counts none twice.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from mas_agents.graphs.wis.leaderboard import Leaderboard
from mas_agents.graphs.wis.session import play_game
from mas_agents.graphs.wis.tournament import TournamentConfig, run_tournament
from mas_agents import cells
from mas_agents.game.conformance_kit import untimed
from tests.fakes import RuleChat, polite_player, wis_player
from tests.ray_cluster import Cluster, alive_nodes, free_port

PAIRS = [{"civilian": f"c{i}", "spy": f"s{i}"} for i in range(5)]


@pytest.fixture(scope="module")
def cluster():
    c = Cluster()
    yield c
    c.stop()


@pytest.fixture
def on_ray(cluster):
    before = cells.configure("ray", cluster.address)
    yield cluster
    cells.restore(before)


def _results(base: Path) -> dict[str, object]:
    return {p.relative_to(base).as_posix(): untimed(json.loads(p.read_text(encoding="utf-8")), drop=True)
            for p in sorted(base.rglob("result.json"))}


def _tournament(base: Path, concurrency: int, play=play_game) -> dict:
    return run_tournament(TournamentConfig(agents=["plain", "plain+reasoning", "plain+attack"], games=6, pairs=PAIRS,
                                           model=RuleChat(rule=wis_player()), db=base / "wis.sqlite",
                                           out=base / "spy", seed=3, concurrency=concurrency, speak_timeout=None),
                          play=play)


@pytest.mark.realdata
def test_compare_and_tournament_on_ray_equal_local(tmp_path, real_data_root, on_ray):
    from mas_agents.graphs.mmg.dataset import load_script
    from mas_agents.eval.compare.run import CompareConfig, run_compare
    from tests.data_roots import SIN, SIN_MURDERER
    sc = load_script(real_data_root, SIN[0])

    def both(base: Path, concurrency: int) -> None:
        run_compare(CompareConfig(data_root=real_data_root, out=base / "compare", methods=["plain", "pp", "always_a"],
                    scripts=[sc], seeds=2, model=RuleChat(rule=polite_player(vote_for=SIN_MURDERER)), rounds=1,
                    concurrency=concurrency))
        _tournament(base, concurrency)

    before = cells.configure("local")
    both(tmp_path / "local", 1)
    cells.restore(before)
    both(tmp_path / "ray", 4)
    local, ray_ = _results(tmp_path / "local"), _results(tmp_path / "ray")
    # 6 compare cells (3 evaluations each seed + 1 game each seed) + the compare's own + 6 games
    assert len(local) == 2 * 3 + 2 + 1 + 6
    assert ray_ == local
    # the driver wrote every file (no worker path left in them) and recorded who ran each cell
    cfg = json.loads((tmp_path / "ray" / "compare" / "config.json").read_text())
    ex = cfg["executor"]
    assert ex["kind"] == "ray" and ex["address"].endswith(str(on_ray.port)) and len(ex["cells"]) == 6
    # cells are spread over both nodes
    assert {c["node_id"] for c in ex["cells"].values()} == {n["NodeID"] for n in alive_nodes(__import__("ray"))}
    spy = json.loads((tmp_path / "ray" / "spy" / "executor.json").read_text())["executor"]
    assert sorted(spy["cells"]) == [f"games/g{i:04d}" for i in range(6)]
    for p in (tmp_path / "ray").rglob("*"):
        if p.is_file() and p.suffix in (".json", ".jsonl", ".md"):
            assert "mas-cell-" not in p.read_text(encoding="utf-8"), p
    # a rerun resumes: every cell finished, none sent to a worker, the same result, the record kept
    res = run_compare(CompareConfig(data_root=real_data_root, out=tmp_path / "ray" / "compare",
                                    methods=["plain", "pp", "always_a"],
                      scripts=[sc], seeds=2, model=RuleChat(rule=polite_player(vote_for=SIN_MURDERER)), rounds=1,
                      concurrency=4))
    assert res["reused_cells"] == 6
    rerun = _results(tmp_path / "ray")
    assert {k: v for k, v in rerun.items() if k != "compare/result.json"} == \
        {k: v for k, v in local.items() if k != "compare/result.json"}
    assert rerun["compare/result.json"]["table"] == local["compare/result.json"]["table"]
    again = json.loads((tmp_path / "ray" / "compare" / "config.json").read_text())["executor"]
    assert again["cells"] == ex["cells"]
    # without --concurrency the width is the cluster's: remote-only cells -> --max-connections
    from mas_agents import remote
    from mas_agents.remote import endpoints as remote_endpoints
    assert cells.default_concurrency(["openai:m"], 1) == remote_endpoints.settings().max_connections
    assert cells.default_concurrency(["local"], 1) == 1          # one node declares a model slot
    # the leaderboards agree game by game
    games = [Leaderboard(tmp_path / d / "wis.sqlite") for d in ("local", "ray")]
    a, b = ([untimed(g, drop=True) for g in lb.games(lb.tournaments()[0]["id"])] for lb in games)
    assert a == b and len(a) == 6


def _pid_cell(item: int, root: Path) -> int:
    d = root / "cells" / f"c{item}"
    d.mkdir(parents=True)
    (d / "pid.txt").write_text(str(os.getpid()))
    return item


def test_local_model_cells_hold_the_slot_node_one_at_a_time_in_fresh_workers(tmp_path, on_ray):
    # (before the test that kills the worker node: it is the only node with a slot)
    # models=["local"]: each cell needs the one mas_model_slot (declared by the worker node only)
    # and runs in a worker process that exits after it
    out = cells.run_cells(list(range(4)), _pid_cell, root=tmp_path, rel=lambda i: f"cells/c{i}", models=["local"],
                          concurrency=cells.default_concurrency(["local"], 1))
    assert out == [0, 1, 2, 3]
    ran = json.loads((tmp_path / "executor.json").read_text())["executor"]
    assert ran["cells_in_flight"] == 1                      # one slot in the cluster
    assert {c["node_id"] for c in ran["cells"].values()} == {on_ray.worker_id}
    pids = {(tmp_path / "cells" / f"c{i}" / "pid.txt").read_text() for i in range(4)}
    assert len(pids) == 4                                   # a fresh process per cell


def _slow_wis_rule():
    rule = wis_player()

    def slow(messages):
        time.sleep(0.15)
        return rule(messages)
    return slow


def test_a_killed_worker_node_loses_no_game_and_counts_none_twice(tmp_path, on_ray):
    import ray
    attempts = tmp_path / "attempts.log"

    def play(out, config):
        # every try of a game, on whichever node runs it (both nodes see tmp_path: same machine)
        with attempts.open("a") as f:
            f.write(f"{config.game_id} {ray.get_runtime_context().get_node_id()}\n")
        return play_game(out, config)

    killed = threading.Event()

    def killer() -> None:
        # kill the worker node while a game is being played there: its first try has started
        # (a game takes ~3 s: about 20 calls of 0.15 s), so that try is cut off
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if attempts.exists() and on_ray.worker_id in attempts.read_text():
                time.sleep(0.5)
                on_ray.kill_worker()
                killed.set()
                return
            time.sleep(0.05)

    watcher = threading.Thread(target=killer, daemon=True)
    watcher.start()
    cells.configure("ray", on_ray.address)
    res = run_tournament(TournamentConfig(agents=["plain", "plain+reasoning"], games=8, pairs=PAIRS,
                                          model=RuleChat(rule=_slow_wis_rule()), db=tmp_path / "wis.sqlite",
                                          out=tmp_path / "spy", concurrency=4, speak_timeout=None), play=play)
    watcher.join(timeout=5)
    assert killed.is_set(), "no cell ran on the worker node"
    board = Leaderboard(tmp_path / "wis.sqlite")
    games = board.games(res["id"])
    assert res["played"] == 8 and len(games) == 8
    assert sorted(g["game_id"] for g in games) == [f"{res['id']}-g{i:04d}" for i in range(8)]
    assert sorted(p.name for p in (tmp_path / "spy" / "games").iterdir()) == [f"g{i:04d}" for i in range(8)]
    tries = [line.split() for line in attempts.read_text().splitlines()]
    on_worker = [g for g, node in tries if node == on_ray.worker_id]
    # some game was cut off on the dead node and played again elsewhere: more tries than games,
    # yet every game is in the leaderboard once
    assert len(tries) > 8 and len(set(g for g, _ in tries)) == 8 and on_worker
    # the leaderboard's own counts: 8 games, 6 seats each, every seat once
    assert [t["games"] for t in board.tournaments() if t["id"] == res["id"]] == [8]
    assert sum(m["games"] for m in res["metrics"]) == 8 * 6


def test_an_unreachable_cluster_is_one_line_and_exit_3(tmp_path):
    import ray
    from typer.testing import CliRunner
    from mas_agents.cli import app
    ray.shutdown()     # a driver still connected to the module's cluster would not try the address
    before = cells.configure("local")
    port = free_port()
    r = CliRunner().invoke(app, ["spy", "tournament", "--agents", "plain,plain", "--games", "2",
                                 "--executor", "ray", "--ray-address", f"127.0.0.1:{port}",
                                 "--out", str(tmp_path / "t"), "--db", str(tmp_path / "wis.sqlite")])
    assert r.exit_code == 3, r.output
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and f"127.0.0.1:{port}: cannot reach the Ray cluster" in lines[0], r.output
    assert not (tmp_path / "t").exists() and not (tmp_path / "wis.sqlite").exists()
    assert cells.settings().kind == "local"     # the command put the process-wide setting back
    cells.restore(before)


def test_without_an_address_a_local_instance_is_started(tmp_path):
    # even with another cluster on this machine (the module's): its own instance, one model slot
    import ray
    ray.shutdown()
    before = cells.configure("ray")
    try:
        info = cells.connect()
        assert info["nodes"] == 1 and info["model_slots"] == 1.0
        res = _tournament(tmp_path, concurrency=2)
        assert res["played"] == 6
        ran = json.loads((tmp_path / "spy" / "executor.json").read_text())["executor"]
        assert len(ran["cells"]) == 6 and ran["cells_in_flight"] == 2
    finally:
        ray.shutdown()
        cells.restore(before)


def test_executor_flags_are_checked():
    with pytest.raises(ValueError, match="--executor must be one of local, ray"):
        cells.configure("dask")
    with pytest.raises(ValueError, match="--ray-address needs --executor ray"):
        cells.configure("local", "127.0.0.1:6379")


def test_cell_resources_hold_a_model_slot_only_for_local_models():
    assert cells.cell_resources(["local"], node_cpus=2.0) == {"num_cpus": 2.0, "resources": {cells.MODEL_SLOT: 1},
                                                              "max_calls": 1}
    assert cells.cell_resources(["openai:gpt-4o-mini", "local:/m/x.gguf"])["resources"] == {cells.MODEL_SLOT: 1}
    assert cells.cell_resources(["openai:gpt-4o-mini"]) == {"num_cpus": cells.REMOTE_CELL_CPUS}
    assert cells.cell_resources([RuleChat(rule=wis_player())]) == {"num_cpus": cells.REMOTE_CELL_CPUS}


def test_cell_task_ships_files_both_ways_and_rewrites_its_own_path(tmp_path):
    # what a worker does with a cell, outside Ray: the snapshot comes in, new files and deletions go out
    def fn(item, root: Path) -> str:
        d = root / "games" / item
        assert (d / "old.txt").read_text() == "kept"
        (d / "gone.txt").unlink()
        (d / "sub").mkdir()
        (d / "sub" / "new.json").write_text(json.dumps({"dir": str(d)}))
        return item

    from dataclasses import asdict
    from mas_agents import remote
    from mas_agents.remote import endpoints
    from mas_agents import prompt_log
    saved, recording = asdict(endpoints.settings()), prompt_log.record_prompts()
    proc = cells._process_settings(window=3)
    # --max-connections is divided among the cells in flight, never below 1
    assert proc["remote"]["max_connections"] == max(1, saved["max_connections"] // 3)
    try:
        result, files, deleted, node = cells.cell_task(fn, "g0001", "games/g0001",
                                                        {"old.txt": b"kept", "gone.txt": b"x"}, proc)
    finally:   # the task set this process's settings as a worker's: put them back
        endpoints.configure(**saved)
        prompt_log.set_record_prompts(recording)
    assert result == "g0001" and deleted == ["games/g0001/gone.txt"]
    assert sorted(files) == ["games/g0001/old.txt", "games/g0001/sub/new.json"]
    assert files["games/g0001/sub/new.json"] == b'{"dir": "\x00ROOT\x00/games/g0001"}'
    cell = tmp_path / "games" / "g0001"
    cell.mkdir(parents=True)
    (cell / "gone.txt").write_text("x")
    cells._write_back(tmp_path, files, deleted)
    assert json.loads((cell / "sub" / "new.json").read_text()) == {"dir": str(cell)}
    assert not (cell / "gone.txt").exists() and (cell / "old.txt").read_text() == "kept"
