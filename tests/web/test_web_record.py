"""The web app reads runs without changing them and shows what their records say (issue 46, items
5 and 7 and the display side of item 2): the leaderboard leaves the runs folder byte-identical,
runs are dated from their own record (not the folder's modification time), a running WellPlay
evaluation shows how many questions are answered, and the runs list shows and filters by the
models the seats used (``config.json`` ``models``)."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import sqlite3
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from mas_agents.rundir import write_json, write_run_marker
from mas_agents.web.app import create_app
from tests.web.runs_fixture import PAIR, wis_model


def snapshot(root: Path) -> dict[str, tuple]:
    """Every file and folder under ``root`` (``root`` too): kind, size, modification time in ns
    and, for a file, the SHA-256 of its bytes."""
    out = {}
    for here, dirs, files in os.walk(root):
        for name in [""] + dirs + files:
            p = Path(here) / name if name else Path(here)
            st = p.lstat()
            rel = p.relative_to(root).as_posix()
            if p.is_file():
                out[rel] = ("file", st.st_size, st.st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
            else:
                out[rel] = ("dir", st.st_mtime_ns)
    return out


@pytest.fixture
def tournament_root(tmp_path):
    """``runs/tour``: a two-game tournament whose leaderboard database is inside the run folder
    (``mas spy tournament --db runs/tour/wis.sqlite``), its writer gone (checkpointed, no -wal)."""
    from mas_agents.graphs.wis.tournament import TournamentConfig, run_tournament
    root = tmp_path / "runs"
    db = root / "tour" / "wis.sqlite"
    run_tournament(TournamentConfig(agents=["plain", "plain+reasoning"], games=2, pairs=[PAIR], players=4,
                                    model=wis_model(), speak_timeout=None, db=db, out=root / "tour"))
    gc.collect()    # the tournament's Leaderboard and its write connection
    if db.with_name("wis.sqlite-wal").exists():   # as after the writer's process ended
        sqlite3.connect(db).close()
    assert not db.with_name("wis.sqlite-wal").exists() and not db.with_name("wis.sqlite-shm").exists()
    assert db.read_bytes()[18:20] == b"\x02\x02"       # a WAL-mode database (file format 2, SQLite's header)
    # the folders' times put in the past, so a change made by reading would show
    old = time.time() - 7200
    for p in sorted(root.rglob("*"), reverse=True) + [root]:
        os.utime(p, (old, old), follow_symlinks=False)
    return root


def test_the_leaderboard_and_the_runs_pages_leave_the_runs_folder_byte_identical(tournament_root, tmp_path):
    root = tournament_root
    before = snapshot(root)
    client = TestClient(create_app(root, tmp_path / "no-such.sqlite", model=wis_model()))
    r = client.get("/leaderboard")
    assert r.status_code == 200 and 'id="leaderboard"' in r.text and "tour/wis.sqlite" in r.text
    tid = json.loads((root / "tour" / "games" / "g000" / "config.json").read_text())["game_id"].rsplit("-g", 1)[0] \
        if (root / "tour" / "games" / "g000").is_dir() else None
    for url in ["/", "/run/tour", "/api/progress/tour", "/leaderboard.csv", "/leaderboard?db=tour/wis.sqlite",
                f"/leaderboard?db=tour/wis.sqlite&tournament={tid}" if tid else "/leaderboard?agent=plain"]:
        assert client.get(url).status_code == 200, url
    z = client.get("/zip/tour")
    assert z.status_code == 200
    import io
    import zipfile
    names = zipfile.ZipFile(io.BytesIO(z.content)).namelist()
    assert "tour/wis.sqlite" in names and not [n for n in names if n.endswith(("-wal", "-shm"))], names
    after = snapshot(root)
    assert sorted(after) == sorted(before), set(after) ^ set(before)    # no -wal / -shm files
    changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
    assert not changed, changed


def test_a_read_only_leaderboard_refuses_writes_and_a_missing_file(tournament_root):
    from mas_agents.graphs.wis.leaderboard import Leaderboard
    db = tournament_root / "tour" / "wis.sqlite"
    board = Leaderboard(db, read_only=True)
    assert len(board.games()) == 2 and board.tournaments()[0]["games"] == 2
    with pytest.raises(PermissionError):
        board.start_tournament("x", {})
    with pytest.raises(FileNotFoundError):
        Leaderboard(tournament_root / "nothing.sqlite", read_only=True)
    assert not (tournament_root / "nothing.sqlite").exists()


def _local(iso: str) -> str:
    return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")


def _calls(d: Path, started: list[str], actor: str = "Player 1", purposes: list[str] | None = None,
           phase: str = "gameplay") -> None:
    """An ``llm_calls.jsonl`` as :class:`mas_agents.call_log.CallRecorder` writes it."""
    lines = []
    for i, t in enumerate(started):
        lines.append(json.dumps({"call_id": f"{i:032x}", "actor": actor, "purpose": (purposes or ["describe#1"] * len(started))[i],
                                 "model": "stub", "input_tokens": 10, "output_tokens": 2, "latency_s": 0.1,
                                 "retries": 0, "ok": True, "error": None, "started_at": t, "prompt_chars": 40,
                                 "output_chars": 8, "phase": phase}))
    (d / "llm_calls.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_runs_are_dated_from_their_record_not_the_folder_mtime(tmp_path):
    from mas_agents.web import runs as rs
    root = tmp_path / "runs"
    late = datetime(2026, 11, 28, 6, 15, tzinfo=timezone.utc).timestamp()
    # a game: its first call at 05:29; its folder and config.json touched at 06:15
    game = root / "game"
    game.mkdir(parents=True)
    write_json(game / "config.json", {"kind": "wis", "agents": ["plain", "plain", "plain"], "model": "local"})
    write_json(game / "result.json", {"outcome": {"winner": "civilians", "rounds_played": 1, "spy": "Player 2"}})
    _calls(game, ["2026-11-28T05:29:03.120Z", "2026-11-28T05:29:04.000Z"])
    # a tournament (no config.json of its own): its first game played at 04:10
    tour = root / "tour"
    for i, t in enumerate(["2026-11-28T04:10:00.000Z", "2026-11-28T04:12:00.000Z"]):
        g = tour / "games" / f"g{i:03d}"
        g.mkdir(parents=True)
        write_json(g / "config.json", {"kind": "wis", "game_id": f"t1-g{i}", "agents": ["plain"] * 3, "model": "local"})
        write_json(g / "result.json", {"outcome": {"winner": "spy", "rounds_played": 2, "spy": "Player 1"}})
        _calls(g, [t])
    (tour / "wis.sqlite-wal").write_bytes(b"")      # what opening its database used to leave
    for p in [game / "config.json", game / "result.json", game, tour, root]:
        os.utime(p, (late, late))
    runs = {r.rel: r for r in rs.scan(root)}
    assert runs["game"].date == _local("2026-11-28T05:29:03+00:00")
    assert runs["tour"].date == _local("2026-11-28T04:10:00+00:00")
    assert [r.rel for r in rs.scan(root) if r.parent is None] == ["game", "tour"]   # newest first, by the record
    html = TestClient(create_app(root, tmp_path / "none.sqlite")).get("/").text
    assert _local("2026-11-28T05:29:03+00:00") in html and _local("2026-11-28T06:15:00+00:00") not in html
    # without calls: when config.json was written (not the folder's time)
    quiet = root / "quiet"
    quiet.mkdir()
    write_json(quiet / "config.json", {"kind": "wis", "agents": ["plain"] * 3, "model": "local"})
    early = datetime(2026, 11, 27, 22, 0, tzinfo=timezone.utc).timestamp()
    os.utime(quiet / "config.json", (early, early))
    os.utime(quiet, (late, late))
    assert rs.describe(root, quiet, "wis").date == datetime.fromtimestamp(early).strftime("%Y-%m-%d %H:%M")


def test_the_runs_list_shows_and_filters_by_the_models_the_seats_used(tmp_path):
    root = tmp_path / "runs"

    def game(name: str, **cfg) -> None:
        (root / name).mkdir(parents=True)
        write_json(root / name / "config.json", {"kind": "wis", "agents": ["plain"] * 3, **cfg})
        write_json(root / name / "result.json", {"outcome": {"winner": "spy", "rounds_played": 1, "spy": "Player 1"}})

    # the record's contract: `models` = what the seats ran; `model` = the --model default (unused)
    game("stub-only", model="openai:stub", default_model="local", models=["openai:stub"],
         seat_models={"Player 1": "openai:stub", "Player 2": "openai:stub", "Player 3": "openai:stub"})
    game("mixed", model="local, openai:stub", default_model="local", models=["local", "openai:stub"])
    game("old-local", model="local")          # written before `models`: falls back to `model`
    client = TestClient(create_app(root, tmp_path / "none.sqlite"))

    def listed(q: str) -> set[str]:
        html = client.get("/" + q).text
        return {rel for rel in ("stub-only", "mixed", "old-local") if f'href="/run/{rel}"' in html}

    assert listed("?model=openai:stub") == {"stub-only", "mixed"}
    assert listed("?model=local") == {"mixed", "old-local"}
    assert listed("?model=openai") == set()        # a model is matched whole, not as a substring
    html = client.get("/").text
    assert '<option value="local">' in html and '<option value="openai:stub">' in html
    assert '<option value="local, openai:stub">' not in html
    from mas_agents.web import runs as rs
    r = {x.rel: x for x in rs.scan(root)}
    assert r["stub-only"].models == ["openai:stub"] and r["stub-only"].model == "openai:stub"
    assert r["mixed"].model == "local, openai:stub" and r["old-local"].models == ["local"]


# --------------------------------------------------------------------------- a running evaluation

class _Gate:
    """Lets ``n`` model calls through, then holds the next until released."""

    def __init__(self, n: int):
        self.n, self.seen, self.release = n, 0, threading.Event()
        self.lock = threading.Lock()

    def __call__(self, messages) -> str:
        from tests.web.runs_fixture import eval_rule
        with self.lock:
            self.seen += 1
            hold = self.seen > self.n
        if hold:
            assert self.release.wait(60), "the test never released the evaluation"
        return eval_rule(messages)


def test_a_running_evaluation_shows_k_of_n_answered_per_character(tmp_path, real_data_root):
    from mas_agents.graphs.mmg.dataset import load_script
    from mas_agents.eval.wellplay.run import WellPlayEvalConfig, run_wellplay_eval
    from mas_agents.graphs.mmg.players import persona_for
    from mas_agents.accounting import AccountedModel
    from mas_agents.specs import build_agent
    from mas_agents.memory import HashEmbedder
    from tests.fakes import RuleChat

    root = tmp_path / "runs"
    out = root / "pp-running"
    gate = _Gate(5)

    def make(sc, name, method, events, model, seed, *, recorder, settings=None, accounted=None, spec="plain"):
        accounted = accounted or AccountedModel(RuleChat(rule=gate), recorder, label="fake", phase="evaluation")
        return build_agent(persona_for(sc, name), "plain", accounted, HashEmbedder()), accounted

    errors: list[BaseException] = []

    def play() -> None:
        try:
            run_wellplay_eval(WellPlayEvalConfig(data_root=real_data_root, method="pp", out=out, script="Sin",
                              model="openai:stub", concurrency=1), make_agent=make)
        except BaseException as exc:   # noqa: BLE001 - reported by the test
            errors.append(exc)

    th = threading.Thread(target=play, daemon=True)
    th.start()
    try:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 60:
            calls = (out / "llm_calls.jsonl").read_text().splitlines() if (out / "llm_calls.jsonl").exists() else []
            if len(calls) >= 5:
                break
            time.sleep(0.05)
        firsts = [json.loads(c) for c in calls if json.loads(c)["purpose"].startswith("mcq#1")]
        assert len(calls) == 5 and not (out / "answers.jsonl").exists() and not (out / "result.json").exists()
        sc = load_script(real_data_root, "Sin", "en")
        n_all = len(sc.all_questions())
        k = len(firsts)             # re-prompts (mcq#2) are not questions
        who = firsts[0]["actor"]
        n_who = len(sc.questions[who])
        k_who = sum(1 for c in firsts if c["actor"] == who)
        client = TestClient(create_app(root, tmp_path / "none.sqlite", data_root=real_data_root))
        r = client.get(f"/eval/{out.name}")
        assert r.status_code == 200, r.text[:300]
        assert f"{k} of {n_all} answered" in r.text and 'id="eval-progress"' in r.text
        assert f'data-character="{who}"><td>{who}</td>' in r.text and f"{k_who} of {n_who}" in r.text
        assert 'data-src="/api/progress/pp-running"' in r.text                       # it follows the run
        p = client.get(f"/api/progress/{out.name}").json()
        assert (p["done"], p["total"], p["live"], p["text"]) == (k, n_all, True, f"{k} of {n_all} answered")
        assert sum(c["total"] for c in p["characters"]) == n_all
        assert client.get(f"/replay/{out.name}", follow_redirects=False).headers["location"] == f"/eval/{out.name}"
        run_page = client.get(f"/run/{out.name}").text
        assert 'id="eval-link"' in run_page and f"{k} of {n_all} answered" in run_page
    finally:
        gate.release.set()
        th.join(120)
    assert not errors, errors
    r = client.get(f"/eval/{out.name}")
    assert r.status_code == 200 and 'id="eval-progress"' not in r.text and 'id="questions"' in r.text


def test_a_running_evaluation_without_the_dataset_counts_its_answers(tmp_path):
    root = tmp_path / "runs"
    out = root / "op-half"
    out.mkdir(parents=True)
    write_json(out / "config.json", {"kind": "wellplay-eval", "method": "op", "agent": "plain", "scripts": ["Sin"],
                                     "lang": "en", "model": "openai:stub", "seed": 0, "runs": 1, "shuffle": True,
                                     "scoring": "strict", "run": None})
    write_run_marker(out)       # played by this (alive) process
    _calls(out, ["2026-11-28T05:29:00Z"] * 4, actor="Ann", purposes=["mcq#1", "mcq#2", "mcq#1", "mcq#1"],
           phase="evaluation")
    client = TestClient(create_app(root, tmp_path / "none.sqlite"))
    r = client.get("/eval/op-half")
    assert r.status_code == 200 and "3 answered" in r.text and "mas serve --data-dir" in r.text
    assert client.get("/api/progress/op-half").json()["characters"] == [
        {"script": "", "character": "Ann", "done": 3, "total": None}]
