"""WellPlay loader tests: the real files (``realdata``; README = wellplay/README.md in the data
folder), the synthetic script "Lantern" in ``tests/data``, and corrupt copies in a temp folder."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import eval.datasets as data_mod
from eval.datasets import DataError, resolve_data_dir
from eval.datasets.wellplay import SCRIPT_IDS, find_script, list_scripts, load_all, load_script
from tests.data_roots import (
    LANTERN,
    LANTERN_CHARACTERS,
    LANTERN_ID,
    LANTERN_MURDERER,
    LANTERN_QUESTIONS,
    LANTERN_VICTIM,
)

# README "Counts": id -> (characters, objective, reasoning, relation, total).
COUNTS = {
    "003": (9, 10, 102, 72, 184),
    "005": (7, 19, 152, 69, 240),
    "033": (7, 12, 128, 63, 203),
    "053": (7, 12, 61, 72, 145),
    "054": (5, 4, 24, 30, 58),
    "131": (4, 3, 20, 21, 44),
    "134": (4, 3, 21, 12, 36),
    "141": (5, 4, 24, 15, 43),
    "152": (4, 3, 18, 36, 57),
    "1702": (6, 20, 109, 69, 198),
    "1849": (6, 24, 123, 88, 235),
    "191": (4, 3, 18, 18, 39),
}

# README "Counts", column "script chars (min-max)" (English).
SCRIPT_CHARS = {
    "003": (1988, 10148), "005": (11380, 21376), "033": (9184, 21484), "053": (5980, 9513),
    "054": (2492, 4239), "131": (4925, 8322), "134": (3120, 6996), "141": (7890, 8971),
    "152": (8978, 10572), "1702": (24939, 29370), "1849": (24950, 28215), "191": (3595, 6510),
}

realdata = pytest.mark.realdata


@pytest.fixture(scope="module")
def root(real_data_root) -> Path:
    return real_data_root


@pytest.fixture(scope="module")
def scripts(root):
    return {lang: load_all(root, lang) for lang in ("en", "zh")}


def _kinds(lines: list[str]) -> Counter:
    """Counter of ``[kind]`` tags in repair/warning lines."""
    return Counter(line.split("[", 1)[1].split("]", 1)[0] for line in lines)


def _q(script, character, line):
    return next(q for q in script.questions[character] if q.line == line)


# ---------------------------------------------------------------------------- counts


@realdata
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_totals_match_paper(scripts, lang):
    ss = scripts[lang]
    questions = [q for s in ss for q in s.all_questions()]
    assert len(ss) == 12
    assert sum(len(s.characters) for s in ss) == 68
    assert len(questions) == 1482
    assert Counter(q.category for q in questions) == {"objective": 117, "reasoning": 800, "relation": 565}
    assert sum(q.multi for q in questions) == 123  # README: all 123 type=b rows are Reasoning
    assert all(q.category == "reasoning" for q in questions if q.multi)
    assert Counter(len(q.options) for q in questions) == {4: 1395, 5: 56, 3: 25, 2: 6}


@realdata
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_per_script_counts(scripts, lang):
    for s in scripts[lang]:
        n_chars, obj, reas, rel, total = COUNTS[s.id]
        cats = Counter(q.category for q in s.all_questions())
        assert (len(s.characters), cats["objective"], cats["reasoning"], cats["relation"]) == (n_chars, obj, reas, rel), s.name
        assert len(s.all_questions()) == total
        # README "Pooled files": as many rows of each category as the per-character files.
        assert Counter(q.category for q in s.pooled) == cats
        assert s.name == SCRIPT_IDS[s.id][0 if lang == "en" else 1]
        lengths = [len(c.script) for c in s.characters]
        if lang == "en":
            assert (min(lengths), max(lengths)) == SCRIPT_CHARS[s.id], s.name
    if lang == "zh":  # README: "Chinese scripts are 600-7,449 characters"
        lengths = [len(c.script) for s in scripts["zh"] for c in s.characters]
        assert (min(lengths), max(lengths)) == (600, 7449)


@realdata
def test_script_order_and_lookup(root):
    ids = [sid for sid, _, _ in list_scripts(root, "en")]
    assert ids == list(SCRIPT_IDS)
    sin = find_script(root, "sin", "en")
    assert sin.name == "Sin (4 people closed)"
    assert find_script(root, "131", "en") == sin
    assert find_script(root, " SIN (4 people closed) ", "en") == sin
    assert find_script(root, "罪恶", "en") == sin  # the other language's name maps by id
    assert find_script(root, "Death Wears White", "en").name == "Death Wears White (open to 8 people)"
    assert find_script(root, "Sin", "zh").name == "罪恶（4人封闭）"
    assert find_script(root, "005", "zh").name == "幽灵复仇（7人)"  # mixed full/half-width parentheses


@realdata
def test_unknown_script_lists_names(root):
    with pytest.raises(DataError) as e:
        find_script(root, "Hamlet", "en")
    msg = str(e.value)
    assert "'Hamlet'" in msg and "131 Sin" in msg and "191 Riverside Inn" in msg


@realdata
def test_sin(root):
    s = load_script(root, "Sin")
    assert (s.id, s.name, s.lang) == ("131", "Sin", "en")
    assert [c.name for c in s.characters] == ["Zhang Villager", "Chief Wang", "Officer Li", "Hu Investigate"]
    assert s.victims == ["Zhao Cishan"]
    assert s.murderers_of("Zhao Cishan") == ["Chief Wang"]
    chief = s.character("Chief Wang")
    assert chief.is_murderer and chief.kill_by_me == [1]
    assert [c.name for c in s.characters if c.is_murderer] == ["Chief Wang"]
    assert chief.script.startswith("Chief Wang\nThe village where Chief Wang is located")
    assert 4925 <= len(chief.script) <= 8322  # README "Counts": Sin scripts are 4,925-8,322 chars
    assert chief.goals
    q = s.questions["Chief Wang"][0]
    assert q.qid == f"131/Chief Wang/{q.line}" and q.line == 2
    assert q.file == "wellplay/en/Sin (4 people closed)/final_result/Chief Wang.csv"
    assert s.repairs == [] and s.warnings == []
    assert all(q.character == "" and q.qid.startswith("131/FSA/") for q in s.pooled)
    with pytest.raises(KeyError):
        s.character("Nobody")
    with pytest.raises(KeyError):
        s.murderers_of("Nobody")


@realdata
def test_murderer_labels_as_upstream(root):
    # README "Oddities": inconsistent murderer labels are kept, not repaired.
    assert load_script(root, "Danshui Villa").murderers_of("Li Yu") == ["Guo Wangshan", "Qi Yue"]
    assert load_script(root, "丹水山庄", "zh").murderers_of("李郁") == ["齐岳"]
    assert load_script(root, "Ghost Revenge").murderers_of("Wu Baian") == ["Aming"]
    assert load_script(root, "幽灵复仇", "zh").murderers_of("吴百安") == ["阿明", "夏仲鹏"]


@realdata
def test_solitary_boat_firefly(root):
    s = load_script(root, "1702")
    # Yu Sunian.json has no `questions` key (README "Schemas"); victims come from the first character.
    assert s.victims == ["Zhou Mengdang", "Bao Liu", "Cui Shouheng", "Taitai(Wang Xi Rong)"]
    assert s.murderers_of("Bao Liu") == ["Tian Chou"]
    assert s.murderers_of("姐姐(Yu Shi)") == ["Tian Chou"]  # Yu Sunian's own label, same position
    assert s.murderers_of("Cui Shouheng") == ["Yu Sunian"]


# ---------------------------------------------------------------------------- oddities and repairs


@realdata
def test_ghost_revenge_trailing_comma_and_ac_key(root):
    s = load_script(root, "Ghost Revenge")
    q = _q(s, "Duan Yuetong", 23)
    assert q.text == "What is Yue Dongwen hiding?"
    assert q.key == frozenset("b") and len(q.options) == 4
    assert next(p for p in s.pooled if p.line == 23).key == frozenset("b")
    ac = _q(s, "Aming", 18)
    assert ac.key == frozenset({"a", "c"}) and not ac.multi
    assert _kinds(s.repairs) == {"trailing-comma": 2}
    assert "wellplay/en/Ghost Revenge (7 people)/final_result/Duan Yuetong.csv:23: [trailing-comma]" in s.repairs[0]


@realdata
def test_manna_letter_in_column_e(root):
    s = load_script(root, "Manna")
    rows = [q for q in s.all_questions() if q.text == "Is Cheng Ge the son of Xinya?"]
    assert len(rows) == 5
    assert all(q.key == frozenset("b") and q.options == ("No, it's a fake", "It's my biological son") for q in rows)
    assert _kinds(s.repairs) == {"letter-in-e": 10}  # 5 per-character rows + 5 in FSA.csv


@realdata
def test_zh_short_rows_bb_and_blank_lines(root):
    gr = load_script(root, "幽灵复仇", "zh")
    q = _q(gr, "段约同", 23)
    assert q.key == frozenset("b") and len(q.options) == 4 and q.options[0] == "他的公司卖假药"
    assert _q(gr, "夏仲鹏", 10).key == frozenset("b")  # truth "bb"
    assert _kinds(gr.repairs) == {"short-row": 1, "letter-in-e": 2, "doubled-letter": 2, "bom": 1}
    manna = load_script(root, "曼娜", "zh")
    rows = [q for q in manna.all_questions() if q.text == "【承格】是【欣雅】的儿子吗？"]
    assert len(rows) == 5 and all(q.key == frozenset("b") and len(q.options) == 2 for q in rows)
    blank = [r for r in manna.repairs if "[blank-line]" in r]
    assert any("尚致.csv:36:" in r for r in blank) and any("承格.csv:47:" in r for r in blank)
    # the four zh blank lines are trailing ones; the last row keeps its physical line number
    assert manna.questions["承格"][-1].line == 46 and len(manna.questions["承格"]) == 45


@realdata
def test_repair_totals(scripts):
    en = _kinds([r for s in scripts["en"] for r in s.repairs])
    zh = _kinds([r for s in scripts["zh"] for r in s.repairs])
    assert en == {"trailing-comma": 2, "letter-in-e": 10, "bom": 1}
    assert zh == {"short-row": 6, "letter-in-e": 12, "doubled-letter": 2, "blank-line": 4, "bom": 25}
    # README "Schemas": every `script` is a single string; keys are letters of non-empty options.
    for s in scripts["en"] + scripts["zh"]:
        for q in s.all_questions() + s.pooled:
            assert q.key and all("abcde".index(k) < len(q.options) for k in q.key)
            assert all(q.options)


@realdata
def test_undocumented_anomalies_are_warned(scripts):
    en = [w for s in scripts["en"] for w in s.warnings]
    zh = [w for s in scripts["zh"] for w in s.warnings]
    assert _kinds(en) == {"duplicate-option": 30, "blank-question": 5}
    assert _kinds(zh) == {"duplicate-option": 30}
    assert any("Shen Cheng.csv:14: [blank-question]" in w for w in en)


@realdata
def test_answer_position_bias(scripts):
    # README "Oddities": 779 of 1,481 single-letter keys are `a`.
    qs = [q for s in scripts["en"] for q in s.all_questions()]
    single = [q for q in qs if len(q.key) == 1]
    assert len(single) == 1481
    assert sum(q.key == frozenset("a") for q in single) == 779


# ---------------------------------------------------------------------------- the synthetic script


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_synthetic_script_counts_and_roles(synthetic_root, lang):
    [sc] = load_all(synthetic_root, lang)
    assert sc == load_script(synthetic_root, "9001", lang) == load_script(synthetic_root, SCRIPT_IDS["9001"][0], lang)
    assert (sc.id, sc.lang) == ("9001", lang) and len(sc.characters) == 4
    questions = sc.all_questions()
    assert len(questions) == LANTERN_QUESTIONS == len(sc.pooled)
    assert Counter(q.category for q in questions) == {"objective": 3, "reasoning": 11, "relation": 8}
    assert Counter(q.category for q in sc.pooled) == Counter(q.category for q in questions)
    assert sum(q.multi for q in questions) == 3 and all(q.category == "reasoning" for q in questions if q.multi)
    assert Counter(len(q.options) for q in questions) == {4: 17, 3: 3, 2: 1, 5: 1}
    assert [c.is_murderer for c in sc.characters] == [False, True, False, False]
    murderer = sc.characters[1]
    assert murderer.kill_by_me == [1] and sc.murderers_of(sc.victims[0]) == [murderer.name]
    # as in the real data, the murderer's own file holds only relation questions
    assert {q.category for q in sc.questions[murderer.name]} == {"relation"}
    assert sc.warnings == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_synthetic_script_registers_its_own_id(synthetic_root, lang):
    # nothing registers it beforehand (and no earlier test's registration is left over): its
    # script_info.json's mas_id / mas_names do, when it is loaded
    assert LANTERN_ID not in SCRIPT_IDS
    assert load_script(synthetic_root, LANTERN[0 if lang == "en" else 1], lang).id == LANTERN_ID
    assert SCRIPT_IDS[LANTERN_ID] == LANTERN


def test_synthetic_script_en_names_ids_and_files(synthetic_root):
    sc = load_script(synthetic_root, "lantern")
    assert [c.name for c in sc.characters] == LANTERN_CHARACTERS
    assert sc.victims == [LANTERN_VICTIM] and sc.murderers_of(LANTERN_VICTIM) == [LANTERN_MURDERER]
    q = sc.questions["Mira Quill"][0]
    assert (q.qid, q.line, q.key) == ("9001/Mira Quill/2", 2, frozenset("b"))
    assert q.file == "wellplay/en/Lantern (4 people closed)/final_result/Mira Quill.csv"
    assert sc.repairs == []
    assert find_script(synthetic_root, "灯笼", "en") == find_script(synthetic_root, "9001", "en")
    assert [sid for sid, _, _ in list_scripts(synthetic_root, "en")] == ["9001"]


def test_synthetic_script_zh_bom_is_one_repair(synthetic_root):
    sc = load_script(synthetic_root, "灯笼", "zh")
    assert sc.name == "灯笼" and sc.victims == ["温掌柜"] and sc.murderers_of("温掌柜") == ["傅厨师"]
    assert sc.repairs == ["wellplay/zh/灯笼（4人封闭）/final_result/GM.csv:1: [bom] skipped the UTF-8 byte-order mark"]


# ---------------------------------------------------------------------------- errors


def test_missing_data_dir_is_an_error(tmp_path, monkeypatch):
    missing = tmp_path / "nope"
    with pytest.raises(DataError) as e:
        resolve_data_dir(missing)
    assert str(missing) in str(e.value) and "--data-dir" in str(e.value)
    monkeypatch.setenv("MAS_DATA_DIR", str(missing))
    with pytest.raises(DataError) as e:
        resolve_data_dir()
    assert "MAS_DATA_DIR" in str(e.value) and str(missing) in str(e.value)


def test_no_data_dir_anywhere(tmp_path, monkeypatch):
    monkeypatch.delenv("MAS_DATA_DIR", raising=False)
    monkeypatch.setattr(data_mod, "_REPO_ROOT", tmp_path / "repo")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataError) as e:
        resolve_data_dir()
    msg = str(e.value)
    assert str(tmp_path / "shared" / "datasets") in msg
    assert "github.com/alickzhu/PLAYER" in msg and "--data-dir" in msg and "MAS_DATA_DIR" in msg


def test_resolution_order(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    monkeypatch.setenv("MAS_DATA_DIR", str(b))
    assert resolve_data_dir(a) == a.resolve()
    assert resolve_data_dir() == b.resolve()
    monkeypatch.delenv("MAS_DATA_DIR")
    monkeypatch.setattr(data_mod, "_REPO_ROOT", tmp_path / "repo")
    (tmp_path / "shared" / "datasets").mkdir(parents=True)
    assert resolve_data_dir() == (tmp_path / "shared" / "datasets").resolve()


def _fake_script(tmp_path: Path, csv_text: str) -> Path:
    """A minimal one-character copy of the layout, named like a real script (Sin)."""
    d = tmp_path / "wellplay" / "en" / "Sin (4 people closed)"
    (d / "json").mkdir(parents=True)
    (d / "final_result").mkdir()
    (d / "json" / "script_info.json").write_text(
        '{"agent_num": 1, "script_name": "Sin", "character_name": ["X"]}', encoding="utf-8")
    (d / "json" / "X.json").write_text(
        '{"script": ["Your name is X."], "acts_goal": ["1. Find out."], "victims": ["V"],'
        ' "kill_by_me": [0], "is_murderer": 0}', encoding="utf-8")
    (d / "final_result" / "X.csv").write_text(csv_text, encoding="utf-8")
    (d / "final_result" / "FSA.csv").write_text("value,type,question,a,b,c,d,e,truth\n", encoding="utf-8")
    return d


HEADER = "value,type,question,a,b,c,d,e,truth\n"


def test_fake_script_loads(tmp_path):
    _fake_script(tmp_path, HEADER + "a,a,Who killed V?,X,Y,,,,b\n")
    s = load_script(tmp_path, "sin")
    assert s.questions["X"][0].key == frozenset("b") and s.pooled == []


@pytest.mark.parametrize(
    "body, line, needle",
    [
        ("a,a,Who killed V?,X,Y,,,,\n", 2, "no truth letter"),
        ("a,a,Who killed V?,X,Y,,,,c\n", 2, "points at an empty option"),
        ("a,a,Who killed V?,X,,Z,,,a\n", 2, "option 'b' is empty"),
        ("a,a,Who killed V?,X,Y,,,,a,extra\n", 2, "got 10"),
        ("d,a,Who killed V?,X,Y,,,,a\n", 2, "value must be"),
        ("b,a,Q?,X,Y,,,,a\n\nb,a,Q?,X,Y,,,,z\n", 4, "not made of option letters"),
    ],
)
def test_corrupt_csv_names_file_and_line(tmp_path, body, line, needle):
    _fake_script(tmp_path, HEADER + body)
    with pytest.raises(DataError) as e:
        load_script(tmp_path, "Sin")
    msg = str(e.value)
    assert f"final_result/X.csv:{line}:" in msg and needle in msg


def test_missing_header(tmp_path):
    _fake_script(tmp_path, "a,a,Who killed V?,X,Y,,,,a\n")
    with pytest.raises(DataError, match=r"X\.csv:1: missing or wrong header"):
        load_script(tmp_path, "Sin")


def test_missing_and_invalid_files(tmp_path):
    d = _fake_script(tmp_path, HEADER)
    (d / "final_result" / "FSA.csv").unlink()
    with pytest.raises(DataError, match=r"missing file: .*FSA\.csv"):
        load_script(tmp_path, "Sin")
    (d / "json" / "X.json").write_text('{"script": ["a"],\n "victims": [}', encoding="utf-8")
    with pytest.raises(DataError, match=r"X\.json:2: invalid JSON"):
        load_script(tmp_path, "Sin")
    with pytest.raises(DataError, match=r"wellplay/zh"):
        list_scripts(tmp_path, "zh")
