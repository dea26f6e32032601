"""Loader for the WellPlay murder-mystery data set (PLAYER*, Zhu et al. 2024, arXiv:2404.17662).

All rules below cite ``wellplay/README.md`` in the data folder (called "README" here), which
documents the layout, the schemas and every known oddity of the upstream files. The files are
read as they are (never copied or rewritten); the few malformed CSV rows are repaired in memory
by the explicit rules in :func:`_parse_row`, and every repair is recorded in ``Script.repairs``.
Anything else that does not fit the schema raises :class:`~mas_agents.game.data.DataError`.

Layout (README "Layout")::

    <data root>/wellplay/<lang>/<script dir>/json/script_info.json
    <data root>/wellplay/<lang>/<script dir>/json/<character>.json
    <data root>/wellplay/<lang>/<script dir>/final_result/<character>.csv
    <data root>/wellplay/<lang>/<script dir>/final_result/FSA.csv   (en) | GM.csv (zh)

A little over 400 lines as one idea, reading one data set: its records, locating a script and the
README's row-repair rules, which belong beside the reader that applies them.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from mas_agents.game.data import DataError, note_file, sha256_hex

__all__ = [
    "CATEGORIES",
    "LANGS",
    "POOLED_FILE",
    "SCRIPT_IDS",
    "Character",
    "Question",
    "Script",
    "find_script",
    "list_scripts",
    "load_all",
    "load_script",
]

#: Script id -> (English display name, Chinese display name). README "Layout" (script IDs).
#: The display name is ``script_name`` in script_info.json; directory names add a suffix such
#: as " (4 people closed)" / "（4人封闭）".
SCRIPT_IDS: dict[str, tuple[str, str]] = {
    "003": ("Death Wears White", "死穿白"),
    "005": ("Ghost Revenge", "幽灵复仇"),
    "033": ("Danshui Villa", "丹水山庄"),
    "053": ("Unfinished Love", "未完结的爱"),
    "054": ("Oriental Star Cruise Incident", "东方之星号游轮事件"),
    "131": ("Sin", "罪恶"),
    "134": ("Deadly Fountain", "致命喷泉"),
    "141": ("Unbelievable Incident", "校园不思议事件"),
    "152": ("Desperate Sunshine", "绝命阳光号"),
    "1702": ("Solitary Boat Firefly", "孤舟萤"),
    "1849": ("Manna", "曼娜"),
    "191": ("Riverside Inn", "江湖客栈"),
}

LANGS = ("en", "zh")

#: Pooled question file per language (README "Layout"; upstream renamed FSA.csv to GM.csv in zh).
POOLED_FILE = {"en": "FSA.csv", "zh": "GM.csv"}

#: CSV ``value`` column -> category (README "Schemas", Question CSV).
CATEGORIES = {"a": "objective", "b": "reasoning", "c": "relation"}

_HEADER = ["value", "type", "question", "a", "b", "c", "d", "e", "truth"]
_LETTERS = "abcde"
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Question:
    """One multiple-choice evaluation question (one CSV row; README "Schemas", Question CSV).

    Attributes:
        qid: stable id ``"<script id>/<character>/<line>"``; for pooled rows the character
            part is the pooled file stem (``"131/FSA/12"``, ``"131/GM/12"``).
        script_id: key of :data:`SCRIPT_IDS`.
        character: owner of the question file, ``""`` for the pooled file.
        category: ``"objective"`` | ``"reasoning"`` | ``"relation"`` (CSV ``value`` a/b/c).
        multi: True for ``type=b`` ("select the two people you most suspect"); the key still
            holds the single real culprit (README).
        text: the question.
        options: the non-empty options a, b, ... in upstream order (2 to 5 of them).
        key: correct letters, a subset of ``"abcde"[:len(options)]``; two letters only for the
            Ghost Revenge ``ac`` row, where either letter is accepted (README).
        file: CSV path relative to the folder that holds ``wellplay/``.
        line: 1-based physical line of the row in the CSV.
    """

    qid: str
    script_id: str
    character: str
    category: str
    multi: bool
    text: str
    options: tuple[str, ...]
    key: frozenset[str]
    file: str
    line: int


@dataclass
class Character:
    """One playable character (``json/<name>.json``; README "Schemas").

    ``script`` is the single string of the JSON ``script`` list, ``goals`` the ``acts_goal``
    strings joined by newlines; ``kill_by_me[i]`` is 1 if this character killed ``victims[i]``.
    """

    name: str
    script: str
    goals: str
    victims: list[str]
    kill_by_me: list[int]
    is_murderer: bool


@dataclass
class Script:
    """One WellPlay script with its characters and questions.

    Attributes:
        id: key of :data:`SCRIPT_IDS`; name: display name (``script_name``); lang: "en" | "zh".
        dir: the script directory.
        characters: in script_info ``character_name`` order (the same order in en and zh).
        victims: victim names, taken from the first character (labels differ per character
            in Solitary Boat Firefly, README "Schemas").
        questions: character name -> that character's questions in file order.
        pooled: the pooled FSA.csv / GM.csv questions (README "Pooled files").
        repairs: one line per in-memory repair, ``"<file>:<line>: [<kind>] <what>"``.
        warnings: same format, for anomalies kept as they are because the README does not
            document them (kinds ``blank-question``, ``duplicate-option``).
        data_files: every file :func:`load_script` read, ``{path relative to the datasets root:
            SHA-256 hex}`` (:mod:`mas_agents.game.data`; recorded in a run's ``config.json``
            and checked by ``mas rerun``).
    """

    id: str
    name: str
    lang: str
    dir: Path
    characters: list[Character]
    victims: list[str]
    questions: dict[str, list[Question]]
    pooled: list[Question]
    repairs: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    data_files: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def character(self, name: str) -> Character:
        """The character called ``name``; KeyError listing the names if there is none."""
        for c in self.characters:
            if c.name == name:
                return c
        raise KeyError(f"{name!r} is not a character of {self.name}: {[c.name for c in self.characters]}")

    def murderers_of(self, victim: str) -> list[str]:
        """Names of the characters whose ``kill_by_me`` marks ``victim`` (character order).

        ``victim`` is matched against :attr:`victims` or, by position, against a character's own
        victim label. Raises KeyError for an unknown victim. The labels are upstream's; they
        disagree with the answer keys in a few scripts (README "Oddities").
        """
        for c in [None, *self.characters]:
            names = self.victims if c is None else c.victims
            if victim in names:
                i = names.index(victim)
                return [ch.name for ch in self.characters if ch.kill_by_me[i]]
        raise KeyError(f"{victim!r} is not a victim of {self.name}: {self.victims}")

    def all_questions(self) -> list[Question]:
        """All per-character questions, in character order (1,482 over the 12 scripts)."""
        return [q for c in self.characters for q in self.questions[c.name]]


# ---------------------------------------------------------------------------- lookup


def _lang_dir(data_root: str | Path, lang: str) -> Path:
    """``<data_root>/wellplay/<lang>`` (``data_root`` may also be the wellplay folder itself)."""
    if lang not in LANGS:
        raise ValueError(f"--lang {lang!r}: WellPlay scripts are in {' or '.join(LANGS)}")
    root = Path(data_root)
    path = root / "wellplay" / lang
    if not path.is_dir() and root.name == "wellplay" and (root / lang).is_dir():
        path = root / lang
    if not path.is_dir():
        raise DataError(f"WellPlay folder not found: {path} (expected <data root>/wellplay/{lang}/)")
    return path


def _read_json(path: Path, files: dict[str, str] | None = None, base: Path | None = None) -> dict:
    """Parse a JSON object; DataError naming the file (and line) if missing or invalid. With
    ``files``, the bytes read are noted there relative to ``base`` (:func:`mas_agents.game.data.note_file`)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"missing file: {path}") from None
    if files is not None and base is not None:
        note_file(files, path, base, raw)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 ({e})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"{path}:{e.lineno}: invalid JSON: {e.msg} (column {e.colno})") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def _script_id(name: str, lang: str, path: Path, info: dict | None = None) -> str:
    """The id of a script: from :data:`SCRIPT_IDS` for the 12 WellPlay scripts; a script of your
    own names it in ``script_info.json`` as
    ``"mas_id"`` with ``"mas_names": [en name, zh name]``, and is then registered in
    :data:`SCRIPT_IDS` for this process."""
    col = LANGS.index(lang)
    for sid, names in SCRIPT_IDS.items():
        if names[col] == name:
            return sid
    info = info or {}
    sid, names = info.get("mas_id"), info.get("mas_names")
    if isinstance(sid, str) and sid and isinstance(names, list) and len(names) == len(LANGS) and names[col] == name:
        if sid in SCRIPT_IDS and SCRIPT_IDS[sid] != tuple(names):
            raise DataError(f"{path}: mas_id {sid!r} is already the id of {SCRIPT_IDS[sid][0]!r}")
        SCRIPT_IDS[sid] = (str(names[0]), str(names[1]))
        return sid
    raise DataError(f"{path}: script_name {name!r} is not one of the 12 WellPlay scripts (SCRIPT_IDS) and "
                    "script_info.json gives no mas_id / mas_names for it")


