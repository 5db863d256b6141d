"""Response cache on diskcache: a hit returns the validated answer without calling the model.

The key covers what changes an answer: route, model revision (if known), messages, generation
parameters, output schema, structured-output strategy and a sample index (so deliberate repeats
for self-consistency are not collapsed). It never covers ``api_base`` (replicas of one model
share entries) nor anything secret.

diskcache keeps entries in SQLite (WAL, with locking), so several runs may share one directory
at once, and a run killed at any point leaves it consistent. Writes go to one background thread
that commits them in batches, so the event loop never waits on the disk for a write; a write
still queued when the process is killed is simply not cached.

Values are stored as JSON text (:class:`JSONValues`), never as pickles: runs may share a cache
directory, and a pickle runs code when it is loaded, so whoever can write there could run code
as every user of the cache. A value that is not JSON is a miss, counted in
``ResponseCache.unreadable``; an entry in the pickle format of earlier judgekit versions is never
unpickled: it is a miss, counted in ``ResponseCache.pickled`` (the run says so once), and the
task's fresh answer replaces it as JSON. The answer a value holds is then validated against the
task's schema, as a fresh one is (``judgekit.llm.structured.cached_answer``).
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import diskcache
from diskcache.core import DBNAME, MODE_PICKLE, MODE_RAW, MODE_TEXT, UNKNOWN

from judgekit.data.atomic import refuse_link
from judgekit.errors import JudgekitError

_STOP = object()
_BATCH = 256
# diskcache's table layout (5.x), for reading many keys in one query
_MANY_SQL = (
    "SELECT key, mode, filename, value FROM Cache WHERE raw = 1 AND key IN ({marks})"
    " AND (expire_time IS NULL OR expire_time > ?)"
)


class Refused(Exception):
    """An entry that is not read: ``pickled`` (the old pickle format, never loaded) or
    ``unreadable`` (not JSON text)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class JSONValues(diskcache.Disk):
    """diskcache's storage with values as JSON text (in SQLite, or a file past
    ``min_file_size``) and keys as plain strings; nothing is ever pickled or unpickled.

    Raises (on read):
        Refused: a pickled value or key (``pickled``), a value that is not JSON
            (``unreadable``).
    """

    def store(self, value: Any, read: bool, key: Any = UNKNOWN) -> Any:
        if read:
            raise TypeError("the judgekit cache stores JSON values, not files")
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return super().store(text, False, key=key)

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
        if mode == MODE_PICKLE:
            raise Refused("pickled")
        if (
            read
            or mode not in (MODE_RAW, MODE_TEXT)
            or (mode == MODE_RAW and type(value) is not str)
        ):
            raise Refused("unreadable")
        text = super().fetch(mode, filename, value, False)  # the file of a long one: OSError
        try:
            return json.loads(text)
        except ValueError:
            raise Refused("unreadable") from None

    def get(self, key: Any, raw: bool) -> Any:
        if not raw:  # a pickled key (judgekit's keys are strings)
            raise Refused("pickled")
        return super().get(key, raw)


def _why(exc: BaseException) -> str:
    """``Type: message`` of a storage error (diskcache's Timeout has no message of its own)."""
    text = str(exc) or "the database stayed locked by another process"
    return f"{type(exc).__name__}: {text}"


def default_cache_dir() -> Path:
    """``$JUDGEKIT_CACHE_DIR``, else ``~/.cache/judgekit``."""
    env = os.environ.get("JUDGEKIT_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "judgekit"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def key_prefix(
    *,
    route: str,
    params: dict[str, Any],
    schema_digest: str,
    strategy: str,
    revision: str | None = None,
) -> str:
    """SHA-256 hex digest of the parts of a key that are the same for every task of a model
    and schema (computed once per model, not per call)."""
    blob = _canonical([route, revision, params, schema_digest, strategy])
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _messages_blob(messages: list[dict[str, Any]]) -> str:
    """A canonical, unambiguous text for ``messages``: length-prefixed fields (netstring
    style, keys sorted) when every key and value is a string, else canonical JSON."""
    parts = [f"s{len(messages)}|"]
    for message in messages:
        parts.append(f"{len(message)}|")
        for key in sorted(message):
            value = message[key]
            if type(value) is not str or type(key) is not str:
                return "j" + _canonical(messages)
            parts.append(f"{len(key)}:{key}{len(value)}:{value}")
    return "".join(parts)


