"""The one reader of tabular input files: CSV, TSV and JSONL, each row with its line number.

Item files, label files and the localisation inputs all come through :func:`read_table`, so a
bad file is reported the same way everywhere: one :class:`~judgekit.errors.InputError` naming
the file, the line and, where it applies, the field. CSV and TSV are read as ``utf-8-sig`` (a
byte-order mark, as spreadsheet programs write, is not part of the first column's name), the
header's names are stripped and must be distinct, blank rows are skipped and every other row
must have the header's number of fields. JSONL is one object a line
(:func:`judgekit.data.jsonl_objects`); its columns are every key seen, in order of appearance.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from judgekit.data import jsonl_objects
from judgekit.data.atomic import open_output
from judgekit.errors import InputError

Format = Literal["jsonl", "csv", "tsv"]
SUFFIXES: dict[str, Format] = {
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "tsv", ".tab": "tsv",
}  # fmt: skip
NOT_TABLES = (".json", ".yaml", ".yml", ".xlsx", ".xls", ".ods", ".parquet")  # never read as CSV


@dataclass(frozen=True)
class Table:
    """A file's rows: ``format``, ``columns`` in file order, and ``rows`` as
    ``(1-based line, {column: value})``; CSV/TSV values are text as written, JSONL values keep
    their JSON types."""

    path: Path
    format: Format
    columns: list[str]
    rows: list[tuple[int, dict[str, Any]]]


def table_format(path: Path, what: str = "table files", default: Format | None = None) -> Format:
    """``jsonl`` (``.jsonl``, ``.ndjson``), ``csv`` or ``tsv`` (``.tsv``, ``.tab``); ``default``
    for another suffix, where given.

    Raises:
        InputError: another suffix and no default (``what`` names the kind of file), or a
            suffix of another format (``.json``, ``.yaml``, a spreadsheet), default or not.
    """
    if path.suffix.lower() in NOT_TABLES:
        raise InputError(
            path,
            f"{what} are .jsonl, .csv or .tsv, not {path.suffix} (a JSON array or YAML list: "
            "one object a line as .jsonl; a spreadsheet: save it as CSV)",
        )
    found = SUFFIXES.get(path.suffix.lower(), default)
    if found is None:
        raise InputError(path, f"{what} are .jsonl, .csv or .tsv")
    return found


def read_table(
    path: str | Path,
    *,
    what: str = "table files",
    default: Format | None = None,
    tsv_quotes: bool = True,
) -> Table:
    """Read a CSV, TSV or JSONL file (the format from its suffix; see the module doc).

    Args:
        path: the file.
        what: the kind of file, for the message about an unknown suffix.
        default: the format of a file with another suffix (None: such a file is an error).
        tsv_quotes: read ``"`` in TSV as CSV quoting (False: as a character of the text, for
            files of sentences that quote).

    Raises:
        InputError: the file is missing, has another suffix, no header, a duplicate column, a
            row with the wrong number of fields, invalid JSON or a line that is not an object.
    """
    path = Path(path)
    fmt = table_format(path, what, default)
    if path.is_dir() or not path.is_file():
        raise InputError(
            path, "is a directory, expected a file" if path.is_dir() else "no such file"
        )
    if fmt == "jsonl":
        columns: dict[str, None] = {}
        rows = []
        for number, row in jsonl_objects(path):
            columns.update(dict.fromkeys(row))
            rows.append((number, row))
        return Table(path, fmt, list(columns), rows)
    return _read_delimited(path, fmt, tsv_quotes)


def _read_delimited(path: Path, fmt: Format, tsv_quotes: bool) -> Table:
    options: dict[str, Any] = {"delimiter": "\t" if fmt == "tsv" else ","}
    if fmt == "tsv" and not tsv_quotes:
        options["quoting"] = csv.QUOTE_NONE
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle, **options)
        try:
            header = next(reader, None)
            if not header:
                raise InputError(path, "empty file: expected a header row", line=1)
            header = [h.strip() for h in header]
            dup = next((h for h in header if header.count(h) > 1), None)
            if dup is not None:
                raise InputError(path, f"duplicate column '{dup}'", line=1, field=dup)
            rows = []
            start = reader.line_num + 1  # a quoted field may span lines: a row's first line
            for values in reader:
                line, start = start, reader.line_num + 1
                if not any(v.strip() for v in values):
                    continue
                if len(values) != len(header):
                    raise InputError(
                        path, f"expected {len(header)} fields, found {len(values)}", line=line
                    )
                rows.append((line, dict(zip(header, values, strict=True))))
        except UnicodeDecodeError as exc:
            raise InputError(path, f"not UTF-8 ({exc.reason})", line=reader.line_num + 1) from None
        except csv.Error as exc:
            raise InputError(path, f"not {fmt.upper()} ({exc})", line=reader.line_num) from None
    return Table(path, fmt, header, rows)


def write_table(path: Path, rows: list[dict[str, Any]], columns: list[str], fmt: Format) -> None:
    """Write ``rows`` as :func:`read_table` reads them back: JSONL (one object a line, UTF-8) or
    CSV/TSV (a header of ``columns``, then the cells in that order; lists and dicts as JSON
    text). The file is replaced atomically (:func:`judgekit.data.atomic.open_output`).

    Raises:
        OSError: the file cannot be written (the previous version stays in place).
    """
    if fmt == "jsonl":
        with open_output(path) as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        return
    with open_output(path, newline="") as fh:
        writer = csv.writer(fh, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            cells = [row.get(c) for c in columns]
            writer.writerow(
                [
                    json.dumps(v, ensure_ascii=False) if isinstance(v, list | dict) else v
                    for v in cells
                ]
            )
