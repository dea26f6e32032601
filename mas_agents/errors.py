"""The model-call faults a game or a run has to tell apart (a leaf module: imports nothing of ours).

* :class:`ContextOverflowError`: a prompt does not fit the model's context window. A setting
  problem (budgets, ``n_ctx``, ``--context-window``): the run stops with one line, never retried.
* :class:`CallFailed`: one logical call failed after its retries (a timeout, a 5xx, a 429, a
  malformed or empty response) or was refused on its own (a 400 for this request). The action it was for becomes what the game's rules say for no
  answer (abstention, foul, no proposal), counted in ``result.json``; the game goes on.
* :class:`ModelUnavailable`: the backend is down (connection refused after the retries, three
  calls in a row failed, or a start-up probe of :mod:`mas_agents.remote` failed every one of its
  tries) or refuses every request (401/403/404). The run stops with one line; what is finished is
  kept, and rerunning the command continues.
"""

from __future__ import annotations

__all__ = ["CallFailed", "ContextOverflowError", "MalformedResponse", "ModelUnavailable", "RunStopped"]


class ContextOverflowError(ValueError):
    """The prompt does not fit: ``prompt_tokens > n_ctx - max_tokens``.

    Raised before any generation by the local model (exact token count) and by the remote client
    (a conservative estimate, see :mod:`mas_agents.remote`), or made from a server's
    context-length rejection (HTTP 400). The prompt is never silently truncated. Not transient,
    so :class:`mas_agents.accounting.AccountedModel` does not retry it.

    The message says only what is known: with ``n_ctx`` it reads "prompt is P tokens but only L
    fit (n_ctx N - max_tokens M); ...". A server that rejects the prompt without saying its
    context size gives ``n_ctx=None``: the message then names the prompt size (estimated or the
    server's count), the reply cap, that the server did not say its context size, and (in
    ``detail``) the server's own words; no limit is invented.

    Attributes:
        prompt_tokens: tokens of the chat-formatted prompt (template included); for a remote
            model an estimate (``estimated``) or the server's own count.
        limit: ``n_ctx - max_tokens``, the most prompt tokens allowed; None when ``n_ctx`` is.
        n_ctx: the context window (None: the server did not say it); max_tokens: the reply cap.
        where: the endpoint, for a remote model ("" for a local one).
        estimated: whether ``prompt_tokens`` is our estimate rather than a count.
    """

    def __init__(self, prompt_tokens: int, n_ctx: int | None, max_tokens: int, n_ctx_train: int | None = None, *,
                 where: str = "", estimated: bool = False, detail: str = ""):
        self._init_args = ((prompt_tokens, n_ctx, max_tokens, n_ctx_train),
                           {"where": where, "estimated": estimated, "detail": detail})
        self.prompt_tokens = prompt_tokens
        self.n_ctx = n_ctx
        self.max_tokens = max_tokens
        self.limit = None if n_ctx is None else n_ctx - max_tokens
        self.where = where
        self.estimated = estimated
        trained = f" (the model was trained with {n_ctx_train})" if n_ctx_train else ""
        about = "about " if estimated else ""
        at = f"model server {where}: " if where else ""
        extra = f" [{detail}]" if detail else ""
        if n_ctx is None:
            counted = "our estimate" if estimated else "the server's count"
            super().__init__(
                f"{at}the server rejected the prompt as too long for its context: prompt is {about}{prompt_tokens} "
                f"tokens ({counted}) with max_tokens {max_tokens}, and the server did not say its context "
                f"size; shorten the prompt, lower max_tokens or raise the server's context size{trained}{extra}")
            return
        super().__init__(
            f"{at}prompt is {about}{prompt_tokens} tokens but only {self.limit} fit "
            f"(n_ctx {n_ctx} - max_tokens {max_tokens}); shorten the prompt, lower max_tokens "
            f"or raise n_ctx{trained}{extra}")

    def __reduce__(self):
        # picklable with its own arguments (a cell on a Ray worker sends it back to the driver)
        args, kwargs = self._init_args
        return (_rebuild_overflow, (args, kwargs))


def _rebuild_overflow(args: tuple, kwargs: dict) -> "ContextOverflowError":
    return ContextOverflowError(*args, **kwargs)


class RunStopped(RuntimeError):
    """Base of the faults that stop a whole run with a one-line error (finished work is kept)."""


class ModelUnavailable(RunStopped):
    """The model backend is down or refuses every request; the message names the endpoint and
    what it said, in one line (for a start-up probe also the request and how many tries)."""


class CallFailed(RuntimeError):
    """One logical model call failed for good (after its retries); the game goes on.

    Attributes:
        call_id: the call's id in ``llm_calls.jsonl`` (recorded with ``ok=False``).
        error: ``"ExceptionType: message"`` of the last attempt.
    """

    def __init__(self, call_id: str, error: str):
        self.call_id = call_id
        self.error = error
        super().__init__(f"model call failed: {error}")


class MalformedResponse(RuntimeError):
    """A server answered 200 with no usable reply (no choices, a body that is not a completion).
    Retried like a 5xx."""
