"""Recompute PLAYER*'s scores from the authors' released evaluation logs (not from the paper).

The authors of PLAYER* (Zhu et al. 2024, arXiv:2404.17662) published the per-pass evaluation
records of their 2024 runs in their repository ``alickzhu/PLAYER``; the logs were deleted
upstream in April 2025 and survive in its history, at commit :data:`COMMIT` (2024-06-05)::

    log/log_cn/<method folder>/<id>-<Chinese script folder>/evaluate/evaluation_{0,1,2}.xlsx
    log/log_en/<method folder>/<English script folder>/evaluate/evaluation_{0,1,2}.xlsx

One xlsx is one evaluation pass over a game's questions: one row per question (columns
``tester, value, question, choices, truth, answer, is_right``; ``value`` is the question's points,
10 / 5 / 2; ``is_right`` 0 or 1) and a last row holding the authors' own per-file score
(``is_right`` = their Σ points won / Σ points; :func:`read_pass` checks ours against it).

The repository held two log sets (:data:`LOG_SETS`): the kept one at :data:`COMMIT` and an
earlier one, first committed at :data:`EARLIER_COMMIT` (2024-03-29), whose Chinese folders carry
no ``<id>-`` prefix and whose zh PLAYER* scores differ in 8 of the 12 scripts; ``--commit``
chooses the commit, and each set has its own CSV (``player_star_released_logs.csv``,
``player_star_released_logs_earlier.csv``) whose header names the commit. A tree holding both
(``79a17f4``) is refused (two folders for one script).

This script reads those files from the fetched repository's git directory (``--git-dir``, no
work tree needed) or from a folder holding ``log/`` (``--log-root``), and writes one CSV
(default ``eval/reproduce/papers/player_star_released_logs.csv``, the earlier set's
``..._earlier.csv``) with, per language × method ×
script × category (objective / reasoning / relation: accuracy; overall: the weighted score with
10 / 5 / 2 points, PLAYER* §3.2 and App. B.2), the value of each pass, their mean and their
sample standard deviation (n − 1), in percent. Rows with ``script_id`` ``all`` aggregate the
scripts of a language as PLAYER* App. B.3 says: per pass, a category's accuracy is the mean of
the scripts' accuracies weighted by their question counts, and the overall score the mean of the
scripts' scores weighted by their total points (both equal the pooled Σ won / Σ possible); then
mean ± sample std (n − 1) over the passes. ``mas reproduce player-star`` aggregates its own
cells the same way (``eval/reproduce/player_star_numbers.py``, ``pooled_aggregate``). ``--unweighted`` prints (never writes) the plain mean over scripts
instead, the aggregation behind the figures the WellPlay data README quotes (zh PLAYER* 49.8).

``--prompts`` counts instead, in the game logs (``log/<lang>/<method>/<script>/<name>.xlsx``),
whose script each question-writing prompt quotes (:func:`prompt_table`): the asker's own, or the
4th character's, as ``main.py:336`` reusing ``i`` makes every PLAYER* question (the sensor-loop
confound, ``eval/reproduce/papers/player_star_protocol_differences.md``). It writes nothing.

Folder -> method (:data:`FOLDER_METHOD`): ``log_PLAYER`` PLAYER*, ``log_Werewolf``, ``log_O-CoT``,
``log_think`` / ``log_think_thrice`` ThinkThrice; ``log_SSA`` -> PP and ``log_FSA`` -> OP are an
inference (FSA files have one tester "GM" answering the pooled ``FSA.csv`` questions with every
script, which is OP of PLAYER* §4.1; SSA files have every character answer its own questions,
which is PP); the repository names neither.

Usage::

    .venv/bin/python scripts/player_star_logs.py --git-dir PLAYER.git
    .venv/bin/python scripts/player_star_logs.py --git-dir PLAYER.git --commit b2483e3   # the earlier set
    .venv/bin/python scripts/player_star_logs.py --git-dir PLAYER.git --prompts          # the confound
    .venv/bin/python scripts/player_star_logs.py --log-root /tmp/PLAYER --out /tmp/logs.csv

Needs ``openpyxl`` to read the xlsx files (not a dependency of mas-agents: ``pip install
openpyxl`` where you run this). Bad input: one ``error:`` line, exit code 2.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import statistics
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable, Iterator

REPO = "alickzhu/PLAYER"
#: The commit whose tree holds the logs (2024-06-05, "first"); they were deleted in 2025.
COMMIT = "b6fcef99ee4c34414c3253d5547f34619be5910c"
#: The first commit with logs (2024-03-29): the earlier log set. Its zh ``log_PLAYER``,
#: ``log_O-CoT`` and ``log_FSA`` folders (no ``<id>-`` prefix) stayed byte-identical up to
#: ``79a17f4`` (2024-06-05 07:14:54), beside the kept set added at ``bea869c`` / ``79a17f4``;
#: :data:`COMMIT`, 40 s later, deleted them. Every zh method but PLAYER* holds the kept set's
#: per-script pass values in another pass order (its Werewolf, SSA and ThinkThrice folders gave
#: way to ``<id>-`` prefixed ones at ``bea869c``); its en files are the kept set's, byte for byte
#: (``log_thick`` is the later ``log_think_thrice``).
EARLIER_COMMIT = "b2483e389ef190531eaf8b8039223885e384ad8c"
#: What each known commit's logs are: ``commit -> (date, default output file, what the set is)``.
LOG_SETS = {
    COMMIT: ("2024-06-05", "player_star_released_logs.csv",
             "the kept log set, deleted upstream in 2025"),
    EARLIER_COMMIT: ("2024-03-29", "player_star_released_logs_earlier.csv",
                     "the earlier log set: its zh log_PLAYER, log_O-CoT and log_FSA files stayed, byte-identical, "
                     "until commit 79a17f416060372efaea44cb1fe07bbba473aaec of 2024-06-05 07:14:54 +0100; commit "
                     f"{COMMIT[:7]} deleted them 40 s later, keeping the <id>- prefixed set"),
}
#: Method folder -> our method name (eval/reproduce/player_star.py METHODS). SSA -> pp and
#: FSA -> op are inferred from what the files hold (module docstring), not stated upstream.
FOLDER_METHOD = {"log_PLAYER": "player_star", "log_Werewolf": "werewolf", "log_O-CoT": "ocot",
                 "log_think": "thinkthrice", "log_think_thrice": "thinkthrice", "log_thick": "thinkthrice", "log_SSA": "pp", "log_FSA": "op"}
METHOD_ORDER = ("player_star", "werewolf", "ocot", "thinkthrice", "pp", "op")
LANG_FOLDER = {"log_cn": "zh", "log_en": "en"}
#: Points of a question -> its category (PLAYER* App. B.2: type A 10, B 5, C 2 points; the
#: WellPlay CSV's value a / b / c = objective / reasoning / relation).
POINTS_CATEGORY = {10: "objective", 5: "reasoning", 2: "relation"}
CATEGORIES = ("objective", "reasoning", "relation", "overall")
#: English script title -> WellPlay script id (the ids the Chinese folders carry as a prefix;
#: ../shared/datasets/wellplay/README.md, "Script IDs").
EN_SCRIPT_IDS = {"Death Wears White": "003", "Ghost Revenge": "005", "Danshui Villa": "033",
                 "Unfinished Love": "053", "Oriental Star Cruise Incident": "054", "Sin": "131",
                 "Deadly Fountain": "134", "Unbelievable Incident": "141", "Desperate Sunshine": "152",
                 "Solitary Boat Firefly": "1702", "Manna": "1849", "Riverside Inn": "191"}
#: Chinese script title -> WellPlay script id, for the Chinese folders of the earlier log set
#: (commit :data:`EARLIER_COMMIT`), which carry no ``<id>-`` prefix (the data's zh script names).
ZH_SCRIPT_IDS = {"死穿白": "003", "幽灵复仇": "005", "丹水山庄": "033", "未完结的爱": "053", "东方之星号游轮事件": "054",
                 "罪恶": "131", "致命喷泉": "134", "校园不思议事件": "141", "绝命阳光号": "152", "孤舟萤": "1702",
                 "曼娜": "1849", "江湖客栈": "191"}
HEADER = ("tester", "value", "question", "choices", "truth", "answer", "is_right")
PASSES = 3
PAPERS = Path(__file__).resolve().parents[1] / "eval" / "reproduce" / "papers"
DEFAULT_OUT = PAPERS / LOG_SETS[COMMIT][1]


class LogError(ValueError):
    """A log file or source that is missing or not of the expected form (names the path)."""


@dataclass(frozen=True)
class Pass:
    """One evaluation pass of one (language, method, script): per category the questions and
    the questions answered right (``overall``: points possible and points won)."""

    lang: str
    method: str
    folder: str
    script_id: str
    script: str
    index: int
    total: dict[str, int]
    right: dict[str, int]
    empty_right: dict[str, int]

    def value(self, category: str, empty_wrong: bool = False) -> float | None:
        """Accuracy (or, for ``overall``, the weighted score) as a fraction; None: no question.
        ``empty_wrong``: count the answers whose answer field is empty as wrong (see
        :func:`read_pass`)."""
        if not self.total[category]:
            return None
        return (self.right[category] - (self.empty_right[category] if empty_wrong else 0)) / self.total[category]


def _script_id(lang: str, folder: str) -> str:
    if lang == "zh":
        head, sep, _ = folder.partition("-")
        if sep and head.isdigit():
            return head
        title = folder.split("（")[0].split("(")[0].strip()
        if title not in ZH_SCRIPT_IDS:
            raise LogError(f"{folder}: a Chinese log folder must start with '<id>-' or a known script title")
        return ZH_SCRIPT_IDS[title]
    title = folder.split(" (")[0].strip()
    if title not in EN_SCRIPT_IDS:
        raise LogError(f"{folder}: unknown English script title {title!r}")
    return EN_SCRIPT_IDS[title]


def empty_answer(text: object) -> bool:
    """Whether a logged reply's ``"answer"`` field is present and empty (``{"reason": ...,
    "answer": ""}``): the model abstained. The authors' single-choice check ``answer in truth``
    (main.py:549-551 at :data:`COMMIT`) counts such a reply as right, since ``"" in "b"``."""
    m = _ANSWER.search(str(text or ""))
    return bool(m) and not m.group(1).strip()


_ANSWER = re.compile(r'"answer"\s*:\s*"([^"]*)"')


def read_pass(data: bytes, path: str) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """Count one pass file: ``(total, right, empty_right)`` per category (questions) and for
    ``overall`` (points); ``empty_right``: the right ones whose answer field is empty
    (:func:`empty_answer`). Checks the file's own last row (the authors' score) against the
    recount.

    Raises:
        LogError: openpyxl missing, not an xlsx, another header, a value not 10/5/2, an
            is_right not 0/1, no summary row, or a summary score that differs from the recount.
    """
    try:
        import openpyxl
    except ImportError as exc:
        raise LogError("reading the authors' .xlsx logs needs openpyxl (pip install openpyxl); "
                       "it is not a dependency of mas-agents") from exc
    try:
        wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:   # openpyxl raises several kinds for a file that is not an xlsx
        raise LogError(f"{path}: not a readable xlsx ({exc})") from exc
    rows = list(wb.worksheets[0].iter_rows(values_only=True))
    wb.close()
    if not rows or tuple(rows[0]) != HEADER:
        raise LogError(f"{path}: header {rows[0] if rows else None}, expected {HEADER}")
    *questions, summary = rows[1:]
    if summary[1] is not None:
        raise LogError(f"{path}: no summary row (the last row has value {summary[1]!r})")
    total = dict.fromkeys(CATEGORIES, 0)
    right = dict.fromkeys(CATEGORIES, 0)
    empty_right = dict.fromkeys(CATEGORIES, 0)
    for i, r in enumerate(questions, 2):
        try:
            points, ok = int(r[1]), int(r[6])
        except (TypeError, ValueError):
            raise LogError(f"{path}: row {i}: value {r[1]!r} / is_right {r[6]!r} not numbers") from None
        if points not in POINTS_CATEGORY or ok not in (0, 1):
            raise LogError(f"{path}: row {i}: value {points} not 10/5/2 or is_right {ok} not 0/1")
        cat = POINTS_CATEGORY[points]
        total[cat] += 1
        right[cat] += ok
        total["overall"] += points
        right["overall"] += points * ok
        if ok and empty_answer(r[5]):
            empty_right[cat] += 1
            empty_right["overall"] += points
    stored = float(summary[6])
    if total["overall"] == 0 or abs(stored - right["overall"] / total["overall"]) > 1e-9:
        raise LogError(f"{path}: the file's own score {stored} differs from the recount "
                       f"{right['overall']}/{total['overall']}")
    return total, right, empty_right


def _parse_path(path: str) -> tuple[str, str, str, str, int] | None:
    """``log/<lang>/<method>/<script>/evaluate/evaluation_<k>.xlsx`` -> (lang, method, folder,
    script folder, k); None for any other file."""
    p = PurePosixPath(path)
    parts = p.parts
    if (len(parts) != 6 or parts[0] != "log" or parts[4] != "evaluate"
            or not (p.name.startswith("evaluation_") and p.suffix == ".xlsx")):
        return None
    if parts[1] not in LANG_FOLDER:
        raise LogError(f"{path}: unknown language folder {parts[1]!r}")
    if parts[2] not in FOLDER_METHOD:
        raise LogError(f"{path}: unknown method folder {parts[2]!r}")
    k = p.stem.removeprefix("evaluation_")
    if not k.isdigit():
        raise LogError(f"{path}: pass number {k!r}")
    return LANG_FOLDER[parts[1]], parts[2], FOLDER_METHOD[parts[2]], parts[3], int(k)


def files_from_git(git_dir: Path, commit: str = COMMIT, want: Callable[[str], object] | None = None,
                   missing_ok: bool = False) -> Iterator[tuple[str, bytes | None]]:
    """``(path, bytes)`` of every evaluation file (``want``: another test of the path, e.g.
    :func:`_parse_game_path`) under ``log/`` at ``commit`` of a git directory (bare or not; read
    with ``git ls-tree`` / ``git cat-file``, nothing is checked out). ``missing_ok``: a blob the
    copy lacks (a shallow or partial fetch) gives ``(path, None)`` instead of an error.

    Raises:
        LogError: not a git directory, the commit is not in it, or a blob missing."""
    want = want or _parse_path

    def git(*args: str) -> bytes:
        res = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True)
        if res.returncode:
            last = (res.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
            raise LogError(f"--git-dir {git_dir}: git {' '.join(args[:2])} failed: {last}")
        return res.stdout

    listing = git("ls-tree", "-r", "-z", commit, "--", "log")
    for entry in filter(None, listing.split(b"\0")):
        meta, _, name = entry.partition(b"\t")
        kind, sha = meta.split()[1:3]
        path = name.decode("utf-8")
        if kind == b"blob" and want(path):
            if missing_ok and subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "-e", sha.decode()],
                                             capture_output=True).returncode:
                yield path, None
                continue
            yield path, git("cat-file", "blob", sha.decode())


# ----------------------------------------------------------------------------- question prompts

#: A game log row's stage when ``A`` asks ``B`` about ``V``'s death (``main.py:359`` at :data:`COMMIT`).
_STAGE = re.compile(r"^(.*) ask (.*) for death of (.*)$")
GAME_HEADER = ("index", "stage", "speaker", "listener", "words", "prompt")
_SCRIPT_HEADS = ("Your Script relative to the question is ", "Your Script is ")
_PIECES = re.compile(r"\\n|\n|。|\.")


def _parse_game_path(path: str) -> tuple[str, str, str] | None:
    """``log/<lang>/<method>/<script>/<name>.xlsx`` (a game log, not an evaluation) -> (lang,
    method folder, script folder); None for any other file."""
    parts = PurePosixPath(path).parts
    if len(parts) != 5 or parts[0] != "log" or not parts[4].endswith(".xlsx") or parts[1] not in LANG_FOLDER:
        return None
    return LANG_FOLDER[parts[1]], parts[2], parts[3]


def _script_part(prompt: str, asked: str | None = None) -> str:
    """The script text a prompt quotes, up to its chat history: after ``Your Script is about
    <asked> is `` (PLAYER*'s question prompt, ``sensor_question_get``, prompts.yaml:176-191 at
    :data:`COMMIT`) or after the last ``Your Script ... is `` head (every other prompt)."""
    head = f"Your Script is about {asked} is " if asked is not None else None
    if head and head in prompt:
        text = prompt[prompt.index(head) + len(head):]
    else:
        at = [(prompt.rfind(h), h) for h in _SCRIPT_HEADS if h in prompt]
        if not at:
            return ""
        k, h = max(at)
        text = prompt[k + len(h):]
    return text.split("The chat history")[0]


def prompt_sources(rows: list[tuple]) -> list[tuple[str, str | None, str | None]]:
    """For every question-writing row of one game log (``rows``: the sheet's rows, header first,
    :data:`GAME_HEADER`): ``(asker, 4th character, whose script the prompt quotes)``. The 4th
    character is the 4th to introduce itself (the game's agent order, ``main.py:264-276``). Whose
    script: each passage of 12+ characters of the quoted text (at most 20) is looked up in every
    character's own script text as the log shows it (its introduction and answer prompts); the
    character holding the most of them, None when none matches.

    Raises:
        LogError: another header."""
    if not rows or tuple(rows[0]) != GAME_HEADER:
        raise LogError(f"game log header {rows[0] if rows else None}, expected {GAME_HEADER}")
    intro = [r[2] for r in rows[1:] if r[1] == "self introduction stage"]
    own: dict[str, str] = {}
    for r in rows[1:]:
        m = _STAGE.match(str(r[1] or ""))
        if r[1] == "self introduction stage" or (m and r[2] == m.group(2)):
            own[r[2]] = own.get(r[2], "") + _script_part(str(r[5] or ""))
    out = []
    for r in rows[1:]:
        m = _STAGE.match(str(r[1] or ""))
        if not m or r[2] != m.group(1):
            continue
        pieces = [x for x in _PIECES.split(_script_part(str(r[5] or ""), m.group(2))) if len(x) >= 12][:20]
        votes = Counter(name for x in pieces for name, text in own.items() if x in text)
        out.append((m.group(1), intro[3] if len(intro) > 3 else None, votes.most_common(1)[0][0] if votes else None))
    return out


def prompt_table(files: Iterator[tuple[str, bytes | None]]) -> list[dict]:
    """Per (language, method folder): game logs read and missing, question prompts, and whose
    script they quote: ``fourth`` (the 4th character's, asked by another), ``asker`` (the asker's
    own, the asker not the 4th), ``both`` (the 4th character asking), ``other``, ``none``.

    Raises:
        LogError: openpyxl missing, or a game log that is not an xlsx of :data:`GAME_HEADER`."""
    try:
        import openpyxl
    except ImportError as exc:
        raise LogError("reading the authors' .xlsx logs needs openpyxl (pip install openpyxl); "
                       "it is not a dependency of mas-agents") from exc
    counts: dict[tuple[str, str], Counter] = {}
    for path, data in files:
        lang, folder, _ = _parse_game_path(path) or (None, None, None)
        if lang is None:
            continue
        c = counts.setdefault((lang, folder), Counter())
        if data is None:
            c["missing"] += 1
            continue
        try:
            wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True)
            rows = list(wb.worksheets[0].iter_rows(values_only=True))
            wb.close()
        except Exception as exc:   # openpyxl raises several kinds for a file that is not an xlsx
            raise LogError(f"{path}: not a readable xlsx ({exc})") from exc
        try:
            sources = prompt_sources(rows)
        except LogError as exc:
            raise LogError(f"{path}: {exc}") from None
        c["logs"] += 1
        for asker, fourth, owner in sources:
            c["questions"] += 1
            c["none" if owner is None else "both" if owner == asker == fourth else "fourth" if owner == fourth
              else "asker" if owner == asker else "other"] += 1
    return [{"lang": lang, "folder": folder, **{k: c[k] for k in PROMPT_COLUMNS}}
            for (lang, folder), c in sorted(counts.items())]


PROMPT_COLUMNS = ("logs", "missing", "questions", "fourth", "both", "asker", "other", "none")


def files_from_dir(root: Path, want: Callable[[str], object] | None = None) -> Iterator[tuple[str, bytes]]:
    """``(path, bytes)`` of every ``log/.../evaluation_*.xlsx`` (``want``: another test of the
    path) under ``root`` (a folder holding ``log/``, e.g. a checkout or an extracted archive of
    the commit).

    Raises:
        LogError: ``root/log`` is not a folder."""
    if not (root / "log").is_dir():
        raise LogError(f"--log-root {root}: no log/ folder in it")
    want = want or _parse_path
    for f in sorted((root / "log").rglob("*.xlsx")):
        path = f.relative_to(root).as_posix()
        if want(path):
            yield path, f.read_bytes()


def collect(files: Iterator[tuple[str, bytes]]) -> list[Pass]:
    """Every pass file read (:func:`read_pass`), sorted by language, method, script, pass.

    Raises:
        LogError: a malformed file, no file at all, or a (language, method, script) whose
            passes are not exactly 0, 1, 2 or whose passes hold different question counts."""
    passes = []
    for path, data in files:
        parsed = _parse_path(path)
        if parsed is None:
            continue
        lang, folder, method, script, k = parsed
        total, right, empty_right = read_pass(data, path)
        passes.append(Pass(lang, method, folder, _script_id(lang, script), script, k, total, right, empty_right))
    if not passes:
        raise LogError("no log/<lang>/<method>/<script>/evaluate/evaluation_*.xlsx file found")
    passes.sort(key=lambda p: (p.lang, METHOD_ORDER.index(p.method), p.script_id, p.index))
    for key, group in _groups(passes):
        if len({p.folder + "/" + p.script for p in group}) > 1:
            raise LogError(f"{'/'.join(key)}: two log folders for one script ("
                           f"{', '.join(sorted({p.folder + '/' + p.script for p in group}))}); this tree holds two "
                           "log sets: read a commit that holds one")
        if [p.index for p in group] != list(range(PASSES)):
            raise LogError(f"{'/'.join(key)}: passes {[p.index for p in group]}, expected 0..{PASSES - 1}")
        if len({tuple(p.total.values()) for p in group}) != 1:
            raise LogError(f"{'/'.join(key)}: the passes hold different question counts")
    return passes


def _groups(passes: list[Pass]) -> list[tuple[tuple[str, str, str], list[Pass]]]:
    out: dict[tuple[str, str, str], list[Pass]] = {}
    for p in passes:
        out.setdefault((p.lang, p.method, p.script_id), []).append(p)
    return list(out.items())


def _stats(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values)


def _points(p: Pass, cat: str) -> int:
    """Points at stake in ``cat`` (``overall``: all of the pass's points)."""
    if cat == "overall":
        return p.total["overall"]
    return p.total[cat] * next(w for w, c in POINTS_CATEGORY.items() if c == cat)


def _questions(p: Pass, cat: str, counts: str = "total") -> int:
    """Questions of ``cat`` in the pass (``counts="empty_right"``: those scored right with an
    empty answer); ``overall``: of the three categories."""
    d = getattr(p, counts)
    return sum(d[c] for c in CATEGORIES[:3]) if cat == "overall" else d[cat]


def _row(lang: str, method: str, folder: str, script_id: str, script: str, cat: str, first: list[Pass],
         per_pass: list[float], per_pass_strict: list[float], empty_right: int) -> dict:
    mean, std = _stats(per_pass)
    return {"lang": lang, "method": method, "folder": folder, "script_id": script_id, "script": script,
            "category": cat, "questions": sum(_questions(p, cat) for p in first),
            "points": sum(_points(p, cat) for p in first),
            **{f"pass_{i}": v for i, v in enumerate(per_pass)}, "mean": mean, "std": std,
            "empty_right": empty_right, "mean_empty_wrong": statistics.fmean(per_pass_strict),
            "scripts": len(first)}


def table(passes: list[Pass], weighted: bool = True) -> list[dict]:
    """The CSV rows (:data:`COLUMNS`): per (lang, method, script, category) and per (lang,
    method, ``all``, category). Values are percent (fractions × 100, not rounded here).

    ``weighted``: the ``all`` rows as PLAYER* App. B.3 (weights: question counts per category,
    total points for overall, i.e. pooled); False: the plain mean over scripts per pass.
    ``empty_right``: answers with an empty answer field scored right, summed over the passes;
    ``mean_empty_wrong``: the mean over the passes with those counted wrong.
    """
    rows = []
    by_lm: dict[tuple[str, str], list[list[Pass]]] = {}
    for (lang, method, _), group in _groups(passes):
        by_lm.setdefault((lang, method), []).append(group)
        g0 = group[0]
        for cat in CATEGORIES:
            if not g0.total[cat]:
                continue
            rows.append(_row(lang, method, g0.folder, g0.script_id, g0.script, cat, [g0],
                             [100 * p.value(cat) for p in group], [100 * p.value(cat, True) for p in group],
                             sum(_questions(p, cat, "empty_right") for p in group)))
    for (lang, method), scripts in by_lm.items():
        for cat in CATEGORIES:
            have = [g for g in scripts if g[0].total[cat]]
            if not have:   # no script has a question of this category
                continue
            per_pass, strict = [], []
            for i in range(PASSES):
                ps = [g[i] for g in have]
                if weighted:
                    den = sum(p.total[cat] for p in ps)
                    per_pass.append(100 * sum(p.right[cat] for p in ps) / den)
                    strict.append(100 * sum(p.right[cat] - p.empty_right[cat] for p in ps) / den)
                else:
                    per_pass.append(100 * statistics.fmean(p.value(cat) for p in ps))
                    strict.append(100 * statistics.fmean(p.value(cat, True) for p in ps))
            rows.append(_row(lang, method, have[0][0].folder, "all", "all", cat, [g[0] for g in have],
                             per_pass, strict, sum(_questions(p, cat, "empty_right") for g in have for p in g)))
    return rows


COLUMNS = ("lang", "method", "folder", "script_id", "script", "category", "questions", "points",
           "pass_0", "pass_1", "pass_2", "mean", "std", "empty_right", "mean_empty_wrong", "scripts")

def header_lines(commit: str = COMMIT) -> tuple[str, ...]:
    """The CSV's ``#`` lines for the logs of ``commit`` (a full hash; :data:`LOG_SETS` says what
    the known commits hold; another commit is described by its hash alone)."""
    date, _, what = LOG_SETS.get(commit, ("date not recorded here", "", "a commit this script does not describe"))
    zh_files = {COMMIT: "log/log_cn/<method>/<id>-<script>", EARLIER_COMMIT: "log/log_cn/<method>/<script>"}.get(
        commit, "log/log_cn/<method>/<id>-<script> or <script>")
    lines = [
        f"# source: the PLAYER* authors' released evaluation logs (not the paper), repository {REPO} at commit "
        f"{commit} ({date}; {what}), files {zh_files}/evaluate/evaluation_{{0,1,2}}.xlsx and "
        "log/log_en/<method>/<script>/evaluate/evaluation_{0,1,2}.xlsx; recomputed by scripts/player_star_logs.py",
        f"# url: https://github.com/{REPO}/tree/{commit}/log",
        "# note: percent. Per script: accuracy of each question category (points 10 = objective, 5 = reasoning, "
        "2 = relation) and the overall weighted score (points won / points possible, PLAYER* section 3, App. B.2) of "
        "each of the 3 evaluation passes, their mean and sample std (n - 1); questions and points: per pass. Every "
        "file's own summary row (the authors' score) equals the recount. script_id 'all': the PLAYER* App. B.3 "
        "aggregation, per pass the mean over scripts weighted by question count (category) or total points (overall), "
        "i.e. pooled over the scripts' questions, then mean and sample std (n - 1) over the 3 passes (App. B.3 also "
        "names a weighted standard deviation whose formula the paper's text we hold lost; the std here is over passes).",
        "# note: empty_right = answers whose answer field is empty (the model abstained) yet scored right, summed over "
        f"the 3 passes: the authors' single-choice check 'answer in truth' (main.py:549-551 at {COMMIT[:7]}) counts an "
        "empty answer as right. mean_empty_wrong = the mean over the passes with those counted wrong. The OP files are "
        "scored with 'answer[0] in truth' (main.py:594), where an empty answer is wrong.",
        "# note: folder -> method: log_PLAYER player_star, log_Werewolf werewolf, log_O-CoT ocot, log_think, "
        "log_think_thrice and log_thick thinkthrice; log_SSA -> pp and log_FSA -> op are our inference (FSA: one tester "
        "'GM' answers the pooled FSA.csv questions with every script; SSA: each character answers its own questions), "
        "the repository does not name them. Presumably GPT-3.5-turbo-16k (the paper's model; the logs do not name "
        "it). en has 4 scripts (003, 005, 033, 053), thinkthrice 3 (no 003). op's 003 file holds 210 questions (the "
        "pooled FSA.csv), the other methods' 184.",
    ]
    if commit == COMMIT:
        lines.append(
            "# note: the former player_star_upstream_logs.csv (from the WellPlay data README) held the plain mean over "
            "scripts with the population std (n) over the passes: zh player_star 49.8 +- 0.5, werewolf 43.9, ocot 43.6, "
            "thinkthrice 45.3, op (FSA) 51.7, pp (SSA) 40.0; en player_star 45.4, werewolf 44.2, ocot 43.1, thinkthrice "
            "43.0. 'scripts/player_star_logs.py --unweighted' reproduces those means from the same files. This file keeps "
            "the paper's weighted (B.3) aggregation only, where the small scripts weigh less: zh player_star 46.07 here. "
            f"The earlier log set (commit {EARLIER_COMMIT[:7]}) is player_star_released_logs_earlier.csv.")
    elif commit == EARLIER_COMMIT:
        lines.append(
            "# note: against the kept set (player_star_released_logs.csv, commit "
            f"{COMMIT[:7]}): zh player_star differs in 8 of 12 scripts (054, 131, 134, 141, 152, 1702, 1849, 191), "
            "pooled 42.66 +- 0.34 here against 46.07 +- 1.15; every other zh method holds the same per-script pass "
            "values in another pass order (so the same means, other per-pass pooled values and std); en is the "
            "same files.")
    return tuple(lines)


#: The kept set's header (:func:`header_lines` of :data:`COMMIT`).
HEADER_LINES = header_lines(COMMIT)


def write_csv(rows: list[dict], out: Path, commit: str = COMMIT) -> None:
    """Write the rows under :func:`header_lines` of ``commit`` (values to 2 decimals), atomically."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".csv.tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write("\n".join(header_lines(commit)) + "\n")
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.2f}" if isinstance(v, float) else v) for k, v in r.items()})
    tmp.replace(out)


def summary(rows: list[dict]) -> str:
    """One line per (lang, method): the overall ``all`` row, ``mean ± std``."""
    return "\n".join(f"{r['lang']} {r['method']:<12} {r['mean']:5.1f} ± {r['std']:.1f} ({r['scripts']} scripts; "
                     f"{r['mean_empty_wrong']:.1f} with empty answers wrong)"
                     for r in rows if r["script_id"] == "all" and r["category"] == "overall")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--git-dir", type=Path, help="git directory of the fetched alickzhu/PLAYER repository")
    src.add_argument("--log-root", type=Path, help="a folder holding log/ (a checkout of the commit)")
    ap.add_argument("--commit", default=COMMIT,
                    help=f"the commit to read with --git-dir (default: %(default)s, the kept log set; {EARLIER_COMMIT}: "
                         "the earlier log set); with --log-root, the commit the folder holds (named in the CSV)")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"the CSV to write (default: eval/reproduce/papers/{LOG_SETS[COMMIT][1]} for the kept set, "
                         f"{LOG_SETS[EARLIER_COMMIT][1]} for the earlier one; required for another commit)")
    ap.add_argument("--unweighted", action="store_true",
                    help="print the plain mean over scripts instead of App. B.3's weighting (writes nothing)")
    ap.add_argument("--prompts", action="store_true",
                    help="count whose script each question prompt of the game logs quotes (writes nothing)")
    args = ap.parse_args(argv)
    if args.prompts:
        return _main_prompts(args)
    try:
        if args.git_dir is not None and not args.git_dir.is_dir():
            raise LogError(f"--git-dir {args.git_dir}: not a directory")
        commit = _full_hash(args.git_dir, args.commit) if args.git_dir else args.commit
        out = args.out
        if out is None and not args.unweighted:
            if commit not in LOG_SETS:
                raise LogError(f"--commit {args.commit}: not a log set this script knows; give --out")
            out = PAPERS / LOG_SETS[commit][1]
        files = files_from_git(args.git_dir, commit) if args.git_dir else files_from_dir(args.log_root)
        passes = collect(files)
    except LogError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows = table(passes, weighted=not args.unweighted)
    if not args.unweighted:
        write_csv(rows, out, commit)
        print(f"wrote {out} ({len(rows)} rows from {len(passes)} files)")
    print(summary(rows))
    return 0


def _main_prompts(args: argparse.Namespace) -> int:
    """``--prompts``: one line per (language, method folder) of :func:`prompt_table`."""
    try:
        if args.git_dir is not None and not args.git_dir.is_dir():
            raise LogError(f"--git-dir {args.git_dir}: not a directory")
        if args.git_dir:
            files = files_from_git(args.git_dir, _full_hash(args.git_dir, args.commit), want=_parse_game_path,
                                   missing_ok=True)
        else:
            files = files_from_dir(args.log_root, want=_parse_game_path)
        rows = prompt_table(files)
    except LogError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("whose script each question-writing prompt quotes: fourth = the 4th character's (another asks), "
          "both = the 4th character asking, asker = the asker's own, other, none = no script matched")
    print(" ".join(("lang", "folder", *PROMPT_COLUMNS)))
    for r in rows:
        print(" ".join(str(r[k]) for k in ("lang", "folder", *PROMPT_COLUMNS)))
    return 0


def _full_hash(git_dir: Path, commit: str) -> str:
    """``commit`` (a hash or its prefix) as the full hash of a commit of ``git_dir``.

    Raises:
        LogError: git fails (not a git directory, no such commit)."""
    res = subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"],
                         capture_output=True)
    if res.returncode:
        last = (res.stderr.decode(errors="replace").strip().splitlines() or [f"no commit {commit!r}"])[-1]
        raise LogError(f"--git-dir {git_dir}: git rev-parse {commit} failed: {last}")
    return res.stdout.decode().strip()


if __name__ == "__main__":
    sys.exit(main())
