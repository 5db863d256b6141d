"""The fast path to OpenAI-compatible servers (vLLM, llama.cpp): one shared aiohttp session.

A judge call is short, so against a fast server the client's per-call work decides the
throughput. This transport keeps one ``aiohttp.ClientSession`` (one connection pool) per event
loop for every endpoint, posts prebuilt JSON bodies, and turns HTTP failures into the typed
errors of ``errors.py`` (classified here, at the edge). It builds no client per call, logs
nothing and looks up no prices.

Sessions (one per API key, as default headers) share one connection pool. They are closed by
:meth:`AiohttpTransport.aclose`, or, if the caller never does, when ``asyncio.run`` finalises
the loop's async generators (so no "unclosed session" is left behind).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from judgekit.llm.errors import EndpointError, EndpointTimeout, EndpointUnavailable, RateLimited
from judgekit.llm.secrets import redact


async def _keeper(transport: AiohttpTransport) -> AsyncIterator[None]:
    """Lives as long as the loop; ``loop.shutdown_asyncgens()`` (run by asyncio.run) closes
    the transport's sessions and pool."""
    try:
        yield None
    finally:
        await transport._close_all()


def _host(url: str) -> str:
    parts = urlsplit(url)
    return parts.netloc or url


def _error_message(body: bytes) -> str:
    try:
        data = json.loads(body)
        error = data.get("error") if isinstance(data, dict) else None
        source = error if isinstance(error, dict) else data if isinstance(data, dict) else {}
        message = source.get("message") or source.get("detail")
        kind = " ".join(str(source[k]) for k in ("type", "code") if source.get(k) is not None)
        text = str(message if message is not None else data)[:300]
        return f"{text} ({kind})" if kind else text  # type/code classify it first
    except (ValueError, AttributeError):
        return body[:200].decode("utf-8", "replace")


class AiohttpTransport:
    """POST ``/chat/completions`` on OpenAI-compatible servers over one shared session.

    Args:
        connections: most open connections in all (0 = no cap; admission is the limiter's).
    """

    def __init__(self, connections: int = 0) -> None:
        self.connections = connections
        self._sessions: dict[tuple[tuple[str, str], ...], aiohttp.ClientSession] = {}
        self._connector: aiohttp.TCPConnector | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._keeper: Any = None
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}

    async def _session(self, headers: tuple[tuple[str, str], ...]) -> aiohttp.ClientSession:
        """The session for one header set (API key); all sessions share one connection pool."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._connector is None or self._connector.closed:
            self._sessions = {}
            self._connector = aiohttp.TCPConnector(
                limit=self.connections, limit_per_host=0, keepalive_timeout=60, ttl_dns_cache=300
            )
            self._loop = loop
            self._keeper = _keeper(self)
            await self._keeper.__anext__()
        session = self._sessions.get(headers)
        if session is None:
            session = self._sessions[headers] = aiohttp.ClientSession(
                connector=self._connector,
                connector_owner=False,
                headers=dict(headers),
                skip_auto_headers=("User-Agent",),
                raise_for_status=False,
            )
        return session

    async def _close_all(self) -> None:
        sessions, self._sessions = self._sessions, {}
        for session in sessions.values():
            await session.close()
        if self._connector is not None:
            await self._connector.close()
            self._connector = None

    async def aclose(self) -> None:
        """Close the sessions and the connection pool of the running loop (idempotent)."""
        keeper, self._keeper = self._keeper, None
        if keeper is not None and self._loop is asyncio.get_running_loop():
            await keeper.aclose()

    def _timeout(self, seconds: float) -> aiohttp.ClientTimeout:
        timeout = self._timeouts.get(seconds)
        if timeout is None:
            timeout = self._timeouts[seconds] = aiohttp.ClientTimeout(total=seconds)
        return timeout

    async def chat(
        self, url: str, body: bytes, headers: tuple[tuple[str, str], ...], timeout: float
    ) -> dict[str, Any]:
        """POST ``body`` (JSON bytes) to ``url`` with ``headers`` (pairs: the key of a shared
        session); the decoded ``chat.completion`` object.

        Raises:
            EndpointTimeout: no complete answer within ``timeout`` seconds (transient).
            EndpointUnavailable: connection refused, reset or dropped (transient).
            RateLimited: HTTP 429 (transient; ``retry_after`` from the header).
            EndpointError: any other non-200 status, its ``kind`` from the status and message
                (``errors.kind_of_status``: 401/403 ``auth``, 404 ``unknown_model``, 400
                ``bad_request`` or ``context_length``, 5xx ``server``...), or a body that is
                not JSON (``server``, transient).
        """
        session = self._sessions.get(headers)
        if session is None or self._loop is not asyncio.get_running_loop():
            session = await self._session(headers)
        try:
            async with session.post(url, data=body, timeout=self._timeout(timeout)) as response:
                status = response.status
                payload = await response.read()
                retry_after = response.headers.get("Retry-After")
        except TimeoutError:
            raise EndpointTimeout(
                f"Timeout: no answer within {timeout:g} s from {_host(url)}"
            ) from None
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, OSError) as exc:
            raise EndpointUnavailable(
                redact(f"connection to {_host(url)} failed: {type(exc).__name__}: {exc}")[:300]
            ) from None
        if status != 200:
            wait = _seconds(retry_after)
            message = redact(f"HTTP {status} from {_host(url)}: {_error_message(payload)}")
            cls = RateLimited if status == 429 else EndpointError
            raise cls(message, status_code=status, retry_after=wait)
        try:
            data = json.loads(payload)
        except ValueError:
            raise EndpointError(
                f"HTTP 200 from {_host(url)} with a body that is not JSON",
                status_code=status,
                kind="server",
            ) from None
        if not isinstance(data, dict):
            raise EndpointError(
                f"HTTP 200 from {_host(url)}: not a completion object",
                status_code=status,
                kind="server",
            )
        return data

    async def probe(
        self, url: str, headers: tuple[tuple[str, str], ...], timeout: float = 2.0
    ) -> int | None:
        """``GET url`` (a server's ``/models``): the HTTP status, or None when no response came
        (refused, reset, timed out). Used to tell when a server that went down is back."""
        session = self._sessions.get(headers)
        if session is None or self._loop is not asyncio.get_running_loop():
            session = await self._session(headers)
        try:
            async with session.get(url, timeout=self._timeout(timeout)) as response:
                await response.read()
                return response.status
        except (TimeoutError, aiohttp.ClientError, OSError):
            return None


def _seconds(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
