"""Request parsing and response building, the answer logic shared by the loopback servers.

``bench/latency_server.py`` (benchmarks) and ``tests/fault_server.py`` (tests, which load this
file by its path) answer a chat request the same way: :func:`output_spec` reads the output
format asked for, :func:`correct_content` makes a valid answer for it (a schema instance from
``bench/schema_instance.py``, or an echo of the user) and :func:`chat_completion` wraps it in a
``chat.completion`` object. :func:`message_hash` is the stable hash both servers seed with.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import time
from dataclasses import dataclass
from typing import Any

from schema_instance import SchemaError, schema_instance

__all__ = [
    "OutputSpec",
    "SchemaError",
    "chat_completion",
    "correct_content",
    "error_body",
    "last_user_text",
    "message_hash",
    "models_body",
    "output_spec",
    "prompt_tokens",
    "schema_instance",
]


@dataclass(frozen=True)
class OutputSpec:
    """What a chat request asks the answer to look like.

    ``mode`` is ``"text"`` (no schema), ``"json"`` (``response_format`` and friends; ``schema``
    may be ``None`` for a bare ``json_object``) or ``"tool"`` (the answer is the arguments of
    a call to ``tool_name``, whose parameters schema is ``schema``).
    """

    mode: str
    schema: dict | None = None
    tool_name: str | None = None

    def cache_key(self) -> str:
        # Key order is kept: it decides the generated instance, and it is stable per client.
        return json.dumps([self.mode, self.tool_name, self.schema])


_TEXT = OutputSpec("text")


def output_spec(request: dict) -> OutputSpec:
    """Read the requested output format from an OpenAI-style chat request."""
    tools = request.get("tools")
    choice = request.get("tool_choice")
    if tools and choice != "none":
        functions = [t.get("function") or {} for t in tools if isinstance(t, dict)]
        chosen = functions[0] if functions else {}
        if isinstance(choice, dict):
            name = (choice.get("function") or {}).get("name")
            chosen = next((f for f in functions if f.get("name") == name), chosen)
        return OutputSpec("tool", chosen.get("parameters") or {}, chosen.get("name"))
    fmt = request.get("response_format")
    if isinstance(fmt, dict):
        kind = fmt.get("type")
        if kind == "json_schema":
            spec = fmt.get("json_schema") or {}
            schema = spec.get("schema", spec.get("schema_"))
            return OutputSpec("json", schema if isinstance(schema, dict) else None)
        if kind == "json_object":
            schema = fmt.get("schema")
            return OutputSpec("json", schema if isinstance(schema, dict) else None)
    for key in ("guided_json", "json_schema"):  # vLLM / llama.cpp extensions
        schema = request.get(key)
        if isinstance(schema, str):
            with contextlib.suppress(ValueError):
                schema = json.loads(schema)
        if isinstance(schema, dict):
            return OutputSpec("json", schema)
    return _TEXT


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in content
        )
    return "" if content is None else str(content)


def last_user_text(messages: Any) -> str:
    """The text of the last ``user`` message (content string or list of text parts)."""
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, dict) and message.get("role") == "user":
                return _text_of(message.get("content"))
    return ""


def message_hash(messages: Any) -> str:
    """A stable 16-hex-digit hash of a request's ``messages`` (canonical JSON, sha256)."""
    blob = json.dumps(messages, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def correct_content(request: dict, seed: int | str = 0, spec: OutputSpec | None = None) -> str:
    """The content of a correct answer: a schema instance as JSON, or an echo of the user."""
    spec = spec or output_spec(request)
    if spec.mode == "text":
        return "echo: " + last_user_text(request.get("messages"))
    if spec.schema is None:
        return "{}"
    return json.dumps(schema_instance(spec.schema, seed), ensure_ascii=False)


def _approx_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def prompt_tokens(request: dict) -> int:
    messages = request.get("messages")
    if not isinstance(messages, list):
        return 1
    return sum(_approx_tokens(_text_of(m.get("content"))) for m in messages if isinstance(m, dict))


_ids = itertools.count(1)


def chat_completion(
    content: str,
    *,
    model: str,
    spec: OutputSpec = _TEXT,
    finish_reason: str = "stop",
    prompt_tokens: int = 1,
    completion_tokens: int | None = None,
    id: str | None = None,
) -> dict:
    """A ``chat.completion`` object; in tool mode ``content`` becomes the call's arguments."""
    if spec.mode == "tool":
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{next(_ids)}",
                    "type": "function",
                    "function": {"name": spec.tool_name or "tool", "arguments": content},
                }
            ],
        }
        if finish_reason == "stop":
            finish_reason = "tool_calls"
    else:
        message = {"role": "assistant", "content": content}
    completion = _approx_tokens(content) if completion_tokens is None else completion_tokens
    return {
        "id": id or f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion,
        },
    }


def error_body(message: str, type: str, code: str | None = None) -> dict:
    """An OpenAI-style error body."""
    return {"error": {"message": message, "type": type, "param": None, "code": code}}


def models_body(model: str) -> dict:
    return {
        "object": "list",
        "data": [{"id": model, "object": "model", "created": 0, "owned_by": "judgekit-tests"}],
    }
