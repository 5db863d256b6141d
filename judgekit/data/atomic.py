"""The one writer of every file judgekit outputs: tables (CSV, TSV), JSON, JSONL, Markdown,
HTML pages, figures (PNG) and text lists.

Each file is written to a temporary file in its own folder (``.NAME.PID.tmp``), flushed to the
disk (``fsync``) and renamed over the target (``os.replace``, atomic on POSIX), so a reader (a
later calibration, the viewer, a script) finds the old file or the new one, never a cut one. A
full disk, a crash or Ctrl-C leaves the old file in place and no temporary behind. A write that
fails raises :class:`~judgekit.errors.OutputError`, which names the file meant (not the
temporary) and the reason (``cannot write out/labels.csv: No space left on device``).

The run log (``records.jsonl``) is the one file not written here: it is appended to, record by
record (``judgekit.runlog``), through :func:`open_regular` as the lock is.

No file is written through a link: a symbolic link (or a FIFO, a device, a folder) where
judgekit writes a file is refused with one :class:`~judgekit.errors.OutputError` naming it
(``O_NOFOLLOW`` where judgekit opens a file, :func:`refuse_link` before it replaces one), so a
link planted in a run directory never truncates, overwrites or appends to a file elsewhere.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from judgekit.errors import OutputError

__all__ = [
    "open_output",
    "open_regular",
    "refuse_link",
    "save_figure",
    "write_bytes",
    "write_frame",
    "write_text",
]
_NOT_REGULAR = "not a regular file (a symbolic link, FIFO or folder): judgekit writes no file there"


def _refused(path: Path | str) -> OutputError:
    return OutputError(path, OSError(errno.ELOOP, _NOT_REGULAR, str(path)))


def refuse_link(path: Path | str) -> None:
    """Check that ``path`` is a regular file or absent, without following a link.

    Raises:
        OutputError: it is a symbolic link, a FIFO, a device or a folder (one line naming it).
    """
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputError(path, exc) from exc
    if not stat.S_ISREG(mode):
        raise _refused(path)


def open_regular(path: Path | str, flags: int, mode: int = 0o644) -> int:
    """``os.open(path, flags | O_NOFOLLOW)``: a file descriptor of a regular file, never of
    what a link points to (a FIFO is not waited on: opened non-blocking, then refused).

    Raises:
        OutputError: ``path`` is a link or not a regular file, or cannot be opened.
    """
    extra = os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | extra, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO, errno.EISDIR):
            raise _refused(path) from exc
        raise OutputError(path, exc) from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _refused(path)
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return fd


def _opener(path: str, flags: int) -> int:
    """:func:`open`'s ``opener`` for the temporary: created anew (``O_EXCL``), never through
    a link planted at its name."""
    return open_regular(path, flags | os.O_EXCL)


# The file writes go through; tests replace it to make a disk fill up at the Nth write.
_open = open


@contextlib.contextmanager
def open_output(
    path: Path | str, mode: str = "w", *, encoding: str | None = "utf-8", newline: str | None = None
) -> Iterator[IO[Any]]:
    """A file handle to write ``path`` through (see the module doc); the file appears, whole,
    when the ``with`` block ends without an error.

    Args:
        path: the file to write (its folder must exist).
        mode: ``"w"`` (text) or ``"wb"`` (bytes).
        encoding: the text encoding (ignored for ``"wb"``).
        newline: as :func:`open`'s (``""`` for the csv module and pandas).

    Raises:
        OutputError: the file could not be written (the old one, if any, is left unchanged).
            An error of the ``with`` block that is not about this file (reading another
            file fails) is raised as it is, the old file left unchanged too.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    refuse_link(target)
    try:
        tmp.unlink(missing_ok=True)  # a leftover, or a link planted at its name: the link only
        if mode == "wb":
            handle = _open(tmp, "wb", opener=_opener)
        else:
            handle = _open(tmp, "w", encoding=encoding, newline=newline, opener=_opener)
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        refuse_link(target)  # planted while it was being written
        os.replace(tmp, target)
    except OSError as exc:
        if isinstance(exc, OutputError) or exc.filename not in (None, str(tmp), tmp):
            raise  # another file's error (or one already named): as it is
        raise OutputError(target, exc) from exc
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    """fsync a folder so the rename itself is on disk (best effort: not every file system
    lets a folder be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_text(path: Path | str, text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` (see the module doc; newlines are written as ``\\n``).

    Raises:
        OutputError: the file could not be written.
    """
    with open_output(path, encoding=encoding, newline="") as handle:
        handle.write(text)


def write_bytes(path: Path | str, data: bytes) -> None:
    """Write ``data`` to ``path`` (see the module doc).

    Raises:
        OutputError: the file could not be written.
    """
    with open_output(path, "wb") as handle:
        handle.write(data)


def write_frame(frame: Any, path: Path | str, **options: Any) -> None:
    """Write a pandas DataFrame with ``frame.to_csv(..., **options)`` (``sep="\\t"`` for a
    TSV) to ``path`` (see the module doc).

    Raises:
        OutputError: the file could not be written.
    """
    with open_output(path, newline="") as handle:
        frame.to_csv(handle, **options)


def save_figure(fig: Any, path: Path | str, **options: Any) -> None:
    """Save a matplotlib figure to ``path`` in the format its suffix names (``.png``), with
    ``fig.savefig(..., **options)`` (see the module doc).

    Raises:
        OutputError: the file could not be written.
    """
    fmt = Path(path).suffix.lstrip(".") or "png"
    with open_output(path, "wb") as handle:
        fig.savefig(handle, format=fmt, **options)
