"""What the client keeps per model spec: cache keys, records, and its backend.

:class:`ModelState` is the one path from an answer to a record: its cache key
(:meth:`ModelState.cache_key`), the record of a completion (:meth:`ModelState.record`: the
validation of ``structured.read_reply``, the booleans normalised, the label probabilities of
``logprobs.py``), the record of a cache hit and the cache entry of an answer. The online call
(``call.py``), the client's cache hits and ``judgekit batch import`` all use it: a batch answer
is an online answer that came late. Keys and record fields are computed once per (spec,
schema, prompt), not per call. The backend (endpoint limiters, the Router, the embedded
server) is built only when a call is needed, so a run answered entirely from the run log or
the cache starts no server and imports no litellm.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from judgekit.llm.answers import start_noting
from judgekit.llm.backends import Backend, Sender, SingleBackend
from judgekit.llm.cache import key_prefix, task_key
from judgekit.llm.endpoint import Completion, make_endpoint
from judgekit.llm.limits import EndpointLimiter
from judgekit.llm.local import EmbeddedServer, held_server, start_server
from judgekit.llm.logprob_watch import LogprobWatch, cached_label_probs
from judgekit.llm.params import sent_params
from judgekit.llm.router import RoutedBackend, chain_of
from judgekit.llm.secrets import redact
from judgekit.llm.spec import ModelSpec
from judgekit.llm.structured import (
    InvalidAnswer,
    OutputFormat,
    cached_answer,
    output_format,
    read_reply,
)
from judgekit.llm.task import Task
from judgekit.prompts import Prompt
from judgekit.runlog import Record

_SERVED = ("served_model", "system_fingerprint")  # who served an answer, cached with it
_new_record = Record.__pydantic_validator__.validate_python  # Record.model_validate, unwrapped


class ModelState:
    """One spec as the client uses it: ``params``, formats and key prefixes per schema, the
    static record fields per (prompt, schema, stage, role), ``backend`` once built, and
    ``logprobs`` (the reader of its label probabilities, where it asks for them)."""

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        self.params = sent_params(spec)  # what is sent (a route may not take them all)
        self.backend: Backend | None = None
        self.logprobs = LogprobWatch(spec) if spec.logprobs else None
        self._formats: dict[type[BaseModel], tuple[OutputFormat, str]] = {}
        self._statics: dict[tuple[int, type[BaseModel], str, str], tuple[Prompt, dict]] = {}

    def format(self, schema: type[BaseModel]) -> tuple[OutputFormat, str]:
        """(output format, cache-key prefix) of ``schema`` for this spec."""
        hit = self._formats.get(schema)
        if hit is None:
            fmt = output_format(schema, self.spec.strategy())
            prefix = key_prefix(
                route=self.spec.model, params=self.params, schema_digest=fmt.digest,
                strategy=fmt.strategy, revision=self.spec.revision,
            )  # fmt: skip
            hit = self._formats[schema] = (fmt, prefix)
        return hit

    def static(self, task: Task) -> dict[str, Any]:
        """The record fields that are the same for every task of this prompt and schema."""
        ident = (id(task.prompt), task.schema, task.stage, task.role)
        hit = self._statics.get(ident)
        if hit is None or hit[0] is not task.prompt:
            fields = {"stage": task.stage, "role": task.role, "route": self.spec.model,
                      "model": self.spec.label, "prompt_id": task.prompt.id,
                      "prompt_hash": task.prompt.hash, "params": self.params,
                      "schema_name": task.schema.__name__}  # fmt: skip
            hit = self._statics[ident] = (task.prompt, fields)
        return hit[1]

    def cache_key(self, task: Task) -> str:
        """The response-cache key of ``task`` (SHA-256 hex of this spec's prefix for the task's
        schema, its messages and sample index; :func:`~judgekit.llm.cache.task_key`): the one
        spelling of it, for lookups and writes, online and in batch export and import."""
        return task_key(self.format(task.schema)[1], task.messages, task.sample_index)

    def base(self, task: Task) -> dict[str, Any]:
        """The record fields every outcome of ``task`` shares (static fields, key, sample index,
        meta)."""
        return {**self.static(task), "key": task.key, "sample_index": task.sample_index,
                "meta": task.meta}  # fmt: skip

    def record(
        self,
        task: Task,
        completion: Completion | None,
        base: dict[str, Any],
        on_warning: Callable[[str], None] | None = None,
    ) -> Record:
        """The record of ``task``: the one builder, online, from a batch and from the cache.

        Args:
            task: the task answered.
            completion: its answer, validated here: ``ok`` with ``parsed`` (the answer's
                ``model_dump(mode="json")``), the booleans ``normalised`` and, where this spec
                asks for them, ``label_probs`` read from the reply's choice; else ``unscored``
                with the raw text and the reason (``structured.read_reply``). The serving
                endpoint's health counts the answer (its schema warning goes to
                ``on_warning``). None: no answer to read (``base`` then says the status).
            base: the other fields (:meth:`base` plus the call's ``attempts``, ``latency_s``,
                ``batch``...); tokens, cost and ``served_by`` given here override the
                completion's (an online call's totals over its attempts).
            on_warning: called with the endpoint's and the log-probability reader's warnings.

        Raises:
            pydantic.ValidationError: ``base`` lacks a record field (a bug, not an answer).
        """
        if completion is None:
            return _new_record(base)
        reply = completion.reply
        usage = {"tokens_in": completion.tokens_in, "tokens_out": completion.tokens_out,
                 "cost": completion.cost, "served_by": completion.served_by,
                 "served_model": reply.served_model,
                 "system_fingerprint": reply.system_fingerprint}  # fmt: skip
        answer = self.answer(task.schema, completion, on_warning)
        return _new_record({**usage, **base, **answer})

    def answer(
        self,
        schema: type[BaseModel],
        completion: Completion,
        on_warning: Callable[[str], None] | None = None,
    ) -> dict[str, Any]:
        """The answer fields of a record of ``completion`` for ``schema`` (``status``, ``raw``,
        ``parsed`` or ``reason``, ``reasoning``, ``note``, ``normalised``, label probabilities;
        see :meth:`record`). Never raises for a bad answer."""
        reply, failure = completion.reply, None
        noted = start_noting()  # booleans read from strings (judgekit.llm.answers)
        try:
            if completion.parsed is not None:  # validated by the backend (instructor)
                obj, raw, reasoning, note = completion.parsed, reply.text, reply.reasoning, None
                normalised = completion.normalised
            else:
                read = read_reply(reply, schema)
                obj, raw, reasoning, note = read.obj, read.raw, read.reasoning, read.note
                normalised = len(noted)
        except InvalidAnswer as exc:
            failure = exc
        if completion.health is not None:
            strategy = self.format(schema)[0].strategy
            # an answer of the schema's shape that failed a check beyond it followed the schema
            shown = failure.reason if failure is not None and failure.off_schema else None
            warning = completion.health.on_answer(strategy, shown)
            if warning is not None and on_warning is not None:
                on_warning(warning)
        if failure is not None:
            return {"status": "unscored", "raw": failure.raw, "reasoning": failure.reasoning,
                    "note": failure.note, "reason": redact(failure.reason)[:500]}  # fmt: skip
        fields = {"status": "ok", "raw": raw, "parsed": obj.model_dump(mode="json"),
                  "reasoning": reasoning, "note": note, "normalised": normalised}  # fmt: skip
        if self.logprobs is not None:  # the choice's own content: <think> block included
            content = None if reply.choice else reply.text
            fields.update(self.logprobs.read(reply.choice, schema, content, on_warning))
        return fields

    def cached_record(self, task: Task, hit: Any) -> Record | None:
        """The ``ok`` record of ``task`` answered by the cache entry ``hit``, or None when the
        entry is not a valid answer of the task's schema (:func:`cached_answer`): the task is
        then called and its entry rewritten."""
        answer = cached_answer(hit, task.schema)
        if answer is None:
            return None
        served = {k: v for k in _SERVED if isinstance(v := hit.get(k), str)}
        return self.record(task, None, {
            **self.base(task), "status": "ok", "raw": answer[0], "parsed": answer[1],
            "cache_hit": True, **served, **(cached_label_probs(hit) if self.logprobs else {})
        })  # fmt: skip

    @staticmethod
    def cache_entry(record: Record) -> dict[str, Any] | None:
        """The cache entry of an ``ok`` record (its raw text and parsed answer, and the label
        probabilities read with it); None for any other record (never cached)."""
        if record.status != "ok":
            return None
        entry = {"raw": record.raw, "parsed": record.parsed}
        entry |= {k: v for k in _SERVED if (v := getattr(record, k)) is not None}
        if record.label_probs is not None:  # kept with the answer (judgekit.llm.logprobs)
            entry["label_probs"] = record.label_probs
            entry["label_probs_bound"] = record.label_probs_bound
        return entry


class ModelRegistry:
    """The :class:`ModelState` of every spec a client has seen, and their backends.

    Args:
        sender: makes the calls of every backend (one shared transport).
    """

    def __init__(self, sender: Sender) -> None:
        self.sender = sender
        self._states: dict[int, ModelState] = {}
        self._servers: dict[str, EmbeddedServer] = {}
        self._local_limiters: dict[str, EndpointLimiter] = {}
        self._locks: dict[int, asyncio.Lock] = {}

    def get(self, spec: ModelSpec) -> ModelState:
        """The state of ``spec`` (specs are told apart by identity)."""
        state = self._states.get(id(spec))
        if state is None or state.spec is not spec:
            state = self._states[id(spec)] = ModelState(spec)
        return state

    def states(self) -> list[ModelState]:
        """Every state so far."""
        return list(self._states.values())

    async def backend(self, state: ModelState) -> Backend:
        """The backend of ``state``, built on first use (starting embedded servers).

        Raises:
            JudgekitError: an API key is missing, or the embedded model cannot start.
        """
        if state.backend is not None:
            return state.backend
        loop = id(asyncio.get_running_loop())
        async with self._locks.setdefault(loop, asyncio.Lock()):
            if state.backend is None:
                state.backend = await self._build(state.spec)
        return state.backend

    async def _build(self, spec: ModelSpec) -> Backend:
        api_bases = {}
        for member in chain_of(spec):
            if member.is_local:
                api_bases[member.model] = await self._start_local(member)
        if spec.is_routed:
            return RoutedBackend(spec, self.sender, api_bases, self._local_limiters)
        endpoint = make_endpoint(spec, None, api_bases.get(spec.model), self._local_limiters)
        return SingleBackend(spec, self.sender, endpoint)

    async def _start_local(self, spec: ModelSpec) -> str:
        # a spec that asks for log-probabilities needs a server that keeps every token's logits
        key = spec.model_id + ("+logits" if spec.logprobs else "")
        server = self._servers.get(key)
        if server is None:
            window = spec.window() or 4096
            held = held_server(spec.model_id, n_ctx=window, logits_all=spec.logprobs)
            server = held or EmbeddedServer(spec.model_id, n_ctx=window, logits_all=spec.logprobs)
            await start_server(server)  # a held server already up: returns at once
            if held is None:  # a held one is stopped by shared_servers(), not by close()
                self._servers[key] = server
        return server.api_base

    def close(self) -> None:
        """Stop the embedded servers this registry started."""
        for server in self._servers.values():
            server.stop()
        self._servers.clear()
