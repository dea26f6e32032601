"""JSON encoding for the lines a run appends and the bodies its model requests carry.

A Who-is-Spy call's prompt (2-3 KB) was JSON-encoded twice by the standard library: once as the
request body, once as the prompt-log line; with the reply's decoding, the call and event lines,
JSON was about a tenth of a call's instructions on a zero-latency stub. ``orjson`` (already in
the stack: langsmith and langgraph-sdk depend on it) encodes and decodes the same JSON in a
fraction of that: 8.6 % fewer instructions a call with the request body, its reply, the prompt
log, the call and event lines through it (callgrind, ``benchmarks/results/throughput.md``,
session 20).

The lines are compact (``{"a":1}``, no spaces after separators) and UTF-8 as they are (no
``\\uXXXX`` escapes), which every JSON reader reads as the standard library's lines. What
``orjson`` refuses (an integer beyond 64 bits, a dict key that is not a string, a number or a
bool) is encoded by the standard library instead, with the same ``default``. Not-a-number floats
become ``null`` (the standard library would write ``NaN``, which is not JSON).
"""

from __future__ import annotations

import json
from typing import Any, Callable

import orjson

__all__ = ["line", "body", "loads", "indented"]

_OPTS = orjson.OPT_NON_STR_KEYS


def line(obj: Any, default: Callable[[Any], Any] = str) -> str:
    """``obj`` as one line of JSON text (no line break).

    Args:
        obj: dicts, lists, strings, numbers, bools, None; anything else goes through
            ``default`` (as ``json.dumps(default=...)``; ``orjson`` writes dataclasses, datetimes
            and UUIDs itself).
        default: the fallback encoder of other objects (``str``: their text).

    Raises:
        TypeError: ``default`` raised it for an object (as ``json.dumps`` raises).
    """
    try:
        return orjson.dumps(obj, default=default, option=_OPTS).decode("utf-8")
    except orjson.JSONEncodeError:
        return json.dumps(obj, ensure_ascii=False, default=default)


def body(obj: Any) -> bytes:
    """``obj`` (a request body of plain JSON types) as UTF-8 JSON bytes.

    Raises:
        TypeError: ``obj`` holds an object JSON has no form for.
    """
    try:
        return orjson.dumps(obj, option=_OPTS)
    except orjson.JSONEncodeError:
        return json.dumps(obj, ensure_ascii=False).encode("utf-8")


def loads(data: bytes | str) -> Any:
    """Decode one JSON document.

    Raises:
        json.JSONDecodeError: ``data`` is not JSON (``orjson.JSONDecodeError`` is a subclass).
    """
    return orjson.loads(data)


def indented(obj: Any) -> bytes:
    """``json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\\n"``, UTF-8 encoded: the
    text of ``config.json`` and ``result.json`` (:func:`mas_agents.rundir.write_json`).

    The standard library indents in pure Python (its C encoder writes compact JSON only):
    writing a Who-is-Spy game's ``config.json`` and ``result.json`` that way was 2.9 % of its
    calls' instructions; with this, 1.7 % fewer (callgrind, ``benchmarks/results/throughput.md``,
    session 21). Data made only of the types whose text ``orjson`` writes exactly as ``json``
    does (:func:`_orjson_alike`) goes through ``orjson``; anything else goes through ``json``: a
    float below 1e-4 or from 1e16 on (``orjson`` writes it without the exponent's sign and zero
    padding ``repr`` gives), an enum, a dataclass, a datetime (``orjson`` writes them itself,
    ``json`` as ``str``), a non-string key, an integer beyond 64 bits. A test compares both.

    Raises:
        UnicodeEncodeError: a string holds a lone surrogate (no UTF-8 form).
    """
    if _orjson_alike(obj):
        try:
            return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
        except orjson.JSONEncodeError:     # a lone surrogate, an integer beyond 64 bits
            pass
    return (json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n").encode("utf-8")


def _orjson_alike(x: Any) -> bool:
    """Whether ``x`` holds only dicts with string keys, lists, tuples, strings, integers,
    bools, None and floats that are 0 or from 1e-4 to below 1e16 in size, each of exactly that
    type (no subclass): the values whose JSON text ``orjson`` and ``json`` write alike."""
    t = type(x)
    if t is str or t is int or t is bool or x is None:
        return True
    if t is float:
        return x == 0.0 or 1e-4 <= abs(x) < 1e16
    if t is dict:
        return all(type(k) is str for k in x) and all(_orjson_alike(v) for v in x.values())
    if t is list or t is tuple:
        return all(_orjson_alike(v) for v in x)
    return False
