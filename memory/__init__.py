"""Agent memory (PLAYER* §2.2, App. C.1): packaged sentence embeddings, sentence chunking, and a
FAISS exact inner-product vector memory with token-budgeted retrieval.

Importing this package loads numpy and faiss but not torch; the embedding model loads on the
first :meth:`Embedder.encode` of the real embedder.
"""

# One import name (ARCHITECTURE.md, "One import name"): this folder is the package
# mas_agents.memory, reached through the link mas_agents/memory -> ../memory. Imported by its folder's
# own name from a checkout it would be a second copy of every module (a second game registry), so
# that import stops at once with one line instead.
if __name__ != "mas_agents.memory":
    raise SystemExit(f"error: {__name__!r} is this checkout's folder memory/ of the package mas_agents.memory: "
                     f"import mas_agents.memory instead (ARCHITECTURE.md, 'One import name')")

from .chunking import pack_chunks, simple_token_count, split_sentences
from .embeddings import Embedder, HashEmbedder, default_embedder
from .minilm import model_path
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
