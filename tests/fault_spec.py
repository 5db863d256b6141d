"""The fault directives of the fault-injecting server (``tests/fault_server.py``): which fault a
chat request gets, parsed into a :class:`Fault`.

Choosing the fault
------------------
Each chat request's behaviour comes from a *directive*: the first token ``[[fault:SPEC]]`` in the
last user message, or else the server's ``default_fault`` (``"ok"`` unless set). ``SPEC`` is::

    ok | latency=S | 429 | 500 | <any status 400-599> | hang | malformed | wrong_shape | truncated

optionally followed by ``xN``: fault only for the first ``N`` attempts of this task, then
answer correctly (``[[fault:500x2]]``, ``[[fault:latency=0.2x1]]``). Attempts are counted on the
server per (directive, hash of the first user message), so a re-ask counts as an attempt; the
directive is looked for in the last user message that has one, so re-asks meet it too. A ``=S``
value means: seconds of latency for ``ok`` / ``latency``, the ``Retry-After`` seconds for a
status code (429 always sends one, ``retry_after`` by default), and the hang length for ``hang``.

* ``429``: ``Retry-After`` header and an OpenAI-style error body; other codes: an error body.
* ``hang``: waits ``hang_seconds`` (default 30, longer than any client timeout) without blocking
  other requests, then answers 504; on server shutdown it is released at once (503).
* ``malformed``: HTTP 200 whose content is not JSON (``{"valid": [true, fal``).
* ``wrong_shape``: HTTP 200 with valid JSON of the wrong shape (``{"answer": "yes"}``).
* ``truncated``: HTTP 200, ``finish_reason: "length"``, the correct answer cut in half.
* ``ok`` / ``latency=S``: a correct answer after ``default_latency`` / ``S`` seconds.
* a reply mode of ``tests/reply_shapes.py`` (``think``, ``reasoning_only``, ``content_filter``,
  ``error_body``, ``reasoning_length``, ``ctx_vllm``, ``tool_object``...): that exact reply,
  built around the correct answer.

:func:`error_response` is the reply of an injected status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from bench_answers import answers, correct_content, last_user_text, message_hash
from reply_shapes import SHAPES

__all__ = [
    "DEFAULT_MODEL",
    "MALFORMED_CONTENT",
    "PROBE_HEADER",
    "WRONG_SHAPE_CONTENT",
    "Fault",
    "error_response",
    "expected_answer",
    "find_directive",
    "parse_fault",
    "task_hash",
]

PROBE_HEADER = "X-Judgekit-Probe"  # judgekit.llm.schema_probe.PROBE_HEADER
DEFAULT_MODEL = "fault-model"
MALFORMED_CONTENT = '{"valid": [true, fal'
WRONG_SHAPE_CONTENT = '{"answer": "yes"}'

_NAMED_KINDS = ("ok", "latency", "hang", "malformed", "wrong_shape", "truncated", *SHAPES)
_SPEC = re.compile(r"([a-z_]+|\d{3})(?:=(\d*\.?\d+))?(?:x(\d+))?", re.IGNORECASE)
_DIRECTIVE = re.compile(r"\[\[fault:([^\]]*)\]\]", re.IGNORECASE)


@dataclass(frozen=True)
class Fault:
    """A parsed directive: ``kind`` (``"ok"``, ``"latency"``, ``"429"``, ``"hang"``...), its
    ``value`` (seconds, see the module doc), ``times`` (``xN``; ``None`` = every attempt) and
    ``spec``, its canonical text (attempts are counted per ``spec`` and message hash)."""

    kind: str
    value: float | None = None
    times: int | None = None
    spec: str = "ok"


def parse_fault(text: str) -> Fault:
    """Parse ``"500x2"``, ``"latency=0.2"``, ``"[[fault:hang]]"``...; ``ValueError`` if bad."""
    text = text.strip()
    directive = _DIRECTIVE.fullmatch(text)
    if directive:
        text = directive.group(1).strip()
    match = _SPEC.fullmatch(text)
    if not match:
        raise ValueError(f"bad fault directive {text!r}")
    kind, value, times = match.group(1).lower(), match.group(2), match.group(3)
    if kind.isdigit():
        if not 400 <= int(kind) <= 599:
            raise ValueError(f"fault status must be 400-599, got {kind}")
    elif kind not in _NAMED_KINDS:
        raise ValueError(f"unknown fault kind {kind!r} (known: {', '.join(_NAMED_KINDS)}, 4xx/5xx)")
    if kind == "latency" and value is None:
        raise ValueError("latency needs a value: latency=SECONDS")
    spec = kind + (f"={value}" if value is not None else "") + (f"x{times}" if times else "")
    return Fault(kind, None if value is None else float(value), int(times) if times else None, spec)


def find_directive(messages: Any) -> Fault | None:
    """The first ``[[fault:...]]`` directive in the last user message that has one, if any.

    Earlier user messages count too, so a client's re-ask (the original messages plus its
    answer and a correction) still meets the same fault.
    """
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "user":
            match = _DIRECTIVE.search(last_user_text([message]))
            if match:
                return parse_fault(match.group(1))
    return None


def task_hash(messages: Any) -> str:
    """Hash of the first user message: one task's identity across its re-asks, so ``xN`` counts
    attempts of a task, re-asks included."""
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict) and message.get("role") == "user":
            return message_hash([message])
    return message_hash(messages)


def expected_answer(request: dict) -> str:
    """The content a :class:`FaultServer` (without ``answer_fn``) gives as a correct answer."""
    messages = request.get("messages")
    return correct_content(request, int(message_hash(messages), 16))


_ERROR_TYPES = {
    400: ("invalid_request_error", "invalid_request"),
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_error", "permission_denied"),
    404: ("not_found_error", "model_not_found"),
    408: ("timeout_error", "timeout"),
    409: ("conflict_error", "conflict"),
    422: ("invalid_request_error", "unprocessable_entity"),
    429: ("requests", "rate_limit_exceeded"),
}


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def error_response(
    status: int, message: str, *, retry_after: float | None = None, kind: str | None = None
) -> web.Response:
    """An OpenAI-style error reply: ``status``, the error ``type``/``code`` of that status (or
    ``kind``) and, where ``retry_after`` is set, a ``Retry-After`` header in seconds."""
    if kind is None:
        kind, code = _ERROR_TYPES.get(status, ("server_error", "server_error"))
    else:
        code = kind
    headers = {} if retry_after is None else {"Retry-After": _seconds(retry_after)}
    body = answers.error_body(message, kind, code)
    return web.json_response(body, status=status, headers=headers)
