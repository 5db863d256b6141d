"""The checks of a rater's answers against the campaign, and the annotations they become
(shared by judgekit's own files and Label Studio's export; see :mod:`judgekit.review.importer`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgekit.data.vocabulary import canonical_id
from judgekit.errors import InputError
from judgekit.review.campaign import Campaign, ReviewItem
from judgekit.review.schema import answer_problem


@dataclass(frozen=True)
class Annotation:
    """One rater's answer to one item (``done``: the rater finished it; only done items make
    labels). ``seconds``: time the item was on screen before it was done."""

    rater: str
    item: str
    answer: dict[str, Any] | None
    done: bool
    seconds: float | None
    file: str


@dataclass(frozen=True)
class RaterFile:
    """One rater's file: who, from where, whether the judge was shown, and the annotations."""

    rater: str
    file: str
    show_judge: bool
    annotations: list[Annotation]


def check_item(path: Path, items: dict[str, ReviewItem], item_id: Any, hash_: Any) -> ReviewItem:
    """The campaign's item ``item_id``, after checking ``hash_`` against it.

    Raises:
        InputError: an item that is not in the campaign, or whose hash differs (edited).
    """
    item = items.get(str(item_id))
    if item is None:  # the same id in another Unicode form (NFD from another tool's export)
        found = canonical_id(item_id)
        item = next((it for key, it in items.items() if canonical_id(key) == found), None)
    if item is None:
        raise InputError(path, f"item '{item_id}' is not in the campaign", field="items")
    if hash_ != item.hash:
        raise InputError(
            path, f"item '{item.id}': edited (hash {hash_}, campaign {item.hash})", field="hash"
        )
    return item


def check_answer(path: Path, campaign: Campaign, item: ReviewItem, answer: Any) -> None:
    """Check a done item's answer against the task's JSON Schema and the MQM span rule
    (:func:`judgekit.review.schema.answer_problem`: the same rules the page's Load JSON applies).

    Raises:
        InputError: the answer's shape or a value is wrong (naming the file, the item and the
            place in the answer).
    """
    problem = answer_problem(campaign, item, answer)
    if problem:
        raise InputError(path, f"item '{item.id}': {problem}", field="answer")


def check_seconds(path: Path, item: ReviewItem, value: Any, field: str = "seconds") -> float | None:
    """The seconds a rater spent on ``item`` (None when the file gives none).

    Raises:
        InputError: a value that is not a finite number >= 0 (NaN, Infinity, ``1e400``, a
            negative time, text), naming the file, the item and ``field``.
    """
    if value is None:
        return None
    number = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:
            number = None
    if number is None or not math.isfinite(number) or number < 0:
        raise InputError(path, f"item '{item.id}': '{field}' must be a finite number of "
                         f"seconds >= 0, got {str(value)[:24]}", field=field)  # fmt: skip
    return number


def check_unique(path: str | Path, rater_file: RaterFile) -> None:
    """Refuse a rater's file that answers one item twice (both done): each would become a label.

    Raises:
        InputError: ``duplicate rating of item ... by rater ...``, as the label readers say.
    """
    seen: set[str] = set()
    for ann in rater_file.annotations:
        if not ann.done:
            continue
        if ann.item in seen:
            raise InputError(path, f"duplicate rating of item '{ann.item}' by rater "
                             f"'{ann.rater}' (the item is done twice)", field="items")  # fmt: skip
        seen.add(ann.item)
