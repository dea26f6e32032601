"""The embedded engine as a langchain-core chat model: :class:`LocalLlamaChat` and the message
conversion it uses (split from :mod:`mas_agents.llm`, issue 51 item 6). The ``Llama`` objects, their
lock and prefix cache are :mod:`mas_agents.embedded`'s.

``llama_cpp.LlamaGrammar`` is imported inside ``_generate`` only (heavy; a grammar is compiled only
when a call asks for one).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

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

from mas_agents import embedded
from mas_agents.accounting import message_text
from mas_agents.embedded import _Loaded, _reusable_prefix
from mas_agents.errors import ContextOverflowError

__all__ = ["LocalLlamaChat", "to_llama_messages"]

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
    ``(model_path, n_ctx, n_threads)`` (see :mod:`mas_agents.embedded`), so consecutive prompts that share
    a prefix only evaluate the new suffix.

    Fields:
        model_path: GGUF file.
        n_ctx: context window in tokens (prompt + reply); default 8192, SmolLM2-135M's trained context
            (issue 48: the default retrieval budgets, :class:`mas_agents.memory.MemorySettings`, need it).
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
    n_ctx: int = Field(default=embedded.DEFAULT_N_CTX, gt=0)
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
        return embedded._load(self.model_path, self.n_ctx, self.n_threads, self.seed)

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