def list_scripts(data_root: str | Path, lang: str = "en") -> list[tuple[str, str, Path]]:
    """``(id, display name, script dir)`` for every script of ``lang``, in :data:`SCRIPT_IDS` order.

    Raises DataError if the language folder is missing or a script_info.json is missing,
    invalid or names a script outside :data:`SCRIPT_IDS`; ValueError for an unknown ``lang``.
    """
    found = []
    for d in sorted(p for p in _lang_dir(data_root, lang).iterdir() if p.is_dir()):
        info_path = d / "json" / "script_info.json"
        info = _read_json(info_path)
        name = str(info.get("script_name", ""))
        found.append((_script_id(name, lang, info_path, info), name, d))
    order = list(SCRIPT_IDS)
    return sorted(found, key=lambda t: order.index(t[0]))


def find_script(data_root: str | Path, name_or_id: str, lang: str = "en") -> Path:
    """Directory of the script matching ``name_or_id`` (case-insensitive, surrounding space ignored).

    Accepted: the id ("131"), the English or Chinese display name ("sin", "罪恶") in either
    language, or the directory name ("Sin (4 people closed)"). Raises DataError listing the
    available names when nothing matches.
    """
    want = str(name_or_id).strip().casefold()
    scripts = list_scripts(data_root, lang)
    for sid, name, d in scripts:
        if want in {sid, name.casefold(), d.name.casefold(), *(n.casefold() for n in SCRIPT_IDS[sid])}:
            return d
    avail = ", ".join(f"{name} ({sid})" for sid, name, _ in scripts)   # each script once: its name and id
    raise DataError(f"unknown WellPlay script {name_or_id!r} ({lang}); give a name or an id: {avail}")


