"""Reading label files: CSV, TSV and JSONL rows with their line numbers, and run directories.

The readers only turn a file into ``(line, {column: value})`` rows and report malformed input
as one :class:`~judgekit.errors.InputError` naming file, line and field; building the items x
raters table from those rows is :func:`judgekit.labels.table.load_labels`' job.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from judgekit.data.tables import table_format
from judgekit.errors import InputError

RUN_LABELS_FILE = "labels.csv"
Rows = list[tuple[int, dict[str, Any]]]


def resolve_labels_path(path: str | Path) -> Path:
    """``path`` itself for a file, ``path/labels.csv`` for a judgekit run directory.

    Raises:
        InputError: the path does not exist, or a directory holds no labels.csv.
    """
    path = Path(path)
    if path.is_dir():
        path = path / RUN_LABELS_FILE
        if not path.is_file():
            raise InputError(path.parent, f"not a run directory: no {RUN_LABELS_FILE} in it")
    elif not path.is_file():
        raise InputError(path, "no such file or directory")
    return path


def is_jsonl(path: Path) -> bool:
    """True for ``.jsonl`` / ``.ndjson`` files (one JSON object per line)."""
    return table_format(path, default="csv") == "jsonl"


def coerce_numbers(values: list[Any]) -> list[Any]:
    """Turn text labels into numbers when every non-missing label is finite numeric text.

    Returns ``values`` itself (the same list object) when nothing is converted; ints when every
    number is integral, floats otherwise; None stays None.
    """
    present = [v for v in values if v is not None]
    if not present or not all(isinstance(v, str) for v in present):
        return values
    try:
        numbers = [float(v) for v in present]
    except ValueError:
        return values
    if not all(math.isfinite(x) for x in numbers):
        return values
    as_int = all(x.is_integer() for x in numbers)
    return [None if v is None else (int(float(v)) if as_int else float(v)) for v in values]


def key_value(value: Any, jsonl: bool) -> Any:
    """An item or rater id as read: stripped text (CSV), or the JSON value (lists and objects
    as their JSON text, so they stay hashable)."""
    if jsonl:
        return value if not isinstance(value, (list, dict)) else json.dumps(value)
    return value.strip() if isinstance(value, str) else value


def parse_categories(
    spec: str | None, present: list[Any], source: str | None = None
) -> list[Any] | None:
    """A category set given as text (``--categories 1,2``), typed like the labels ``present``
    in a table (numbers when they are all numbers, as :func:`coerce_numbers` reads them).

    Raises:
        InputError: an empty or repeated category, a non-number for numeric labels, or a label
            of the table (read from ``source``) that is not among them.
    """
    if spec is None:
        return None
    names = [c.strip() for c in spec.split(",")]
    if "" in names or len(set(names)) != len(names):
        raise InputError(
            None, f"{spec!r}: give distinct, non-empty categories", field="--categories"
        )
    numeric = bool(present) and all(
        isinstance(c, (int, float)) and not isinstance(c, bool) for c in present
    )
    cats = coerce_numbers(names) if numeric else names
    if numeric and cats is names:
        raise InputError(None, f"{spec!r}: the labels are numbers, so are the categories",
                         field="--categories")  # fmt: skip
    missing = [str(c) for c in present if c not in cats]
    if missing:
        raise InputError(source, f"labels not in --categories {spec}: {', '.join(missing)}",
                         field="label")  # fmt: skip
    return list(cats)
