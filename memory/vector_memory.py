"""One agent's vector memory with token-budgeted retrieval (PLAYER* §2.2, Appendix C.1).

PLAYER* (Zhu et al. 2024, arXiv:2404.17662) §2.2: each agent keeps its character script and
the dialogue it takes part in as a vector memory; the script is cut into chunks of about 50
tokens, and when the agent acts, the chunks most similar to the current query are put into the
prompt up to a token budget (App. C.1: 4,000 tokens of script and 4,000 of dialogue). We keep one
exact FAISS inner-product index (``faiss.IndexFlatIP``) per source over L2-normalised vectors, so
the score is cosine similarity and the ranking is exact, not approximate.

A :class:`VectorMemory` holds FAISS indexes and must not go into LangGraph state (state is
snapshotted every step). Rebuild it from the run's events instead with
:meth:`VectorMemory.rebuild`: adding the same texts again is cheap because every vector is
cached by content hash (:mod:`mas_agents.memory.embeddings`) and chunking is memoised.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

import faiss
import numpy as np

from .chunking import pack_chunks
from .embeddings import Embedder

__all__ = ["Chunk", "VectorMemory", "MemorySettings", "SOURCES"]

#: The memory sources: the character's own script and the Q&A exchanges it has seen.
SOURCES = ("script", "dialogue")


@dataclass(frozen=True)
class Chunk:
    """One retrievable piece of memory.

    Attributes:
        text: the chunk's text (a packed run of script sentences, or one whole Q&A exchange).
        source: ``"script"`` or ``"dialogue"``.
        order: 0-based position in document order within its source, increasing as chunks are
            added; retrieval results are sorted by it.
        tokens: ``embedder.count_tokens(text)``, the unit of the retrieval budgets.
        meta: free-form data, e.g. ``{"round": 2, "asker": "...", "answerer": "..."}`` for a
            dialogue chunk. Not part of the hash, so chunks stay hashable.
    """

    text: str
    source: str
    order: int
    tokens: int
    meta: dict = field(default_factory=dict, hash=False)


@functools.lru_cache(maxsize=512)
def _cached_pack(text: str, max_tokens: int, embedder: Embedder) -> tuple[tuple[str, int], ...]:
    """``pack_chunks`` memoised per (text, limit, embedder), with each chunk's token count."""
    chunks = pack_chunks(text, max_tokens, embedder.count_tokens)
    return tuple((c, embedder.count_tokens(c)) for c in chunks)


