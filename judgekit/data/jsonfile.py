"""The one JSON writer of judgekit's outputs (``summary.json``, calibration results...).

Files are written through the one writer of outputs (:mod:`judgekit.data.atomic`: a temporary
file in the same folder, fsync, rename), so a reader never sees half a file; as UTF-8 with
non-ASCII text kept, indented 2. Values that JSON has no form for are made plain first
(:func:`json_safe`): NaN and infinities become ``null`` (never the non-standard ``NaN``
token), numpy scalars Python numbers, tuples lists, keys text.

Every ``--json`` a command prints is this writer's text too (:func:`json_text`,
:func:`print_json`). A lone UTF-16 surrogate in a string (a file name or label read from bytes
that are not UTF-8: ``\udcff``) has no UTF-8 form; it is written as its JSON escape
(``"\\udcff"``, RFC 8259 Sec. 7), so the output is valid UTF-8 JSON and a JSON reader gets the
same string back.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any

from judgekit.data.atomic import write_text


def json_safe(value: Any) -> Any:
    """``value`` with NaN and infinities as None, numpy scalars and arrays as Python values,
    tuples and sets as lists, dict keys as strings, paths as strings (recursively)."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):  # numpy
        return json_safe(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(data: Any, *, indent: int | None = None) -> str:
    """``json_safe(data)`` as JSON text (non-ASCII kept; lone surrogates escaped, module doc),
    encodable as UTF-8. Any other object (a date, an enum) is written as its ``str``."""
    text = json.dumps(json_safe(data), indent=indent, ensure_ascii=False, allow_nan=False,
                      default=str)  # fmt: skip
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def print_json(data: Any, *, indent: int | None = None) -> None:
    """Print :func:`json_text` of ``data`` on standard output, as UTF-8 (whatever the locale's
    encoding), followed by a newline: the one writer of every ``--json`` output."""
    text = json_text(data, indent=indent) + "\n"
    stream = sys.stdout
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # a text-only stream (a test's capture): it takes text
        stream.write(text)
    else:
        stream.flush()
        buffer.write(text.encode("utf-8"))
    stream.flush()


def write_json(path: Path | str, data: Any) -> None:
    """Write ``json_safe(data)`` to ``path`` atomically (see the module doc).

    Any other object (a date, an enum) is written as its ``str``.

    Raises:
        OutputError: the file could not be written (an ``OSError`` too; the message names
            the file: a full disk, a folder that is not writable).
    """
    write_text(path, json_text(data, indent=2) + "\n")
