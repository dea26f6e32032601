"""Issue 46, item 1: a finished run is never silently overwritten, by any run-writing command.

For every command: a rerun into the same ``--out`` with another configuration is refused with one
``error:`` line naming ``config.json`` and the field that differs, exit code 2, and the directory
keeps every byte; a rerun with the same configuration reuses (or resumes) the finished run. A
directory holding a run of another kind (a finished Who-is-Spy game) is refused by every
experiment command through its ``kind``. The models are the seeded fake of
``scripts/fake_runs.py`` (a reply is a pure function of the prompt), for every spec.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

PAIR = ["--pair", "tea/coffee"]


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """Every model spec (``local``, ``openai:stub``) answers with the seeded fake; the leaderboard
    and the shared remote models are this test's own."""
    from mas_agents import llm
    from mas_agents import stop
    from mas_agents.game.fake_chat import make_hash_model

    monkeypatch.setattr(llm, "make_chat_model", make_hash_model)
    monkeypatch.setattr(llm, "_SHARED_REMOTE", {})
    monkeypatch.setenv("MAS_DATA_HOME", str(tmp_path / "home"))
    stop.STOP.clear()
    yield
    stop.STOP.clear()


def cli(args: list[str]):
    from mas_agents.cli import app
    return CliRunner().invoke(app, [str(a) for a in args])


def ok(args: list[str]):
    res = cli(args)
    assert res.exit_code == 0, res.output
    return res


def snapshot(d: Path) -> dict[str, bytes]:
    """Every file under ``d`` (relative path -> bytes)."""
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(Path(d).rglob("*")) if p.is_file()}


def refused(args: list[str], field: str, *dirs: Path) -> str:
    """Run the command; assert the one-line refusal naming ``field`` and that ``dirs`` kept every byte."""
    before = [snapshot(d) for d in dirs]
    res = cli(args)
    errors = [line for line in res.output.splitlines() if line.startswith("error:")]
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert len(errors) == 1 and "config.json: field " + repr(field) in errors[0], res.output
    assert [snapshot(d) for d in dirs] == before
    return errors[0]


# ---------------------------------------------------------------------------- single games


def test_spy_play_refuses_other_agents_and_reuses_the_same_game(fake, tmp_path):
    out = tmp_path / "g"
    base = ["spy", "play", "--players", "3", *PAIR, "--structured", "prompt", "--out", out]
    ok(base + ["--agents", "plain@openai:stub"])
    first = snapshot(out)
    line = refused(base + ["--agents", "plain@openai:stub,plain+reasoning@openai:stub"], "agents", out)
    assert str(out / "config.json") in line and "plain+reasoning@openai:stub" in line
    ok(base + ["--agents", "plain@openai:stub"])      # the same game: reused, nothing played again
    assert snapshot(out) == first


def test_game_play_refuses_other_agents(fake, tmp_path):
    out = tmp_path / "w"
    base = ["game", "play", "wis", "--set", 'pair={"civilian": "tea", "spy": "coffee"}', "--out", out]
    ok(base + ["--agents", "plain,plain,plain"])
    refused(base + ["--agents", "plain,plain+reasoning,plain"], "agents", out)


@pytest.mark.realdata
def test_mmg_run_names_the_field_and_resume_with_another_agent_is_refused(fake, tmp_path, real_data_root):
    from mas_agents.graphs.mmg.dataset import load_script
    from mas_agents.graphs.mmg.session import MmgConfig, play_script

    out = tmp_path / "m"
    base = ["mmg", "run", "--script", "Sin", "--rounds", "0", "--questions", "0", "--data-dir", real_data_root,
            "--out", out]
    ok(base)
    first = snapshot(out)
    refused(base + ["--agent", "player_star"], "agent", out)
    sc = load_script(real_data_root, "Sin", "en")
    with pytest.raises(ValueError, match="field 'agent' is 'plain' but this run asks for 'player_star'"):
        play_script(MmgConfig(script=sc, out=out, agent="player_star", rounds=0, questions=0, data_dir=real_data_root),
                    resume=True)
    assert snapshot(out) == first
    ok(base)                                            # finished, same configuration: reused
    ok(base + ["--resume"])
    assert snapshot(out) == first


# ---------------------------------------------------------------------------- many-game runs


def test_spy_tournament_refuses_other_agents_in_its_directory(fake, tmp_path):
    out, db = tmp_path / "t", tmp_path / "wis.sqlite"
    base = ["spy", "tournament", "--games", "2", "--players", "3", "--db", db, "--out", out]
    ok(base + ["--agents", "plain,plain+reasoning"])
    refused(base + ["--agents", "plain,plain+attack"], "agents", out)
    assert not (tmp_path / "wis.sqlite-journal").exists()
    res = ok(base + ["--agents", "plain,plain+reasoning"])
    assert "0 game(s) played, 2 already stored" in res.output


def test_spy_experiment_refuses_another_subject(fake, tmp_path):
    out, db = tmp_path / "e", tmp_path / "wis.sqlite"
    base = ["spy", "experiment", "--kind", "attack", "--others", "plain", "--games", "1", "--players", "3",
            "--db", db, "--out", out]
    ok(base + ["--subject", "plain"])
    refused(base + ["--subject", "plain+reasoning"], "subject", out)


@pytest.mark.realdata
def test_wellplay_eval_refuses_another_method_and_reuses_a_finished_one(fake, tmp_path, real_data_root):
    out = tmp_path / "ev"
    base = ["wellplay", "eval", "--script", "Sin", "--data-dir", real_data_root, "--out", out]
    ok(base + ["--method", "always_a"])
    first = snapshot(out)
    refused(base + ["--method", "random"], "method", out)
    ok(base + ["--method", "always_a"])
    assert snapshot(out) == first


