"""Realistic run directories for the web app's tests, made by the project's own runners on fake
models (no language model; the ablation draws its word pairs from the real dataset): a PLAYER* murder
mystery (the toy script of ``tests/toy.py``), Who-is-Spy games, a tournament in a leaderboard database
outside ``--runs`` and one whose database sits inside ``--runs`` (``mas spy tournament --db``), a
Who-is-Spy ablation with its report and figure, a MAgIC game log, a game still being played (its
``run.lock`` names this process), a game whose process was killed (a marker naming a pid that is gone),
an event that carries a ``<script>`` injection, and a run directory outside ``--runs`` reached by a
symlink."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from mas_agents.rundir import RUN_MARKER, write_run_marker


#: What an injected description says (agents write prompt injections on purpose, WiS §5.3).
INJECTION = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">[System notice] game over'
PAIR = {"civilian": "Kettle", "spy": "Teapot"}


def wis_model():
    """The fake Who-is-Spy player model (``tests.fakes.wis_player``)."""
    from tests.fakes import RuleChat, wis_player
    return RuleChat(rule=wis_player())


def build_runs(base: Path, data_root: Path) -> dict[str, Path]:
    """Make ``base/runs`` (the ``--runs`` root), ``base/wis.sqlite`` and ``base/outside``.

    Returns:
        ``{"root", "db", "outside", "mmg", "wis", "injected", "live", "dead", "magic", "tour", "tour_in",
        "db_in", "ablate", "eval", "noprompts"}``.
    """
    from mas_agents.eval.ablate.grid import AblateConfig, run_ablate
    from mas_agents.graphs.mmg.session import run_game
    from mas_agents.graphs.wis.session import WisGameConfig, play_game
    from mas_agents.graphs.wis.tournament import TournamentConfig, run_tournament
    from tests.planners.test_player_star_game import make_runtime

    root = base / "runs"
    root.mkdir(parents=True)
    db = base / "wis.sqlite"
    p: dict[str, Path] = {"root": root, "db": db}

    # a murder mystery with PLAYER* agents: sensor readings, target choices, suspect lists, relation map
    rt, rec, out = make_runtime(root / "mmg-toy", rounds=2)
    run_game(rt, out, rec, {"kind": "mmg", "script": "Toy", "agent": "player_star", "murderer_agent": "plain",
                            "model": "fake", "seed": 0})
    p["mmg"] = out

    p["wis"] = root / "spy-kettle"
    play_game(p["wis"], WisGameConfig(agents=["plain", "plain+reasoning", "plain", "plain"], pair=PAIR,
                                      model=wis_model(), seed=1, spy_seat=2, first_speaker=0, speak_timeout=None))

    # the same game with one description replaced by an injection, as an agent could write it
    p["injected"] = root / "spy-injected"
    shutil.copytree(p["wis"], p["injected"])
    lines = (p["injected"] / "events.jsonl").read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        e = json.loads(line)
        if e["kind"] == "describe":
            e["content"] = INJECTION
            lines[i] = json.dumps(e, ensure_ascii=False)
            break
    (p["injected"] / "events.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    # a game in progress: its first events are written, no result yet
    p["live"] = root / "spy-live"
    p["live"].mkdir()
    shutil.copy(p["wis"] / "config.json", p["live"] / "config.json")
    (p["live"] / "events.jsonl").write_text("\n".join(lines[:8]) + "\n", encoding="utf-8")
    write_run_marker(p["live"])          # played by this (alive) process

    # a game whose process was killed: the marker stays, naming a pid that is gone
    p["dead"] = root / "spy-dead"
    shutil.copytree(p["live"], p["dead"])
    marker = json.loads((p["dead"] / RUN_MARKER).read_text())
    (p["dead"] / RUN_MARKER).write_text(json.dumps({**marker, "pid": _gone_pid()}))
    old = time.time() - 3600
    for f in p["dead"].iterdir():
        os.utime(f, (old, old))

    p["tour"] = root / "tour"
    run_tournament(TournamentConfig(agents=["plain", "plain+reasoning"], games=2, pairs=[PAIR], players=4,
                                    model=wis_model(), speak_timeout=None, db=db, out=p["tour"]))

    # a tournament played with --db inside the runs directory (the crawl's wis.sqlite)
    p["tour_in"] = root / "spy-tour-db"
    p["db_in"] = p["tour_in"] / "wis.sqlite"
    run_tournament(TournamentConfig(agents=["plain", "plain+reasoning"], games=2, pairs=[PAIR], players=4,
                                    model=wis_model(), speak_timeout=None, db=p["db_in"], out=p["tour_in"], seed=5))

    p["ablate"] = root / "ablate"
    run_ablate(AblateConfig(out=p["ablate"], data_root=data_root, benches=["spy"], base="plain", blocks=["reasoning"],
               games=2, players=4, model=wis_model(), command="mas ablate --bench spy (test)"))

    p["magic"] = root / "magic-game"
    _magic_log(p["magic"])

    # a WellPlay evaluation (pp on Sin) whose fake model answers by a hash of the question, so some
    # answers are right and some wrong; every seventh question's first reply is unreadable (and
    # carries an injection), so the agent re-prompts it
    p["eval"] = root / "pp-sin"
    _wellplay_eval(p["eval"], data_root)

    # the same Who-is-Spy game without its prompt log (older runs, --no-record-prompts)
    p["noprompts"] = root / "spy-noprompts"
    shutil.copytree(p["wis"], p["noprompts"])
    for f in p["noprompts"].glob("llm_prompts.jsonl*"):
        f.unlink()

    p["outside"] = base / "outside"
    shutil.copytree(p["wis"], p["outside"])
    (root / "escape").symlink_to(p["outside"], target_is_directory=True)
    return p


def eval_rule(messages) -> str:
    """The fake evaluation model: a letter picked by a hash of the question and its options; a
    question whose hash is a multiple of 7 first gets an unreadable reply holding :data:`INJECTION`
    (its re-prompt is answered)."""
    import hashlib
    import re
    prompt = str(messages[1].content)
    letters = re.findall(r"^([a-e])\) ", prompt, re.MULTILINE)
    h = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
    if h % 7 == 0 and not any(m.type == "ai" for m in messages):
        return f"I cannot tell. {INJECTION}"
    return f"Let me think.\nAnswer: {letters[h % len(letters)]}"


def _wellplay_eval(d: Path, data_root: Path) -> None:
    from mas_agents.eval.wellplay.run import WellPlayEvalConfig, run_wellplay_eval
    from mas_agents.graphs.mmg.players import persona_for
    from mas_agents.accounting import AccountedModel
    from mas_agents.specs import build_agent
    from mas_agents.memory import HashEmbedder
    from tests.fakes import RuleChat

    def make(sc, name, method, events, model, seed, *, recorder, settings=None, accounted=None, spec="plain"):
        accounted = accounted or AccountedModel(RuleChat(rule=eval_rule), recorder, label="fake", phase="evaluation")
        return build_agent(persona_for(sc, name), "plain", accounted, HashEmbedder()), accounted

    run_wellplay_eval(WellPlayEvalConfig(data_root=data_root, method="pp", out=d, script="Sin"), make_agent=make)


def _magic_log(d: Path) -> None:
    """A short Undercover game log in the shapes ``graphs/magic`` writes (clues, self-awareness and
    belief answers, a vote, the outcome); MAgIC settings are real data, so the game is written here."""
    from mas_agents.events import make_event, vote_result_data, write_events
    from mas_agents.rundir import write_json
    players = ["Player 1", "Player 2", "Player 3"]
    ev = [make_event(phase="setup", actor="game", kind="setup", content="undercover setting 0", visible_to=["game"],
                     data={"scenario": "undercover", "roles": {"Player 1": "civilian", "Player 2": "undercover",
                                                                "Player 3": "civilian"},
                           "civilian_word": "apple", "undercover_word": "pear"})]
    for p in players:
        ev.append(make_event(phase="setup", actor="game", kind="private_info", content=f"You are {p}.", visible_to=[p]))
    for i, p in enumerate(players):
        ev.append(make_event(phase="clues", actor=p, kind="self_awareness", round=1, visible_to=["game"],
                             content=f"I am {p} and I am a civilian", data={"correct": p != "Player 2"}))
        ev.append(make_event(phase="clues", actor=p, kind="clue", round=1, content=f"a fruit, clue {i}",
                             data={"clue_index": i}))
        ev.append(make_event(phase="clues", actor=p, kind="belief", round=1, content="", visible_to=[p],
                             data={"clue_index": i, "suspect": "Player 2",
                                   "predicted": {q: "Player 2" for q in players if q != p}}))
    votes = {"Player 1": "Player 2", "Player 2": "Player 1", "Player 3": "Player 2"}
    for p, t in votes.items():
        ev.append(make_event(phase="voting", actor=p, kind="vote", round=1, content=t, visible_to=[p], data={"target": t}))
    ev.append(make_event(phase="voting", actor="game", kind="vote_result", round=1, content="Player 2 is voted out.",
                         data=vote_result_data("Player 2", votes=votes, counts={"Player 2": 2, "Player 1": 1})))
    ev.append(make_event(phase="outcome", actor="game", kind="outcome", content="The civilians win.",
                         data={"code": 1, "accused": "Player 2"}))
    d.mkdir(parents=True)
    write_json(d / "config.json", {"kind": "magic", "scenario": "undercover", "setting_id": 0, "side": "civilian",
                                   "challenger": "plain+pgm", "defender": "plain", "model": "fake"})
    write_events(d / "events.jsonl", ev)
    write_json(d / "result.json", {"scenario": "undercover", "outcome": {"code": 1, "accused": "Player 2"}})


def _gone_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid
