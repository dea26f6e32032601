"""Agent memory (PLAYER* §2.2, App. C.1): packaged sentence embeddings, sentence chunking, and a
FAISS exact inner-product vector memory with token-budgeted retrieval.

Importing this package loads numpy and faiss but not torch; the embedding model loads on the
first :meth:`Embedder.encode` of the real embedder.
"""

from .chunking import pack_chunks, simple_token_count, split_sentences
from .embeddings import Embedder, HashEmbedder, default_embedder, model_path
from .vector_memory import SOURCES, Chunk, MemorySettings, VectorMemory

__all__ = [
    "Chunk",
    "Embedder",
    "HashEmbedder",
    "MemorySettings",
    "SOURCES",
    "VectorMemory",
    "default_embedder",
    "model_path",
    "pack_chunks",
    "simple_token_count",
    "split_sentences",
]
