"""Replies as providers really send them, for the fault server's reply modes.

Each shape takes the correct answer's JSON text and returns ``(status, body)``: the exact
reply a provider sends in that case (copied from public issues of vLLM, llama.cpp, Ollama,
litellm and openai-python). ``tests/fault_server.py`` serves them as ``[[fault:NAME]]``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Shape = Callable[[str], tuple[int, dict[str, Any]]]
THINK = 'Let me look at the item. A schema like {"label": ...} is asked; {braces} here.'


def _completion(message: dict[str, Any], finish: str | None = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-shape",
        "object": "chat.completion",
        "created": 0,
        "model": "shape-model",
        "choices": [{"index": 0, "message": {"role": "assistant", **message},
                     "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
    }  # fmt: skip


def _error(status: int, message: str, kind: str, code: Any) -> tuple[int, dict[str, Any]]:
    return status, {"error": {"message": message, "type": kind, "code": code}}


SHAPES: dict[str, Shape] = {
    # 1. Qwen3 / DeepSeek-R1 without a reasoning parser: the think block stays in content
    "think": lambda answer: (
        200, _completion({"content": f"<think>\n{THINK}\n</think>\n\n{answer}"})),
    "think_unclosed": lambda answer: (200, _completion({"content": f"<think>\n{THINK} still"})),
    # 2. vLLM with a reasoning parser, the JSON answer left in reasoning_content
    "reasoning_only": lambda answer: (
        200, _completion({"content": None, "reasoning_content": f"{THINK}\n{answer}"})),
    "reasoning_split": lambda answer: (
        200, _completion({"content": answer, "reasoning_content": THINK})),
    "reasoning_field": lambda answer: (200, _completion({"content": answer, "reasoning": THINK})),
    # 3. filters and refusals (OpenAI, Azure; Gemini's and Anthropic's as litellm maps them)
    "content_filter": lambda answer: (200, _completion({"content": None}, "content_filter")),
    "safety": lambda answer: (200, _completion({"content": ""}, "safety")),
    "refusal": lambda answer: (
        200, _completion({"content": None, "refusal": "I can't help with that."})),
    "refusal_finish": lambda answer: (200, _completion({"content": ""}, "refusal")),
    # 4. errors inside an HTTP 200
    "error_body": lambda answer: (200, {"error": {"message": "upstream overloaded, try again",
                                               "type": "server_error", "code": 503}}),
    "no_choices": lambda answer: (200, {"id": "x", "object": "chat.completion", "choices": []}),
    # 5. reasoning spent the whole max_tokens
    "reasoning_length": lambda answer: (
        200, _completion({"content": "", "reasoning_content": THINK * 3}, "length")),
    # 7. context overflow, vLLM's and llama.cpp's own bodies
    "ctx_vllm": lambda answer: (400, {
        "object": "error", "type": "BadRequestError", "param": None, "code": 400,
        "message": "The decoder prompt (length 9000) is longer than the maximum model length "
                   "of 8192. Make sure that `max_model_len` is no smaller than the number of "
                   "text tokens."}),
    "ctx_llamacpp": lambda answer: _error(
        400, "the request exceeds the available context size, try increasing it",
        "exceed_context_size_error", 400),
    # tool arguments as an object (Ollama, some gateways), not a JSON string
    "tool_object": lambda answer: (200, _completion({"content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "Answer", "arguments": json.loads(answer)}}]}, "tool_calls")),
}  # fmt: skip


def reject_params(body: dict[str, Any], rules: dict[str, Any]) -> tuple[int, dict] | None:
    """OpenAI's 400 for a parameter a model does not take (``rules``: name -> the one value
    allowed, None for none), as o3-mini and gpt-5-mini answer ``temperature: 0``."""
    for name, allowed in rules.items():
        if name in body and body[name] != allowed:
            return _error(
                400,
                f"Unsupported value: '{name}' does not support {body[name]!r} with this "
                f"model. Only the default ({allowed}) value is supported.",
                "invalid_request_error",
                "unsupported_value",
            )
    return None
