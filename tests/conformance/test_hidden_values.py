"""The kit's hidden-information check on a real Who-is-Spy game (review finding: it looked only for
whole event lines of 16+ characters, so another seat's word leaked alone went unseen)."""

from __future__ import annotations

import json
import shutil

import pytest

from mas_agents.prompt_log import read_prompts
from mas_agents.game.conformance_kit import game_events
from mas_agents.game.prompt_leaks import hidden_leaks
from tests.conformance import builtin_cases, kit  # noqa: F401  (builtin_cases adds the built-in cases)
from tests.conformance.kit import fake_model  # noqa: F401  (fixture)


@pytest.mark.realdata
def test_another_seat_s_word_appended_to_a_prompt_of_a_wis_game_is_caught(fake_model, real_data_root,  # noqa: F811
                                                                          tmp_path, tmp_path_factory):
    ref = kit.reference("wis-4", tmp_path_factory, real_data_root)
    game = tmp_path / "copy"
    shutil.copytree(ref.games[-1], game)
    assert hidden_leaks(game) == []                                  # the game as played leaks nothing
    deals = {e["data"]["player"]: e["data"]["word"] for e in game_events(game) if e.get("kind") == "word"}
    spy, word = next((p, w) for p, w in deals.items() if list(deals.values()).count(w) == 1)
    other = next(p for p in deals if p != spy)                       # a civilian, who must not see the spy's word
    calls = [json.loads(x) for x in (game / "llm_calls.jsonl").read_text().splitlines() if x.strip()]
    victim = next(c["call_id"] for c in calls if c.get("actor") == other)
    rows = read_prompts(game)                                       # the prompt log, gzipped or not
    rows[victim]["messages"][-1]["content"] += f"\n(psst: {word})"
    (game / "llm_prompts.jsonl.gz").unlink(missing_ok=True)
    (game / "llm_prompts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows.values()))
    leaks = hidden_leaks(game)
    assert len(leaks) == 1 and leaks[0].startswith(f"{other}'s prompt (call {victim}) holds {word!r} of event"), leaks
