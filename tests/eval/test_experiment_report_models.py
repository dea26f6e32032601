"""The report of ``mas spy experiment`` names the models its seats ran (issue 46 item 2, report side),
not the unused ``--model`` default."""

from __future__ import annotations

import json

from tests.eval.test_report_numbers import fake_wis_seats  # noqa: F401  (the fixture)


def test_spy_experiment_report_names_the_models_the_seats_used(tmp_path, monkeypatch, fake_wis_seats):
    """Every seat names its model (``plain@openai:stub``) and no --model is given: the report said
    "model local" (the unused default); it names the models the seats ran (config.json's ``models``)."""
    from typer.testing import CliRunner

    from mas_agents.cli import app
    monkeypatch.setenv("MAS_DATA_HOME", str(tmp_path / "home"))
    root = tmp_path / "datasets"
    (root / "whoisspy").mkdir(parents=True)
    (root / "whoisspy" / "pairs_en.jsonl").write_text(json.dumps({"civilian": "tea", "spy": "coffee"}) + "\n",
                                                      encoding="utf-8")
    out = tmp_path / "exp"
    r = CliRunner().invoke(app, ["spy", "experiment", "--kind", "attack", "--subject", "plain@openai:stub",
                                 "--others", "plain@openai:stub", "--games", "1", "--players", "4",
                                 "--out", str(out), "--data-dir", str(root)])
    assert r.exit_code == 0, r.output
    report = (out / "report.md").read_text(encoding="utf-8")
    head = report.split("\n\n")[1]
    assert "models openai:stub" in head and "local" not in head, head
    assert json.loads((out / "config.json").read_text(encoding="utf-8"))["models"] == ["openai:stub"]
