"""The papers' numbers kept as data (``eval/reproduce/papers/*.csv``) against the shared
transcriptions (``../shared/papers/tables/*.csv``), PLAYER* Table 1 against the WellPlay data cell
by cell, MAgIC Table 3 against our rounds and settings, and the PLAYER* authors' released logs
recomputed by ``scripts/player_star_logs.py`` against a hand-checked cell."""

from __future__ import annotations

import csv
import importlib.util
import statistics
import sys
from pathlib import Path

import pytest

from mas_agents.eval.reproduce.common import PAPERS_DIR, load_table

ROOT = Path(__file__).resolve().parents[2]

#: Our file -> (the shared file, our key column, the shared key column, {shared column: ours}).
#: Every value of every shared column is compared with ours, as printed (strings).
COUNTERPARTS = {
    "magic_table1": ("magic_table1.csv", "model", "model", {}),
    "magic_table2": ("magic_table2.csv", "model", "model", {}),
    "magic_table3_coverage": ("magic_table3_coverage.csv", "scenario", "scenario", {"collaboration": "cooperation"}),
    "magic_table4": ("magic_table4.csv", "model", "model", {}),
    "player_star_table1": ("player_star_table1.csv", "script", "script",
                           {"agents": "characters", "relations": "relation"}),
    "player_star_table_a6": ("player_star_table_a6.csv", "model", "model", {"overall_score": "weighted_score"}),
}
#: Our files the shared tables do not hold, and why.
NO_COUNTERPART = {
    "magic_table1_pre_emnlp": "the authors' pre-EMNLP leaderboard image, not a table of the EMNLP text",
    "player_star_released_logs": "the authors' released logs, not the paper",
    "player_star_released_logs_earlier": "the authors' earlier released log set, not the paper",
    "wis_table1_prompts": "WiS tables: not transcribed in ../shared/papers/tables",
    "wis_table2": "idem", "wis_table3": "idem", "wis_table4": "idem",
}
#: Rows of ours that the shared file does not have (computed here from the printed rows).
OURS_ONLY_ROWS = {"magic_table4": {"Average improvement (recomputed)"}}


