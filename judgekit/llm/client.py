"""Async structured calls: one task in, one validated pydantic object (or a reasoned failure) out.

Path of a call: run log (resume) -> cache -> in-flight limit -> litellm -> validate (pydantic)
-> bounded re-ask -> record. The structured-output strategy is chosen per backend (see
``ModelSpec.strategy``): ``json_schema`` / ``json_object`` responses are validated here with
pydantic; ``tools`` goes through instructor's tool calling. Every task ends as exactly one
record: ``ok``, ``unscored`` (answered, never validly; raw answer and reason kept) or ``error``
(no answer). An error string is never parsed as an answer, and nothing is mapped to a default.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from judgekit.llm.cache import ResponseCache, cache_key
from judgekit.llm.local import EmbeddedServer
from judgekit.llm.retry import is_transient, retrying
from judgekit.llm.spec import ModelSpec
from judgekit.prompts import Prompt
from judgekit.runlog import Record, RunLog


@dataclass
class Task:
    """One structured LLM call a pipeline asks for.

    Attributes:
        key: stable id of the task in the run (resume skips keys already recorded).
        stage: pipeline stage (``generate``, ``judge``...).
        role: config role whose model answers (``generator``, ``judge``...).
        spec: the model.
        messages: chat messages (OpenAI format).
        schema: pydantic model the answer must validate against.
        prompt: the template the messages were rendered from (id and hash are recorded).
        sample_index: repeat number for deliberate resampling (part of the cache key).
        meta: data the pipeline needs back with the record (word, language...).
    """

    key: str
    stage: str
    role: str
    spec: ModelSpec
    messages: list[dict[str, Any]]
    schema: type[BaseModel]
    prompt: Prompt
    sample_index: int = 0
    meta: dict[str, Any] = field(default_factory=dict)


class InvalidAnswer(Exception):
    """The model answered, but not with a valid instance of the schema."""

    def __init__(self, reason: str, raw: str | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.raw = raw


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
_SECRET_ENV = re.compile(r"(API_KEY|_KEY|TOKEN|SECRET)$")


def _secrets() -> list[str]:
    return [v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= 8]


def redact(text: str) -> str:
    """Replace the value of every secret-looking environment variable in ``text`` by ``***``."""
    for secret in _secrets():
        text = text.replace(secret, "***")
    return text


def _validation_summary(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(x) for x in err["loc"]) or "answer"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def parse_answer(raw: str | None, schema: type[BaseModel], finish_reason: str | None) -> BaseModel:
    """Validate a raw answer against ``schema``.

    Raises:
        InvalidAnswer: empty, truncated (``finish_reason == "length"``), not JSON, or not an
            instance of the schema; ``reason`` starts with one of ``empty``, ``truncated``,
            ``malformed_json``, ``schema``.
    """
    if raw is None or not raw.strip():
        raise InvalidAnswer("empty: the model returned no content", raw)
    if finish_reason == "length":
        raise InvalidAnswer("truncated: finish_reason=length (raise max_tokens)", raw)
    text = raw.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidAnswer(f"malformed_json: {exc.msg} at char {exc.pos}", raw) from None
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise InvalidAnswer(f"schema: {_validation_summary(exc)}", raw) from None


class LLMClient:
    """Runs tasks against their models, with cache, retries, re-asks and one record per task.

    Args:
        runlog: the run's record log (tasks already in it are returned, not called).
        cache: response cache, or None to disable.
        on_record: called with each new record (progress display).
    """

    def __init__(
        self,
        runlog: RunLog,
        cache: ResponseCache | None = None,
        on_record: Callable[[Record], None] | None = None,
    ) -> None:
        self.runlog = runlog
        self.cache = cache
        self.on_record = on_record
        self.calls_made = 0  # HTTP attempts sent by this process
        self.seen: dict[str, Record] = {}  # every record this run used, resumed or new
        self._limits: dict[str, asyncio.Semaphore] = {}
        self._servers: dict[str, EmbeddedServer] = {}
        self._server_lock = asyncio.Lock()
        self._instructor: Any = None

    # -- backends -------------------------------------------------------------------------
    async def _endpoint(self, spec: ModelSpec) -> tuple[str, str | None, str | None]:
        """(litellm model, api_base, api_key) for a spec; starts the embedded server lazily."""
        api_key = None
        if spec.api_key_env:
            api_key = os.environ.get(spec.api_key_env)
            if not api_key:
                from judgekit.errors import JudgekitError

                raise JudgekitError(f"environment variable {spec.api_key_env} is not set")
        if spec.is_local:
            async with self._server_lock:
                server = self._servers.get(spec.model_id)
                if server is None:
                    server = EmbeddedServer(spec.model_id)
                    await asyncio.to_thread(server.start)
                    self._servers[spec.model_id] = server
            return f"openai/{spec.model_id}", server.api_base, api_key or "sk-local"
        if spec.provider == "hosted_vllm":
            return spec.model, spec.api_base, api_key or "sk-none"
        return spec.model, spec.api_base, api_key

    def _limit(self, spec: ModelSpec) -> asyncio.Semaphore:
        key = f"{spec.model}@{spec.api_base}"
        if key not in self._limits:
            self._limits[key] = asyncio.Semaphore(spec.concurrency())
        return self._limits[key]

    def close(self) -> None:
        """Stop embedded servers."""
        for server in self._servers.values():
            server.stop()
        self._servers.clear()

    # -- one call --------------------------------------------------------------------------
    async def _complete(
        self, spec: ModelSpec, messages: list[dict[str, Any]], schema: type[BaseModel]
    ) -> tuple[str | None, str | None, Any, BaseModel | None]:
        """One HTTP call. Returns (raw, finish_reason, response, parsed-or-None for tools)."""
        import litellm

        model, api_base, api_key = await self._endpoint(spec)
        kwargs: dict[str, Any] = dict(spec.params())
        kwargs.update(timeout=spec.timeout, num_retries=0)
        if api_base:
            kwargs["api_base"] = api_base
        if api_key:
            kwargs["api_key"] = api_key
        strategy = spec.strategy()
        json_schema = schema.model_json_schema()
        if strategy == "tools":
            return await self._complete_tools(model, messages, schema, kwargs)
        if strategy == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": json_schema},
            }
        elif strategy == "json_object":
            kwargs["response_format"] = {"type": "json_object", "schema": json_schema}
        else:  # prompt: the schema travels in the prompt only
            messages = [*messages[:-1], _with_schema_hint(messages[-1], json_schema)]
        response = await litellm.acompletion(model=model, messages=messages, **kwargs)
        choice = response.choices[0]
        return choice.message.content, choice.finish_reason, response, None

    async def _complete_tools(
        self,
        model: str,
        messages: list[dict[str, Any]],
        schema: type[BaseModel],
        kwargs: dict[str, Any],
    ) -> tuple[str | None, str | None, Any, BaseModel | None]:
        import instructor
        import litellm
        from instructor.core.exceptions import InstructorRetryException

        if self._instructor is None:
            self._instructor = instructor.from_litellm(
                litellm.acompletion, mode=instructor.Mode.TOOLS
            )
        try:
            parsed, response = await self._instructor.chat.completions.create_with_completion(
                model=model, messages=messages, response_model=schema, max_retries=0, **kwargs
            )
        except InstructorRetryException as exc:
            cause = exc.__cause__ or exc.__context__
            if cause is not None and is_transient(cause):
                raise cause from None
            completion = exc.last_completion
            if completion is None:
                raise
            raw = _tool_arguments(completion)
            raise InvalidAnswer(f"schema: {exc}".split("\n")[0][:300], raw) from None
        return _tool_arguments(response), response.choices[0].finish_reason, response, parsed

    async def run(self, task: Task) -> Record:
        """Run one task to its record (resume, cache, retries, re-asks). Never raises for a
        model failure: failures become ``unscored``/``error`` records."""
        done = self.runlog.get(task.key)
        if done is not None:
            self.seen[task.key] = done
            return done
        spec = task.spec
        schema_json = task.schema.model_json_schema()
        key = cache_key(
            route=spec.model,
            messages=task.messages,
            params=spec.params(),
            schema=schema_json,
            strategy=spec.strategy(),
            sample_index=task.sample_index,
        )
        base = {
            "key": task.key,
            "stage": task.stage,
            "role": task.role,
            "route": spec.model,
            "model": spec.label,
            "prompt_id": task.prompt.id,
            "prompt_hash": task.prompt.hash,
            "params": spec.params(),
            "schema_name": task.schema.__name__,
            "sample_index": task.sample_index,
            "meta": task.meta,
        }
        hit = self.cache.get(key) if self.cache else None
        if hit is not None:
            record = Record(
                **base, status="ok", raw=hit["raw"], parsed=hit["parsed"], cache_hit=True
            )
            return self._finish(record)
        async with self._limit(spec):
            record = await self._call(task, base)
        if record.status == "ok" and self.cache is not None:
            self.cache.set(key, {"raw": record.raw, "parsed": record.parsed})
        return self._finish(record)

    async def _call(self, task: Task, base: dict[str, Any]) -> Record:
        spec = task.spec
        messages = list(task.messages)
        attempts = reasks = tokens_in = tokens_out = 0
        cost = 0.0
        raw: str | None = None
        started = time.monotonic()
        total_budget = spec.timeout * spec.max_retries + spec.retry_max_wait * spec.max_retries
        for reask in range(spec.max_reasks + 1):
            reasks = reask
            try:
                async for attempt in retrying(spec.max_retries, spec.retry_max_wait, total_budget):
                    with attempt:
                        attempts += 1
                        self.calls_made += 1
                        raw, finish, response, parsed = await self._complete(
                            spec, messages, task.schema
                        )
            except InvalidAnswer as exc:  # tools mode validates inside instructor
                raw, reason = exc.raw, exc.reason
            except Exception as exc:  # transient errors outlasted retries, or a hard refusal
                kind = "transient" if is_transient(exc) else "request"
                return Record(
                    **base,
                    status="error",
                    reason=redact(f"{kind}: {type(exc).__name__}: {exc}")[:500],
                    raw=raw,
                    attempts=attempts,
                    reasks=reasks,
                    latency_s=round(time.monotonic() - started, 4),
                    tokens_in=tokens_in,
                    tokens_out=tokens_out,
                    cost=cost,
                )
            else:
                usage = getattr(response, "usage", None)
                t_in = int(getattr(usage, "prompt_tokens", 0) or 0)
                t_out = int(getattr(usage, "completion_tokens", 0) or 0)
                tokens_in, tokens_out = tokens_in + t_in, tokens_out + t_out
                cost += _cost(spec, response, t_in, t_out)
                try:
                    obj = parsed or parse_answer(raw, task.schema, finish)
                except InvalidAnswer as exc:
                    reason = exc.reason
                else:
                    return Record(
                        **base,
                        status="ok",
                        raw=raw,
                        parsed=obj.model_dump(mode="json"),
                        attempts=attempts,
                        reasks=reasks,
                        latency_s=round(time.monotonic() - started, 4),
                        tokens_in=tokens_in,
                        tokens_out=tokens_out,
                        cost=cost,
                    )
            # bounded re-ask: the original messages plus only the latest answer and correction
            messages = [*task.messages, *_reask_messages(raw, reason)]
        return Record(
            **base,
            status="unscored",
            reason=redact(reason)[:500],
            raw=raw,
            attempts=attempts,
            reasks=reasks,
            latency_s=round(time.monotonic() - started, 4),
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost=cost,
        )

    def _finish(self, record: Record) -> Record:
        self.seen[record.key] = record
        self.runlog.append(record)
        if self.on_record is not None:
            self.on_record(record)
        return record


def _with_schema_hint(message: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    hint = "\n\nAnswer with JSON only, matching this JSON schema:\n" + json.dumps(schema)
    return {**message, "content": str(message.get("content", "")) + hint}


def _reask_messages(raw: str | None, reason: str) -> list[dict[str, Any]]:
    shown = (raw or "")[:1500]
    return [
        {"role": "assistant", "content": shown},
        {
            "role": "user",
            "content": (
                f"Your answer was invalid ({reason[:300]}). Reply again with only the JSON "
                "object in the required format, nothing else."
            ),
        },
    ]


def _tool_arguments(response: Any) -> str | None:
    try:
        calls = response.choices[0].message.tool_calls
        return calls[0].function.arguments if calls else response.choices[0].message.content
    except (AttributeError, IndexError, TypeError):
        return None


def _cost(spec: ModelSpec, response: Any, tokens_in: int, tokens_out: int) -> float:
    """USD for one response: the spec's price if set, 0 for local servers, else litellm's."""
    if spec.price_input_per_mtok is not None or spec.price_output_per_mtok is not None:
        p_in = spec.price_input_per_mtok or 0.0
        p_out = spec.price_output_per_mtok or 0.0
        return (tokens_in * p_in + tokens_out * p_out) / 1e6
    if spec.is_openai_compatible_server:
        return 0.0
    hidden = getattr(response, "_hidden_params", {}) or {}
    if hidden.get("response_cost") is not None:
        return float(hidden["response_cost"])
    try:
        import litellm

        return float(litellm.completion_cost(completion_response=response))
    except Exception:  # no price known for this model
        return 0.0
