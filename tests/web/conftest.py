"""Fixtures of the web app's tests: the run directories (once per session) and a test client."""

from __future__ import annotations

import pytest

from tests.web.runs_fixture import build_runs


@pytest.fixture(scope="session")
def runs(tmp_path_factory, real_data_root):
    """The run directories of :func:`tests.web.runs_fixture.build_runs`."""
    return build_runs(tmp_path_factory.mktemp("web"), real_data_root)


@pytest.fixture
def client(runs):
    """A FastAPI test client of ``create_app(runs, db)`` whose games use the fake WiS model."""
    from fastapi.testclient import TestClient

    from mas_agents.web.app import create_app
    from tests.web.runs_fixture import wis_model
    return TestClient(create_app(runs["root"], runs["db"], model=wis_model()))
