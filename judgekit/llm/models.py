"""What the client keeps per model spec: cache-key prefixes, record fields, and its backend.

Keys and record fields are computed once per (spec, schema, prompt), not per call. The backend
(endpoint limiters, the Router, the embedded server) is built only when a call is needed, so a
run answered entirely from the run log or the cache starts no server and imports no litellm.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from judgekit.llm.backends import Backend, Sender, SingleBackend
from judgekit.llm.cache import key_prefix
from judgekit.llm.endpoint import make_endpoint
from judgekit.llm.limits import EndpointLimiter
from judgekit.llm.local import EmbeddedServer
from judgekit.llm.logprob_watch import LogprobWatch, cached_label_probs
from judgekit.llm.params import sent_params
from judgekit.llm.router import RoutedBackend, chain_of
from judgekit.llm.spec import ModelSpec
from judgekit.llm.structured import OutputFormat, cached_answer, output_format
from judgekit.llm.task import Task
from judgekit.prompts import Prompt
from judgekit.runlog import Record

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

    def cached_record(self, task: Task, hit: Any) -> Record | None:
        """The ``ok`` record of ``task`` answered by the cache entry ``hit``, or None when the
        entry is not a valid answer of the task's schema (:func:`cached_answer`): the task is
        then called and its entry rewritten."""
        answer = cached_answer(hit, task.schema)
        if answer is None:
            return None
        return _new_record(
            {**self.static(task), "key": task.key, "sample_index": task.sample_index,
             "meta": task.meta, "status": "ok", "raw": answer[0], "parsed": answer[1],
             "cache_hit": True, **(cached_label_probs(hit) if self.logprobs else {})}
        )  # fmt: skip


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
            server = EmbeddedServer(spec.model_id, n_ctx=window, logits_all=spec.logprobs)
            await asyncio.to_thread(server.start)
            self._servers[key] = server
        return server.api_base

    def close(self) -> None:
        """Stop the embedded servers this registry started."""
        for server in self._servers.values():
            server.stop()
        self._servers.clear()
