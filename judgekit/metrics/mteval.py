"""Readers for Google MT-Metrics-Eval score files (``*.seg.score.tsv``, ``*.sys.score.tsv``).

Format (MT-Metrics-Eval v2, github.com/google-research/mt-metrics-eval, README "File formats"):
one ``system<TAB>score`` line per segment, in per-system blocks, each block in source-line
order; ``None`` marks a segment without a score. Block order differs between files of the same
language pair, so two files are aligned on (system, position within the system's block), never
on the global line number.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data.vocabulary import MISSING_MARKERS
from judgekit.errors import InputError, JudgekitError

MISSING = MISSING_MARKERS | {"none"}  # the label vocabulary's markers and MT-Metrics-Eval's None


def score_cell(raw: Any, path: Path | str | None, line: int | None, field: str = "score") -> float:
    """One score as read from a score file (MT-Metrics-Eval TSV, or a CSV/TSV/JSONL score
    table): the one rule for a score cell, so every score reader agrees.

    Args:
        raw: the cell as read: text (CSV/TSV), or a JSON value (JSONL).
        path, line, field: where it was read, for the error.

    Returns:
        The score as a finite float; NaN for a missing score (JSON null, the empty cell and
        ``None``, ``NaN``, ``NA``, ``N/A``, ``null`` in any case).

    Raises:
        InputError: the cell is not a number (a boolean, a list, other text) or is infinite.
    """
    if raw is None or (isinstance(raw, str) and raw.strip().lower() in MISSING):
        return math.nan
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise InputError(path, f"score {raw!r} is not a number", line=line, field=field)
    try:
        score = float(raw)
    except (ValueError, OverflowError):
        raise InputError(
            path, f"score {raw!r} is neither a number nor None", line=line, field=field
        ) from None
    if math.isnan(score):
        return math.nan
    if not math.isfinite(score):
        raise InputError(path, f"score {raw!r} is not finite", line=line, field=field)
    return score


def _parse_line(path: Path, lineno: int, line: str) -> tuple[str, float]:
    fields = line.rstrip("\r\n").split("\t")
    if len(fields) != 2:
        raise InputError(
            path, f"expected 2 tab-separated fields (system, score), got {len(fields)}", line=lineno
        )
    system, raw = fields[0].strip(), fields[1].strip()
    if not system:
        raise InputError(path, "empty system name", line=lineno, field="system")
    return system, score_cell(raw, path, lineno)


def read_seg_scores(path: str | Path) -> pd.DataFrame:
    """Read an MT-Metrics-Eval segment score file into (system, position, score) rows.

    Args:
        path: a ``*.seg.score.tsv`` file: ``system<TAB>score`` lines in contiguous per-system
            blocks; ``None`` (or an empty cell) is a missing score.

    Returns:
        DataFrame with columns ``system`` (str), ``position`` (int, 0-based index of the line
        within its system's block, i.e. the source segment index) and ``score`` (float, NaN
        where missing), one row per line, in file order.

    Raises:
        InputError: the file is empty, a line lacks exactly two fields, a score is not a
            number or ``None``, or a system's block is split by another system's lines
            (position within the block would then be ambiguous).
    """
    path = Path(path)
    systems: list[str] = []
    scores: list[float] = []
    closed: set[str] = set()
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            system, score = _parse_line(path, lineno, line)
            if systems and system != systems[-1]:
                closed.add(systems[-1])
                if system in closed:
                    raise InputError(
                        path,
                        f"system {system!r} appears in two separate blocks; MT-Metrics-Eval "
                        "files hold one contiguous block per system",
                        line=lineno,
                        field="system",
                    )
            systems.append(system)
            scores.append(score)
    if not systems:
        raise InputError(path, "no score lines")
    frame = pd.DataFrame({"system": systems, "score": scores})
    frame.insert(1, "position", frame.groupby("system", sort=False).cumcount())
    return frame


def read_sys_scores(path: str | Path) -> dict[str, float]:
    """Read an MT-Metrics-Eval system score file (``*.sys.score.tsv``) into system -> score.

    Raises:
        InputError: a malformed line (see :func:`read_seg_scores`) or a system listed twice.
    """
    frame = read_seg_scores(path)
    repeated = frame.loc[frame["position"] > 0, "system"]
    if not repeated.empty:
        line = int(repeated.index[0]) + 1
        raise InputError(
            path, f"system {repeated.iloc[0]!r} listed twice", line=line, field="system"
        )
    return dict(zip(frame["system"], frame["score"], strict=True))


def align_seg_scores(
    judge: pd.DataFrame,
    human: pd.DataFrame,
    *,
    names: tuple[str, str] = ("judge", "human"),
) -> pd.DataFrame:
    """Join two segment score tables on (system, position within the system's block).

    Systems present in only one table (for example GEMBA's ``synthetic_ref`` block) are left
    out; their names are kept in ``result.attrs["unmatched_systems"]``. Missing scores stay
    NaN, so that a correlation can drop and count them.

    Args:
        judge: output of :func:`read_seg_scores` for the judge (metric) file.
        human: output of :func:`read_seg_scores` for the human file.
        names: column names for the two score columns in the result.

    Returns:
        DataFrame with columns ``system``, ``position``, ``names[0]``, ``names[1]``, ordered
        by the judge table's system order, then position.

    Raises:
        JudgekitError: a system present in both tables has blocks of different lengths (the
            two files do not describe the same segments), or no system is shared.
    """
    sizes_j = judge.groupby("system", sort=False).size()
    sizes_h = human.groupby("system", sort=False).size()
    shared = [s for s in sizes_j.index if s in sizes_h.index]
    if not shared:
        raise JudgekitError("the two score tables share no system name")
    differ = [s for s in shared if sizes_j[s] != sizes_h[s]]
    if differ:
        detail = ", ".join(f"{s} ({sizes_j[s]} vs {sizes_h[s]})" for s in differ)
        raise JudgekitError(f"system blocks differ in length between the two files: {detail}")
    left = judge.rename(columns={"score": names[0]})
    right = human.rename(columns={"score": names[1]})
    joined = left.merge(right, on=["system", "position"], how="inner", validate="one_to_one")
    unmatched = sorted(set(sizes_j.index).symmetric_difference(sizes_h.index))
    joined.attrs["unmatched_systems"] = unmatched
    return joined.reset_index(drop=True)
