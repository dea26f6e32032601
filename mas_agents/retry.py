"""Which failures of a model call are worth retrying, which mean the backend is down or refuses
every request, and how long the server asked to wait (:func:`is_transient_error`,
:func:`retry_after_s`). Split from :mod:`mas_agents.accounting` (issue 51 item 6), whose
:class:`~mas_agents.accounting.AccountedModel` retries by these rules.
"""

from __future__ import annotations

import functools
import json

from mas_agents.errors import MalformedResponse

__all__ = ["REFUSALS", "is_transient_error", "retry_after_s"]

@functools.lru_cache(maxsize=1)
def _transient_types() -> tuple[type[BaseException], ...]:
    types: list[type[BaseException]] = [TimeoutError, ConnectionError, MalformedResponse]
    try:
        import openai

        # APITimeoutError is a subclass of APIConnectionError; listed for clarity.
        types += [openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError,
                  openai.InternalServerError, openai.APIResponseValidationError]
    except ImportError:  # pragma: no cover - openai is a hard dependency
        pass
    return tuple(types)


def is_transient_error(exc: BaseException) -> bool:
    """Whether ``exc`` is worth retrying.

    True for ``openai.APITimeoutError``, ``openai.APIConnectionError``, ``openai.RateLimitError``,
    ``openai.InternalServerError`` (HTTP >= 500), HTTP 408 and 409, ``openai.APIResponseValidationError`` and
    :class:`mas_agents.errors.MalformedResponse` (a body that is not a completion), a
    ``json.JSONDecodeError`` raised while reading a response, and the builtin ``TimeoutError`` /
    ``ConnectionError``. False for everything else, notably
    :class:`mas_agents.errors.ContextOverflowError` (the same prompt would overflow again) and
    ``openai.BadRequestError`` / other 4xx errors.
    """
    if isinstance(exc, json.JSONDecodeError):
        return True
    if getattr(exc, "status_code", None) in (408, 409):     # request timeout / conflict: try again
        return True
    return isinstance(exc, _transient_types())


def _is_unreachable(exc: BaseException) -> bool:
    """A connection that could not be made or broke (not a timeout: a slow server is up)."""
    try:
        import openai
    except ImportError:  # pragma: no cover
        return isinstance(exc, ConnectionError)
    if isinstance(exc, openai.APITimeoutError):
        return False
    return isinstance(exc, (openai.APIConnectionError, ConnectionError))


#: HTTP statuses a server gives every request alike: the key, the permission, the model name.
REFUSALS = (401, 403, 404)


def _is_refusal(exc: BaseException) -> bool:
    """A 401/403/404: the server refuses every request of this run alike."""
    return getattr(exc, "status_code", None) in REFUSALS


def _is_request_error(exc: BaseException) -> bool:
    """Another 4xx (400, 413, 422, ...): this request was refused; the next may not be."""
    code = getattr(exc, "status_code", None)
    return isinstance(code, int) and 400 <= code < 500 and code not in (408, 409, 429) + REFUSALS


def retry_after_s(exc: BaseException, cap: float = 60.0) -> float | None:
    """Seconds the server asked to wait (``Retry-After`` / ``retry-after-ms`` headers of a 429 or
    503), capped at ``cap``; None when it did not say."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms"):
            return min(float(headers["retry-after-ms"]) / 1000.0, cap)
        if headers.get("retry-after"):
            return min(float(headers["retry-after"]), cap)
    except ValueError:
        return None
    return None
