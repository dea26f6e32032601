"""Sentence splitting and token-bounded chunk packing for agent memory.

PLAYER* (Zhu et al. 2024, arXiv:2404.17662) §2.2 stores each character's script in a vector
memory as chunks of about 50 tokens; Appendix C.1 gives the 50-token chunk size and the 4,000
token retrieval budgets (see :class:`mas_agents.memory.vector_memory.MemorySettings`). This module does the
text side of that: split a script into sentences, then pack consecutive sentences greedily into
chunks that never exceed a token limit.

Token counts come from a ``count_tokens(text) -> int`` callable. :class:`mas_agents.memory.vector_memory.
VectorMemory` passes its embedder's tokenizer (all-MiniLM-L6-v2 WordPiece, no special tokens);
the default here is :func:`simple_token_count` (whitespace words, one token per CJK character),
which needs no model. The paper counted with OpenAI's ``cl100k_base``; for English the MiniLM
WordPiece count is within a few per cent of it, for Chinese it is about one token per character.

Only the standard library is used, so importing this module is cheap.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["split_sentences", "pack_chunks", "simple_token_count", "CountTokens"]

CountTokens = Callable[[str], int]

# CJK ideographs, kana, hangul and the CJK / full-width punctuation blocks. Each such character
# is its own "word" for simple_token_count and needs no space when text is re-joined.
_CJK_CLASS = (
    "\u2e80-\u2fff"  # radicals
    "\u3000-\u303f"  # CJK symbols and punctuation (。、「」 …)
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3100-\u312f\u31a0-\u31bf"  # bopomofo
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # ideographs
    "\uac00-\ud7af"  # hangul
    "\uff00-\uffef"  # half-/full-width forms (！？，；：（）)
    "\U00020000-\U0002fa1f"  # ideograph extensions
)
_CJK_RE = re.compile(f"[{_CJK_CLASS}]")
_SIMPLE_TOKEN_RE = re.compile(f"[{_CJK_CLASS}]|[^\\s{_CJK_CLASS}]+")

# A sentence end: a run of terminal punctuation plus any closing quotes/brackets after it.
# English . ! ? (also "?!", "..."), Chinese 。！？； and the ellipsis … (also "……").
_CLOSERS = "\"'”’»)）]】」』"
_END_RE = re.compile(f"(?:[.!?]+|[。！？；!?…]+)[{re.escape(_CLOSERS)}]*")
_CJK_ENDS = set("。！？；…")
# Words that end in "." without ending a sentence ("Mrs. Wang", "Dr.Li" are both in WellPlay).
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st jr sr prof mt no vs etc e.g i.e fig gen col capt lt sgt rev".split()
)
_WORD_BEFORE_RE = re.compile(r"(?<![\w'’])([A-Za-z][A-Za-z.]*)\.+$")

# Separators for splitting one over-long sentence, coarsest first (PLAYER* gives no rule for
# this; we need it so that no chunk exceeds the limit).
_CLAUSE_RE = re.compile(r"(?<=[,，、;；:：])")


def simple_token_count(text: str) -> int:
    """Count tokens without a model: each maximal run of non-space, non-CJK characters is one
    token and each CJK character (ideograph, kana, hangul, CJK/full-width punctuation) is one.

    ``simple_token_count("He took the poison.") == 4``; ``simple_token_count("你好，世界") == 5``.
    Used by :class:`mas_agents.memory.embeddings.HashEmbedder` and as :func:`pack_chunks`'s default.
    """
    return len(_SIMPLE_TOKEN_RE.findall(text))


def _normalise_breaks(text: str) -> str:
    """Turn the literal two-character sequence backslash-n (present in 24 zh WellPlay scripts,
    e.g. 罪恶/张村民.json) and CR/CRLF into real newlines."""
    return text.replace("\\r\\n", "\n").replace("\\n", "\n").replace("\r\n", "\n").replace("\r", "\n")


def _is_boundary(line: str, m: re.Match[str]) -> bool:
    """Decide whether the terminal punctuation matched by ``m`` ends a sentence."""
    punct = m.group()
    end = m.end()
    rest = line[end:]
    nxt_nonspace = rest.lstrip()[:1]
    if not nxt_nonspace:
        return True  # end of line
    if nxt_nonspace.islower() and nxt_nonspace.isascii():
        return False  # "he said... and left", "e.g. this" — the sentence goes on
    if any(c in _CJK_ENDS for c in punct):
        return True  # Chinese ends need no following space
    if punct[0] in "!?":
        # "!"/"?" end a sentence before a space, a quote, CJK text or a capital ("Really?Yes").
        return rest[0].isspace() or rest[0].isupper() or bool(_CJK_RE.match(rest[0]))
    # "." (or "..."): a real end before a space or, since the machine-translated English in
    # WellPlay often drops the space ("arts.In the year"), before a capital or CJK text —
    # unless the word before it is an abbreviation or an initial ("Mrs. Wang", "U.S.A").
    if not (rest[0].isspace() or rest[0].isupper() or _CJK_RE.match(rest[0])):
        return False  # "3.5", "a.m", "x.com"
    if len(punct) == 1:
        w = _WORD_BEFORE_RE.search(line[: m.start() + 1])
        if w:
            word = w.group(1).lower().rstrip(".")
            if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
                return False
            if "." in word and all(len(p) <= 1 for p in word.split(".")):
                return False  # U.S. / e.g / i.e
    return True


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences, keeping every non-space character.

    Rules (ours; PLAYER* §2.2 only says scripts are chunked):

    * Line breaks always end a sentence; the literal ``\\n`` sequences in the WellPlay zh data
      count as line breaks (and are removed, like other whitespace).
    * English ``.``, ``!``, ``?`` (and runs such as ``?!``, ``...``), with any closing quotes or
      brackets after them, end a sentence when followed by whitespace, a quote, the end of the
      line, or — because WellPlay's machine-translated English often drops the space — directly
      by a capital letter or CJK text. A ``.`` after an abbreviation (Mr, Mrs, Dr, St, ...) or a
      single-letter initial does not, nor does any end followed by a lowercase ASCII letter.
    * Chinese ``。！？；`` and the ellipsis ``…``/``……`` end a sentence (with closing quotes such
      as ``”``/``」`` kept on the sentence) whatever follows.

    Returns the sentences stripped of surrounding whitespace, in order, with no empty strings.
    ``"".join(split_sentences(t))`` equals ``t`` with whitespace and literal ``\\n`` removed.
    """
    out: list[str] = []
    for line in _normalise_breaks(text).split("\n"):
        start = 0
        for m in _END_RE.finditer(line):
            if _is_boundary(line, m):
                piece = line[start : m.end()].strip()
                if piece:
                    out.append(piece)
                start = m.end()
        piece = line[start:].strip()
        if piece:
            out.append(piece)
    return out


