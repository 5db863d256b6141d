"""Structured output: what a request asks for, how an answer is validated, how a re-ask looks.

One strategy per backend (``ModelSpec.strategy``): ``json_schema`` (vLLM guided decoding,
OpenAI), ``json_object`` + ``schema`` (llama.cpp), ``tools`` (a forced function call) or
``prompt`` (the schema in the prompt only). The answer is validated with pydantic in every case;
an error string is never parsed as an answer and nothing is mapped to a default.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic_core import SchemaError

from judgekit.llm.answers import lax_bool_fields
from judgekit.llm.outcome import classify
from judgekit.llm.reply import Reply, json_span

_CHARS_PER_TOKEN = 3  # conservative: more tokens per character than English prose has
_REASK_RAW_CHARS = 1500
REASKABLE = ("empty", "malformed_json", "schema")  # the reasons a re-ask may fix


def reaskable(reason: str | None) -> bool:
    """Whether a re-ask may fix an answer rejected for ``reason`` (one of :data:`REASKABLE`:
    an empty, malformed or off-schema answer; never a refusal, filter, cut or error)."""
    return reason is not None and reason.startswith(REASKABLE)


class InvalidAnswer(Exception):
    """The model answered, but not with a valid instance of the schema.

    Attributes:
        reason: starts with one of the reasons of ``outcome.REASONS`` (``empty``,
            ``malformed_json``, ``schema`` for an answer; ``truncated``,
            ``reasoning_unfinished``, ``content_filter``, ``refusal`` for the others).
        raw: the answer as received (a leading ``<think>`` block removed).
        reask: whether a re-ask may help (only for ``empty``, ``malformed_json``, ``schema``).
        reasoning: the reasoning that came with the answer, if any.
        note: where the answer was read from, when not from the content.
        off_schema: False when the answer is valid under the JSON schema sent and failed only
            a check the JSON schema cannot state (a validator: five meanings that are not
            distinct; pydantic's stripping: " " is no non-empty text), so the endpoint did
            follow the schema (``health.py`` warns only otherwise).
    """

    def __init__(
        self,
        reason: str,
        raw: str | None,
        *,
        reask: bool = True,
        reasoning: str | None = None,
        note: str | None = None,
        off_schema: bool = True,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.raw = raw
        self.reask = reask and reaskable(reason)
        self.reasoning = reasoning
        self.note = note
        self.off_schema = off_schema


@dataclass(frozen=True)
class Answer:
    """A validated answer: the schema instance, the ``raw`` text it was read from (a leading
    ``<think>`` block removed), the ``reasoning`` and a ``note`` (``outcome.Outcome.note``)."""

    obj: BaseModel
    raw: str | None
    reasoning: str | None
    note: str | None


def read_reply(reply: Reply, schema: type[BaseModel]) -> Answer:
    """Validate a provider's reply against ``schema``: the one reading of an answer, online
    and from a batch alike (a pure function of the reply and the schema).

    The reply is classified (``outcome.classify``): refusals, filtered and truncated replies
    and unfinished reasoning are never parsed; an answer's text (a leading closed ``<think>``
    block already removed by the builder, so braces inside it never count) is parsed strictly
    (:func:`parse_answer`).

    Raises:
        InvalidAnswer: the reply is no valid answer; ``reask`` False where a re-ask cannot help.
    """
    outcome = classify(reply)
    raw = outcome.text if outcome.text is not None else reply.text
    if outcome.kind != "answer":
        reason = outcome.reason or outcome.kind
        raise InvalidAnswer(reason, raw, reask=False, reasoning=reply.reasoning)
    if outcome.text is None and reply.extra.get("content_not_text"):  # a number as content
        shown = reply.extra["content_not_text"]
        raise InvalidAnswer("empty: the content is not text", shown, reasoning=reply.reasoning)
    try:
        obj = parse_answer(outcome.text, schema, None)
    except InvalidAnswer as exc:
        exc.reasoning, exc.note = reply.reasoning, outcome.note
        raise
    return Answer(obj, outcome.text, reply.reasoning, outcome.note)


@dataclass(frozen=True)
class OutputFormat:
    """The request fields and the validator for one (schema, strategy).

    Attributes:
        schema: the pydantic model answers must validate against.
        strategy: ``json_schema``, ``json_object``, ``tools`` or ``prompt``.
        json_schema: the schema as JSON Schema.
        digest: SHA-256 of the canonical JSON Schema (for cache keys).
        fields: request fields to send (``response_format``, ``tools``/``tool_choice``).
        hint: text appended to the last message (``prompt`` strategy only).
    """

    schema: type[BaseModel]
    strategy: str
    json_schema: dict[str, Any]
    digest: str
    fields: dict[str, Any]
    hint: str | None


@lru_cache(maxsize=1024)
def output_format(schema: type[BaseModel], strategy: str) -> OutputFormat:
    """The (cached) :class:`OutputFormat` of ``schema`` under ``strategy``.

    Raises:
        ValueError: an unknown strategy, or a schema with a plain ``bool`` (answers' booleans
            are :data:`judgekit.llm.answers.AnswerBool`, one rule for every schema).
    """
    if lax_bool_fields(schema):
        raise ValueError(
            f"schema {schema.__name__} has a plain bool field: declare answer booleans as "
            "judgekit.llm.answers.AnswerBool (strict true/false, normalisation recorded)"
        )
    js = schema.model_json_schema()
    canonical = json.dumps(js, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    name = schema.__name__
    hint = None
    fields: dict[str, Any]
    if strategy == "json_schema":
        fields = {
            "response_format": {"type": "json_schema", "json_schema": {"name": name, "schema": js}}
        }
    elif strategy == "json_object":
        fields = {"response_format": {"type": "json_object", "schema": js}}
    elif strategy == "tools":
        function = {"name": name, "description": f"Return the {name}.", "parameters": js}
        fields = {
            "tools": [{"type": "function", "function": function}],
            "tool_choice": {"type": "function", "function": {"name": name}},
        }
    elif strategy == "prompt":
        fields = {}
        hint = "\n\nAnswer with JSON only, matching this JSON schema:\n" + json.dumps(js)
    else:
        raise ValueError(f"unknown structured-output strategy {strategy!r}")
    return OutputFormat(schema, strategy, js, digest, fields, hint)


def with_hint(messages: list[dict[str, Any]], fmt: OutputFormat) -> list[dict[str, Any]]:
    """``messages`` with the ``prompt`` strategy's schema hint added to the last one."""
    if fmt.hint is None or not messages:
        return messages
    last = messages[-1]
    return [*messages[:-1], {**last, "content": str(last.get("content", "")) + fmt.hint}]