def task_key(prefix: str, messages: list[dict[str, Any]], sample_index: int = 0) -> str:
    """The cache key of one task: the model/schema ``prefix``, the messages, the sample index."""
    blob = f"{prefix}|{sample_index}|{_messages_blob(messages)}"
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def schema_digest(schema: dict[str, Any] | None) -> str:
    """SHA-256 hex digest of a JSON schema's canonical JSON."""
    return hashlib.sha256(_canonical(schema).encode("utf-8")).hexdigest()


def cache_key(
    *,
    route: str,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    schema: dict[str, Any] | None,
    strategy: str,
    sample_index: int = 0,
    revision: str | None = None,
) -> str:
    """SHA-256 hex digest of everything that changes an answer (same as :func:`task_key` over
    :func:`key_prefix`)."""
    prefix = key_prefix(
        route=route,
        params=params,
        schema_digest=schema_digest(schema),
        strategy=strategy,
        revision=revision,
    )
    return task_key(prefix, messages, sample_index)


class ResponseCache:
    """A process-safe disk cache of successful answers.

    Each value is a dict ``{"raw": str, "parsed": dict}``, stored as JSON text (see the module
    doc). ``set`` returns at once; the entry is written by a background thread (``flush`` waits
    for it). An entry that cannot be read is a miss: one that is not JSON is counted in
    ``unreadable``, one in the old pickle format (never unpickled) in ``pickled``. Entries that
    cannot be written (disk full, read-only, locked) are counted in ``write_errors``, the
    reason in ``write_error``, and the run goes on; after a failed write no more are tried (a
    locked database would make each wait).

    Raises:
        JudgekitError: the cache directory or its database cannot be opened.

    Args:
        directory: where the cache lives (default :func:`default_cache_dir`).
    """

    def __init__(self, directory: Path | str | None = None) -> None:
        self.directory = Path(directory) if directory else default_cache_dir()
        for name in (DBNAME, f"{DBNAME}-wal", f"{DBNAME}-shm"):  # SQLite follows links
            refuse_link(self.directory / name)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._cache = diskcache.Cache(str(self.directory), size_limit=2**34, disk=JSONValues)
        except (OSError, sqlite3.Error, diskcache.Timeout) as exc:
            raise self._unusable("cannot be opened", exc) from None
        self._pending: dict[str, dict[str, Any]] = {}
        self._queue: queue.Queue[Any] = queue.Queue()
        self._writer: threading.Thread | None = None
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.unreadable = 0  # values that are not JSON (misses)
        self.pickled = 0  # values in the old pickle format, never unpickled (misses)
        self.write_errors = 0
        self.write_error = ""

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached answer for ``key``, or None (also for an entry that cannot be read)."""
        value = self._pending.get(key)
        if value is None:
            value = self._read(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        """The cached answers among ``keys`` (missing keys are left out), in a few queries.

        Reads diskcache's table directly (one ``IN`` query per 500 keys); should its layout
        ever change, falls back to one ``get`` per key. An entry that cannot be read (its file
        replaced by a concurrent run, a corrupt value) is asked for again on its own, and left
        out if it still cannot be read.
        """
        out = {k: self._pending[k] for k in keys if k in self._pending}
        rest = [k for k in keys if k not in out]
        try:
            for i in range(0, len(rest), 500):
                chunk = rest[i : i + 500]
                marks = ",".join("?" * len(chunk))
                query = _MANY_SQL.format(marks=marks)
                rows = self._cache._sql(query, (*chunk, time.time())).fetchall()
                fetch = self._cache._disk.fetch
                for key, mode, filename, value in rows:
                    try:
                        out[key] = fetch(mode, filename, value, False)
                    except Refused as exc:  # not JSON, or a pickle: a miss, counted
                        self._refused(exc)
                    except Exception:  # its file replaced meanwhile: one more try, alone
                        if (again := self._read(key)) is not None:
                            out[key] = again
        except (AttributeError, TypeError, ValueError, sqlite3.Error):
            out.update({k: v for k in rest if (v := self._read(k)) is not None})
        self.hits += len(out)
        self.misses += len(keys) - len(out)
        return out

    def _read(self, key: str) -> Any:
        """diskcache's value for ``key``; None if absent or unreadable (a file removed by a
        concurrent run, a value that is not JSON, a pickle: counted)."""
        try:
            return self._cache.get(key)
        except Refused as exc:
            self._refused(exc)
            return None
        except Exception:  # any failure to read an entry makes it a miss
            return None

    def _refused(self, exc: Refused) -> None:
        if exc.kind == "pickled":
            self.pickled += 1
        else:
            self.unreadable += 1

    def set(self, key: str, value: dict[str, Any]) -> None:
        """Queue ``value`` for writing (returns at once)."""
        self._pending[key] = value
        if self._writer is None:
            with self._lock:
                if self._writer is None:
                    self._writer = threading.Thread(
                        target=self._write_loop, name="judgekit-cache-writer", daemon=True
                    )
                    self._writer.start()
        self._queue.put((key, value))

    def _write_loop(self) -> None:
        while True:
            item = self._queue.get()
            batch = [item]
            while len(batch) < _BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            entries = [b for b in batch if b is not _STOP]
            try:
                if self.write_errors:  # writes failed already: no more waits
                    self.write_errors += len(entries)
                elif entries:
                    try:
                        with self._cache.transact():
                            for key, value in entries:
                                self._cache.set(key, value)
                    except Exception as exc:  # disk full, read-only, locked: the run goes on
                        self.write_errors += len(entries)
                        self.write_error = _why(exc)
                for key, _ in entries:
                    self._pending.pop(key, None)
            finally:
                for _ in batch:
                    self._queue.task_done()
            if len(entries) < len(batch):
                return

    def flush(self) -> None:
        """Wait until every queued entry is on disk."""
        if self._writer is not None:
            self._queue.join()

    def _unusable(self, what: str, exc: BaseException) -> JudgekitError:
        if isinstance(exc, diskcache.Timeout) or "locked" in str(exc):
            advice = "another process holds it locked; try again, or run with --no-cache"
        else:
            advice = "remove that directory to start afresh, or run with --no-cache"
        return JudgekitError(f"cache {self.directory} {what} ({_why(exc)}); {advice}")

    def stats(self) -> dict[str, Any]:
        """``directory``, ``entries``, ``bytes`` on disk, and ``pickled``: the entries in the
        old pickle format, never read (``clear`` removes them).

        Raises:
            JudgekitError: the database is damaged or locked."""
        self.flush()
        try:
            entries, volume = len(self._cache), self._cache.volume()
            query = "SELECT COUNT(*) FROM Cache WHERE mode = ?"
            ((pickled,),) = self._cache._sql(query, (MODE_PICKLE,)).fetchall()
        except (sqlite3.Error, diskcache.Timeout) as exc:
            raise self._unusable("cannot be read", exc) from None
        return {
            "directory": str(self.directory),
            "entries": entries,
            "bytes": volume,
            "pickled": pickled,
        }

    def check(self) -> list[str]:
        """diskcache's consistency check: a list of warnings (empty = consistent).

        Raises:
            JudgekitError: the database is damaged or locked."""
        self.flush()
        try:
            return [str(w.message) for w in self._cache.check()]
        except (sqlite3.Error, diskcache.Timeout) as exc:
            raise self._unusable("cannot be checked", exc) from None

    def clear(self) -> int:
        """Remove every entry; returns how many were removed.

        Raises:
            JudgekitError: the database is damaged or locked (remove the directory instead)."""
        self.flush()
        try:
            return self._cache.clear()
        except (sqlite3.Error, diskcache.Timeout) as exc:
            raise self._unusable("cannot be cleared", exc) from None

    def close(self) -> None:
        """Write what is queued, stop the writer, close the database (idempotent)."""
        writer, self._writer = self._writer, None
        if writer is not None:
            self._queue.put(_STOP)
            writer.join()
        self._cache.close()
