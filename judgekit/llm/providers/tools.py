"""Tool calling (the ``tools`` strategy) through instructor over litellm.

instructor forces one function call whose arguments are the schema and validates them; an
answer that does not validate becomes ``InvalidAnswer`` with the arguments as raw text (re-asked
by ``call.py``, never retried here), a transport failure the classified ``EndpointError``.
"""

from __future__ import annotations

from typing import Any

from judgekit.llm.answers import start_noting
from judgekit.llm.endpoint import Completion, Endpoint, litellm_route
from judgekit.llm.errors import EndpointError
from judgekit.llm.outcome import classify, raise_provider_error
from judgekit.llm.providers.litellm import (
    completion_of,
    endpoint_error,
    litellm_kwargs,
    reply_of,
)
from judgekit.llm.structured import InvalidAnswer, OutputFormat


class ToolsProvider:
    """Holds the one instructor client (built on first use) of a sender."""

    def __init__(self) -> None:
        self._client: Any = None

    async def chat(
        self, ep: Endpoint, messages: list[dict[str, Any]], fmt: OutputFormat
    ) -> Completion:
        """One forced tool call on ``ep``.

        Raises:
            InvalidAnswer: the arguments do not validate against the schema.
            EndpointError: litellm's errors, classified.
        """
        import instructor
        import litellm
        from instructor.core.exceptions import InstructorRetryException

        if self._client is None:
            self._client = instructor.from_litellm(litellm.acompletion, mode=instructor.Mode.TOOLS)
        kwargs = litellm_kwargs(ep, fmt)
        noted = start_noting()  # booleans instructor's validation reads from strings
        try:
            parsed, response = await self._client.chat.completions.create_with_completion(
                model=litellm_route(ep.spec), messages=messages, response_model=fmt.schema,
                max_retries=0, **kwargs,
            )  # fmt: skip
        except InstructorRetryException as exc:
            cause = exc.__cause__ or exc.__context__
            if cause is not None:
                error = endpoint_error(cause)
                if isinstance(error, EndpointError):  # no answer: not a schema failure
                    raise error from cause
            if exc.last_completion is None:
                raise
            reply = reply_of(exc.last_completion)
            raise_provider_error(reply, ep.id)
            outcome = classify(reply)  # a refusal, filter or cut: named, not re-asked
            if outcome.kind != "answer" and outcome.reason is not None:
                raise InvalidAnswer(
                    outcome.reason, reply.text, reask=False, reasoning=reply.reasoning
                ) from None
            raw = reply.text
            raise InvalidAnswer(
                f"schema: {exc}".split("\n")[0][:300], raw, reasoning=reply.reasoning
            ) from None
        except InvalidAnswer:
            raise
        except Exception as exc:
            raise endpoint_error(exc) from exc
        return completion_of(response, reply_of(response), ep, parsed, len(noted))
