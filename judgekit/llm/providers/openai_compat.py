"""OpenAI-compatible servers over judgekit's aiohttp transport (vLLM, llama.cpp, embedded).

The request body is the endpoint's prebuilt prefix (model, parameters, ``response_format``)
plus the messages; the ``chat.completion`` object becomes a :class:`~judgekit.llm.reply.Reply`
(``reply.from_completion``, every spelling of reasoning, refusal and tool arguments). HTTP
failures are classified by the transport (``transport.py``), an error inside an HTTP 200 by
``outcome.raise_provider_error``, into ``errors.EndpointError`` kinds.
"""

from __future__ import annotations

from typing import Any

from judgekit.llm.endpoint import Completion, Endpoint, chat_body
from judgekit.llm.outcome import raise_provider_error
from judgekit.llm.reply import Reply, from_completion
from judgekit.llm.structured import OutputFormat
from judgekit.llm.transport import AiohttpTransport


def reply_of(data: dict[str, Any]) -> Reply:
    """The builder of this transport: the decoded body of a ``/chat/completions`` 200."""
    return from_completion(data, 200)


async def chat(
    transport: AiohttpTransport, ep: Endpoint, messages: list[dict[str, Any]], fmt: OutputFormat
) -> Completion:
    """One ``POST /chat/completions`` on ``ep``.

    Raises:
        EndpointError: the transport's classified failures (see ``AiohttpTransport.chat``),
            and a 200 without an answer (``outcome.raise_provider_error``).
    """
    body = chat_body(ep.prefix(fmt), messages, fmt)
    data = await transport.chat(ep.url, body, ep.headers, ep.spec.timeout)
    reply = reply_of(data)
    raise_provider_error(reply, ep.id)
    usage = data.get("usage") or {}
    t_in = int(usage.get("prompt_tokens") or 0)
    t_out = int(usage.get("completion_tokens") or 0)
    cost = ep.prices.cost(t_in, t_out)
    return Completion(reply, t_in, t_out, cost, ep.id, ep.spec)


async def server_is_up(transport: AiohttpTransport, ep: Endpoint) -> bool:
    """True when ``GET /models`` on ``ep`` gets any answer under 500 (the outage probe)."""
    status = await transport.probe(ep.models_url, ep.headers)
    return status is not None and status < 500
