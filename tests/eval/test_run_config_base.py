"""The shared contract of the typed run configurations (mas_agents.game.run_config)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Optional

import pytest

from mas_agents.game.run_config import NOT_RECORDED, RunConfig


@dataclasses.dataclass(frozen=True, kw_only=True)
class DemoConfig(RunConfig):
    KIND = "demo"
    script: str
    scripts: tuple[str, ...] = ()
    data_dir: Optional[Path] = None
    seed: int = 0
    model: Any = dataclasses.field(default=None, metadata=NOT_RECORDED)


def test_record_writes_json_values_and_leaves_out_what_is_not_recorded(tmp_path):
    cfg = DemoConfig(script="Sin", scripts=("a", "b"), data_dir=tmp_path, model=object())
    rec = cfg.record()
    assert rec == {"script": "Sin", "scripts": ["a", "b"], "data_dir": str(tmp_path), "seed": 0}
    json.dumps(rec)


def test_from_record_reads_back_the_types_ignores_other_keys_and_takes_extra(tmp_path):
    cfg = DemoConfig(script="Sin", scripts=("a",), data_dir=tmp_path, seed=3)
    m = object()
    back = DemoConfig.from_record({**cfg.record(), "models": ["local"], "versions": {}}, model=m)
    assert back == cfg.replace(model=m) and back.scripts == ("a",) and back.data_dir == tmp_path
    (tmp_path / "config.json").write_text(json.dumps({**cfg.record(), "kind": "x"}))
    assert DemoConfig.load(tmp_path) == cfg


def test_a_missing_required_field_and_a_broken_file_are_named(tmp_path):
    with pytest.raises(ValueError, match="DemoConfig: the record has no field 'script'"):
        DemoConfig.from_record({"seed": 1})
    (tmp_path / "config.json").write_text("{nope")
    with pytest.raises(ValueError, match=r"config.json: not JSON"):
        DemoConfig.load(tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        DemoConfig(script="x").seed = 2
