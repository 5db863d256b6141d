"""Reading a judge's label probabilities: run records or ``p:LABEL`` columns of a labels file.

Two sources, one reader (:func:`load_label_probs`):

* a run directory: every ``ok`` record of ``records.jsonl`` with ``label_probs`` ({label: p},
  summing to 1 over the label set) gives the probabilities of item ``meta["item"]`` for rater
  ``model`` (``model#sN`` when the run drew several samples): the item and rater of the run's
  ``labels.csv`` for a classify run (CS/CA, meanings, any label set). Pairwise records
  (``meta["order"]``, one per presentation order) are skipped and counted: their verdicts need
  unswapping, so give a pairwise judge's probabilities as ``p:`` columns. Records without
  ``label_probs`` (a provider that returned none) are counted, never given invented values.
* a labels file (CSV, TSV, JSONL; long ``item,rater,label``) with one column ``p:LABEL`` per
  label: the probability of LABEL for that row's item and rater; a row with every ``p:`` cell
  missing (empty, ``NA``, ``N/A``, ``NaN``, ``null``: the label vocabulary's missing markers)
  has none.

A row's probabilities must lie in [0, 1] and sum to 1 within 1e-3; otherwise the file (and line
or record key) is named in an :class:`~judgekit.errors.InputError`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data.tables import read_table
from judgekit.data.vocabulary import canonical_id, is_missing_label, label_text
from judgekit.errors import InputError
from judgekit.labels.files import resolve_labels_path

PROB_PREFIX = "p:"
SUM_TOLERANCE = 1e-3


def _checked(
    probs: dict[Any, Any], path: Path, line: int | None, field: str, prefix: str = ""
) -> dict[str, float]:
    """``probs`` as {label text: float}, or an InputError naming path, line and field (a
    label's own column ``prefix + label`` where ``prefix`` is given: ``p:yes``)."""
    out: dict[str, float] = {}
    for label, value in probs.items():
        where = f"{prefix}{label}" if prefix else field
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            raise InputError(path, f"probability '{value}' of label '{label}' is not a number",
                             line=line, field=where) from None  # fmt: skip
        if not math.isfinite(number) or not 0 <= number <= 1:
            raise InputError(path, f"probability {value} of label '{label}' is not in [0, 1]",
                             line=line, field=where)  # fmt: skip
        out[str(label_text(label))] = number
    total = sum(out.values())
    if abs(total - 1) > SUM_TOLERANCE:
        raise InputError(path, f"label probabilities sum to {total:.4f}, not 1", line=line,
                         field=field)  # fmt: skip
    return out


def _from_records(run_dir: Path) -> tuple[dict[tuple[str, str], dict[str, float]], int]:
    from judgekit.results import read_records

    records = read_records(run_dir)
    ok = records[records["status"] == "ok"]
    multi = bool((ok["sample_index"] > 0).any()) if len(ok) else False
    found: dict[tuple[str, str], dict[str, float]] = {}
    missing = 0
    for row in ok.itertuples(index=False):
        item = (row.meta or {}).get("item")
        if row.label_probs is None or item is None or "order" in (row.meta or {}):
            missing += 1
            continue
        rater = row.model + (f"#s{row.sample_index}" if multi else "")
        found[(canonical_id(item), rater)] = _checked(
            row.label_probs, run_dir / "records.jsonl", None, f"label_probs of {row.key}"
        )
    return found, missing


def _from_file(path: Path) -> tuple[dict[tuple[str, str], dict[str, float]], int]:
    table = read_table(path, default="csv")
    columns = [c for c in table.columns if str(c).startswith(PROB_PREFIX)]
    found: dict[tuple[str, str], dict[str, float]] = {}
    missing = 0
    if not columns:
        return found, 0
    for line, row in table.rows:
        cells = {c[len(PROB_PREFIX) :]: row.get(c) for c in columns}
        if all(is_missing_label(v) for v in cells.values()):  # '', NA, N/A, NaN, null
            missing += 1
            continue
        key = (canonical_id(row.get("item")), canonical_id(row.get("rater", "judge")))
        found[key] = _checked(cells, path, line, ",".join(columns), PROB_PREFIX)
    return found, missing


def load_label_probs(path: str | Path, rater: str | None = None) -> tuple[pd.DataFrame, int]:
    """The judge's label probabilities per item, and how many judged rows had none.

    Args:
        path: a run directory (``records.jsonl``) or a labels file with ``p:LABEL`` columns.
        rater: the judge rater (default: the only rater that has probabilities).

    Returns:
        (probs, n_missing): probs is items (text ids) x labels (text, sorted), each row summing
        to 1 (a label absent from a row is 0); empty when the source has no probabilities.

    Raises:
        InputError: a probability that is not a number in [0, 1], rows that do not sum to 1,
            several raters with probabilities and no ``rater``, or an unknown ``rater``.
    """
    path = Path(path)
    if path.is_dir() and (path / "records.jsonl").is_file():
        found, missing = _from_records(path)
        where: Path = path
    else:
        where = resolve_labels_path(path)
        found, missing = _from_file(where)
    raters = sorted({r for _, r in found})
    if not found:
        return pd.DataFrame(), missing
    if rater is None:
        if len(raters) > 1:
            raise InputError(where, f"label probabilities of several raters ({', '.join(raters)})"
                             ": pick one with --judge-rater", field="rater")  # fmt: skip
        rater = raters[0]
    rater = canonical_id(rater)
    if rater not in raters:
        raise InputError(where, f"no label probabilities of rater '{rater}' (raters: "
                         f"{', '.join(raters)})", field="rater")  # fmt: skip
    rows = {item: p for (item, r), p in found.items() if r == rater}
    frame = pd.DataFrame.from_dict(rows, orient="index").fillna(0.0)
    frame = frame[sorted(frame.columns)]
    frame.index.name = "item"
    return frame, missing
