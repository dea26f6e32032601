"""The documentation's Python ablation example (docs/guides/ablations.md, moved there from the
README) runs as printed (with a fake model in place of the
embedded one, a temporary run directory, the synthetic WellPlay script and word pairs beside the real MAgIC settings)."""

import re
from pathlib import Path

import mas_agents.eval.ablate.grid
from mas_agents import specs
from tests.fakes import RuleChat, any_game_player

README = Path(__file__).resolve().parents[2] / "docs" / "guides" / "ablations.md"


def test_readme_custom_block_example_runs(tmp_path, monkeypatch, mixed_root):
    root = mixed_root
    blocks = [b for b in re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
              if "register_block" in b]
    assert len(blocks) == 1, "docs/guides/ablations.md: expected one Python example with register_block"
    monkeypatch.setattr(specs, "BLOCKS", dict(specs.BLOCKS))   # the example's block leaves no trace
    seen = {}
    real = mas_agents.eval.ablate.grid.run_ablate

    def run_ablate(cfg, **kw):
        seen["cfg"] = cfg
        seen["result"] = real(cfg.replace(out=tmp_path, data_root=root, model=RuleChat(rule=any_game_player())), **kw)
        return seen["result"]

    monkeypatch.setattr(mas_agents.eval.ablate.grid, "run_ablate", run_ablate)
    exec(compile(blocks[0], "docs/guides/ablations.md", "exec"), {})
    assert seen["cfg"].blocks == ("cautious", "pgm")
    res = seen["result"]
    assert res["variants"] == ["plain", "plain+cautious", "plain+pgm", "plain+cautious+pgm"]
    spy = {r["variant"]: r for r in res["benches"]["spy"]["rows"]}
    assert spy["plain+cautious"]["n"] == 4 and "diff_vs_base" in spy["plain+cautious"]
    assert (tmp_path / "report.md").read_text().count("plain+cautious+pgm") >= 2
