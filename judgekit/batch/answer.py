"""The one reading of a batch answer: a ``chat.completion`` dict to a parsed answer or a reason.

:func:`read_answer` is the only place a batch answer is validated, and it goes the way an
online answer goes: the completion becomes a :class:`~judgekit.llm.reply.Reply`
(:func:`judgekit.llm.reply.from_completion`, as the aiohttp path reads a response), lone
surrogates replaced (:class:`~judgekit.llm.endpoint.Completion`), then
:func:`~judgekit.llm.structured.read_reply` against the task's schema (refusals, filtered,
truncated and provider errors named; a leading ``<think>`` block removed; empty, malformed
JSON and schema violations rejected; booleans by
:data:`~judgekit.llm.answers.AnswerBool`, their normalisations counted). A batch cannot
re-ask: an invalid answer is ``unscored`` with its raw text and reason (``--retry-errors``
redoes it online, with re-asks). Nothing is mapped to a default.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel

from judgekit.llm.answers import start_noting
from judgekit.llm.endpoint import Completion
from judgekit.llm.reply import from_completion
from judgekit.llm.secrets import redact
from judgekit.llm.spec import ModelSpec
from judgekit.llm.structured import InvalidAnswer, read_reply


@dataclass(frozen=True, slots=True)
class Verdict:
    """What an answer says: ``parsed`` (``model_dump(mode="json")`` of the validated answer)
    or ``reason`` (why not: ``empty``, ``truncated``, ``malformed_json``, ``schema``...), the
    ``raw`` text, booleans ``normalised``, the ``tokens_in`` / ``tokens_out`` billed, and the
    ``reasoning`` that came with it."""

    raw: str | None
    parsed: Any
    reason: str | None
    normalised: int
    tokens_in: int
    tokens_out: int
    reasoning: str | None = None

    @property
    def status(self) -> str:
        return "ok" if self.reason is None else "unscored"


def _tokens(body: dict[str, Any]) -> tuple[int, int]:
    usage = body.get("usage")
    if not isinstance(usage, dict):
        return 0, 0
    try:
        return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    except (TypeError, ValueError):
        return 0, 0


def read_answer(body: dict[str, Any], schema: type[BaseModel], spec: ModelSpec) -> Verdict:
    """Validate the answer ``body`` (a ``chat.completion`` dict) of a task with ``schema``
    (see the module doc); never raises for a bad answer."""
    t_in, t_out = _tokens(body)
    reply = from_completion(body)
    if reply.extra.get("content_not_text") and reply.text is None:  # a number as content
        content = body["choices"][0]["message"]["content"]
        text = json.dumps(content, ensure_ascii=False)[:2000]
        return Verdict(text, None, "empty: the content is not text", 0, t_in, t_out)
    answer = Completion(reply.text, reply.finish_reason, t_in, t_out, None, "", spec)
    if answer.raw != reply.text:  # lone surrogates replaced
        reply = replace(reply, text=answer.raw)
    noted = start_noting()
    try:
        read = read_reply(reply, schema)
    except InvalidAnswer as exc:
        return Verdict(exc.raw, None, redact(exc.reason)[:500], 0, t_in, t_out, exc.reasoning)
    parsed = read.obj.model_dump(mode="json")
    return Verdict(read.raw, parsed, None, len(noted), t_in, t_out, read.reasoning)
