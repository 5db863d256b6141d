"""Tool calling (the ``tools`` strategy) through instructor over litellm.

instructor forces one function call whose arguments are the schema and validates them. An
answer instructor rejects is read again by judgekit's one reader of answers
(``structured.read_reply``): an invalid one becomes ``InvalidAnswer`` with the real reason
(``malformed_json: ...``, ``schema: valid: Field required``; re-asked by ``call.py``, never
retried here) and the arguments as raw text, one that judgekit's reading accepts is an answer;
a transport failure is the classified ``EndpointError``. instructor's own retry log lines
("Max retries exceeded...", "API call failed on attempt...") never reach stderr: what they say
is in the record (:func:`quiet_instructor`).
"""

from __future__ import annotations

import logging
from typing import Any

from judgekit.llm.answers import start_noting
from judgekit.llm.endpoint import Completion, Endpoint, litellm_route
from judgekit.llm.errors import EndpointError
from judgekit.llm.outcome import raise_provider_error
from judgekit.llm.providers.litellm import (
    completion_of,
    endpoint_error,
    litellm_kwargs,
    reply_of,
)
from judgekit.llm.structured import InvalidAnswer, OutputFormat, read_reply

# instructor's retry loggers (1.x and its v2 core) and the lines judgekit records itself
_RETRY_LOGGERS = ("instructor.v2.retry", "instructor.retry", "instructor.core.retry")
_RETRY_LINES = ("Max retries exceeded", "API call failed on attempt")


def _not_retry_text(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith(_RETRY_LINES)


def quiet_instructor() -> None:
    """Drop instructor's retry log lines (the record holds the reason; judgekit asks instructor
    for no retries); its other log lines are left as they are. Idempotent."""
    for name in _RETRY_LOGGERS:
        logger = logging.getLogger(name)
        if _not_retry_text not in logger.filters:
            logger.addFilter(_not_retry_text)


class ToolsProvider:
    """Holds the one instructor client (built on first use) of a sender."""

    def __init__(self) -> None:
        self._client: Any = None

    async def chat(
        self, ep: Endpoint, messages: list[dict[str, Any]], fmt: OutputFormat
    ) -> Completion:
        """One forced tool call on ``ep``.

        Raises:
            InvalidAnswer: the arguments are no valid answer (``structured.read_reply``'s
                reason).
            EndpointError: litellm's errors, classified.
        """
        import instructor
        import litellm
        from instructor.core.exceptions import InstructorRetryException

        if self._client is None:
            quiet_instructor()
            self._client = instructor.from_litellm(litellm.acompletion, mode=instructor.Mode.TOOLS)
        kwargs = litellm_kwargs(ep, fmt)
        noted = start_noting()  # booleans instructor's validation reads from strings
        try:
            parsed, response = await self._client.chat.completions.create_with_completion(
                model=litellm_route(ep.spec), messages=messages, response_model=fmt.schema,
                max_retries=0, **kwargs,
            )  # fmt: skip
        except InstructorRetryException as exc:
            return _read_rejected(exc, ep, fmt)
        except InvalidAnswer:
            raise
        except Exception as exc:
            raise endpoint_error(exc) from exc
        return completion_of(response, reply_of(response), ep, parsed, len(noted))


def _read_rejected(exc: Any, ep: Endpoint, fmt: OutputFormat) -> Completion:
    """The answer instructor rejected (``exc``: its ``InstructorRetryException``), read by
    ``structured.read_reply``.

    Raises:
        EndpointError: no answer came (the call failed).
        InvalidAnswer: the answer is invalid: the reader's reason, the arguments as raw.
    """
    cause = exc.__cause__ or exc.__context__
    if cause is not None:
        error = endpoint_error(cause)
        if isinstance(error, EndpointError):  # no answer: not a schema failure
            raise error from cause
    if exc.last_completion is None:
        raise exc
    reply = reply_of(exc.last_completion)
    raise_provider_error(reply, ep.id)
    noted = start_noting()
    try:
        answer = read_reply(reply, fmt.schema)  # refusals, filters, cuts named, not re-asked
    except InvalidAnswer as invalid:
        raise invalid from None
    return completion_of(exc.last_completion, reply, ep, answer.obj, len(noted))
