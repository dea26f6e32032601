"""A session evaluation's ``run`` (the game it reads) named another way on a rerun (``./runs/x``
for ``runs/x``) is the same run, not a conflict (review finding 5): config.json keeps the path
as first given, the comparison resolves both against the current directory."""

from __future__ import annotations

import json

import pytest

import mas_agents.eval.wellplay.run as wr
from mas_agents.game import record
from mas_agents.rundir import RunConflict


def test_the_same_game_named_another_way_is_the_same_evaluation(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(wr, "scripts_for", lambda *a, **k: ([], None))
    (tmp_path / "runs" / "x").mkdir(parents=True)
    (tmp_path / "runs" / "x" / "result.json").write_text(json.dumps({"agents": {}}))
    (tmp_path / "runs" / "y").mkdir()
    (tmp_path / "runs" / "y" / "result.json").write_text(json.dumps({"agents": {}}))
    out = tmp_path / "ev"
    out.mkdir()
    (out / "config.json").write_text("{}")
    (out / "result.json").write_text(json.dumps({"weighted_score": 0.5}))
    seen = []
    real = record.check_same_run
    monkeypatch.setattr(wr, "check_same_run", lambda out, config, **kw: seen.append(config))
    kw = dict(data_root=tmp_path, method="session", out=out, lang="en", model="local", seed=0)
    wr.run_wellplay_eval(wr.WellPlayEvalConfig(run="runs/x", **kw))
    (out / "config.json").write_text(json.dumps(seen[0]))        # the record of the first evaluation
    monkeypatch.setattr(wr, "check_same_run", real)
    for same in ("./runs/x", str(tmp_path / "runs" / "x"), "runs/x/"):
        assert wr.run_wellplay_eval(wr.WellPlayEvalConfig(run=same, **kw)) == {"weighted_score": 0.5}, same
    assert json.loads((out / "config.json").read_text())["run"] == "runs/x"
    with pytest.raises(RunConflict, match="field 'run' is 'runs/x' but this run asks for 'runs/y'"):
        wr.run_wellplay_eval(wr.WellPlayEvalConfig(run="runs/y", **kw))
    assert wr.same_run_path(out, None) is None
