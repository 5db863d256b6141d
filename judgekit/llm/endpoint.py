"""Endpoints and completions: the types every provider and backend shares (a leaf module).

An :class:`Endpoint` is one server (or one API route) with its own admission limiter and its
:class:`~judgekit.llm.health.EndpointHealth`; a :class:`Completion` is one answer as received.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel

from judgekit.llm.health import EndpointHealth
from judgekit.llm.limits import EndpointLimiter
from judgekit.llm.params import sent_params
from judgekit.llm.reply import Reply
from judgekit.llm.secrets import resolve_key
from judgekit.llm.spec import Deployment, ModelSpec
from judgekit.llm.structured import OutputFormat, with_hint
from judgekit.llm.usage import Prices, prices_for


@dataclass
class Completion:
    """One answer as received: the provider's :class:`~judgekit.llm.reply.Reply` (text,
    reasoning, finish reason, the raw choice; lone surrogates already replaced by
    ``reply.from_completion``), its usage and who served it.

    Attributes:
        reply: the response as read (``reply.from_completion``).
        tokens_in, tokens_out: tokens billed (0 where the provider sent no usage).
        cost: USD at the route's prices; None where no price is known.
        served_by: the serving endpoint (``route@host``; ``route@batch`` for a batch answer).
        spec: the spec that answered (a fallback's where a fallback answered).
        parsed: the backend's validated answer (instructor's ``tools`` mode); dropped when
            the reply's text was repaired, to be parsed again from the repaired text.
        health: the serving endpoint's health (set by the sender; None for a batch answer).
        normalised: booleans the backend's own validation read from strings (``parsed``).
    """

    reply: Reply
    tokens_in: int
    tokens_out: int
    cost: float | None  # None: no price known for the route
    served_by: str
    spec: ModelSpec
    parsed: BaseModel | None = None  # set when the backend validated already (instructor)
    health: EndpointHealth | None = None  # the serving endpoint's (set by the sender)
    normalised: int = 0

    def __post_init__(self) -> None:
        if self.reply.extra.get("surrogates_replaced"):
            self.parsed, self.normalised = None, 0


def litellm_route(spec: ModelSpec) -> str:
    """The route litellm understands: OpenAI-compatible servers go through ``openai/``."""
    if spec.provider in ("local", "openai_compatible"):
        return f"openai/{spec.model_id}"
    return spec.model


@dataclass
class Endpoint:
    """One deployment of a spec: URL, key, limiter, health and the request prefix per format.

    Attributes:
        id: ``route@host`` (unique per client; the Router's deployment id).
        fast: True to use the aiohttp transport, False for litellm.
        health: refusals, schema conformance and the outage policy (``health.py``).
    """

    id: str
    spec: ModelSpec
    api_base: str | None
    api_key: str | None
    limiter: EndpointLimiter
    fast: bool
    prices: Prices
    headers: tuple[tuple[str, str], ...] = ()
    health: EndpointHealth = field(default_factory=lambda: EndpointHealth(""))
    _prefixes: dict[tuple[str, str], bytes] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return (self.api_base or "").rstrip("/") + "/chat/completions"

    @property
    def models_url(self) -> str:
        """``GET`` here lists the models an OpenAI-compatible server serves."""
        return (self.api_base or "").rstrip("/") + "/models"

    def prefix(self, fmt: OutputFormat) -> bytes:
        """The request body up to ``"messages":`` (:func:`request_prefix`, kept per format)."""
        key = (fmt.digest, fmt.strategy)
        cached = self._prefixes.get(key)
        if cached is None:
            cached = self._prefixes[key] = request_prefix(self.spec, fmt)
        return cached


def request_prefix(spec: ModelSpec, fmt: OutputFormat) -> bytes:
    """The chat request body of ``spec`` for ``fmt`` up to ``"messages":`` (everything constant
    for this format: model id, generation parameters, structured-output fields, ``extra_body``
    merged), as UTF-8 JSON bytes. The online aiohttp path posts it (:meth:`Endpoint.prefix`);
    ``judgekit batch export`` writes the same body into batch request lines."""
    params = sent_params(spec)
    extra_body = params.pop("extra_body", None)  # litellm's way to add raw fields
    body = {"model": spec.model_id, **params, **fmt.fields}
    if isinstance(extra_body, dict):
        body.update(extra_body)
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return (text[:-1] + ',"messages":').encode("utf-8")


def chat_body(prefix: bytes, messages: list[dict[str, Any]], fmt: OutputFormat) -> bytes:
    """The whole request body: ``prefix`` (:func:`request_prefix`) and ``messages`` (the
    ``prompt`` strategy's schema hint added to the last one), as UTF-8 JSON bytes."""
    messages = with_hint(messages, fmt)
    return prefix + json.dumps(messages, ensure_ascii=False).encode("utf-8") + b"}"


def make_endpoint(
    spec: ModelSpec,
    deployment: Deployment | None = None,
    api_base: str | None = None,
    local_limiters: dict[str, EndpointLimiter] | None = None,
    *,
    pause: bool = True,
) -> Endpoint:
    """An endpoint for ``spec`` served at ``deployment`` (default: the spec's own endpoint);
    ``api_base`` overrides the URL (the embedded server's, known only once started). An
    embedded server has one slot: every spec on it shares one limiter, kept in
    ``local_limiters`` by URL, so no call waits inside the server (that wait would count as
    latency and against the timeout). ``pause=False`` turns the outage policy off (a Router's
    deployments: its cooldowns and fallbacks take over); the embedded server, which does not
    come back by itself once it dies, is never paused either.

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
    ep_id = f"{spec.model}@{host}"
    pausable = pause and base is not None and not spec.is_local
    health = EndpointHealth(ep_id, outage_s=spec.outage_s if pausable else 0.0)
    return Endpoint(ep_id, spec, base, key, limiter, fast, prices_for(spec), tuple(headers), health)
