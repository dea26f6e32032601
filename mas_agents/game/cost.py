"""LLM cost of a run, read from its ``llm_calls.jsonl`` and prompt log: the cost of chosen seats
(``mas ablate`` and ``mas wellplay compare`` count a method's cost over the seats it plays), and
what a prefix cache reused or could have reused (:func:`prompt_cost`, issue 48)."""

from __future__ import annotations

import bisect
from pathlib import Path
from typing import Any, Iterable

from mas_agents.call_log import call_totals, read_calls
from mas_agents.prompt_log import read_prompts
from mas_agents.rundir import RunDir, read_jsonl

__all__ = ["actor_cost", "method_seats", "prompt_cost", "prompt_text", "reusable_prefixes", "cost_line"]


def actor_cost(calls_file: Path, actors: set[str] | None) -> dict:
    """LLM cost of the seats in ``actors`` (None: every caller) in one game: ``{"calls",
    "input_tokens", "output_tokens", "wall_s", "cached_tokens", "cache_in"}`` summed over the lines
    of ``calls_file`` (``llm_calls.jsonl``) whose ``actor`` is in ``actors``; ``wall_s`` is their
    model time in seconds (``latency_s``; a missing file costs 0); ``cached_tokens`` the prompt
    tokens the server reported as served from its prefix cache, ``cache_in`` the prompt tokens of
    the calls that reported a cache count at all.
    A variant's cost is its own seats' calls: the base agents in the other seats are not counted."""
    calls = [c for c in read_calls(calls_file) if actors is None or c.actor in actors]
    t = call_totals(calls)
    return {"calls": t["calls"], "input_tokens": t["input_tokens"], "output_tokens": t["output_tokens"],
            "wall_s": t["latency_s"], "cached_tokens": t["cached_tokens"],
            "cache_in": sum(c.input_tokens for c in calls if c.cached_tokens is not None and c.input_tokens)}


def method_seats(roles: dict[str, str]) -> set[str]:
    """The seats a method plays in a murder-mystery game: the characters of ``roles`` (a game
    ``result.json``'s ``roles``, name -> role) whose role is not ``"murderer"``. The murderer plays
    the fixed :data:`mas_agents.graphs.mmg.rules.MURDERER_SPEC` whatever the method (PLAYER* §4.1), so its
    calls are not the method's cost."""
    return {p for p, r in roles.items() if r != "murderer"}


def prompt_text(messages: list[dict]) -> str:
    """One prompt as the text a prefix cache sees, in order: each message's role, then its
    content (``[{"role", "content"}]`` of a prompt record, :data:`mas_agents.prompt_log.PROMPTS_FORMAT`),
    separated by control characters no message holds. Any chat template renders the messages in
    this order with fixed text around each, so two prompts share a template prefix exactly as far
    as they share this text (up to the template's own boundary tokens)."""
    return "".join(f"\x1e{m.get('role', '')}\x1f{m.get('content', '')}" for m in messages)


