"""What our test SDK agent does with each request (stdlib only).

Shared by :mod:`tests.wis_sdk.sdk_agent` (run by the SDK venv's python, which imports this file
as a sibling module) and by its in-process look-alike :mod:`tests.wis_sdk.sdk_mimic`, so a game
replayed in-process is the game the SDK agents played.

* :func:`perceive`: takes in an announcement the way the SDK's example agent does
  (``agent_build_sdk/example/spy_agent.py``, ``SpyAgent.perceive``), on a memory with the SDK's
  ``SimpleMemory`` methods (``agent_build_sdk/memory/memory.py``): ``start`` clears the memory
  and stores the agent's own name from ``req.message`` (not ``req.name``); ``distribution``
  stores ``req.word``; ``round`` with a ``name`` appends ``"<name>: <message>"`` to the history
  (a ``None`` message raises, as in the example), without one it is the host's round
  announcement; ``vote`` appends ``"<voter>: <target>"`` (``None`` for either raises);
  ``vote_result`` records ``req.name`` as out (empty: nobody); ``result`` looks for the stored
  name in ``req.message`` (``None`` raises); any other status raises ``NotImplementedError``.
* :func:`interact`: ``round`` -> :func:`speech` of the stored name; ``vote`` -> :func:`vote`;
  any other status raises ``NotImplementedError``.
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


def stored(memory, key: str):
    """A stored variable, or None (the SDK memory raises KeyError for a missing one)."""
    return memory.load_variable(key) if memory.has_variable(key) else None


def perceive(memory, req) -> None:
    """Take in one announcement ``req`` (attributes ``status, name, message, word, round``)."""
    status = req.status
    if status == "start":
        memory.clear()
        memory.set_variable("name", req.message)
        for key in ("speeches", "votes", "out"):
            memory.set_variable(key, [])
        memory.append_history("Host: a game begins.")
    elif status == "distribution":
        memory.set_variable("word", req.word)
        memory.append_history("Host: " + str(stored(memory, "name")) + " gets a word.")
    elif status == "round":
        if req.name:
            memory.append_history(req.name + ": " + req.message)
            memory.load_variable("speeches").append([req.round, req.name, req.message])
        else:
            memory.set_variable("round", req.round)
            memory.append_history("Host: round " + str(req.round) + ".")
    elif status == "vote":
        memory.append_history(req.name + ": " + req.message)
        memory.load_variable("votes").append([req.round, req.name, req.message])
    elif status == "vote_result":
        memory.load_variable("out").append(req.name or "")
        memory.append_history("Host: " + (req.name + " is out." if req.name else "nobody is out."))
    elif status == "result":
        memory.set_variable("named_in_result", memory.load_variable("name") in req.message)
        memory.append_history(req.message)
    else:
        raise NotImplementedError(status)


def interact(memory, req) -> tuple[str, dict | None]:
    """``(result, note)`` for an interact ``req``; the note (votes) goes to the log."""
    me, word = stored(memory, "name"), stored(memory, "word")
    if req.status == "round":
        return speech(me or "", req.round or 0, word), None
    if req.status == "vote":
        target, note = vote(req.message, me)
        return target, {"vote": note}
    raise NotImplementedError(req.status)
