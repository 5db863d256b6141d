"""``judgekit batch import``: batch answers to the run's records and cache entries.

For each task of the run, in the pipeline's order:

* recorded already (``ok``, ``unscored``, ``error``): final; a result for it is counted
  ``recorded`` and ignored, so importing the same file twice changes nothing. The one exception
  is an answer for a task recorded ``error`` (no answer): it is taken (an ``error`` result for
  it is not);
* a result for it: taken only if a manifest of the run lists its key with the hash of the
  request the task makes now (:mod:`judgekit.batch.manifest`), else counted ``unlisted`` or
  ``stale`` and ignored. An answer becomes a record as an online answer does
  (:mod:`judgekit.batch.answer`, then ``ModelState.record``: ``ok`` with its label
  probabilities where they were asked for, else ``unscored`` with its reason); a request that
  got no answer (refused, expired) or an error inside an HTTP 200 is recorded ``error`` with
  the reason, as online (``transient: ...``, ``request: <kind>: ...``), so ``--retry-errors``
  calls it again; the record's ``batch`` names the batch (or results file), its cost is at batch
  prices (:func:`judgekit.llm.usage.batch_prices_for`), and an ``ok`` answer is cached as an
  online answer is. An answer of another model than the judge (neither its id nor a dated
  snapshot of it, nor named ``--same-judge``: :func:`judgekit.batch.answer.other_model`) is
  recorded ``error`` (``other_model: ...``) with its raw text and counted by model;
* no result: the response cache's answer if it has one (recorded as an online run records a
  hit), else the task is ``missing`` (no record).

Results for keys the run does not have (another config's export, a wrong id) are counted
``unknown`` and ignored. Records and cache entries are written only through the run log and the
cache (:class:`~judgekit.llm.client.LLMClient.record`, ``ResponseCache.set``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit.batch.answer import completion_of, other_model
from judgekit.batch.manifest import expected_requests, run_manifests
from judgekit.batch.requests import Requests, batch_tasks
from judgekit.batch.results import BatchResult, ResultIndex
from judgekit.interrupt import run_stoppable
from judgekit.llm.call import error_reason
from judgekit.llm.errors import EndpointError
from judgekit.llm.task import Task
from judgekit.llm.usage import prices_for
from judgekit.runlog import Record

_CHUNK = 256
_SHOWN = 3


@dataclass
class ImportCounts:
    """What an import did (see the module doc for each count).

    Attributes:
        files, lines, duplicates: result files and lines read, lines for a key met before.
        imported: records written from results, by status; ``cached``: from the cache.
        recorded, unknown, stale, unlisted: results ignored, and why (``unknown_keys``: the
            first few unknown keys).
        missing: tasks of the run without a record after the import.
        tokens_in, tokens_out, cost_usd: of the imported answers (USD at batch prices;
            ``cost_unknown`` answers of unknown price); ``online_cost_usd``: the same tokens
            at online prices.
        other_models: answers of another model than the judge, by ``(answered, configured)``
            model (recorded ``error``, see :func:`~judgekit.batch.answer.other_model`).
        seconds: wall time of the import.
    """

    files: int = 0
    lines: int = 0
    duplicates: int = 0
    imported: Counter[str] = field(default_factory=Counter)
    cached: int = 0
    recorded: int = 0
    unknown: int = 0
    unknown_keys: list[str] = field(default_factory=list)
    stale: int = 0
    unlisted: int = 0
    missing: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    online_cost_usd: float = 0.0
    cost_unknown: int = 0
    other_models: Counter[tuple[str, str]] = field(default_factory=Counter)
    seconds: float = 0.0

    def add(self, record: Record, online: float | None) -> None:
        """Count one imported record (``online``: its cost at online prices)."""
        self.imported[record.status] += 1
        self.tokens_in += record.tokens_in
        self.tokens_out += record.tokens_out
        if record.cost is None:
            self.cost_unknown += 1
        else:
            self.cost_usd += record.cost
            self.online_cost_usd += online or 0.0


def result_record(
    task: Task, result: BatchResult, session: Any, batch: str, other: str | None = None
) -> Record:
    """The record of ``task`` from its batch ``result`` (see the module doc), built by the
    online call's builder (:meth:`~judgekit.llm.models.ModelState.record`). ``other``: the
    model that answered when it is not the judge (:func:`~judgekit.batch.answer.other_model`):
    recorded ``error`` with its raw text, out of the judge's figures, and called again online
    by ``--retry-errors``."""
    state = session.client.models.get(task.spec)
    base = {**state.base(task), "attempts": 1, "served_by": f"{task.spec.model}@batch",
            "batch": batch}  # fmt: skip
    try:
        if result.body is None:
            kind = "timeout" if result.status is None else None  # never sent: the window ran out
            raise EndpointError(f"batch: {result.error}", status_code=result.status, kind=kind)
        completion = completion_of(result.body, task.spec)
    except EndpointError as exc:  # no answer, or an error inside the HTTP 200: as online
        return state.record(task, None, {**base, "status": "error", "reason": error_reason(exc)})
    if other is not None:
        reason = (
            f"other_model: answered by {other!r}, not the judge {task.spec.model_id!r} "
            f"(judgekit batch import --same-judge {other} if it is the same judge)"
        )
        return state.record(task, None, {
            **base, "status": "error", "reason": reason, "raw": completion.reply.text,
            "tokens_in": completion.tokens_in, "tokens_out": completion.tokens_out,
            "cost": completion.cost,
        })  # fmt: skip
    return state.record(task, completion, base, session.client.warn)


class _Settler:
    """One pass over the run's tasks (see :func:`settle`)."""

    def __init__(self, session: Any, results: ResultIndex | None, expected: dict[str, str],
                 counts: ImportCounts, batch: str | None,
                 same_judge: frozenset[str] = frozenset()) -> None:  # fmt: skip
        self.session, self.results, self.expected = session, results, expected
        self.counts, self.batch, self.same_judge = counts, batch, same_judge
        self.requests = Requests(session.client.models)
        self.matched: set[str] = set()
        self.lookup: list[Task] = []
        self.entries: list[tuple[str, dict[str, Any]]] = []

    def flush(self) -> None:
        """Hand the chunk's cache entries to the cache at once (its writer thread then commits
        them in one transaction, not one each)."""
        entries, self.entries = self.entries, []
        for ckey, value in entries:
            self.session.cache.set(ckey, value)

    def one(self, task: Task, serve_cache: bool) -> None:
        key, runlog, results = task.key, self.session.runlog, self.results
        found = results is not None and key in results
        if found:
            self.matched.add(key)
        if key in runlog:
            if not found:
                return
            # recorded: final, but for an answer to a task recorded ``error`` (no answer)
            if not (results.answered(key) and runlog.get(key).status == "error"):  # type: ignore[union-attr]
                self.counts.recorded += 1
                return
        elif not found:
            if not serve_cache:
                self.counts.missing += 1
                return
            self.lookup.append(task)
            if len(self.lookup) >= _CHUNK:
                self.serve_cached()
            return
        self.take(task, results.get(key))  # type: ignore[union-attr]

    def take(self, task: Task, result: BatchResult) -> None:
        expected = self.expected.get(task.key)
        if expected is None or expected != self.requests.hash(task):
            if expected is None:
                self.counts.unlisted += 1
            else:
                self.counts.stale += 1
            self.counts.missing += task.key not in self.session.runlog
            return
        other = None
        if result.body is not None:
            other = other_model(result.body, task.spec, self.same_judge)
            if other is not None:
                self.counts.other_models[(other, task.spec.model_id)] += 1
        record = result_record(task, result, self.session, self.batch or result.source, other)
        self.session.client.record(record)
        state = self.session.client.models.get(task.spec)
        entry = state.cache_entry(record)
        if self.session.cache is not None and entry is not None:
            self.entries.append((state.cache_key(task), entry))
        online = prices_for(task.spec).cost(record.tokens_in, record.tokens_out)
        self.counts.add(record, online)

    def serve_cached(self) -> None:
        chunk, self.lookup = self.lookup, []
        cache, models = self.session.cache, self.session.client.models
        if cache is None or not chunk:
            self.counts.missing += len(chunk)
            return
        ckeys = [models.get(t.spec).cache_key(t) for t in chunk]
        found = cache.get_many(ckeys)
        for task, ckey in zip(chunk, ckeys, strict=True):
            hit = found.get(ckey)
            record = None if hit is None else models.get(task.spec).cached_record(task, hit)
            if record is None:
                self.counts.missing += 1
            else:
                self.session.client.record(record)
                self.counts.cached += 1


