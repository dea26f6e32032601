"""What is known about each base URL, once per process: :class:`Endpoint` (its limiter, connection
pools, probed dialect, context window and bytes-per-token ratio), the registry of them
(:func:`endpoint`, reset by :func:`configure`), and several base URLs serving one model
(:func:`parse_base_urls`, :class:`ReplicaSet`).

The limit itself is :mod:`mas_agents.remote.limits`, the probes :mod:`mas_agents.remote.dialects`,
the pools :mod:`mas_agents.remote.transport`. Moved unchanged from the former single module
``mas_agents/remote.py`` (issue 51 item 6).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import asdict
from typing import Any
from urllib.parse import urlparse

from langchain_core.messages import BaseMessage

from mas_agents.accounting import message_text
from mas_agents.errors import ModelUnavailable
from mas_agents.remote.dialects import DIALECTS, GRAMMAR_DIALECTS, _probe, _reported_context
from mas_agents.remote.limits import EndpointLimiter, RemoteSettings
from mas_agents.remote.transport import DirectPost, _default_socket_options

log = logging.getLogger("mas_agents.remote")
# Annotations name :class:`mas_agents.remote.chat.RemoteChat`, which imports this module
# (not imported here).

#: Bytes per token assumed before the server's usage has shown the real ratio (English BPE text
#: is about 4, Chinese about 2 to 3: 2.5 over-counts English, so prompts are never under-counted).
START_BYTES_PER_TOKEN = 2.5
#: Tokens added per message for the chat template (role markers).
TEMPLATE_TOKENS_PER_MESSAGE = 8
#: Prompts shorter than this (UTF-8 bytes) teach nothing about the bytes-per-token ratio.
LEARN_MIN_BYTES = 400
#: Seconds a replica (one of several base URLs serving the model, :class:`ReplicaSet`) that could
#: not be reached -- connection refused or broken, a timeout, a start-up probe that failed every
#: try -- is passed over while another replica is up; after it, requests try it again.
REPLICA_DOWN_S = 5.0


_SETTINGS = RemoteSettings()
_REGISTRY: dict[str, "Endpoint"] = {}
_REGISTRY_LOCK = threading.Lock()


def configure(**kwargs: Any) -> RemoteSettings:
    """Set the process-wide :class:`RemoteSettings` (fields by name) and forget every endpoint's
    cached probe, limiter and counters, so the next call starts from the new settings.

    Raises:
        ValueError: a value out of range (see :class:`RemoteSettings`).
    """
    global _SETTINGS
    _SETTINGS = RemoteSettings(**{**asdict(_SETTINGS), **kwargs})
    with _REGISTRY_LOCK:
        _REGISTRY.clear()
        _REPLICA_SETS.clear()
    return _SETTINGS


def settings() -> RemoteSettings:
    """The process-wide :class:`RemoteSettings`."""
    return _SETTINGS


class Endpoint:
    """What is known about one base URL: its limiter, structured dialect, context window and
    the bytes-per-token ratio its usage reports have shown. One per base URL per process
    (:func:`endpoint`); probes run at most once, under a lock."""

    def __init__(self, base_url: str, cfg: RemoteSettings):
        self.base_url = base_url
        self.cfg = cfg
        self.limiter = EndpointLimiter(cfg.max_connections, cfg.adaptive)
        self._lock = threading.Lock()
        self._dialect: str | None = None
        self._probe_note = ""
        self._ctx: tuple[int | None, str] | None = None
        self._bytes_per_token = START_BYTES_PER_TOKEN
        self._ratio_seen = False
        self._client_lock = threading.RLock()
        self._http: Any = None
        self._clients: dict[int, tuple[Any, Any]] = {}   # id(model's root client) -> (it, its copy here)
        self._direct: DirectPost | None = None
        #: a replica passed over until this time.monotonic() (see :class:`ReplicaSet`), and why
        self.down_until = 0.0
        self.down_reason = ""

    # -- HTTP --------------------------------------------------------------------------------
    def http_client(self) -> Any:
        """This endpoint's HTTP client for the openai SDK (its ``httpx2`` client and defaults),
        shared by every model of the process that calls it: probes, and the chat completions of
        an SDK client whose key comes from a provider (the others go through :meth:`direct`). Its
        pool keeps up to ``max_connections`` idle keep-alive connections and sets no cap of its
        own (the limiter is the cap; probes run beside it)."""
        with self._client_lock:
            if self._http is None:
                import httpx2
                from openai._base_client import SyncHttpxClientWrapper

                limits = httpx2.Limits(max_connections=None, max_keepalive_connections=self.cfg.max_connections)
                kwargs: dict[str, Any] = {"limits": limits}
                opts = _default_socket_options()
                if opts:   # langchain-openai's TCP keep-alive options, as its own client sets them
                    kwargs["transport"] = httpx2.HTTPTransport(limits=limits, socket_options=list(opts))
                # the SDK's own wrapper of its default client: closed (its sockets too) when the
                # endpoint is dropped, e.g. by configure()
                self._http = SyncHttpxClientWrapper(**kwargs)
            return self._http

    def client_for(self, model: "RemoteChat") -> Any:
        """``model``'s openai SDK client (its key, headers, timeout, retries) aimed at this base URL
        over :meth:`http_client`; one copy per model client, made on first use."""
        root = model.root_client
        hit = self._clients.get(id(root))
        if hit is None or hit[0] is not root:
            with self._client_lock:
                hit = self._clients.get(id(root))
                if hit is None or hit[0] is not root:
                    hit = self._clients[id(root)] = (root, root.copy(base_url=self.base_url,
                                                                     http_client=self.http_client()))
        return hit[1]

    def direct(self) -> DirectPost:
        """This endpoint's :class:`DirectPost` (its pools keep ``max_connections`` idle connections),
        made on first use."""
        if self._direct is None:
            with self._client_lock:
                if self._direct is None:
                    self._direct = DirectPost(self.base_url, self.cfg.max_connections)
        return self._direct

    # -- replica faults ------------------------------------------------------------------------
    def mark_down(self, why: str) -> None:
        """Pass this replica over for :data:`REPLICA_DOWN_S` seconds (it could not be reached)."""
        self.down_until = time.monotonic() + REPLICA_DOWN_S
        self.down_reason = why

    def is_up(self, now: float | None = None) -> bool:
        """Whether this replica is not being passed over (see :meth:`mark_down`)."""
        return (now if now is not None else time.monotonic()) >= self.down_until

    # -- context window ----------------------------------------------------------------------
    def context_window(self, model: "RemoteChat") -> tuple[int | None, str]:
        """``(tokens or None, source)``: the server's own report, else ``--context-window``,
        else ``(None, "unknown (...)")`` (the source says why: the server reports none, or its
        ``GET /models`` answered no JSON). A smaller ``--context-window`` than the server's wins
        (it is the user's own limit). Read once per base URL; nothing is cached on a failure.

        Raises:
            ModelUnavailable: ``GET /models`` (or ``/props``) failed every one of its
                :data:`PROBE_TRIES` tries (see :func:`_http_get_json`).
        """
        with self._lock:
            if self._ctx is None:
                reported, where = _reported_context(model, self)
                mine = self.cfg.context_window
                if reported and (mine is None or reported <= mine):
                    self._ctx = (reported, where)
                elif mine is not None:
                    self._ctx = (mine, "--context-window" + (f" (smaller than {where}: {reported})" if reported else ""))
                else:
                    self._ctx = (None, f"unknown ({where or 'the server reports none'}; pass --context-window)")
            return self._ctx

    def estimate_tokens(self, messages: list[BaseMessage]) -> int:
        """A prompt's size in tokens, over-counted on purpose (see the module docstring)."""
        n_bytes = sum(len(message_text(m.content).encode("utf-8")) for m in messages)
        return int(n_bytes / self._bytes_per_token) + 1 + TEMPLATE_TOKENS_PER_MESSAGE * len(messages)

    def learn(self, messages: list[BaseMessage], prompt_tokens: int | None) -> None:
        """Take the server's prompt token count of ``messages`` into the bytes-per-token ratio
        (the smallest ratio seen is kept, so the estimate stays an over-count)."""
        n_bytes = sum(len(message_text(m.content).encode("utf-8")) for m in messages)
        text_tokens = (prompt_tokens or 0) - TEMPLATE_TOKENS_PER_MESSAGE * len(messages)
        if n_bytes < LEARN_MIN_BYTES or text_tokens <= 0:   # too short to say anything about the text
            return
        ratio = n_bytes / text_tokens
        with self._lock:
            if not self._ratio_seen or ratio < self._bytes_per_token:
                self._bytes_per_token = max(ratio, 0.5)
                self._ratio_seen = True

    # -- structured outputs ------------------------------------------------------------------
    def dialect(self, model: "RemoteChat") -> str:
        """The structured-output dialect to use (probed once for ``auto`` and ``grammar``; a probe
        that fails is not cached, so the next call probes again).

        Raises:
            ModelUnavailable: a dialect's probe request failed every one of its
                :data:`PROBE_TRIES` tries (see :func:`_probe`).
        """
        with self._lock:
            if self._dialect is None:
                mode = self.cfg.structured
                if mode in ("prompt", "json"):
                    self._dialect, self._probe_note = mode, f"--structured {mode}"
                else:
                    tries = GRAMMAR_DIALECTS if mode == "grammar" else DIALECTS[:-1]
                    self._dialect, self._probe_note = _probe(model, self, tries)
                    if mode == "grammar" and self._dialect == "prompt":
                        log.warning("%s applied none of the grammar fields (%s); the format is in the "
                                    "prompt only", self.base_url, self._probe_note)
                log.info("%s: structured outputs: %s (%s)", self.base_url, self._dialect, self._probe_note)
            return self._dialect

    def report(self, model: "RemoteChat") -> dict:
        """What ``config.json`` records for this endpoint (probing it if not done yet)."""
        ctx, src = self.context_window(model)
        return {"base_url": self.base_url, "structured_requested": self.cfg.structured,
                "structured": self.dialect(model), "structured_probe": self._probe_note,
                "context_window": ctx, "context_window_source": src,
                "max_connections": self.cfg.max_connections, "adaptive_connections": self.cfg.adaptive}


def endpoint(base_url: str | None) -> Endpoint:
    """The process-wide :class:`Endpoint` of ``base_url`` (``None``: OpenAI's API)."""
    key = (base_url or "https://api.openai.com/v1").rstrip("/")
    with _REGISTRY_LOCK:
        ep = _REGISTRY.get(key)
        if ep is None:
            ep = _REGISTRY[key] = Endpoint(key, _SETTINGS)
        return ep


def parse_base_urls(text: str | None) -> list[str]:
    """The base URLs in ``OPENAI_BASE_URL``: one, or several comma-separated URLs serving the same
    model (replicas, :class:`ReplicaSet`), in the order given, trailing ``/`` dropped, repeats
    removed. ``None`` or blank: ``[]`` (OpenAI's API).

    Raises:
        ValueError: an entry that is not an ``http://`` or ``https://`` URL with a host (one line
            naming it).
    """
    out: list[str] = []
    for raw in (text or "").split(","):
        url = raw.strip().rstrip("/")
        if not url:
            continue
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"OPENAI_BASE_URL: {raw.strip()!r} is not an http(s) URL "
                             "(several servers of one model: comma-separated URLs)")
        if url not in out:
            out.append(url)
    return out


