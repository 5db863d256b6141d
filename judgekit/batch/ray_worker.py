"""The Ray side of ``judgekit run --backend ray``: a block of task keys to their records.

A Ray worker process rebuilds the run's tasks from its config once (the pipeline's runner reads
the same inputs the driver read; a multi-node cluster needs them at the same paths) and judges
each key with :func:`judgekit.llm.call.call_task`, the online call: retries, re-asks,
validation and label probabilities are the online run's. It writes nothing: the records go back
to the driver as JSON, which records each key once (:mod:`judgekit.batch.ray_run`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from judgekit.batch.requests import batch_tasks
from judgekit.config import RunConfig
from judgekit.llm.backends import Sender
from judgekit.llm.call import call_task
from judgekit.llm.models import ModelRegistry
from judgekit.llm.task import Task
from judgekit.llm.transport import AiohttpTransport
from judgekit.runlog import Record

_JUDGES: dict[str, _Judge] = {}  # one per config in a worker process (Ray reuses workers)


class _Judge:
    """The tasks of one run config and the models to call, with their own event loop."""

    def __init__(self, config: RunConfig) -> None:
        from judgekit.pipelines import get_pipeline

        runner_cls, _ = get_pipeline(config.pipeline)
        runner = runner_cls(config, None)
        self.tasks: dict[str, Task] = {task.key: task for task in batch_tasks(runner)}
        self.models = ModelRegistry(Sender(AiohttpTransport()))
        self.loop = asyncio.new_event_loop()

    async def judge(self, key: str) -> Record:
        """The record of the task ``key`` (``ok``, ``unscored`` or ``error``), as online."""
        task = self.tasks[key]
        model = self.models.get(task.spec)
        fmt, _prefix = model.format(task.schema)
        if model.backend is None:
            await self.models.backend(model)
        base = {
            **model.static(task),
            "key": task.key,
            "sample_index": task.sample_index,
            "meta": task.meta,
        }  # fmt: skip  (LLMClient._base)
        record, _by_primary = await call_task(task, model, fmt, base, _no_count)
        return record

    def judge_all(self, keys: list[str]) -> list[Record]:
        """The records of ``keys``, judged concurrently (the models' own limits apply)."""

        async def all_of() -> list[Record]:
            return list(await asyncio.gather(*(self.judge(key) for key in keys)))

        return self.loop.run_until_complete(all_of())


def _no_count() -> None:
    """Requests are counted by the records' ``attempts``, not by the worker."""


def judge_batch(batch: dict[str, Any], config: RunConfig) -> dict[str, list[str]]:
    """Ray Data's ``map_batches`` function: ``{"key": [...]}`` to ``{"key": [...], "record":
    [record JSON, ...]}`` in the same order.

    Raises:
        KeyError: a key that is not a task of ``config`` (the driver's and the worker's inputs
            differ).
        JudgekitError: a model cannot be used at all (an API key variable unset).
    """
    digest = config.model_dump_json()
    judge = _JUDGES.get(digest)
    if judge is None:
        judge = _JUDGES[digest] = _Judge(config)
    keys = [str(key) for key in batch["key"]]
    records = judge.judge_all(keys)
    return {"key": keys, "record": [record.model_dump_json() for record in records]}
