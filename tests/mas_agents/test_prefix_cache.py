"""Issue 48, item 2: the embedded engine keeps several prefixes (llama-cpp-python's RAM cache of
model states, :func:`mas_agents.llm.set_prefix_cache_mb`). Greedy decodes are the same with and
without it; with it, an agent whose turn comes back after the others' reuses its own prefix.

The integration test loads the embedded model: run it under ``flock /tmp/model.lock``."""

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from mas_agents import llm
from mas_agents.llm import make_chat_model

RULES = ("You are playing a murder mystery game with other players. Each player plays one character "
         "and has a private script. The players question each other and vote on the murderer. ") * 3
SCRIPTS = {
    "Ann": "You are Ann, the baker. You saw Bob near the well at nine. Bob owed Vic money. " * 12,
    "Bob": "You are Bob, the smith. You were at the forge until ten, then went home alone. " * 12,
    "Cid": "You are Cid, the priest. You heard a cry from the well a little after nine. " * 12,
}


def _turns():
    """Three agents taking turns twice: each prompt is its system message, its long script, then
    the dialogue so far and a question."""
    heard = []
    out = []
    for rnd in (1, 2):
        for name, script in SCRIPTS.items():
            user = f"Your script:\n{script}\n\nWhat you have heard so far:\n" + "\n".join(heard) + \
                   f"\n\nRound {rnd}: who do you suspect, and why? Answer in one sentence."
            out.append((name, [SystemMessage(f"{RULES}You are {name}."), HumanMessage(user)]))
            heard.append(f"{name} spoke in round {rnd}.")
    return out


def test_budget_is_validated_and_set_process_wide():
    before = llm.prefix_cache_mb()
    try:
        assert llm.set_prefix_cache_mb(64) == before and llm.prefix_cache_mb() == 64
        assert llm.set_prefix_cache_mb(0) == 64 and llm._new_prefix_cache(0) is None
        for bad in (-1, 1.5, True, "8"):
            with pytest.raises(ValueError, match="--prefix-cache-mb"):
                llm.set_prefix_cache_mb(bad)
        assert llm.prefix_cache_mb() == 0
    finally:
        llm.set_prefix_cache_mb(before)
    assert llm.DEFAULT_PREFIX_CACHE_MB > 0


@pytest.mark.integration
def test_greedy_decodes_are_identical_with_and_without_the_prefix_cache():
    model = make_chat_model("local", n_ctx=2048, max_tokens=24, temperature=0.0)
    before = llm.prefix_cache_mb()
    runs = {}
    try:
        for mb in (0, 64, 0):
            llm.set_prefix_cache_mb(mb)
            replies = []
            for name, msgs in _turns():
                r = model.invoke(msgs)
                replies.append((name, r.content, r.usage_metadata["input_tokens"],
                                r.usage_metadata["input_token_details"]["cache_read"]))
            runs.setdefault(mb, []).append(replies)
    finally:
        llm.set_prefix_cache_mb(before)
    off, on, off_again = runs[0][0], runs[64][0], runs[0][1]
    assert [r[1] for r in on] == [r[1] for r in off] == [r[1] for r in off_again]   # the same greedy text
    assert all(r[1].strip() for r in on)
    # round 2: with the cache each agent resumes from its own round-1 state (its system message and
    # script, hundreds of tokens); without it, from the previous agent's, which shares only the rules
    for (name, _, n_in, reused_on), (_, _, _, reused_off) in zip(on[3:], off[3:]):
        assert reused_on > 0.8 * n_in - 60, (name, n_in, reused_on)
        assert reused_off < 0.5 * n_in, (name, n_in, reused_off)
