"""`mas reproduce`: a conflicting --out is refused before anything costly runs (review findings:
`all` ran MAgIC in full before PLAYER* refused another --limit; the CLI made the estimate's dry
run before the paper's check)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from mas_agents.eval.reproduce import all as rall
from mas_agents.eval.reproduce import estimate as E
from mas_agents.eval.reproduce import magic, player_star, wis
from mas_agents.rundir import RunConflict


def _player_star_run(out, limit):
    """A PLAYER* run's config.json as `reproduce` writes it, for --model openai:m and ``limit``."""
    P = player_star
    config = {"kind": "reproduce", "paper": P.PAPER, "model": "openai:m", "limit": limit, "rounds": P.ROUNDS,
              "questions": P.QUESTIONS, "eval_runs": P.EVAL_RUNS, "methods": [*P.METHODS, *P.CHANCE],
              "models": ["openai:m"], "langs": list(P.LANGS)}
    out.mkdir(parents=True)
    (out / "config.json").write_text(json.dumps(config))


def test_all_refuses_another_limit_of_a_later_part_before_running_any_part(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(magic, "reproduce", lambda cfg: ran.append("magic") or {})
    monkeypatch.setattr(wis, "reproduce", lambda cfg: ran.append("wis") or {})
    _player_star_run(tmp_path / "all" / "player-star", limit=1)
    with pytest.raises(RunConflict, match=r"player-star/config\.json: field 'limit' is 1 but this run asks for None"):
        rall.reproduce_all(rall.AllRun(data_root=tmp_path, out=tmp_path / "all", model="openai:m", limit=None))
    assert ran == []                                   # MAgIC did not run in full first
    assert not (tmp_path / "all" / "magic").exists()
    # the same limit is the same run: the check passes and the parts run
    monkeypatch.setattr(player_star, "reproduce", lambda cfg: ran.append("player-star") or {})
    rall.reproduce_all(rall.AllRun(data_root=tmp_path, out=tmp_path / "all", model="openai:m", limit=1))
    assert ran == ["magic", "player-star", "wis"]


def test_all_checks_a_part_s_options_before_running_any_part(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(magic, "reproduce", lambda cfg: ran.append("magic") or {})
    with pytest.raises(ValueError, match="--seed: player-star runs seed 0 only"):
        rall.reproduce_all(rall.AllRun(data_root=tmp_path, out=tmp_path / "all", model="openai:m", limit=1, seed=3))
    assert ran == []


def test_the_cli_refuses_a_conflicting_out_before_the_estimate_s_dry_run(tmp_path, monkeypatch):
    from mas_agents.cli import app
    _player_star_run(tmp_path / "o", limit=1)
    estimated = []
    monkeypatch.setattr(E, "estimate_for_run", lambda *a, **kw: estimated.append(a) or {})
    monkeypatch.setattr(E, "estimate", lambda *a, **kw: estimated.append(a) or {})
    r = CliRunner().invoke(app, ["reproduce", "player-star", "--model", "openai:m", "--out", str(tmp_path / "o"),
                                 "--data-dir", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert "error:" in r.output and "config.json: field 'limit' is 1" in r.output
    assert estimated == []                             # no dry run before the refusal
    assert json.loads((tmp_path / "o" / "config.json").read_text())["limit"] == 1
