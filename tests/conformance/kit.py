"""The conformance kit's pytest face: the packaged kit (:mod:`mas_agents.game.conformance_kit`,
its models in :mod:`mas_agents.game.fake_chat`) needs no pytest; these are its fixtures (the
fake model patched in with ``monkeypatch``), its cases as pytest parameters, and its reference
runs kept in pytest's session temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from mas_agents import stop as mas_agents_stop
from mas_agents.game import conformance_kit
from mas_agents.game.conformance_kit import Case, Reference
from mas_agents.game.fake_chat import TRIP, make_fake_model, make_hostile_model


def _patched(monkeypatch, factory):
    from mas_agents import llm

    monkeypatch.setattr(llm, "make_chat_model", factory)
    TRIP.reset()
    mas_agents_stop.STOP.clear()
    yield TRIP
    TRIP.reset()
    mas_agents_stop.STOP.clear()


@pytest.fixture
def fake_model(monkeypatch):
    """Patch the model factory (ModelPool and the sessions call it at run time) with
    :func:`mas_agents.game.fake_chat.make_fake_model`; leave STOP and the tripwire clear afterwards."""
    yield from _patched(monkeypatch, make_fake_model)


@pytest.fixture
def hostile_model(monkeypatch):
    """Patch the model factory with :func:`mas_agents.game.fake_chat.make_hostile_model` (as
    :func:`fake_model` does)."""
    yield from _patched(monkeypatch, make_hostile_model)


def params(cases: list[Case]) -> list:
    """``cases`` as pytest parameters (their ids; a case that reads real data is ``realdata``)."""
    return [pytest.param(c.id, marks=[pytest.mark.realdata] if c.realdata else [], id=c.id) for c in cases]


def reference(case_id: str, tmp_path_factory, data_root: Path | None) -> Reference:
    """The uninterrupted run of a case, played once per session (needs the ``fake_model``
    fixture; :func:`mas_agents.game.conformance_kit.reference`)."""
    return conformance_kit.reference(case_id, tmp_path_factory.mktemp, data_root)


def conforms(case_id: str, tmp_path: Path, tmp_path_factory, data_root: Path | None) -> None:
    """:func:`mas_agents.game.conformance_kit.conforms` on the session's reference run (needs the
    ``fake_model`` fixture)."""
    conformance_kit.conforms(case_id, tmp_path, data_root, ref=reference(case_id, tmp_path_factory, data_root))
