"""examples/interrogation.py (issue 49 item 2): a game the project does not have, written as a
user's own LangGraph graph, whose seats are mas.agent agents made nodes by mas.node; run here on
a rule-driven fake model (tests/fakes.py)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

from tests.fakes import RuleChat, star_rule

ROOT = Path(__file__).resolve().parents[2]


def _example():
    spec = importlib.util.spec_from_file_location("interrogation_example", ROOT / "examples" / "interrogation.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod   # LangGraph reads the state's annotations through the module
    spec.loader.exec_module(mod)
    return mod


def _rule():
    """PLAYER* sensor forms and the plain prompts as tests.fakes.star_rule (Ben reads as the one
    with motive and opportunity); pgm's reading pass: Ben's statements odd, Ada's fitting."""
    star = star_rule(table={"Ben Hollis": {"motivation": "Yes", "opportunity": "Yes"}}, vote_for="Ben Hollis")

    def rule(messages):
        last = str(messages[-1].content)
        if last.startswith("Private assessment (not said aloud) of what the others said."):
            tags = re.findall(r"^(.+?): <one of: fits, neutral, odd>$", last, re.M)
            assert tags, last
            return "\n".join(f"{t}: {'odd' if t.startswith('Ben') else 'fits'}" for t in tags)
        return star(messages)
    return rule


def test_the_interrogation_runs_on_a_fake_model_and_records_every_call(tmp_path):
    ex = _example()
    chat = RuleChat(rule=_rule())
    res = ex.main(chat, tmp_path, rounds=2)
    assert res["specs"] == {"Inspector Gray": "plain+player_star", "Inspector Moss": "plain+pgm",
                            "Ada Finch": "plain", "Ben Hollis": "plain"}
    assert res["named"] == {"Inspector Gray": "Ben Hollis", "Inspector Moss": "Ben Hollis"}
    assert res["correct"] == {"Inspector Gray": True, "Inspector Moss": True}

    events = [json.loads(l) for l in (tmp_path / "events.jsonl").read_text().splitlines()]
    public = [(e["actor"], e["kind"]) for e in events if e["visible_to"] == ["*"]]
    # the brief, two statements, two rounds of (Gray asks, a suspect answers, Moss asks, a suspect answers)
    assert public[:3] == [("game", "start"), ("Ada Finch", "introduce"), ("Ben Hollis", "introduce")]
    asks = [e for e in events if e["kind"] == "ask"]
    assert [e["actor"] for e in asks] == ["Inspector Gray", "Inspector Moss"] * 2
    answers = [e for e in events if e["kind"] == "answer"]
    assert [e["actor"] for e in answers] == [a["data"]["target"] for a in asks]
    assert all(a["data"]["asker"] == q["actor"] and a["data"]["question"] == q["content"] for a, q in zip(answers, asks))
    assert public[-3:] == [("Inspector Gray", "vote"), ("Inspector Moss", "vote"), ("game", "verdict")]

    # the blocks played: PLAYER*'s target choice and sensor readings for Gray, pgm's belief for Moss
    private = {(e["actor"], e["kind"]) for e in events if e["visible_to"] != ["*"]}
    assert ("Inspector Gray", "target_choice") in private
    assert ("Inspector Moss", "belief_table") in private
    assert all(e["visible_to"] == [e["actor"]] for e in events if e["visible_to"] != ["*"])

    # every model call is in llm_calls.jsonl, and each decision's event names its calls
    calls = [json.loads(l) for l in (tmp_path / "llm_calls.jsonl").read_text().splitlines()]
    assert len(calls) == len(chat.seen) and res["llm"]["calls"] == len(calls)
    ids = {c["call_id"] for c in calls}
    named = [i for e in events for i in e["llm_call_ids"]]
    assert named and set(named) <= ids
    assert {c["actor"] for c in calls} == {"Inspector Gray", "Inspector Moss", "Ada Finch", "Ben Hollis"}
    assert (tmp_path / "llm_prompts.jsonl.gz").is_file()

    # hidden information stays hidden: Ben's script is in no prompt of another seat
    for c, msgs in zip(calls, chat.seen):
        text = "\n".join(str(m.content) for m in msgs)
        if c["actor"] != "Ben Hollis":
            assert "taking cash from the safe" not in text
    assert "# The Museum Night" in (tmp_path / "transcript.md").read_text()
