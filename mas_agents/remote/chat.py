"""The chat model of an OpenAI-compatible server: :class:`RemoteChat` (``ChatOpenAI`` with the
reply cap every server reads, the reply format in the server's dialect, the cap fitted to the
context window, the endpoint's limiter and replicas, a direct request path).

The rules are described in :mod:`mas_agents.remote` (the package docstring). Moved unchanged
from the former single module ``mas_agents/remote.py`` (issue 51 item 6).
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from typing import Any

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_openai import ChatOpenAI
from pydantic import Field

from mas_agents.accounting import message_text
from mas_agents.retry import _is_unreachable, is_transient_error
from mas_agents.errors import ContextOverflowError, MalformedResponse, ModelUnavailable
from mas_agents.remote.dialects import DIALECTS, context_error_numbers, is_openai_api
from mas_agents.remote.endpoints import Endpoint, ReplicaSet, _one_line, _replicas_down, endpoint, replica_set
from mas_agents.remote.transport import _plain_key_client

log = logging.getLogger("mas_agents.remote")

#: Smallest reply cap the context fitting lowers a call to before giving up (tokens): a vote
#: with no thought needs about a dozen.
MIN_FIT_TOKENS = 16

#: callback manager (a graph step's) -> whether the calls under it configure no handler
#: (:meth:`RemoteChat._memo_quiet`); an entry goes with its manager
_QUIET: "weakref.WeakKeyDictionary[Any, bool]" = weakref.WeakKeyDictionary()


class RemoteChat(ChatOpenAI):
    """``ChatOpenAI`` for any OpenAI-compatible server (see the module docstring).

    Extra invoke kwarg: ``reply_format`` (a :class:`mas_agents.grammar.ReplyFormat`), turned into
    the server's structured-output fields. Built by :func:`mas_agents.llm.make_chat_model` for
    ``openai:<model>`` specs, with ``max_retries=0`` (retries are counted in
    :class:`mas_agents.accounting.AccountedModel`).

    Raises (from ``invoke``):
        ModelUnavailable: a start-up probe (dialect, context window) failed every try.
        ContextOverflowError: the prompt does not fit the context window (estimated before
            sending, or the server's 400).
        MalformedResponse: a 200 with no choices.
        openai.APIError subclasses: as the server answered (the caller retries the transient ones).
    """

    structured_dialect: str | None = Field(default=None, exclude=True)   # fixed dialect (tests); None = endpoint's
    #: several base URLs serving this model (:class:`ReplicaSet`; the first is ``openai_api_base``);
    #: None = ``openai_api_base`` alone
    replica_urls: list[str] | None = Field(default=None, exclude=True)

    def invoke(self, input: Any, config: Any = None, *, stop: list[str] | None = None, **kwargs: Any) -> Any:
        """langchain-core's ``invoke``, without its run bookkeeping when nobody listens.

        When the call's callback manager, configured exactly as ``BaseChatModel.generate`` does
        (the config's and this model's callbacks, tags and metadata, ``verbose``, LangSmith tracing
        from the environment or a tracing context), has no handler, the messages go straight to
        ``_generate_with_cache`` (the path ``generate`` takes: the cache, the rate limiter, the
        response metadata merge) and its message is returned; the run's start/end events, which
        no one would receive, are not built (0.4 ms of CPU a call: 1.4 -> 0.9 ms per request to a
        zero-latency stub). The message then has no ``lc_run-`` id. Otherwise, or with a ``run_id``
        or LangSmith's ``ls_structured_output_format``, it is ``BaseChatModel.invoke`` itself.

        Where ``_generate_with_cache`` would only call ``_generate`` and merge the generation's
        info into the message's ``response_metadata`` (no cache, global or the model's; no rate
        limiter; no streaming asked; ``output_version`` not ``"v1"``), :meth:`_plain_generate`
        does just that, without its per-call checks (an ``inspect.signature`` of ``_generate``
        among them). With the messages' conversion skipped for a list of messages with text
        content (which it returns unchanged), 4.7 % fewer instructions a Who-is-Spy call on a
        zero-latency stub (callgrind, ``benchmarks/results/throughput.md``, session 20).

        Whether a call configures a handler is asked once per graph step (:meth:`_memo_quiet`),
        not once per call: 4.0 % fewer instructions a Who-is-Spy call (session 21).
        """
        from langchain_core.callbacks import CallbackManager
        from langchain_core.runnables.config import ensure_config, var_child_runnable_config

        cfg = ensure_config(config)
        if cfg.get("run_id") is None and "ls_structured_output_format" not in kwargs:
            # a graph step's callback manager is the same object for every call the step makes
            # (a Who-is-Spy round's six descriptions, its six narrowed votes; ensure_config
            # hands out a copy of it): whether it configures a handler is asked once per step
            source = config if config is not None else var_child_runnable_config.get()
            parent = source.get("callbacks") if source else None
            memo = self._memo_quiet(parent)
            quiet = _QUIET.get(parent) if memo else None
            if quiet is None:
                quiet = not CallbackManager.configure(cfg.get("callbacks"), self.callbacks, self.verbose,
                                                      cfg.get("tags"), self.tags, cfg.get("metadata"),
                                                      self.metadata).handlers
                if memo:
                    _QUIET[parent] = quiet
            if quiet:
                if isinstance(input, list) and all(isinstance(m, BaseMessage) and isinstance(m.content, str)
                                                   for m in input):
                    # what the conversion below returns for them (the same messages; only a list
                    # content is normalized), without a ChatPromptValue validated around them
                    messages = list(input)
                else:
                    from langchain_core.language_models._utils import _normalize_messages
                    messages = _normalize_messages(self._convert_input(input).to_messages())
                if self._plain_call(kwargs):
                    return self._plain_generate(messages, stop, kwargs)
                return self._generate_with_cache(messages, stop=stop, **kwargs).generations[0].message
        return super().invoke(input, config, stop=stop, **kwargs)

    def _memo_quiet(self, parent: Any) -> bool:
        """Whether :meth:`invoke` may keep its answer to "does this call configure a callback
        handler?" for the rest of ``parent``'s life: ``parent`` is a callback manager (a graph
        step's: LangGraph makes one per task), and this model adds no callbacks and is not
        verbose, so the answer depends on that manager's handlers, which a step does not
        change, and on LangSmith tracing and langchain-core's debug switch, taken as they are
        when the step's first call is made. A list of callbacks or none (a call outside a
        graph) is configured every call."""
        return isinstance(parent, BaseCallbackManager) and not self.callbacks and not self.verbose

    def _plain_call(self, kwargs: dict) -> bool:
        """True when langchain-core's ``_generate_with_cache`` (langchain-core 1.x) would do
        nothing for this call but ``_generate`` and the metadata merge: the model's ``cache`` is
        False, or None with no global cache set; no ``rate_limiter``; no streaming (neither
        ``stream`` in ``kwargs`` nor ``streaming=True``; no handler exists here); ``output_version``
        is not ``"v1"`` (which rewrites the content into blocks)."""
        from langchain_core.globals import get_llm_cache

        if self.cache is not False and (self.cache is not None or get_llm_cache() is not None):
            return False
        if self.rate_limiter is not None or kwargs.get("stream") or self.output_version == "v1":
            return False
        return not ("streaming" in self.model_fields_set and self.streaming is True)

    def _plain_generate(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict) -> BaseMessage:
        """``_generate`` and the message of its one generation, its ``response_metadata``
        merged as langchain-core merges it (the generation's info but its gateway key, then the
        message's own metadata, under the result's ``llm_output``)."""
        from langchain_core.language_models.chat_models import _gen_info_and_msg_metadata

        result = self._generate(messages, stop=stop, run_manager=None, **kwargs)
        for generation in result.generations:
            generation.message.response_metadata = _gen_info_and_msg_metadata(generation)
        message = result.generations[0].message
        if len(result.generations) == 1 and result.llm_output is not None:
            message.response_metadata = {**result.llm_output, **message.response_metadata}
        return message

    def base_urls(self) -> list[str]:
        """The base URLs this model's requests go to: its replicas, else its one base URL
        (OpenAI's API when unset)."""
        if self.replica_urls:
            return list(self.replica_urls)
        return [(self.openai_api_base or "https://api.openai.com/v1").rstrip("/")]

    def endpoint(self) -> Endpoint:
        """This model's :class:`Endpoint` (by base URL; with replicas, the first one's)."""
        return endpoint(self.base_urls()[0])

    def replicas(self) -> ReplicaSet | None:
        """The :class:`ReplicaSet` of this model's base URLs, or None with a single one."""
        urls = self.base_urls()
        return replica_set(urls) if len(urls) > 1 else None

    def constrain(self, fmt: Any) -> dict:
        """Invoke kwargs that constrain a reply to ``fmt`` (a ReplyFormat)."""
        return {"reply_format": fmt}

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if not is_openai_api(self.openai_api_base) and "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        return payload

    def _extra(self, fmt: Any, dialect: str) -> dict:
        """The extra_body fields of one request under ``dialect``. Never a stop sequence: a
        preamble, a reasoning model's <think> block or the thought the prompt invites may hold
        any line break before the tagged line; the cap bounds length."""
        if fmt is None or dialect == "prompt":
            return {}
        if dialect == "gbnf":
            return {"grammar": fmt.gbnf()}
        if dialect == "vllm":
            return {"structured_outputs": {"grammar": fmt.gbnf()}}
        if dialect == "sglang":
            return {"ebnf": fmt.gbnf()}
        if dialect == "json":
            return {"response_format": {"type": "json_schema", "json_schema": {
                "name": f"{fmt.request.kind}_reply", "strict": True, "schema": fmt.schema()}}}
        raise ValueError(f"unknown structured dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")

    def _request(self, ep: Endpoint, messages: list[BaseMessage], stop: list[str] | None, run_manager: Any,
                 kwargs: dict) -> ChatResult:
        """One chat completion at ``ep``: the payload langchain-openai builds, posted directly
        (:class:`DirectPost`: the SDK client's headers, key, timeout and error classes kept) when
        the model's SDK client has a plain key, else through the SDK client itself
        (``client.post``, not ``chat.completions.create``, which walks every request's parameters
        against their TypedDicts); the reply, read as a dict, becomes a ``ChatResult`` as
        langchain-openai makes it, and its errors the exceptions langchain-openai raises.
        Streaming, a top-level ``response_format`` or the Responses API (never used by our calls)
        go through langchain-openai itself."""
        import openai
        from langchain_openai.chat_models.base import _handle_openai_api_error, _handle_openai_bad_request
        from openai._base_client import make_request_options

        self._ensure_sync_client_available()
        payload = self._get_request_payload(messages, stop=stop, **kwargs)
        if payload.get("stream") or "response_format" in payload or self._use_responses_api(payload):
            if self.replicas() is not None:
                raise ValueError("streaming, a top-level response_format or the Responses API is not "
                                 "supported with several base URLs")
            return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
        extra = payload.pop("extra_body", None)
        client = ep.client_for(self)
        try:
            if _plain_key_client(client):
                # the body posted directly, the SDK's headers, key, timeout and error classes kept
                # (DirectPost: 0.5-0.8 ms of CPU a request against 2.1-3.4 through the SDK)
                resp = ep.direct().post(client, "/chat/completions", {**payload, **(extra or {})})
            else:
                # cast_to=object: the reply's JSON as a dict, which langchain-openai reads as it
                # reads a ChatCompletion once dumped (building and dumping that model ~0.5 ms)
                resp = client.post(
                    "/chat/completions", body=payload, cast_to=object,
                    options=make_request_options(extra_body=extra, security={"bearer_auth": True}))
        except openai.BadRequestError as e:
            _handle_openai_bad_request(e)
        except openai.APIError as e:
            _handle_openai_api_error(e)
        return self._create_chat_result(resp, {})

    def _send(self, ep: Endpoint, held: bool, messages: list[BaseMessage], stop: list[str] | None,
              run_manager: Any, kwargs: dict) -> ChatResult:
        """One request under the endpoint's limiter (already ``held`` by a replica set, or taken
        here), server faults mapped to our errors."""
        import openai

        with (contextlib.nullcontext() if held else ep.limiter):
            try:
                return self._request(ep, messages, stop, run_manager, kwargs)
            except openai.RateLimitError:
                ep.limiter.rate_limited()
                raise
            except openai.APIError as exc:
                nums = context_error_numbers(exc)
                if nums is not None:
                    # the server's numbers where it gave them; an unknown n_ctx stays None
                    raise ContextOverflowError(nums["prompt"] or ep.estimate_tokens(messages), nums["ctx"] or None,
                                               kwargs["max_tokens"], where=ep.base_url,
                                               estimated=nums["prompt"] is None,
                                               detail=f"the server said: {_one_line(exc)}") from exc
                raise
            except (KeyError, ValueError) as exc:
                # langchain-openai on a 200 whose body is no completion: no "choices", an "error"
                # object, or not JSON at all
                raise MalformedResponse(f"{ep.base_url}: malformed response ({type(exc).__name__}: {exc})") from exc
            except TypeError as exc:
                if "NoneType" not in str(exc):        # "choices": null; anything else is a bug of ours
                    raise
                raise MalformedResponse(f"{ep.base_url}: malformed response ({exc})") from exc

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        rs = self.replicas()
        if rs is None:
            return self._generate_at(self.endpoint(), False, messages, stop, run_manager, kwargs)
        import openai

        tried: set[str] = set()
        faults: list[tuple[str, BaseException]] = []
        while True:
            ep = rs.acquire(tried)
            if ep is None:
                last = faults[-1][1]
                if any(isinstance(f, ModelUnavailable) for _, f in faults):
                    # a replica's start-up probe failed every try: already a stop, naming them all
                    raise _replicas_down(rs.base_urls, faults) from last
                raise last
            try:
                return self._generate_at(ep, True, messages, stop, run_manager, dict(kwargs))
            except Exception as exc:
                # a fault of this replica, not of the request: the next replica takes it at once
                if not (is_transient_error(exc) or isinstance(exc, ModelUnavailable)):
                    raise
                tried.add(ep.base_url)
                faults.append((ep.base_url, exc))
                if isinstance(exc, (ModelUnavailable, openai.APITimeoutError)) or _is_unreachable(exc):
                    ep.mark_down(_one_line(exc))
                if len(tried) < len(rs.endpoints):
                    log.warning("%s: %s; the request goes to another replica", ep.base_url, _one_line(exc))
            finally:
                ep.limiter.release()

    def _generate_at(self, ep: Endpoint, held: bool, messages: list[BaseMessage], stop: list[str] | None,
                     run_manager: Any, kwargs: dict) -> ChatResult:
        """One call at ``ep`` (see :meth:`_send` for ``held``): the reply cap fitted to its
        context window, the reply format in its dialect, one more try with the room a server
        says is left."""
        fmt = kwargs.pop("reply_format", None)
        max_tokens = kwargs.pop("max_tokens", None) or self.max_tokens or 256
        ctx, _ = ep.context_window(self)
        if ctx:
            # fit the cap to what the (over-counted) prompt leaves; the server has the last word
            room = ctx - ep.estimate_tokens(messages)
            if room < max_tokens:
                fitted = max(room, MIN_FIT_TOKENS)
                log.info("%s: reply cap lowered from %d to %d tokens to fit the %d-token context",
                         ep.base_url, max_tokens, fitted, ctx)
                max_tokens = fitted
        dialect = (self.structured_dialect or ep.dialect(self)) if fmt is not None else "prompt"
        extra = self._extra(fmt, dialect)
        kwargs["extra_body"] = {**(kwargs.get("extra_body") or {}), **extra}
        kwargs["max_tokens"] = max_tokens
        try:
            result = self._send(ep, held, messages, stop, run_manager, kwargs)
        except ContextOverflowError as exc:
            # the prompt fits but prompt + cap does not (vLLM says so): once more with the room left
            room = exc.n_ctx - exc.prompt_tokens if exc.n_ctx and not exc.estimated else 0
            if room < MIN_FIT_TOKENS or room >= kwargs["max_tokens"]:
                raise
            log.info("%s: the server's context leaves %d reply tokens; asking again with that cap", ep.base_url, room)
            kwargs["max_tokens"] = max_tokens = room
            result = self._send(ep, held, messages, stop, run_manager, kwargs)
        ep.limiter.succeeded()
        if not result.generations:
            raise MalformedResponse(f"{ep.base_url}: the response has no choices")
        msg = result.generations[0].message
        usage = getattr(msg, "usage_metadata", None) or {}
        ep.learn(messages, usage.get("input_tokens"))
        meta = dict(msg.response_metadata or {})
        meta["structured"] = dialect
        meta["max_tokens"] = max_tokens
        # what the request carried and the server said, for the prompt log (accounting.PROMPTS_FORMAT)
        meta["structured_fields"] = extra if fmt is not None else None
        if dialect == "json" and fmt is not None:
            meta["raw_completion"] = message_text(msg.content)
            msg.content = fmt.render(meta["raw_completion"])
        msg.response_metadata = meta
        return result
