"""mas_agents.jsonl: the run lines and request bodies read back as the standard library reads them."""

import json
from pathlib import Path

import pytest

from mas_agents import jsonl


def test_a_line_is_compact_unescaped_utf8_json_that_json_reads_back():
    obj = {"actor": "玩家 1", "n": 3, "x": 0.1, "ok": True, "none": None, "list": [1, "b"], "nested": {"k": "v"}}
    text = jsonl.line(obj)
    assert "\n" not in text and "玩家" in text
    assert json.loads(text) == obj
    assert text == json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def test_objects_json_has_no_form_for_go_through_default_as_with_json_dumps():
    obj = {"path": Path("runs/x"), "letters": {"b"}}
    assert json.loads(jsonl.line(obj)) == json.loads(json.dumps(obj, default=str))
    assert json.loads(jsonl.line({"s": {"b", "a"}}, sorted)) == {"s": ["a", "b"]}

    def refuse(o):
        raise TypeError(f"no JSON for {type(o).__name__}")
    with pytest.raises(TypeError, match="no JSON for object"):
        jsonl.line({"o": object()}, refuse)


def test_what_orjson_refuses_is_encoded_by_the_standard_library():
    big = {"n": 2 ** 70, 3: "int key", None: "null key"}
    assert json.loads(jsonl.line(big)) == json.loads(json.dumps(big))
    assert json.loads(jsonl.body({"n": 2 ** 70})) == {"n": 2 ** 70}


def test_a_body_is_utf8_bytes_and_loads_reads_bytes_or_text():
    b = jsonl.body({"messages": [{"role": "user", "content": "描述"}], "max_tokens": 8})
    assert isinstance(b, bytes) and "描述".encode("utf-8") in b
    assert jsonl.loads(b) == jsonl.loads(b.decode("utf-8")) == {"messages": [{"role": "user", "content": "描述"}],
                                                                  "max_tokens": 8}
    with pytest.raises(json.JSONDecodeError):
        jsonl.loads(b"<html>")
