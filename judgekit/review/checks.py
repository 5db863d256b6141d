"""The checks of a rater's answers against the campaign, and the annotations they become
(shared by judgekit's own files and Label Studio's export; see :mod:`judgekit.review.importer`).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgekit.data.vocabulary import canonical_id
from judgekit.errors import InputError
from judgekit.review.campaign import Campaign, ReviewItem


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


def _bad(path: Path, item: ReviewItem, message: str) -> InputError:
    return InputError(path, f"item '{item.id}': {message}", field="answer")


def check_answer(path: Path, campaign: Campaign, item: ReviewItem, answer: Any) -> None:
    """Check a done item's answer for the campaign's task.

    Raises:
        InputError: the answer's shape or a value is wrong (naming the file and item).
    """
    if not isinstance(answer, dict):
        raise _bad(path, item, "no answer")
    task, opts = campaign.task, campaign.options
    if task == "meanings":
        valid = answer.get("valid")
        n = len(item.data["meanings"])
        if (
            not isinstance(valid, list)
            or len(valid) != n
            or not all(isinstance(v, bool) for v in valid)
        ):
            raise _bad(path, item, f"'valid' must be {n} true/false values")
    elif task == "csca":
        for name in ("required_knowledge", "time_sensitive", "cs_label", "subject_category"):
            allowed = [o["id"] for o in opts[name]]
            if answer.get(name) not in allowed:
                raise _bad(
                    path, item, f"{name} '{answer.get(name)}' (allowed: {', '.join(allowed)})"
                )
    elif task == "postedit":
        for side in opts.get("sides", ["source", "english"]):
            if not isinstance(answer.get(side), str):
                raise _bad(path, item, f"no final text for the {side} side")
    elif task == "mqm":
        check_mqm(path, campaign, item, answer)


def check_mqm(path: Path, campaign: Campaign, item: ReviewItem, answer: dict[str, Any]) -> None:
    """MQM answer: ``no_errors`` exactly when there are no errors; each error's side, type,
    severity and code-point span (module docstring)."""
    errors = answer.get("errors")
    if not isinstance(errors, list) or not isinstance(answer.get("no_errors"), bool):
        raise _bad(path, item, "expected 'no_errors' (true/false) and 'errors' (a list)")
    if answer["no_errors"] == bool(errors):
        raise _bad(path, item, "'no errors' must be chosen exactly when no error is marked")
    types = {t["id"]: t for t in campaign.options["types"]}
    severities = [s["id"] for s in campaign.options["severities"]]
    for n, err in enumerate(errors, 1):
        if not isinstance(err, dict):
            raise _bad(path, item, f"error {n} is not an object")
        side, kind_id = err.get("side"), err.get("type")
        kind = types.get(kind_id) if isinstance(kind_id, str) else None
        if side not in ("source", "translation"):
            raise _bad(path, item, f"error {n}: side '{side}' (source or translation)")
        if kind is None:
            raise _bad(path, item, f"error {n}: unknown type '{kind_id}'")
        if (kind["quote_from"] == "source") != (side == "source"):
            raise _bad(path, item, f"error {n}: type {kind['id']} is marked in the {side}")
        if err.get("severity") not in severities:
            raise _bad(path, item, f"error {n}: severity '{err.get('severity')}'")
        text, start, end = item.data[side], err.get("start"), err.get("end")
        ints = all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end))
        if not ints or not 0 <= start < end <= len(text):
            raise _bad(path, item, f"error {n}: bad offsets [{start}, {end}) for a "
                       f"{len(text)}-character {side}")  # fmt: skip
        marked = err.get("text")
        if not isinstance(marked, str) or _nfc(text[start:end]) != _nfc(marked):
            raise _bad(path, item, f"error {n}: offsets [{start}, {end}) mark "
                       f"{text[start:end]!r}, not {marked!r}")  # fmt: skip


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)
