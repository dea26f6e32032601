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

__all__ = ["line", "body", "loads"]

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
