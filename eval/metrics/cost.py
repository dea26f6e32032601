"""LLM cost of chosen seats, read from a run's ``llm_calls.jsonl`` (``mas ablate`` and
``mas wellplay compare`` count a method's cost over the seats it plays)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["actor_cost", "method_seats"]


def actor_cost(calls_file: Path, actors: set[str] | None) -> dict:
    """LLM cost of the seats in ``actors`` (None: every caller) in one game: ``{"calls",
    "input_tokens", "output_tokens", "wall_s", "cached_tokens", "cache_in"}`` summed over the lines
    of ``calls_file`` (``llm_calls.jsonl``) whose ``actor`` is in ``actors``; ``wall_s`` is their
    model time in seconds (``latency_s``; a missing file costs 0); ``cached_tokens`` the prompt
    tokens the server reported as served from its prefix cache, ``cache_in`` the prompt tokens of
    the calls that reported a cache count at all.
    A variant's cost is its own seats' calls: the base agents in the other seats are not counted."""
    from mas_agents.accounting import call_totals, read_calls
    calls = [c for c in read_calls(calls_file) if actors is None or c.actor in actors]
    t = call_totals(calls)
    return {"calls": t["calls"], "input_tokens": t["input_tokens"], "output_tokens": t["output_tokens"],
            "wall_s": t["latency_s"], "cached_tokens": t["cached_tokens"],
            "cache_in": sum(c.input_tokens for c in calls if c.cached_tokens is not None and c.input_tokens)}


def method_seats(roles: dict[str, str]) -> set[str]:
    """The seats a method plays in a murder-mystery game: the characters of ``roles`` (a game
    ``result.json``'s ``roles``, name -> role) whose role is not ``"murderer"``. The murderer plays
    the fixed :data:`graphs.mmg.rules.MURDERER_SPEC` whatever the method (PLAYER* §4.1), so its
    calls are not the method's cost."""
    return {p for p, r in roles.items() if r != "murderer"}
