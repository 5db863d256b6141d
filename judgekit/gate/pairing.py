"""What a ``difference`` rule needs to be honest, checked before any figure is computed.

The rule estimates the mean of the per-item difference candidate - baseline, paired by item id
(docs/gate.md). The runs' data are compared and one input is refused (exit 2):

* **other data** is said, not refused: where the baseline run judged other data under the same
  ids (its signature's data sha256 differs from the candidate's), a warning names both hashes.
  That is the point of a system regression check (the same source segments, another system's
  translations), and a mistake where the same items were meant;
* **one set of human labels for both runs** (the same file, or the same label on every item
  labelled in either): the humans' difference is 0 on every item by construction, so the check's
  estimate and interval sit at 0 and it passes whatever the judges do. A difference rule needs
  the humans to label each run's own outputs (two labellings); two judges of the same items
  against the same labels are compared with an ``agreement`` rule per judge.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data.digest import file_sha256
from judgekit.errors import InputError, JudgekitWarning
from judgekit.gate.spec import Rule
from judgekit.labels.files import resolve_labels_path


def _data_hashes(signature: dict[str, Any] | None) -> dict[str, str]:
    data = (signature or {}).get("data") or {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def check_same_data(rule: Rule, candidate: dict | None, baseline: dict | None) -> None:
    """Warn (:class:`~judgekit.errors.JudgekitWarning`, both hashes) where the baseline run's
    data differ from the candidate's (module docstring).

    Args:
        candidate, baseline: the runs' signatures (``summary.json``), or None for a labels file
            (which names no data: nothing to compare).
    """
    ours, theirs = _data_hashes(candidate), _data_hashes(baseline)
    if not ours or not theirs or set(ours.values()) == set(theirs.values()):
        return
    shown = "; ".join(f"{Path(k).name} sha256 {v[:16]}" for k, v in ours.items())
    other = "; ".join(f"{Path(k).name} sha256 {v[:16]}" for k, v in theirs.items())
    warnings.warn(
        JudgekitWarning(
            f"rule '{rule.name}': the baseline run judged other data ({other}) than the "
            f"candidate ({shown}); items are paired by id, so the difference is the data's "
            "change and the runs' together (as meant for a system regression check)"
        ),
        stacklevel=2,
    )


def check_two_labellings(rule: Rule, labels: pd.Series, base_labels: pd.Series) -> None:
    """Refuse one set of human labels given for both runs (module docstring).

    Args:
        labels, base_labels: the humans' value of each labelled item, candidate and baseline.

    Raises:
        InputError: ``human`` and ``baseline_human`` are the same file (path or sha256), or give
            every labelled item the same value (field ``baseline_human``).
    """
    human = resolve_labels_path(Path(rule.human))
    base = resolve_labels_path(Path(rule.baseline_human or ""))
    same_file = human.resolve() == base.resolve() or file_sha256(human) == file_sha256(base)
    same_items = set(labels.index) == set(base_labels.index)
    same_values = same_items and bool((labels == base_labels.reindex(labels.index)).all())
    if not (same_file or (len(labels) and same_values)):
        return
    what = (
        "the same file"
        if human.resolve() == base.resolve()
        else "files of the same content"
        if same_file
        else "the same label on every labelled item"
    )
    raise InputError(
        rule.baseline_human,
        f"rule '{rule.name}': human and baseline_human are {what}: the humans' difference is 0 "
        "on every item by construction, so the check would pass whatever the judges do; label "
        "each run's own outputs (to compare two judges against the same labels, use an "
        "agreement rule per judge)",
        field="baseline_human",
    )
