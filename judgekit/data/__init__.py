"""Finding and reading input files: paths relative to a config or the working directory, data
sets by name (``data:NAME/path``), and JSONL with every problem located by file and line.

judgekit's item, label, dictionary and test-set files share one JSONL reader, so a bad line is
reported the same way everywhere: one :class:`~judgekit.errors.InputError` naming the file and
the line, never a traceback. A line of a JSONL file, or of a line-aligned text file
(:func:`text_lines`), ends at ``\n`` only: U+2028, U+2029, U+0085, form feeds and the other
characters Python's ``str.splitlines`` also breaks at are text inside a line (JSON writes them
unescaped), so a segment holding one is never cut in two.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judgekit.errors import InputError


def resolve_path(path: str | Path, base: str | Path | None = None) -> Path:
    """The input file (or folder) ``path`` names: ``data:NAME/PATH`` is a file of a registered
    data set (:mod:`judgekit.datasets.refs`, fetched where needed); an absolute path is itself;
    a relative one is looked for in ``base`` (a config's folder), then in the current
    directory, never beside judgekit's own files.

    Raises:
        InputError: a relative path found in neither place (the message names both), an
            unknown data set or a path that is not in it.
        JudgekitError: a data set file could not be fetched.
    """
    if str(path).startswith("data:"):
        from judgekit.datasets.refs import resolve_ref

        return resolve_ref(str(path))
    path = Path(path)
    if path.is_absolute():
        return path
    tried = [Path(base) / path] if base is not None else []
    tried.append(path)
    for candidate in tried:
        if candidate.exists():
            return candidate
    where = " or ".join(str(c.absolute()) for c in tried)
    raise InputError(path, f"not found (looked for {where})")


def stored_path(path: str | Path, summary: Path, field: str = "items") -> Path:
    """A file that a run's ``summary.json`` names (``signature.items[].path``...), as a path that
    opens from any directory: runs store it absolute (or as a ``data:`` reference); a run
    written before they did stored it as given, relative to the directory it was started from,
    which is tried here (:func:`resolve_path`).

    Raises:
        InputError: the file is not there (the message names the summary and the field).
    """
    try:
        found = resolve_path(path)
    except InputError:
        found = Path(path)
    if not found.is_file():
        hint = "" if Path(path).is_absolute() else (
            " (a relative path: run this from the directory the run was started in)")  # fmt: skip
        raise InputError(summary, f"the run's {field} file {path} is not there{hint}",
                         field=field)  # fmt: skip
    return found


def rubric_path(name: str, base: str | Path | None = None) -> Path:
    """The shipped rubric ``rubrics/<name>.yaml``, or ``name`` itself when it is a .yaml/.yml
    path (resolved as :func:`resolve_path` does, against ``base`` first)."""
    if name.endswith((".yaml", ".yml")):
        return resolve_path(name, base)
    from judgekit.bundled import bundled_dir

    return bundled_dir("rubrics") / f"{name}.yaml"


def jsonl_objects(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSONL file (1-based lines; a
    UTF-8 byte-order mark is allowed).

    Raises:
        InputError: the path is missing, a directory or holds no object; a line is not
            UTF-8, not valid JSON (also: numbers too long, nesting too deep, a lone surrogate
            escape such as ``"\\ud800"``), or not a JSON object. The error names the line.
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(path, "is a directory, expected a JSONL file")
    if not path.is_file():
        raise InputError(path, "file not found")
    found = False
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(path, f"not UTF-8 ({exc.reason})", line=number) from None
            if not text.strip():
                continue
            found = True
            yield number, _object(text, path, number)
    if not found:
        raise InputError(path, "no records: the file is empty")


def text_lines(path: str | Path) -> list[str]:
    """The lines of a UTF-8 text file (a byte-order mark allowed), split at ``\n`` only (module
    doc), each without its ``\n`` or ``\r\n``; the newline that ends the last line opens no
    line.

    Raises:
        InputError: the path is missing or not UTF-8 (the error names the line).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    data = path.read_bytes()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = []
    for number, raw in enumerate(lines, start=1):
        try:
            text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(path, f"not UTF-8 ({exc.reason})", line=number) from None
        out.append(text[:-1] if text.endswith("\r") else text)
    return out


def _object(text: str, path: Path, number: int) -> dict[str, Any]:
    try:
        value = json.loads(text)
        if "\\u" in text:  # an escape may encode a lone surrogate: not text, cannot be written
            json.dumps(value, ensure_ascii=False).encode("utf-8")
    except json.JSONDecodeError as exc:
        raise InputError(path, f"invalid JSON: {exc.msg}", line=number) from None
    except UnicodeEncodeError:
        raise InputError(
            path, "invalid JSON: a \\u escape that is not a character", line=number
        ) from None
    except (ValueError, RecursionError) as exc:  # huge integers, nesting too deep
        raise InputError(path, f"invalid JSON: {str(exc).split(';')[0]}", line=number) from None
    if not isinstance(value, dict):
        raise InputError(path, "expected a JSON object per line", line=number)
    return value
