"""The one reader of per-model score tables (``calibrate validity``'s SCORES CSV, paper 001):
one row per model, every cell the analysis uses checked, errors naming file, line and column.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgekit.errors import InputError


def read_scores_csv(
    path: str | Path,
    *,
    model: str = "model",
    family: str = "family",
    numeric: Sequence[str] = ("params", "proficiency", "native"),
    positive: Sequence[str] = ("params",),
) -> pd.DataFrame:
    """Read a per-model scores CSV, checking every cell the validity analysis uses.

    Args:
        path: CSV with a header row and one row per model.
        model: model name column (non-empty, unique).
        family: model family column (non-empty).
        numeric: columns that must hold a finite number in every row (native, proxies,
            parameter count, proficiency, controls).
        positive: numeric columns that must also be > 0 (the parameter count).

    Returns:
        DataFrame with the model and family columns as text and ``numeric`` as float; other
        columns are kept as text.

    Raises:
        InputError: naming file, line (the header is line 1) and column, for an absent
            column, an empty or duplicate model name, an empty family, or a missing,
            non-numeric, non-finite or non-positive value.
    """
    path = Path(path)
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(path, f"cannot read CSV: {exc}") from None
    for col in dict.fromkeys([model, family, *numeric]):
        if col not in raw.columns:
            raise InputError(
                path, f"column not found; header has {list(raw.columns)}", line=1, field=col
            )
    out = raw.copy()
    seen: dict[str, int] = {}
    for i, name in enumerate(raw[model].str.strip()):
        line = i + 2
        if not name:
            raise InputError(path, "empty model name", line=line, field=model)
        if name in seen:
            raise InputError(
                path, f"model {name!r} already on line {seen[name]}", line=line, field=model
            )
        seen[name] = line
        if not raw[family].iloc[i].strip():
            raise InputError(path, "empty model family", line=line, field=family)
    for col in dict.fromkeys(numeric):
        values = []
        for i, cell in enumerate(raw[col].str.strip()):
            try:
                value = float(cell)
            except ValueError:
                what = "missing value" if cell == "" else f"{cell!r} is not a number"
                raise InputError(path, what, line=i + 2, field=col) from None
            if not math.isfinite(value) or (col in positive and value <= 0):
                need = "a finite number > 0" if col in positive else "a finite number"
                raise InputError(path, f"{cell!r} is not {need}", line=i + 2, field=col)
            values.append(value)
        out[col] = values
    out[model] = raw[model].str.strip()
    out[family] = raw[family].str.strip()
    return out
