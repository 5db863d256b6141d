"""OpenAI-compatible servers over judgekit's aiohttp transport (vLLM, llama.cpp, embedded).

The request body is the endpoint's prebuilt prefix (model, parameters, ``response_format``)
plus the messages; the answer is read from the ``chat.completion`` object. HTTP failures are
classified by the transport (``transport.py``) into ``errors.EndpointError`` kinds.
"""

from __future__ import annotations

from typing import Any

from judgekit.llm.endpoint import Completion, Endpoint, chat_body
from judgekit.llm.structured import OutputFormat, answer_of
from judgekit.llm.transport import AiohttpTransport


async def chat(
    transport: AiohttpTransport, ep: Endpoint, messages: list[dict[str, Any]], fmt: OutputFormat
) -> Completion:
    """One ``POST /chat/completions`` on ``ep``.

    Raises:
        EndpointError: the transport's classified failures (see ``AiohttpTransport.chat``).
        InvalidAnswer: a completion without choices (``empty``).
    """
    body = chat_body(ep.prefix(fmt), messages, fmt)
    data = await transport.chat(ep.url, body, ep.headers, ep.spec.timeout)
    raw, finish = answer_of(data)
    usage = data.get("usage") or {}
    t_in = int(usage.get("prompt_tokens") or 0)
    t_out = int(usage.get("completion_tokens") or 0)
    answer = Completion(raw, finish, t_in, t_out, ep.prices.cost(t_in, t_out), ep.id, ep.spec)
    if ep.spec.logprobs:  # read by judgekit.llm.logprobs
        answer.choice = (data.get("choices") or [None])[0]
    return answer


async def server_is_up(transport: AiohttpTransport, ep: Endpoint) -> bool:
    """True when ``GET /models`` on ``ep`` gets any answer under 500 (the outage probe)."""
    status = await transport.probe(ep.models_url, ep.headers)
    return status is not None and status < 500
