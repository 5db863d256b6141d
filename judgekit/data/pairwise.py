"""Pairwise-preference items and published pairwise verdicts, read with located errors.

Items hold an instruction, two outputs and optionally a gold label naming the better output, in
LLMBar's format read as is (Zeng et al. 2024, ICLR; ``princeton-nlp/LLMBar``, README "Data"):
``{"input", "output_1", "output_2", "label"}`` with ``label`` 1 or 2. Files are JSONL, CSV or
TSV (one item a line or row), or a JSON array such as LLMBar's own ``dataset.json``.

Published verdicts come in the table derived from LLMBar's ``evaluators/*/*/result.json``
(``subset, evaluator_model, prompting, item_index, gold_label, winner_original_order,
winner_swapped_order``), the swapped verdict already mapped back to the original outputs, as
LLMBar's ``evaluate.py`` stores it. Both become the same verdict frame
(:data:`VERDICT_COLUMNS`) that :func:`judgekit.metrics.pairwise.judge_table` scores.
"""

from __future__ import annotations

import csv
import json
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data.tables import read_table
from judgekit.data.vocabulary import label_text
from judgekit.errors import InputError

VERDICTS = ("1", "2", "tie")
VERDICT_COLUMNS = ("judge", "subset", "item", "gold", "original", "swapped")
PUBLISHED_COLUMNS = (
    "subset", "evaluator_model", "prompting", "item_index", "gold_label",
    "winner_original_order", "winner_swapped_order",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class PairItem:
    """One pairwise item: ``id``, ``subset`` (None when the file names none), ``instruction``,
    the two outputs, ``gold`` (``"1"``, ``"2"``, ``"tie"`` or None) and its 1-based ``line``."""

    id: str
    subset: str | None
    instruction: str
    output_1: str
    output_2: str
    gold: str | None
    line: int


def verdict_label(value: Any) -> str | None:
    """A verdict or gold label as ``"1"``, ``"2"`` or ``"tie"``, read in the label vocabulary
    (:mod:`judgekit.data.vocabulary`: ``2.0`` is ``"2"``, ``TIE`` is ``"tie"``); None when
    missing (None, NaN, ``""``, ``NA``, ``null``, and ``"None"``, as LLMBar's results write one).

    Raises:
        ValueError: any other value, a boolean included (the caller locates it).
    """
    if isinstance(value, bool):
        raise ValueError(f"expected 1, 2 or tie, got {value!r}")
    text = label_text(value)
    if text is None or text == "None":
        return None
    text = text.lower()
    if text not in VERDICTS:
        raise ValueError(f"expected 1, 2 or tie, got {value!r}")
    return text


def _json_array(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line, object) of each element of a JSON array file, the line where the object starts."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 ({exc.reason})") from None
    decoder = json.JSONDecoder()
    start = len(text) - len(text.lstrip())
    if not text[start:].startswith("["):
        raise InputError(path, "expected a JSON array of objects (or use .jsonl)", line=1)
    rows: list[tuple[int, dict[str, Any]]] = []
    pos = start + 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        line = text.count("\n", 0, pos) + 1
        if pos >= len(text):
            raise InputError(path, "invalid JSON: the array is not closed", line=line)
        if text[pos] == "]":
            return rows
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"invalid JSON: {exc.msg}", line=exc.lineno) from None
        if not isinstance(value, dict):
            raise InputError(path, "expected a JSON object per array element", line=line)
        rows.append((line, value))


def _text(row: dict[str, Any], name: str, path: Path, line: int) -> str:
    value = row.get(name)
    if value is None:
        raise InputError(path, "missing field", line=line, field=name)
    if not isinstance(value, str) or not value.strip():
        raise InputError(path, "expected a non-empty string", line=line, field=name)
    return value


