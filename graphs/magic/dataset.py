"""Typed loaders for the MAgIC game settings.

Source: MAgIC (arXiv 2311.08562) §3 and Appendix A; the files are the benchmark's released
settings, described in ``<data_root>/magic/README.md`` (section "Schemas"). They are read from
``<data_root>/magic/settings/<dir>/<id>.json``, ``<dir>`` from
:data:`mas_agents.graphs.magic.events.SETTINGS_DIR`; ``data_root`` is the datasets root of
:func:`mas_agents.game.data.resolve_data_dir` (the folder that holds ``magic/``). Nothing is copied into the
repository.

====================  ==============  =====  ===============================================
scenario              folder          ids    dataclass
====================  ==============  =====  ===============================================
chameleon             chameleon       0..19  :class:`ChameleonSetting`
undercover            undercover      0..19  :class:`UndercoverSetting`
cost_sharing          airportfee      0..20  :class:`CostSharingSetting`
prisoners_dilemma     prisoner        0..20  :class:`PDSetting`
public_good           public_good     0..20  :class:`PGSetting`
====================  ==============  =====  ===============================================

Every setting carries ``data_files``: ``{"magic/settings/<dir>/<id>.json": SHA-256 hex of the
bytes read}`` (:mod:`mas_agents.game.data`; a run records it in ``config.json`` and ``mas
rerun`` checks it).

Errors name the file and the field: a missing file raises :class:`FileNotFoundError`, bad JSON
or a bad field :class:`ValueError` (``"<path>: field 'game_setting.code': ..."``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass, field
from numbers import Real
from pathlib import Path
from typing import Any, Iterable

from mas_agents.game.data import note_file
from mas_agents.graphs.magic.events import SCENARIOS, SETTINGS_DIR
from mas_agents.graphs.magic.rules import PD_TABLE_KEYS, PLAYERS

#: Number of settings per scenario (MAgIC §3: 20 per deduction game, 21 = 7 × 3 seats otherwise).
SETTING_COUNTS = {"chameleon": 20, "undercover": 20, "cost_sharing": 21, "prisoners_dilemma": 21,
                  "public_good": 21}
#: Folder names accepted as scenario aliases (``"airportfee"`` -> ``"cost_sharing"``, ...).
_ALIASES = {d: s for s, d in SETTINGS_DIR.items()}


@dataclass(frozen=True)
class ChameleonSetting:
    """One chameleon game: the topic, the secret word ``code``, the chameleon's seat and one
    recorded opening clue per player (replayed by the fixed opponents, see the data README)."""

    id: int
    topic: str
    code: str
    chameleon: str
    clues: dict[str, str] = field(default_factory=dict)
    data_files: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def roles(self) -> dict[str, str]:
        """name -> ``"chameleon"`` or ``"non_chameleon"``, in seat order."""
        return {p: ("chameleon" if p == self.chameleon else "non_chameleon") for p in PLAYERS}


@dataclass(frozen=True)
class UndercoverSetting:
    """One undercover game: the two words, the undercover's seat and two recorded clues per player."""

    id: int
    undercover_word: str
    civilian_word: str
    undercover: str
    clues: dict[str, list[str]] = field(default_factory=dict)
    data_files: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def roles(self) -> dict[str, str]:
        """name -> ``"undercover"`` or ``"civilian"``, in seat order."""
        return {p: ("undercover" if p == self.undercover else "civilian") for p in PLAYERS}

    @property
    def words(self) -> dict[str, str]:
        """name -> the word that player is told, in seat order."""
        return {p: (self.undercover_word if p == self.undercover else self.civilian_word) for p in PLAYERS}


@dataclass(frozen=True)
class CostSharingSetting:
    """One airport-fee game. Player 1/2/3 represent airlines A/B/C.

    ``topic`` is the usage profile text shown to everybody; ``fee`` is the dollar amount read from
    its first line (``"Fixed Airport Fee: $1,000,000"``). ``proposals`` are the recorded opening
    proposals in percent for A, B, C (the test player's own entry is unused upstream);
    ``first_msg`` the same in dollars as text (unused upstream; empty when absent).

    Quirk kept as is: ids 9 and 10 contain ``[65, 17, 17]`` (Player 3's opener, sum 99; its
    ``first_msg`` says $650,000 / $175,000 / $175,000, i.e. 65 / 17.5 / 17.5, so the percent list
    is a truncation). The data README says "ids 9–11", but id 11's Player 3 entry is
    ``[70, 20, 10]``; only ids 9 and 10 contain the sum-99 list.
    :func:`mas_agents.graphs.magic.rules.valid_split` with its default tolerance 0.5 does **not** accept it;
    the loader neither fixes nor rejects it (a game that must show a valid opener can use
    ``parse_split(first_msg[name])`` instead, which gives 65 / 17.5 / 17.5).
    """

    id: int
    test_player: str
    topic: str
    fee: int
    proposals: dict[str, list[int | float]]
    first_msg: dict[str, str] = field(default_factory=dict)
    data_files: dict[str, str] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class PDSetting:
    """One iterated prisoner's dilemma: the test seat and the payoff table
    (``cooperate``, ``defect``, ``one_defect``, ``two_defect``; see :func:`mas_agents.graphs.magic.rules.pd_payoffs`)."""

    id: int
    test_player: str
    payoffs: dict[str, int]
    data_files: dict[str, str] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class PGSetting:
    """One public-good game: the test seat, the number of rounds and the pool multiplier."""

    id: int
    test_player: str
    rounds: int
    multiplier: float
    data_files: dict[str, str] = field(default_factory=dict, compare=False, repr=False)