class VectorMemory:
    """One agent's memory: a FAISS ``IndexFlatIP`` per source over normalised vectors.

    Args:
        embedder: the :class:`mas_agents.memory.embeddings.Embedder` (or ``HashEmbedder`` in tests) that
            embeds chunks and queries and counts tokens.
        chunk_tokens: max tokens per script chunk (PLAYER* §2.2: 50), >= 1.

    Not thread-safe: one agent uses it from one thread at a time.
    """

    def __init__(self, embedder: Embedder, chunk_tokens: int = 50):
        if chunk_tokens < 1:
            raise ValueError(f"chunk_tokens must be >= 1, got {chunk_tokens}")
        self.embedder = embedder
        self.chunk_tokens = chunk_tokens
        self._chunks: dict[str, list[Chunk]] = {s: [] for s in SOURCES}
        self._index: dict[str, faiss.IndexFlatIP] = {
            s: faiss.IndexFlatIP(embedder.dim) for s in SOURCES
        }
        self._tokens: dict[str, int] = {s: 0 for s in SOURCES}

    # -- building ---------------------------------------------------------------------------
    def _add(self, source: str, items: list[tuple[str, int]], metas: list[dict]) -> list[Chunk]:
        if not items:
            return []
        vecs = self.embedder.encode([t for t, _ in items])
        start = len(self._chunks[source])
        new = [
            Chunk(text=t, source=source, order=start + i, tokens=n, meta=dict(m))
            for i, ((t, n), m) in enumerate(zip(items, metas))
        ]
        self._index[source].add(vecs)
        self._chunks[source].extend(new)
        self._tokens[source] += sum(c.tokens for c in new)
        return new

    def add_script(self, text: str) -> int:
        """Chunk ``text`` (sentences packed into <= ``chunk_tokens`` tokens, PLAYER* §2.2),
        embed and index the chunks under source ``"script"``, after any added before.

        Returns:
            the number of chunks added (0 for blank text).
        """
        items = list(_cached_pack(text, self.chunk_tokens, self.embedder))
        return len(self._add("script", items, [{}] * len(items)))

    def add_dialogue(self, text: str, meta: dict | None = None) -> Chunk:
        """Index one Q&A exchange as ONE ``"dialogue"`` chunk (never split, even when longer
        than ``chunk_tokens``; the embedding then sees only its first 256 tokens).

        Args:
            text: the exchange, e.g. ``"Q (Lin Xi): Where were you?\\nA (Su Yang): In the bar."``
            meta: copied onto the chunk, e.g. ``{"round": 2, "asker": ..., "answerer": ...}``.

        Returns:
            the new :class:`Chunk`.

        Raises:
            ValueError: ``text`` is blank.
        """
        text = text.strip()
        if not text:
            raise ValueError("dialogue text is blank")
        item = (text, self.embedder.count_tokens(text))
        return self._add("dialogue", [item], [meta or {}])[0]

    @classmethod
    def rebuild(
        cls,
        embedder: Embedder,
        scripts: Iterable[str] = (),
        dialogues: Iterable[str | tuple[str, dict | None]] = (),
        chunk_tokens: int = 50,
    ) -> "VectorMemory":
        """Build a memory from plain data (e.g. the texts recorded in a run's events), in order.

        ``dialogues`` items are texts or ``(text, meta)`` pairs. With the same texts the result
        equals the original memory; it costs no model call when the texts were embedded
        before in this process (or are in the embedder's disk cache).
        """
        mem = cls(embedder, chunk_tokens=chunk_tokens)
        for s in scripts:
            mem.add_script(s)
        for d in dialogues:
            if isinstance(d, str):
                mem.add_dialogue(d)
            else:
                mem.add_dialogue(d[0], d[1])
        return mem

    # -- reading ----------------------------------------------------------------------------
    def _check_source(self, source: str) -> None:
        if source not in self._chunks:
            raise ValueError(f"unknown source {source!r}; expected one of {SOURCES}")

    def all_chunks(self, source: str) -> list[Chunk]:
        """All chunks of ``source`` in document order (a copy). Raises ValueError on an
        unknown source."""
        self._check_source(source)
        return list(self._chunks[source])

    def total_tokens(self, source: str) -> int:
        """Sum of ``Chunk.tokens`` over ``source``: a budget at least this returns everything."""
        self._check_source(source)
        return self._tokens[source]

    def search(self, query: str, source: str = "script", k: int | None = None
               ) -> list[tuple[Chunk, float]]:
        """The ``k`` (default: all) chunks of ``source`` most similar to ``query``, best first,
        with their inner-product (= cosine) scores, from an exact FAISS search."""
        self._check_source(source)
        index = self._index[source]
        n = index.ntotal
        if n == 0:
            return []
        k = n if k is None else max(0, min(k, n))
        if k == 0:
            return []
        q = self.embedder.encode([query], persist=False)   # a game's query: not worth the disk
        scores, ids = index.search(q, k)
        chunks = self._chunks[source]
        hits = [(chunks[i], float(s)) for s, i in zip(scores[0], ids[0]) if i >= 0]
        # FAISS leaves the order of equal scores unspecified; make it document order so that
        # retrieval is deterministic (a stable sort keeps FAISS's order otherwise).
        hits.sort(key=lambda h: (-h[1], h[0].order))
        return hits

    def retrieve(self, query: str, budget_tokens: int, source: str = "script") -> list[Chunk]:
        """The chunks to put in a prompt for ``query`` within ``budget_tokens`` tokens
        (PLAYER* §2.2 retrieval; App. C.1 budgets, see :class:`MemorySettings`).

        Ranks every chunk of ``source`` by inner product with the query (exact FAISS search over
        normalised vectors) and walks the ranking best first, taking each chunk whose
        ``tokens`` still fit: a chunk that would overflow the budget is skipped and smaller,
        lower-ranked chunks are still tried. The chosen chunks are returned in DOCUMENT ORDER
        (by ``Chunk.order``) so the prompt reads like the script.

        Guarantees: ``sum(c.tokens for c in result) <= budget_tokens``; ``[]`` when the budget
        is 0 or the source is empty; every chunk (and no model call) when the budget is at
        least :meth:`total_tokens`.

        Raises:
            ValueError: negative budget or unknown source.
        """
        self._check_source(source)
        if budget_tokens < 0:
            raise ValueError(f"budget_tokens must be >= 0, got {budget_tokens}")
        chunks = self._chunks[source]
        if budget_tokens == 0 or not chunks:
            return []
        if budget_tokens >= self._tokens[source]:
            return list(chunks)
        chosen: list[Chunk] = []
        used = 0
        smallest = min(c.tokens for c in chunks)
        for c, _ in self.search(query, source):
            if used + c.tokens <= budget_tokens:
                chosen.append(c)
                used += c.tokens
                if budget_tokens - used < smallest:
                    break
        chosen.sort(key=lambda c: c.order)
        return chosen

    def __len__(self) -> int:
        """Number of chunks over all sources."""
        return sum(len(v) for v in self._chunks.values())

    def __repr__(self) -> str:
        parts = ", ".join(f"{s}={len(c)} chunks/{self._tokens[s]} tok" for s, c in self._chunks.items())
        return f"VectorMemory({parts}, embedder={self.embedder.name!r})"