def _common(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (binary search over slice compares:
    C speed on prompts of thousands of characters)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def reusable_prefixes(texts: Iterable[str]) -> list[int]:
    """For each text in order, the length of its longest common prefix with ANY earlier text (0
    for the first): what an ideal prefix cache, which never evicts, could reuse.

    The longest common prefix of a string with a set of strings is the one with its predecessor
    or its successor in sorted order, so each text costs a binary search and two comparisons
    (O(n log n) comparisons for n texts)."""
    seen: list[str] = []
    out = []
    for t in texts:
        i = bisect.bisect_left(seen, t)
        best = 0
        if i > 0:
            best = _common(seen[i - 1], t)
        if i < len(seen):
            best = max(best, _common(seen[i], t))
        out.append(best)
        seen.insert(i, t)
    return out


def _bucket() -> dict[str, Any]:
    return {"calls": 0, "prompt_tokens": 0, "cached_tokens": 0, "cache_in": 0, "reusable_tokens": 0,
            "recorded_tokens": 0}


def _finish(b: dict[str, Any]) -> dict[str, Any]:
    """A bucket's public fields: its sums and the two shares (None where nothing was reported)."""
    return {"calls": b["calls"], "prompt_tokens": b["prompt_tokens"], "cached_tokens": b["cached_tokens"],
            "cached_share": round(b["cached_tokens"] / b["cache_in"], 4) if b["cache_in"] else None,
            "reusable_tokens": b["reusable_tokens"],
            "reusable_share": round(b["reusable_tokens"] / b["recorded_tokens"], 4) if b["recorded_tokens"] else None}


def _logical_order(calls: list, events: Iterable[dict] | None) -> list:
    """``calls`` in the order of the events that cite them (``llm_call_ids``; the game's own clock,
    the same in every run of the same game), the ones no event cites after them in log order.
    The log's order of calls made at once (a round's votes) depends on the threads' timing."""
    if events is None:
        return calls
    first: dict[str, tuple[int, int]] = {}
    for i, ev in enumerate(events):
        for j, cid in enumerate(ev.get("llm_call_ids") or ()):
            first.setdefault(cid, (i, j))
    n = len(calls)
    keyed = sorted(range(n), key=lambda k: first.get(calls[k].call_id, (n + k, 0)))
    return [calls[k] for k in keyed]


def prompt_cost(run_dir: Path, events: Iterable[dict] | None = None) -> dict[str, Any]:
    """What a run's prompts cost and what a prefix cache reused, from ``run_dir/llm_calls.jsonl``
    and its prompt log (``llm_prompts.jsonl[.gz]``, :func:`mas_agents.prompt_log.read_prompts`).

    Returns ``{"calls", "prompt_tokens", "cached_tokens", "cached_share", "reusable_tokens",
    "reusable_share", "by_phase": {phase: same fields}, "by_actor": {actor: same fields}}``:

    * ``prompt_tokens``: the prompt tokens the model reported, summed over the calls;
    * ``cached_tokens``: those the server reported as served from its prefix cache
      (``cached_tokens`` of the call records); ``cached_share`` = cached / prompt tokens of the
      calls that reported a count (None when none did);
    * ``reusable_tokens``: the prompt tokens an ideal prefix cache could have reused: per call, its
      prompt tokens x the share of its prompt's text (:func:`prompt_text`, in characters) that is
      a prefix of an EARLIER prompt of the run, any agent's (:func:`reusable_prefixes`; calls in
      the order of the ``events`` that cite them, default the run's ``events.jsonl``, then the calls
      no event cites in the order of ``llm_calls.jsonl``: the same for every run of the same game,
      whatever the threads' timing); ``reusable_share`` = reusable / prompt tokens of the calls
      whose prompt was recorded (None when the run recorded no prompts: ``--no-record-prompts``).

    Nothing is written; a run with no calls gives zeros.

    Raises:
        ValueError: a call or prompt record that is not one (from the readers).
    """
    run_dir = Path(run_dir)
    calls = read_calls(RunDir(run_dir).calls)
    if events is None and RunDir(run_dir).events.exists():
        events = [d for _, d in read_jsonl(RunDir(run_dir).events, "an event")]
    calls = _logical_order(calls, events)
    prompts = read_prompts(run_dir) if calls else {}
    recorded = [c for c in calls if isinstance(prompts.get(c.call_id, {}).get("messages"), list)]
    texts = [prompt_text(prompts[c.call_id]["messages"]) for c in recorded]
    share = {c.call_id: (n / len(t) if t else 0.0) for c, t, n in zip(recorded, texts, reusable_prefixes(texts))}
    total, phases, actors = _bucket(), {}, {}
    for c in calls:
        n_in = c.input_tokens or 0
        for b in (total, phases.setdefault(c.phase or "", _bucket()), actors.setdefault(c.actor, _bucket())):
            b["calls"] += 1
            b["prompt_tokens"] += n_in
            if c.cached_tokens is not None and n_in:
                b["cached_tokens"] += c.cached_tokens
                b["cache_in"] += n_in
            if c.call_id in share:
                b["recorded_tokens"] += n_in
                b["reusable_tokens"] += round(n_in * share[c.call_id])
    return {**_finish(total), "by_phase": {k: _finish(v) for k, v in phases.items()},
            "by_actor": {k: _finish(v) for k, v in sorted(actors.items())}}


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f} %"


def cost_line(cost: dict[str, Any]) -> str:
    """One line for a report: prompt tokens, served from the server's cache, reusable by an ideal
    prefix cache (``cost`` from :func:`prompt_cost`)."""
    return (f"prompt tokens {cost['prompt_tokens']:,}; served from the server's prefix cache "
            f"{_pct(cost['cached_share'])}; reusable by an ideal prefix cache {_pct(cost['reusable_share'])}")
