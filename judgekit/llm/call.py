"""One task's call to its model: attempts under the retry policy, validation, bounded re-asks,
and the record that ends it.

Transient failures (429, 5xx, timeouts, refused connections) are retried with tenacity
(``retry.py``), bounded by attempts and total time; refusals no retry can fix (401/403, 404,
400: ``errors.py``) are not retried, and the record's reason names their kind. An answer that
does not validate is re-asked at most ``max_reasks`` times with only the latest answer and its
correction added (the context never grows further); one that never validates ends ``unscored``
with its raw text and reason, a call that gets no answer ends ``error`` with the reason. An
error string is never parsed as an answer, and nothing is mapped to a default.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from judgekit.errors import JudgekitError
from judgekit.llm.answers import start_noting
from judgekit.llm.endpoint import Completion
from judgekit.llm.models import ModelState
from judgekit.llm.retry import CALL, CallState, is_transient, retrying
from judgekit.llm.secrets import redact
from judgekit.llm.structured import (
    InvalidAnswer,
    OutputFormat,
    parse_answer,
    read_reply,
    reask_messages,
)
from judgekit.llm.task import Task
from judgekit.runlog import Record


class _Call:
    """What one task's call adds up across its attempts and re-asks, and its record."""

    def __init__(self, base: dict[str, Any], state: CallState) -> None:
        self.base = base
        self.state = state
        self.started = time.monotonic()
        self.reasks = self.tokens_in = self.tokens_out = 0
        self.cost: float | None = 0.0
        self.raw: str | None = None
        self.served: str | None = None
        self.reasoning: str | None = None
        self.note: str | None = None
        self.reason = ""
        self.reask = True  # False once an answer came that no re-ask can fix (a refusal...)

    def record(self, status: str, **fields: Any) -> Record:
        """The task's record; ``latency_s`` leaves out time queued or paused (seconds)."""
        latency = time.monotonic() - self.started - self.state.queued
        return Record(
            **self.base, status=status, raw=self.raw, attempts=self.state.attempts,
            reasks=self.reasks, latency_s=round(latency, 4), tokens_in=self.tokens_in,
            tokens_out=self.tokens_out, cost=self.cost, served_by=self.served,
            reasoning=self.reasoning, note=self.note, **fields,
        )  # fmt: skip

    def failed(self, exc: InvalidAnswer) -> str:
        """Keep an invalid answer's raw text, reasoning and reason; returns the reason."""
        self.raw, self.reason, self.reask = exc.raw, exc.reason, exc.reask
        self.reasoning, self.note = exc.reasoning, exc.note
        return exc.reason

    def take(
        self, answer: Completion, fmt: OutputFormat, on_warning: Callable[[str], None] | None
    ) -> dict[str, Any] | None:
        """Count ``answer`` and validate it: the parsed answer, or None (``reason`` set)."""
        self.tokens_in += answer.tokens_in
        self.tokens_out += answer.tokens_out
        cost: Any = answer.cost  # None where a price is unknown (kept as None)
        self.cost = None if self.cost is None or cost is None else self.cost + cost
        self.raw, self.served = answer.raw, answer.served_by
        failure = None
        reply = answer.reply
        if reply is not None and reply.text != answer.raw:  # lone surrogates replaced
            reply = replace(reply, text=answer.raw)
        try:
            if answer.parsed is not None:
                obj = answer.parsed
            elif reply is not None:
                read = read_reply(reply, fmt.schema)
                obj, self.raw = read.obj, read.raw
                self.reasoning, self.note = read.reasoning, read.note
            else:
                obj = parse_answer(answer.raw, fmt.schema, answer.finish_reason)
        except InvalidAnswer as exc:
            failure = self.failed(exc)
        if answer.health is not None:
            warning = answer.health.on_answer(fmt.strategy, failure)
            if warning is not None and on_warning is not None:
                on_warning(warning)
        return None if failure is not None else obj.model_dump(mode="json")


def error_reason(exc: BaseException) -> str:
    """The reason of an ``error`` record: ``transient: ...`` for failures that outlasted their
    retries, ``request: <kind>: ...`` for refusals (``auth``, ``unknown_model``...)."""
    if is_transient(exc):
        prefix = "transient"
    elif getattr(exc, "kind", None) == "context_length":
        prefix = "context_length"  # this task's prompt: the run goes on
    else:
        kind = getattr(exc, "kind", None)
        prefix = f"request: {kind}" if kind else "request"
    return redact(f"{prefix}: {type(exc).__name__}: {exc}")[:500]


