"""The one reading of a batch answer: a ``chat.completion`` dict to a parsed answer or a reason.

:func:`read_answer` is the only place a batch answer is validated, and it goes the way an
online answer goes: the completion's content or tool-call arguments and finish reason
(:func:`judgekit.llm.structured.answer_of`, as the aiohttp path reads a response), lone
surrogates replaced (:class:`~judgekit.llm.endpoint.Completion`), then
:func:`~judgekit.llm.structured.parse_answer` against the task's schema (pydantic; truncated,
empty, malformed JSON and schema violations rejected; booleans by
:data:`~judgekit.llm.answers.AnswerBool`, their normalisations counted). A batch cannot
re-ask: an invalid answer is ``unscored`` with its raw text and reason (``--retry-errors``
redoes it online, with re-asks). Nothing is mapped to a default.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from judgekit.llm.answers import start_noting
from judgekit.llm.endpoint import Completion
from judgekit.llm.secrets import redact
from judgekit.llm.spec import ModelSpec
from judgekit.llm.structured import InvalidAnswer, answer_of, parse_answer


@dataclass(frozen=True, slots=True)
class Verdict:
    """What an answer says: ``parsed`` (``model_dump(mode="json")`` of the validated answer)
    or ``reason`` (why not: ``empty``, ``truncated``, ``malformed_json``, ``schema``...), the
    ``raw`` text, booleans ``normalised``, and the ``tokens_in`` / ``tokens_out`` billed."""

    raw: str | None
    parsed: Any
    reason: str | None
    normalised: int
    tokens_in: int
    tokens_out: int

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
    try:
        raw, finish = answer_of(body)
    except InvalidAnswer as exc:
        return Verdict(exc.raw, None, exc.reason, 0, t_in, t_out)
    if raw is not None and not isinstance(raw, str):  # a list or number as content: not text
        text = json.dumps(raw, ensure_ascii=False)[:2000]
        return Verdict(text, None, "empty: the content is not text", 0, t_in, t_out)
    answer = Completion(raw, finish, t_in, t_out, None, "", spec)
    noted = start_noting()
    try:
        obj = parse_answer(answer.raw, schema, answer.finish_reason)
    except InvalidAnswer as exc:
        return Verdict(answer.raw, None, redact(exc.reason)[:500], 0, t_in, t_out)
    return Verdict(answer.raw, obj.model_dump(mode="json"), None, len(noted), t_in, t_out)
