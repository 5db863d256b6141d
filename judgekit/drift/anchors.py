"""The anchor set: a frozen list of items with human labels, stored with its hash, and the
judge's answers on it.

An anchor file is a CSV, TSV or JSONL table with columns ``item`` (unique id), ``human`` (the
human label or score; for a judge-vs-judge check, the judge's own earlier answer) and optionally
``language`` (one spelling per language: ``DE`` is ``de``, :mod:`judgekit.data.languages`).
:func:`freeze_anchors` writes ``ANCHORS.sha256`` beside it; :func:`load_anchors`
refuses a file whose bytes no longer match (a changed anchor set cannot be compared with its old
baseline). An answers file has columns ``item`` and ``answer`` (one judge run on the anchors).

For ``--kind score`` the ``human`` and ``answer`` cells are read as numbers here, where their
lines are known: a cell that is neither a finite number in plain decimal notation nor a missing
marker (empty, ``NA``, ``nan``, ``null``: :mod:`judgekit.data.vocabulary`) is refused naming the
file, line and field (``10**400``, ``inf``, ``high``); a missing one is counted by
:func:`judgekit.drift.run.drift_compare` and said, never dropped in silence.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgekit.data.atomic import write_text
from judgekit.data.languages import LANGUAGE_FIELDS, check_item_languages, language_value
from judgekit.data.tables import read_table
from judgekit.data.vocabulary import is_missing_label, number_from_text, overflows
from judgekit.errors import InputError
from judgekit.signature import file_hash


def hash_path(anchors: Path) -> Path:
    """Where the anchor file's hash is kept: ``ANCHORS.sha256`` beside it."""
    return anchors.with_name(anchors.name + ".sha256")


def _score(value: object, path: Path, line: int, field: str) -> float | None:
    """A score cell as a float (None for a missing marker).

    Raises:
        InputError: a value that is not a finite number (file, line, field).
    """
    if value is None or is_missing_label(value):
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = None if overflows(value) else float(value)
    else:
        number = number_from_text(str(value)) if not overflows(str(value)) else None
    if number is None or number != number or abs(number) == float("inf"):
        shown = str(value) if len(str(value)) <= 24 else str(value)[:20] + "..."
        raise InputError(path, f"score {shown!r} is not a finite number (--kind score)",
                         line=line, field=field)  # fmt: skip
    return float(number)


def freeze_anchors(anchors: str | Path) -> str:
    """Check an anchor file (:func:`read_rows`) and write its SHA-256 beside it; returns the
    hash (64 hex digits). Raises InputError on a bad file."""
    path = Path(anchors)
    _read(path, ("item", "human"), "anchor")
    digest = file_hash(path) or ""
    write_text(hash_path(path), digest + "\n")
    return digest


def _languages(item: str, row: dict, path: Path, line: int) -> dict[str, str]:
    """The row's ``language``/``lang`` in their canonical spelling (:mod:`judgekit.data.
    languages`: ``DE`` is ``de``); empty ones are left as they are. Raises InputError on a value
    that is not a language or on two that disagree (line, field)."""
    values = {f: language_value(row[f], path=path, line=line, field=f)
              for f in LANGUAGE_FIELDS if f in row}  # fmt: skip
    check_item_languages(item, values, path=path, line=line)
    return {f: v for f, v in values.items() if v is not None}


def _read(path: Path, needed: tuple[str, ...], what: str, score: str | None = None) -> pd.DataFrame:
    """The rows of an anchor or answers file (``score``: the column read as numbers, if any).

    Raises:
        InputError: a missing column, no row, an empty or repeated item id, a bad score (line,
            field).
    """
    table = read_table(path, what=f"{what} files")
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise InputError(path, f"{what} file needs the column(s) {', '.join(missing)}")
    seen: dict[str, int] = {}
    rows = []
    for line, row in table.rows:
        item = str(row.get("item", "")).strip()
        if not item:
            raise InputError(path, "empty item id", line=line, field="item")
        if item in seen:
            raise InputError(path, f"item {item!r} repeats line {seen[item]}", line=line,
                             field="item")  # fmt: skip
        seen[item] = line
        if score is not None:
            row = {**row, score: _score(row.get(score), path, line, score)}
        rows.append({**row, **_languages(item, row, path, line), "item": item})
    if not rows:
        raise InputError(path, f"no {what} rows (the file has a header only)", line=1,
                         field="item")  # fmt: skip
    return pd.DataFrame(rows, columns=list(table.columns))


def load_anchors(anchors: str | Path, kind: str = "label") -> tuple[pd.DataFrame, str]:
    """The anchor items (columns ``item``, ``human``, ``language`` where given) and their hash;
    ``kind="score"`` reads ``human`` as numbers (module doc).

    Raises:
        InputError: a bad file, no frozen hash beside it (run ``judgekit drift freeze``), or a
            hash that no longer matches the file.
    """
    path = Path(anchors)
    frame = _read(path, ("item", "human"), "anchor", "human" if kind == "score" else None)
    stored = hash_path(path)
    if not stored.is_file():
        raise InputError(path, f"not frozen: no {stored.name} (run `judgekit drift freeze`)")
    digest = file_hash(path) or ""
    if stored.read_text(encoding="utf-8").strip() != digest:
        raise InputError(path, f"changed since it was frozen (hash differs from {stored.name})")
    return frame, digest


def load_answers(answers: str | Path, kind: str = "label") -> pd.Series:
    """One judge run's answers on the anchors: a Series ``item -> answer``, from an answers
    file (columns ``item``, ``answer``) or a run directory / labels file with one judge rater
    (its ``labels.csv``; unscored items have no answer). Raises InputError on a bad file
    (missing column, empty or repeated item, a score that is not a finite number with
    ``kind="score"``, naming the line)."""
    path = Path(answers)
    if path.is_dir():
        from judgekit.labels.majority import judge_labels
        from judgekit.labels.table import load_labels

        return judge_labels(load_labels(path))
    frame = _read(path, ("item", "answer"), "answers", "answer" if kind == "score" else None)
    return frame.set_index("item")["answer"]


def anchor_frame(anchors: pd.DataFrame, before: pd.Series, after: pd.Series,
                 kind: str) -> pd.DataFrame:  # fmt: skip
    """The frame :func:`judgekit.drift.compare_answers` takes: one row per anchor item, group
    = its language (``all`` without one), human, before, after (NaN where a run has no answer;
    empty answers count as missing). For ``score``, values that are not numbers are missing."""
    frame = pd.DataFrame({
        "group": anchors["language"].to_numpy() if "language" in anchors else "all",
        "human": anchors["human"].to_numpy(),
        "before": before.reindex(anchors["item"]).to_numpy(),
        "after": after.reindex(anchors["item"]).to_numpy(),
    }, index=anchors["item"].to_numpy())  # fmt: skip
    frame = frame.replace("", pd.NA)
    if kind == "score":
        for col in ("human", "before", "after"):
            frame[col] = pd.to_numeric(frame[col], errors="coerce")
    else:
        for col in ("human", "before", "after"):
            frame[col] = frame[col].map(lambda v: v if pd.isna(v) else str(v).strip())
    return frame
