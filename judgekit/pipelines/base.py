"""The pipeline contract: what a runner is, how its task keys are made, and its run loop.

A runner is built as ``Runner(config, client)``. Its constructor reads and validates every input
(items file, prompts, models) and raises the located :class:`~judgekit.errors.InputError` for a
bad one; it never calls the client, so the engine (:func:`judgekit.run`) may build it with
``client=None`` to check the inputs before it creates the run directory, then sets
``runner.client``. The engine then calls ``plan()`` (the items, for the progress bar),
``await run(on_item)``, and the pipeline's report function (registry: ``judgekit.pipelines``),
which writes the tables and ``summary.json`` and returns the summary.

Task keys end in :func:`task_fingerprint` of everything that changes an answer: the model's
route, revision and generation parameters, and the prompts' hashes (plus any pipeline option
that reaches the prompt). A changed revision, temperature or prompt therefore never resumes the
old records, in any pipeline.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from judgekit.config import RunConfig
    from judgekit.llm.client import LLMClient
    from judgekit.llm.spec import ModelSpec
    from judgekit.llm.task import Task

ItemT = TypeVar("ItemT")
_MAX_WORKERS = 4096


@runtime_checkable
class Runner(Protocol):
    """What the engine needs of a pipeline's runner.

    Attributes:
        config: the run config.
        client: the LLM client (None until the engine attaches it; see the module doc).
    """

    config: RunConfig
    client: LLMClient | None

    def plan(self) -> Sequence[Any]:
        """Every item of the run, in order (its length is the progress bar's total)."""
        ...

    def tasks(self) -> Iterable[Task]:
        """The calls of the run known before any answer, in order: every call where no call
        depends on another's answer (a batch can then hold them), else the first stage's (the
        runner then says what was left out in a ``dry_run_note`` class attribute)."""
        ...

    async def run(self, on_item: Callable[[Any], None] | None = None) -> Any:
        """Run every planned item; call ``on_item(item)`` as each one ends."""
        ...


def task_fingerprint(spec: ModelSpec, *parts: object) -> str:
    """8 hex digits (SHA-256) of what changes a model's answer: the spec's route, revision and
    generation parameters (``ModelSpec.params``), and ``parts`` (prompts, whose hash is taken,
    or any JSON-able value: label sets, options that reach the prompt).

    The last part of every task key, so that changing any of them makes the tasks new instead
    of resuming the records of the old ones.
    """
    items = [getattr(p, "hash", p) if hasattr(p, "render") else p for p in parts]
    blob = json.dumps(
        [spec.model, spec.revision, spec.params(), items], sort_keys=True, default=str
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:8]


def require_models(config: RunConfig, role: str, pipeline: str) -> list[ModelSpec]:
    """The models of ``role`` (``judge``, ``generator``) in ``config``, at least one.

    Raises:
        InputError: the role is unset, located where it was unset (a ``--set`` on the command
            line, or the config file, at the role's line where it is there).
    """
    specs = config.judges() if role == "judge" else config.generators()
    if not specs:
        raise config.located(role, f"the {pipeline} pipeline needs a '{role}' model (or a list)")
    return specs


def workers(specs: Iterable[ModelSpec]) -> int:
    """Coroutines for a run loop: twice the in-flight slots of ``specs`` (so a slot freed is
    taken at once), at least 1, at most 4096. The endpoint limiters still bound the calls."""
    slots = sum(s.concurrency() * max(1, len(s.deployments)) for s in specs)
    return max(1, min(_MAX_WORKERS, 2 * slots))


async def run_items(
    items: Iterable[ItemT],
    one: Callable[[ItemT], Awaitable[Any]],
    n_workers: int,
    on_item: Callable[[ItemT], None] | None = None,
) -> list[ItemT]:
    """Run ``one(item)`` for every item with ``n_workers`` coroutines, the run loop of the
    pipelines whose items take several calls (one coroutine per worker, not per item, so
    memory stays flat however many items there are; single-call pipelines use
    ``LLMClient.run_many``, which also answers recorded and cached tasks without a coroutine).

    Returns:
        The items, in their input order, once every one has ended.
    """
    order = list(items)  # the items are small records; the calls are what is bounded
    source = iter(order)

    async def worker() -> None:
        for item in source:  # one shared iterator: each item is taken exactly once
            await one(item)
            if on_item is not None:
                on_item(item)

    await asyncio.gather(*(worker() for _ in range(max(1, n_workers))))
    return order