Setting = ChameleonSetting | UndercoverSetting | CostSharingSetting | PDSetting | PGSetting


# --------------------------------------------------------------------------- ids and ranges

def scenario_name(scenario: str) -> str:
    """The canonical scenario name (:data:`mas_agents.graphs.magic.events.SCENARIOS`); the settings folder
    names (``airportfee``, ``prisoner``) are accepted as aliases.

    Raises:
        ValueError: unknown scenario.
    """
    if scenario in SCENARIOS:
        return scenario
    if scenario in _ALIASES:
        return _ALIASES[scenario]
    raise ValueError(f"unknown MAgIC scenario {scenario!r}; expected one of {', '.join(SCENARIOS)}")


def setting_ids(scenario: str) -> list[int]:
    """All setting ids of ``scenario``: 0..19 for chameleon and undercover, 0..20 otherwise."""
    return list(range(SETTING_COUNTS[scenario_name(scenario)]))


def parse_range(spec: str, scenario: str | None = None) -> list[int]:
    """Parse an id list such as ``"0-1"``, ``"0-19"``, ``"7"`` or ``"3,5,7-9"`` (inclusive ranges).

    Spaces are ignored; ids come back in the order written, duplicates dropped. With
    ``scenario``, every id must be one of :func:`setting_ids` of that scenario.

    Raises:
        ValueError: an empty spec or part, a non-integer, a negative id, a reversed range
            (``"5-3"``), or an id outside the scenario's settings.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"empty id range {spec!r}; expected e.g. '0-19' or '3,5,7-9'")
    out: list[int] = []
    for part in spec.replace(" ", "").split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise ValueError(f"bad id range part {part!r} in {spec!r}; expected N or N-M with N, M >= 0")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise ValueError(f"reversed id range {part!r} in {spec!r}")
        for i in range(lo, hi + 1):
            if i not in out:
                out.append(i)
    if scenario is not None:
        allowed = setting_ids(scenario)
        bad = [i for i in out if i not in allowed]
        if bad:
            raise ValueError(f"ids {bad} are outside the {scenario_name(scenario)} settings "
                             f"0..{allowed[-1]} (from {spec!r})")
    return out


# --------------------------------------------------------------------------- field readers

def _get(data: Any, path: Path, dotted: str) -> Any:
    node = data
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            raise ValueError(f"{path}: missing field {dotted!r}")
        node = node[key]
    return node


def _str(data: Any, path: Path, dotted: str) -> str:
    v = _get(data, path, dotted)
    if not isinstance(v, str) or not v.strip():
        raise ValueError(f"{path}: field {dotted!r}: expected a non-empty string, got {v!r}")
    return v


def _player(data: Any, path: Path, dotted: str) -> str:
    v = _get(data, path, dotted)
    if v not in PLAYERS:
        raise ValueError(f"{path}: field {dotted!r}: expected one of {', '.join(PLAYERS)}, got {v!r}")
    return v


def _number(v: Any) -> bool:
    return isinstance(v, Real) and not isinstance(v, bool) and math.isfinite(float(v))


def _per_player(data: Any, path: Path, dotted: str) -> dict[str, Any]:
    v = _get(data, path, dotted)
    if not isinstance(v, dict) or sorted(v) != sorted(PLAYERS):
        got = sorted(v) if isinstance(v, dict) else v
        raise ValueError(f"{path}: field {dotted!r}: expected keys {', '.join(PLAYERS)}, got {got!r}")
    return {p: v[p] for p in PLAYERS}


def _read_json(path: Path) -> tuple[Any, bytes]:
    """The JSON value of ``path`` and the bytes it was read from."""
    if not path.is_file():
        raise FileNotFoundError(f"MAgIC setting file not found: {path}")
    raw = path.read_bytes()
    try:
        return json.loads(raw.decode("utf-8")), raw
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from e


_FEE = re.compile(r"fixed airport fee:\s*\$\s*([\d,]+)", re.I)


# --------------------------------------------------------------------------- per scenario

def _chameleon(i: int, d: Any, path: Path) -> ChameleonSetting:
    clues = _per_player(d, path, "clue")
    for p, c in clues.items():
        if not isinstance(c, str):
            raise ValueError(f"{path}: field 'clue.{p}': expected a string, got {c!r}")
    return ChameleonSetting(id=i, topic=_str(d, path, "game_setting.topic"),
                            code=_str(d, path, "game_setting.code"),
                            chameleon=_player(d, path, "game_setting.chameleon_name"), clues=clues)


def _undercover(i: int, d: Any, path: Path) -> UndercoverSetting:
    clues = _per_player(d, path, "clues")
    for p, c in clues.items():
        if not (isinstance(c, list) and len(c) == 2 and all(isinstance(x, str) for x in c)):
            raise ValueError(f"{path}: field 'clues.{p}': expected a list of 2 strings, got {c!r}")
    return UndercoverSetting(id=i, undercover_word=_str(d, path, "game_setting.undercover_code"),
                             civilian_word=_str(d, path, "game_setting.non_undercover_code"),
                             undercover=_player(d, path, "game_setting.undercover_name"),
                             clues={p: list(c) for p, c in clues.items()})


def _cost_sharing(i: int, d: Any, path: Path) -> CostSharingSetting:
    topic = _str(d, path, "topic")
    m = _FEE.search(topic)
    if not m:
        raise ValueError(f"{path}: field 'topic': no 'Fixed Airport Fee: $N' line")
    proposals = _per_player(d, path, "proposal")
    for p, s in proposals.items():
        if not (isinstance(s, list) and len(s) == 3 and all(_number(x) and x >= 0 for x in s)):
            raise ValueError(f"{path}: field 'proposal.{p}': expected 3 non-negative numbers, got {s!r}")
    first = d.get("first_msg", {}) if isinstance(d, dict) else {}
    if not isinstance(first, dict) or not all(k in PLAYERS and isinstance(v, str) for k, v in first.items()):
        raise ValueError(f"{path}: field 'first_msg': expected {{player: text}}, got {first!r}")
    return CostSharingSetting(id=i, test_player=_player(d, path, "test_player_name"), topic=topic,
                              fee=int(m.group(1).replace(",", "")),
                              proposals={p: list(s) for p, s in proposals.items()}, first_msg=dict(first))


def _prisoner(i: int, d: Any, path: Path) -> PDSetting:
    table = _get(d, path, "topic_values")
    if not isinstance(table, dict):
        raise ValueError(f"{path}: field 'topic_values': expected an object, got {table!r}")
    payoffs = {}
    for k in PD_TABLE_KEYS:
        v = _get(d, path, f"topic_values.{k}")
        if not (isinstance(v, int) and not isinstance(v, bool)):
            raise ValueError(f"{path}: field 'topic_values.{k}': expected an integer, got {v!r}")
        payoffs[k] = v
    return PDSetting(id=i, test_player=_player(d, path, "test_player_name"), payoffs=payoffs)


def _public_good(i: int, d: Any, path: Path) -> PGSetting:
    rounds = _get(d, path, "game_round")
    if not (isinstance(rounds, int) and not isinstance(rounds, bool) and rounds > 0):
        raise ValueError(f"{path}: field 'game_round': expected a positive integer, got {rounds!r}")
    mult = _get(d, path, "multiplier")
    if not (_number(mult) and mult > 0):
        raise ValueError(f"{path}: field 'multiplier': expected a positive number, got {mult!r}")
    return PGSetting(id=i, test_player=_player(d, path, "test_player_name"), rounds=rounds,
                     multiplier=float(mult))


_LOADERS = {"chameleon": _chameleon, "undercover": _undercover, "cost_sharing": _cost_sharing,
            "prisoners_dilemma": _prisoner, "public_good": _public_good}


def setting_path(data_root: str | Path, scenario: str, id: int) -> Path:
    """``<data_root>/magic/settings/<dir>/<id>.json`` for ``scenario``."""
    return Path(data_root) / "magic" / "settings" / SETTINGS_DIR[scenario_name(scenario)] / f"{id}.json"


def load_setting(data_root: str | Path, scenario: str, id: int) -> Setting:
    """Load one setting of ``scenario`` (canonical name or folder alias).

    Raises:
        FileNotFoundError: the file does not exist (its path is in the message).
        ValueError: unknown scenario, a bad id, bad JSON or a bad field (file and field named).
    """
    name = scenario_name(scenario)
    if isinstance(id, bool) or not isinstance(id, int) or id < 0:
        raise ValueError(f"setting id must be a non-negative integer, got {id!r}")
    path = setting_path(data_root, name, id)
    data, raw = _read_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(data).__name__}")
    files: dict[str, str] = {}
    note_file(files, path, Path(data_root), raw)
    return dataclasses.replace(_LOADERS[name](id, data, path), data_files=files)


def load_settings(data_root: str | Path, scenario: str,
                  ids: str | Iterable[int] | None = None) -> list[Setting]:
    """Load several settings, in the order of ``ids``.

    Args:
        ids: None for all of :func:`setting_ids`, a range string for :func:`parse_range`
            (checked against the scenario), or integers.
    """
    if ids is None:
        ids = setting_ids(scenario)
    elif isinstance(ids, str):
        ids = parse_range(ids, scenario)
    return [load_setting(data_root, scenario, i) for i in ids]
