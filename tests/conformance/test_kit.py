"""The kit's own generic checks on hand-made run directories: the hidden-information check finds a
seat's prompt holding what an event hid from it, and only that; and the helpers a game's checks
are written with (:func:`mas_agents.game.conformance.need`, :func:`mas_agents.game.conformance.problems`)."""

from __future__ import annotations

import json
from pathlib import Path

from mas_agents.game.conformance import Violation, need, problems
from mas_agents.game.prompt_leaks import hidden_leaks

SECRET = "The secret word is Swimming pool"


def _run(tmp_path: Path, events: list[dict], calls: list[tuple[str, str]]) -> Path:
    """A game directory with ``events`` and one call per ``(actor, prompt text)``, in order."""
    game = tmp_path / "game"
    game.mkdir(parents=True)
    for i, e in enumerate(events):
        e.setdefault("step", i)
    (game / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (game / "llm_calls.jsonl").write_text("".join(json.dumps({"call_id": f"c{i}", "actor": a}) + "\n"
                                                  for i, (a, _) in enumerate(calls)))
    (game / "llm_prompts.jsonl").write_text("".join(
        json.dumps({"call_id": f"c{i}", "messages": [{"role": "system", "content": "You play a game."},
                                                     {"role": "user", "content": text}]}) + "\n"
        for i, (_, text) in enumerate(calls)))
    return game


def _secret(to: list[str], calls: list[str] | None = None) -> dict:
    return {"actor": "game", "kind": "word", "content": SECRET, "visible_to": to, "llm_call_ids": calls or []}


def test_a_prompt_holding_what_an_event_hid_from_its_seat_is_a_leak(tmp_path):
    game = _run(tmp_path, [_secret(["A"])], [("A", f"You know: {SECRET}"), ("B", f"Someone said: {SECRET}.")])
    assert hidden_leaks(game) == [f"B's prompt (call c1) holds {SECRET!r} of event 0 (word, visible to ['A', 'game'])"]


def test_what_the_seat_may_see_or_was_in_a_prompt_before_is_no_leak(tmp_path):
    public = {"actor": "A", "kind": "say", "content": SECRET, "visible_to": ["*"], "llm_call_ids": []}
    shown = _run(tmp_path / "shown", [_secret(["A"]), public], [("B", SECRET)])
    assert hidden_leaks(shown) == []                        # said to everyone, B's prompt may hold it
    before = {"actor": "A", "kind": "say", "content": "hello", "visible_to": ["*"], "llm_call_ids": ["c0"]}
    wording = _run(tmp_path / "before", [before, _secret(["A"])], [("B", f"Options: {SECRET}"), ("B", SECRET)])
    assert hidden_leaks(wording) == []                      # the game's own wording, in a prompt before it
    own = _run(tmp_path / "own", [_secret(["A"]), _secret(["B"])], [("A", SECRET), ("B", SECRET)])
    assert hidden_leaks(own) == []                          # each seat was shown the same text


def test_need_names_the_rule_and_problems_turns_a_walk_into_lines():
    def walk(x: int) -> None:
        need(x > 0, "x must be positive")
        need(x < 10)

    assert problems(walk, 5) == []
    [one] = problems(walk, -1)
    assert one.endswith('need(x > 0, "x must be positive"): x must be positive') and "test_kit.py:" in one
    assert problems(walk, 11)[0].endswith("need(x < 10)")
    assert problems(lambda: {}["k"])[0].startswith("the log does not have the shape the rules give at ")
    try:
        need(False, {"a": 1})
    except Violation as exc:
        assert str(exc).endswith(": {'a': 1}")
    else:
        raise AssertionError("need(False) raised nothing")


def _dealt(seat: str, word: str, role: str) -> dict:
    return {"actor": "game", "kind": "deal", "content": f"{seat} gets the word '{word}'.", "visible_to": [seat],
            "data": {"player": seat, "word": word, "role": role}, "llm_call_ids": []}


RULES = "Rules: one player is the spy, with another word; each civilian finds the spy."
DEAL = [_dealt("A", "apple", "civilian"), _dealt("B", "pear", "spy"), _dealt("C", "apple", "civilian")]


def test_a_hidden_word_alone_in_another_seat_s_prompt_is_a_leak(tmp_path):
    calls = [("A", f"{RULES}\nYour word: apple"), ("B", f"{RULES}\nYour word: pear\nHint: Apple."),
             ("C", f"{RULES}\nYour word: apple\nB said pear")]
    assert hidden_leaks(_run(tmp_path / "leak", [dict(e) for e in DEAL], calls)) == [
        "B's prompt (call c1) holds 'apple' of event 0 (deal data, visible to ['A', 'game'])",
        "C's prompt (call c2) holds 'pear' of event 1 (deal data, visible to ['B', 'game'])"]


def test_a_word_the_seat_shares_saw_said_or_that_the_rules_use_is_no_leak(tmp_path):
    said = {"actor": "B", "kind": "say", "content": "mine is a pear", "visible_to": ["*"], "llm_call_ids": []}
    calls = [("A", f"{RULES}\nYour word: apple\nB: mine is a pear"),     # said aloud to everyone
             ("B", f"{RULES}\nYour word: pear\nA pineapple."),           # not the word "apple"
             ("C", f"{RULES}\nYour word: apple")]                          # C was dealt "apple" too
    assert hidden_leaks(_run(tmp_path / "ok", [*(dict(e) for e in DEAL), said], calls)) == []
