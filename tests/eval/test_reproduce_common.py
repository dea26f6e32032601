"""The shared part of ``mas reproduce``: paper tables as data, the progress line, ``all``."""

from __future__ import annotations

import json

import pytest

from mas_agents.eval.reproduce import all as rall
from mas_agents.eval.reproduce.common import PaperDataError, PaperTable, Progress, claim, load_table, md_table, partial_note


def _write(d, name, text):
    (d / f"{name}.csv").write_text(text, encoding="utf-8")


def test_a_paper_table_keeps_its_source_and_values_as_printed(tmp_path):
    _write(tmp_path, "t", "# source: Paper X, Table 4\n# url: https://example.org/x\n"
                          "model,deception\nGPT-4,6.07\nGPT-3.5,\n")
    t = load_table("t", tmp_path)
    assert t.source == "Paper X, Table 4" and t.meta["url"] == "https://example.org/x"
    assert t.row(model="GPT-4")["deception"] == "6.07"
    assert PaperTable.number(t.row(model="GPT-3.5")["deception"]) is None
    assert PaperTable.number("46.60%") == 46.6
    with pytest.raises(KeyError, match="t.csv: 0 rows"):
        t.row(model="nobody")


def test_a_malformed_paper_table_is_named_by_file_and_line(tmp_path):
    _write(tmp_path, "nosrc", "a,b\n1,2\n")
    with pytest.raises(PaperDataError, match=r"nosrc.csv: no '# source:' line"):
        load_table("nosrc", tmp_path)
    _write(tmp_path, "bad", "# source: S\na,b\n1,2\n1,2,3\n")
    with pytest.raises(PaperDataError, match=r"bad.csv:4: 3 cells, the header has 2"):
        load_table("bad", tmp_path)
    with pytest.raises(PaperDataError, match="paper table not found"):
        load_table("absent", tmp_path)


def test_progress_estimates_the_calls_left_from_finished_cells():
    lines: list[str] = []
    p = Progress(4, lines.append, paper="magic")
    p.done("reused", 0)
    assert "cell 1/4 done (reused); ? model calls left" in lines[-1]
    p.done("chameleon s00", 30)
    # 30 calls / 1 played cell x 2 left: the reused cell made no calls and is not in the mean
    assert "cell 2/4 done (chameleon s00); ~60 model calls left" in lines[-1]


def test_report_helpers():
    assert md_table(["a", "b"], [[1, None], ["x|y", 2]]) == ["| a | b |", "|---|---|", "| 1 | - |", "| x\\|y | 2 |"]
    assert claim("PLAYER* best", None, "n=0") == "- PLAYER* best: **cannot tell** on this run (n=0)."
    assert partial_note(None, 1, 2, "games") == []
    assert "1 of the protocol's 143 games" in partial_note(1, 1, 143, "games")[0]


def test_all_runs_the_three_papers_in_their_folders_with_a_wis_pool(tmp_path, monkeypatch):
    from mas_agents.eval.reproduce import magic, player_star, wis
    calls, others = [], []

    def fake(mod, name):
        def reproduce(cfg):   # the part's configuration, as the command line would give it
            calls.append((name, cfg.as_options()["model"], cfg.out.name, cfg.limit))
            others.append(cfg.as_options()["others"])
            return {"headline": f"{name} ok", "partial": True}
        monkeypatch.setattr(mod, "reproduce", reproduce)
        monkeypatch.setattr(mod, "check_out", lambda cfg: checked.append((name, cfg.limit)))
    checked = []
    for mod, name in ((magic, "magic"), (player_star, "player_star"), (wis, "wis")):
        fake(mod, name)
    res = rall.reproduce_all(rall.AllRun(data_root=tmp_path, out=tmp_path / "all", model="openai:m", others=None,
                                         limit=1))
    assert calls == [("magic", "openai:m", "magic", 1), ("player_star", "openai:m", "player-star", 1),
                     ("wis", "openai:m,openai:m", "wis", 1)]
    md = (tmp_path / "all" / "report.md").read_text()
    assert "[report](magic/report.md)" in md and "Partial" in md and "openai:m,openai:m" in md
    cfg = json.loads((tmp_path / "all" / "config.json").read_text())
    assert cfg["kind"] == "reproduce" and cfg["paper"] == "all"
    assert res["headline"].startswith("magic: magic ok; player-star: player_star ok")
    assert others == [None, None, None]
    assert checked == [("magic", 1), ("player_star", 1), ("wis", 1)]    # every part checked before any ran
    calls.clear(), others.clear()
    rall.reproduce_all(rall.AllRun(data_root=tmp_path, out=tmp_path / "all2", model="openai:m", others="openai:o",
                                   limit=None))
    # magic's other seats and the WiS pool take --others; PLAYER* seats one model, so it gets none
    assert others == ["openai:o", None, "openai:o"] and calls[2][1] == "openai:m,openai:o"
    with pytest.raises(ValueError, match="'all' tests one model"):
        rall.reproduce_all(rall.AllRun(data_root=tmp_path, out=tmp_path / "x", model="a,b", others=None, limit=1))


def test_progress_estimate_of_calls_left_never_rises():
    """Issue 57, E10: cells of one protocol differ (a game cell makes several times the calls of
    an evaluation-only one); the estimate rose when a dearer cell finished (30 calls, then 80:
    ~120 left, then ~165). It now never rises, and is 0 at the end."""
    import re
    lines = []
    p = Progress(5, lines.append, paper="player-star")
    for label, calls in (("a", 30), ("b", 80), ("reused", 0), ("c", 10), ("d", 50)):
        p.done(label, calls)
    left = [int(re.search(r"~(\d+) model calls left", ln).group(1)) for ln in lines]
    assert left == [120, 120, 110, 40, 0]    # 30 x 4; min(55 x 3, 120) (was 165); 55 x 2; 40 x 1; none left