def _validation_summary(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(x) for x in err["loc"]) or "answer"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


# a schema's own validator failing on an odd answer (``None.strip()``...): the answer is invalid
_VALIDATOR_BUGS = (AttributeError, TypeError, KeyError, IndexError)


# pydantic's error types of a schema's own validators: checks beyond what JSON Schema states
_VALIDATOR_ERRORS = frozenset({"value_error", "assertion_error"})


@lru_cache(maxsize=256)
def _json_schema_check(schema: type[BaseModel]) -> Any:
    """A jsonschema validator of the JSON schema judgekit sends for ``schema`` (cached), its
    ``pattern`` checked by pydantic's regex engine (:func:`_pattern`)."""
    from jsonschema.validators import extend, validator_for  # only when an answer fails

    js = schema.model_json_schema()
    return extend(validator_for(js), {"pattern": _pattern})(js)


@lru_cache(maxsize=256)
def _pattern_adapter(pattern: str) -> TypeAdapter[str]:
    """A text matching ``pattern`` under Rust's regex, else (a look-around: a model configured
    with ``regex_engine="python-re"``) under Python's ``re``, as that model reads it."""
    text = Annotated[str, Field(pattern=pattern)]
    try:
        return TypeAdapter(text)
    except SchemaError:
        return TypeAdapter(text, config=ConfigDict(regex_engine="python-re"))


def _pattern(validator: Any, pattern: str, instance: Any, _schema: Any) -> Iterator[Any]:
    """jsonschema's ``pattern`` keyword as pydantic reads it (Rust regex: ``\\p{L}``, which
    Python's ``re`` cannot compile, and linear time where ``re`` backtracks exponentially)."""
    from jsonschema.exceptions import ValidationError as Off

    if validator.is_type(instance, "string"):
        try:
            _pattern_adapter(pattern).validate_python(instance)
        except ValidationError:
            yield Off(f"{instance[:40]!r} does not match {pattern!r}")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is no JSON")


def _off_schema(exc: ValidationError, schema: type[BaseModel], text: str) -> bool:
    """Whether ``text`` (JSON pydantic read) fails the JSON schema sent for ``schema``."""
    try:
        answer = json.loads(text, strict=False, parse_constant=_no_constant)
    except (ValueError, RecursionError):  # NaN, Infinity, a number Python will not convert
        return True
    try:
        return not _json_schema_check(schema).is_valid(answer)
    except Exception:  # jsonschema cannot decide (a keyword it cannot compile,
        # recursion): the kind of pydantic error does, as before jsonschema was asked
        return any(err["type"] not in _VALIDATOR_ERRORS for err in exc.errors())


def _validator_raised(exc: Exception, raw: str | None) -> InvalidAnswer:
    reason = f"schema: a validator raised {type(exc).__name__}: {exc}"
    return InvalidAnswer(reason, raw, off_schema=False)


