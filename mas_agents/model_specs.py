"""Model specs: the forms a model is named by (``local``, ``local:PATH``, ``openai:NAME``,
``replay:RUN_DIR``, a chat-model object), the one check of a spec (:func:`check_spec`), the schemes
other modules add and the process-wide override, and how a spec is written in run records
(:func:`spec_text`, :func:`model_label`). Split from :mod:`mas_agents.llm` (issue 51 item 6), which
builds the models; callers import these names from here.

``mas_agents.remote`` is imported inside :func:`check_spec` only: it pulls in langchain-openai and the
OpenAI SDK (about a second of imports), needed only for an ``openai:`` spec. A scheme's factory
(``mas_agents.replayed_model``) is imported on first use by :func:`_scheme_factory`: replay imports this
package's model layer (a cycle).
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any, Callable

from langchain_core.language_models import BaseChatModel

from mas_agents.embedded import EMBEDDED_FILE, embedded_model_path
from mas_agents.local_chat import LocalLlamaChat

__all__ = ["CLI_SPEC_FORMS", "SPEC_FORMS", "SPEC_SCHEMES", "check_spec", "model_label", "set_spec_override",
           "spec_override", "spec_text"]

#: What a command-line user may type as a model spec (the CLI's messages list these only).
CLI_SPEC_FORMS = ('"local"', '"local:/path/to/model.gguf"', '"openai:<model name>"', '"replay:<run directory>"')
#: What :func:`make_chat_model` accepts from Python: the CLI's forms and a chat-model object.
SPEC_FORMS = (*CLI_SPEC_FORMS, "a BaseChatModel instance")


#: Model-spec schemes provided by other modules: ``scheme -> "module:function"`` (imported on
#: first use) or a callable; ``make_chat_model("scheme:REST", ...)`` returns
#: ``factory("scheme:REST", temperature=, max_tokens=, seed=, n_ctx=)``. ``replay:RUN_DIR``
#: answers from a run's recorded prompts (:mod:`mas_agents.replayed_model`, issue 50).
SPEC_SCHEMES: dict[str, Any] = {"replay": "mas_agents.replayed_model:make_replay_chat"}

#: When set (:func:`set_spec_override`), builds the chat model of EVERY string spec instead of
#: the built-in forms (``mas rerun`` answers each spec of a run from its recording).
_SPEC_OVERRIDE: Callable[..., BaseChatModel] | None = None


def set_spec_override(factory: Callable[..., BaseChatModel] | None) -> Callable[..., BaseChatModel] | None:
    """Make ``factory(spec, temperature=, max_tokens=, seed=, n_ctx=)`` build the chat model of
    every string spec from now on (process-wide; None restores the built-in forms); returns the
    previous override. While one is set, :class:`mas_agents.llm.ModelPool` shares no ``openai:`` model."""
    global _SPEC_OVERRIDE
    prev, _SPEC_OVERRIDE = _SPEC_OVERRIDE, factory
    return prev


def spec_override() -> Callable[..., BaseChatModel] | None:
    """The factory :func:`set_spec_override` holds now (None: the built-in forms)."""
    return _SPEC_OVERRIDE


def _scheme_factory(scheme: str) -> Callable[..., BaseChatModel]:
    """The factory of a :data:`SPEC_SCHEMES` scheme (importing ``module:function`` once)."""
    f = SPEC_SCHEMES[scheme]
    if isinstance(f, str):
        module, _, name = f.partition(":")
        f = SPEC_SCHEMES[scheme] = getattr(importlib.import_module(module), name)
    return f


def check_spec(spec: "str | BaseChatModel") -> None:
    """Check a model spec as :func:`make_chat_model` reads it, without building the model (a local
    one would load its weights, a replay one read its recording): the one check both
    :func:`mas_agents.llm.make_chat_model` and ``mas serve``'s ``/play`` form use.

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
        from mas_agents.remote.endpoints import parse_base_urls

        urls = parse_base_urls(os.environ.get("OPENAI_BASE_URL"))
        if not urls and not os.environ.get("OPENAI_API_KEY"):
            raise ValueError(f"model spec {spec!r}: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL "
                             "(an OpenAI-compatible server)")
        return
    raise ValueError(f"unknown model spec {spec!r}; accepted: {', '.join(CLI_SPEC_FORMS)}")



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
