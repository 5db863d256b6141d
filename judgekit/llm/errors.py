"""The errors of one attempt on an endpoint, classified where they arise (the provider edge).

Every transport turns its failures into an :class:`EndpointError` whose ``kind`` says what went
wrong and whether another attempt may succeed: the aiohttp transport from the HTTP status, the
litellm provider from litellm's exception types (``providers/litellm.py``). The retry policy
(``retry.py``) only reads ``transient``; it knows no provider.

Kinds (``EndpointError.kind``):

* transient: ``rate_limit`` (429), ``server`` (5xx, 408, 409, 425), ``timeout``, ``connection``
  (refused, reset or dropped; see the outage policy in ``health.py``);
* not transient, the endpoint refuses every task alike: ``auth`` (401, 403, missing
  credentials), ``unknown_model`` (404), ``bad_request`` (400, 422, other 4xx);
* not transient, this task only: ``context_length`` (the prompt does not fit the model).
"""

from __future__ import annotations

import re
from typing import Literal

ErrorKind = Literal[
    "rate_limit",
    "server",
    "timeout",
    "connection",
    "auth",
    "unknown_model",
    "bad_request",
    "context_length",
]

TRANSIENT_KINDS: frozenset[str] = frozenset({"rate_limit", "server", "timeout", "connection"})
# Non-transient kinds that say something about the endpoint, not the task: the same one on the
# first tasks of an endpoint stops the run (``health.py``).
ENDPOINT_KINDS: frozenset[str] = frozenset({"auth", "unknown_model", "bad_request"})

_TRANSIENT_STATUS = frozenset({408, 409, 425, 429})
# the prompt does not fit: OpenAI's code, llama.cpp's type and message, vLLM's message
_CONTEXT = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|too many tokens|prompt is too long"
    r"|context_length_exceeded|exceed_context_size|longer than the maximum model length"
    r"|exceeds the available context|input is too long",
    re.IGNORECASE,
)
_NO_CREDENTIALS = re.compile(
    r"missing credentials|api_key client option must be set|no api key|api key not (set|found)",
    re.IGNORECASE,
)


def kind_of_status(status: int | None, message: str = "") -> ErrorKind:
    """The kind of an HTTP failure with ``status`` (None: no response arrived) and ``message``.

    A 400 or 413 whose message speaks of the context length is ``context_length``; a message
    about missing credentials is ``auth`` whatever the status (litellm reports a missing key
    as a 500)."""
    if _NO_CREDENTIALS.search(message):
        return "auth"
    if status is None:
        return "connection"
    if status == 429:
        return "rate_limit"
    if status in _TRANSIENT_STATUS or status >= 500:
        return "server"
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "unknown_model"
    if status in (400, 413, 422) and _CONTEXT.search(message):
        return "context_length"
    return "bad_request"


class EndpointError(Exception):
    """An attempt that got no usable answer.

    Attributes:
        status_code: HTTP status (None when no response arrived).
        retry_after: the server's ``Retry-After`` in seconds, if it sent one.
        kind: what went wrong (see the module doc).
        transient: whether another attempt may succeed (kinds ``rate_limit``, ``server``,
            ``timeout``, ``connection``).
        endpoint: id of the endpoint that failed (``route@host``), set by the sender.
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
        transient: bool | None = None,
        kind: ErrorKind | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retry_after = retry_after
        self.kind: ErrorKind = kind or kind_of_status(status_code, message)
        self.transient = self.kind in TRANSIENT_KINDS if transient is None else transient
        self.endpoint: str | None = None


class EndpointTimeout(EndpointError):
    """No answer within the spec's ``timeout`` (transient)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="timeout")


class EndpointUnavailable(EndpointError):
    """The endpoint refused or dropped the connection: server down or restarting (transient)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="connection")


class RateLimited(EndpointError):
    """HTTP 429 from the endpoint (transient; ``retry_after`` from its header)."""


def describe(kind: str) -> str:
    """A few words for ``kind``, for error lines (``auth`` -> ``authentication refused``)."""
    return {
        "auth": "authentication refused",
        "unknown_model": "model not found",
        "bad_request": "request rejected",
        "context_length": "prompt longer than the context window",
        "rate_limit": "rate limited",
        "server": "server error",
        "timeout": "timeout",
        "connection": "connection failed",
    }.get(kind, kind)
