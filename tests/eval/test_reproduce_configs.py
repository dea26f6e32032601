"""`mas reproduce`'s typed run configurations (issue 51 item 5): one per paper, whose recorded
fields are what config.json holds (the file unchanged: these literals are config.json as the
runners wrote it before the configurations), read back for a resume, built once by the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mas_agents.eval.reproduce import estimate as E
from mas_agents.eval.reproduce import registry
from mas_agents.eval.reproduce.all import AllRun
from mas_agents.eval.reproduce.magic import MagicRun
from mas_agents.eval.reproduce.player_star import PlayerStarRun
from mas_agents.eval.reproduce.wis import WisRun

#: config.json of each paper as written before the typed configurations (kind, paper and
#: versions aside), for: magic --model openai:a --limit 1 --conditions pgm,vanilla; player-star
#: --model local --limit 2 --langs en --methods pp,player_star --eval-runs 1; wis --model
#: local,openai:b --others openai:c --limit 3 --seed 4; all --model openai:m --limit 1.
MAGIC = {"model": "openai:a", "others": "openai:a", "seed": 0, "temperature": 0.0, "models": ["openai:a"],
         "default_model": "openai:a", "limit": 1, "settings": "0-0",
         "conditions": {"vanilla": {"challenger": "plain@openai:a", "defender": "plain@openai:a"},
                        "pgm": {"challenger": "plain+pgm@openai:a", "defender": "plain@openai:a"}},
         "left_out": ["pgm_paper"]}
PLAYER_STAR = {"model": "local", "limit": 2, "rounds": 3, "questions": 1, "eval_runs": 1,
               "methods": ["player_star", "pp", "always_a", "random"], "models": ["local"], "langs": ["en"]}
WIS = {"pool": ["local", "openai:b"], "others": "openai:c", "limit": 3, "seed": 4, "lang": "en",
       "models": ["local", "openai:b", "openai:c"]}
ALL = {"model": "openai:m", "others": None, "limit": 1, "seed": 0, "models": ["openai:m"]}


def _load(cls, record: dict, tmp_path: Path):
    (tmp_path / "config.json").write_text(json.dumps({"kind": "reproduce", "paper": cls.PAPER, **record,
                                                      "murderer_agent": "plain", "versions": {}}))
    return cls.load(tmp_path, data_root=tmp_path, out=tmp_path)


def test_each_paper_s_config_json_reads_back_as_its_configuration_and_is_written_the_same(tmp_path):
    magic = _load(MagicRun, MAGIC, tmp_path)
    assert (magic.model, magic.others, magic.limit, magic.conditions) == ("openai:a", "openai:a", 1, ("vanilla", "pgm"))
    assert json.dumps(magic.config_json()) == json.dumps(MAGIC)        # same keys, values and order
    ps = _load(PlayerStarRun, PLAYER_STAR, tmp_path)
    assert (ps.langs, ps.methods, ps.eval_runs) == (("en",), ("player_star", "pp", "always_a", "random"), 1)
    assert json.dumps(ps.settings()) == json.dumps(PLAYER_STAR)
    wis = _load(WisRun, WIS, tmp_path)
    assert wis.pool == ("local", "openai:b") and json.dumps(wis.settings()) == json.dumps(WIS)
    both = _load(AllRun, ALL, tmp_path)
    assert json.dumps(both.settings()) == json.dumps(ALL)


def test_the_command_s_options_build_the_configuration_and_as_options_gives_them_back(tmp_path):
    kw = dict(data_root=tmp_path, out=tmp_path / "o")
    cases = [("magic", "openai:a", {"limit": 1, "conditions": "pgm,vanilla"}),
             ("player-star", "local", {"limit": 2, "langs": "en", "methods": "pp,player_star", "eval_runs": 1}),
             ("wis", "local,openai:b", {"others": "openai:c", "limit": 3, "seed": 4}),
             ("all", "openai:m", {"limit": 1})]
    for paper, model, options in cases:
        cfg = registry.build(paper, model=model, options=options, **kw)
        assert type(cfg) is registry.CONFIGS[paper] and cfg.out == tmp_path / "o"
        back = cfg.as_options()
        again = registry.build(paper, model=back["model"], options={"others": back["others"], "limit": back["limit"],
                                                                    "seed": back["seed"], **back["options"]}, **kw)
        assert again == cfg, paper
    # the protocol's order, whatever order the options came in
    assert registry.build("magic", model="m", options={"conditions": "pgm,vanilla"}, **kw).as_options()["options"] \
        == {"conditions": "vanilla,pgm"}


@pytest.mark.parametrize("paper, options, msg", [
    ("magic", {"langs": "en"}, "--langs: only for 'mas reproduce player-star', not magic"),
    ("wis", {"conditions": "pgm"}, "--conditions: only for 'mas reproduce magic', not wis"),
    ("all", {"eval_runs": 1}, "--eval-runs: only for 'mas reproduce player-star', not all"),
    ("magic", {"temperature": 1}, "temperature: not an option of mas reproduce"),
    ("player-star", {"others": "openai:x"}, "--others: player-star seats every character with --model"),
    ("player-star", {"seed": 1}, "--seed: player-star runs seed 0 only"),
    ("wis", {"limit": 0}, "--limit 0: must be >= 1"),
    ("nonesuch", {}, "unknown paper 'nonesuch'"),
])
def test_an_option_a_paper_does_not_take_is_one_line_naming_it(tmp_path, paper, options, msg):
    with pytest.raises(ValueError, match="^" + msg.replace("(", r"\(")):
        registry.build(paper, data_root=tmp_path, out=tmp_path / "o", model="local", options=options)
    assert not (tmp_path / "o").exists()


def test_the_cli_builds_the_configuration_once_and_hands_it_to_the_check_the_estimate_and_the_run(tmp_path,
                                                                                                 monkeypatch):
    from mas_agents.cli import app
    from mas_agents.eval.reproduce import magic
    seen = []
    monkeypatch.setattr(magic, "check_out", lambda cfg: seen.append(("check", cfg)))
    monkeypatch.setattr(E, "estimate_for_run", lambda cfg, **kw: seen.append(("estimate", cfg, kw)) or {"total": {}})
    monkeypatch.setattr(magic, "reproduce", lambda cfg: seen.append(("run", cfg)) or {})
    r = CliRunner().invoke(app, ["reproduce", "magic", "--model", "openai:a", "--limit", "1", "--conditions", "pgm",
                                 "--price-in", "2", "--out", str(tmp_path / "o"), "--data-dir", str(tmp_path)])
    assert r.exit_code == 0, r.output
    (_, checked), (_, estimated, prices), (_, ran) = seen
    assert checked is estimated and prices == {"price_in": 2.0, "price_out": 0.0}
    assert isinstance(ran, MagicRun) and ran == checked.replace(estimate={"total": {}})
    assert (ran.model, ran.limit, ran.conditions, ran.out, ran.data_root) == ("openai:a", 1, ("pgm",), tmp_path / "o",
                                                                             tmp_path)
    assert ran.tick is not None                        # progress lines on stderr


def test_the_python_api_takes_the_same_options(tmp_path, monkeypatch):
    import mas_agents as mas
    from mas_agents.eval.reproduce import wis
    got = []
    monkeypatch.setattr(wis, "reproduce", lambda cfg: got.append(cfg) or {"headline": "ok"})
    assert mas.reproduce("wis", out=tmp_path / "o", model=["local", "openai:b"], data_dir=tmp_path, limit=2) \
        == {"headline": "ok"}
    assert got == [WisRun(data_root=tmp_path, out=tmp_path / "o", pool=("local", "openai:b"), limit=2)]
    with pytest.raises(ValueError, match="--methods: only for 'mas reproduce player-star', not wis"):
        mas.reproduce("wis", out=tmp_path / "o", model="local", data_dir=tmp_path, methods="pp")
