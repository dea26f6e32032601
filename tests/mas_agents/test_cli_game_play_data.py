"""``mas game play`` and ``mas.play`` load what a parameter names in a game's data (issue 57,
item 5 and the last Low item): a MAgIC setting by id, a WellPlay script by name, and a
Who-is-Spy word pair drawn as ``mas spy play`` draws it. Played in-process on the conformance
kit's fake model (:mod:`mas_agents.game.fake_chat`); the real datasets are read, never committed.
"""

from __future__ import annotations

import json
import random

import pytest
from typer.testing import CliRunner

from mas_agents.cli import app
from tests.conformance.kit import fake_model  # noqa: F401  (fixture)

runner = CliRunner()


def _ok(r) -> None:
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output


@pytest.mark.realdata
def test_game_play_magic_loads_the_setting_by_id(fake_model, real_data_root, tmp_path):
    out = tmp_path / "magic"
    r = runner.invoke(app, ["game", "play", "magic", "--set", "scenario=chameleon", "--set", "setting=3",
                            "--set", "side=non_chameleon", "--set", "challenger=plain", "--set", "defender=plain",
                            "--data-dir", str(real_data_root), "--out", str(out)])
    _ok(r)
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert (config["kind"], config["scenario"], config["setting_id"], config["side"]) == ("magic", "chameleon", 3,
                                                                                         "non_chameleon")
    assert list(config["data_files"]) == ["magic/settings/chameleon/3.json"]   # what rerun checks again
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert result["setting_id"] == 3 and result["outcome"]


@pytest.mark.realdata
@pytest.mark.parametrize("sets, why", [
    (["setting=0"], "setting 0: give its scenario too"),
    (["scenario=chameleon", "setting=99"], "99"),
    (["scenario=nope", "setting=0"], "unknown MAgIC scenario 'nope'"),
])
def test_game_play_magic_with_a_bad_setting_is_one_line(sets, why, fake_model, real_data_root, tmp_path):
    args = [x for s in sets for x in ("--set", s)]
    r = runner.invoke(app, ["game", "play", "magic", *args, "--set", "side=chameleon", "--set", "challenger=plain",
                            "--set", "defender=plain", "--out", str(tmp_path / "m")])
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and why in lines[0], r.output


@pytest.mark.realdata
def test_game_play_mmg_loads_the_script_by_name(fake_model, real_data_root, tmp_path):
    out = tmp_path / "mmg"
    r = runner.invoke(app, ["game", "play", "mmg", "--set", "script=Sin", "--set", "rounds=0",
                            "--data-dir", str(real_data_root), "--out", str(out)])
    _ok(r)
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert (config["script"], config["script_id"], config["rounds"]) == ("Sin", "131", 0)
    assert config["data_dir"] == str(real_data_root.resolve())   # where mas rerun reads the script again
    assert any(f.startswith("wellplay/en/Sin") for f in config["data_files"])
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert [v["victim"] for v in result["outcome"]["victims"]] == ["Zhao Cishan"]


@pytest.mark.realdata
def test_a_wis_game_without_a_pair_draws_the_pair_spy_play_draws(fake_model, real_data_root, tmp_path):
    """``mas.play("wis")`` and ``mas game play wis`` without a pair play the pair ``mas spy play``
    draws without ``--pair`` for the same seed (one of the dataset's pairs, by random.Random(seed))."""
    import mas_agents as mas
    from mas_agents.graphs.wis.dataset import load_pairs

    pairs = load_pairs(real_data_root, "en")
    want = random.Random(5).choice(pairs)
    mas.play("wis", agents=["plain", "plain", "plain"], seed=5, out=tmp_path / "api", data_dir=real_data_root)
    assert json.loads((tmp_path / "api" / "config.json").read_text())["pair"] == want
    r = runner.invoke(app, ["game", "play", "wis", "--agents", "plain,plain,plain", "--seed", "5",
                            "--data-dir", str(real_data_root), "--out", str(tmp_path / "cli")])
    _ok(r)
    assert json.loads((tmp_path / "cli" / "config.json").read_text())["pair"] == want
    r = runner.invoke(app, ["spy", "play", "--players", "3", "--seed", "5", "--data-dir", str(real_data_root),
                            "--out", str(tmp_path / "spy")])
    _ok(r)
    assert json.loads((tmp_path / "spy" / "config.json").read_text())["pair"] == want
    # another seed, another draw (the draw is the seed's, not a fixed pair)
    other = random.Random(6).choice(pairs)
    assert other != want
    mas.play("wis", agents=["plain", "plain", "plain"], seed=6, out=tmp_path / "api6", data_dir=real_data_root)
    assert json.loads((tmp_path / "api6" / "config.json").read_text())["pair"] == other


def test_a_wis_pair_may_be_given_as_the_spy_play_option_reads_it(fake_model, tmp_path):
    """No dataset needed when the pair is given (``"tea/coffee"`` read as ``--pair`` reads it)."""
    import mas_agents as mas
    mas.play("wis", agents=["plain", "plain", "plain"], pair="tea/coffee", out=tmp_path / "g",
             data_dir=tmp_path / "no-data-here")
    assert json.loads((tmp_path / "g" / "config.json").read_text())["pair"] == {"civilian": "tea", "spy": "coffee"}
    with pytest.raises(ValueError, match="expected CIVILIAN/SPY"):
        mas.play("wis", agents=["plain", "plain", "plain"], pair="tea", out=tmp_path / "h")