def settle(
    tasks: Iterable[Task],
    session: Any,
    results: ResultIndex | None,
    expected: dict[str, str],
    counts: ImportCounts,
    *,
    serve_cache: bool = True,
    batch: str | None = None,
    same_judge: Iterable[str] = (),
) -> None:
    """Give the tasks their records from ``results`` and the cache (see the module doc).

    Args:
        tasks: the run's tasks (each key once).
        session: the engine's open run (run log, cache, client).
        results: the indexed result files (None: only the cache).
        expected: ``task key -> request hash`` of the run's manifests.
        counts: updated in place.
        serve_cache: record the cache's answers of tasks without a result.
        batch: the ``batch`` field of the records (None: the result's file).
        same_judge: models whose answers are the judge's although their name is not
            (:func:`~judgekit.batch.answer.other_model`).
    """
    settler = _Settler(session, results, expected, counts, batch, frozenset(same_judge))
    run_stoppable(_settle(settler, tasks, serve_cache))
    if results is not None:
        unknown = [key for key in results if key not in settler.matched]
        counts.unknown += len(unknown)
        counts.unknown_keys.extend(unknown[: _SHOWN - len(counts.unknown_keys)])


async def _settle(settler: _Settler, tasks: Iterable[Task], serve_cache: bool) -> None:
    """The pass over ``tasks``, inside a stoppable event loop (SIGTERM stops it as Ctrl-C
    does): the run log writes each chunk's records in one ``write`` and the next chunk waits
    until they are written (a full disk: ``RunLog.wait_writable``); the cache gets each
    chunk's entries together."""
    runlog = settler.session.runlog
    for number, task in enumerate(tasks, 1):
        settler.one(task, serve_cache)
        if number % _CHUNK == 0:
            settler.flush()
            await runlog.wait_writable(flush=True)
    settler.serve_cached()
    settler.flush()
    await runlog.wait_writable(flush=True)


