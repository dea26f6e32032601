"""Issue 48, item 2: the embedded engine keeps several prefixes (llama-cpp-python's RAM cache of
model states, :func:`mas_agents.embedded.set_prefix_cache_mb`). Greedy decodes are the same with and
without it; with it, an agent whose turn comes back after the others' reuses its own prefix.

The integration test loads the embedded model: run it under ``flock /tmp/model.lock``."""

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from mas_agents import llm
from mas_agents import embedded
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
    before = embedded.prefix_cache_mb()
    try:
        assert embedded.set_prefix_cache_mb(64) == before and embedded.prefix_cache_mb() == 64
        assert embedded.set_prefix_cache_mb(0) == 64 and embedded._new_prefix_cache(0) is None
        for bad in (-1, 1.5, True, "8"):
            with pytest.raises(ValueError, match="--prefix-cache-mb"):
                embedded.set_prefix_cache_mb(bad)
        assert embedded.prefix_cache_mb() == 0
    finally:
        embedded.set_prefix_cache_mb(before)
    assert embedded.DEFAULT_PREFIX_CACHE_MB > 0


@pytest.mark.integration
def test_greedy_decodes_are_identical_with_and_without_the_prefix_cache():
    model = make_chat_model("local", n_ctx=2048, max_tokens=24, temperature=0.0)
    before = embedded.prefix_cache_mb()
    runs = {}
    try:
        for mb in (0, 64, 0):
            embedded.set_prefix_cache_mb(mb)
            replies = []
            for name, msgs in _turns():
                r = model.invoke(msgs)
                replies.append((name, r.content, r.usage_metadata["input_tokens"],
                                r.usage_metadata["input_token_details"]["cache_read"]))
            runs.setdefault(mb, []).append(replies)
    finally:
        embedded.set_prefix_cache_mb(before)
    off, on, off_again = runs[0][0], runs[64][0], runs[0][1]
    assert [r[1] for r in on] == [r[1] for r in off] == [r[1] for r in off_again]   # the same greedy text
    assert all(r[1].strip() for r in on)
    # round 2: with the cache each agent resumes from its own round-1 state (its system message and
    # script, hundreds of tokens); without it, from the previous agent's, which shares only the rules
    for (name, _, n_in, reused_on), (_, _, _, reused_off) in zip(on[3:], off[3:]):
        assert reused_on > 0.8 * n_in - 60, (name, n_in, reused_on)
        assert reused_off < 0.5 * n_in, (name, n_in, reused_off)


def test_the_state_a_completion_started_from_is_the_first_out():
    """Seats A, B, C take turns in a cache with room for three states. A's next prompt starts
    from A's state; the state saved after it holds that prefix and more, so A's old state is the
    one evicted to make room, and B's and C's stay for their turns (plain LRU evicted B's)."""
    import numpy as np
    from llama_cpp.llama import LlamaState

    def state(tokens):
        return LlamaState(input_ids=np.array(tokens, dtype=np.intc), scores=np.zeros((4, 8), dtype=np.single),
                          n_tokens=len(tokens), llama_state=b"", llama_state_size=1 << 20, seed=0)

    from mas_agents.embedded import _state_bytes
    one = _state_bytes(state([1]))
    cache = embedded._new_prefix_cache(1)
    cache.capacity_bytes = int(3.5 * one)         # three states fit, not four (1 MiB each, and their ids)
    rules = [7] * 50
    a1, b1, c1 = rules + [1] * 20, rules + [2] * 20, rules + [3] * 20
    for key in (a1, b1, c1):
        cache[key] = state(key)
    assert all(len(st.scores) == 1 for st in cache.cache_state.values())     # only the last logits row is kept
    a2_prompt = a1 + [9] * 5
    assert list(cache[a2_prompt].input_ids) == a1                             # A resumes from its own state
    cache[a2_prompt] = state(a2_prompt)
    assert set(cache.cache_state) == {tuple(b1), tuple(c1), tuple(a2_prompt)}
    with pytest.raises(KeyError):
        cache[[5, 5, 5]]
