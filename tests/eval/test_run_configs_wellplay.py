"""The typed run configurations of the murder mystery, the WellPlay evaluation and the comparison
(issue 51 item 5): what each records is what its runner writes to config.json, and a run's
config.json reads back into the configuration that made it."""

from __future__ import annotations

import json

import pytest

from mas_agents.graphs.mmg.dataset import load_script
from mas_agents.eval.compare.run import CompareConfig, run_compare
from mas_agents.eval.wellplay.run import WellPlayEvalConfig, run_wellplay_eval
from tests.data_roots import SIN


def _recorded(run_dir, cfg) -> dict:
    """The fields of ``run_dir/config.json`` that ``cfg`` records."""
    stored = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
    return {k: stored[k] for k in cfg.record()}


@pytest.mark.realdata
def test_an_evaluation_records_its_configuration_and_reads_it_back(tmp_path, real_data_root):
    cfg = WellPlayEvalConfig(method="always_a", out=tmp_path, data_root=real_data_root, script="Sin", seed=3,
                             runs=2, shuffle=False)
    assert cfg.agent is None                     # a model-free method has no answering agent
    run_wellplay_eval(cfg)
    assert _recorded(tmp_path, cfg) == cfg.record() == {
        "method": "always_a", "agent": None, "lang": "en", "seed": 3, "runs": 2, "shuffle": False,
        "scoring": "strict", "run": None, "settings": None}
    back = WellPlayEvalConfig.load(tmp_path, out=tmp_path, data_root=real_data_root)
    assert back == cfg                           # script "Sin" comes back from the recorded scripts


def test_an_evaluation_config_keeps_the_agent_of_pp_and_rebuilds_the_budgets(tmp_path):
    from mas_agents.memory import MemorySettings
    cfg = WellPlayEvalConfig(method="pp", agent="player_star", out=tmp_path, data_root=tmp_path,
                             settings=MemorySettings(script_budget=100))
    rec = cfg.record()
    assert rec["agent"] == "player_star" and rec["settings"] == {"script_budget": 100, "dialogue_budget": 4000,
                                                                 "chunk_tokens": 50, "total_budget": 6000}
    back = WellPlayEvalConfig.from_record({**rec, "scripts": ["Sin", "Sin 2"]}, out=tmp_path, data_root=tmp_path)
    assert back.settings == MemorySettings(script_budget=100) and back.script == "all"


@pytest.mark.realdata
def test_a_game_config_records_what_the_game_wrote(tmp_path, real_data_root):
    from mas_agents.graphs.mmg.session import MmgConfig
    from mas_agents.memory import MemorySettings
    sc = load_script(real_data_root, SIN[0])
    cfg = MmgConfig(script=sc, out=tmp_path, agent="player_star", rounds=2, seed=4, data_dir=real_data_root)
    rec = cfg.record()
    assert rec == {"script": "Sin", "lang": "en", "agent": "player_star", "seed": 4, "rounds": 2, "questions": 1,
                   "settings": {"script_budget": 4000, "dialogue_budget": 4000, "chunk_tokens": 50, "total_budget": 6000},
                   "data_dir": str(real_data_root)}      # no "human" key when no person plays
    back = MmgConfig.from_record({**rec, "kind": "mmg", "model": "local"}, out=tmp_path)
    assert back == cfg.replace(script="Sin") and isinstance(back.settings, MemorySettings)
    assert back.loaded_script().id == sc.id
    assert MmgConfig(script=sc, out=tmp_path, human="Officer Li").record()["human"] == "Officer Li"
    with pytest.raises(ValueError, match="give data_dir"):
        MmgConfig(script="Sin", out=tmp_path).loaded_script()


@pytest.mark.realdata
def test_a_comparison_records_script_names_and_reads_back(tmp_path, real_data_root):
    sc = load_script(real_data_root, SIN[0])
    cfg = CompareConfig(methods=["always_a"], scripts=[sc], seeds=1, rounds=1, out=tmp_path, data_root=real_data_root)
    run_compare(cfg)
    assert _recorded(tmp_path, cfg) == cfg.record() == {
        "methods": ["always_a"], "scripts": ["Sin"], "seeds": 1, "lang": "en", "rounds": 1, "questions": 1}
    back = CompareConfig.load(tmp_path, out=tmp_path, data_root=real_data_root)
    assert back == cfg.replace(scripts=("Sin",)) and back.loaded_scripts()[0].id == sc.id


def test_an_ablation_records_its_configuration_and_reads_it_back(tmp_path, monkeypatch):
    import mas_agents.eval.ablate.grid as ablate
    monkeypatch.setattr(ablate, "_check_inputs", lambda *a, **k: None)
    monkeypatch.setattr(ablate, "run_spy", lambda cfg, grid, **kw: {"rows": []})
    monkeypatch.setattr(ablate, "figures", lambda result, out: None)
    cfg = ablate.AblateConfig(benches=["spy"], blocks=["pgm"], games=2, players=4, speak_timeout=9.5,
                              command="mas ablate (test)", out=tmp_path, data_root=tmp_path, model="openai:stub")
    ablate.run_ablate(cfg)
    assert _recorded(tmp_path, cfg) == cfg.record() == {
        "benches": ["spy"], "base": "plain", "blocks": ["pgm"], "seeds": 2, "script": "Sin", "games": 2,
        "players": 4, "settings": "0-1", "rounds": 3, "lang": "en", "speak_timeout": 9.5,
        "command": "mas ablate (test)"}
    back = ablate.AblateConfig.load(tmp_path, out=tmp_path, data_root=tmp_path, model="openai:stub")
    assert back == cfg and back.blocks == ("pgm",)
