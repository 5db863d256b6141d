"""How one attempt reaches an endpoint: the :class:`Sender` and the single-endpoint backend.

The :class:`Sender` makes one attempt on one endpoint: it waits while the endpoint is paused by
the outage policy, takes a slot, counts the request as sent (``retry.CallState``), calls the
endpoint's provider (``providers/``: the aiohttp transport for OpenAI-compatible servers,
litellm for the others, instructor for tool calling) and gives the slot back, telling the
limiter about 429s and the endpoint's health about answers and refusals (``health.py``).
``SingleBackend`` serves a spec with one endpoint; ``router.RoutedBackend`` serves several.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from judgekit.llm.endpoint import Completion, Endpoint, litellm_route, make_endpoint
from judgekit.llm.errors import EndpointError
from judgekit.llm.providers import openai_compat
from judgekit.llm.providers.tools import ToolsProvider
from judgekit.llm.retry import CALL, CallState
from judgekit.llm.spec import ModelSpec
from judgekit.llm.structured import InvalidAnswer, OutputFormat, estimate_tokens
from judgekit.llm.transport import AiohttpTransport

__all__ = ["Backend", "Completion", "Endpoint", "Sender", "SingleBackend", "litellm_route"]
__all__ += ["make_endpoint"]


class Sender:
    """Makes one attempt on one endpoint (see the module doc)."""

    def __init__(self, transport: AiohttpTransport) -> None:
        self.transport = transport
        self.on_notice: Callable[[str], None] | None = None  # an endpoint's outage began/ended
        # awaited once a slot is taken, before the request goes: no request is sent while the
        # run log cannot be written (a full disk; ``RunLog.wait_writable``)
        self.before_send: Callable[[], Awaitable[None]] | None = None
        self._tools = ToolsProvider()

    async def send(
        self, ep: Endpoint, messages: list[dict[str, Any]], fmt: OutputFormat
    ) -> Completion:
        """One attempt (sent again, uncounted as a retry, after an outage the endpoint came
        back from). Raises the provider's ``EndpointError`` or ``InvalidAnswer`` (tools)."""
        state = CALL.get()
        tokens = estimate_tokens(messages) + ep.spec.max_tokens if ep.limiter.has_tpm else 0
        while True:
            gated = await self._admit(ep, tokens, state)
            ok, limited, wait = False, False, None
            try:
                result = await self._call(ep, messages, fmt)
                ok = True
                ep.health.on_success()
                result.health = ep.health
                return result
            except InvalidAnswer:
                ok = True  # the endpoint answered; the answer is the problem
                ep.health.on_success()
                raise
            except EndpointError as exc:
                exc.endpoint = ep.id
                limited = exc.kind == "rate_limit"
                wait = exc.retry_after if limited else None
                if exc.kind != "connection" or not self._pause(ep):
                    ep.health.on_error(exc)
                    raise
            finally:
                ep.limiter.release(ok=ok, rate_limited=limited, retry_after=wait)
                if gated:
                    await ep.health.leave()

    async def _admit(self, ep: Endpoint, tokens: int, state: CallState | None) -> bool:
        """Wait out an outage, for a place before the endpoint's first answer (True if one was
        taken), then for a slot, then (``before_send``) for the run log to be writable; count
        the request as sent once admitted.

        Raises:
            JudgekitError: the endpoint's stop verdict (``health.py``), or the run log cannot
                be written (``OutputError``); the slot is given back, nothing is sent.
        """
        start = time.monotonic()
        await ep.health.wait_ready()
        gated = await ep.health.enter()
        try:
            await ep.limiter.acquire(tokens)
        except BaseException:
            if gated:
                await ep.health.leave()
            raise
        try:
            ep.health.check()  # refused alike while this waited for its slot: not sent
            if self.before_send is not None:
                await self.before_send()
        except BaseException:
            ep.limiter.release()
            if gated:
                await ep.health.leave()
            raise
        if state is not None:
            state.queued += time.monotonic() - start
            state.sent()
        return gated

    def _pause(self, ep: Endpoint) -> bool:
        """Whether ``ep`` is (now) paused by the outage policy (a probe is then running)."""
        if ep.health.probe is None and ep.api_base:
            transport = self.transport
            ep.health.probe = lambda: openai_compat.server_is_up(transport, ep)
            ep.health.notify = self.on_notice
        return ep.health.begin_outage()

    async def _call(
        self, ep: Endpoint, messages: list[dict[str, Any]], fmt: OutputFormat
    ) -> Completion:
        if ep.fast:
            return await openai_compat.chat(self.transport, ep, messages, fmt)
        if fmt.strategy == "tools":
            return await self._tools.chat(ep, messages, fmt)
        from judgekit.llm.providers import litellm as litellm_provider

        return await litellm_provider.chat(ep, messages, fmt)


class Backend(Protocol):
    """What the client calls: one attempt for a spec, on whichever endpoint serves it."""

    spec: ModelSpec
    endpoints: dict[str, Endpoint]

    async def complete(
        self, messages: list[dict[str, Any]], fmt: OutputFormat, last_attempt: bool
    ) -> Completion: ...


class SingleBackend:
    """A spec served by one endpoint."""

    def __init__(self, spec: ModelSpec, sender: Sender, endpoint: Endpoint) -> None:
        self.spec = spec
        self.sender = sender
        self.endpoint = endpoint
        self.endpoints = {endpoint.id: endpoint}

    async def complete(
        self, messages: list[dict[str, Any]], fmt: OutputFormat, last_attempt: bool
    ) -> Completion:
        return await self.sender.send(self.endpoint, messages, fmt)
