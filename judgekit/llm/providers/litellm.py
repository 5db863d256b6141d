"""Every other provider through ``litellm.acompletion``; its errors classified here.

litellm is imported only when such a call is made (a run on OpenAI-compatible servers alone
never loads it). Its exceptions become ``errors.EndpointError`` with a kind
(:func:`endpoint_error`), so the retry policy never needs to know litellm's types; a missing key,
which litellm reports as a 500 ``InternalServerError`` ("Missing credentials"), is ``auth``,
not transient.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from judgekit.llm.endpoint import Completion, Endpoint, litellm_route
from judgekit.llm.errors import EndpointError, ErrorKind, kind_of_status
from judgekit.llm.outcome import raise_provider_error
from judgekit.llm.params import sent_params
from judgekit.llm.reply import Reply, from_completion
from judgekit.llm.secrets import redact
from judgekit.llm.structured import OutputFormat, with_hint

# litellm's exception types whose kind is not told by their status code alone
_KIND_BY_NAME: dict[str, ErrorKind] = {
    "ContextWindowExceededError": "context_length",
    "Timeout": "timeout",
    "APIConnectionError": "connection",
    "RateLimitError": "rate_limit",
}


def endpoint_error(exc: BaseException) -> BaseException:
    """``exc`` as an :class:`EndpointError` with a kind when it is one of litellm's (or the
    openai client's) errors; any other exception is returned as it is."""
    if isinstance(exc, EndpointError):
        return exc
    module = type(exc).__module__.split(".")[0]
    status = getattr(exc, "status_code", None)
    if module not in ("litellm", "openai", "httpx") and not isinstance(status, int):
        return exc
    message = redact(f"{type(exc).__name__}: {exc}")[:300]
    kind = _KIND_BY_NAME.get(type(exc).__name__)
    if kind is None or (kind == "connection" and kind_of_status(None, message) == "auth"):
        kind = kind_of_status(status if isinstance(status, int) else None, message)
    retry_after = None
    headers: Any = getattr(getattr(exc, "response", None), "headers", None) or {}
    if hasattr(headers, "get") and headers.get("retry-after") is not None:
        try:
            retry_after = max(0.0, float(headers.get("retry-after")))
        except (TypeError, ValueError):
            retry_after = None
    error = EndpointError(
        message,
        status_code=status if isinstance(status, int) else None,
        retry_after=retry_after,
        kind=kind,
    )
    error.__cause__ = exc
    return error


def litellm_kwargs(ep: Endpoint, fmt: OutputFormat) -> dict[str, Any]:
    """Keyword arguments of ``litellm.acompletion`` for ``ep`` (no retries inside)."""
    kwargs: dict[str, Any] = sent_params(ep.spec)  # without what the route does not take
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


async def chat(ep: Endpoint, messages: list[dict[str, Any]], fmt: OutputFormat) -> Completion:
    """One ``litellm.acompletion`` on ``ep`` (not for the ``tools`` strategy: ``tools.py``).

    Raises:
        EndpointError: litellm's errors, classified (:func:`endpoint_error`).
    """
    import litellm

    kwargs = litellm_kwargs(ep, fmt)
    try:
        response = await litellm.acompletion(
            model=litellm_route(ep.spec), messages=with_hint(messages, fmt), **kwargs
        )
    except Exception as exc:
        raise endpoint_error(exc) from exc
    reply = reply_of(response)
    raise_provider_error(reply, ep.id)
    return completion_of(response, reply, ep, None)


def reply_of(response: Any) -> Reply:
    """The builder of this transport: a litellm ``ModelResponse`` (or a dict) as a
    :class:`Reply`, read by ``reply.from_completion`` as the aiohttp path's bodies are (the
    finish reasons litellm maps from Anthropic and Gemini, ``reasoning_content``, refusals,
    tool arguments as text or object)."""
    if isinstance(response, dict):
        return from_completion(response)
    try:
        data = response.model_dump()
    except Exception:  # not a pydantic response: no answer could be read from it
        return from_completion(None)
    return from_completion(data)


def completion_of(
    response: Any, reply: Reply, ep: Endpoint, parsed: BaseModel | None, normalised: int = 0
) -> Completion:
    """A :class:`Completion` from a litellm ``ModelResponse`` and its :class:`Reply`
    (``parsed``: instructor's validated answer, ``normalised`` the booleans it read from
    strings)."""
    usage = getattr(response, "usage", None)
    t_in = int(getattr(usage, "prompt_tokens", 0) or 0)
    t_out = int(getattr(usage, "completion_tokens", 0) or 0)
    cost = ep.prices.cost(t_in, t_out)
    return Completion(reply, t_in, t_out, cost, ep.id, ep.spec, parsed, normalised=normalised)


def tool_arguments(response: Any) -> str | None:
    """The first tool call's arguments as text (or the content) of a litellm response."""
    return reply_of(response).text
