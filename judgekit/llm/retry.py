"""Retry policy for transient failures (tenacity): 429, 5xx, timeouts and connection errors.

Attempts are bounded by count and by total time: no back-off that would end past the deadline
(time spent queued behind other tasks for an endpoint slot, or paused while the endpoint is
down, does not count). Back-off is exponential with jitter and never shorter than a server's
``Retry-After``. Invalid answers are not retried here: they go to the bounded re-ask in
``call.py``. Which errors are transient is decided where they arise (``errors.py``, the
providers); nothing here knows a provider.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)
from tenacity.stop import stop_base

from judgekit.llm.errors import TRANSIENT_KINDS, kind_of_status


@dataclass
class CallState:
    """What one task's call counts while it runs (set per task by ``call.py``, updated by the
    sender): HTTP requests sent (``attempts``; ``on_sent`` is called for each, when it is sent,
    not while it waits for a slot) and seconds spent waiting for an endpoint slot or for an
    endpoint to come back (``queued``: not time spent retrying, not latency); ``on_transient``
    is called with each attempt's transient failure (a timeout, 429, 5xx, refused connection),
    so a run can say why its requests outnumber its records."""

    on_sent: Callable[[], None] | None = None
    attempts: int = 0
    queued: float = 0.0
    on_transient: Callable[[BaseException], None] | None = None

    def failed(self, exc: BaseException) -> None:
        """Report ``exc`` to ``on_transient`` where it is transient."""
        if self.on_transient is not None and is_transient(exc):
            self.on_transient(exc)

    def sent(self) -> None:
        """Count one request sent."""
        self.attempts += 1
        if self.on_sent is not None:
            self.on_sent()


CALL: ContextVar[CallState | None] = ContextVar("judgekit_call", default=None)


def is_transient(exc: BaseException) -> bool:
    """True for errors worth another attempt (rate limits, server errors, timeouts, refused
    connections); False for refusals such as 400/401/404 and for invalid answers. Reads the
    ``transient`` flag the provider edge set (``errors.EndpointError``)."""
    flag = getattr(exc, "transient", None)
    if isinstance(flag, bool):
        return flag
    if isinstance(exc, asyncio.TimeoutError | TimeoutError | ConnectionError):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and kind_of_status(status) in TRANSIENT_KINDS


def is_rate_limit(exc: BaseException) -> bool:
    """True for HTTP 429."""
    return getattr(exc, "kind", None) == "rate_limit" or getattr(exc, "status_code", None) == 429


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
