"""Async structured calls: one task in, one validated pydantic object (or a reasoned failure) out.

Path of a call: run log (resume) -> cache -> backend (endpoint limiter -> aiohttp transport or
litellm; litellm's Router where a spec has several endpoints) -> validate (pydantic) -> bounded
re-ask -> record (``call.py``). Transient failures (429, 5xx, timeouts, refused connections) are
retried with tenacity, bounded by attempts and total time. Every task ends as exactly one
record: ``ok``, ``unscored`` (answered, never validly; raw answer and reason kept) or ``error``
(no answer; the reason kept). An error string is never parsed as an answer, and nothing is
mapped to a default.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any

from judgekit.errors import JudgekitError
from judgekit.llm.backends import Sender
from judgekit.llm.cache import ResponseCache
from judgekit.llm.call import call_task
from judgekit.llm.models import ModelRegistry, ModelState
from judgekit.llm.secrets import redact
from judgekit.llm.structured import InvalidAnswer, cached_answer, parse_answer
from judgekit.llm.task import Task
from judgekit.llm.transport import AiohttpTransport
from judgekit.llm.usage import UsageTotals
from judgekit.runlog import Record, RecordIndex, RunLog

__all__ = ["InvalidAnswer", "LLMClient", "Task", "parse_answer", "redact"]
_END: Any = object()  # the end of run_many's tasks


class LLMClient:
    """Runs tasks against their models, with cache, retries, re-asks and one record per task.

    Args:
        runlog: the run's record log (tasks already in it are returned, not called).
        cache: response cache, or None to disable.
        on_record: called with each new record (progress display).
        on_warning: called with each endpoint warning as it arises (an endpoint that ignores
            the JSON schema; an outage beginning and ending; see ``health.py``); every warning
            is also kept in ``warnings``.

    Attributes:
        calls_made: HTTP attempts sent by this process.
        transient_failures: those attempts that failed transiently, by kind (``timeout``,
            ``rate_limit``, ``server``, ``connection``); each was retried or ended its task.
        cache_rejected: cache entries found but not valid answers of their task's schema
            (the tasks were called instead, and their entries rewritten).
        seen: ``key -> Record`` of every record this run used, resumed or new (read lazily
            from the run log; iterate ``records()`` to stream them).
        usage: running totals per role and model of the records written by this process.
        warnings: the endpoint warnings of this run, in order.
    """

    def __init__(
        self,
        runlog: RunLog,
        cache: ResponseCache | None = None,
        on_record: Callable[[Record], None] | None = None,
        *,
        retry_errors: bool = False,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self.runlog = runlog
        if runlog.on_warning is None:  # a failed write of a record, and its recovery
            runlog.on_warning = self.warn
        self.on_warning = on_warning
        self.warnings: list[str] = []
        self.retry_errors = retry_errors
        self.cache = cache
        self.on_record = on_record
        self.calls_made = 0
        self.transient_failures: Counter[str] = Counter()
        self.cache_rejected = 0
        self.seen: RecordIndex = RecordIndex(runlog, set())
        self.usage = UsageTotals()
        self.transport = AiohttpTransport()
        self.models = ModelRegistry(Sender(self.transport))
        self.models.sender.on_notice = self.warn
        self.models.sender.before_send = runlog.wait_writable
        self._prefetched: dict[str, tuple[str, dict[str, Any] | None]] = {}
        self._running: dict[str, asyncio.Future[Record]] = {}
        self._called: set[str] = set()

    # -- many tasks ------------------------------------------------------------------------
    def prefetch(self, tasks: Iterable[Task]) -> int:
        """Look up the cache for many tasks in one query (``run`` then finds the answers in
        memory instead of asking the cache one task at a time); returns the usable hits."""
        hits = 0
        for task, ckey, hit in self._lookup(tasks):
            if hit is not None and cached_answer(hit, task.schema) is None:
                self.cache_rejected += 1  # not a valid answer: the task will be called
                hit = None
            self._prefetched[task.key] = (ckey, hit)
            hits += hit is not None
        return hits

    def _lookup(self, tasks: Iterable[Task]) -> list[tuple[Task, str, dict[str, Any] | None]]:
        """``(task, cache key, cached answer or None)`` of the ``tasks`` not yet recorded nor
        looked up, in one cache query."""
        if self.cache is None:
            return []
        todo: list[tuple[Task, str]] = []
        for task in tasks:
            if task.key in self.runlog or task.key in self._prefetched:
                continue
            todo.append((task, self.models.get(task.spec).cache_key(task)))
        found = self.cache.get_many([ckey for _, ckey in todo])
        return [(task, ckey, found.get(ckey)) for task, ckey in todo]

    def _serve_ready(
        self, chunk: list[Task], on_done: Callable[[Task, Record], None] | None
    ) -> list[Task]:
        """Answer the tasks of ``chunk`` that need no call, with no coroutine per task: those
        already recorded (a resume) and those the cache answers (one lookup for the chunk).
        Returns the others, to be run."""
        rest = []
        for task in chunk:  # a key running now (a retried error) waits for its new record
            record = None if task.key in self._running else self._resumed(task)
            if record is None:
                rest.append(task)
            elif on_done is not None:
                on_done(task, record)
        if self.cache is None or not rest:
            return rest
        served = set()
        for task, ckey, hit in self._lookup(rest):
            if task.key in self.runlog or task.key in self._prefetched:  # a duplicate, served
                continue  # or left to run() just now
            if task.key in self._running:  # run() waits for that run's record
                self._prefetched[task.key] = (ckey, hit)
                continue
            record = self._cached(task, hit)
            if record is None:  # a miss, or an entry rejected: to be called
                self._prefetched[task.key] = (ckey, None)
                continue
            served.add(id(task))
            self._finish(record)
            if on_done is not None:
                on_done(task, record)
        return [task for task in rest if id(task) not in served]

    def _cached(self, task: Task, hit: Any) -> Record | None:
        """The record of a cache hit; None for a miss or an entry that is not a valid answer
        (counted in ``cache_rejected``)."""
        if hit is None:
            return None
        record = self.models.get(task.spec).cached_record(task, hit)
        self.cache_rejected += record is None
        return record

    async def run_many(
        self,
        tasks: Iterable[Task],
        workers: int,
        on_done: Callable[[Task, Record], None] | None = None,
        batch: int = 256,
    ) -> None:
        """Run ``tasks`` with ``workers`` coroutines (memory stays flat however many tasks
        there are), answering recorded and cached tasks ``batch`` at a time without a
        coroutine each; ``on_done(task, record)`` is called as each ends.

        Raises:
            JudgekitError: as :meth:`run` (an ``OutputError`` when records cannot be written).
        """

        def feed() -> Iterator[Task | None]:
            source = iter(tasks)
            while chunk := list(islice(source, batch)):
                yield from self._serve_ready(chunk, on_done)
                yield None  # a pause: records of cache hits reach the disk, progress redraws

        queue = feed()

        async def worker() -> None:
            while True:  # one shared generator: each task is taken exactly once
                await self.runlog.wait_writable()  # a full disk: no more tasks until written
                task = next(queue, _END)
                if task is _END:
                    return
                if task is None:
                    await asyncio.sleep(0)
                    continue
                record = await self.run(task)
                if on_done is not None:
                    on_done(task, record)

        await asyncio.gather(*(worker() for _ in range(max(1, workers))))

    def records(self) -> Any:
        """The records this run used (resumed or new), streamed from the run log in file
        order; re-iterable and sized (``len``)."""
        return self.seen.values()

    async def aclose(self) -> None:
        """Close the HTTP session of the running loop (also done when the loop ends)."""
        await self.transport.aclose()

    def endpoint_stats(self) -> dict[str, dict[str, int]]:
        """Per endpoint: in-flight ``limit`` now, its ``ceiling``, the lowest limit reached
        (``min_limit``) and the 429s seen (``rate_limited``)."""
        out = {}
        for state in self.models.states():
            for ep in getattr(state.backend, "endpoints", {}).values():
                lim = ep.limiter
                out[ep.id] = {
                    "limit": lim.limit,
                    "ceiling": lim.ceiling,
                    "min_limit": lim.min_limit,
                    "rate_limited": lim.rate_limited,
                }
        return out

    def close(self) -> None:
        """Stop embedded servers and flush queued cache writes."""
        self.models.close()
        if self.cache is not None:
            self.cache.flush()

    # -- one task --------------------------------------------------------------------------
    async def run(self, task: Task) -> Record:
        """Run one task to its record (resume, cache, retries, re-asks). Never raises for a
        model failure: failures become ``unscored``/``error`` records.

        A task whose key is already running waits for that run and gets its record (one
        call, one record per key).

        Raises:
            JudgekitError: the model cannot be used at all (an API key variable unset, the
                embedded model missing), or its endpoint refused tasks alike, several in a row
                (401, 404, 400: the stop rule of ``health.py``; their records are written
                first).
            OutputError: the run log cannot be written (a full disk) and the write still
                fails after ``RunLog.retry_s`` seconds; no call is sent meanwhile
                (``RunLog.wait_writable``).
        """
        loop = asyncio.get_running_loop()
        while (running := self._running.get(task.key)) is not None:
            if running.get_loop() is not loop:  # left behind by a loop that was abandoned
                del self._running[task.key]
                break
            try:
                record = await asyncio.shield(running)
            except asyncio.CancelledError:
                if running.cancelled():  # the first caller was cancelled, not this one:
                    continue  # run the task here instead
                raise
            self._prefetched.pop(task.key, None)
            return record
        future = self._running[task.key] = loop.create_future()
        try:
            record = await self._run(task)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: only tasks waiting on this key re-raise it
            raise
        else:
            future.set_result(record)
            return record
        finally:
            if self._running.get(task.key) is future:
                del self._running[task.key]

    def _resumed(self, task: Task) -> Record | None:
        """The record of ``task`` if the run log holds one that is final for this run.

        Recorded tasks are final; with ``retry_errors``, an ``error`` (no answer: a server
        down, a timeout) is not, once per process, so a fixed endpoint can heal a run; nor is
        an ``unscored`` answer of a batch (``Record.batch``: a batch cannot re-ask)."""
        if task.key not in self.runlog:
            return None
        done = self.runlog.get(task.key)
        retry = done is not None and (
            done.status == "error" or (done.status == "unscored" and done.batch is not None)
        )
        if done is None or (self.retry_errors and retry and task.key not in self._called):
            return None
        self.seen.add(task.key)
        return done

    async def _run(self, task: Task) -> Record:
        done = self._resumed(task)
        if done is not None:
            return done
        await self.runlog.wait_writable()  # no new call while records cannot be written
        if self.retry_errors:  # an error recorded by this process is not retried by it
            self._called.add(task.key)
        model = self.models.get(task.spec)
        ckey = None
        if self.cache is not None:
            ready = self._prefetched.pop(task.key, None)
            if ready is None:
                ckey = model.cache_key(task)
                hit = self.cache.get(ckey)
            else:
                ckey, hit = ready
            cached = self._cached(task, hit)
            if cached is not None:
                return self._finish(cached)
        if model.backend is None:
            await self.models.backend(model)
        fmt = model.format(task.schema)[0]
        record, by_primary = await call_task(
            task,
            model,
            fmt,
            model.base(task),
            self._count_attempt,
            self.warn,
            self._count_transient,
        )
        entry = model.cache_entry(record)
        if ckey is not None and by_primary and entry is not None:
            self.cache.set(ckey, entry)  # type: ignore[union-attr]
        self._finish(record)
        if record.status == "error":
            self._stop_if_refused(model)
        return record

    @staticmethod
    def _stop_if_refused(model: ModelState) -> None:
        """Raise the stop rule's verdict (``health.py``) if an endpoint of ``model`` has one."""
        for ep in getattr(model.backend, "endpoints", {}).values():
            if ep.health.verdict is not None:
                raise JudgekitError(ep.health.verdict)

    def end_checks(self) -> None:
        """At the end of a run: warn of every endpoint whose few answers all failed the schema
        (``EndpointHealth.schema_warning``; a run too small for the warning on the way)."""
        for model in self.models.states():
            for ep in getattr(model.backend, "endpoints", {}).values():
                warning = ep.health.schema_warning()
                if warning is not None:
                    self.warn(warning)

    def warn(self, message: str) -> None:
        """Keep a warning of this run (``warnings``) and pass it to ``on_warning``."""
        self.warnings.append(message)
        if self.on_warning is not None:
            self.on_warning(message)

    def _count_attempt(self) -> None:
        self.calls_made += 1

    def _count_transient(self, exc: BaseException) -> None:
        self.transient_failures[str(getattr(exc, "kind", None) or type(exc).__name__)] += 1

    def record(self, record: Record) -> Record:
        """Keep a record made outside a call (an answer imported from a batch): written to
        the run log, counted in ``usage`` and shown (``on_record``), as a call's record is."""
        return self._finish(record)

    def _finish(self, record: Record) -> Record:
        self.runlog.append(record)
        self.seen.add(record.key)
        self.usage.add(record)
        if self.on_record is not None:
            self.on_record(record)
        return record
