"""An audited item file split by its CS/CA labels (paper 001, §5: the CS and CA subsets are
reported apart): the items with the audit's columns added, and the CS, CA and unlabelled
subsets, each in the item file's own format. ``judgekit audit split`` writes what
:func:`split_items` returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.calibration.cultural import read_annotations
from judgekit.data.items import ItemFile, load_items
from judgekit.data.tables import write_table
from judgekit.errors import InputError

PREFIX = "audit_"
COLUMNS = ("cs_label", "required_knowledge", "time_sensitive", "subject_category", "evidence",
           "rationale", "status")  # fmt: skip


@dataclass
class AuditSplit:
    """The rows of each part (``annotated``, ``CS``, ``CA``, ``unlabelled`` when any item has
    no CS/CA label), the columns to write and the item file's format and stem."""

    parts: dict[str, list[dict[str, Any]]]
    columns: list[str]
    format: str
    stem: str

    def write(self, folder: Path) -> list[tuple[Path, int]]:
        """Write ``<stem>.<part>.<format>`` for each part into ``folder``; (path, rows) each.

        Raises:
            OutputError: a file cannot be written (the previous version stays in place).
        """
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for name, rows in self.parts.items():
            path = folder / f"{self.stem}.{name}.{self.format}"
            write_table(path, rows, self.columns, self.format)  # type: ignore[arg-type]
            written.append((path, len(rows)))
        return written


def _plain(value: Any) -> Any:
    """A cell as JSON-ready Python: NaN -> None."""
    if isinstance(value, float) and value != value:
        return None
    return value


def annotation_index(path: Path) -> pd.DataFrame:
    """The audit's annotations (a run directory or its ``annotations.jsonl``), one row each.

    Raises:
        InputError: no annotations there, or a file without the audit's columns.
    """
    if path.is_dir():
        path = path / "annotations.jsonl"
    if not path.is_file():
        raise InputError(path, "no annotations (a run directory or its annotations.jsonl)")
    frame = read_annotations(path)
    missing = {"benchmark", "id", "language", *COLUMNS} - set(frame.columns)
    if missing:
        raise InputError(path, f"not an audit annotations file: missing {sorted(missing)}")
    return frame


def _match(items: ItemFile, annotations: pd.DataFrame, path: Path) -> pd.DataFrame:
    """The annotation row of each item, indexed by id: the rows of the item file's benchmark,
    else (a renamed file) the rows matched by id alone, or by (id, language)."""
    same = annotations[annotations["benchmark"] == items.benchmark]
    if same.empty and not annotations["id"].duplicated().any():
        same = annotations
    if same.empty:
        languages = {it.language for it in items.items}
        same = annotations[annotations["language"].isin(languages)]
        if same["id"].duplicated().any():
            raise InputError(path, "ambiguous annotations: several benchmarks share these ids")
    return same.drop_duplicates("id").set_index("id")


def split_items(
    items: Path, annotations: Path, language: str | None = None, prefix: str = PREFIX
) -> AuditSplit:
    """``items`` with ``<prefix><column>`` added from the audit's annotations, split by CS/CA.

    Items without an annotation keep empty audit columns and go to ``unlabelled``.

    Raises:
        InputError: a bad item file, no annotations, or annotations that match ambiguously.
    """
    loaded = load_items(items, language=language or "und")
    table = _match(loaded, annotation_index(annotations), annotations)
    added = [f"{prefix}{c}" for c in COLUMNS]
    columns = [*loaded.columns, *[c for c in added if c not in loaded.columns]]
    parts: dict[str, list[dict[str, Any]]] = {"annotated": [], "CS": [], "CA": []}
    for item, row in zip(loaded.items, loaded.rows, strict=True):
        found = table.loc[item.id] if item.id in table.index else None
        values = {f"{prefix}{c}": None if found is None else _plain(found[c]) for c in COLUMNS}
        full = {**row, **values}
        parts["annotated"].append(full)
        label = values[f"{prefix}cs_label"]
        parts.setdefault(label if label in ("CS", "CA") else "unlabelled", []).append(full)
    return AuditSplit(parts, columns, loaded.format, loaded.path.name.split(".")[0])
