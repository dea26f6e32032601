"""What a game declares so that one conformance kit checks any game (issue 51 item 2).

A game's :class:`mas_agents.game.contract.GameDef` may carry a :class:`Conformance`: its own rules invariants
(``checks``) and its event-log re-scoring (``rescore``). The kit (:mod:`mas_agents.game.conformance_kit`)
plays every registered game on a deterministic fake model and calls these two hooks on each
game it played, with no per-game code of its own; it also checks, for every game alike, that an
interrupted game resumes (or reruns) to the same events, that no seat's prompt holds what an
event's ``visible_to`` hid from it, and, played with every seat forging the host, a judge and the
other seats, that no prompt holds a forged line outside the forger's quoted utterance
(:mod:`mas_agents.utterance`, issue 57).

Writing a check: a game's walk of its event log calls :func:`need` for each rule (``need(cond,
what)``, the check's failure names the rule's source line when ``what`` is not given) and
:func:`problems` turns the walk into the hook's list of problems. ``need`` is a function, not
``assert``, so the checks also run under ``python -O``.

Pure Python: no model, no I/O (a game's hook may read its dataset, as its set-up does).
"""

from __future__ import annotations

import linecache
import sys
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Conformance", "Violation", "need", "problems"]


@dataclass(frozen=True)
class Conformance:
    """A game's own conformance hooks (:attr:`mas_agents.game.contract.GameDef.conformance`).

    Attributes:
        checks: ``checks(config, events, result) -> list[str]``: the rules invariants of one
            finished game from its ``config.json``, ``events.jsonl`` (a list of event dicts,
            :func:`mas_agents.events.make_event`) and ``result.json``; ``[]`` when every rule
            holds, else one line per problem found (a walk of the log may stop at its first).
        rescore: ``rescore(config, events, result) -> {field: (recomputed, stored)}``: the
            ``result.json`` fields recomputed from the events alone (the recomputed value first,
            then what ``result.json`` holds for it); the kit requires each pair to be equal.
            ``mas rerun --rescore`` (:mod:`mas_agents.eval.rerun.rescore`) calls it through the registry: a
            game without it has no re-scorer there.
    """

    checks: Callable[[dict[str, Any], list[dict[str, Any]], dict[str, Any]], list[str]]
    rescore: Callable[[dict[str, Any], list[dict[str, Any]], dict[str, Any]], dict[str, tuple[Any, Any]]]


class Violation(Exception):
    """A rule a game's event log breaks (raised by :func:`need`; its text says which)."""


def need(cond: Any, what: Any = None) -> None:
    """Raise :class:`Violation` when ``cond`` is false. Its text is ``what`` (any value, shown
    with ``repr`` unless a string) after the caller's file, line and source line (the rule).

    Raises:
        Violation: ``cond`` is false.
    """
    if cond:
        return
    frame = sys._getframe(1)
    where = f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno}"
    rule = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    detail = "" if what is None else f": {what if isinstance(what, str) else repr(what)[:600]}"
    raise Violation(f"{where}: {rule}{detail}")


def problems(walk: Callable[..., Any], *args: Any, **kwargs: Any) -> list[str]:
    """Run ``walk(*args, **kwargs)`` (a game's walk of its log, calling :func:`need`) and return
    its problems: ``[]`` when it returns, ``[text]`` when a rule fails (:class:`Violation`) or the
    log does not have the shape the walk expects (a missing key or event, a wrong type: the
    exception named)."""
    try:
        walk(*args, **kwargs)
    except Violation as exc:
        return [str(exc)]
    except (KeyError, IndexError, TypeError, ValueError, StopIteration, AttributeError) as exc:
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        where = f" at {tb.tb_frame.f_code.co_filename.rsplit('/', 1)[-1]}:{tb.tb_lineno}" if tb else ""
        return [f"the log does not have the shape the rules give{where}: {type(exc).__name__}: {exc}"]
    return []