# ---------------------------------------------------------------------------- CSV parsing


def _parse_row(
    fields: list[str], where: str, repairs: list[str], warnings: list[str]
) -> tuple[str, str, str, tuple[str, ...], frozenset[str]]:
    """Validate (and, for the README's known oddities, repair) one CSV data row.

    ``where`` is ``"<file>:<line>"``. Returns ``(category, type, text, options, key)``; fields
    are stripped of surrounding white space. Each repair appends ``"<where>: [<kind>] ..."`` to
    ``repairs``, each undocumented-but-harmless anomaly to ``warnings``. Raises DataError if the
    row has no usable structure (field count, value/type, truth letter, option gaps).
    """
    fields = list(fields)
    # Repair "trailing-comma" (README "Oddities", malformed CSV rows): en Ghost Revenge
    # Duan Yuetong.csv and FSA.csv line 23 end with an extra comma -> a 10th, empty field.
    if len(fields) == 10 and not fields[9].strip():
        fields = fields[:9]
        repairs.append(f"{where}: [trailing-comma] dropped the empty 10th field")
    # Repair "short-row" (README "Oddities", malformed CSV rows): six zh files have one 8-field
    # row, the answer letter sits in column e and truth is missing. Pad truth with "", so the
    # "letter-in-e" rule below moves the letter.
    if len(fields) == 8:
        fields.append("")
        repairs.append(f"{where}: [short-row] 8 fields; added the missing (empty) truth field")
    if len(fields) != 9:
        raise DataError(f"{where}: expected 9 fields ({','.join(_HEADER)}), got {len(fields)}")
    value, qtype, text, *opts, truth = (f.strip() for f in fields)
    if value not in CATEGORIES:
        raise DataError(f"{where}: value must be a, b or c, got {value!r}")
    if qtype not in ("a", "b"):
        raise DataError(f"{where}: type must be a or b, got {qtype!r}")
    # Not in the README: 4 en per-character rows (Yannan.csv 20/21/24, Shen Cheng.csv 14) and
    # their FSA.csv copies have a blank question (the zh rows have text). Kept, with a warning.
    if not text:
        warnings.append(f"{where}: [blank-question] the question text is empty upstream")
    # Repair "letter-in-e" (README "Oddities", Manna "Is Cheng Ge the son of Xinya?" and the zh
    # 8-field rows): truth is empty and column e holds a single option letter. Take the letter
    # from e and clear e. Upstream marks these rows always wrong; we score them normally.
    if not truth:
        e = opts[4].lower()
        if len(e) == 1 and e in _LETTERS[:4] and opts[_LETTERS.index(e)]:
            truth, opts[4] = e, ""
            repairs.append(f"{where}: [letter-in-e] truth was empty; took {e!r} from column e")
        else:
            raise DataError(f"{where}: no truth letter (truth is empty and column e is not a letter)")
    truth = truth.lower()
    if any(ch not in _LETTERS for ch in truth):
        raise DataError(f"{where}: truth {truth!r} is not made of option letters a-e")
    # Repair "doubled-letter" (README "Oddities": zh 夏仲鹏.csv line 10 has "bb", read as "b").
    # A genuine two-letter key ("ac", Ghost Revenge Aming.csv line 18) is kept as {a, c}.
    if len(set(truth)) < len(truth):
        repairs.append(f"{where}: [doubled-letter] truth {truth!r} read as {''.join(sorted(set(truth)))!r}")
    n = max((i + 1 for i, o in enumerate(opts) if o), default=0)
    if n < 2:
        raise DataError(f"{where}: fewer than two options")
    if not all(opts[:n]):
        gap = _LETTERS[opts[:n].index("")]
        raise DataError(f"{where}: option {gap!r} is empty but a later option is not")
    # Not in the README: 15 per-character rows per language list one option twice (e.g. "Who
    # killed Gu Minghe?" a=b="Lin Xi", key b). Kept as upstream scores them, with a warning.
    if len(set(opts[:n])) < n:
        warnings.append(f"{where}: [duplicate-option] two options have the same text")
    key = frozenset(truth)
    if any(_LETTERS.index(k) >= n for k in key):
        raise DataError(f"{where}: truth {truth!r} points at an empty option (options a-{_LETTERS[n - 1]})")
    return CATEGORIES[value], qtype, text, tuple(opts[:n]), key


