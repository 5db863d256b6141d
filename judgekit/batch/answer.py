"""A batch answer as an online answer that came late: a ``chat.completion`` dict to a
:class:`~judgekit.llm.endpoint.Completion`.

:func:`completion_of` is the batch's transport: the body becomes a
:class:`~judgekit.llm.reply.Reply` (:func:`judgekit.llm.reply.from_completion`, as the aiohttp
path reads a response, lone surrogates replaced), an error inside the HTTP 200 raises the
online path's :class:`~judgekit.llm.errors.EndpointError`
(:func:`judgekit.llm.outcome.raise_provider_error`: recorded ``error``, so ``--retry-errors``
calls it again), and the usage is priced at batch prices. The record is then built by
:meth:`judgekit.llm.models.ModelState.record`, the online call's builder: validation
(refusals, filtered, truncated named; a leading ``<think>`` block removed; empty, malformed
JSON and schema violations rejected; booleans by :data:`~judgekit.llm.answers.AnswerBool`),
and the label probabilities where the request asked for log-probabilities. A batch cannot
re-ask: an invalid answer is ``unscored`` with its raw text and reason (``--retry-errors``
redoes it online, with re-asks). Nothing is mapped to a default. An answer of another model
than the configured judge (:func:`other_model`) is not the judge's answer: the importer records
it ``error`` and names the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from judgekit.llm.endpoint import Completion
from judgekit.llm.models import ModelState
from judgekit.llm.outcome import raise_provider_error
from judgekit.llm.reply import from_completion
from judgekit.llm.spec import ModelSpec
from judgekit.llm.usage import batch_prices_for

_SNAPSHOT = r"-(?:\d{4}-\d{2}-\d{2}|\d{4})"  # a dated snapshot's suffix: -2024-07-18, -0613


def usage_of(body: dict[str, Any]) -> tuple[int, int]:
    """``(prompt_tokens, completion_tokens)`` of a ``chat.completion`` dict; 0 where absent
    or not a number."""
    usage = body.get("usage")
    if not isinstance(usage, dict):
        return 0, 0
    try:
        return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    except (TypeError, ValueError):
        return 0, 0


def completion_of(body: dict[str, Any], spec: ModelSpec, check: bool = True) -> Completion:
    """The :class:`Completion` of the batch answer ``body`` of a request made for ``spec``
    (served by ``<route>@batch``, its cost in USD at batch prices, None where unknown).

    Raises:
        EndpointError: with ``check``, an error inside the HTTP 200 or a body without choices
            (``outcome.raise_provider_error``, as online).
    """
    reply = from_completion(body)
    served_by = f"{spec.model}@batch"
    if check:
        raise_provider_error(reply, served_by)
    t_in, t_out = usage_of(body)
    cost = batch_prices_for(spec).cost(t_in, t_out)
    return Completion(reply, t_in, t_out, cost, served_by, spec)


def engine_completion(row: dict[str, Any], model: str) -> dict[str, Any]:
    """A vLLM engine's output row (Ray Data LLM: ``generated_text``, ``num_input_tokens``,
    ``num_generated_tokens``, and the request's ``max_tokens``) as the ``chat.completion`` dict
    of ``model`` that :func:`completion_of` reads, so an engine answer passes through the same
    reader as an online or batch answer. The engine gives no finish reason: ``length`` where
    the answer used all ``max_tokens`` (read as truncated), else ``stop``. Log-probabilities
    (``logprobs``: :func:`judgekit.batch.ray_vllm.engine_answer`'s JSON text) become the
    choice's ``logprobs.content``, read for label probabilities as a server's."""
    tokens_in = int(row.get("num_input_tokens") or 0)
    tokens_out = int(row.get("num_generated_tokens") or 0)
    limit = row.get("max_tokens")
    finish = "length" if limit is not None and tokens_out >= int(limit) else "stop"
    message = {"role": "assistant", "content": row.get("generated_text")}
    choice = {"index": 0, "message": message, "finish_reason": finish}
    if row.get("logprobs"):
        choice["logprobs"] = {"content": _engine_logprobs(json.loads(row["logprobs"]))}
    return {
        "object": "chat.completion",
        "model": model,
        "choices": [choice],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out,
                  "total_tokens": tokens_in + tokens_out},
    }  # fmt: skip


def _engine_logprobs(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The engine's log-probabilities (``tokens``: the generated token ids; ``steps``: per
    token ``{id: {logprob, rank, decoded_token}}``, the chosen token and the top ones) as
    OpenAI's ``logprobs.content`` entries ``{token, logprob, top_logprobs}``."""
    content = []
    for token, step in zip(data["tokens"], data["steps"], strict=False):
        chosen = step.get(str(token)) or {}
        top = sorted((v for k, v in step.items() if v.get("rank") is not None),
                     key=lambda v: v["rank"])  # fmt: skip
        content.append({
            "token": chosen.get("decoded_token") or "", "logprob": chosen.get("logprob"),
            "top_logprobs": [{"token": v.get("decoded_token") or "", "logprob": v["logprob"]}
                             for v in top],
        })  # fmt: skip
    return content


def other_model(
    body: dict[str, Any], spec: ModelSpec, same_judge: Iterable[str] = ()
) -> str | None:
    """The ``model`` that answered ``body`` when it is not the judge ``spec`` configures, else
    None.

    The same judge is the configured model id (``spec.model_id``), a dated snapshot of it
    (``gpt-4o-mini-2024-07-18`` or ``gpt-4-0613`` for ``gpt-4o-mini`` / ``gpt-4``: the id, a
    hyphen, ``YYYY-MM-DD`` or ``MMDD``), or a model the user named the same judge
    (``same_judge``: ``judgekit batch import --same-judge MODEL``). A body without a string
    ``model`` is taken as the configured model's (nothing to compare).
    """
    answered = body.get("model")
    if not isinstance(answered, str) or answered in same_judge:
        return None
    configured = spec.model_id
    if answered == configured or re.fullmatch(re.escape(configured) + _SNAPSHOT, answered):
        return None
    return answered


@dataclass(frozen=True, slots=True)
class Verdict:
    """What an answer says: ``parsed`` (``model_dump(mode="json")`` of the validated answer)
    or ``reason`` (why not: ``empty``, ``truncated``, ``malformed_json``, ``schema``,
    ``provider_error``...), the ``raw`` text, booleans ``normalised``, the ``tokens_in`` /
    ``tokens_out`` billed, and the ``reasoning`` that came with it."""

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


def read_answer(body: dict[str, Any], schema: type[BaseModel], spec: ModelSpec) -> Verdict:
    """The :class:`Verdict` of one batch answer ``body`` of a task with ``schema``, read as
    its record is (:meth:`ModelState.answer`; an error inside the HTTP 200 is a
    ``provider_error`` reason here, where the importer records it ``error``); never raises
    for a bad answer."""
    completion = completion_of(body, spec, check=False)
    fields = ModelState(spec).answer(schema, completion)
    return Verdict(fields["raw"], fields.get("parsed"), fields.get("reason"),
                   fields.get("normalised", 0), completion.tokens_in, completion.tokens_out,
                   fields["reasoning"])  # fmt: skip
