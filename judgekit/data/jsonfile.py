"""The one JSON writer of judgekit's outputs (``summary.json``, calibration results...).

Files are written through the one writer of outputs (:mod:`judgekit.data.atomic`: a temporary
file in the same folder, fsync, rename), so a reader never sees half a file; as UTF-8 with
non-ASCII text kept, indented 2. Values that JSON has no form for are made plain first
(:func:`json_safe`): NaN and infinities become ``null`` (never the non-standard ``NaN``
token), numpy scalars Python numbers, tuples lists, keys text.
"""

from __future__ import annotations

import json
import math
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


def write_json(path: Path | str, data: Any) -> None:
    """Write ``json_safe(data)`` to ``path`` atomically (see the module doc).

    Any other object (a date, an enum) is written as its ``str``.

    Raises:
        OutputError: the file could not be written (an ``OSError`` too; the message names
            the file: a full disk, a folder that is not writable).
    """
    text = json.dumps(json_safe(data), indent=2, ensure_ascii=False, allow_nan=False, default=str)
    write_text(path, text + "\n")
