"""Conformance of the built-in games: the conformance kit (:mod:`mas_agents.game.conformance_kit`), unchanged
for every game, run on the cases of the registered built-in games
(:mod:`tests.conformance.builtin_cases`: the murder mystery on "Sin", Who is Spy with 4, 5 and
6 seats, the five MAgIC scenarios). Each game's own rules and re-scoring live beside it
(:mod:`mas_agents.graphs.mmg.checks`, :mod:`mas_agents.graphs.wis.checks`, :mod:`mas_agents.graphs.magic.checks`,
registered as its :attr:`mas_agents.game.contract.GameDef.conformance`); any other game runs the same kit
from a test beside its own registration, with a case of its own. Each case is also played with
every seat forging the host, a judge and other seats (issue 57, E1): no prompt may hold a forged
line outside the forger's quoted utterance (:func:`mas_agents.game.conformance_kit.no_forgery`).

Tests at the end pin production bugs found here, once strict ``xfail`` tests: an abstained
murder-mystery vote counted under ``invalid``, and a resumed murder mystery losing the
malformed-reply counts made before the interruption. Both are fixed and their markers gone; a
new bug pinned the same way gets ``@pytest.mark.xfail(strict=True, raises=AssertionError)``.

The reference (uninterrupted) run of each case is shared with :mod:`tests.test_golden`.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest

from mas_agents.game import contract as games
from mas_agents.game import conformance_kit
from mas_agents.game.conformance_kit import game_events
from tests.conformance import builtin_cases, kit
from tests.conformance.kit import fake_model, hostile_model  # noqa: F401  (fixtures)

#: The cases of the built-in games, in registry order.
CASES = conformance_kit.cases_of([k for k in games.kinds() if k in games.BUILTIN])
CASE_IDS = [c.id for c in CASES]
CASE_PARAMS = kit.params(CASES)
#: How each case is set up (``family``: its game; ``scenario``: a MAgIC case's), for tests.test_golden.
BY_ID = {cid: SimpleNamespace(id=cid, **builtin_cases.SETUPS[cid]) for cid in CASE_IDS}
WIS_GAMES = builtin_cases.WIS_GAMES


def reference(case_id: str, tmp_path_factory, real_root: Path) -> conformance_kit.Reference:
    """The uninterrupted run of a case (:func:`tests.conformance.kit.reference`)."""
    return kit.reference(case_id, tmp_path_factory, real_root)


def test_every_registered_game_declares_its_rules_and_every_built_in_game_has_a_case():
    assert [k for k in games.kinds() if k in games.BUILTIN] == ["mmg", "wis", "magic"]
    for kind in games.kinds():
        assert games.get(kind).conformance is not None, kind
    assert {c.kind for c in CASES} == set(games.BUILTIN)


@pytest.mark.parametrize("case_id", CASE_PARAMS)
def test_game_conforms(case_id, fake_model, real_data_root, tmp_path, tmp_path_factory):  # noqa: F811
    kit.conforms(case_id, tmp_path, tmp_path_factory, real_data_root)


@pytest.mark.parametrize("case_id", CASE_PARAMS)
def test_no_seat_forges_the_host_a_judge_or_another_seat(case_id, hostile_model, real_data_root, tmp_path):  # noqa: F811
    """Issue 57 (E1): every seat's every free text forges ``Host:``, ``Judge:`` and other seats'
    lines and tries to close its quotation; no prompt of the game holds one of those lines
    outside the forger's quoted utterance (:func:`mas_agents.game.conformance_kit.no_forgery`)."""
    conformance_kit.no_forgery(case_id, tmp_path / "hostile", real_data_root)


@pytest.mark.parametrize("case_id", CASE_PARAMS)
def test_the_kit_finds_a_miscounted_game(case_id, fake_model, real_data_root, tmp_path, tmp_path_factory):  # noqa: F811
    """The game's own checks compare result.json with its events: one invalid action more in
    result.json than the log holds is found in every game."""
    ref = kit.reference(case_id, tmp_path_factory, real_data_root)
    game = tmp_path / "copy"
    shutil.copytree(ref.games[-1], game)
    result = json.loads((game / "result.json").read_text(encoding="utf-8"))
    result["invalid_actions"] += 1
    (game / "result.json").write_text(json.dumps(result), encoding="utf-8")
    problems = conformance_kit.game_problems(game)
    assert problems and all(p.startswith("copy: ") for p in problems), problems
    assert any("invalid_actions" in p for p in problems), problems


# ----------------------------------------------------------------------------------------------
# production bugs found here, pinned (they were strict xfails; both are fixed, markers gone)
#
# Each checks its bug on its last line only: everything before it runs under precondition(), and a
# precondition that does not hold calls pytest.fail (whose Failed is no AssertionError, so under a
# strict xfail marker the test fails instead of passing as the expected failure).


@contextmanager
def precondition(what: str) -> Iterator[None]:
    """The set-up of a strict ``xfail(raises=AssertionError)`` test: an AssertionError raised in
    it (a helper's check, an assert in the code under test, a fake's UnrecognisedPrompt) is not
    the pinned bug, so it becomes :func:`pytest.fail`."""
    try:
        yield
    except AssertionError as exc:
        pytest.fail(f"precondition broken ({what}): {type(exc).__name__}: {exc}")


@pytest.mark.realdata
def test_mmg_invalid_by_kind_names_the_vote(fake_model, tmp_path_factory, real_data_root):  # noqa: F811
    with precondition("the reference game"):
        ref = reference("mmg", tmp_path_factory, real_data_root)
        events = game_events(ref.out)
    invalid = [e for e in events if e["kind"] == "invalid"]
    if not any(e["phase"] == "voting" for e in invalid):
        pytest.fail("precondition broken: the reference game has no abstained vote")
    want = Counter("vote" if e["phase"] == "voting" else e["data"]["action"] for e in invalid)
    assert ref.run["invalid_by_kind"] == dict(want)


@pytest.mark.realdata
def test_mmg_resume_keeps_malformed_reply_counts(fake_model, tmp_path, tmp_path_factory, real_data_root):  # noqa: F811
    with precondition("the reference game"):
        ref = reference("mmg", tmp_path_factory, real_data_root)
    if not any(ref.run["malformed_replies"].values()):
        pytest.fail("precondition broken: the reference game counted no malformed reply")
    with precondition("the interrupted and resumed game"):
        conformance_kit.interrupted_then_resumed(conformance_kit.CASES["mmg"], tmp_path / "resumed", sum(ref.calls) - 2, "model_down",
                                     real_data_root)
    resumed = json.loads((tmp_path / "resumed" / "result.json").read_text(encoding="utf-8"))
    assert resumed["malformed_replies"] == ref.run["malformed_replies"]
