"""Experiments register like games (issue 58 item 1): each kind of run that is not one game is an
``ExperimentDef`` registered from its own folder (:mod:`mas_agents.game.experiments`), the web
reads the registry and names no experiment, a run's kind is the one its runner recorded, and a
run directory written before it recorded one is recognised by its experiment's declared legacy
recogniser."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mas_agents.game import experiments
from mas_agents.game.experiments import ExperimentDef, Parts, RunLine
from mas_agents.web import run_kinds
from mas_agents.web import runs as rs

WEB = Path(__file__).resolve().parents[2] / "mas_agents" / "web"


def test_each_built_in_experiment_is_registered_under_the_kind_its_runner_records():
    from mas_agents.eval.ablate.grid import KIND as ablation
    from mas_agents.eval.compare.run import CompareConfig
    from mas_agents.eval.wellplay.run import WellPlayEvalConfig
    from mas_agents.graphs.magic.bench import KIND as bench
    from mas_agents.graphs.wis.tournament import EXPERIMENT_KIND, EXPERIMENT_KINDS, TOURNAMENT_KIND
    from mas_agents.graphs.wis import tournament_def
    recorded = [WellPlayEvalConfig.KIND, CompareConfig.KIND, bench, ablation, TOURNAMENT_KIND, EXPERIMENT_KIND,
                "reproduce"]
    assert list(experiments.BUILTIN) == recorded
    assert experiments.kinds()[:len(recorded)] == recorded
    for kind in recorded:
        ex = experiments.find(kind)
        assert ex is not None and ex.kind == kind
    assert tournament_def._STRATEGIES == EXPERIMENT_KINDS
    assert experiments.find("wis") is None and experiments.find(None) is None and experiments.find("") is None


def test_the_web_names_no_experiment_and_reads_no_key_to_guess_a_kind():
    files = sorted(p for p in WEB.rglob("*") if p.suffix in (".py", ".html", ".js"))
    literal = re.compile(r"""['"](%s)['"]""" % "|".join(re.escape(k) for k in experiments.BUILTIN))
    hits = [f"{p.relative_to(WEB)}:{i}: {line.strip()}" for p in files
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if literal.search(line)]
    assert hits == []
    text = (WEB / "run_kinds.py").read_text(encoding="utf-8")
    # the one key read is the recorded kind; no "<key>" in config/result
    assert re.findall(r"""['"]\w+['"] in (cfg|res|config|result)\b""", text) == []
    assert not (WEB / "kinds.py").exists()


def _write(d: Path, name: str, value: dict) -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text(json.dumps(value), encoding="utf-8")


def test_runs_written_before_the_kind_was_recorded_are_recognised_by_the_declared_fallback(tmp_path):
    _write(tmp_path / "abl", "config.json", {"base": "plain", "blocks": ["pgm"], "benches": ["spy"]})
    _write(tmp_path / "bench", "config.json", {"challenger": "plain+pgm", "defender": "plain", "scenarios": ["undercover"]})
    _write(tmp_path / "exp", "result.json", {"kind": "attack", "rows": [], "subject": "plain", "others": "plain"})
    _write(tmp_path / "tour" / "games" / "g0000", "config.json", {"kind": "wis", "game_id": "t-abc-g0"})
    _write(tmp_path / "tour" / "games" / "g0000", "result.json", {})
    _write(tmp_path / "other", "config.json", {"base": "plain"})   # half a grid: nothing
    got = {n: run_kinds.detect_kind(tmp_path / n) for n in ("abl", "bench", "exp", "tour", "other")}
    assert got == {"abl": "ablation", "bench": "magic-bench", "exp": "wis-experiment", "tour": "wis-tournament",
                   "other": None}
    assert run_kinds.leaderboard_id(tmp_path / "tour") == "t-abc"
    assert run_kinds.leaderboard_id(tmp_path / "abl") is None
    # a recorded kind wins over any recogniser
    _write(tmp_path / "rec", "config.json", {"kind": "reproduce", "base": "plain", "benches": []})
    assert run_kinds.detect_kind(tmp_path / "rec") == "reproduce"


@pytest.fixture
def toy_experiment():
    """A toy experiment registered in the test: two parts under ``trials/``, a legacy recogniser."""
    def line(files):
        prog = files.progress()
        return RunLine(agents=[str(files.config.get("who", ""))], headline=f"score {files.result.get('score', '?')}"
                       f" ({prog['text']})")

    def count(d, cfg, finished):
        trials = sorted(p for p in (d / "trials").iterdir()) if (d / "trials").is_dir() else []
        return Parts(sum(finished(t) for t in trials), int(cfg.get("trials") or 0) or None,
                     [t for t in trials if not finished(t)])

    ex = experiments.register(ExperimentDef(
        "toy-trials", line, title="Toy trials", parts="trials", doing="running", count=count, composite=True,
        recognizes=lambda cfg, res, d: isinstance(cfg, dict) and "trials" in cfg and "kind" not in cfg))
    yield ex
    experiments.unregister("toy-trials")


def test_an_experiment_of_another_package_is_listed_with_its_line_and_progress(tmp_path, toy_experiment):
    root = tmp_path / "runs"
    _write(root / "t", "config.json", {"kind": "toy-trials", "who": "alice", "trials": 2})
    _write(root / "t" / "trials" / "a", "config.json", {"kind": "reproduce"})
    _write(root / "t" / "trials" / "a", "result.json", {})
    _write(root / "old", "config.json", {"who": "bob", "trials": 3})      # written before it recorded its kind
    found = {r.rel: r for r in rs.scan(root)}
    assert found["t"].kind == "toy-trials" and found["t"].agents == ["alice"]
    assert found["t"].headline == "score ? (1 of 2 trials finished)"
    assert found["old"].kind == "toy-trials" and found["old"].headline == "score ? (0 of 3 trials finished)"
    assert "toy-trials" in run_kinds.all_kinds()
    assert sorted(r.rel for r in rs.filter_runs(list(found.values()), kind="toy-trials")) == ["old", "t"]
    experiments.unregister("toy-trials")
    assert run_kinds.detect_kind(root / "t") is None


def test_register_refuses_a_kind_that_cannot_name_runs():
    with pytest.raises(ValueError, match="lowercase"):
        experiments.register(ExperimentDef("Bad Kind", lambda files: RunLine([], "")))
