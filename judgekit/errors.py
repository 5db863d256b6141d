"""Errors that judgekit reports to users as one clear line, never as a traceback."""

from __future__ import annotations

from pathlib import Path


class JudgekitError(Exception):
    """Base class of every error judgekit shows to a user as a single message."""


class InputError(JudgekitError):
    """A bad input file or value, located by file, line and field.

    Args:
        path: the file that holds the bad value (None for command-line values).
        message: what is wrong and what was expected.
        line: 1-based line number in ``path``, where known.
        field: the field or key that holds the bad value, where known.
    """

    def __init__(
        self,
        path: str | Path | None,
        message: str,
        *,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        self.field = field
        self.message = message
        where = self.path or "<command line>"
        if line is not None:
            where += f":{line}"
        if field:
            where += f": field '{field}'"
        super().__init__(f"{where}: {message}")


class JudgekitWarning(UserWarning):
    """A result that is computed but probably not what the user meant (the CLI prints it)."""


class OutputError(JudgekitError, OSError):
    """A file judgekit writes could not be written (a full disk, a read-only folder...).

    Also an ``OSError`` (``errno``, ``strerror``; ``filename`` is the file meant, never the
    temporary it was being written to), so code that catches ``OSError`` still does.

    Args:
        path: the file that could not be written.
        cause: the operating system's error.
        detail: what became of the run (appended to the message), if anything.
    """

    def __init__(self, path: str | Path, cause: OSError, detail: str = "") -> None:
        reason = cause.strerror or str(cause) or type(cause).__name__
        OSError.__init__(self, cause.errno, reason, str(path))
        self.path = str(path)
        self.message = f"cannot write {path}: {reason}{detail}"

    def __str__(self) -> str:
        return self.message
