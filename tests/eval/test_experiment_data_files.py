"""A run of many cells records in its own ``config.json`` the union of its cells' ``data_files``
(issue 56 item 5; docs/reference/run-files.md): ``mas magic run``, ``mas wellplay compare``, a
Who-is-Spy tournament and experiment, ``mas ablate`` and ``mas reproduce``. Each is checked against
the cells' own records (what ``mas rerun`` checks cell by cell), and an extended run keeps the
files of the cells run before."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from mas_agents.graphs.mmg.dataset import load_script
from tests.data_roots import SIN
from tests.fakes import RuleChat, magic_player, wis_player


def _cfg(d: Path) -> dict:
    return json.loads((d / "config.json").read_text(encoding="utf-8"))


def _union(*records) -> dict:
    """The expected union, written out here: every path once, sorted, the first hash kept."""
    out: dict = {}
    for rec in records:
        for k, h in (rec or {}).items():
            out.setdefault(k, h)
    return dict(sorted(out.items()))


def _cells_union(d: Path, pattern: str = "**/*") -> dict:
    """The union of the ``data_files`` of the cells' ``config.json`` files matching ``pattern`` below ``d``."""
    return _union(*(_cfg(c).get("data_files") for c in sorted(d.glob(pattern))
                    if c != d and (c / "config.json").is_file()))


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_merge_keeps_the_first_hash_and_sorts():
    from mas_agents.game.data import merge_data_files
    assert merge_data_files({"b": "2", "a": "1"}, None, {"a": "9", "c": "3"}) == {"a": "1", "b": "2", "c": "3"}
    assert merge_data_files() == {}


def test_magic_run_records_every_games_setting_file_and_keeps_them_when_extended(tmp_path, mixed_root):
    from mas_agents.graphs.magic.bench import MagicBenchConfig, run_magic
    kw = dict(data_root=mixed_root, out=tmp_path, scenarios=["prisoners_dilemma"], challenger="plain",
              defender="plain", model=RuleChat(rule=magic_player()), concurrency=1)
    run_magic(MagicBenchConfig(settings="0-1", **kw))
    files = _cfg(tmp_path)["data_files"]
    assert files == _cells_union(tmp_path, "games/*") == {
        f"magic/settings/prisoner/{i}.json": _sha(mixed_root / f"magic/settings/prisoner/{i}.json") for i in (0, 1)}
    run_magic(MagicBenchConfig(settings="2", **kw))          # extends the run: 3 games, 3 files
    assert list(_cfg(tmp_path)["data_files"]) == [f"magic/settings/prisoner/{i}.json" for i in (0, 1, 2)]
    assert _cfg(tmp_path)["data_files"] == _cells_union(tmp_path, "games/*")


def test_compare_records_the_files_of_every_script(tmp_path, real_data_root):
    from mas_agents.eval.compare.run import CompareConfig, run_compare
    sc = load_script(real_data_root, SIN[0])
    run_compare(CompareConfig(data_root=real_data_root, out=tmp_path, methods=["always_a"], scripts=[sc], seeds=1,
                              rounds=1))
    files = _cfg(tmp_path)["data_files"]
    assert files == sc.data_files and len(files) == 10
    assert files == _cells_union(tmp_path)        # what its cells recorded


def test_tournament_and_experiment_record_the_pairs_file(tmp_path):
    from mas_agents.graphs.wis.dataset import load_pairs
    from mas_agents.graphs.wis.tournament import ExperimentConfig, TournamentConfig, run_experiment, run_tournament
    root = tmp_path / "data"
    f = root / "whoisspy" / "pairs_en.jsonl"
    f.parent.mkdir(parents=True)
    f.write_text('{"civilian": "kettle", "spy": "teapot"}\n{"civilian": "lamp", "spy": "candle"}\n')
    want = {"whoisspy/pairs_en.jsonl": _sha(f)}
    model = RuleChat(rule=wis_player())
    out = tmp_path / "t"
    run_tournament(TournamentConfig(agents=["plain", "plain"], games=2, pairs=load_pairs(root), players=4, model=model,
                                    speak_timeout=None, db=tmp_path / "wis.sqlite", out=out))
    assert _cfg(out)["data_files"] == want == _cells_union(out, "games/*")
    # pairs typed by hand: no file, none recorded
    typed = tmp_path / "typed"
    run_tournament(TournamentConfig(agents=["plain", "plain"], games=1, pairs=[{"civilian": "a", "spy": "b"}],
                                    players=4, model=model, speak_timeout=None, db=tmp_path / "wis.sqlite", out=typed))
    assert "data_files" not in _cfg(typed)
    exp = tmp_path / "e"
    run_experiment(ExperimentConfig(experiment="reasoning", subject="plain", others="plain", games=1, players=4,
                                    data_root=root, model=model, speak_timeout=None, db=tmp_path / "wis.sqlite",
                                    out=exp))
    assert _cfg(exp)["data_files"] == want == _cells_union(exp)


def test_ablate_records_the_files_of_its_benches_inputs(tmp_path, real_data_root, monkeypatch):
    import mas_agents.eval.ablate.grid as ablate
    from mas_agents.graphs.magic.dataset import load_settings
    from mas_agents.graphs.wis.dataset import load_pairs
    for name in ("run_wellplay", "run_spy", "run_magic_bench"):
        monkeypatch.setattr(ablate, name, lambda cfg, grid, **kw: {"rows": []})
    monkeypatch.setattr(ablate, "summary", lambda result: "s")
    monkeypatch.setattr(ablate, "figures", lambda result, out: None)
    monkeypatch.setattr(ablate, "report_md", lambda result: "r")
    kw = dict(out=tmp_path, data_root=real_data_root, blocks=["pgm"], model="openai:stub", settings="0")
    ablate.run_ablate(ablate.AblateConfig(benches=["wellplay"], script=SIN[0], **kw))
    sc = load_script(real_data_root, SIN[0])
    assert _cfg(tmp_path)["data_files"] == sc.data_files
    ablate.run_ablate(ablate.AblateConfig(benches=["spy", "magic"], script=SIN[0], **kw))   # extends: keeps the script's
    settings = [st for s in ("chameleon", "undercover", "cost_sharing", "prisoners_dilemma", "public_good")
                for st in load_settings(real_data_root, s, [0])]
    want = _union(sc.data_files, *(p.data_files for p in load_pairs(real_data_root, "en")),
                            *(st.data_files for st in settings))
    assert _cfg(tmp_path)["data_files"] == want and len(want) == 10 + 1 + 5


def test_reproduce_records_the_union_of_every_config_below_it(tmp_path):
    from mas_agents.eval.reproduce.common import write_report
    for rel, files in (("a", {"x/1.json": "11"}), ("b/c", {"x/2.json": "22", "x/1.json": "11"}), ("d", None)):
        (tmp_path / rel).mkdir(parents=True)
        (tmp_path / rel / "config.json").write_text(json.dumps({"kind": "magic", **({"data_files": files} if files else {})}))
    (tmp_path / "config.json").write_text(json.dumps({"kind": "reproduce", "data_files": {"stale": "0"}}))
    write_report(tmp_path, paper="magic", config={"model": "m"}, result={}, markdown="r")
    cfg = _cfg(tmp_path)
    assert cfg["data_files"] == {"x/1.json": "11", "x/2.json": "22"}
    assert list(cfg)[:3] == ["kind", "paper", "model"] and list(cfg)[-1] == "versions"
    # a run whose cells read no file records none
    empty = tmp_path / "empty"
    write_report(empty, paper="magic", config={}, result={}, markdown="r")
    assert "data_files" not in _cfg(empty)
