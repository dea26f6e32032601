"""The typed run configurations of Who is Spy and MAgIC (issue 51 item 5): what each runner takes is
what its ``config.json`` records, in the same order, and a configuration read back from a run
directory (``Cfg.load``) is that run again: the same game, the same tournament id, the same
MAgIC games reused."""

from __future__ import annotations

import dataclasses
import json

import pytest

from mas_agents.graphs.magic.bench import MagicBenchConfig, game_dir, run_magic
from mas_agents.graphs.magic.session import MagicGameConfig
from mas_agents.graphs.wis.session import WisGameConfig, play_game
from mas_agents.graphs.wis.tournament import TournamentConfig, run_tournament
from mas_agents.game.conformance_kit import untimed
from tests.fakes import RuleChat, magic_player, wis_player

PAIR = {"civilian": "tea", "spy": "coffee"}
PAIRS = [PAIR, {"civilian": "cat", "spy": "dog"}]


def _config(d) -> dict:
    return json.loads((d / "config.json").read_text(encoding="utf-8"))


def test_a_wis_game_config_read_back_is_the_resolved_game_and_plays_it_again(tmp_path):
    fake = RuleChat(rule=wis_player())
    first = play_game(tmp_path / "g", WisGameConfig(agents=["plain"] * 4, pair=PAIR, model=fake, seed=2))
    stored = _config(tmp_path / "g")
    back = WisGameConfig.load(tmp_path / "g", model=fake)
    # the game's fields, right after "kind", in the dataclass's order; the drawn seats and the
    # limits resolved (a fake model is not the embedded one: WiS's 10 s)
    assert list(stored)[1:10] == list(back.record()) == [f.name for f in dataclasses.fields(WisGameConfig)][:9]
    assert back.agents == ("plain",) * 4 and back.game_id == "g" and back.seed == 2
    assert (back.spy_seat, back.first_speaker) == (stored["spy_seat"], stored["first_speaker"])
    assert isinstance(back.spy_seat, int) and back.speak_timeout == back.vote_timeout == 10.0
    again = play_game(tmp_path / "h", back)
    assert untimed(again, drop=True) == untimed(first, drop=True)
    assert {k: v for k, v in _config(tmp_path / "h").items() if k in back.record()} == back.record()


def test_a_tournament_read_back_from_its_config_json_is_the_same_tournament(tmp_path):
    fake = RuleChat(rule=wis_player())
    cfg = TournamentConfig(agents=["plain", "plain+reasoning"], games=2, pairs=PAIRS, players=4, model=fake,
                           db=tmp_path / "wis.sqlite", out=tmp_path / "t")
    res = run_tournament(cfg)
    stored = _config(tmp_path / "t")
    assert stored["id"] == res["id"] and list(stored)[1:7] == list(cfg.record())
    back = TournamentConfig.load(tmp_path / "t", pairs=PAIRS, model=fake, db=cfg.db, out=cfg.out)
    assert back.agents == ("plain", "plain+reasoning") and back.games == 2 and back.speak_timeout == 10.0
    again = run_tournament(back)
    assert (again["id"], again["played"], again["skipped"]) == (res["id"], 0, 2)


def test_a_magic_run_read_back_reuses_its_games_and_a_game_config_names_its_setting(tmp_path, mixed_root):
    fake = RuleChat(rule=magic_player())
    out = tmp_path / "m"
    cfg = MagicBenchConfig(data_root=mixed_root, out=out, scenarios=["prisoners_dilemma"], challenger="plain",
                           defender="plain+reasoning", settings="0", model=fake, temperature=0.0)
    res = run_magic(cfg)
    assert res["reused_games"] == 0
    back = MagicBenchConfig.load(out, data_root=mixed_root, out=out, model=fake)
    assert back == cfg and back.scenarios == ("prisoners_dilemma",)
    assert run_magic(back)["reused_games"] == 1
    gdir = game_dir(out, "prisoners_dilemma", "test_seat", 0)
    stored = _config(gdir)
    game = MagicGameConfig.load(gdir)
    assert (game.scenario, game.setting_id, game.side, game.challenger, game.defender, game.temperature) == \
        ("prisoners_dilemma", 0, "test_seat", "plain", "plain+reasoning", 0.0)
    # config.json: the recorded fields in order, with the seats the set-up chose after "defender"
    keys = [k for k in stored if k in game.record() or k == "seats"]
    assert keys == ["scenario", "setting_id", "side", "challenger", "defender", "seats", "seed", "temperature",
                    "replay_openings"]
    setting = type("Setting", (), {"id": 3})()
    with pytest.raises(ValueError, match="setting_id 0 is not the setting's id 3"):
        game.replace(setting=setting)