def load_pairs(
    path: Path,
    *,
    id_field: str = "id",
    input_field: str = "input",
    output_fields: tuple[str, str] = ("output_1", "output_2"),
    label_field: str = "label",
    subset_field: str = "subset",
    subset: str | None = None,
) -> list[PairItem]:
    """Read a pairwise items file (.jsonl, .csv, .tsv, or a .json array).

    An item without ``id_field`` takes its 0-based position in the file as id (LLMBar's
    ``dataset.json`` has no ids; its verdict tables index items by position). An item without
    ``subset_field`` takes ``subset``. The label is optional (None: no gold for that item).

    Raises:
        InputError: the file is missing or malformed, an instruction or output is missing or
            empty, a label is not 1, 2 or tie, an id repeats, or the file has no item (the
            message names the file, the line and the field).
    """
    path = Path(path)
    if path.suffix.lower() == ".json":
        if not path.is_file():
            raise InputError(path, "no such file")
        rows = _json_array(path)
    else:
        rows = read_table(path).rows
    items: list[PairItem] = []
    first_line: dict[str, int] = {}
    for position, (line, row) in enumerate(rows):
        raw_id = row.get(id_field)
        item_id = str(position) if raw_id is None or raw_id == "" else str(raw_id)
        if item_id in first_line:
            message = f"id {item_id!r} already on line {first_line[item_id]}"
            raise InputError(path, message, line=line, field=id_field)
        first_line[item_id] = line
        texts = [_text(row, name, path, line) for name in (input_field, *output_fields)]
        try:
            gold = verdict_label(row.get(label_field))
        except ValueError as exc:
            raise InputError(path, str(exc), line=line, field=label_field) from None
        named = row.get(subset_field)
        item_subset = str(named) if named not in (None, "") else subset
        items.append(PairItem(item_id, item_subset, *texts, gold, line))
    if not items:
        raise InputError(path, "no items in the file")
    return items


def identical_outputs(items: list[PairItem]) -> list[PairItem]:
    """The items whose two outputs are the same text (compared in Unicode NFC, surrounding
    whitespace stripped): a judge's verdict on them measures only its position bias, and a gold
    winner on one is suspicious (a labelling or data error)."""
    return [i for i in items if _plain(i.output_1) == _plain(i.output_2)]


def _plain(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()


def load_published_verdicts(path: Path) -> pd.DataFrame:
    """Published pairwise verdicts (LLMBar's derived table, tab-separated) as a verdict frame.

    Returns:
        Columns :data:`VERDICT_COLUMNS`: ``judge`` is ``evaluator_model/prompting``
        (``GPT-4/Vanilla``), ``item`` the ``item_index`` as text, ``gold``, ``original`` and
        ``swapped`` (in the original outputs' identities) as ``"1"``, ``"2"``, ``"tie"`` or
        None, plus ``line``; rows in file order.

    Raises:
        InputError: missing file or column, an empty field, a verdict that is not 1, 2, tie or
            None, or a repeated (subset, judge, item).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such file")
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        missing = [c for c in PUBLISHED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(path, f"missing columns {missing}", line=1)
        rows, seen = [], set()
        for line, row in enumerate(reader, start=2):
            rows.append(_published_row(row, path, line, seen))
    if not rows:
        raise InputError(path, "no verdicts in the file")
    return pd.DataFrame(rows, columns=[*VERDICT_COLUMNS, "line"])


def _published_row(row: dict[str, Any], path: Path, line: int, seen: set) -> tuple:
    for name in ("subset", "evaluator_model", "prompting", "item_index"):
        if not (row.get(name) or "").strip():
            raise InputError(path, "empty field", line=line, field=name)
    labels = []
    for name in ("gold_label", "winner_original_order", "winner_swapped_order"):
        try:
            labels.append(verdict_label(row.get(name)))
        except ValueError as exc:
            raise InputError(path, str(exc), line=line, field=name) from None
    judge = f"{row['evaluator_model']}/{row['prompting']}"
    key = (row["subset"], judge, row["item_index"].strip())
    if key in seen:
        raise InputError(path, f"repeated verdict for {key}", line=line, field="item_index")
    seen.add(key)
    return (judge, row["subset"], key[2], *labels, line)
