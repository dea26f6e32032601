"""Issue 46, item 2: ``config.json`` records the models the seats actually used (the run-record
contract, :mod:`mas_agents.game.record`), not the unused ``--model`` default: ``models``,
``seat_models`` (single games), ``model`` and ``default_model``; also the CLI's model-spec error
lists only what a command-line user can type."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

PAIR = ["--pair", "tea/coffee"]
STUB = "openai:stub"


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """Every model spec answers with the seeded fake of ``scripts/fake_runs.py``."""
    from mas_agents import llm
    from mas_agents import stop
    from mas_agents.game.fake_chat import make_hash_model

    monkeypatch.setattr(llm, "make_chat_model", make_hash_model)
    monkeypatch.setattr(llm, "_SHARED_REMOTE", {})
    monkeypatch.setenv("MAS_DATA_HOME", str(tmp_path / "home"))
    stop.STOP.clear()


def ok(args: list) -> str:
    from mas_agents.cli import app
    res = CliRunner().invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res.output


def config(d: Path) -> dict:
    return json.loads((Path(d) / "config.json").read_text(encoding="utf-8"))


def test_spy_play_records_the_model_named_in_the_agent_spec(fake, tmp_path):
    ok(["spy", "play", "--players", "3", *PAIR, "--agents", f"plain@{STUB}", "--out", tmp_path / "g"])
    cfg = config(tmp_path / "g")
    assert (cfg["model"], cfg["models"], cfg["default_model"]) == (STUB, [STUB], "local")
    assert cfg["seat_models"] == {"Player 1": STUB, "Player 2": STUB, "Player 3": STUB}
    calls = [json.loads(x) for x in (tmp_path / "g" / "llm_calls.jsonl").read_text().splitlines()]
    assert calls and {c["model"] for c in calls} == {STUB}


def test_a_game_of_two_models_records_each_seat(fake, tmp_path):
    ok(["spy", "play", "--players", "3", *PAIR, "--agents", f"plain@{STUB},plain", "--out", tmp_path / "g"])
    cfg = config(tmp_path / "g")
    assert cfg["seat_models"] == {"Player 1": STUB, "Player 2": "local", "Player 3": STUB}
    assert (cfg["models"], cfg["model"]) == (["local", STUB], f"local, {STUB}")


@pytest.mark.realdata
def test_magic_run_records_the_models_of_its_seats(fake, tmp_path, real_data_root):
    out = tmp_path / "m"
    ok(["magic", "run", "--scenario", "prisoners_dilemma", "--settings", "0", "--challenger", f"plain+pgm@{STUB}",
        "--defender", f"plain@{STUB}", "--data-dir", real_data_root, "--out", out])
    cfg = config(out)
    assert (cfg["kind"], cfg["model"], cfg["models"], cfg["default_model"]) == ("magic-bench", STUB, [STUB], "local")
    [game] = (out / "games").iterdir()
    assert set(config(game)["seat_models"].values()) == {STUB} and config(game)["model"] == STUB
    assert f"Model: {STUB};" in (out / "report.md").read_text(encoding="utf-8")


@pytest.mark.realdata
def test_tournament_and_experiment_record_their_models(fake, tmp_path, real_data_root):
    db = tmp_path / "wis.sqlite"
    ok(["spy", "tournament", "--agents", f"plain@{STUB},plain", "--games", "2", "--players", "3", "--db", db,
        "--data-dir", real_data_root, "--out", tmp_path / "t"])
    cfg = config(tmp_path / "t")
    assert (cfg["kind"], cfg["models"], cfg["model"]) == ("wis-tournament", ["local", STUB], f"local, {STUB}")
    assert cfg["id"].startswith("t-") and cfg["agents"] == [f"plain@{STUB}", "plain"]
    out = tmp_path / "e"
    ok(["spy", "experiment", "--kind", "attack", "--subject", f"plain@{STUB}", "--others", f"plain@{STUB}",
        "--games", "1", "--players", "3", "--db", db, "--data-dir", real_data_root, "--out", out])
    cfg = config(out)
    assert (cfg["kind"], cfg["experiment"], cfg["models"], cfg["default_model"]) == (
        "wis-experiment", "attack", [STUB], "local")
    report = (out / "report.md").read_text(encoding="utf-8")
    assert f"models {STUB}," in report and "model local" not in report
    assert config(out / "attack")["models"] == [STUB]


def test_the_seat_model_of_a_spec_url_and_person(tmp_path):
    from mas_agents.graphs.mmg.human import HumanCharacter
    from mas_agents.graphs.mmg.session import record_seats
    from mas_agents.game.record import model_fields, seat_model
    from mas_agents.game.seats import Seats
    from mas_agents.call_log import CallRecorder
    from mas_agents.agents import Persona

    assert seat_model("plain+pgm@openai:m", "local") == "openai:m"
    assert seat_model("plain", "openai:d") == "openai:d"
    assert seat_model("http://127.0.0.1:7860", "local") == "http://127.0.0.1:7860"
    assert seat_model("human", "local") == "human"
    assert model_fields(["b", "a", "b"], "local", {"P1": "b"}) == {
        "model": "a, b", "models": ["a", "b"], "seat_models": {"P1": "b"}, "default_model": "local"}
    seats = Seats(CallRecorder(None), "openai:d")
    person = HumanCharacter(Persona(name="Ann", title="t", role="civilian", players=["Ann", "Bo"]), tmp_path)
    record_seats(seats, {"Ann": person, "Bo": object()})
    assert seats.seat_models == {"Ann": "human", "Bo": "openai:d"}
    assert seats.used_models() == ["human", "openai:d"]


def test_the_cli_lists_only_the_model_specs_a_user_can_type(tmp_path):
    from mas_agents.cli import app
    res = CliRunner().invoke(app, ["spy", "play", "--players", "3", *PAIR, "--model", "nonsense",
                                   "--out", str(tmp_path / "g")])
    [line] = [x for x in res.output.splitlines() if x.startswith("error:")]
    assert res.exit_code == 2 and "unknown model spec 'nonsense'" in line
    assert '"local"' in line and '"openai:<model name>"' in line and "BaseChatModel" not in line
