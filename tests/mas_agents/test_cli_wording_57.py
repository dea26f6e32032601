"""What the CLI prints without a terminal and how it names things (issue 57, E14 and E16).

In-process (typer's CliRunner: stderr is not a terminal, as under nohup or CI), on the
conformance kit's fake model; the real datasets are read, never committed.
"""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from mas_agents.cli import app
from tests.conformance.kit import fake_model  # noqa: F401  (fixture)

runner = CliRunner()


def _ok(r) -> list[str]:
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    return [ln for ln in r.stderr.splitlines() if ln.strip()]


def test_budget_help_states_the_defaults_memory_settings_has():
    from mas_agents.cli import BUDGET_DEFAULTS
    from mas_agents.memory import MemorySettings
    assert BUDGET_DEFAULTS == {k: getattr(MemorySettings(), k) for k in BUDGET_DEFAULTS}
    for cmd in (["mmg", "run"], ["wellplay", "eval"]):
        text = " ".join(runner.invoke(app, cmd + ["--help"], terminal_width=200).output.split())
        assert "MemorySettings" not in text, cmd
        assert "Tokens of script excerpts per prompt (default 4000, the paper's)" in text, cmd
        assert "Tokens of dialogue excerpts per prompt (default 4000, the paper's)" in text, cmd
        assert "(default 6000; 0 = no cap, the paper's separate budgets)" in text, cmd


def test_reproduce_help_is_for_the_user():
    text = " ".join(runner.invoke(app, ["reproduce", "--help"], terminal_width=200).output.split())
    assert "Run a paper's protocol (MAgIC, PLAYER*, Who is Spy?, or all three)" in text
    assert "typer" not in text and "one parameter per option" not in text


@pytest.mark.realdata
def test_mmg_run_without_a_terminal_prints_a_line_per_part_and_names_the_victim(fake_model, real_data_root,
                                                                                 tmp_path):
    lines = _ok(runner.invoke(app, ["mmg", "run", "--script", "Sin", "--rounds", "2", "--data-dir",
                                    str(real_data_root), "--out", str(tmp_path / "g")]))
    steps = [re.sub(r"^\d\d:\d\d:\d\d ", "", ln).split(" (step")[0] for ln in lines if re.match(r"^\d\d:\d\d:\d\d Sin: ", ln)]
    assert steps == ["Sin: introductions done", "Sin: round 1 of 2 done", "Sin: round 2 of 2 done",
                     "Sin: accusations counted"], lines
    verdict = [ln for ln in lines if ln.startswith("victim ")]
    assert len(verdict) == 1 and verdict[0].startswith("victim Zhao Cishan: accused ")
    assert "murderer Chief Wang" in verdict[0]
    assert re.search(r", wall \d+\.\d s$", next(ln for ln in lines if ln.startswith("LLM calls"))), lines


@pytest.mark.realdata
def test_wellplay_eval_without_a_terminal_prints_a_line_per_ten_questions(real_data_root, tmp_path):
    lines = _ok(runner.invoke(app, ["wellplay", "eval", "--method", "always_a", "--script", "Sin",
                                    "--data-dir", str(real_data_root), "--out", str(tmp_path / "e")]))
    counts = [re.search(r"always_a questions: (\d+)/(\d+) done", ln).groups() for ln in lines
              if "always_a questions:" in ln]
    assert counts == [(str(k), "44") for k in (10, 20, 30, 40, 44)], lines    # Sin has 44 questions


@pytest.mark.realdata
def test_magic_run_names_metrics_and_games_in_words(fake_model, real_data_root, tmp_path):
    lines = _ok(runner.invoke(app, ["magic", "run", "--scenario", "chameleon", "--settings", "0", "--challenger",
                                    "plain", "--defender", "plain", "--data-dir", str(real_data_root),
                                    "--out", str(tmp_path / "m")]))
    text = "\n".join(lines)
    assert "(Chameleon as chameleon, setting 0)" in text and "(Chameleon as non-chameleon, setting 0)" in text
    metrics = next(ln for ln in lines if "LLM calls" in ln and " games (" in ln)
    assert "Win rate " in metrics and "Self-awareness " in metrics and "Judgement " in metrics, metrics
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", text.replace(str(tmp_path), "")), text   # no snake_case key


def test_a_long_path_is_never_wrapped_without_a_terminal(fake_model, tmp_path):
    out = tmp_path / ("a-run-directory-with-a-long-name-" * 4) / "game"
    r = runner.invoke(app, ["game", "play", "wis", "--agents", "plain,plain,plain", "--set", "pair=tea/coffee",
                            "--out", str(out)], terminal_width=80)
    lines = _ok(r)
    assert len(str(out)) > 120 and f"wrote {out}" in lines, lines
