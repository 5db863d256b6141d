"""Label tables: items x raters, where a rater is a human annotator or an LLM judge.

A :class:`LabelTable` wraps a pandas DataFrame indexed by item (index name ``item``) with one
column per rater (columns name ``rater``). Cells hold any hashable category (a string, an int,
a bool) or a missing value (None or NaN). Loaders read the two usual layouts:

* long: one rating per row, columns ``item,rater,label`` (what a judgekit run writes to
  ``<run dir>/labels.csv``); extra columns are ignored;
* wide: one item per row, an ``item`` column and one column per rater.

from CSV, TSV (by the ``.tsv`` suffix) or JSONL (the readers are in
:mod:`judgekit.labels.files`), and report bad input as one :class:`~judgekit.errors.InputError`
naming file, line and field. :func:`as_label_table` accepts the other usual shapes (DataFrame,
2-D array, list of rows) wherever a table is expected.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgekit.data.atomic import write_frame
from judgekit.data.tables import read_table
from judgekit.data.vocabulary import (
    AllowedLabels,
    NumberOverflow,
    all_numeric,
    canonical_id,
    canonical_labels,
    is_missing_label,
    label_text,
    missing_cells,
)
from judgekit.errors import InputError, JudgekitError
from judgekit.labels.files import declared_order, is_jsonl, resolve_labels_path

LabelFormat = Literal["auto", "long", "wide"]
LONG_COLUMNS = ("item", "rater", "label")


def is_missing(value: Any) -> bool:
    """True for a missing rating: None, NaN (pandas' NA too) and the missing markers "", "NA",
    "N/A", "nan", "null" (:func:`judgekit.data.vocabulary.is_missing_label`, the one rule)."""
    return is_missing_label(value)


def _sort_categories(values: Iterable[Hashable]) -> list[Hashable]:
    unique = list(dict.fromkeys(values))
    try:
        return sorted(unique)
    except TypeError:
        return sorted(unique, key=lambda v: (type(v).__name__, str(v)))


@dataclass(frozen=True)
class LabelTable:
    """An items x raters table of categorical (or numeric) labels with missing cells.

    Attributes:
        frame: DataFrame, shape (n_items, n_raters), index = item ids (unique), columns =
            rater names (unique), object cells; None marks a missing rating (NaN, "", "NA",
            "N/A", "nan" and "null", any case, are read as None:
            :func:`judgekit.data.vocabulary.is_missing_label`).
        source: the file the table was read from, for messages (None when built in memory).
        order: the category order the source declares (a run directory's config ``labels:``
            list, in the label vocabulary), read by the statistics that need an order
            (:func:`judgekit.metrics.label_codes.encode`); None where it declares none.
    """

    frame: pd.DataFrame
    source: str | None = None
    order: tuple[Hashable, ...] | None = None

    def __post_init__(self) -> None:
        frame = self.frame
        if not frame.index.is_unique:
            raise InputError(self.source, "item ids must be unique", field="item")
        if not frame.columns.is_unique:
            raise InputError(self.source, "rater names must be unique", field="rater")
        frame = frame.astype(object)
        missing = missing_cells(frame)  # "", "NA", "N/A", "null", NaN...: one rule
        frame = frame.where(~missing, None)
        frame.index.name, frame.columns.name = "item", "rater"
        object.__setattr__(self, "frame", frame)

    # -- views ------------------------------------------------------------------------------
    @property
    def items(self) -> list[Hashable]:
        return list(self.frame.index)

    @property
    def raters(self) -> list[Hashable]:
        return list(self.frame.columns)

    @property
    def n_items(self) -> int:
        return self.frame.shape[0]

    @property
    def n_raters(self) -> int:
        return self.frame.shape[1]

    @property
    def values(self) -> np.ndarray:
        """Object array, shape (n_items, n_raters); None marks a missing rating."""
        return self.frame.to_numpy(dtype=object)

    @property
    def categories(self) -> list[Hashable]:
        """Distinct labels present, sorted (by type name, then text, when types are mixed)."""
        distinct = dict.fromkeys(self.values.ravel().tolist())  # the rule once per label
        return _sort_categories(v for v in distinct if not is_missing(v))

    def ratings_per_item(self) -> pd.Series:
        """Number of non-missing ratings of each item (int Series indexed by item)."""
        return self.frame.notna().sum(axis=1)

    def column(self, rater: Hashable) -> pd.Series:
        """The labels of one rater (Series indexed by item; None where missing)."""
        if rater not in self.frame.columns:
            raise InputError(self.source, f"no rater '{rater}' (raters: {_names(self.raters)})")
        return self.frame[rater]

    def select(self, raters: Sequence[Hashable]) -> LabelTable:
        """A table with only ``raters`` (in that order)."""
        for rater in raters:
            self.column(rater)
        return LabelTable(self.frame[list(raters)], self.source, self.order)

    def drop(self, raters: Sequence[Hashable]) -> LabelTable:
        """A table without ``raters``."""
        return self.select([r for r in self.raters if r not in set(raters)])

    def dropna_items(self, min_ratings: int = 1) -> LabelTable:
        """A table without the items that have fewer than ``min_ratings`` ratings."""
        keep = self.ratings_per_item() >= min_ratings
        return LabelTable(self.frame[keep], self.source, self.order)

    def to_long(self) -> pd.DataFrame:
        """Long DataFrame with columns item, rater, label; missing ratings are left out."""
        long = self.frame.stack(future_stack=True).rename("label").reset_index()
        return long[long["label"].notna()].reset_index(drop=True)

    def write_csv(self, path: str | Path) -> None:
        """Write the table in long format (``item,rater,label``), the run-directory layout."""
        write_frame(self.to_long(), path, index=False)

    # -- constructors -------------------------------------------------------------------------
    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        *,
        item_column: str | None = None,
        allowed: Iterable[Hashable] | None = None,
        source: str | None = None,
    ) -> LabelTable:
        """Build from a wide DataFrame: index = items (or ``item_column``), one column per rater.

        Raises:
            InputError: duplicate items, a missing ``item_column`` or a label outside ``allowed``.
        """
        if item_column is not None:
            if item_column not in frame.columns:
                raise InputError(source, f"missing column '{item_column}'", field=item_column)
            frame = frame.set_index(item_column)
        duplicated = frame.index.duplicated()
        if duplicated.any():
            item = frame.index[duplicated][0]
            raise InputError(source, f"duplicate item '{item}'", field=item_column or "item")
        table = cls(frame.copy(), source)
        if allowed is not None:
            check = AllowedLabels(allowed)
            for rater in table.raters:
                for item, label in table.frame[rater].items():
                    if not is_missing(label) and not check(label):
                        raise InputError(
                            source,
                            f"unknown label '{label}' for item '{item}' ({check.describe()})",
                            field=str(rater),
                        )
        return table

    @classmethod
    def from_rows(
        cls,
        rows: Iterable[Sequence[Any] | Mapping[str, Any]],
        *,
        allowed: Iterable[Hashable] | None = None,
        source: str | None = None,
    ) -> LabelTable:
        """Build from long records: ``(item, rater, label)`` tuples or mappings with those keys.

        Raises:
            InputError: a duplicate (item, rater) pair, a record without the three fields, or a
                label outside ``allowed``; ``line`` is the 1-based record number.
        """
        records = []
        for number, row in enumerate(rows, start=1):
            if isinstance(row, Mapping):
                absent = [k for k in LONG_COLUMNS if k not in row]
                if absent:
                    raise InputError(source, f"missing key '{absent[0]}'", line=number)
                item, rater, label = (row[k] for k in LONG_COLUMNS)
            else:
                if len(row) != 3:
                    raise InputError(source, "expected (item, rater, label)", line=number)
                item, rater, label = row
            records.append((number, item, rater, label))
        try:
            labels = canonical_labels(r[3] for r in records)
        except NumberOverflow as exc:
            raise InputError(source, str(exc), line=records[exc.index][0], field="label") from None
        records = [(n, i, r, label) for (n, i, r, _), label in zip(records, labels, strict=True)]
        return _from_long_records(records, source, allowed)


LabelData = LabelTable | pd.DataFrame | np.ndarray | Sequence[Sequence[Any]]


def as_label_table(data: LabelData) -> LabelTable:
    """Coerce an items x raters table to a :class:`LabelTable`.

    Args:
        data: a LabelTable (returned as is), a DataFrame (index = items, one column per rater),
            a 2-D array or a list of rows; None or NaN marks a missing rating.

    Raises:
        JudgekitError: an array that is not 2-D.
    """
    if isinstance(data, LabelTable):
        return data
    if isinstance(data, pd.DataFrame):
        return LabelTable(data.copy())
    if isinstance(data, np.ndarray) and data.ndim != 2:
        raise JudgekitError(f"expected an items x raters table, got shape {data.shape}")
    return LabelTable(pd.DataFrame(list(data)))


def _names(values: Iterable[Any]) -> str:
    return ", ".join(str(v) for v in values)


def _check_scalar(label: Any, path: str | None, line: int, field: str) -> None:
    if isinstance(label, (list, dict, set, tuple)):
        raise InputError(
            path, f"label must be a single value, got {label!r}", line=line, field=field
        )


def _from_long_records(
    records: Iterable[tuple[int, Any, Any, Any]],
    path: str | None,
    allowed: Iterable[Hashable] | None,
    wide: bool = False,
) -> LabelTable:
    check = AllowedLabels(allowed) if allowed is not None else None
    cells: dict[tuple[Any, Any], Any] = {}
    seen: dict[tuple[Any, Any], int] = {}
    items: dict[Any, None] = {}
    raters: dict[Any, None] = {}
    for line, item, rater, label in records:
        item, rater = canonical_id(item), canonical_id(rater)
        for name, value in (("item", item), ("rater", rater)):
            if value is None:
                raise InputError(path, f"empty {name}", line=line, field=name)
        _check_scalar(label, path, line, "label")
        key = (item, rater)
        if key in seen:
            raise InputError(
                path,
                f"duplicate rating of item '{item}' by rater '{rater}' (first on line {seen[key]})",
                line=line,
                field="rater",
            )
        if check is not None and not is_missing(label) and not check(label):
            field = str(rater) if wide else "label"
            raise InputError(
                path, f"unknown label '{label}' ({check.describe()})", line=line, field=field
            )
        seen[key] = line
        cells[key] = None if is_missing(label) else label
        items.setdefault(item)
        raters.setdefault(rater)
    row = {item: k for k, item in enumerate(items)}
    col = {rater: k for k, rater in enumerate(raters)}
    values = np.full((len(row), len(col)), None, dtype=object)
    for (item, rater), label in cells.items():  # one numpy store a cell, no pandas .at
        values[row[item], col[rater]] = label
    frame = pd.DataFrame(values, index=list(items), columns=list(raters), dtype=object)
    return LabelTable(frame, path)


def load_labels(
    path: str | Path,
    *,
    format: LabelFormat = "auto",
    allowed: Iterable[Hashable] | None = None,
    item_column: str = "item",
    numeric: bool | None = None,
) -> LabelTable:
    """Read a label table from a CSV/TSV/JSONL file or a judgekit run directory.

    Every id, rater name and label is read in judgekit's label vocabulary
    (:mod:`judgekit.data.vocabulary`): ids and names as NFC text; ``TRUE``/``true``/JSON
    ``true`` as ``"true"``; ``1``, ``1.0`` and ``"1"`` as one label; the empty cell, ``NA``,
    ``N/A``, ``NaN``, ``null`` and JSON null as missing, in CSV and JSONL alike.

    Args:
        path: a file, or a run directory (its ``labels.csv`` is read).
        format: "long" (``item,rater,label`` rows), "wide" (``item`` + one column per rater), or
            "auto": long when the columns include item, rater and label, wide otherwise.
        allowed: the allowed labels; any other non-missing label is an error.
        item_column: name of the item column in the wide layout.
        numeric: None (default): numbers when every label is a number (or numeric text), text
            otherwise; True: numbers (an error when a label is not one); False: the file's
            labels are text, numeric text kept as written (``"1.0"`` stays ``"1.0"``).

    Missing ratings: as above, or (in wide JSONL) an absent key. The text "none" is a label,
    not a missing value.

    Raises:
        InputError: missing file or column, malformed row, duplicate (item, rater) pair,
            unknown label; the message names file, line and field.
    """
    path = resolve_labels_path(path)
    jsonl = is_jsonl(path)
    table = read_table(path, default="csv")
    header, rows = table.columns, table.rows
    if format == "auto":
        format = "long" if all(c in header for c in LONG_COLUMNS) else "wide"
    if format not in ("long", "wide"):
        raise InputError(None, f"unknown label format '{format}' (use long, wide or auto)")
    key_columns = LONG_COLUMNS if format == "long" else (item_column,)
    for column in key_columns:
        if column not in header and (rows or not jsonl):
            raise InputError(
                path, f"missing column '{column}' (found: {_names(header)})", line=1, field=column
            )
    if format == "long":
        raw = [r.get("label") for _, r in rows]
    else:
        raters = [canonical_id(c) or c for c in header if c != item_column]
        columns = [c for c in header if c != item_column]
        raw = [r.get(column) for _, r in rows for column in columns]
    try:
        labels = canonical_labels(raw, numeric)
    except NumberOverflow as exc:
        if format == "long":
            line, field = rows[exc.index][0], "label"
        else:
            line, field = rows[exc.index // len(columns)][0], columns[exc.index % len(columns)]
        raise InputError(path, str(exc), line=line, field=field) from None
    if numeric is True and not all_numeric(labels) and any(v is not None for v in labels):
        raise InputError(path, "labels are not all numeric", field="label")
    if format == "long":
        records = [
            (line, canonical_id(r["item"]), canonical_id(r["rater"]), label)
            for (line, r), label in zip(rows, labels, strict=True)
        ]
    else:
        records = _wide_records(path, rows, labels, raters, item_column)
    table = _from_long_records(records, str(path), allowed, wide=format == "wide")
    order = declared_order(path.parent)  # a run's config labels: kept where they hold all
    if order and set(map(label_text, table.categories)) <= set(map(label_text, order)):
        table = replace(table, order=order)
    return table


def _wide_records(
    path: Path, rows: list, labels: list, raters: list, item_column: str
) -> list[tuple[int, Any, Any, Any]]:
    """(line, item, rater, label) of a wide table's rows; a repeated item id is refused."""
    first_line: dict[Any, int] = {}
    for line, r in rows:
        item = canonical_id(r.get(item_column))
        if item is not None and item in first_line:
            raise InputError(path, f"duplicate item '{item}' (first on line {first_line[item]})",
                             line=line, field=item_column)  # fmt: skip
        first_line[item] = line
    it = iter(labels)
    return [(line, canonical_id(r.get(item_column)), rater, next(it))
            for line, r in rows for rater in raters]  # fmt: skip
