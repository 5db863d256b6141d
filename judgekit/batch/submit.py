"""``judgekit run CONFIG --batch``: the run's tasks through a provider's Batch API, resumable.

The steps, each recorded in the run directory's ``batch/jobs.json`` before the next one:

1. the tasks the cache answers are recorded (as online); the rest without a final record, and
   not in a batch already in flight, are exported (:mod:`judgekit.batch.exporter`) into
   ``batch/jobs/<export id>/<model>/shard-<i>.jsonl``, at most 50,000 requests and 190 MB a
   file (OpenAI's limits), with the export's manifest;
2. each file is uploaded (its file id kept) and made a batch (its batch id kept), through
   litellm (:mod:`judgekit.batch.provider`);
3. every ``poll_s`` seconds each batch's state is read and shown (state, answered and failed
   counts, the time left in its 24 h window); a batch that ended (``completed``, ``expired``,
   ``failed``, ``cancelled``) has its output and error files downloaded beside its shard and
   imported at once (:mod:`judgekit.batch.importer`): answers become records (cost at batch
   prices), requests it never answered become ``error`` records with the reason (``--retry-
   errors`` sends them again in a new batch).

A killed run (Ctrl-C, SIGTERM, kill -9) loses nothing: the batches go on at the provider, and
the same command picks them up from ``batch/jobs.json`` without sending them again (a file
uploaded but not yet made a batch is made one; a batch made but whose id was not yet written
is found by its input file and adopted).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from judgekit.batch.exporter import export, new_export_id
from judgekit.batch.importer import ImportCounts, settle
from judgekit.batch.manifest import expected_requests, run_manifests
from judgekit.batch.provider import TERMINAL, BatchAPI, BatchState, check_route
from judgekit.batch.requests import batch_tasks, config_hash
from judgekit.batch.results import ResultIndex
from judgekit.data.atomic import write_bytes
from judgekit.data.jsonfile import write_json
from judgekit.errors import InputError
from judgekit.llm.spec import ModelSpec
from judgekit.llm.task import Task

STATE = Path("batch") / "jobs.json"  # in the run directory
_JOBS = Path("batch") / "jobs"


class Job(BaseModel):
    """One request file and its batch (paths relative to the run directory)."""

    name: str
    model: str
    route: str
    file: str
    requests: int
    file_id: str | None = None
    batch_id: str | None = None
    status: str = "exported"
    completed: int = 0
    failed: int = 0
    expires_at: int | None = None
    output: str | None = None
    errors: str | None = None
    imported: bool = False


class Jobs(BaseModel):
    """``batch/jobs.json``: every job of the run's batches, oldest first."""

    jobs: list[Job] = Field(default_factory=list)


def load_jobs(run_dir: Path) -> Jobs:
    """The run's jobs (none yet: empty).

    Raises:
        InputError: the file is not a jobs file (fix or delete it: the batches it names are
            then not followed).
    """
    path = run_dir / STATE
    if not path.is_file():
        return Jobs()
    try:
        return Jobs.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(
            path, f"not a judgekit batch jobs file ({str(exc).splitlines()[0]})"
        ) from None


def _keys(path: Path) -> Iterator[str]:
    with open(path, "rb") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)["custom_id"]


def _left(seconds: float) -> str:
    hours, rest = divmod(max(0, int(seconds)), 3600)
    return f"{hours}h{rest // 60:02d}m"


