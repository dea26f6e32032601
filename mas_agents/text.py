"""Small text helpers shared by games and agents (no game logic here)."""

from __future__ import annotations

import functools
import re
import unicodedata

_NON_WORD = re.compile(r"[\W_]+")


@functools.lru_cache(maxsize=4096)
def norm_text(text: str) -> str:
    """NFKC, casefolded, punctuation and underscores turned into single spaces, trimmed.

    Cached (4,096 texts, least recently used out): a Who-is-Spy judge normalizes every earlier
    description again for each new one (the repeat foul), and the same texts recur."""
    t = unicodedata.normalize("NFKC", text).casefold()
    t = _NON_WORD.sub(" ", t)
    return " ".join(t.split())


_CJK = re.compile("[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")


def says_word(text: str, word: str) -> bool:
    """True when ``text`` contains ``word``, case-insensitively.

    Latin words must appear as whole words (``tea`` is not said by ``team``), bounded by anything
    but a Latin letter or digit (so ``KTV`` is said in ``常去KTV唱歌``); words with CJK characters
    (extension planes included) count as said anywhere in the text, since Chinese has no spaces.
    """
    t, w = norm_text(text), norm_text(word)
    if not w:
        return False
    if _CJK.search(w):
        return w.replace(" ", "") in t.replace(" ", "")
    # word boundaries are Latin letters/digits only, so "KTV" is found in "常去KTV唱歌"
    return re.search(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", t) is not None