class _PaperSettings:
    """Class attribute that hands out a fresh ``MemorySettings.paper()`` on every access, so
    that mutating one copy (the CLI sets budgets on its settings) cannot change the constant."""

    def __get__(self, obj: object, owner: type["MemorySettings"]) -> "MemorySettings":
        return owner.paper()


@dataclass
class MemorySettings:
    """Token budgets for building prompts from :class:`VectorMemory`.

    Attributes:
        script_budget: tokens of retrieved script per prompt. Default 4,000, the paper's (PLAYER*
            App. C.1): it covers the whole script of 52 of the 68 English WellPlay characters, which then
            leads every prompt of that character unchanged (a prefix cache reuses it).
        dialogue_budget: tokens of retrieved dialogue per prompt. Default 4,000, the paper's.
        chunk_tokens: max tokens per script chunk (PLAYER* §2.2: 50).
        total_budget: at most this many tokens of script and dialogue together per prompt (None: no
            cap, the paper's separate budgets). The script is retrieved first; the dialogue gets
            ``min(dialogue_budget, total_budget - script tokens retrieved)``, so it takes what a short
            script leaves. Default 6,000: with the prompt's own text and a 256-token reply that fits
            the embedded model's 8,192-token context (SmolLM2 counts up to 1.12 of these tokens in
            the English scripts; in the Chinese ones up to 1.9, so a long Chinese script needs a
            smaller cap there). Not the paper's (it gives no cap; the reproduce report lists it).

    Before issue 48 the defaults were 800 / 500 and no cap, for a 4,096-token context: every call
    retrieved its own excerpts, and a prefix cache could reuse little of its prompt.

    ``MemorySettings.PAPER`` (a fresh copy on each access) and ``MemorySettings.paper()`` give
    the paper's 4000/4000/50 without a cap. Mutable (callers set budgets from the command line); the
    constructor raises ValueError on a negative budget or ``chunk_tokens < 1``.
    """

    script_budget: int = 4000
    dialogue_budget: int = 4000
    chunk_tokens: int = 50
    total_budget: int | None = 6000

    PAPER: ClassVar["MemorySettings"]  # set below, after the dataclass is built

    def __post_init__(self) -> None:
        if self.script_budget < 0 or self.dialogue_budget < 0 or (self.total_budget or 0) < 0:
            raise ValueError("budgets must be >= 0")
        if self.chunk_tokens < 1:
            raise ValueError("chunk_tokens must be >= 1")

    @classmethod
    def paper(cls) -> "MemorySettings":
        """PLAYER* App. C.1: 4,000 script tokens, 4,000 dialogue tokens, 50-token chunks, no cap."""
        return cls(script_budget=4000, dialogue_budget=4000, chunk_tokens=50, total_budget=None)

    @classmethod
    def from_record(cls, record: "dict | None") -> "MemorySettings":
        """The settings a ``config.json`` recorded (its ``settings`` dict). A record without
        ``total_budget`` is from before the cap existed and had none; ``None``/``{}``: the defaults.
        Raises TypeError on an unknown key, ValueError on a bad value (the constructor's)."""
        if not record:
            return cls()
        return cls(**{"total_budget": None, **record})

    def dialogue_budget_after(self, script_used: int) -> int:
        """The dialogue budget of a prompt whose script excerpts hold ``script_used`` tokens
        (:attr:`total_budget`)."""
        if self.total_budget is None:
            return self.dialogue_budget
        return max(0, min(self.dialogue_budget, self.total_budget - script_used))


MemorySettings.PAPER = _PaperSettings()  # type: ignore[assignment]