class ReplicaSet:
    """Several base URLs serving the same model, used as one.

    Each request goes to the replica with the fewest requests in flight among those with a free
    slot (on a tie, the one that has completed fewest; each replica keeps its own :class:`Endpoint`: its own ``--max-connections`` cap,
    limiter, probes, context window and connection pool); when every replica is at its cap the
    request waits for the first slot to free. A replica that could not be reached is passed over
    for :data:`REPLICA_DOWN_S` seconds (:meth:`Endpoint.mark_down`) while another is up, and the
    request goes on at once to the next one; only when every replica has failed the request does
    it fail, with the last replica's error (then :class:`mas_agents.accounting.AccountedModel`
    retries it as any call, and stops the run with its one-line error when they stay down).
    """

    def __init__(self, endpoints: list[Endpoint]):
        self.endpoints = endpoints
        self._cond = threading.Condition()
        for ep in endpoints:
            ep.limiter.on_release = self._released

    @property
    def base_urls(self) -> list[str]:
        """The replicas' base URLs, in the order given."""
        return [ep.base_url for ep in self.endpoints]

    def _released(self) -> None:
        with self._cond:
            self._cond.notify()

    def acquire(self, skip: set[str] | frozenset[str] = frozenset()) -> Endpoint | None:
        """Take a slot on the best replica not in ``skip`` (base URLs): an up replica with a free
        slot and the fewest in flight; when every replica not skipped is passed over, those too
        (the request has nowhere else to go). Waits while all candidates are at their cap.
        Returns the endpoint whose slot is held (give it back with its ``limiter.release()``),
        or None when every replica is in ``skip``."""
        with self._cond:
            while True:
                left = [ep for ep in self.endpoints if ep.base_url not in skip]
                if not left:
                    return None
                now = time.monotonic()
                up = [ep for ep in left if ep.is_up(now)] or sorted(left, key=lambda e: e.down_until)
                # fewest in flight; on a tie, fewest completed (one call at a time alternates)
                for ep in sorted(up, key=lambda e: (e.limiter.in_flight, e.limiter.completed)):
                    if ep.limiter.try_acquire():
                        return ep
                self._cond.wait(timeout=0.5)