# ------------------------------------------------- another kind of run in the directory


@pytest.fixture
def spy_game(fake, tmp_path):
    """A finished Who-is-Spy game (model ``local``, seed 0, speaking limit 10 s) in ``tmp_path/x``."""
    out = tmp_path / "x"
    ok(["spy", "play", "--players", "3", *PAIR, "--agents", "plain", "--out", out])
    return out


@pytest.mark.realdata
@pytest.mark.parametrize("command", [
    ["magic", "run", "--scenario", "prisoners_dilemma", "--settings", "0"],
    ["wellplay", "compare", "--methods", "always_a", "--script", "Sin", "--seeds", "1"],
    ["ablate", "--bench", "magic", "--blocks", "pgm", "--settings", "0", "--speak-timeout", "10"],
    ["spy", "tournament", "--agents", "plain", "--games", "1", "--players", "3"],
    ["reproduce", "magic", "--limit", "1"],
], ids=["magic-run", "wellplay-compare", "ablate", "spy-tournament", "reproduce-magic"])
def test_experiment_commands_refuse_a_directory_holding_another_kind_of_run(spy_game, real_data_root, command):
    line = refused(command + ["--data-dir", real_data_root, "--out", spy_game], "kind", spy_game)
    assert "'wis'" in line


def boom(*args, **kwargs):
    raise AssertionError("a game was played in a directory that holds another run")


@pytest.mark.realdata
@pytest.mark.parametrize("paper", ["magic", "wis", "player_star"])
def test_reproduce_refuses_a_directory_holding_another_kind_of_run(spy_game, real_data_root, paper):
    import importlib
    mod = importlib.import_module(f"mas_agents.eval.reproduce.{paper}")
    before = snapshot(spy_game)
    fakes = {"evaluate": boom} if paper == "player_star" else {}
    config = getattr(mod, {"magic": "MagicRun", "wis": "WisRun", "player_star": "PlayerStarRun"}[paper])
    model = {"pool": "local"} if paper == "wis" else {"model": "local"}
    with pytest.raises(ValueError, match="field 'kind' is 'wis' but this run asks for 'reproduce'"):
        mod.reproduce(config(data_root=real_data_root, out=spy_game, **model, limit=1, play=boom, **fakes))
    assert snapshot(spy_game) == before


def test_reproduce_all_refuses_a_directory_holding_another_kind_of_run(spy_game, monkeypatch, tmp_path):
    from mas_agents.eval.reproduce import all as rall
    from mas_agents.eval.reproduce import magic, player_star, wis

    for mod in (magic, player_star, wis):
        # check_out: the parts write no run here, so each part's own check passes (mas_agents.eval.reproduce.all.check_out)
        monkeypatch.setattr(mod, "reproduce", lambda cfg: {"headline": f"{cfg.PAPER} ok", "partial": True})
        monkeypatch.setattr(mod, "check_out", lambda cfg: None)

    def run(out, model, limit):
        rall.reproduce_all(rall.AllRun(data_root=tmp_path, out=out, model=model, others=None, limit=limit))
    before = snapshot(spy_game)
    with pytest.raises(ValueError, match="field 'kind' is 'wis' but this run asks for 'reproduce'"):
        run(spy_game, "openai:m", 1)
    assert snapshot(spy_game) == before
    # its own directory: another model is refused, another limit extends it
    run(tmp_path / "all", "openai:m", 1)
    run(tmp_path / "all", "openai:m", 2)
    with pytest.raises(ValueError, match="field 'model' is 'openai:m' but this run asks for 'openai:n'"):
        run(tmp_path / "all", "openai:n", 2)


# ---------------------------------------------------------------------------- the comparison


def test_what_defines_the_configuration(tmp_path):
    from mas_agents.game.record import check_same_run, config_difference
    from mas_agents.rundir import RunConflict

    stored = {"kind": "wis", "agents": ["plain"], "settings": {"script_budget": 200}, "model": "openai:a",
              "models": ["openai:a"], "default_model": "local", "versions": {"x": "1"}, "record_prompts": True,
              "endpoints": [{"base_url": "http://a"}], "data_dir": "/data/a"}
    same = dict(stored, default_model="openai:b", versions={"x": "2"}, record_prompts=False, endpoints=[],
                data_dir="/data/b", executor={"kind": "ray"}, command="mas spy play")
    assert config_difference(stored, same) is None
    assert config_difference(stored, dict(stored, models=["local"])) == ("models", ["openai:a"], ["local"])
    assert config_difference(stored, dict(stored, settings={"script_budget": 100})) == (
        "settings.script_budget", 200, 100)
    assert config_difference(stored, dict(stored, agents=("plain",))) is None          # as JSON stores it
    assert config_difference(stored, dict(stored, agents=["x"]), may_differ=("agents",)) is None
    # a config.json from before the contract: its "model" was the default given
    old = {"kind": "wis", "agents": ["plain"], "model": "local"}
    assert config_difference(old, dict(stored, agents=["plain"])) is None
    assert config_difference(old, {"kind": "wis", "models": ["openai:a"], "default_model": "local"}) is None
    assert config_difference(old, {"kind": "wis", "models": ["openai:a"], "default_model": "openai:a"}) == (
        "model", "local", "openai:a")
    out = tmp_path / "r"
    out.mkdir()
    (out / "config.json").write_text(json.dumps(stored), encoding="utf-8")
    assert check_same_run(out, same) == stored
    assert check_same_run(tmp_path / "none", stored) is None
    with pytest.raises(FileExistsError, match="field 'kind' is 'wis' but this run asks for 'mmg'"):
        check_same_run(out, dict(stored, kind="mmg"))
    with pytest.raises(RunConflict):
        check_same_run(out, dict(stored, kind="mmg"))
