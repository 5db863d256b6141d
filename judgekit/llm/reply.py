"""What came back from a provider, in one shape: a leaf type every transport builds.

A :class:`Reply` holds the parts of a chat answer that providers spell differently: the answer
text (``message.content``), the reasoning (``reasoning_content``, ``reasoning``, or a leading
``<think>`` block left in the content; the builders in ``llm/providers/`` move it here), a
refusal (``message.refusal``), the first tool call's arguments (a JSON string, or an object as
some gateways send them), the finish reason, and a provider error sent inside an HTTP 200
(``{"error": ...}``, or no choices at all). ``outcome.classify`` reads it; nothing else parses a
provider response.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ProviderError:
    """An error the provider reported in a response body (HTTP 200 or not).

    Attributes:
        message: its message (redacted, at most 300 characters).
        type: the provider's error type (``server_error``, ``exceed_context_size_error``...).
        code: the provider's error code (``context_length_exceeded``, ``503``...), as text.
    """

    message: str
    type: str | None = None
    code: str | None = None


@dataclass(frozen=True)
class Reply:
    """One provider response (see the module doc).

    Attributes:
        text: the answer text (content, or tool-call arguments as JSON text); None if none.
        reasoning: the model's reasoning, from whichever field or block held it.
        refusal: the model's own refusal text (``message.refusal``).
        tool_arguments: the first tool call's arguments as sent (a string or an object).
        finish_reason: the provider's finish reason as sent (``stop``, ``length``,
            ``content_filter``, ``refusal``, ``safety``...), None if absent.
        provider_error: an error in the body, or no choices (None for an answer).
        status_code: the HTTP status of the response (200; None where unknown).
        choice: the raw first choice as a plain dict (log-probabilities are read from here).
        extra: further facts the builder noted (``think_block``: closed or unclosed;
            ``content_not_text``: the content as JSON text when it was no text, a number...;
            ``surrogates_replaced``: lone surrogates were replaced by U+FFFD).
        served_model: the ``model`` the response names (a dated snapshot such as
            ``gpt-4o-mini-2024-07-18``, or a served name), None where absent.
        system_fingerprint: the provider's ``system_fingerprint`` (its backend configuration;
            OpenAI's API reference), None where absent.
        reasoning_tokens: ``usage.completion_tokens_details.reasoning_tokens`` where the
            provider reports it (OpenAI, litellm's mapping of others), else None.
    """

    text: str | None = None
    reasoning: str | None = None
    refusal: str | None = None
    tool_arguments: str | dict[str, Any] | None = None
    finish_reason: str | None = None
    provider_error: ProviderError | None = None
    status_code: int | None = 200
    choice: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    served_model: str | None = None
    system_fingerprint: str | None = None
    reasoning_tokens: int | None = None


_THINK_OPEN = "<think>"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # JSON can escape one; UTF-8 cannot hold it
_THINK_CLOSE = "</think>"
_REASONING_FIELDS = ("reasoning_content", "reasoning", "thinking")


def _text_of(content: Any) -> str | None:
    """Content as text: a string as it is, a list of content parts joined (their ``text``)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        texts = [p for p in parts if isinstance(p, str)]
        return "".join(texts) if texts else None
    return None


def split_think(content: str | None) -> tuple[str | None, str | None, bool]:
    """``(answer, reasoning, closed)`` of a content that may start with a ``<think>`` block.

    Only a *leading* block counts (whitespace before it allowed): its inside is the reasoning
    and what follows ``</think>`` the answer, so braces inside the block never reach the JSON
    parser. An unclosed block is all reasoning (answer None, ``closed`` False). A content
    without a leading block is returned as it is (reasoning None, ``closed`` True).
    """
    if content is None:
        return None, None, True
    head = content.lstrip()
    if head[: len(_THINK_OPEN)].lower() != _THINK_OPEN:
        return content, None, True
    body = head[len(_THINK_OPEN) :]
    end = body.lower().find(_THINK_CLOSE)
    if end < 0:
        return None, body.strip() or None, False
    return body[end + len(_THINK_CLOSE) :].strip(), body[:end].strip() or None, True


def _error_of(value: Any) -> ProviderError:
    if isinstance(value, dict):
        message = value.get("message") or value.get("msg") or value.get("detail") or value
        kind, code = value.get("type"), value.get("code")
        return ProviderError(
            str(message)[:300],
            None if kind is None else str(kind),
            None if code is None else str(code),
        )
    return ProviderError(str(value)[:300])


def from_completion(data: Any, status_code: int | None = 200) -> Reply:
    """The :class:`Reply` of an OpenAI ``chat.completion`` object as a plain dict (the aiohttp
    path's decoded body, a batch result's body, or a litellm response's ``model_dump()``).

    Every spelling is read by the same code: reasoning from ``reasoning_content``,
    ``reasoning`` or ``thinking``, or a leading ``<think>`` block of the content; content as a
    string or a list of parts; the first tool call's arguments as a string or an object (an
    object is given to the parser as its JSON text); ``message.refusal``; an ``error`` member,
    or a body without choices, as a provider error. A lone UTF-16 surrogate in the text, the
    reasoning or the refusal (a server may send the JSON escape ``\\ud800``) is replaced by
    U+FFFD, as a UTF-8 decoder does with a bad byte: no record, cache entry or report could
    hold it (``extra["surrogates_replaced"]``). The response's ``model`` and
    ``system_fingerprint`` are kept (``served_model``, ``system_fingerprint``). Never raises.
    """
    if not isinstance(data, dict):
        error = ProviderError("not a completion object")
        return Reply(provider_error=error, status_code=status_code)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        error = data.get("error")
        found = _error_of(error) if error else ProviderError("the response has no choices")
        return Reply(provider_error=found, status_code=status_code)
    choice = choices[0]
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    extra: dict[str, Any] = {}
    reasoning = next(
        (v for f in _REASONING_FIELDS if isinstance(v := message.get(f), str) and v.strip()), None
    )
    content = _text_of(message.get("content"))
    if message.get("content") is not None and content is None:  # a number as content...
        as_json = json.dumps(message["content"], ensure_ascii=False)[:2000]
        extra["content_not_text"] = _repaired(as_json)
    content, thought, closed = split_think(content)
    if thought is not None:
        reasoning = thought if reasoning is None else f"{reasoning}\n{thought}"
        extra["think_block"] = "closed" if closed else "unclosed"
    arguments = _tool_arguments(message)
    text = content
    if arguments is not None:
        as_text = isinstance(arguments, str)
        text = arguments if as_text else json.dumps(arguments, ensure_ascii=False)
    refusal = message.get("refusal")
    refusal = refusal if isinstance(refusal, str) and refusal.strip() else None
    finish = choice.get("finish_reason")
    if any(v is not None and _LONE_SURROGATE.search(v) for v in (text, reasoning, refusal)):
        text, reasoning, refusal = (_repaired(v) for v in (text, reasoning, refusal))
        extra["surrogates_replaced"] = True
    return Reply(
        text=text,
        reasoning=reasoning,
        refusal=refusal,
        tool_arguments=arguments,
        finish_reason=finish if isinstance(finish, str) else None,
        status_code=status_code,
        choice=choice,
        extra=extra,
        served_model=_short_text(data.get("model")),
        system_fingerprint=_short_text(data.get("system_fingerprint")),
        reasoning_tokens=_reasoning_tokens(data.get("usage")),
    )


def _reasoning_tokens(usage: Any) -> int | None:
    details = usage.get("completion_tokens_details") if isinstance(usage, dict) else None
    found = details.get("reasoning_tokens") if isinstance(details, dict) else None
    return found if isinstance(found, int) and not isinstance(found, bool) and found >= 0 else None


# a raw line break or tab inside a string is still clear; integers stay text (only the span is
# wanted, and Python refuses to convert one of more than 4300 digits, a looping model's answer)
_LAX = json.JSONDecoder(strict=False, parse_int=str)


def json_span(text: str) -> tuple[int, int] | None:
    """``(start, end)`` of the first complete JSON object or array in ``text``: the value that
    begins at the first ``{`` or ``[``, read to its closing bracket, so prose after it, a
    Markdown fence around it or a sentence before it are not part of the answer. None when no
    complete value starts there (cut short, a string with an unescaped quote, or nested deeper
    than Python's JSON reader goes: the answer is then malformed and re-asked). Raw line breaks
    and tabs inside strings are allowed."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    try:
        return start, _LAX.raw_decode(text, start)[1]
    except (json.JSONDecodeError, RecursionError):
        return None


def _short_text(value: Any) -> str | None:
    """A provider's identifying string as sent (cut at 200 characters, lone surrogates
    replaced), None for anything else."""
    return _repaired(value[:200]) if isinstance(value, str) and value.strip() else None


def _repaired(text: str | None) -> str | None:
    return None if text is None else _LONE_SURROGATE.sub("\ufffd", text)


def _tool_arguments(message: dict[str, Any]) -> str | dict[str, Any] | None:
    """The first tool call's (or legacy ``function_call``'s) arguments, string or object."""
    calls = message.get("tool_calls")
    call = calls[0] if isinstance(calls, list) and calls else message.get("function_call")
    if not isinstance(call, dict):
        return None
    function = call.get("function", call)
    arguments = function.get("arguments") if isinstance(function, dict) else None
    return arguments if isinstance(arguments, (str, dict)) else None