async def call_task(
    task: Task,
    model: ModelState,
    fmt: OutputFormat,
    base: dict[str, Any],
    on_attempt: Callable[[], None],
    on_warning: Callable[[str], None] | None = None,
) -> tuple[Record, bool]:
    """Call ``model`` (its backend built) for ``task`` until a validated answer, the re-asks
    run out, or no answer comes.

    Args:
        task: the task.
        model: the task's model state, with its backend.
        fmt: the output format of ``task.schema`` for this model.
        base: the record fields every outcome shares (``LLMClient._base``).
        on_attempt: called once per HTTP request, when it is sent (not while it waits for a
            slot; retries and re-asks included).
        on_warning: called with an endpoint's warning (``health.py``), once per endpoint.

    Returns:
        ``(record, by_primary)``: the record (``ok``, ``unscored`` or ``error``; ``latency_s``
        in seconds without the time spent waiting for an endpoint slot) and whether the answer
        came from the task's own spec rather than a fallback (only those are cached).

    Raises:
        JudgekitError: the model cannot be used at all (an API key variable unset...).
    """
    spec = task.spec
    messages = task.messages
    call = _Call(base, CallState(on_sent=on_attempt))
    noted = start_noting()  # booleans read from strings (judgekit.llm.answers)
    for reask in range(spec.max_reasks + 1):
        call.reasks = reask
        noted.clear()
        try:
            answer = await _attempts(model, messages, fmt, call.state)
        except InvalidAnswer as exc:  # tools mode validates inside instructor
            call.failed(exc)
        except JudgekitError:
            raise
        except Exception as exc:  # transient errors outlasted retries, or a hard refusal
            return call.record("error", reason=error_reason(exc)), False
        else:
            parsed = call.take(answer, fmt, on_warning)
            if parsed is not None:
                probs = {}
                if model.logprobs is not None:  # label probabilities (judgekit.llm.logprobs)
                    # the choice's own content: the tokens spell it, <think> block included
                    choice = answer.reply.choice if answer.reply is not None else None
                    content = None if choice else answer.raw
                    probs = model.logprobs.read(choice, task.schema, content, on_warning)
                record = call.record("ok", parsed=parsed, normalised=len(noted), **probs)
                return record, answer.spec is spec
        if reask == spec.max_reasks or not call.reask:  # a refusal, filter, cut: not re-asked
            break
        # bounded re-ask: the original messages plus only the latest answer and correction
        again = reask_messages(
            task.messages, call.raw, call.reason, window=spec.window(), max_tokens=spec.max_tokens
        )
        if again is None:
            call.reason += " (no re-ask: the prompt fills the context window)"
            break
        messages = again
    return call.record("unscored", reason=redact(call.reason)[:500]), False


async def _attempts(
    model: ModelState, messages: list[dict[str, Any]], fmt: OutputFormat, state: CallState
) -> Completion:
    """Attempts until an answer, under the tenacity policy of ``retry.py``. The first
    attempt runs outside tenacity (most calls need one); a transient failure enters the
    policy as its attempt 1, so back-off, Retry-After and the bounds count it. The sender
    counts requests and adds the seconds spent queued or paused to ``state``."""
    spec = model.spec
    backend: Any = model.backend
    started = time.monotonic()
    CALL.set(state)
    before = state.queued
    try:
        return await backend.complete(messages, fmt, spec.max_retries <= 1)
    except Exception as exc:
        if not is_transient(exc) or spec.max_retries <= 1:
            raise
        first: Exception | None = exc
    active = time.monotonic() - started - (state.queued - before)
    budget = max(0.0, spec.total_time() - active)
    waited = state.queued
    result: Completion | None = None
    policy = retrying(spec.max_retries, spec.retry_max_wait, budget, lambda: state.queued - waited)
    async for attempt in policy:
        with attempt:
            if first is not None:  # replay attempt 1's failure for the policy
                exc, first = first, None
                raise exc
            last = attempt.retry_state.attempt_number >= spec.max_retries
            result = await backend.complete(messages, fmt, last)
    assert result is not None
    return result
