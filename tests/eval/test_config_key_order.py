"""config.json keeps the key order it had before the typed run configurations (issue 51: the
run files do not change): the derived keys a runner adds to the configuration's record
(``script_id``, ``murderer_agent``, ``scripts``, ``model``) stand where they stood at 0772428."""

from __future__ import annotations

import json

from mas_agents.graphs.mmg.dataset import load_script
from mas_agents.graphs.mmg.session import MmgConfig, play_script
from mas_agents.eval.wellplay.run import WellPlayEvalConfig, run_wellplay_eval
from tests.fakes import RuleChat, any_game_player


def test_a_murder_mystery_and_an_evaluation_write_config_json_in_the_old_order(real_data_root, tmp_path):
    sc = load_script(real_data_root, "Sin", "en")
    play_script(MmgConfig(script=sc, out=tmp_path / "mmg", model=RuleChat(rule=any_game_player()), rounds=1,
                          data_dir=real_data_root))
    keys = list(json.loads((tmp_path / "mmg" / "config.json").read_text()))
    assert keys[:12] == ["kind", "script", "script_id", "lang", "agent", "murderer_agent", "seed", "rounds",
                         "questions", "settings", "data_dir", "model"]
    run_wellplay_eval(WellPlayEvalConfig(method="always_a", out=tmp_path / "ev", data_root=real_data_root,
                                         script="Sin", runs=1, shuffle=False))
    keys = list(json.loads((tmp_path / "ev" / "config.json").read_text()))
    assert keys[:12] == ["kind", "method", "agent", "scripts", "lang", "model", "seed", "runs", "shuffle",
                         "scoring", "run", "settings"]
