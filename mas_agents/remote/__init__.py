"""OpenAI-compatible servers (vLLM, SGLang, llama.cpp, llama-cpp-python, Ollama, OpenAI).

:class:`RemoteChat` is ``langchain_openai.ChatOpenAI`` with what a game needs from a server that
is not the embedded model:

* **Requests every server reads.** The reply cap goes out as ``max_tokens`` (langchain-openai
  renames it ``max_completion_tokens``, which llama-cpp-python's server ignores, so generation ran
  unbounded); only ``api.openai.com`` gets ``max_completion_tokens``. No stop sequence is sent:
  no string is safe before the tagged line (a preamble, a ``<think>`` block, the invited thought),
  and after it the grammar ends decoding or the cap bounds it.
* **Structured outputs.** The reply format the local model decodes under
  (:class:`mas_agents.grammar.ReplyFormat`) is sent in the dialect the server speaks: ``gbnf``
  (llama.cpp / llama-cpp-python: a ``grammar`` field), ``vllm`` (``structured_outputs.grammar``),
  ``sglang`` (``ebnf``), ``json`` (``response_format`` JSON schema; the object is rendered back into
  the tagged lines) or ``prompt`` (nothing: the format is only in the prompt). ``structured="auto"``
  probes the endpoint once per base URL with a grammar that forces an improbable string, and
  caches the first dialect the server demonstrably applied. The strict parser and the
  re-prompt-once rule are unchanged whatever the dialect.
* **Context windows.** Read once per base URL from ``GET /models`` (``max_model_len``: vLLM,
  SGLang; ``meta.n_ctx`` / ``meta.n_ctx_train``: llama.cpp) or from ``--context-window``; each
  prompt's size is estimated conservatively (UTF-8 bytes over the smallest bytes-per-token ratio
  the server's own ``usage`` has shown, 2.5 before any) and the reply cap is lowered to fit (down
  to :data:`MIN_FIT_TOKENS`; the server has the last word). A server's context-length rejection
  (HTTP 400) becomes :class:`~mas_agents.errors.ContextOverflowError`, except that a prompt that
  fits with a smaller cap is asked once more with the room the server says is left. A rejection
  that does not give the context size says so (prompt size, reply cap, the server's words) and
  invents no limit.
* **Start-up probes are as fault-tolerant as any call.** The dialect probe (one
  ``POST /chat/completions`` per dialect tried) and the context-window reads (``GET /models``,
  ``GET /props``) each get up to :data:`PROBE_TRIES` tries under the rule of gameplay calls
  (:meth:`mas_agents.accounting.AccountedModel.chat`): a timeout, a dropped or refused connection,
  a 5xx, 408/409/429, or a 200 that is not a completion (not JSON, an HTML error page, no or empty
  ``choices``) is tried again after ``PROBE_BACKOFF_S * 2**k`` seconds, or a 429's ``Retry-After``
  if longer. Another 4xx is an answer: the dialect is "rejected", the context window "not
  reported". Only a probe request that fails every try stops the run, with
  :class:`~mas_agents.errors.ModelUnavailable` naming the base URL, the request, the number of tries
  and the last fault in one line ("model server URL is unreachable: ..." when that fault was a
  connection, else "... is not ready: ..."); the CLI prints it as one ``error:`` line, exit 3.
  Exception: ``GET /models`` or ``/props`` whose tries include a 200 that is not JSON leaves the
  context window unknown (``config.json`` says so) instead of stopping. A failed probe caches
  nothing: the next call probes again.
* **Concurrency.** One :class:`EndpointLimiter` per base URL, shared by every game, tournament
  cell, evaluation and ablation cell of the process: at most ``max_connections`` requests in
  flight; ``adaptive`` halves the limit on a 429 and adds one back after 20 successes. It counts
  requests in flight and calls/s for progress lines (:func:`activity`). Each base URL has one
  pool for chat completions (:meth:`Endpoint.direct`: ``http.client`` connections for a plain
  ``http://`` server, urllib3's pool for TLS or a proxy) and one SDK client pool for probes
  (:meth:`Endpoint.http_client`), each keeping as many idle keep-alive connections as the cap
  lets be in flight.
* **Several servers for one model.** ``OPENAI_BASE_URL`` may list several comma-separated base
  URLs (:func:`parse_base_urls`): a :class:`ReplicaSet` sends each request to the replica with the
  fewest in flight, each with its own limiter, probes and context window, and passes over one that
  cannot be reached while another can (see the class).
* **The request path.** The payload is langchain-openai's, posted over one pool per
  endpoint (:class:`DirectPost`, :meth:`RemoteChat._request`) with the SDK client's headers, key,
  timeout and error classes, or, for an SDK client whose key comes from a provider, with the SDK
  client's ``post``: the same JSON, headers, errors and reply as ``chat.completions.create``, at
  a third of its client CPU (``benchmarks/results/engine_choice.md``). Probes go through the SDK.

Process-wide settings (:func:`configure`) come from the CLI options ``--structured``,
``--context-window``, ``--max-connections`` and ``--adaptive-connections``; :func:`endpoint_report`
is what ``config.json`` records.

The package holds one idea per module (issue 51 item 6; moved unchanged from the single module
``mas_agents/remote.py`` of 1,492 lines):

* :mod:`mas_agents.remote.transport`: sockets and HTTP pools, :class:`DirectPost`;
* :mod:`mas_agents.remote.limits`: :class:`RemoteSettings` and the :class:`EndpointLimiter`;
* :mod:`mas_agents.remote.endpoints`: one :class:`Endpoint` per base URL, :func:`configure`,
  :class:`ReplicaSet`;
* :mod:`mas_agents.remote.dialects`: structured-output dialects, the start-up probes, the
  context-length rejections;
* :mod:`mas_agents.remote.chat`: :class:`RemoteChat`;
* :mod:`mas_agents.remote.usage`: :func:`parallel_calls`, :func:`auto_concurrency`,
  :func:`endpoint_report`.

Import a name from the module that defines it (``from mas_agents.remote.chat import RemoteChat``);
this package hands nothing on (issue 58 item 3, ARCHITECTURE.md "One home per name"), and a test
patches a name in the module that looks it up.
"""
