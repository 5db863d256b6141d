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
from typing import Any

from judgekit.errors import JudgekitError
from judgekit.llm.endpoint import Completion
from judgekit.llm.models import ModelState
from judgekit.llm.retry import CALL, CallState, is_transient, retrying
from judgekit.llm.secrets import redact
from judgekit.llm.structured import InvalidAnswer, OutputFormat, reask_messages, reaskable
from judgekit.llm.task import Task
from judgekit.runlog import Record

_FAILURE = ("raw", "reason", "reasoning", "note")


class _Call:
    """What one task's call adds up across its attempts and re-asks: the record fields that
    are the call's own (``ModelState.record`` builds the record) and its latest failure."""

    def __init__(self, base: dict[str, Any], state: CallState) -> None:
        self.base = base
        self.state = state
        self.started = time.monotonic()
        self.reasks = self.tokens_in = self.tokens_out = 0
        self.cost: float | None = 0.0
        self.served: str | None = None
        self.failure: dict[str, Any] = {}  # raw, reason, reasoning, note of the latest failure
        self.reask = True  # False once an answer came that no re-ask can fix (a refusal...)

    @property
    def reason(self) -> str:
        return self.failure.get("reason") or ""

    def fields(self, **more: Any) -> dict[str, Any]:
        """The record fields of the call; ``latency_s`` leaves out time queued or paused
        (seconds), tokens and cost are the totals over every answer."""
        latency = time.monotonic() - self.started - self.state.queued
        return {
            **self.base, "attempts": self.state.attempts, "reasks": self.reasks,
            "latency_s": round(latency, 4), "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out, "cost": self.cost, "served_by": self.served, **more,
        }  # fmt: skip

    def ended(self, status: str, reason: str) -> dict[str, Any]:
        """The fields of a record without a valid answer: the latest invalid answer's raw
        text, reasoning and note kept, ``reason`` redacted and cut to 500 characters."""
        return self.fields(**{**self.failure, "status": status, "reason": redact(reason)[:500]})

    def count(self, answer: Completion) -> None:
        """Add one answer's tokens and cost (None once a price is unknown) and who served it."""
        self.tokens_in += answer.tokens_in
        self.tokens_out += answer.tokens_out
        cost: Any = answer.cost  # None where a price is unknown (kept as None)
        self.cost = None if self.cost is None or cost is None else self.cost + cost
        self.served = answer.served_by

    def failed(self, exc: InvalidAnswer) -> None:
        """Keep an answer the backend rejected (instructor): raw text, reasoning and reason."""
        self.failure = {"raw": exc.raw, "reason": exc.reason, "reasoning": exc.reasoning,
                        "note": exc.note}  # fmt: skip
        self.reask = exc.reask

    def rejected(self, record: Record) -> None:
        """Keep an ``unscored`` record's raw text, reasoning and reason for the re-ask."""
        self.failure = {name: getattr(record, name) for name in _FAILURE}
        self.reask = reaskable(record.reason)


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
    on_transient: Callable[[BaseException], None] | None = None,
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
        on_transient: called with each attempt's transient failure (``CallState``).

    Returns:
        ``(record, by_primary)``: the record (``ok``, ``unscored`` or ``error``; ``latency_s``
        in seconds without the time spent waiting for an endpoint slot) and whether the answer
        came from the task's own spec rather than a fallback (only those are cached).

    Raises:
        JudgekitError: the model cannot be used at all (an API key variable unset...).
    """
    spec = task.spec
    messages = task.messages
    call = _Call(base, CallState(on_sent=on_attempt, on_transient=on_transient))
    for reask in range(spec.max_reasks + 1):
        call.reasks = reask
        try:
            answer = await _attempts(model, messages, fmt, call.state)
        except InvalidAnswer as exc:  # tools mode validates inside instructor
            call.failed(exc)
        except JudgekitError:
            raise
        except Exception as exc:  # transient errors outlasted retries, or a hard refusal
            return model.record(task, None, call.ended("error", error_reason(exc))), False
        else:
            call.count(answer)
            record = model.record(task, answer, call.fields(), on_warning)
            if record.status == "ok":
                return record, answer.spec is spec
            call.rejected(record)
        if reask == spec.max_reasks or not call.reask:  # a refusal, filter, cut: not re-asked
            break
        # bounded re-ask: the original messages plus only the latest answer and correction
        again = reask_messages(
            task.messages, call.failure["raw"], call.reason, window=spec.window(),
            max_tokens=spec.max_tokens,
        )  # fmt: skip
        if again is None:
            call.failure["reason"] += " (no re-ask: the prompt fills the context window)"
            break
        messages = again
    return model.record(task, None, call.ended("unscored", call.reason)), False


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
        state.failed(exc)
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
            try:
                result = await backend.complete(messages, fmt, last)
            except Exception as exc:
                state.failed(exc)
                raise
    assert result is not None
    return result
