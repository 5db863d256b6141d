"""Reading a run directory for the viewer: every file ``judgekit view`` looks at, in one place.

A run directory (``judgekit run`` / ``judgekit audit`` output) holds ``records.jsonl`` (one JSON
record per LLM call, append-only), ``summary.json``, usually ``labels.csv`` (``item,rater,label``)
and PNG figures, plus pipeline files the detail pane uses (``items.jsonl``, the judged items of
classify, pairwise and errors; ``segments.jsonl`` of the errors pipeline, ``verdicts.csv`` of
pairwise, ``localised.jsonl`` of localise, ``annotations.jsonl`` of the CS/CA audit).

Records are read by :func:`judgekit.record_file.read_record_lines`, which follows
:class:`judgekit.runlog.RunLog`: the last line of a key wins (a resumed run may
record a task again with ``--retry-errors``), a last line cut short by a crash (no newline) is
dropped and counted, and any other line that is not a record is an
:class:`~judgekit.errors.InputError` naming the file and line.

Everything returned is plain, JSON-ready Python (dicts, lists, strings, numbers, bytes for
figures), so this module can later sit on ``judgekit.load_run`` without the page changing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

from judgekit.errors import InputError
from judgekit.record_file import read_record_lines

# pipeline files whose rows the detail pane shows (JSONL, or a CSV read by the one table reader)
SIDE_FILES = ("items.jsonl", "segments.jsonl", "verdicts.csv", "localised.jsonl",
              "annotations.jsonl")  # fmt: skip


@dataclass
class RunData:
    """One run directory as the viewer reads it.

    Attributes:
        path: the directory. name: its display name (the directory name).
        summary: ``summary.json`` as a dict ({} if absent: a run cut before its report).
        records: the current record of every key (dicts with the Record fields), in the file
            order of their last line.
        cut_lines: 1 when a last line cut short by a crash was dropped, else 0.
        replaced: lines superseded by a later line of the same key.
        labels: ``labels.csv`` as ``(item, rater, label)`` text triples, or None if absent.
        figures: PNG name -> bytes, for every ``*.png`` in the directory (sorted by name).
        notes: markdown name -> text, for every ``*.md`` in the directory.
        side: pipeline file name -> its rows (see ``SIDE_FILES``), for those present.
        files: every file read (the report must not be written over one of them).
    """

    path: Path
    name: str
    summary: dict[str, Any]
    records: list[dict[str, Any]]
    cut_lines: int = 0
    replaced: int = 0
    labels: list[tuple[str, str, str]] | None = None
    figures: dict[str, bytes] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    side: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)

    @property
    def pipeline(self) -> str:
        """The pipeline name from the summary's signature ("" when unknown)."""
        return str((self.summary.get("signature") or {}).get("pipeline") or "")


def read_records(path: Path) -> tuple[list[dict[str, Any]], int, int]:
    """(current records, cut last lines dropped, lines replaced by a later one) of a
    records.jsonl, read by the one reader of that file,
    :func:`judgekit.record_file.read_record_lines`.

    Raises:
        InputError: a complete line is not a JSON record with a ``key`` and a ``status`` of
            ok / unscored / error, or a field of it does not have the type of
            :class:`judgekit.runlog.Record` (names the file, line and field).
    """
    read = read_record_lines(path)
    return read.records, read.cut, read.replaced


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(path, f"not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(path, "expected a JSON object")
    return data


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 ({exc.reason} at byte {exc.start})") from None


def _read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a side file: JSON objects of a JSONL file, or a CSV's rows as text."""
    if path.suffix == ".csv":
        from judgekit.data.tables import read_table

        return [row for _, row in read_table(path).rows]
    from judgekit.data import jsonl_objects

    return [row for _, row in jsonl_objects(path)]


def _read_labels(path: Path) -> list[tuple[str, str, str]]:
    """The ``item,rater,label`` rows of a run's labels.csv with a label (the one table reader,
    :func:`judgekit.data.tables.read_table`; a run writes each (item, rater) once), in the
    label vocabulary's text form (:mod:`judgekit.data.vocabulary`: NFC ids and names,
    ``TRUE`` as ``true``, ``1.0`` as ``1``; missing markers left out)."""
    from judgekit.data.tables import read_table
    from judgekit.data.vocabulary import canonical_id, label_text

    table = read_table(path)
    for column in ("item", "rater", "label"):
        if column not in table.columns:
            raise InputError(path, f"missing column '{column}'", line=1, field=column)
    cells = list(map(itemgetter("item", "rater", "label"), (row for _, row in table.rows)))
    items, raters, labels = zip(*cells, strict=True) if cells else ((), (), ())
    ids = {v: canonical_id(v) for v in {*items, *raters}}  # once a distinct id or name
    texts = {v: label_text(v) for v in set(labels)}  # once a distinct label
    found = zip(map(ids.__getitem__, items), map(ids.__getitem__, raters),
                map(texts.__getitem__, labels), strict=True)  # fmt: skip
    return [row for row in found if None not in row]


def read_run(path: str | Path) -> RunData:
    """Read the run directory ``path`` (see the module doc).

    Raises:
        InputError: ``path`` is not a directory with a records.jsonl, or one of its files is
            malformed (named with its line).
    """
    path = Path(path)
    records_path = path / "records.jsonl"
    if not path.is_dir():
        what = "a file" if path.exists() else "no such directory"
        raise InputError(path, f"not a run directory ({what})")
    if not records_path.is_file():
        raise InputError(path, "not a run directory: no records.jsonl in it")
    records, cut, replaced = read_records(records_path)
    summary_path = path / "summary.json"
    summary = _read_json(summary_path) if summary_path.is_file() else {}
    for part in ("signature", "usage"):  # the parts the page reads fields of
        if not isinstance(summary.get(part) or {}, dict):
            raise InputError(summary_path, f"'{part}' must be an object", field=part)
    labels_path = path / "labels.csv"
    run = RunData(
        path=path,
        name=path.resolve().name,
        summary=summary,
        records=records,
        cut_lines=cut,
        replaced=replaced,
        labels=_read_labels(labels_path) if labels_path.is_file() else None,
    )
    run.figures = {p.name: p.read_bytes() for p in sorted(path.glob("*.png"))}
    run.notes = {p.name: _read_text(p) for p in sorted(path.glob("*.md"))}
    for name in SIDE_FILES:
        if (path / name).is_file():
            run.side[name] = _read_rows(path / name)
    run.files = [records_path, summary_path, labels_path, *(path / n for n in run.side)]
    run.files += [path / n for n in (*run.figures, *run.notes)]
    return run
