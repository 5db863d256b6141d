"""Guarding a tuned judge's sealed test labels from reuse (issue 35, point 4).

A judge chosen by ``calibrate tune`` was reported on its test split once; using those test labels
again, e.g. as the human sample of ``calibrate estimate``, is a second look at the same labels.
:func:`check_human_sample` refuses it unless the user says so; the command then counts the look
with :func:`count_look` in the tune directory's ``looks.json`` once its figures are computed (a
single-use test set, as awslabs calibrated-agent-evaluation); a command that fails sees no
figure and counts none.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from judgekit.calibration.tune.splits import record_look
from judgekit.errors import InputError


def sealed_test(tune_dir: Path) -> tuple[str, set[str]]:
    """(test hash, test item ids) from ``tune_dir/splits.json`` (written by ``calibrate tune``).

    Raises InputError when the directory holds no readable splits.json.
    """
    path = Path(tune_dir) / "splits.json"
    if not path.is_file():
        raise InputError(path, "not a calibrate tune output: no splits.json", field="--tuned")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        return str(doc["test_hash"]), {str(i) for i in doc["test"]}
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(path, f"unreadable splits: {exc}", field="test") from None


def check_human_sample(tune_dir: Path, human_items: Iterable[object], allow: bool) -> int:
    """Refuse a human sample that holds test-split items of a tuned judge, unless ``allow``.

    Returns the number of test items in the sample (0: nothing to guard). A caller that goes
    on with a non-zero overlap counts the look with :func:`count_look` once its figures exist.

    Raises:
        InputError: the sample holds sealed test items and ``allow`` is False.
    """
    _, test = sealed_test(tune_dir)
    overlap = test & {str(i) for i in human_items}
    if overlap and not allow:
        raise InputError(
            Path(tune_dir) / "splits.json",
            f"{len(overlap)} of the human labels are the tuned judge's sealed test items; "
            "label other items, or pass --allow-test-labels (counted as a look)",
            field="--human",
        )
    return len(overlap)


def count_look(tune_dir: Path, command: str) -> int:
    """Record one look by ``command`` at the sealed test split of ``tune_dir``; the new total."""
    hash_, _ = sealed_test(tune_dir)
    return record_look(Path(tune_dir), hash_, command)
