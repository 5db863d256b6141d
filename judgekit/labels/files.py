"""Reading label files: CSV, TSV and JSONL rows with their line numbers, and run directories.

The readers only turn a file into ``(line, {column: value})`` rows and report malformed input
as one :class:`~judgekit.errors.InputError` naming file, line and field; building the items x
raters table from those rows is :func:`judgekit.labels.table.load_labels`' job.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from pathlib import Path
from typing import Any

from judgekit.data.tables import table_format
from judgekit.data.vocabulary import NumberOverflow, all_numeric, canonical_labels, label_text
from judgekit.errors import InputError

RUN_LABELS_FILE = "labels.csv"
Rows = list[tuple[int, dict[str, Any]]]


def resolve_labels_path(path: str | Path) -> Path:
    """``path`` itself for a file, ``path/labels.csv`` for a judgekit run directory.

    Raises:
        InputError: the path does not exist, or a directory holds no labels.csv (for an
            ``errors`` run, the message points to ``judgekit calibrate errors``).
    """
    path = Path(path)
    if path.is_dir():
        if not (path / RUN_LABELS_FILE).is_file() and (path / "segments.jsonl").is_file():
            raise InputError(
                path,
                f"an errors run: no {RUN_LABELS_FILE}, its judgments are MQM error spans; "
                f"calibrate it with `judgekit calibrate errors {path} HUMAN_MQM.tsv` (human "
                "MQM, e.g. the human_mqm.tsv of `judgekit review import`), or estimate its "
                "MQM with `judgekit calibrate estimate --target mean`",
            )
        path = path / RUN_LABELS_FILE
        if not path.is_file():
            raise InputError(path.parent, f"not a run directory: no {RUN_LABELS_FILE} in it")
    elif not path.is_file():
        raise InputError(path, "no such file or directory")
    return path


def is_jsonl(path: Path) -> bool:
    """True for ``.jsonl`` / ``.ndjson`` files (one JSON object per line)."""
    return table_format(path, default="csv") == "jsonl"


def parse_categories(
    spec: str | None, present: list[Any], source: str | None = None
) -> list[Any] | None:
    """A category set given as text (``--categories 1,2``), typed like the labels ``present``
    in a table (numbers when they are all numbers), in the label vocabulary
    (:mod:`judgekit.data.vocabulary`).

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
    numeric = all_numeric(present)
    try:
        cats = canonical_labels(names, numeric=bool(numeric))
    except NumberOverflow as exc:
        raise InputError(None, f"{spec!r}: {exc}", field="--categories") from None
    if numeric and not all_numeric(cats):
        raise InputError(None, f"{spec!r}: the labels are numbers, so are the categories",
                         field="--categories")  # fmt: skip
    shown = {label_text(c) for c in cats}
    missing = [str(c) for c in present if label_text(c) not in shown]
    if missing:
        raise InputError(source, f"labels not in --categories {spec}: {', '.join(missing)}",
                         field="label")  # fmt: skip
    return list(cats)


def declared_order(run_dir: str | Path) -> tuple[Hashable, ...] | None:
    """The label list a run directory's config declared (``summary.json``'s signature
    ``labels``, the config's order), in the label vocabulary; None for a folder that is no
    run, or a run whose pipeline declares no label list."""
    summary = Path(run_dir) / "summary.json"
    if not summary.is_file():
        return None
    try:
        labels = json.loads(summary.read_text(encoding="utf-8")).get("signature", {}).get("labels")
    except (OSError, ValueError, AttributeError):
        return None  # the labels file is the source; a damaged summary declares nothing
    if not isinstance(labels, list) or not labels:
        return None
    return tuple(canonical_labels(labels, None))
