"""An extending rerun (other benches, methods, scenarios or settings into the same --out) adds to
the run's record: config.json and the result keep what the earlier run did (review finding 2)."""

from __future__ import annotations

import json

import pytest

from mas_agents.graphs.mmg.dataset import load_script
from tests.data_roots import SIN
from tests.fakes import RuleChat, magic_player


def test_ablate_config_names_the_benches_of_both_runs(tmp_path, monkeypatch):
    import mas_agents.eval.ablate.grid as ablate
    ran = []

    def bench(name):
        def run(cfg, grid, **kw):
            ran.append(name)
            return {"rows": [name]}
        return run

    monkeypatch.setattr(ablate, "_check_inputs", lambda *a, **k: None)
    monkeypatch.setattr(ablate, "run_spy", bench("spy"))
    monkeypatch.setattr(ablate, "run_magic_bench", bench("magic"))
    monkeypatch.setattr(ablate, "summary", lambda result: "s")
    monkeypatch.setattr(ablate, "figures", lambda result, out: None)
    monkeypatch.setattr(ablate, "report_md", lambda result: "r")
    kw = dict(out=tmp_path, data_root=tmp_path, blocks=["pgm"], model="openai:stub")
    ablate.run_ablate(ablate.AblateConfig(benches=["spy"], **kw))
    res = ablate.run_ablate(ablate.AblateConfig(benches=["magic"], **kw))
    assert ran == ["spy", "magic"]
    assert json.loads((tmp_path / "config.json").read_text())["benches"] == ["spy", "magic"]
    assert res["benches"] == {"spy": {"rows": ["spy"]}, "magic": {"rows": ["magic"]}}


def test_compare_keeps_the_methods_of_the_earlier_run(tmp_path, real_data_root):
    from mas_agents.eval.compare.run import CompareConfig, run_compare
    sc = load_script(real_data_root, SIN[0])
    run_compare(CompareConfig(data_root=real_data_root, out=tmp_path, methods=["always_a"], scripts=[sc], seeds=1,
                              rounds=1))
    res = run_compare(CompareConfig(data_root=real_data_root, out=tmp_path, methods=["random"], scripts=[sc],
                                    seeds=1, rounds=1))
    cfg = json.loads((tmp_path / "config.json").read_text())
    assert cfg["methods"] == ["random", "always_a"] and cfg["scripts"] == [sc.name] and cfg["seeds"] == 1
    assert res["methods"] == ["random", "always_a"]
    assert sorted((c["method"], c["reused"]) for c in res["cells"]) == [("always_a", True), ("random", False)]
    assert {t["method"] for t in res["table"]} == {"always_a", "random"}
    assert res["reused_cells"] == 1
    assert "| always_a |" in (tmp_path / "report.md").read_text()


def test_magic_keeps_the_settings_of_the_earlier_run(tmp_path, mixed_root):
    from mas_agents.graphs.magic.bench import MagicBenchConfig, run_magic, union_settings
    assert union_settings("0-1", "3") == "0-1,3" and union_settings("0", "0") == "0"
    assert union_settings(None, "3") is None
    cfg = MagicBenchConfig(data_root=mixed_root, out=tmp_path, scenarios=["undercover"], challenger="plain",
                           defender="plain", model=RuleChat(rule=magic_player()))
    first = run_magic(cfg.replace(settings="0"))
    res = run_magic(cfg.replace(settings="1"))
    cfg = json.loads((tmp_path / "config.json").read_text())
    assert cfg["settings"] == "0,1" and cfg["scenarios"] == ["undercover"]
    assert res["settings"] == "0,1"
    assert set(first["games"]) < set(res["games"])
    assert {g.rsplit("-s", 1)[1] for g in res["games"]} == {"00", "01"}
    assert res["reused_games"] == len(first["games"])
    assert res["cost"]["games"] == 2 * len(first["games"])
