"""A Who-is-Spy game whose pair was drawn from the dataset records the pairs file (data_files),
but its replay reads no file: the pair is in config.json. Rerun without a datasets root (``mas
rerun`` or ``mas serve``'s Verify, started without --data-dir), it is "identical", not "differs
(data)" (review finding on fd9f746/a6ddfab)."""

from __future__ import annotations

import json

from mas_agents.graphs.wis.dataset import load_pairs
from mas_agents.eval.rerun.execute import rerun
from mas_agents.graphs.wis.session import WisGameConfig, play_game
from tests.fakes import RuleChat, wis_player


def test_a_drawn_pair_game_reruns_identical_with_and_without_a_datasets_root(real_data_root, tmp_path):
    out = tmp_path / "g"
    pair = load_pairs(real_data_root, "en")[0]
    play_game(out, WisGameConfig(agents=["plain"] * 4, pair=pair, model=RuleChat(rule=wis_player()),
                                 speak_timeout=None))
    assert list(json.loads((out / "config.json").read_text())["data_files"]) == ["whoisspy/pairs_en.jsonl"]
    for root in (real_data_root, None):
        outcome = rerun(out, data_root=root)
        assert outcome.status == "identical", (root, outcome.text())