def _read_shared(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


@pytest.fixture(scope="module")
def shared_tables(real_data_root) -> Path:
    """``../shared/papers/tables``: beside the datasets root (``shared/datasets`` ->
    ``shared/papers``), else beside the checkout. A realdata fixture: with the datasets found and
    the tables missing the test FAILS (it never skips)."""
    for cand in (Path(real_data_root).parent / "papers" / "tables", ROOT.parent / "shared" / "papers" / "tables"):
        if (cand / "magic_table1.csv").is_file():
            return cand
    pytest.fail(f"the papers' tables are not found beside the datasets ({Path(real_data_root).parent / 'papers'}) "
                f"nor at {ROOT.parent / 'shared' / 'papers'}", pytrace=False)


def test_every_paper_csv_is_compared_or_says_why_not():
    ours = {p.stem for p in PAPERS_DIR.glob("*.csv")}
    assert ours == set(COUNTERPARTS) | set(NO_COUNTERPART), "a new paper CSV must be compared or listed"


@pytest.mark.realdata
@pytest.mark.parametrize("name", sorted(COUNTERPARTS))
def test_every_value_equals_the_shared_transcription(name, shared_tables):
    shared_file, our_key, their_key, rename = COUNTERPARTS[name]
    theirs = _read_shared(shared_tables / shared_file)
    ours = load_table(name)
    assert ours.source and "# source" not in ours.source
    mine = {r[our_key]: r for r in ours.rows}
    assert set(mine) - OURS_ONLY_ROWS.get(name, set()) == {r[their_key] for r in theirs}
    compared = 0
    for row in theirs:
        for col, val in row.items():
            col = rename.get(col, col)
            assert col in ours.columns, f"{name}.csv has no column {col!r}"
            assert mine[row[their_key]][col] == val, f"{name}.csv {row[their_key]!r} {col}"
            compared += 1
    assert compared == len(theirs) * len(theirs[0])


def test_magic_table4_recomputed_average_is_the_mean_of_the_row_differences():
    t4 = load_table("magic_table4")
    pairs = [(t4.rows[i], t4.rows[i + 1]) for i in range(0, 14, 2)]
    assert all(a["model"] == b["model"] + "+PGM" for a, b in pairs)
    recomputed = t4.row(model="Average improvement (recomputed)")
    printed = t4.row(model="Average improvement (printed)")
    for col in t4.columns[1:]:
        mean = statistics.fmean(float(a[col]) - float(b[col]) for a, b in pairs)
        assert recomputed[col] == f"{mean:.2f}", col
    # the two that do not follow from the rows (issue 47), and GPT-4's two win rates
    assert (printed["deception"], recomputed["deception"]) == ("6.07", "10.36")
    assert (printed["self_awareness"], recomputed["self_awareness"]) == ("0.66", "1.23")
    assert t4.row(model="GPT-4")["win_rate"] == "58.3" and load_table("magic_table1").row(model="GPT-4")["win_rate"] == "53.3"
    assert "58.3" in t4.meta["note"] and "53.3" in t4.meta["note"]


def test_magic_table3_rounds_and_competitions_are_ours():
    """Table 3's rounds per game and competitions per scenario against the game rules and the
    settings counts the runs use."""
    from mas_agents.graphs.magic.dataset import SETTING_COUNTS
    from mas_agents.graphs.magic import rules as R
    t3 = {r["scenario"]: r for r in load_table("magic_table3_coverage").rows}
    ours = {"Chameleon": ("chameleon", R.CHAMELEON_CLUE_ROUNDS), "Undercover": ("undercover", R.UNDERCOVER_CLUE_ROUNDS),
            "Cost Sharing": ("cost_sharing", R.COST_SHARING_MAX_ROUNDS),
            "Prisoner's Dilemma": ("prisoners_dilemma", R.PD_ROUNDS), "Public Good": ("public_good", R.PG_ROUNDS)}
    assert set(t3) == set(ours)
    for scenario, (key, rounds) in ours.items():
        assert int(t3[scenario]["rounds"]) == rounds, scenario
        assert int(t3[scenario]["competitions"]) == SETTING_COUNTS[key], scenario


# ---------------------------------------------------------------------- PLAYER* Table 1 vs the data


@pytest.mark.realdata
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_player_star_table1_every_script_row_equals_the_data(real_data_root, lang):
    """Characters, victims and questions per category of every script (the token columns depend on
    a tokenizer the paper does not name and are not checked)."""
    from mas_agents.graphs.mmg.dataset import load_script
    t1 = load_table("player_star_table1")
    rows = [r for r in t1.rows if r["row"].isdigit()]
    assert len(rows) == 12
    for r in rows:
        s = load_script(real_data_root, r["row"], lang)
        qs = [q for c in s.characters for q in s.questions[c.name]]
        data = {"characters": len(s.characters), "victims": len(s.victims),
                **{c: sum(q.category == c for q in qs) for c in ("objective", "reasoning", "relation")},
                "questions": len(qs)}
        assert {k: int(r[k]) for k in data} == data, f"{lang} {r['row']} {r['script']}"


def test_player_star_table1_printed_avg_and_sum_follow_from_the_rows_but_the_questions_avg():
    t1 = load_table("player_star_table1")
    rows = [r for r in t1.rows if r["row"].isdigit()]
    avg, total = t1.row(row="avg (printed)"), t1.row(row="total")
    wrong = []
    for col in t1.columns[2:-1]:
        s = sum(float(r[col]) for r in rows)
        assert float(total[col]) == s, col
        if abs(float(avg[col]) - s / 12) >= 0.5 * 10 ** -len(avg[col].partition(".")[2]) + 1e-9:
            wrong.append((col, avg[col], s / 12))
    assert wrong == [("questions", "125.50", 123.5)]          # 1,482 / 12 = 123.50
    assert "125.50" in t1.meta["note"] and "123.50" in t1.meta["note"]


# --------------------------------------------------------------- PLAYER*: the authors' released logs


def _script_module():
    spec = importlib.util.spec_from_file_location("player_star_logs", ROOT / "scripts" / "player_star_logs.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["player_star_logs"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_released_logs_hand_checked_cell():
    """zh, PLAYER* (log_PLAYER), script 131 Sin. By hand in the session that wrote this test: the
    three files log/log_cn/log_PLAYER/131-罪恶（4人封闭）/evaluate/evaluation_{0,1,2}.xlsx of
    alickzhu/PLAYER at b6fcef9 were unzipped and the value (column B) and is_right (column G) cells
    of xl/worksheets/sheet1.xml counted with grep | sort | uniq -c:
    pass 0: objective 1/3, reasoning 12/20, relation 15/21 -> (10+60+30)/(30+100+42) = 100/172;
    pass 1: 2/3, 12/20, 14/21 -> 108/172; pass 2: 0/3, 12/20, 15/21 -> 90/172 (each file's own
    summary row says 100/172, 108/172, 90/172: points of 172, with 28 / 28 / 27 of the 44 questions
    right). Mean 298/516 = 57.75 %, sample std 5.24 points."""
    logs = load_table("player_star_released_logs")
    cell = logs.row(lang="zh", method="player_star", script_id="131", category="overall")
    assert (cell["questions"], cell["points"]) == ("44", "172")
    assert [cell[f"pass_{i}"] for i in range(3)] == [f"{100 * 100 / 172:.2f}", f"{100 * 108 / 172:.2f}",
                                                     f"{100 * 90 / 172:.2f}"] == ["58.14", "62.79", "52.33"]
    assert (cell["mean"], cell["std"]) == (f"{100 * 298 / 516:.2f}", "5.24")
    obj = logs.row(lang="zh", method="player_star", script_id="131", category="objective")
    assert [obj[f"pass_{i}"] for i in range(3)] == ["33.33", "66.67", "0.00"]
    # the empty answers scored right (answer field "", single choice), 8 + 5 + 6 of them, read off the files
    assert cell["empty_right"] == "19"


def test_released_logs_language_rows_are_the_b3_weighting_of_the_script_rows():
    """The ``all`` rows (PLAYER* App. B.3: scripts weighted by their points, i.e. pooled) follow
    from the per-script rows of the same CSV (to its 2-decimal rounding), and differ from the
    plain mean over scripts (the former upstream figure, zh PLAYER* 49.8)."""
    rows = load_table("player_star_released_logs").rows
    groups = {(r["lang"], r["method"]) for r in rows}
    assert len(groups) == 10
    for lang, method in groups:
        per = [r for r in rows if (r["lang"], r["method"], r["category"]) == (lang, method, "overall") and r["script_id"] != "all"]
        agg = next(r for r in rows if (r["lang"], r["method"], r["category"], r["script_id"]) == (lang, method, "overall", "all"))
        assert int(agg["scripts"]) == len(per) and int(agg["points"]) == sum(int(r["points"]) for r in per)
        for i in range(3):
            pooled = sum(float(r[f"pass_{i}"]) * int(r["points"]) for r in per) / int(agg["points"])
            assert abs(pooled - float(agg[f"pass_{i}"])) < 0.01, (lang, method, i)
    zh = [r for r in rows if (r["lang"], r["method"], r["category"]) == ("zh", "player_star", "overall")]
    plain = statistics.fmean(statistics.fmean(float(r[f"pass_{i}"]) for r in zh if r["script_id"] != "all") for i in range(3))
    assert round(plain, 1) == 49.8
    assert next(r for r in zh if r["script_id"] == "all")["mean"] == "46.07"


def test_the_earlier_released_log_set_names_its_commit_and_differs_in_zh_player_star_only():
    """The earlier log set (commit b2483e3, 2024-03-29; deleted by b6fcef9 40 s after 79a17f4):
    zh PLAYER* differs from the kept set in 8 of its 12 scripts (App. B.3 pooled 42.66 ± 0.34
    against 46.07 ± 1.15); every other (lang, method, script) holds the same three pass values,
    in another order where its files were renamed."""
    kept, earlier = load_table("player_star_released_logs"), load_table("player_star_released_logs_earlier")
    assert "b6fcef99ee4c34414c3253d5547f34619be5910c" in kept.source and "2024-06-05" in kept.source
    assert "b2483e389ef190531eaf8b8039223885e384ad8c" in earlier.source and "2024-03-29" in earlier.source
    assert "79a17f416060372efaea44cb1fe07bbba473aaec" in earlier.source and "40 s later" in earlier.source
    k = {(r["lang"], r["method"], r["script_id"], r["category"]): r for r in kept.rows}
    e = {(r["lang"], r["method"], r["script_id"], r["category"]): r for r in earlier.rows}
    assert set(k) == set(e)
    differ = {key for key in k if key[2] != "all" and key[3] == "overall"
              and sorted(k[key][f"pass_{i}"] for i in range(3)) != sorted(e[key][f"pass_{i}"] for i in range(3))}
    assert differ == {("zh", "player_star", sid, "overall")
                      for sid in ("054", "131", "134", "141", "152", "1702", "1849", "191")}
    pooled = e[("zh", "player_star", "all", "overall")]
    assert (pooled["mean"], pooled["std"], pooled["scripts"]) == ("42.66", "0.34", "12")
    assert (k[("zh", "player_star", "all", "overall")]["mean"], k[("zh", "player_star", "all", "overall")]["std"]) == (
        "46.07", "1.15")
    for method in ("op", "ocot"):                     # FSA (OP) and O-CoT: the same means in both sets
        assert e[("zh", method, "all", "overall")]["mean"] == k[("zh", method, "all", "overall")]["mean"]


def test_released_logs_script_refuses_a_tree_with_two_log_sets_and_an_unknown_commit_without_out(
        tmp_path, capsys, monkeypatch):
    m = _script_module()
    for folder in ("131-罪恶（4人封闭）", "罪恶（4人封闭）"):          # the kept and the earlier folder of one script
        for k in range(3):
            f = tmp_path / "log" / "log_cn" / "log_PLAYER" / folder / "evaluate" / f"evaluation_{k}.xlsx"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(b"x")
    counts = {"objective": 1, "reasoning": 0, "relation": 0, "overall": 10}
    monkeypatch.setattr(m, "read_pass", lambda data, path: (counts, counts, dict.fromkeys(counts, 0)))
    assert m.main(["--log-root", str(tmp_path), "--out", str(tmp_path / "x.csv")]) == 2
    err = capsys.readouterr().err
    assert err == ("error: zh/player_star/131: two log folders for one script (log_PLAYER/131-罪恶（4人封闭）, "
                   "log_PLAYER/罪恶（4人封闭）); this tree holds two log sets: read a commit that holds one\n")
    assert m.main(["--log-root", str(tmp_path), "--commit", "79a17f4"]) == 2
    assert capsys.readouterr().err == "error: --commit 79a17f4: not a log set this script knows; give --out\n"
    assert m._script_id("zh", "罪恶（4人封闭）") == m._script_id("zh", "131-罪恶（4人封闭）") == "131"
    assert not (tmp_path / "x.csv").exists()


def test_released_logs_script_finds_whose_script_a_question_prompt_quotes():
    """:func:`prompt_sources` on a made-up game log of the authors' form: 4 characters introduce
    themselves (each prompt quoting its own script), then A asks B with a prompt quoting D's script
    (the sensor-loop confound: D is the 4th), D asks A quoting its own, B asks C quoting nothing."""
    m = _script_module()
    own = {n: f"{n} grew up by the river and kept a diary of every guest.{n} saw the lantern go out at nine"
           for n in "ABCD"}
    rows = [m.GAME_HEADER, *((str(i), "self introduction stage", n, "all", "hi", f"Your Script is {own[n]}")
                             for i, n in enumerate("ABCD")),
            ("4", "A ask B for death of V", "A", "B", "where?", f"V was murdered.\n\nYour Script is about B is {own['D']}.\n"
             "The chat history about B is nothing."),
            ("5", "A ask B for death of V", "B", "A", "home", f"A ask you a question: where?\n\nYour Script relative to "
             f"the question is {own['B']}"),
            ("6", "D ask A for death of V", "D", "A", "why?", f"Your Script is about A is {own['D']}"),
            ("7", "B ask C for death of V", "B", "C", "who?", "Your Script is about C is short.")]
    assert m.prompt_sources(rows) == [("A", "D", "D"), ("D", "D", "D"), ("B", "D", None)]
    with pytest.raises(m.LogError, match="game log header"):
        m.prompt_sources([("index", "stage"), *rows[1:]])
    assert m._parse_game_path("log/log_cn/log_PLAYER/131-罪恶（4人封闭）/罪恶.xlsx") == ("zh", "log_PLAYER", "131-罪恶（4人封闭）")
    assert m._parse_game_path("log/log_cn/log_PLAYER/131-x/evaluate/evaluation_0.xlsx") is None


def test_released_logs_script_aggregates_pooled_and_plain():
    """:func:`table` on two made-up scripts: the B.3 aggregate pools points, ``weighted=False``
    averages the scripts; empty answers counted right are taken out in ``mean_empty_wrong``."""
    m = _script_module()

    def p(sid, k, right, empty=0):   # one pass: objective 1 question, reasoning 2 questions
        total = {"objective": 1, "reasoning": 2, "relation": 0, "overall": 20}
        r = {"objective": right[0], "reasoning": right[1], "relation": 0, "overall": 10 * right[0] + 5 * right[1]}
        e = {"objective": empty, "reasoning": 0, "relation": 0, "overall": 10 * empty}
        return m.Pass("zh", "player_star", "log_PLAYER", sid, sid, k, total, r, e)
    small = [p("1", k, (0, 2)) for k in range(3)]                    # 10/20 each pass
    big = [m.Pass("zh", "player_star", "log_PLAYER", "2", "2", k, {"objective": 3, "reasoning": 0, "relation": 0,
                  "overall": 30}, {"objective": 3, "reasoning": 0, "relation": 0, "overall": 30},
                  {"objective": 1 if k == 0 else 0, "reasoning": 0, "relation": 0, "overall": 10 if k == 0 else 0})
           for k in range(3)]                                          # 30/30 each pass
    pooled = {r["category"]: r for r in m.table(small + big) if r["script_id"] == "all"}
    plain = {r["category"]: r for r in m.table(small + big, weighted=False) if r["script_id"] == "all"}
    assert pooled["overall"]["mean"] == pytest.approx(100 * 40 / 50) and pooled["overall"]["std"] == 0
    assert plain["overall"]["mean"] == pytest.approx(100 * (0.5 + 1.0) / 2)
    assert pooled["objective"]["mean"] == pytest.approx(100 * 3 / 4)
    assert pooled["overall"]["empty_right"] == 1 and pooled["overall"]["mean_empty_wrong"] == pytest.approx(
        100 * (30 + 40 + 40) / 3 / 50)


def test_released_logs_script_bad_input_is_one_error_line(tmp_path, capsys, monkeypatch):
    m = _script_module()
    assert m.main(["--git-dir", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x.csv")]) == 2
    assert capsys.readouterr().err == f"error: --git-dir {tmp_path / 'nowhere'}: not a directory\n"
    (tmp_path / "empty").mkdir()
    assert m.main(["--git-dir", str(tmp_path / "empty"), "--out", str(tmp_path / "x.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --git-dir {tmp_path / 'empty'}: git rev-parse {m.COMMIT} failed: fatal: ") and err.count("\n") == 1
    assert m.main(["--log-root", str(tmp_path), "--out", str(tmp_path / "x.csv")]) == 2
    assert capsys.readouterr().err == f"error: --log-root {tmp_path}: no log/ folder in it\n"
    f = tmp_path / "log" / "log_cn" / "log_PLAYER" / "131-x" / "evaluate" / "evaluation_0.xlsx"
    f.parent.mkdir(parents=True)
    f.write_bytes(b"not a zip")
    monkeypatch.setitem(sys.modules, "openpyxl", None)               # as where openpyxl is not installed
    assert m.main(["--log-root", str(tmp_path), "--out", str(tmp_path / "x.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: reading the authors' .xlsx logs needs openpyxl") and err.count("\n") == 1
    assert not (tmp_path / "x.csv").exists()
    g = tmp_path / "log" / "log_cn" / "log_PLAYER" / "131-x" / "x.xlsx"        # a game log, for --prompts
    g.write_bytes(b"not a zip")
    assert m.main(["--log-root", str(tmp_path), "--prompts"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: reading the authors' .xlsx logs needs openpyxl") and err.count("\n") == 1