def _schema_failure(
    exc: ValidationError, raw: str | None, schema: type[BaseModel], text: str
) -> InvalidAnswer:
    """An answer that is JSON (``text``) but no instance of ``schema``; ``off_schema`` when it
    fails the JSON schema sent with the request too (jsonschema decides, not the kind of
    pydantic error: a validator's check, or a string of spaces that pydantic strips before its
    ``min_length``, is what a server following the schema may still send)."""
    off = _off_schema(exc, schema, text)
    return InvalidAnswer(f"schema: {_validation_summary(exc)}", raw, off_schema=off)


def parse_answer(raw: str | None, schema: type[BaseModel], finish_reason: str | None) -> BaseModel:
    """Validate a raw answer against ``schema``.

    The answer is the first complete JSON value of ``raw`` (:func:`judgekit.llm.reply.json_span`:
    prose after it, a fence around it, a sentence before it are one class, read the same way);
    ``raw`` itself is what the record keeps.

    Raises:
        InvalidAnswer: empty, truncated (``finish_reason == "length"``), no complete JSON value,
            or not an instance of the schema; ``reason`` starts with one of ``empty``,
            ``truncated``, ``malformed_json``, ``schema``.
    """
    if raw is None or not raw.strip():
        raise InvalidAnswer("empty: the model returned no content", raw)
    if finish_reason == "length":
        raise InvalidAnswer("truncated: finish_reason=length (raise max_tokens)", raw)
    span = json_span(raw)
    text = raw if span is None else raw[span[0] : span[1]]  # the first complete JSON value
    try:
        return schema.model_validate_json(text)
    except _VALIDATOR_BUGS as exc:
        raise _validator_raised(exc, raw) from None
    except ValidationError as exc:
        errors = exc.errors()
        if not errors or errors[0]["type"] != "json_invalid":
            raise _schema_failure(exc, raw, schema, text) from None
        detail = str(errors[0].get("ctx", {}).get("error", errors[0]["msg"]))
        if span is None or "control character" not in detail:
            raise InvalidAnswer(f"malformed_json: {detail}", raw) from None
    # a raw line break or tab inside a string (small models write them): the text is still
    # unambiguous (json_span read it as Python's non-strict JSON reader does), then validate
    try:
        answer = json.loads(text, strict=False)
    except ValueError as exc:  # an integer of more digits than Python converts
        raise InvalidAnswer(f"malformed_json: {exc}", raw) from None
    try:
        return schema.model_validate(answer)
    except _VALIDATOR_BUGS as exc:
        raise _validator_raised(exc, raw) from None
    except ValidationError as exc:
        raise _schema_failure(exc, raw, schema, text) from None


def cached_answer(hit: Any, schema: type[BaseModel]) -> tuple[str, Any] | None:
    """``(raw, parsed)`` of a cache entry ``{"raw": str, "parsed": ...}`` whose answer
    validates against ``schema``, ``parsed`` as a fresh answer stores it
    (``model_dump(mode="json")``); None for any other entry (corrupt, written by something else,
    or rejected by the schema's validators)."""
    try:  # pydantic-core's validator and serializer: model_validate and model_dump, unwrapped
        raw = hit["raw"]
        obj = schema.__pydantic_validator__.validate_python(hit["parsed"])
        parsed = schema.__pydantic_serializer__.to_python(obj, mode="json")
    except Exception:  # whatever the entry holds, it is not an answer to use
        return None
    return (raw, parsed) if isinstance(raw, str) else None


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """A cheap upper estimate of the prompt tokens of ``messages`` (characters / 3)."""
    chars = sum(len(str(m.get("content") or "")) for m in messages)
    return chars // _CHARS_PER_TOKEN + 4 * len(messages)


def reask_messages(
    messages: list[dict[str, Any]],
    raw: str | None,
    reason: str,
    *,
    window: int | None,
    max_tokens: int,
) -> list[dict[str, Any]] | None:
    """The original ``messages`` plus only the latest answer and a short correction.

    The context never grows by more than one answer (cut to 1,500 characters) and one
    correction, whatever the number of re-asks; where the model's ``window`` (tokens) is
    known, the answer shown is cut further so that prompt + ``max_tokens`` fit in it.
    Returns None when even an empty answer would not fit (no re-ask is possible).
    """
    correction = {
        "role": "user",
        "content": (
            f"Your answer was invalid ({reason[:300]}). Reply again with only the JSON "
            "object in the required format, nothing else."
        ),
    }
    budget_chars = _REASK_RAW_CHARS
    if window is not None:
        used = estimate_tokens([*messages, correction]) + max_tokens + 8
        budget_chars = min(budget_chars, (window - used) * _CHARS_PER_TOKEN)
        if budget_chars < 0:
            return None
    shown = (raw or "")[: max(0, budget_chars)]
    return [*messages, {"role": "assistant", "content": shown}, correction]
