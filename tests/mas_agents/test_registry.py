"""The one registry of games and experiments (mas_agents/game/registry.py): a broken entry point of
another package is reported once and skipped; the built-ins still load; nothing raises at lookup."""

from __future__ import annotations

import logging
from types import SimpleNamespace

from mas_agents.game import registry as reg
from mas_agents.game.registry import Registry


def test_a_broken_entry_point_is_logged_once_and_skipped(monkeypatch, caplog):
    broken = SimpleNamespace(name="chess", value="no_such_module_for_mas_agents_tests.game")
    calls = []

    def fake_entry_points(group):
        calls.append(group)
        assert group == "test.group"          # the fake answers only the group it was made for
        return [broken]

    monkeypatch.setattr(reg, "entry_points", fake_entry_points)
    r: Registry[str] = Registry("game", {"json": "json"}, "test.group", "'wis'")
    r.add("json", "the json game")
    with caplog.at_level(logging.WARNING, logger="mas_agents.game.registry"):
        assert r.kinds() == ["json"]
        assert r.lookup("chess") is None and r.lookup("other") is None
    warnings = [rec.getMessage() for rec in caplog.records]
    assert len(warnings) == 1 and "chess = no_such_module_for_mas_agents_tests.game" in warnings[0]
    assert "No module named" in warnings[0]
    assert calls == ["test.group"]            # loaded once, not retried at every lookup


def test_a_malformed_kind_is_refused_in_one_sentence():
    r: Registry[int] = Registry("experiment", {}, "test.group", "'ablation'")
    for bad in ("", "Upper", "has space", "dot.ted"):
        try:
            r.add(bad, 1)
        except ValueError as exc:
            assert str(exc).startswith(f"experiment kind {bad!r}: expected a lowercase name such as 'ablation'")
        else:
            raise AssertionError(f"{bad!r} was accepted")
    assert r.add("my-bench_2", 3) == 3
