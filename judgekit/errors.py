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