class SubmitBatch:
    """The executor of ``judgekit run --batch`` (see the module doc).

    Args:
        poll_s: seconds between two looks at the batches.
        retry_errors: send again the tasks recorded ``error`` (no answer).
        sleep: how to wait between polls (tests pass a shorter one).

    Attributes:
        counts: the answers imported by this process (cost at batch and online prices).
        submitted: batches this process created.
    """

    def __init__(
        self,
        *,
        poll_s: float = 30.0,
        retry_errors: bool = False,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if poll_s <= 0:
            raise InputError(None, f"must be > 0 seconds, got {poll_s}", field="--batch-poll")
        self.poll_s = poll_s
        self.retry_errors = retry_errors
        self.sleep = sleep
        self.counts = ImportCounts()
        self.submitted = 0
        self._apis: dict[str, BatchAPI] = {}
        self._specs: dict[str, ModelSpec] = {}

    def execute(self, runner: Any, session: Any, emit: Callable[[str], None]) -> bool:
        """Submit, poll, collect and import; True when every task has a record."""
        self.runner, self.session, self.emit = runner, session, emit
        self.run_dir: Path = session.runlog.out_dir
        self.state = load_jobs(self.run_dir)
        settle(self._tasks(), session, None, {}, ImportCounts())  # cache hits, as online
        self._export()
        for job in self.state.jobs:
            if not job.imported and job.batch_id is None:
                self._submit(job)
        while self._poll():
            self.sleep(self.poll_s)
        runlog = session.runlog
        return all(task.key in runlog for task in self._tasks())

    def _tasks(self) -> Iterator[Task]:
        for task in batch_tasks(self.runner):
            if task.spec.label not in self._specs:
                check_route(task.spec)  # before anything is sent
                self._specs[task.spec.label] = task.spec
            yield task

    def _api(self, label: str) -> BatchAPI:
        api = self._apis.get(label)
        if api is None:
            api = self._apis[label] = BatchAPI(self._specs[label])
        return api

    def _save(self) -> None:
        path = self.run_dir / STATE
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, self.state.model_dump(mode="json"))

    def _export(self) -> None:
        """Export the tasks with neither a final record nor a batch in flight, as new jobs."""
        flying = frozenset(
            key for job in self.state.jobs if not job.imported
            for key in _keys(self.run_dir / job.file)
        )  # fmt: skip
        export_id = new_export_id(config_hash(self.runner.config))
        folder = self.run_dir / _JOBS / export_id
        manifest, _ = export(
            self._tasks, self.runner, self.session, folder,
            shards=None, retry_errors=self.retry_errors, exclude=flying, export_id=export_id,
        )  # fmt: skip
        if manifest is None:
            return
        base = self.run_dir.resolve()
        for shard in manifest.shards:
            path = (folder / shard.file).resolve()
            self.state.jobs.append(Job(
                name=f"{export_id}/{shard.file}", model=shard.model, route=shard.route,
                file=str(path.relative_to(base)), requests=shard.requests,
            ))  # fmt: skip
        self._save()

    def _submit(self, job: Job) -> None:
        """Upload the job's file (unless done) and make it a batch (unless one was made)."""
        api = self._api(job.model)
        found = None
        if job.file_id is None:
            job.file_id = api.upload(self.run_dir / job.file)
            job.status = "uploaded"
            self._save()
        else:  # uploaded by a run that was stopped: did it make the batch already?
            found = api.find(job.file_id)
        state = found or api.create(
            job.file_id, {"judgekit_run": self.runner.config.run_name(), "judgekit_job": job.name}
        )
        self.submitted += found is None
        self._update(job, state)

    def _update(self, job: Job, state: BatchState) -> None:
        job.batch_id, job.status = state.id, state.status
        job.completed, job.failed, job.expires_at = state.completed, state.failed, state.expires_at
        self._save()

    def _poll(self) -> bool:
        """Look at every open batch once, collect those that ended; True while some are open."""
        open_jobs = [job for job in self.state.jobs if not job.imported]
        for job in open_jobs:
            if job.batch_id is None:
                self._submit(job)
            if job.status not in TERMINAL:
                self._update(job, self._api(job.model).retrieve(job.batch_id))  # type: ignore[arg-type]
            if job.status in TERMINAL:
                self._collect(job)
        self._show()
        return any(not job.imported for job in self.state.jobs)

    def _collect(self, job: Job) -> None:
        """Download the ended batch's files (and say why for requests in neither), import."""
        api = self._api(job.model)
        state = api.retrieve(job.batch_id)  # type: ignore[arg-type]
        shard = self.run_dir / job.file
        output = shard.with_name(f"{shard.stem}.{state.id}.output.jsonl")
        errors = shard.with_name(f"{shard.stem}.{state.id}.errors.jsonl")
        write_bytes(output, api.download(state.output_file_id) if state.output_file_id else b"")
        data = api.download(state.error_file_id) if state.error_file_id else b""
        answered = {*_custom_ids_bytes(output.read_bytes()), *_custom_ids_bytes(data)}
        why = state.errors or f"the batch ended {state.status} before answering it"
        error = {"code": f"batch_{state.status}", "message": why}
        extra = b"".join(
            json.dumps({"custom_id": key, "response": None, "error": error}).encode() + b"\n"
            for key in _keys(shard)
            if key not in answered
        )
        write_bytes(errors, data + (b"" if not data or data.endswith(b"\n") else b"\n") + extra)
        results = ResultIndex.read([output, errors])
        expected = expected_requests(run_manifests(self.run_dir))
        try:
            settle(self._tasks(), self.session, results, expected, self.counts,
                   serve_cache=False, batch=state.id)  # fmt: skip
        finally:
            results.close()
        base = self.run_dir
        job.output, job.errors = str(output.relative_to(base)), str(errors.relative_to(base))
        job.imported = True
        self._save()

    def _show(self) -> None:
        """One progress line: the batches by state, answered and failed, the time left."""
        jobs = self.state.jobs
        states = Counter(job.status if not job.imported else "imported" for job in jobs)
        done = sum(job.completed for job in jobs)
        failed = sum(job.failed for job in jobs)
        total = sum(job.requests for job in jobs)
        text = ", ".join(f"{n} {s}" for s, n in sorted(states.items()))
        noun = "batch" if len(jobs) == 1 else "batches"
        line = f"{len(jobs)} {noun} ({text}): {done}/{total} answered, {failed} failed"
        open_ends = [j.expires_at for j in jobs if not j.imported and j.expires_at]
        if open_ends:
            line += f"; {_left(min(open_ends) - time.time())} left in the window"
        self.session.progress.batch = line
        self.emit("tick")


def _custom_ids_bytes(data: bytes) -> Iterator[str]:
    """The ``custom_id`` of each line that has one (unreadable lines are left to the
    results reader, which names them)."""
    for line in data.splitlines():
        try:
            key = json.loads(line).get("custom_id")
        except (ValueError, AttributeError):
            continue
        if isinstance(key, str):
            yield key
