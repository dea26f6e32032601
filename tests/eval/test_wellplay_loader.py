"""WellPlay loader tests: the real files (``realdata``; README = wellplay/README.md in the data
folder), the real script "Sin" (id 131, ``tests/data_roots.py``) cross-checked against its CSV
files read here with the csv module, and scripts written into a temp folder at run time (a script
of one's own naming its ``mas_id``, corrupt copies). No WellPlay data is committed."""

from __future__ import annotations

import codecs
import csv
import json
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pytest

import mas_agents.game.data as data_mod
from mas_agents.game.data import DataError, resolve_data_dir
from mas_agents.graphs.mmg.dataset import (
    SCRIPT_IDS,
    find_script,
    list_scripts,
    load_all,
    load_script,
)
from tests.data_roots import (
    SIN,
    SIN_CHARACTERS,
    SIN_ID,
    SIN_MURDERER,
    SIN_QUESTIONS,
    SIN_VICTIM,
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


# ---------------------------------------------------------------------------- Sin's CSV files, read without the loader

#: Sin's directory per language (README "Layout"; the zh pooled file is GM.csv, the en one FSA.csv).
SIN_DIRS = {"en": "Sin (4 people closed)", "zh": "罪恶（4人封闭）"}
SIN_POOLED = {"en": "FSA.csv", "zh": "GM.csv"}
#: CSV ``value`` -> category, and the category weights of PLAYER* §3 (objective 10, reasoning 5,
#: relation 2), written out here rather than taken from the code under test.
CATEGORY = {"a": "objective", "b": "reasoning", "c": "relation"}
WEIGHT = {"a": 10, "b": 5, "c": 2}


class Row(NamedTuple):
    """One question row of a CSV file as the csv module reads it (fields stripped)."""

    character: str   # the file's stem (a character, or FSA / GM for the pooled file)
    line: int        # physical line of the row; the header is line 1
    value: str       # a objective / b reasoning / c relation
    multi: bool      # type == "b" ("select the two people you most suspect")
    options: int     # number of non-empty options a..e
    truth: str       # the truth letter(s), lower case


def csv_rows(path: Path) -> list[Row]:
    """Every row of one question CSV after the header, read with ``utf-8-sig`` (a BOM is
    skipped) and the stdlib csv module; every row must have the 9 fields (Sin's do)."""
    rows = []
    with open(path, encoding="utf-8-sig", newline="") as f:
        reader = csv.reader(f)
        assert [h.strip() for h in next(reader)] == ["value", "type", "question", "a", "b", "c", "d", "e", "truth"]
        prev = reader.line_num
        for fields in reader:
            line, prev = prev + 1, reader.line_num
            assert len(fields) == 9, f"{path}:{line}"
            value, qtype, _, *opts, truth = (x.strip() for x in fields)
            rows.append(Row(path.stem, line, value, qtype == "b", sum(1 for o in opts if o), truth.lower()))
    return rows


def sin_dir(root: Path, lang: str = "en") -> Path:
    return root / "wellplay" / lang / SIN_DIRS[lang]


def sin_rows(root: Path, lang: str = "en", *, pooled: bool = False) -> list[Row]:
    """Sin's per-character question rows in ``character_name`` order (``json/script_info.json``
    read with the json module), or with ``pooled`` its FSA.csv / GM.csv rows: the loader's input
    read independently of the loader, to derive the expected counts and scores from."""
    d = sin_dir(root, lang)
    if pooled:
        return csv_rows(d / "final_result" / SIN_POOLED[lang])
    names = json.loads((d / "json" / "script_info.json").read_text(encoding="utf-8-sig"))["character_name"]
    return [r for n in names for r in csv_rows(d / "final_result" / f"{n}.csv")]


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
    assert "'Hamlet'" in msg and "Sin (131)" in msg and "Riverside Inn (191)" in msg


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


# ---------------------------------------------------------------------------- Sin, against its own CSV files


@realdata
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_sin_counts_and_roles(scripts, root, lang):
    col = 0 if lang == "en" else 1
    [sc] = [s for s in scripts[lang] if s.id == SIN_ID]
    assert sc == load_script(root, SIN_ID, lang) == load_script(root, SIN[col], lang) == load_script(root, SIN[1 - col], lang)
    assert (sc.name, sc.lang) == (SIN[col], lang) and len(sc.characters) == len(SIN_CHARACTERS)
    rows, pooled_rows = sin_rows(root, lang), sin_rows(root, lang, pooled=True)
    questions = sc.all_questions()
    # 44 rows in the four per-character files (13 + 6 + 11 + 14, character order) and 44 in the pooled file
    assert len(rows) == len(questions) == SIN_QUESTIONS == len(pooled_rows) == len(sc.pooled)
    per_file = [sum(r.character == c.name for r in rows) for c in sc.characters]
    assert per_file == [len(sc.questions[c.name]) for c in sc.characters] == [13, 6, 11, 14]
    # the `value` column: 3 a (objective), 20 b (reasoning), 21 c (relation), in both files
    cats = {"objective": 3, "reasoning": 20, "relation": 21}
    assert Counter(CATEGORY[r.value] for r in rows) == cats == Counter(CATEGORY[r.value] for r in pooled_rows)
    assert Counter(q.category for q in questions) == cats == Counter(q.category for q in sc.pooled)
    # the `type` column: 3 type=b rows ("select the two people ..."), all reasoning
    assert sum(r.multi for r in rows) == 3 == sum(q.multi for q in questions)
    assert all(q.category == "reasoning" for q in questions if q.multi)
    # non-empty options a..e: 4 in 39 rows, 3 in 5 rows
    assert Counter(r.options for r in rows) == {4: 39, 3: 5} == Counter(len(q.options) for q in questions)
    # row by row: the same file, line, category, type, option count and key as the CSV
    assert [(q.character, q.line, q.category, q.multi, len(q.options), "".join(sorted(q.key))) for q in questions] \
        == [(r.character, r.line, CATEGORY[r.value], r.multi, r.options, r.truth) for r in rows]
    # json/*.json: only the second character (Chief Wang / 王村长) has is_murderer 1, kill_by_me [1]
    murderer = sc.characters[SIN_CHARACTERS.index(SIN_MURDERER)]
    assert [c.is_murderer for c in sc.characters] == [c == SIN_MURDERER for c in SIN_CHARACTERS] == [False, True, False, False]
    assert murderer.kill_by_me == [1] and sc.murderers_of(sc.victims[0]) == [murderer.name]
    # as in every real script, the murderer's own file holds only relation questions
    assert {q.category for q in sc.questions[murderer.name]} == {"relation"}
    assert {CATEGORY[r.value] for r in rows if r.character == murderer.name} == {"relation"}
    assert sc.warnings == []


@realdata
def test_sin_en_names_ids_and_files(root):
    sc = load_script(root, "sin")
    assert [c.name for c in sc.characters] == SIN_CHARACTERS
    assert sc.victims == [SIN_VICTIM] and sc.murderers_of(SIN_VICTIM) == [SIN_MURDERER]
    # Zhang Villager.csv line 2 (its first row, "Who killed Zhao Cishan?") has truth b
    first = sin_rows(root)[0]
    assert (first.character, first.line, first.truth) == ("Zhang Villager", 2, "b")
    q = sc.questions["Zhang Villager"][0]
    assert (q.qid, q.line, q.key) == ("131/Zhang Villager/2", 2, frozenset("b"))
    assert q.file == "wellplay/en/Sin (4 people closed)/final_result/Zhang Villager.csv"
    # no en Sin file starts with a BOM (README: the one en BOM file is Death Wears White's FSA.csv)
    assert not any(p.read_bytes().startswith(codecs.BOM_UTF8) for p in (sin_dir(root) / "final_result").glob("*.csv"))
    assert sc.repairs == []
    assert find_script(root, "罪恶", "en") == find_script(root, SIN_ID, "en") == sin_dir(root)


@realdata
def test_sin_zh_bom_is_one_repair(root):
    sc = load_script(root, "罪恶", "zh")
    assert sc.name == "罪恶" and sc.victims == ["赵慈善"] and sc.murderers_of("赵慈善") == ["王村长"]
    assert sc.characters[SIN_CHARACTERS.index(SIN_MURDERER)].name == "王村长"  # same order in en and zh
    # of Sin's zh CSV files only the pooled GM.csv starts with the UTF-8 byte-order mark ...
    d = sin_dir(root, "zh") / "final_result"
    assert sorted(p.name for p in d.glob("*.csv") if p.read_bytes().startswith(codecs.BOM_UTF8)) == ["GM.csv"]
    # ... so the loader records exactly one repair, and nothing else
    assert sc.repairs == ["wellplay/zh/罪恶（4人封闭）/final_result/GM.csv:1: [bom] skipped the UTF-8 byte-order mark"]
    assert sc.warnings == []


# ---------------------------------------------------------------------------- a script of one's own (mas_id)

#: A script outside the 12, written into a temp folder by :func:`_own_script`: id and en / zh names.
OWN_ID, OWN = "9001", ("Toy Case", "玩具案")
OWN_DIRS = {"en": "Toy Case (2 people closed)", "zh": "玩具案（2人封闭）"}
#: per language: characters (the second is the murderer) and the victim
OWN_PEOPLE = {"en": (["Ada Voss", "Ben Holt"], "Cora Lind"), "zh": (["艾达", "本"], "柯拉")}


def _own_script(root: Path, lang: str, *, mas_id: str | None = OWN_ID, names=OWN) -> Path:
    """Write a minimal script of one's own under ``root/wellplay/<lang>/``: two characters, the
    second killed the victim; 2 + 1 questions; the pooled file is their concatenation (the zh
    one, GM.csv, starts with a BOM as upstream's do). ``script_info.json`` names its id in
    ``mas_id`` / ``mas_names`` (left out with ``mas_id=None``). Returns the script directory."""
    (ada, ben), victim = OWN_PEOPLE[lang]
    d = root / "wellplay" / lang / OWN_DIRS[lang]
    (d / "json").mkdir(parents=True)
    (d / "final_result").mkdir()
    info = {"agent_num": 2, "script_name": names[0 if lang == "en" else 1], "character_name": [ada, ben]}
    if mas_id is not None:
        info |= {"mas_id": mas_id, "mas_names": list(names)}
    (d / "json" / "script_info.json").write_text(json.dumps(info, ensure_ascii=False), encoding="utf-8")
    for name, killed in ((ada, 0), (ben, 1)):
        (d / "json" / f"{name}.json").write_text(json.dumps(
            {"script": [f"You are {name}."], "acts_goal": ["1. Find out."], "victims": [victim],
             "kill_by_me": [killed], "is_murderer": killed}, ensure_ascii=False), encoding="utf-8")
    rows = {ada: [f"a,a,Who killed {victim}?,{ada},{ben},,,,b",
                  f"b,b,Please select the two people you most suspect of killing {victim},{ada},{ben},suicide,,,b"],
            ben: [f"c,a,What is the relationship between {ben} and {victim}?,cousin,rival,tenant,pupil,,a"]}
    for name, lines in rows.items():
        (d / "final_result" / f"{name}.csv").write_text(HEADER + "\n".join(lines) + "\n", encoding="utf-8")
    pooled = HEADER + "\n".join(rows[ada] + rows[ben]) + "\n"
    (d / "final_result" / ("FSA.csv" if lang == "en" else "GM.csv")).write_bytes(
        (codecs.BOM_UTF8 if lang == "zh" else b"") + pooled.encode("utf-8"))
    return d


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_own_script_registers_its_own_id(tmp_path, lang):
    d = _own_script(tmp_path, lang)
    col = 0 if lang == "en" else 1
    (ada, ben), victim = OWN_PEOPLE[lang]
    # nothing registers it beforehand (and no earlier test's registration is left over): its
    # script_info.json's mas_id / mas_names do, when it is loaded
    assert OWN_ID not in SCRIPT_IDS
    sc = load_script(tmp_path, OWN[col], lang)
    assert (sc.id, sc.name, sc.lang) == (OWN_ID, OWN[col], lang)
    assert SCRIPT_IDS[OWN_ID] == OWN
    assert [sc] == load_all(tmp_path, lang)
    assert sc == load_script(tmp_path, OWN_ID, lang) == load_script(tmp_path, OWN[1 - col], lang)
    assert find_script(tmp_path, OWN[1 - col], lang) == find_script(tmp_path, OWN_ID, lang) == d
    assert [sid for sid, _, _ in list_scripts(tmp_path, lang)] == [OWN_ID]
    # what _own_script wrote: 2 characters, the second the murderer; 2 + 1 questions, pooled alike
    assert [c.name for c in sc.characters] == [ada, ben] and [c.is_murderer for c in sc.characters] == [False, True]
    assert sc.victims == [victim] and sc.murderers_of(victim) == [ben]
    assert [(q.category, q.multi, len(q.options), q.key) for q in sc.all_questions()] == [
        ("objective", False, 2, frozenset("b")), ("reasoning", True, 3, frozenset("b")), ("relation", False, 4, frozenset("a"))]
    assert [(q.category, q.key) for q in sc.pooled] == [(q.category, q.key) for q in sc.all_questions()]
    q = sc.questions[ada][0]
    assert (q.qid, q.line) == (f"{OWN_ID}/{ada}/2", 2)
    assert q.file == f"wellplay/{lang}/{OWN_DIRS[lang]}/final_result/{ada}.csv"
    assert sc.pooled[2].qid == f"{OWN_ID}/{'FSA' if lang == 'en' else 'GM'}/4"
    # only the zh pooled file was written with a BOM: one repair there, none in en
    assert sc.repairs == ([] if lang == "en" else
                          [f"wellplay/zh/{OWN_DIRS['zh']}/final_result/GM.csv:1: [bom] skipped the UTF-8 byte-order mark"])
    assert sc.warnings == []


def test_own_script_without_or_with_a_taken_id_is_an_error(tmp_path):
    _own_script(tmp_path / "none", "en", mas_id=None)
    with pytest.raises(DataError, match="'Toy Case' is not one of the 12 WellPlay scripts .* no mas_id / mas_names"):
        load_script(tmp_path / "none", OWN[0])
    _own_script(tmp_path / "taken", "en", mas_id=SIN_ID)
    with pytest.raises(DataError, match=f"mas_id '{SIN_ID}' is already the id of 'Sin'"):
        list_scripts(tmp_path / "taken", "en")
    assert OWN_ID not in SCRIPT_IDS and SCRIPT_IDS[SIN_ID] == SIN


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
