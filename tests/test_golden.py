"""Golden playthroughs: seeded fake-model runs of every game, compared with stored files.

The runs are the reference (uninterrupted) runs of :mod:`tests.test_conformance` (same setups:
the murder mystery on the real script "Sin" with 1 round, Who is Spy two-game tournaments with 4, 5 and 6
seats, each MAgIC scenario on setting 0), played with the same deterministic fake model
(:class:`mas_agents.game.fake_chat.GameChat`, built on :class:`mas_agents.game.fake_chat.HashChat`). For each
game, its ``events.jsonl`` and ``result.json`` are compared with
``tests/golden/<name>.events.jsonl`` and ``tests/golden/<name>.result.json``, where ``<name>`` is
the case id (``mmg``, ``wis-4``, ``magic-chameleon``...) followed by ``.<game dir>`` when the run
holds several games (``wis-4.g0000``, ``magic-chameleon.chameleon-chameleon-s00``).

Every game runs on the real data (``realdata`` cases), and its events quote it (the script's
excerpts and the questions asked about it; the word pairs; the MAgIC topics, words and opening
messages), so only a SHA-256 of the normalised events and their number is stored
(``<name>.events.sha256``). ``result.json`` holds numbers and player names and is stored as it is,
except a Who-is-Spy game's, which names its word pair: the two words are replaced by
``<civilian word>`` and ``<spy word>`` (:func:`redacted`).

Before comparing, both sides are normalised: ``llm_call_ids`` (random uuids) and every key that
holds a clock reading are dropped (``latency_s``, ``started_at``, ``seconds``...: the keys
:data:`mas_agents.game.conformance_kit.CLOCK_KEYS` matches, which ``scripts/fake_runs.py`` zeroes before hashing;
:func:`mas_agents.game.conformance_kit.normal_events`, :func:`~mas_agents.game.conformance_kit.normal_result`).

A difference means a game now plays differently for the same replies: a rule, a prompt (the fake's
replies are a hash of the prompt), an event payload or the result record changed. If the change
is intended, regenerate the files and review the diff of ``tests/golden/`` like code::

    MAS_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/test_golden.py
    git diff --stat tests/golden/

A missing golden file fails the test (it is never skipped) unless ``MAS_UPDATE_GOLDEN=1`` is set.
The murder mystery's prompts hold memory excerpts ranked by the real sentence-embedding model, so
its golden files also pin that model's ranking on this machine's float arithmetic.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from pathlib import Path

import pytest

from mas_agents.game.conformance_kit import normal_events, normal_result
from tests.test_conformance import (
    BY_ID,
    CASE_IDS,
    CASE_PARAMS,
    WIS_GAMES,
    fake_model,  # noqa: F401  (the fixture, used through usefixtures)
    reference,
)

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("MAS_UPDATE_GOLDEN", "").strip() not in ("", "0")
SUFFIXES = (".events.sha256", ".result.json")
REGENERATE = "MAS_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/test_golden.py"


def expected_names() -> set[str]:
    """Every golden name the cases produce, derived from the setups (no run needed)."""
    from mas_agents.graphs.magic.session import SIDES
    names = set()
    for cid in CASE_IDS:
        case = BY_ID[cid]
        if case.family == "mmg":
            names.add(cid)
        elif case.family == "wis":
            names |= {f"{cid}.g{i:04d}" for i in range(WIS_GAMES)}
        else:
            sides = SIDES[case.scenario]
            games = [f"{case.scenario}-{side}-s00" for side in sides]
            names |= {cid} if len(games) == 1 else {f"{cid}.{g}" for g in games}
    return names


def _dump_events(events: list[dict]) -> str:
    return "".join(json.dumps(e, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n" for e in events)


def _dump_result(result: dict) -> str:
    return json.dumps(result, ensure_ascii=False, sort_keys=True, indent=1) + "\n"


def _diff(stored: str, now: str, name: str) -> str:
    lines = list(difflib.unified_diff(stored.splitlines(), now.splitlines(), f"golden/{name}", "this run",
                                      lineterm="", n=1))
    more = f"\n... {len(lines) - 60} more diff lines" if len(lines) > 60 else ""
    return "\n".join(lines[:60]) + more


def _digest(events_text: str) -> str:
    """``<sha256 of the normalised events> <number of events>``: what is stored for a game, whose
    events carry dataset text, which the repository must not hold."""
    return f"{hashlib.sha256(events_text.encode()).hexdigest()} {events_text.count(chr(10))}\n"


def redacted(result: dict) -> dict:
    """``result`` with a Who-is-Spy game's two words (its ``pair``) replaced wherever they occur,
    whole words, any case, by ``<civilian word>`` / ``<spy word>``; other results unchanged."""
    pair = result.get("pair")
    if not pair:
        return result
    text = json.dumps(result, ensure_ascii=False)
    for role in sorted(pair, key=lambda r: -len(pair[r])):   # the longer word first (one may hold the other)
        word = re.escape(pair[role])
        text = re.sub(rf"(?<!\w){word}(?!\w)", f"<{role} word>", text, flags=re.IGNORECASE)
    return json.loads(text)


@pytest.mark.usefixtures("fake_model")
@pytest.mark.parametrize("case_id", CASE_PARAMS)
def test_golden_playthrough(case_id, real_data_root, tmp_path_factory):
    ref = reference(case_id, tmp_path_factory, real_data_root)
    for game in ref.games:
        name = case_id if len(ref.games) == 1 else f"{case_id}.{game.name}"
        files = {GOLDEN / f"{name}.events.sha256": _digest(_dump_events(normal_events(game))),
                 GOLDEN / f"{name}.result.json": _dump_result(redacted(normal_result(game)))}
        for path, now in files.items():
            if UPDATE:
                GOLDEN.mkdir(exist_ok=True)
                path.write_text(now, encoding="utf-8")
                continue
            if not path.exists():
                pytest.fail(f"golden file {path.relative_to(GOLDEN.parent.parent)} is missing; "
                            f"generate it with: {REGENERATE}")
            stored = path.read_text(encoding="utf-8")
            if path.suffix == ".sha256":      # no text to diff: say how the events moved
                assert stored == now, (f"{name}: the events differ from {path.name} (stored {stored.strip()}, "
                                       f"now {now.strip()}); if intended, regenerate with {REGENERATE}")
                continue
            old = json.loads(stored)     # compared as data; diffed in the one layout
            same, stored = old == json.loads(now), _dump_result(old)
            assert same, (f"{name}: the playthrough differs from {path.name} (if intended, regenerate with "
                          f"{REGENERATE}):\n{_diff(stored, now, path.name)}")


def test_golden_files_match_the_setups():
    """Every case has its golden files and nothing else is there (a removed setup, an old layout)."""
    want = {f"{n}{suffix}" for n in expected_names() for suffix in SUFFIXES}
    have = {p.name for p in GOLDEN.iterdir()} if GOLDEN.exists() else set()
    if UPDATE:
        for name in have - want:
            (GOLDEN / name).unlink()
        return
    assert not sorted(want - have), f"golden files missing: {sorted(want - have)}; generate them with: {REGENERATE}"
    assert not sorted(have - want), f"stale golden files: {sorted(have - want)}; regenerate with: {REGENERATE}"
    total = sum(p.stat().st_size for p in GOLDEN.iterdir())
    assert total < 200_000, f"tests/golden/ holds {total} bytes; keep the setups small"
