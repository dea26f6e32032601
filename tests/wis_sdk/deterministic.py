"""The deterministic moves of our test SDK agent (stdlib only).

Shared by :mod:`tests.wis_sdk.sdk_agent` (run by the SDK venv's python, which imports this file
as a sibling module) and by the in-process fake of ``tests/graphs/test_wis_sdk_fixtures.py``,
so a game replayed in-process with the fake is the game the SDK agents played.

* :func:`speech`: a short sentence, unique per (name, round), never containing the word.
* :func:`vote`: the first candidate that is not the voter's own (stored) name. The candidate list
  is split on ``","`` *without* stripping, as the SDK's example agent splits it
  (``agent_build_sdk/example/spy_agent.py``, ``SpyAgent.interact``: ``req.message.split(",")``,
  then ``name != self.memory.load_variable("name")``): a judge that joined the names with
  ``", "`` would make such an agent miss its own name, so the contract tests look at the raw
  pieces.
"""

from __future__ import annotations

import re
import zlib

_CJK = re.compile("[\u3400-\u9fff\uf900-\ufaff]")


def is_zh(text: str | None) -> bool:
    """Whether ``text`` holds a CJK ideograph (the word of a Chinese game does)."""
    return bool(text) and bool(_CJK.search(text))


def speech(name: str, round: int, word: str | None) -> str:
    """The description ``name`` gives in ``round`` (Chinese when ``word`` is)."""
    zh = is_zh(word)
    forms = ([f"{name}的第{round}条提示。", f"第{round}轮，{name}说它很常见。"] if zh else
             [f"Hint {round} from {name}.", f"Round {round}: {name} says it is common."])
    code = zlib.crc32((name or "").encode("utf-8")) % 1000
    forms.append(f"编号{code}的第{round}条提示。" if zh else f"Clue {round} of seat code {code}.")
    w = (word or "").casefold()
    for text in forms:
        if not w or w not in text.casefold():
            return text
    return forms[-1]   # the word is a digit string of the code and the round; never met in tests


def split_candidates(message: str | None) -> list[str]:
    """The candidate list as the SDK's example agent reads it: ``message.split(",")``, unstripped."""
    return (message or "").split(",")


def vote(message: str | None, me: str | None) -> tuple[str, dict]:
    """``(target, note)``: the first raw candidate ``!= me`` (``""`` if none), and a note with the
    raw ``candidates``, whether ``me`` was ``offered_self`` (exactly, as the example compares) and
    ``offered_self_stripped`` (after stripping spaces, which the example does not do)."""
    cands = split_candidates(message)
    target = next((c for c in cands if c != me), "")
    note = {"candidates": cands, "offered_self": me in cands,
            "offered_self_stripped": me is not None and me.strip() in [c.strip() for c in cands]}
    return target, note
