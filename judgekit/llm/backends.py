"""Endpoints and how one attempt reaches them: judgekit's aiohttp transport or litellm.

An :class:`Endpoint` is one server (or one API route) with its own admission limiter. The
:class:`Sender` makes one attempt on one endpoint: it takes a slot, sends the request over the
shared aiohttp session (OpenAI-compatible servers) or through ``litellm.acompletion`` (any other
provider; instructor for tool calling), and gives the slot back, telling the limiter about 429s.
``SingleBackend`` serves a spec with one endpoint; ``router.RoutedBackend`` serves several.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from pydantic import BaseModel

from judgekit.llm.limits import EndpointLimiter
from judgekit.llm.retry import QUEUED, is_rate_limit, is_transient, retry_after_seconds
from judgekit.llm.secrets import resolve_key
from judgekit.llm.spec import Deployment, ModelSpec
from judgekit.llm.structured import (
    InvalidAnswer,
    OutputFormat,
    answer_of,
    estimate_tokens,
    with_hint,
)
from judgekit.llm.transport import AiohttpTransport
from judgekit.llm.usage import Prices, prices_for


@dataclass
class Completion:
    """One answer as received: raw text, finish reason, usage, and who served it."""

    raw: str | None
    finish_reason: str | None
    tokens_in: int
    tokens_out: int
    cost: float | None  # None: no price known for the route
    served_by: str
    spec: ModelSpec
    parsed: BaseModel | None = None  # set when the backend validated already (instructor)


def litellm_route(spec: ModelSpec) -> str:
    """The route litellm understands: OpenAI-compatible servers go through ``openai/``."""
    if spec.provider in ("local", "openai_compatible"):
        return f"openai/{spec.model_id}"
    return spec.model


@dataclass
class Endpoint:
    """One deployment of a spec: URL, key, limiter and the request prefix per output format.

    Attributes:
        id: ``route@host`` (unique per client; the Router's deployment id).
        fast: True to use the aiohttp transport, False for litellm.
    """

    id: str
    spec: ModelSpec
    api_base: str | None
    api_key: str | None
    limiter: EndpointLimiter
    fast: bool
    prices: Prices
    headers: tuple[tuple[str, str], ...] = ()
    _prefixes: dict[tuple[str, str], bytes] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return (self.api_base or "").rstrip("/") + "/chat/completions"

    def prefix(self, fmt: OutputFormat) -> bytes:
        """The request body up to ``"messages":`` (everything constant for this format)."""
        key = (fmt.digest, fmt.strategy)
        cached = self._prefixes.get(key)
        if cached is None:
            params = self.spec.params()
            extra_body = params.pop("extra_body", None)  # litellm's way to add raw fields
            body = {"model": self.spec.model_id, **params, **fmt.fields}
            if isinstance(extra_body, dict):
                body.update(extra_body)
            text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
            cached = self._prefixes[key] = (text[:-1] + ',"messages":').encode("utf-8")
        return cached


def make_endpoint(
    spec: ModelSpec,
    deployment: Deployment | None = None,
    api_base: str | None = None,
    local_limiters: dict[str, EndpointLimiter] | None = None,
) -> Endpoint:
    """An endpoint for ``spec`` served at ``deployment`` (default: the spec's own endpoint);
    ``api_base`` overrides the URL (the embedded server's, known only once started). An
    embedded server has one slot: every spec on it shares one limiter, kept in
    ``local_limiters`` by URL, so no call waits inside the server (that wait would count as
    latency and against the timeout).

    Raises:
        JudgekitError: the API key's variable or file is missing.
    """
    dep = deployment or spec.endpoints()[0]
    base = api_base or dep.api_base or spec.api_base
    key = resolve_key(dep.api_key_env or spec.api_key_env, dep.api_key_file or spec.api_key_file)
    limiter = EndpointLimiter(
        dep.max_concurrency or spec.concurrency(),
        adaptive=spec.adaptive_concurrency,
        rpm=dep.rpm if dep.rpm is not None else spec.rpm,
        tpm=dep.tpm if dep.tpm is not None else spec.tpm,
    )
    if spec.is_local and local_limiters is not None:
        limiter = local_limiters.setdefault(base or "", limiter)
    fast = spec.uses_aiohttp() and base is not None
    headers = [("Content-Type", "application/json")]
    if key or fast:
        headers.append(("Authorization", f"Bearer {key or 'none'}"))
    host = urlsplit(base).netloc if base else "api"
    return Endpoint(
        f"{spec.model}@{host}", spec, base, key, limiter, fast, prices_for(spec), tuple(headers)
    )


class Sender:
    """Makes one attempt on one endpoint (see the module doc)."""

    def __init__(self, transport: AiohttpTransport) -> None:
        self.transport = transport
        self._instructor: Any = None

    async def send(
        self, ep: Endpoint, messages: list[dict[str, Any]], fmt: OutputFormat
    ) -> Completion:
        """One attempt. Raises the transport's or litellm's errors, or InvalidAnswer (tools)."""
        tokens = estimate_tokens(messages) + ep.spec.max_tokens if ep.limiter.has_tpm else 0
        queued = QUEUED.get()
        if queued is None:
            await ep.limiter.acquire(tokens)
        else:
            start = time.monotonic()
            await ep.limiter.acquire(tokens)
            queued[0] += time.monotonic() - start
        ok, limited, wait = False, False, None
        try:
            if ep.fast:
                result = await self._aiohttp(ep, messages, fmt)
            else:
                result = await self._litellm(ep, messages, fmt)
            ok = True
            return result
        except InvalidAnswer:
            ok = True  # the endpoint answered; the answer is the problem
            raise
        except BaseException as exc:
            limited = is_rate_limit(exc)
            wait = retry_after_seconds(exc) if limited else None
            raise
        finally:
            ep.limiter.release(ok=ok, rate_limited=limited, retry_after=wait)

    async def _aiohttp(
        self, ep: Endpoint, messages: list[dict[str, Any]], fmt: OutputFormat
    ) -> Completion:
        if fmt.hint is not None:
            messages = with_hint(messages, fmt)
        body = ep.prefix(fmt) + json.dumps(messages, ensure_ascii=False).encode("utf-8") + b"}"
        data = await self.transport.chat(ep.url, body, ep.headers, ep.spec.timeout)
        raw, finish = answer_of(data)
        usage = data.get("usage") or {}
        t_in = int(usage.get("prompt_tokens") or 0)
        t_out = int(usage.get("completion_tokens") or 0)
        return Completion(raw, finish, t_in, t_out, ep.prices.cost(t_in, t_out), ep.id, ep.spec)

    def litellm_kwargs(self, ep: Endpoint, fmt: OutputFormat) -> dict[str, Any]:
        """Keyword arguments of ``litellm.acompletion`` for ``ep`` (no retries inside)."""
        kwargs: dict[str, Any] = dict(ep.spec.params())
        kwargs.update(timeout=ep.spec.timeout, num_retries=0)
        if ep.api_base:
            kwargs["api_base"] = ep.api_base
        if ep.api_key:
            kwargs["api_key"] = ep.api_key
        elif ep.spec.is_openai_compatible_server:
            kwargs["api_key"] = "sk-none"
        if fmt.strategy != "tools":
            kwargs.update(fmt.fields)
        return kwargs

    async def _litellm(
        self, ep: Endpoint, messages: list[dict[str, Any]], fmt: OutputFormat
    ) -> Completion:
        import litellm

        kwargs = self.litellm_kwargs(ep, fmt)
        route = litellm_route(ep.spec)
        if fmt.strategy == "tools":
            raw, finish, response, parsed = await self._tools(route, messages, fmt, kwargs)
        else:
            response = await litellm.acompletion(
                model=route, messages=with_hint(messages, fmt), **kwargs
            )
            choice = response.choices[0]
            raw, finish, parsed = choice.message.content, choice.finish_reason, None
        return completion_of(response, raw, finish, ep, parsed)

    async def _tools(
        self, route: str, messages: list[dict[str, Any]], fmt: OutputFormat, kwargs: dict
    ) -> tuple[str | None, str | None, Any, BaseModel | None]:
        import instructor
        import litellm
        from instructor.core.exceptions import InstructorRetryException

        if self._instructor is None:
            self._instructor = instructor.from_litellm(
                litellm.acompletion, mode=instructor.Mode.TOOLS
            )
        try:
            parsed, response = await self._instructor.chat.completions.create_with_completion(
                model=route, messages=messages, response_model=fmt.schema, max_retries=0, **kwargs
            )
        except InstructorRetryException as exc:
            cause = exc.__cause__ or exc.__context__
            if cause is not None and is_transient(cause):
                raise cause from None
            if exc.last_completion is None:
                raise
            raw = tool_arguments(exc.last_completion)
            raise InvalidAnswer(f"schema: {exc}".split("\n")[0][:300], raw) from None
        return tool_arguments(response), response.choices[0].finish_reason, response, parsed


def completion_of(
    response: Any, raw: str | None, finish: str | None, ep: Endpoint, parsed: BaseModel | None
) -> Completion:
    """A :class:`Completion` from a litellm ``ModelResponse``."""
    usage = getattr(response, "usage", None)
    t_in = int(getattr(usage, "prompt_tokens", 0) or 0)
    t_out = int(getattr(usage, "completion_tokens", 0) or 0)
    return Completion(raw, finish, t_in, t_out, ep.prices.cost(t_in, t_out), ep.id, ep.spec, parsed)


def tool_arguments(response: Any) -> str | None:
    """The first tool call's arguments (or the content) of a litellm response."""
    try:
        calls = response.choices[0].message.tool_calls
        return calls[0].function.arguments if calls else response.choices[0].message.content
    except (AttributeError, IndexError, TypeError):
        return None


class Backend(Protocol):
    """What the client calls: one attempt for a spec, on whichever endpoint serves it."""

    spec: ModelSpec

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
