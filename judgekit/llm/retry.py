"""Retry policy for transient failures (tenacity): 429, 5xx, timeouts and connection errors.

Attempts are bounded by count and by total time: no back-off that would end past the deadline
(time spent queued behind other tasks for an endpoint slot does not count). Back-off is
exponential with jitter and never shorter than a server's ``Retry-After``. Invalid answers are
not retried here: they go to the bounded re-ask in ``client.py``. Nothing here imports litellm:
its errors are recognised if it is loaded.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)
from tenacity.stop import stop_base

# Seconds the current task has spent waiting for an endpoint slot (set per task by the client,
# added to by the sender): queueing behind other tasks is not time spent retrying.
QUEUED: ContextVar[list[float] | None] = ContextVar("judgekit_queued", default=None)

_TRANSIENT_STATUS = frozenset({408, 409, 425, 429})
_LITELLM_TRANSIENT = (
    "RateLimitError",
    "Timeout",
    "APIConnectionError",
    "InternalServerError",
    "ServiceUnavailableError",
    "BadGatewayError",
)


class EndpointError(Exception):
    """An HTTP call that got no usable answer.

    Attributes:
        status_code: HTTP status (None when no response arrived).
        retry_after: the server's ``Retry-After`` in seconds, if it sent one.
        transient: whether another attempt may succeed (429, 408, 5xx, timeouts, connection).
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
        transient: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retry_after = retry_after
        if transient is None:
            transient = status_code is None or _transient_status(status_code)
        self.transient = transient


class EndpointTimeout(EndpointError):
    """No answer within the spec's ``timeout``."""


class EndpointUnavailable(EndpointError):
    """The endpoint refused or dropped the connection (server down, restarting)."""


class RateLimited(EndpointError):
    """HTTP 429 from the endpoint."""


def _transient_status(status: int) -> bool:
    return status in _TRANSIENT_STATUS or status >= 500


def _litellm_transient() -> tuple[type[BaseException], ...]:
    litellm = sys.modules.get("litellm")
    if litellm is None:
        return ()
    return tuple(getattr(litellm, name) for name in _LITELLM_TRANSIENT if hasattr(litellm, name))


def is_transient(exc: BaseException) -> bool:
    """True for errors worth another attempt (rate limits, server errors, timeouts, refused
    connections); False for refusals such as 400/401/404 and for invalid answers."""
    flag = getattr(exc, "transient", None)
    if isinstance(flag, bool):
        return flag
    if isinstance(exc, asyncio.TimeoutError | TimeoutError | ConnectionError):
        return True
    if isinstance(exc, _litellm_transient()):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and _transient_status(status)


def is_rate_limit(exc: BaseException) -> bool:
    """True for HTTP 429 (ours or litellm's)."""
    return getattr(exc, "status_code", None) == 429 or type(exc).__name__ == "RateLimitError"


def retry_after_seconds(exc: BaseException) -> float | None:
    """The ``Retry-After`` value (seconds) carried by an HTTP error, if any."""
    value: Any = getattr(exc, "retry_after", None)
    if value is None:
        response = getattr(exc, "response", None)
        headers: Any = getattr(response, "headers", None) or {}
        value = headers.get("retry-after") if hasattr(headers, "get") else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except (TypeError, ValueError):
        return None


class _WaitRetryAfter(wait_exponential_jitter):
    """Exponential back-off with jitter, but never shorter than the server's Retry-After."""

    def __call__(self, retry_state: Any) -> float:
        base = super().__call__(retry_state)
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        hint = retry_after_seconds(exc) if exc else None
        return max(base, hint) if hint is not None else base


class stop_before_budget(stop_base):  # noqa: N801 (tenacity's naming)
    """Stop before a back-off that would end past ``max_total`` seconds of retrying, where
    time spent queued for a slot (``queued()``) does not count."""

    def __init__(self, max_total: float, queued: Callable[[], float] | None = None) -> None:
        self.max_total = max_total
        self.queued = queued

    def __call__(self, retry_state: Any) -> bool:
        active = (retry_state.seconds_since_start or 0.0) - (self.queued() if self.queued else 0)
        return active + (retry_state.upcoming_sleep or 0.0) >= self.max_total


def retrying(
    max_attempts: int,
    max_wait: float,
    max_total: float,
    queued: Callable[[], float] | None = None,
) -> AsyncRetrying:
    """An AsyncRetrying for one call: at most ``max_attempts`` tries, and no back-off that
    would end past ``max_total`` seconds of retrying (time in ``queued()`` excluded).
    Re-raises the last error."""
    return AsyncRetrying(
        retry=retry_if_exception(is_transient),
        stop=stop_after_attempt(max_attempts) | stop_before_budget(max_total, queued),
        wait=_WaitRetryAfter(multiplier=0.5, max=max_wait, jitter=1.0),
        reraise=True,
    )