class ImportResults:
    """The executor of ``judgekit batch import`` (see the module doc).

    Args:
        paths: result files (OpenAI batch output or error files, ``vllm run-batch`` output).
        manifests: manifests besides the run's own (``--manifest``).
        same_judge: models the user says are the configured judge (``--same-judge``); other
            models' answers are recorded ``error`` (:func:`~judgekit.batch.answer.other_model`).

    Attributes:
        counts: what the import did, once executed.
    """

    def __init__(
        self,
        paths: Sequence[Path | str],
        manifests: Sequence[Path | str] = (),
        same_judge: Sequence[str] = (),
    ) -> None:
        self.paths = [Path(p) for p in paths]
        self.manifests = [Path(p) for p in manifests]
        self.same_judge = tuple(same_judge)
        self.counts = ImportCounts()

    def execute(self, runner: Any, session: Any, emit: Callable[[str], None]) -> bool:
        """Import the results; True when every task of the run has a record (the report is
        then written).

        Raises:
            InputError: a result file or manifest that cannot be read (nothing is recorded).
            JudgekitError: a pipeline whose calls are not all known in advance.
        """
        started = time.monotonic()
        tasks = batch_tasks(runner)
        results = ResultIndex.read(self.paths)  # every line checked before anything is written
        expected = expected_requests(run_manifests(session.runlog.out_dir, self.manifests))
        counts = self.counts
        counts.files, counts.lines = len(self.paths), results.lines
        counts.duplicates = results.duplicates
        try:
            settle(tasks, session, results, expected, counts, same_judge=self.same_judge)
        finally:
            results.close()
        counts.seconds = time.monotonic() - started
        return counts.missing == 0
