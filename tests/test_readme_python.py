"""The README's Python blocks run as written (issue 49 item 1).

Every ```python block under the headings of :data:`SECTIONS` is executed as it stands, in a
temporary working directory (its ``runs/...`` go there), with every model spec it names (e.g.
``model="local"``) answered by the tests' rule-driven fake (``mas_agents.model_specs.set_spec_override``,
the hook ``mas rerun`` uses): the block is the user's code, only what "local" builds is swapped,
so CI needs no model. The composition example must also stay short (issue 49: at most 5 lines)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fakes import RuleChat, any_game_player

ROOT = Path(__file__).resolve().parents[1]
#: README headings whose python blocks are executed
SECTIONS = ("Composing an agent in Python",)


def python_blocks(markdown: str, heading: str) -> list[str]:
    """The ```python blocks of the section titled ``heading`` (to the next heading of its level or above)."""
    m = re.search(rf"^(#+) {re.escape(heading)}\s*$", markdown, re.M)
    if m is None:
        return []
    level = len(m.group(1))
    rest = markdown[m.end():]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    section = rest[:end.start()] if end else rest
    return re.findall(r"^```python\n(.*?)^```", section, re.M | re.S)


@pytest.fixture
def fake_models():
    from mas_agents import llm
    from mas_agents import model_specs
    built = []

    def factory(spec, **kw):
        built.append(spec)
        return RuleChat(rule=any_game_player())

    prev = model_specs.set_spec_override(factory)
    try:
        yield built
    finally:
        model_specs.set_spec_override(prev)


@pytest.mark.parametrize("heading", SECTIONS)
def test_the_readme_python_blocks_run_as_written(heading, tmp_path, monkeypatch, fake_models, capsys):
    blocks = python_blocks((ROOT / "README.md").read_text(encoding="utf-8"), heading)
    assert blocks, f"README.md has no python block under '{heading}'"
    assert len(blocks[0].strip().splitlines()) <= 5 and "import mas_agents as mas" in blocks[0]
    monkeypatch.chdir(tmp_path)
    for code in blocks:
        exec(compile(code, f"README.md ({heading})", "exec"), {"__name__": "__readme__"})
    assert fake_models   # the block asked for a model, and the fake answered it
    out = capsys.readouterr().out
    assert "winner" in out
    assert (tmp_path / "runs" / "my-first-game" / "result.json").is_file()
