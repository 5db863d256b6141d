"""Run records: one JSONL line per LLM call (success or not), resume, and usage summaries.

A run directory holds ``records.jsonl`` (append-only). On resume, every task key already recorded
is final and never called again; a line cut short by a crash (kill -9) is dropped and the file
truncated back to its last complete line before appending.

Records are streamed to disk, not held in memory: the log keeps only each key's position in the
file and reads a record back when asked (``RunLog.get``, ``RunLog.records[key]``), so a run of
100,000 tasks holds 100,000 small integers, not 100,000 records. Inside an event loop the records
of one loop iteration go to the OS in one ``write`` at the end of it (outside a loop, at once):
a crash loses at most those, and their tasks simply run again on resume.

A write that fails (a full disk) is undone: the file is cut back to its last complete line, so a
record is never torn in the middle of the file, and the records stay in memory (``error`` says
why). The client then sends no new call (:meth:`RunLog.wait_writable`) while the write is tried
again, with back-off, for up to ``retry_s`` seconds (``WRITE_RETRY_S``); once space is back the
run goes on, else it stops with one :class:`~judgekit.errors.OutputError` naming the file.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Container, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from judgekit.data.atomic import open_regular, refuse_link
from judgekit.errors import InputError, OutputError
from judgekit.record_index import RecordIndex

__all__ = ["Record", "RecordIndex", "RunLog", "join_key"]

Status = Literal["ok", "unscored", "error"]
_SHIFT = 32  # position = offset << 32 | length
WRITE_RETRY_S = 60.0  # seconds a run waits for a failed write to succeed before it stops
_RETRY_FIRST_S = 0.25
_RETRY_MAX_S = 5.0
# The write every record goes through; tests replace it to make a disk fill up at the Nth write.
_write = os.write


def join_key(*parts: object) -> str:
    """A task key from its parts (stage, model name, item id, ...), joined with ``|``.

    Each part has ``\\`` and ``|`` escaped, so parts that contain ``|`` (an item id
    ``mmlu|12``, a model named ``a|b``) can never make two tasks share a key.
    """
    return "|".join(str(p).replace("\\", "\\\\").replace("|", "\\|") for p in parts)


class Record(BaseModel):
    """One LLM call as the run log keeps it.

    ``status`` is ``ok`` (a validated answer), ``unscored`` (the model answered but never
    validly within the re-asks: ``raw`` keeps its last answer, ``reason`` says why) or ``error``
    (no answer: transient failures outlasted the retries, or the call was refused).
    ``served_by`` names the endpoint that answered (``route@host``; a fallback's route when a
    fallback answered); ``latency_s`` is wall time from the first attempt to the record,
    less the time spent waiting for a free slot at the endpoint (in-flight, rpm and tpm limits).
    ``cost`` is in USD, None when no price is known for the route (see ``judgekit.llm.usage``).
    ``normalised`` counts the answer's booleans read from a string spelling one (``" true\\n"``;
    see ``judgekit.llm.answers``). ``batch`` names the batch that answered (a provider's batch
    id, or the results file of ``judgekit batch import``; ``judgekit.batch``), None for an
    online call: such an answer had no re-ask, so ``--retry-errors`` redoes it online when it
    is ``unscored``. ``reasoning`` keeps the model's reasoning where it sent one
    (``reasoning_content``, a ``<think>`` block...; ``judgekit.llm.reply``), apart from ``raw``;
    ``note`` says where the answer was read from when not from the content.
    ``label_probs`` ({label: p}, summing to 1) is the judge's probability of every label where
    log-probabilities were asked for and read (``judge.logprobs``); ``label_probs_bound`` the
    upper bounds of the labels absent from the top-K (their ``label_probs`` is 0; see
    :mod:`judgekit.llm.logprobs`). ``served_model`` and ``system_fingerprint`` are the
    response's ``model`` and ``system_fingerprint`` where the provider sent them (what served
    the answer: compared by ``judgekit drift``), kept with the answer in the cache.
    """

    key: str
    stage: str
    role: str
    route: str
    model: str
    prompt_id: str
    prompt_hash: str
    params: dict[str, Any] = Field(default_factory=dict)
    schema_name: str | None = None
    sample_index: int = 0
    status: Status
    reason: str | None = None
    raw: str | None = None
    parsed: Any = None
    attempts: int = 0
    reasks: int = 0
    latency_s: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = 0.0
    cache_hit: bool = False
    served_by: str | None = None
    normalised: int = 0
    batch: str | None = None
    reasoning: str | None = None
    note: str | None = None
    label_probs: dict[str, float] | None = None
    label_probs_bound: dict[str, float] | None = None
    served_model: str | None = None
    system_fingerprint: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)


_to_json = Record.__pydantic_serializer__.to_json  # the bytes of model_dump_json()


class RunLog:
    """Append-only ``records.jsonl`` of a run directory, with the records already there.

    Args:
        out_dir: the run directory (created if needed).

    Attributes:
        error: why the last write failed (``OSError``: ``ENOSPC`` for a full disk), while
            records are kept in memory; None when every record is written.
        retry_s: seconds a failed write is tried again before :meth:`wait_writable` raises.
        on_warning: told, in one line, when a write first fails and when it succeeds again.

    Raises:
        InputError: a complete line of the file is not a record (the message names the line).
    """

    def __init__(self, out_dir: Path | str) -> None:
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.out_dir / "records.jsonl"
        refuse_link(self.path)  # never read or appended through a link planted there
        self._index: dict[str, int] = {}
        self.resumed = 0
        self._size = self._load()
        self._written = self._size  # bytes handed to the OS; the rest is in _buffer
        self._buffer: list[bytes] = []
        self._scheduled = False
        self.error: OSError | None = None
        self.retry_s = WRITE_RETRY_S
        self.on_warning: Callable[[str], None] | None = None
        self._failed_at = 0.0  # time.monotonic() of the first failure of this spell
        self._cut = False  # a failed write may have left part of a line: cut it before writing
        self._reported = False  # the OutputError was raised to the caller
        self._retrying: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._fd = open_regular(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        self._rfd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        self.records: RecordIndex = RecordIndex(self)

    def _load(self) -> int:
        if not self.path.exists():
            return 0
        size = self.path.stat().st_size
        end = 0
        with open(self.path, "rb") as fh:
            for number, line in enumerate(fh, 1):
                if not line.endswith(b"\n"):
                    break  # a line cut short by a crash
                if line.strip():
                    try:
                        data = json.loads(line)
                        key = data["key"]
                        if data.get("status") not in ("ok", "unscored", "error"):
                            raise ValueError
                    except (ValueError, KeyError, TypeError):
                        raise InputError(
                            self.path,
                            "not a judgekit record (fix or delete this line to resume)",
                            line=number,
                        ) from None
                    self._index[key] = end << _SHIFT | len(line)
                end += len(line)
        if end < size:
            with open(self.path, "r+b") as fh:
                fh.truncate(end)
        self.resumed = len(self._index)
        return end

    def __contains__(self, key: str) -> bool:
        return key in self._index

    def get(self, key: str) -> Record | None:
        """The record of a finished task, if there is one (read from disk)."""
        position = self._index.get(key)
        if position is None:
            return None
        offset, length = position >> _SHIFT, position & ((1 << _SHIFT) - 1)
        if offset >= self._written and not self.flush():  # not on disk yet: from memory
            start = offset - self._written
            line = b"".join(self._buffer)[start : start + length]
        elif self._rfd >= 0:
            line = os.pread(self._rfd, length, offset)
        else:  # closed: read it the slow way
            with open(self.path, "rb") as fh:
                fh.seek(offset)
                line = fh.read(length)
        return Record.model_validate_json(line)

    def append(self, record: Record) -> None:
        """Add one record (see the module doc for when it reaches the OS)."""
        line = _to_json(record) + b"\n"
        self._index[record.key] = self._size << _SHIFT | len(line)
        self._size += len(line)
        self._buffer.append(line)
        if self._scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        self._scheduled = True
        loop.call_soon(self.flush)

    def flush(self) -> bool:
        """Hand the buffered records to the OS in one ``write``; True when none is left unwritten.

        Never raises for a failed write: it is undone (the file cut back to its last complete
        line), the records stay in memory, :attr:`error` says why, and the next flush tries
        again (see the module doc)."""
        self._scheduled = False
        if not self._buffer or self._fd < 0:
            return not self._buffer
        data = b"".join(self._buffer)
        try:
            if self._cut:  # a torn line left by a failed write: never append after it
                os.ftruncate(self._fd, self._written)
                self._cut = False
            view, done = memoryview(data), 0
            while done < len(data):  # a regular file takes it all at once unless the disk is full
                done += _write(self._fd, view[done:])
        except OSError as exc:
            self._failed(exc)
            return False
        self._buffer.clear()
        self._written += len(data)
        if self.error is not None:
            self.error = None
            self._warn(f"{self.path} is written again; the run goes on")
        return True

    def _failed(self, exc: OSError) -> None:
        """Undo a failed write (cut the file back to its last complete line) and keep why."""
        self._cut = True
        try:
            os.ftruncate(self._fd, self._written)
            self._cut = False
        except OSError:
            pass  # cut before the next write
        if self.error is None:
            self._failed_at = time.monotonic()
            self._warn(
                f"cannot write {self.path}: {exc.strerror or exc}. No new call is sent; the "
                f"records not written are kept in memory and written again for up to "
                f"{self.retry_s:g} s (free space to let the run go on)"
            )
        self.error = exc

    def _warn(self, message: str) -> None:
        if self.on_warning is not None:
            self.on_warning(message)

    def stopped(self) -> OutputError:
        """The one error a run stops with when its records cannot be written (:attr:`error`
        set), naming the file and the reason."""
        assert self.error is not None
        lost = len(self._buffer)
        return OutputError(
            self.path,
            self.error,
            f"; no call was sent after the first failed write, and the {lost} records not "
            "written run again on resume. Free space, then run the same command again",
        )

    async def wait_writable(self, *, flush: bool = False) -> None:
        """Return once every record is written: at once in the ordinary case; after a failed
        write, while the write is tried again (0.25 s doubling to 5 s) for up to
        :attr:`retry_s` seconds from the first failure. ``flush``: write what is buffered
        first (the end of a run).

        Raises:
            OutputError: the records still cannot be written (:meth:`stopped`).
        """
        if flush:
            self.flush()
        if self.error is None:
            return
        loop = asyncio.get_running_loop()
        if self._retrying is None or self._retrying[0] is not loop:
            self._retrying = (loop, asyncio.Lock())
        async with self._retrying[1]:  # one task retries; the others wait for its outcome
            delay = _RETRY_FIRST_S
            while self.error is not None:
                left = self.retry_s - (time.monotonic() - self._failed_at)
                if left <= 0:
                    self._reported = True  # close() then says nothing more
                    raise self.stopped()
                await asyncio.sleep(min(delay, left))
                delay = min(delay * 2, _RETRY_MAX_S)
                self.flush()

    def iter_records(self, keys: Container[str] | None = None) -> Iterator[Record]:
        """Every current record (the last one per key), in file order; only ``keys`` if given
        (records not yet written, after a failed write, come from memory)."""
        self.flush()
        written, pending = self._written, list(self._buffer)
        offset = 0
        with open(self.path, "rb") as fh:
            for line in (*_lines_up_to(fh, written), *pending):
                start, offset = offset, offset + len(line)
                if not line.strip():
                    continue
                record = Record.model_validate_json(line)
                if keys is not None and record.key not in keys:
                    continue
                if self._index.get(record.key, -1) >> _SHIFT == start:
                    yield record

    def sync(self) -> None:
        """Write the buffer and flush to disk (fsync).

        Raises:
            OutputError: the records cannot be written (a full disk)."""
        if not self.flush():
            raise self.stopped()
        try:
            os.fsync(self._fd)
        except OSError as exc:
            raise OutputError(self.path, exc) from exc

    def close(self) -> None:
        """Sync and close (idempotent).

        Raises:
            OutputError: records could not be written (they are lost, and their tasks run
                again on resume); not raised again once :meth:`wait_writable` raised it."""
        if self._fd < 0:
            return
        try:
            self.sync()
        except OutputError:
            if not self._reported:
                raise
        finally:
            os.close(self._fd)
            os.close(self._rfd)
            self._fd = self._rfd = -1


def _lines_up_to(handle: Any, size: int) -> Iterator[bytes]:
    """The lines of an open file that end at or before byte ``size``."""
    offset = 0
    for line in handle:
        offset += len(line)
        if offset > size:
            return
        yield line
