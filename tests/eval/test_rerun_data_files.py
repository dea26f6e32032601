"""Data files checked by hash (issue 50 item 2): every run that reads a dataset file records it in
``config.json`` as ``data_files`` (``{path relative to the datasets root: SHA-256}``: a WellPlay
script's files, a MAgIC setting, a Who-is-Spy pairs file), a changed file is another run for
:func:`check_same_run`, and ``mas rerun`` checks the files before it replays anything: a changed
or missing file is one line naming it and both hashes, status "data", exit code 1.

The MAgIC and WiS data a test changes are copies in the test's own temporary datasets root (a
copied MAgIC setting; a pairs file of the test's own words), never the real datasets."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mas_agents.cli import app
from mas_agents.eval.rerun.execute import rerun
from mas_agents.rundir import RunConflict
from mas_agents.game.runner import run
from tests.fakes import RuleChat, magic_player, wis_player

PD_FILE = "magic/settings/prisoner/0.json"


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _own_pairs(root: Path) -> Path:
    """A datasets root holding only a Who-is-Spy pairs file of the test's own words."""
    f = root / "whoisspy" / "pairs_en.jsonl"
    f.parent.mkdir(parents=True)
    f.write_text('{"civilian": "kettle", "spy": "teapot"}\n{"civilian": "lamp", "spy": "candle"}\n')
    return f


def test_the_loaders_note_every_file_they_read_with_its_sha256(real_data_root, tmp_path):
    from mas_agents.game.data import data_files
    from mas_agents.graphs.magic.dataset import load_setting
    from mas_agents.graphs.mmg.dataset import load_script
    from mas_agents.graphs.wis.dataset import load_pairs
    sc = load_script(real_data_root, "Sin")
    d = sc.dir.relative_to(real_data_root).as_posix()
    expected = {f"{d}/json/script_info.json", f"{d}/final_result/FSA.csv",
                *(f"{d}/json/{c.name}.json" for c in sc.characters), *(f"{d}/final_result/{c.name}.csv" for c in sc.characters)}
    assert set(sc.data_files) == expected and len(expected) == 2 + 2 * 4
    for rel, h in sc.data_files.items():
        assert h == _sha(real_data_root / rel), rel
    st = load_setting(real_data_root, "prisoners_dilemma", 0)
    assert st.data_files == {PD_FILE: _sha(real_data_root / PD_FILE)}
    f = _own_pairs(tmp_path / "data")
    pairs = load_pairs(tmp_path / "data")
    assert pairs == [{"civilian": "kettle", "spy": "teapot"}, {"civilian": "lamp", "spy": "candle"}]
    assert pairs[1].data_files == {"whoisspy/pairs_en.jsonl": _sha(f)}
    # the union over a game's parameters; a pair typed by hand adds nothing
    assert data_files(st, [pairs[0]], {"civilian": "a", "spy": "b"}, 3) == {
        PD_FILE: st.data_files[PD_FILE], "whoisspy/pairs_en.jsonl": _sha(f)}


@pytest.fixture
def magic_root(tmp_path, real_data_root) -> Path:
    """A datasets root with a copy of one real MAgIC setting (in tmp_path only, never committed)."""
    root = tmp_path / "data"
    (root / PD_FILE).parent.mkdir(parents=True)
    shutil.copyfile(real_data_root / PD_FILE, root / PD_FILE)
    return root


def _magic_game(root: Path, out: Path) -> Path:
    from mas_agents.graphs.magic.dataset import load_setting
    run("magic", out, model=RuleChat(rule=magic_player()), scenario="prisoners_dilemma",
        setting=load_setting(root, "prisoners_dilemma", 0), side="test_seat", challenger="plain", defender="plain")
    return out


def test_a_changed_or_missing_setting_file_is_reported_before_replaying(magic_root, tmp_path):
    game = _magic_game(magic_root, tmp_path / "g")
    old = _sha(magic_root / PD_FILE)
    assert json.loads((game / "config.json").read_text())["data_files"] == {PD_FILE: old}
    assert rerun(game, tmp_path / "r0", data_root=magic_root).status == "identical"
    f = magic_root / PD_FILE
    f.write_text(f.read_text() + "\n")          # same JSON, other bytes: not the file the run read
    new = _sha(f)
    o = rerun(game, tmp_path / "r1", data_root=magic_root)
    assert o.status == "data" and o.exit_code == 1 and o.calls == 0
    assert o.detail == f"data file {PD_FILE} under {magic_root}: recorded sha256 {old}, now sha256 {new}"
    assert not (tmp_path / "r1").exists()        # nothing was replayed
    assert o.text() == f"{game}: differs (data), not replayed: {o.detail}"
    f.unlink()
    o = rerun(game, tmp_path / "r2", data_root=magic_root)
    assert o.status == "data" and o.detail.endswith(f"recorded sha256 {old}, now missing")
    r = CliRunner().invoke(app, ["rerun", str(game), "--data-dir", str(magic_root)])
    assert r.exit_code == 1, r.output
    assert f"differs (data), not replayed: data file {PD_FILE}" in r.output and old in r.output


def test_a_drawn_pair_records_its_pairs_file_and_a_changed_file_is_another_run(tmp_path):
    from mas_agents.graphs.wis.dataset import load_pairs
    root = tmp_path / "data"
    f = _own_pairs(root)
    out = tmp_path / "g"
    model = RuleChat(rule=wis_player())
    run("wis", out, model=model, agents=["plain"] * 4, pair=load_pairs(root)[0], seed=2)
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["pair"] == {"civilian": "kettle", "spy": "teapot"}
    assert cfg["data_files"] == {"whoisspy/pairs_en.jsonl": _sha(f)}
    assert rerun(out, tmp_path / "r0", data_root=root).status == "identical"
    f.write_text(f.read_text() + '{"civilian": "car", "spy": "bus"}\n')
    # the same seed now may draw another pair: a finished run is not reused for it
    with pytest.raises(RunConflict, match="data_files.whoisspy/pairs_en.jsonl"):
        run("wis", out, model=model, agents=["plain"] * 4, pair=load_pairs(root)[0], seed=2)
    assert rerun(out, tmp_path / "r1", data_root=root).status == "data"
    # so does a game of the typed configuration mas spy play and the tournaments build
    from mas_agents.graphs.wis.session import WisGameConfig, play_game
    play_game(tmp_path / "t", WisGameConfig(agents=["plain"] * 4, pair=load_pairs(root)[1], seed=2, model=model))
    assert json.loads((tmp_path / "t" / "config.json").read_text())["data_files"] == {"whoisspy/pairs_en.jsonl": _sha(f)}
    # a pair given by hand records no file, and its game is the same game as the drawn one's
    run("wis", tmp_path / "h", model=model, agents=["plain"] * 4, pair={"civilian": "kettle", "spy": "teapot"}, seed=2)
    assert "data_files" not in json.loads((tmp_path / "h" / "config.json").read_text())


def test_a_wellplay_evaluation_records_the_script_files(real_data_root, tmp_path):
    from mas_agents.graphs.mmg.dataset import load_script
    out = tmp_path / "ev"
    r = CliRunner().invoke(app, ["wellplay", "eval", "--method", "always_a", "--script", "Sin", "--out", str(out),
                                 "--data-dir", str(real_data_root)])
    assert r.exit_code == 0, r.output
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["data_files"] == load_script(real_data_root, "Sin").data_files and len(cfg["data_files"]) == 10