def _read_questions(
    path: Path, rel: str, script_id: str, character: str, repairs: list[str], warnings: list[str],
    files: dict[str, str] | None = None,
) -> list[Question]:
    """All questions of one CSV file (README "Schemas", Question CSV).

    Read as ``utf-8-sig`` with the stdlib csv module (``pandas.read_csv`` fails on the 10-field
    row). A BOM and blank lines are tolerated and recorded in ``repairs`` ("bom", "blank-line").
    Raises DataError for a missing file, non-UTF-8 bytes, a missing/wrong header or a bad row.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"missing file: {path}") from None
    if files is not None:
        files[rel] = sha256_hex(raw)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 ({e})") from None
    if raw.startswith(_BOM):  # README "Schemas": 1 en and 25 zh files start with a BOM.
        repairs.append(f"{rel}:1: [bom] skipped the UTF-8 byte-order mark")
    reader = csv.reader(io.StringIO(text, newline=""))
    header_seen, out, prev = False, [], 0
    for fields in reader:
        line, prev = prev + 1, reader.line_num  # first physical line of this record
        if not any(f.strip() for f in fields):  # README "Oddities": four zh files have blank lines.
            repairs.append(f"{rel}:{line}: [blank-line] skipped a blank line")
            continue
        if not header_seen:
            if [f.strip() for f in fields] != _HEADER:
                raise DataError(f"{path}:{line}: missing or wrong header; expected {','.join(_HEADER)}, got {','.join(fields)}")
            header_seen = True
            continue
        category, qtype, qtext, options, key = _parse_row(fields, f"{rel}:{line}", repairs, warnings)
        out.append(Question(
            qid=f"{script_id}/{character or path.stem}/{line}", script_id=script_id,
            character=character, category=category, multi=qtype == "b", text=qtext,
            options=options, key=key, file=rel, line=line,
        ))
    if not header_seen:
        raise DataError(f"{path}:1: empty file (no header)")
    return out


# ---------------------------------------------------------------------------- scripts


def _read_character(path: Path, name: str, files: dict[str, str] | None = None, base: Path | None = None) -> Character:
    """One ``json/<name>.json`` (README "Schemas"). Raises DataError on schema violations."""
    d = _read_json(path, files, base)
    missing = [k for k in ("script", "acts_goal", "victims", "kill_by_me", "is_murderer") if k not in d]
    if missing:
        raise DataError(f"{path}: missing keys {missing}")
    script, goals, victims, kills = d["script"], d["acts_goal"], d["victims"], d["kill_by_me"]
    if not (isinstance(script, list) and len(script) == 1 and isinstance(script[0], str)):
        raise DataError(f"{path}: 'script' must be a list with exactly one string")
    if not (isinstance(goals, list) and all(isinstance(g, str) for g in goals)):
        raise DataError(f"{path}: 'acts_goal' must be a list of strings")
    if not (isinstance(victims, list) and isinstance(kills, list) and len(victims) == len(kills)
            and all(k in (0, 1) for k in kills)):
        raise DataError(f"{path}: 'kill_by_me' must be 0/1 flags, one per entry of 'victims'")
    if bool(d["is_murderer"]) != any(kills):  # README: is_murderer is 1 iff any kill_by_me is 1.
        raise DataError(f"{path}: is_murderer={d['is_murderer']} disagrees with kill_by_me={kills}")
    return Character(name=name, script=script[0], goals="\n".join(goals), victims=[str(v) for v in victims],
                     kill_by_me=[int(k) for k in kills], is_murderer=bool(d["is_murderer"]))


def load_script(data_root: str | Path, name_or_id: str, lang: str = "en") -> Script:
    """Load one script (see :func:`find_script` for ``name_or_id``).

    Reads script_info.json, every character's JSON and CSV, and the pooled CSV
    (:data:`POOLED_FILE`), and notes each with its SHA-256 in ``Script.data_files``. Raises
    DataError naming the file (and line) for a missing file, invalid JSON, a schema violation or
    a CSV row that no documented repair fixes.
    """
    d = find_script(data_root, name_or_id, lang)
    base = d.parent.parent.parent  # the folder that holds wellplay/
    info_path = d / "json" / "script_info.json"
    files: dict[str, str] = {}
    info = _read_json(info_path, files, base)
    names = info.get("character_name")
    if not (isinstance(names, list) and names and all(isinstance(n, str) for n in names)):
        raise DataError(f"{info_path}: 'character_name' must be a non-empty list of strings")
    if info.get("agent_num") != len(names):
        raise DataError(f"{info_path}: agent_num={info.get('agent_num')} but {len(names)} character names")
    sid = _script_id(info.get("script_name", ""), lang, info_path, info)
    characters = [_read_character(d / "json" / f"{n}.json", n, files, base) for n in names]
    if len({len(c.victims) for c in characters}) != 1:
        raise DataError(f"{d / 'json'}: characters list different numbers of victims")
    repairs: list[str] = []
    warnings: list[str] = []

    def read(fname: str, owner: str) -> list[Question]:
        path = d / "final_result" / fname
        return _read_questions(path, path.relative_to(base).as_posix(), sid, owner, repairs, warnings, files)

    questions = {n: read(f"{n}.csv", n) for n in names}
    pooled = read(POOLED_FILE[lang], "")
    return Script(id=sid, name=info["script_name"], lang=lang, dir=d, characters=characters,
                  victims=list(characters[0].victims), questions=questions, pooled=pooled, repairs=repairs,
                  warnings=warnings, data_files=dict(sorted(files.items())))


def load_all(data_root: str | Path, lang: str = "en") -> list[Script]:
    """All 12 scripts of ``lang`` in :data:`SCRIPT_IDS` order (errors as in :func:`load_script`)."""
    return [load_script(data_root, sid, lang) for sid, _, _ in list_scripts(data_root, lang)]
