"""A disk that fills up, for tests where no small file system (tmpfs) can be mounted.

:class:`FullDisk` holds a budget of free bytes. Installed (``install()``, or as the entry of a
subprocess: :data:`ENTRY`), it replaces the two places judgekit's writes go through: the run
log's ``judgekit.runlog._write`` (``os.write`` of records.jsonl) and the output writer's
``judgekit.data.atomic._open`` (every table, page, figure and JSON file). A write takes what
the budget allows, as a file system does: a write larger than the space left is cut short (a
short ``os.write``, or part of the text of a ``write()``) and the next one raises ``OSError``
``ENOSPC`` ("No space left on device"). ``free(n)`` gives space back, as deleting a file does.
Only files whose name is in ``names`` count (all files when ``names`` is None).
"""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path
from typing import Any

# A subprocess entry: `python -c ENTRY run CONFIG ...` runs the judgekit command line with a
# write retry budget of $JUDGEKIT_TEST_RETRY_S seconds and, where $JUDGEKIT_TEST_DISK_BYTES is
# set, a disk of that many free bytes for the files named in $JUDGEKIT_TEST_DISK_NAMES
# (comma-separated; default records.jsonl).
ENTRY = (
    "import os, sys; sys.path.insert(0, 'tests'); from full_disk import FullDisk; "
    "env = os.environ; names = env.get('JUDGEKIT_TEST_DISK_NAMES', 'records.jsonl'); "
    "names = set(names.split(',')); "
    "'JUDGEKIT_TEST_DISK_BYTES' in env and "
    "FullDisk(int(env['JUDGEKIT_TEST_DISK_BYTES']), names).install(); "
    "import judgekit.runlog as r; r.WRITE_RETRY_S = float(env.get('JUDGEKIT_TEST_RETRY_S', 60)); "
    "from judgekit.cli import main; main()"
)


def no_space() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class FullDisk:
    """A budget of ``free`` bytes shared by every counted write (see the module doc)."""

    def __init__(self, free: int, names: set[str] | None = None) -> None:
        self.space = free
        self.names = names
        self.failures = 0  # writes refused for want of space
        self._lock = threading.Lock()
        self._saved: list[tuple[Any, str, Any]] = []

    def free(self, nbytes: int) -> None:
        """Give ``nbytes`` back (a file deleted)."""
        with self._lock:
            self.space += nbytes

    def take(self, wanted: int) -> int:
        """How many of ``wanted`` bytes fit; raises ENOSPC when none does."""
        with self._lock:
            if wanted and self.space <= 0:
                self.failures += 1
                raise no_space()
            got = min(wanted, self.space)
            self.space -= got
            return got

    def counts(self, path: str) -> bool:
        """Whether writes to ``path`` take from the budget."""
        return self.names is None or Path(path).name in self.names

    def install(self) -> FullDisk:
        """Put the full disk under judgekit's writes (``uninstall`` takes it away)."""
        import judgekit.data.atomic as atomic
        import judgekit.runlog as runlog

        self._saved = [(runlog, "_write", runlog._write), (atomic, "_open", atomic._open)]
        real_write, real_open = runlog._write, atomic._open
        disk = self

        def write(fd: int, data: Any) -> int:
            if not disk.counts(os.readlink(f"/proc/self/fd/{fd}")):
                return real_write(fd, data)
            got = disk.take(len(data))
            return real_write(fd, bytes(data[:got]))

        def opener(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            handle = real_open(path, mode, *args, **kwargs)
            name = Path(path).name  # ".labels.csv.PID.tmp": the file meant is labels.csv
            meant = name[1:].rsplit(".", 2)[0] if name.endswith(".tmp") else name
            return _Limited(handle, disk) if disk.counts(meant) else handle

        runlog._write, atomic._open = write, opener
        return self

    def uninstall(self) -> None:
        for module, name, value in self._saved:
            setattr(module, name, value)
        self._saved = []

    def __enter__(self) -> FullDisk:
        return self.install()

    def __exit__(self, *exc: object) -> None:
        self.uninstall()


class _Limited:
    """A file handle whose writes take from a :class:`FullDisk`."""

    def __init__(self, handle: Any, disk: FullDisk) -> None:
        self._handle, self._disk = handle, disk

    def write(self, data: Any) -> int:
        size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
        got = self._disk.take(size)
        if got < size:  # part of it, as a file system writes what fits, then the error
            self._handle.write(data[: len(data) * got // max(size, 1)])
            self._handle.flush()
            with self._disk._lock:
                self._disk.failures += 1
            raise no_space()
        return self._handle.write(data)

    def writelines(self, lines: Any) -> None:  # each line takes from the budget too
        for line in lines:
            self.write(line)

    def __enter__(self) -> _Limited:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()

    def __iter__(self) -> Any:
        return iter(self._handle)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)
