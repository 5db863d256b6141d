"""The viewer profile of the classify pipeline: an item's label, the item texts of its detail
pane and the headline of its summary (:mod:`judgekit.view.profile`)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from judgekit.view.data import RunData
from judgekit.view.headline import Row, items_rows, row, value_at
from judgekit.view.profile import Profile, items_of_signature, label_of, meta_of, single


def _load_items(path: Path) -> list[dict[str, Any]]:
    from judgekit.pipelines.classify import load_items

    return [asdict(i) for i in load_items(path)]


def _classify_extras(run: RunData, rows_by_key: dict[str, int]) -> dict[str, Any]:
    """``items``: item id -> its text (the run's items.jsonl, else the items file of the
    signature when its sha256 is the run's, with ``items_note``); 50,000 items cost their
    texts, little more."""
    rows, note = run.side.get("items.jsonl"), None
    if rows is None:
        rows, note = items_of_signature(run, _load_items)
    out: dict[str, Any] = {"items": {str(r.get("id")): r.get("text") for r in rows}}
    if note:
        out["items_note"] = note
    return out


def _classify(s: dict[str, Any]) -> list[Row | None]:
    labels = value_at(s, ["labels"]) or {}
    return items_rows(s) + [row(s, f"labels of {rater}", ["labels", rater]) for rater in labels]


PROFILE = Profile(
    lambda r: str(meta_of(r, "item")),
    label_of("label"),
    single("label"),
    (),
    extras=_classify_extras,
    headline=_classify,
)
