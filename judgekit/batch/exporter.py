"""``judgekit batch export``: the run's tasks without a final record, as sharded batch JSONL.

The tasks already recorded (ok, unscored; an ``error`` too unless ``retry_errors``) and those
the response cache answers are left out: the cached ones are recorded by the import, as an
online run would record them, at no cost. Each model's requests go to their own directory
(``DIR/<model>/shard-<i>.jsonl``: a batch input file holds one model's requests, and
``vllm run-batch`` serves one model), split into ``shards`` contiguous files of (nearly) equal
size, or, for a provider's batch API, into files under its limits (50,000 requests, 200 MB).
Tasks of one item stay together, so a server's prefix cache still sees them side by side.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from judgekit.batch.manifest import EXPORTS, Manifest, Shard, write_manifest
from judgekit.batch.requests import Requests, batch_tasks, config_hash, model_dir
from judgekit.data.atomic import open_output
from judgekit.data.digest import file_sha256
from judgekit.errors import InputError
from judgekit.llm.spec import ModelSpec
from judgekit.llm.structured import cached_answer
from judgekit.llm.task import Task

MAX_REQUESTS = 50_000  # OpenAI's limit per batch
MAX_BYTES = 190 * 1024 * 1024  # under OpenAI's 200 MB per input file
_CHUNK = 256


@dataclass
class Pending:
    """The tasks an export holds: ``keys`` per model label (task order), their ``specs``, and
    the run's ``tasks`` that were left out as ``recorded`` or ``cached``."""

    keys: dict[str, list[str]] = field(default_factory=dict)
    specs: dict[str, ModelSpec] = field(default_factory=dict)
    tasks: int = 0
    recorded: int = 0
    cached: int = 0
    excluded: int = 0

    @property
    def requests(self) -> int:
        return sum(len(keys) for keys in self.keys.values())


def select_pending(
    tasks: Iterable[Task],
    session: Any,
    *,
    retry_errors: bool,
    exclude: frozenset[str] = frozenset(),
) -> Pending:
    """The tasks of ``tasks`` that need an answer: no final record in the session's run log
    (an ``error`` is not final with ``retry_errors``), no valid answer in its cache, and not
    in ``exclude`` (keys of batches still in flight)."""
    out = Pending()
    runlog, cache, models = session.runlog, session.cache, session.client.models
    source = iter(tasks)
    while chunk := list(islice(source, _CHUNK)):
        todo = []
        for task in chunk:
            out.tasks += 1
            if task.key in exclude:
                out.excluded += 1
            elif task.key in runlog and not (retry_errors and _errored(runlog, task.key)):
                out.recorded += 1
            else:
                todo.append(task)
        hits: dict[str, Any] = {}
        if cache is not None and todo:
            ckeys = [models.get(t.spec).cache_key(t) for t in todo]
            found = cache.get_many(ckeys)
            hits = {t.key: found.get(k) for t, k in zip(todo, ckeys, strict=True)}
        for task in todo:
            hit = hits.get(task.key)
            if hit is not None and cached_answer(hit, task.schema) is not None:
                out.cached += 1
                continue
            out.keys.setdefault(task.spec.label, []).append(task.key)
            out.specs.setdefault(task.spec.label, task.spec)
    return out


def _errored(runlog: Any, key: str) -> bool:
    record = runlog.get(key)
    return record is not None and record.status == "error"


class _ShardFiles:
    """The shard files of one model: a new file when the current one is full (``sizes``: a
    fixed number of requests each; or the ``max_lines`` / ``max_bytes`` limits)."""

    def __init__(self, folder: Path, sizes: list[int] | None, max_lines: int, max_bytes: int):
        self.folder, self.sizes = folder, sizes
        self.max_lines, self.max_bytes = max_lines, max_bytes
        self.done: list[tuple[Path, int]] = []
        self._handle: Any = None
        self._stack = contextlib.ExitStack()
        self._lines = self._bytes = 0

    def write(self, line: bytes) -> None:
        while self._handle is None or self._full(len(line)):
            self._next()  # (an even shard may be due empty: n < shards)
        self._handle.write(line)
        self._lines += 1
        self._bytes += len(line)

    def _full(self, size: int) -> bool:
        if self.sizes is not None:
            return self._lines >= self.sizes[len(self.done) - 1]
        if not self._lines:  # a fresh file takes any line
            return False
        return self._lines >= self.max_lines or self._bytes + size > self.max_bytes

    def _next(self) -> None:
        self._close()
        path = self.folder / f"shard-{len(self.done)}.jsonl"
        self._handle = self._stack.enter_context(open_output(path, "wb"))  # judgekit's writer
        self.done.append((path, 0))
        self._lines = self._bytes = 0

    def _close(self) -> None:
        if self._handle is not None:
            self._handle = None
            self._stack.close()  # the file appears, whole (judgekit.data.atomic)
            self.done[-1] = (self.done[-1][0], self._lines)

    def abort(self, exc: BaseException) -> None:
        """Drop the file being written (none is left half-written, no temporary behind)."""
        if self._handle is not None:
            self._handle = None
            with contextlib.suppress(BaseException):
                self._stack.__exit__(type(exc), exc, exc.__traceback__)

    def finish(self) -> list[tuple[Path, int]]:
        """Close the last file; write the empty files still due (``sizes``: every shard
        exists, so a job array's index always finds its file)."""
        self._close()
        while self.sizes is not None and len(self.done) < len(self.sizes):
            self._next()
            self._close()
        return self.done


