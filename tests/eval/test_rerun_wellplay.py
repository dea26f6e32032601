"""``mas rerun`` of a WellPlay evaluation (issue 50 item 2: "works for ... the WellPlay
evaluation"): a ``pp`` evaluation of one script re-executes on its recording to the same
events, answers and result.json; an edited question file of that script is reported before any
replay, naming the file and both hashes. The script is a copy of the real "Sin" in the test's
temporary directory (never committed: WellPlay has no licence)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mas_agents.cli import app
from mas_agents.eval.rerun.execute import rerun
from tests.fakes import RuleChat, unrecognised


def answer_first_option(messages) -> str:
    """Answers a multiple-choice question of the evaluation with its first option shown."""
    prompt = messages[-1].content
    m = re.search(r"^a\) ", prompt, re.MULTILINE)
    if "Question:" not in prompt or m is None:
        raise unrecognised("answer_first_option", messages)
    return "Answer: a"


def _answers(d: Path) -> list[dict]:
    """``answers.jsonl`` but the call ids (new ones each execution)."""
    return [{k: v for k, v in json.loads(x).items() if k != "call_ids"}
            for x in (d / "answers.jsonl").read_text().splitlines()]


@pytest.fixture
def sin_root(tmp_path, real_data_root) -> Path:
    from mas_agents.graphs.mmg.dataset import find_script
    src = find_script(real_data_root, "Sin")
    root = tmp_path / "data"
    shutil.copytree(src, root / "wellplay" / "en" / src.name)
    return root


def test_a_pp_evaluation_reruns_identical_and_a_changed_question_file_is_named(sin_root, tmp_path):
    from mas_agents.eval.wellplay.run import WellPlayEvalConfig, run_wellplay_eval
    out = tmp_path / "ev"
    run_wellplay_eval(WellPlayEvalConfig(data_root=sin_root, method="pp", out=out, script="Sin",
                                         model=RuleChat(rule=answer_first_option)))
    n = len((out / "llm_calls.jsonl").read_text().splitlines())
    assert n == 44            # Sin's 44 questions, one call each
    o = rerun(out, tmp_path / "again", data_root=sin_root)
    assert o.status == "identical" and o.calls == n, o.text()
    assert _answers(tmp_path / "again") == _answers(out)
    csv = next((sin_root / "wellplay" / "en").glob("*/final_result/FSA.csv"))
    old = hashlib.sha256(csv.read_bytes()).hexdigest()
    csv.write_bytes(csv.read_bytes() + b"\n")
    r = CliRunner().invoke(app, ["rerun", str(out), "--data-dir", str(sin_root)])
    assert r.exit_code == 1, r.output
    rel = csv.relative_to(sin_root).as_posix()
    assert f"differs (data), not replayed: data file {rel} under {sin_root}: recorded sha256 {old}, now sha256 " \
           f"{hashlib.sha256(csv.read_bytes()).hexdigest()}" in r.output