def _join(a: str, b: str) -> str:
    """Join two pieces of text: no space next to CJK text, one space otherwise."""
    if not a:
        return b
    if not b:
        return a
    if _CJK_RE.match(a[-1]) or _CJK_RE.match(b[0]):
        return a + b
    return a + " " + b


def _concat(a: str, b: str) -> str:
    return a + b


def _greedy(
    parts: list[str], max_tokens: int, count: CountTokens, joiner: Callable[[str, str], str]
) -> list[str]:
    """Pack ``parts`` (each already within ``max_tokens``) greedily, counting the joined text
    itself so that sub-word effects at the seams can never push a chunk over the limit."""
    chunks: list[str] = []
    cur = ""
    for p in parts:
        if not cur:
            cur = p
            continue
        cand = joiner(cur, p)
        if count(cand) <= max_tokens:
            cur = cand
        else:
            chunks.append(cur)
            cur = p
    if cur:
        chunks.append(cur)
    return chunks


def _split_long(sentence: str, max_tokens: int, count: CountTokens, level: int = 0) -> list[str]:
    """Split one sentence longer than ``max_tokens`` into pieces of at most ``max_tokens``:
    first at clause punctuation (, ， 、 ; ； : ：), then at whitespace, then between characters.

    Raises ValueError if a single character is longer than ``max_tokens`` tokens.
    """
    if count(sentence) <= max_tokens:
        return [sentence]
    if level == 0:
        parts, joiner = [p for p in _CLAUSE_RE.split(sentence) if p.strip()], _join
        parts = [p.strip() for p in parts]
    elif level == 1:
        parts, joiner = sentence.split(), _join
    else:
        parts, joiner = list(sentence), _concat
        for ch in parts:
            if count(ch) > max_tokens:
                raise ValueError(f"character {ch!r} alone is over max_tokens={max_tokens}")
        return _greedy(parts, max_tokens, count, joiner)
    if len(parts) <= 1:
        return _split_long(sentence, max_tokens, count, level + 1)
    small: list[str] = []
    for p in parts:
        small.extend(_split_long(p, max_tokens, count, level + 1))
    return _greedy(small, max_tokens, count, joiner)


def pack_chunks(
    text: str, max_tokens: int = 50, count_tokens: CountTokens | None = None
) -> list[str]:
    """Pack the sentences of ``text`` (see :func:`split_sentences`) greedily, in order, into
    chunks of at most ``max_tokens`` tokens each (PLAYER* §2.2 / App. C.1: 50-token chunks).

    A chunk is one or more consecutive whole sentences joined by a space (no space next to CJK
    text). A sentence that alone exceeds ``max_tokens`` is split at clause punctuation, then at
    whitespace, then between characters, so **no chunk exceeds** ``max_tokens`` as measured by
    ``count_tokens`` on the chunk's final text.

    Args:
        text: the document (a character script); may be empty.
        max_tokens: the per-chunk limit, >= 1.
        count_tokens: ``str -> int`` token counter; default :func:`simple_token_count`. Pass
            ``embedder.count_tokens`` to count with the embedding model's tokenizer.

    Returns:
        The chunks in document order; ``[]`` for blank text. Non-space text is preserved
        (``"".join(chunks)`` without whitespace equals ``"".join(split_sentences(text))``).

    Raises:
        ValueError: ``max_tokens < 1``, or one character alone is longer than ``max_tokens``.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    count = count_tokens or simple_token_count
    pieces: list[str] = []
    for s in split_sentences(text):
        pieces.extend(_split_long(s, max_tokens, count))
    return _greedy(pieces, max_tokens, count, _join)