def even_sizes(n: int, shards: int) -> list[int]:
    """``n`` requests in ``shards`` contiguous shards whose sizes differ by at most one."""
    return [n * (i + 1) // shards - n * i // shards for i in range(shards)]


def write_shards(
    tasks: Iterable[Task],
    pending: Pending,
    directory: Path,
    requests: Requests,
    *,
    shards: int | None = None,
) -> tuple[list[Shard], dict[str, str], dict[str, str]]:
    """Write the request lines of ``pending``'s tasks (found again in ``tasks``) under
    ``directory``: ``shards`` even shards per model, or (None) files under the provider limits.

    Returns:
        (the shards, ``key -> request hash`` in export order, ``prompt id -> template hash``).
    """
    wanted = {key: label for label, keys in pending.keys.items() for key in keys}
    files: dict[str, _ShardFiles] = {}
    hashes: dict[str, str] = {}
    prompts: dict[str, str] = {}
    for label, keys in pending.keys.items():
        folder = directory / model_dir(label)
        folder.mkdir(parents=True, exist_ok=True)
        sizes = even_sizes(len(keys), shards) if shards else None
        files[label] = _ShardFiles(folder, sizes, MAX_REQUESTS, MAX_BYTES)
    try:
        for task in tasks:
            label = wanted.pop(task.key, None)
            if label is None:
                continue
            line, digest = requests.line(task)
            files[label].write(line)
            hashes[task.key] = digest
            prompts[task.prompt.id] = task.prompt.hash
    except BaseException as exc:  # a full disk, Ctrl-C: no shard left half-written
        for shard_files in files.values():
            shard_files.abort(exc)
        raise
    out = []
    for label, shard_files in files.items():
        spec = pending.specs[label]
        for path, count in shard_files.finish():
            name = str(path.relative_to(directory))
            digest = file_sha256(path)
            shard = Shard(file=name, model=label, route=spec.model, requests=count, sha256=digest)
            out.append(shard)
    return out, hashes, prompts


def new_export_id(cfg_hash: str) -> str:
    """A sortable id: UTC time, the config hash's first 8 digits, 6 random hex digits."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return f"{stamp}-{cfg_hash[:8]}-{uuid.uuid4().hex[:6]}"


def export(
    tasks: Callable[[], Iterator[Task]],
    runner: Any,
    session: Any,
    directory: Path,
    *,
    shards: int | None,
    retry_errors: bool,
    exclude: frozenset[str] = frozenset(),
    export_id: str | None = None,
) -> tuple[Manifest | None, Pending]:
    """Select the pending tasks (:func:`select_pending`), write their shards under
    ``directory`` (:func:`write_shards`) and the manifest (``directory/manifest.json`` and the
    run directory's ``batch/exports/<id>.json``); nothing is written (manifest None) when no
    task is pending. ``tasks()`` gives the run's tasks afresh."""
    pending = select_pending(tasks(), session, retry_errors=retry_errors, exclude=exclude)
    if not pending.requests:
        return None, pending
    directory = directory.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    requests = Requests(session.client.models)
    written, hashes, prompts = write_shards(tasks(), pending, directory, requests, shards=shards)
    cfg = runner.config
    digest = config_hash(cfg)
    manifest = Manifest(
        export_id=export_id or new_export_id(digest),
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        run=cfg.run_name(), pipeline=cfg.pipeline, config_hash=digest, directory=str(directory),
        prompts=prompts, shards=written, tasks=hashes,
    )  # fmt: skip
    run_copy = session.runlog.out_dir / EXPORTS / f"{manifest.export_id}.json"
    write_manifest(manifest, directory / "manifest.json", run_copy)
    return manifest, pending


class ExportBatch:
    """The executor of ``judgekit batch export`` (writes shards and a manifest, records
    nothing; see the module doc).

    Args:
        directory: where the shards and ``manifest.json`` go.
        shards: shards per model, >= 1.
        retry_errors: export the tasks recorded ``error`` (no answer) too.

    Attributes:
        manifest, pending: what the export wrote, once executed.
    """

    def __init__(self, directory: Path | str, shards: int = 1, *, retry_errors: bool = False):
        if shards < 1:
            raise InputError(None, f"must be >= 1, got {shards}", field="--shards")
        self.directory = Path(directory)
        self.shards = shards
        self.retry_errors = retry_errors
        self.manifest: Manifest | None = None
        self.pending: Pending | None = None

    def execute(self, runner: Any, session: Any, emit: Callable[[str], None]) -> bool:
        """Write the export; False: the run's report is not written (nothing was answered)."""
        self.manifest, self.pending = export(
            lambda: batch_tasks(runner), runner, session, self.directory,
            shards=self.shards, retry_errors=self.retry_errors,
        )  # fmt: skip
        return False
