"""Shared fixtures and the rules for tests that need the real datasets.

Real data. Tests that assert facts of the real WellPlay / Who-is-Spy / MAgIC data (12 scripts,
1,482 questions, "Sin", the real setting counts...) carry the marker ``realdata`` (a test that
takes the ``real_data_root`` fixture gets it automatically). The real datasets root is found as
the code finds it (``$MAS_DATA_DIR``, else ``../shared/datasets``; see
:func:`tests.data_roots.find_real_data`). When it is not found those tests are *deselected* (not
skipped) and the terminal summary says how many and why; with ``MAS_REQUIRE_DATA=1`` each of them
fails instead. No dataset is committed: every test that reads one is a ``realdata`` test (``mixed_root``
too: the real data without the MAgIC paper results).

Fakes. A fake model asked something its rule does not know raises
:class:`tests.fakes.UnrecognisedPrompt`; if the code under test swallowed that exception, the test
fails here anyway (see :func:`pytest_runtest_call`).
"""

from __future__ import annotations

import os
from pathlib import Path

# Tests never read or write the user's embedding cache (mas_agents.memory.vector_cache.default_cache_dir): a
# vector cached by an earlier run would hide the model call a test means to make. Set before any
# project module is imported; subprocesses (the CLI tests) inherit it; tests of the disk cache
# give their own folder.
os.environ["MAS_EMBED_CACHE"] = "off"

import pytest  # noqa: E402

from tests import data_roots, fakes, toy

REALDATA = "realdata"
_FOUND = pytest.StashKey[tuple]()          # (root | None, why)
_NOT_RUN = pytest.StashKey[int]()          # realdata tests deselected for lack of data


# -- the real data -------------------------------------------------------------------------------
def pytest_configure(config: pytest.Config) -> None:
    config.stash[_FOUND] = data_roots.find_real_data()
    config.stash[_NOT_RUN] = 0


def pytest_report_header(config: pytest.Config) -> str:
    root, why = config.stash[_FOUND]
    return f"real datasets: {root}" if root else f"real datasets: not found ({why})"


class _MissingRealData(pytest.Item):
    """Stands in for a ``realdata`` test under ``MAS_REQUIRE_DATA=1`` when the data is missing: it
    fails in its call phase (a FAILED test, not a setup error of every fixture it would use)."""

    def __init__(self, *, why: str, **kw):
        super().__init__(**kw)
        self.why = why
        self.add_marker(REALDATA)

    def runtest(self) -> None:
        pytest.fail(f"{data_roots.REQUIRE_ENV}=1 but the datasets are not found: {self.why}", pytrace=False)

    def reportinfo(self):
        return self.path, None, self.name


@pytest.hookimpl(trylast=True)     # after -m / -k have deselected what the command line excludes
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "real_data_root" in getattr(item, "fixturenames", ()) and not item.get_closest_marker(REALDATA):
            item.add_marker(REALDATA)
    root, why = config.stash[_FOUND]
    if root is not None:
        return
    real = [i for i in items if i.get_closest_marker(REALDATA)]
    if not real:
        return
    if data_roots.require_real_data():
        items[:] = [_MissingRealData.from_parent(i.parent, name=i.name, why=why) if i.get_closest_marker(REALDATA)
                    else i for i in items]
        return
    items[:] = [i for i in items if not i.get_closest_marker(REALDATA)]
    config.hook.pytest_deselected(items=real)
    config.stash[_NOT_RUN] = len(real)


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    n = config.stash.get(_NOT_RUN, 0)
    if n:
        _, why = config.stash[_FOUND]
        terminalreporter.write_line(
            f"{REALDATA}: {n} test{'s' if n != 1 else ''} of the real datasets not run (deselected): {why}. "
            f"Point MAS_DATA_DIR at the datasets root to run them, or set {data_roots.REQUIRE_ENV}=1 to make "
            f"them fail.", yellow=True, bold=True)


@pytest.fixture(scope="session")
def real_data_root(pytestconfig: pytest.Config) -> Path:
    """The real datasets root (the test is a ``realdata`` test)."""
    root, why = pytestconfig.stash[_FOUND]
    if root is None:   # only reachable by a test the collection hook did not see as realdata
        pytest.fail(f"{data_roots.REQUIRE_ENV}=1 but the datasets are not found: {why}"
                    if data_roots.require_real_data() else f"the real datasets are not found: {why}", pytrace=False)
    return root


@pytest.fixture
def mixed_root(real_data_root, tmp_path_factory) -> Path:
    """The real datasets without ``magic/results`` (:func:`tests.data_roots.mixed_root`); a test
    using it is a ``realdata`` test (the datasets are read, never committed)."""
    return data_roots.mixed_root(tmp_path_factory.mktemp("data") / "datasets", real_data_root)


@pytest.fixture(autouse=True)
def _restore_script_ids():
    """Loading a script that names its own id (``mas_id``) registers it for the process; undo
    that after each test so that no test sees another test's scripts."""
    from mas_agents.graphs.mmg import dataset as wellplay
    before = dict(wellplay.SCRIPT_IDS)
    yield
    if wellplay.SCRIPT_IDS != before:
        wellplay.SCRIPT_IDS.clear()
        wellplay.SCRIPT_IDS.update(before)


# -- the toy murder mystery ----------------------------------------------------------------------
@pytest.fixture
def make_agent():
    """:func:`tests.toy.make_agent`: one toy-game agent on a rule fake -> ``(agent, recorder, chat)``."""
    return toy.make_agent


@pytest.fixture
def toy_runtime():
    """:func:`tests.toy.toy_runtime`: the 4-player toy game -> ``(runtime, recorder, run_dir)``."""
    return toy.toy_runtime


# -- fakes ---------------------------------------------------------------------------------------
@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Fail a test during which a fake met a prompt it did not recognise, even when the code under
    test caught the :class:`~tests.fakes.UnrecognisedPrompt` (a protocol server answering
    ``success=False``, a broadcast that logs a failed ``perceive``)."""
    fakes.UNRECOGNISED.clear()
    result = yield
    if fakes.UNRECOGNISED:
        n, first = len(fakes.UNRECOGNISED), fakes.UNRECOGNISED[0]
        fakes.UNRECOGNISED.clear()
        raise fakes.UnrecognisedPrompt(f"{n} unrecognised prompt(s) were swallowed by the code under test; "
                                       f"the first: {first}")
    return result
