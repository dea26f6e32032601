"""How runs size themselves on the remote models and what they record of them:
:func:`parallel_calls` / :func:`auto_concurrency` (calls and games to keep going at once) and
:func:`endpoint_report` (the ``endpoints`` of ``config.json``). Moved unchanged from the former
single module ``mas_agents/remote.py`` (issue 51 item 6); the process-wide settings are read
from :mod:`mas_agents.remote.endpoints` at call time (``configure`` replaces them).
"""

from __future__ import annotations

from typing import Any

from mas_agents.errors import ModelUnavailable
from mas_agents.remote import endpoints as _endpoints
from mas_agents.remote.chat import RemoteChat
from mas_agents.remote.endpoints import _one_line, _replicas_down, endpoint, parse_base_urls


def _unwrap(model: Any) -> Any:
    """The chat model inside an accounted wrapper (its ``model``); a chat model itself as it is
    (a ``ChatOpenAI``'s own ``model`` attribute is its model name)."""
    return model if isinstance(model, RemoteChat) else getattr(model, "model", model)


def parallel_calls(model: Any) -> int:
    """How many calls a run should keep going at once for ``model`` (a spec or a model object):
    ``--max-connections`` for an OpenAI-compatible server (times the number of replicas when
    ``OPENAI_BASE_URL`` names several, :class:`ReplicaSet`), 1 for anything else (the embedded
    model serialises its calls on one lock, so more threads would only wait)."""
    m = _unwrap(model)
    if isinstance(m, RemoteChat):
        return _endpoints._SETTINGS.max_connections * len(m.base_urls())
    if isinstance(m, str) and m.strip().startswith("openai:"):
        import os
        try:
            replicas = len(parse_base_urls(os.environ.get("OPENAI_BASE_URL"))) or 1
        except ValueError:
            replicas = 1                     # the model's construction says what is wrong
        return _endpoints._SETTINGS.max_connections * replicas
    return 1


def auto_concurrency(models: list[Any]) -> int:
    """Games/cells a run plays at once by default: ``--max-connections`` when every model in
    ``models`` (specs or objects) is on an OpenAI-compatible server, else 1. An empty list (all
    seats are WiS-protocol agents) counts as remote."""
    return min((parallel_calls(m) for m in models), default=_endpoints._SETTINGS.max_connections)


def endpoint_report(models: list[Any]) -> list[dict]:
    """:meth:`Endpoint.report` of every :class:`RemoteChat` among ``models`` (accounted wrappers
    are unwrapped; other models are skipped), one entry per base URL. A model on several
    replicas (:class:`ReplicaSet`) gives one entry per replica, each with ``replicas`` (every
    base URL of its set); a replica whose probes failed every try is recorded with
    ``unreachable`` (the one-line fault) and passed over, as long as another replica answered.

    Raises:
        ModelUnavailable: a probe of a single base URL, or of every replica of a set, failed
            every try.
    """
    out: dict[str, dict] = {}
    for m in models:
        m = _unwrap(m)
        if not isinstance(m, RemoteChat):
            continue
        urls = m.base_urls()
        faults = []
        for url in urls:
            if url in out:
                continue
            ep = endpoint(url)
            try:
                rep = ep.report(m)
            except ModelUnavailable as exc:
                if len(urls) == 1:
                    raise
                faults.append(exc)
                ep.mark_down(_one_line(exc))
                rep = {"base_url": url, "unreachable": _one_line(exc), "max_connections": ep.cfg.max_connections,
                       "adaptive_connections": ep.cfg.adaptive}
            if len(urls) > 1:
                rep["replicas"] = list(urls)
            out[url] = rep
        if faults and len(faults) == len(urls):
            raise _replicas_down(urls, list(zip(urls, faults))) from faults[-1]
    return list(out.values())