_REPLICA_SETS: dict[tuple[str, ...], ReplicaSet] = {}


def replica_set(base_urls: list[str]) -> ReplicaSet:
    """The process-wide :class:`ReplicaSet` of ``base_urls`` (their :func:`endpoint` objects)."""
    key = tuple(u.rstrip("/") for u in base_urls)
    with _REGISTRY_LOCK:
        rs = _REPLICA_SETS.get(key)
        if rs is not None and all(_REGISTRY.get(u) is ep for u, ep in zip(key, rs.endpoints)):
            return rs
    eps = [endpoint(u) for u in key]
    with _REGISTRY_LOCK:
        rs = _REPLICA_SETS.get(key)
        if rs is None or any(a is not b for a, b in zip(rs.endpoints, eps)):
            rs = _REPLICA_SETS[key] = ReplicaSet(eps)
        return rs


def activity() -> str:
    """``"12 in flight, 35.2 calls/s"`` over every endpoint used so far ('' when none)."""
    with _REGISTRY_LOCK:
        eps = list(_REGISTRY.values())
    if not eps:
        return ""
    return (f"{sum(e.limiter.in_flight for e in eps)} in flight, "
            f"{sum(e.limiter.calls_per_s() for e in eps):.1f} calls/s")


def _replicas_down(urls: list[str], faults: list[tuple[str, BaseException]]) -> ModelUnavailable:
    """The one-line stop when every replica of a set failed: all of them named, each one's fault."""
    return ModelUnavailable(f"model servers {', '.join(urls)} are unreachable (every replica failed: "
                            + "; ".join(f"{u}: {_one_line(f)}" for u, f in faults) + ")")


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:300]
