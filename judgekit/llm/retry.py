"""Retry policy for transient failures (tenacity): 429, 5xx, timeouts and connection errors.

Attempts are bounded by count and by total time; back-off is exponential with jitter and honours
a server's ``Retry-After`` header when it sends one. Invalid answers are not retried here: they
go to the bounded re-ask in ``client.py``.
"""

from __future__ import annotations

from typing import Any

import litellm
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential_jitter,
)

_TRANSIENT = (
    litellm.RateLimitError,
    litellm.Timeout,
    litellm.APIConnectionError,
    litellm.InternalServerError,
    litellm.ServiceUnavailableError,
    litellm.BadGatewayError,
)


def is_transient(exc: BaseException) -> bool:
    """True for errors worth another attempt (rate limits, server errors, timeouts)."""
    if isinstance(exc, _TRANSIENT):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


def retry_after_seconds(exc: BaseException) -> float | None:
    """The ``Retry-After`` value (seconds) carried by an HTTP error, if any."""
    response = getattr(exc, "response", None)
    headers: Any = getattr(response, "headers", None) or {}
    value = headers.get("retry-after") if hasattr(headers, "get") else None
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


class _WaitRetryAfter(wait_exponential_jitter):
    """Exponential back-off with jitter, but never shorter than the server's Retry-After."""

    def __call__(self, retry_state: Any) -> float:
        base = super().__call__(retry_state)
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        hint = retry_after_seconds(exc) if exc else None
        return max(base, hint) if hint is not None else base


def retrying(max_attempts: int, max_wait: float, max_total: float) -> AsyncRetrying:
    """An AsyncRetrying for one call: ``max_attempts`` tries within ``max_total`` seconds."""
    return AsyncRetrying(
        retry=retry_if_exception(is_transient),
        stop=stop_after_attempt(max_attempts) | stop_after_delay(max_total),
        wait=_WaitRetryAfter(initial=0.5, max=max_wait, jitter=1.0),
        reraise=True,
    )
