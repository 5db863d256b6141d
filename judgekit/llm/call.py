"""One task's call to its model: attempts under the retry policy, validation, bounded re-asks,
and the record that ends it.

Transient failures (429, 5xx, timeouts, refused connections) are retried with tenacity
(``retry.py``), bounded by attempts and total time. An answer that does not validate is re-asked
at most ``max_reasks`` times with only the latest answer and its correction added (the context
never grows further); one that never validates ends ``unscored`` with its raw text and reason,
a call that gets no answer ends ``error`` with the reason. An error string is never parsed as an
answer, and nothing is mapped to a default.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from judgekit.errors import JudgekitError
from judgekit.llm.answers import start_noting
from judgekit.llm.backends import Completion
from judgekit.llm.models import ModelState
from judgekit.llm.retry import QUEUED, is_transient, retrying
from judgekit.llm.secrets import redact
from judgekit.llm.structured import InvalidAnswer, OutputFormat, parse_answer, reask_messages
from judgekit.runlog import Record

if TYPE_CHECKING:
    from judgekit.llm.client import Task


async def call_task(
    task: Task,
    model: ModelState,
    fmt: OutputFormat,
    base: dict[str, Any],
    on_attempt: Callable[[], None],
) -> tuple[Record, bool]:
    """Call ``model`` (its backend built) for ``task`` until a validated answer, the re-asks
    run out, or no answer comes.

    Args:
        task: the task.
        model: the task's model state, with its backend.
        fmt: the output format of ``task.schema`` for this model.
        base: the record fields every outcome shares (``LLMClient._base``).
        on_attempt: called once per HTTP attempt (retries and re-asks included).

    Returns:
        ``(record, by_primary)``: the record (``ok``, ``unscored`` or ``error``; ``latency_s``
        in seconds without the time spent waiting for an endpoint slot) and whether the answer
        came from the task's own spec rather than a fallback (only those are cached).

    Raises:
        JudgekitError: the model cannot be used at all (an API key variable unset...).
    """
    spec = task.spec
    messages = task.messages
    counter, queued = [0], [0.0]
    reasks = tokens_in = tokens_out = 0
    cost: float | None = 0.0  # None once an answer's price is unknown
    raw: str | None = None
    served: str | None = None
    reason = ""
    started = time.monotonic()

    def record(status: str, **fields: Any) -> Record:
        return Record(
            **base,
            status=status,
            raw=raw,
            attempts=counter[0],
            reasks=reasks,
            latency_s=round(time.monotonic() - started - queued[0], 4),
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost=cost,
            served_by=served,
            **fields,
        )

    noted = start_noting()  # booleans read from strings (judgekit.llm.answers)
    for reask in range(spec.max_reasks + 1):
        reasks = reask
        noted.clear()
        try:
            answer = await _attempts(model, messages, fmt, counter, queued, on_attempt)
        except InvalidAnswer as exc:  # tools mode validates inside instructor
            raw, reason = exc.raw, exc.reason
        except JudgekitError:
            raise
        except Exception as exc:  # transient errors outlasted retries, or a hard refusal
            kind = "transient" if is_transient(exc) else "request"
            message = redact(f"{kind}: {type(exc).__name__}: {exc}")[:500]
            return record("error", reason=message), False
        else:
            tokens_in += answer.tokens_in
            tokens_out += answer.tokens_out
            cost = None if cost is None or answer.cost is None else cost + answer.cost
            raw, served = answer.raw, answer.served_by
            try:
                obj = answer.parsed or parse_answer(raw, fmt.schema, answer.finish_reason)
            except InvalidAnswer as exc:
                reason = exc.reason
            else:
                parsed = obj.model_dump(mode="json")
                return record("ok", parsed=parsed, normalised=len(noted)), answer.spec is spec
        if reask == spec.max_reasks:
            break
        # bounded re-ask: the original messages plus only the latest answer and correction
        again = reask_messages(
            task.messages, raw, reason, window=spec.window(), max_tokens=spec.max_tokens
        )
        if again is None:
            reason += " (no re-ask: the prompt fills the context window)"
            break
        messages = again
    return record("unscored", reason=redact(reason)[:500]), False


async def _attempts(
    model: ModelState,
    messages: list[dict[str, Any]],
    fmt: OutputFormat,
    counter: list[int],
    queued: list[float],
    on_attempt: Callable[[], None],
) -> Completion:
    """Attempts until an answer, under the tenacity policy of ``retry.py``. The first
    attempt runs outside tenacity (most calls need one); a transient failure enters the
    policy as its attempt 1, so back-off, Retry-After and the bounds count it. Seconds
    spent waiting for an endpoint slot are added to ``queued[0]``."""
    spec = model.spec
    started = time.monotonic()
    QUEUED.set(queued)
    before = queued[0]
    counter[0] += 1
    on_attempt()
    try:
        return await model.backend.complete(  # type: ignore[union-attr]
            messages, fmt, spec.max_retries <= 1
        )
    except Exception as exc:
        if not is_transient(exc) or spec.max_retries <= 1:
            raise
        first: Exception | None = exc
    budget = max(0.0, spec.total_time() - (time.monotonic() - started - queued[0] + before))
    waited = queued[0]
    result: Completion | None = None
    policy = retrying(spec.max_retries, spec.retry_max_wait, budget, lambda: queued[0] - waited)
    async for attempt in policy:
        with attempt:
            if first is not None:  # replay attempt 1's failure for the policy
                exc, first = first, None
                raise exc
            counter[0] += 1
            on_attempt()
            last = attempt.retry_state.attempt_number >= spec.max_retries
            result = await model.backend.complete(  # type: ignore[union-attr]
                messages, fmt, last
            )
    assert result is not None
    return result
