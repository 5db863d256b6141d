"""A review campaign: the items one or more raters annotate, with their hashes, and the answers
kept from the raters (the judge's labels, the gold items' expected answers).

``campaign.json`` (written by :func:`write_campaign` beside the pages) holds what the importer
checks a rater's file against; the pages themselves never carry the gold answers, nor the
judge's answers unless made with ``--show-judge``.

* Item hash: the first 16 hex digits of the SHA-256 of the item's data as canonical JSON
  (sorted keys, UTF-8). An edited item in a rater's file no longer matches.
* Campaign id: the first 12 hex digits of the SHA-256 of the task, the (id, hash) of every item,
  the gold item ids and the guidelines' text; raters of the same items and guidelines share it,
  whatever their name or ``--show-judge``.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from judgekit.data import jsonl_objects
from judgekit.data.atomic import write_text
from judgekit.data.vocabulary import canonical_id
from judgekit.errors import InputError

TASKS = ("postedit", "meanings", "csca", "mqm")
CAMPAIGN_FORMAT = "judgekit-review-campaign/1"
EXPORT_FORMAT = "judgekit-review/1"
CAMPAIGN_FILE = "campaign.json"


def item_hash(data: dict[str, Any]) -> str:
    """16 hex digits of the SHA-256 of ``data`` as canonical JSON (sorted keys, UTF-8)."""
    blob = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


@dataclass
class ReviewItem:
    """One item to annotate.

    Attributes:
        id: the item id the output tables use (a run's own item id where there is one).
        data: what the page shows (task-specific fields; every string is shown as text).
        judge: the judge's answer in the task's answer format, or None (no judge, or unjudged).
        hash: :func:`item_hash` of ``data``.
    """

    id: str
    data: dict[str, Any]
    judge: dict[str, Any] | None = None
    hash: str = ""

    def __post_init__(self) -> None:
        self.hash = self.hash or item_hash(self.data)


@dataclass
class Campaign:
    """The items of a campaign and what the importer checks against.

    Attributes:
        task: one of :data:`TASKS`.
        items: the items, in page order.
        source: the run directory or items file they came from (for the record).
        gold: item id -> expected answer (task answer format); hidden from the pages.
        guidelines: the guidelines' markdown text ("" when none).
        options: task options shown on the page (rubric values, side names).
        raters: names of the raters who got a page.
    """

    task: str
    items: list[ReviewItem]
    source: str = ""
    gold: dict[str, dict[str, Any]] = field(default_factory=dict)
    guidelines: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    raters: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        parts = [self.task, [(i.id, i.hash) for i in self.items], sorted(self.gold)]
        blob = json.dumps([*parts, self.guidelines], ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]

    def by_id(self) -> dict[str, ReviewItem]:
        return {i.id: i for i in self.items}

    def to_json(self) -> dict[str, Any]:
        return {
            "format": CAMPAIGN_FORMAT,
            "campaign": self.id,
            "task": self.task,
            "source": self.source,
            "raters": self.raters,
            "guidelines": self.guidelines,
            "options": self.options,
            "gold": self.gold,
            "items": [asdict(i) for i in self.items],
        }


def select_items(
    items: list[ReviewItem],
    *,
    sample: int | None = None,
    seed: int = 0,
    ids: list[str] | None = None,
    keep: list[str] | None = None,
) -> list[ReviewItem]:
    """The items of a campaign: ``ids`` in their given order, or a seeded random sample of
    ``sample`` items (``random.Random(seed)``, in source order), or all; ``keep`` (gold ids)
    are always included.

    Raises:
        InputError: an id in ``ids`` or ``keep`` that is not an item of the source.
    """
    known = {canonical_id(i.id): i for i in items}  # ids compared as NFC text
    ids = [canonical_id(i) or "" for i in ids or []]
    keep = [canonical_id(g) or "" for g in keep or []]
    for wanted in ids + keep:
        if wanted not in known:
            raise InputError(None, f"no item '{wanted}' in the source", field="--items")
    if ids:
        chosen = [known[i] for i in dict.fromkeys(ids)]
    elif sample is not None and sample < len(items):
        picked = set(random.Random(seed).sample(range(len(items)), sample))
        chosen = [it for n, it in enumerate(items) if n in picked]
    else:
        chosen = list(items)
    have = {canonical_id(i.id) for i in chosen}
    extra = [known[g] for g in keep if g not in have]
    return chosen + extra


def load_gold(path: Path) -> dict[str, dict[str, Any]]:
    """Gold answers from JSONL: one ``{"item": ID, "expected": {...answer...}}`` per line.

    Raises:
        InputError: a line without ``item`` or ``expected`` (an object), or a repeated item.
    """
    gold: dict[str, dict[str, Any]] = {}
    for line, row in jsonl_objects(path):
        item, expected = row.get("item"), row.get("expected")
        if item is None:
            raise InputError(path, "missing key 'item'", line=line, field="item")
        if not isinstance(expected, dict):
            raise InputError(path, "'expected' must be an object", line=line, field="expected")
        if str(item) in gold:
            raise InputError(path, f"item '{item}' is given twice", line=line, field="item")
        gold[str(item)] = expected
    return gold


def write_campaign(campaign: Campaign, path: Path) -> None:
    """Write ``campaign.json``; a file of the same campaign there keeps its raters (added to),
    one of another campaign is an error.

    Raises:
        InputError: ``path`` holds another campaign.
    """
    if path.is_file():
        old = read_campaign(path)
        if old.id != campaign.id:
            raise InputError(
                path,
                f"holds campaign {old.id}, not {campaign.id} (other items or guidelines): "
                "write the pages of a new campaign into another folder",
            )
        campaign.raters = list(dict.fromkeys(old.raters + campaign.raters))
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(campaign.to_json(), ensure_ascii=False, indent=1)
    write_text(path, text + "\n")


def read_campaign(path: Path) -> Campaign:
    """Read ``campaign.json`` (``path`` may be its folder).

    Raises:
        InputError: missing file, not JSON, not a campaign file, or an item whose data no
            longer matches its hash.
    """
    path = Path(path)
    if path.is_dir():
        path = path / CAMPAIGN_FILE
    if not path.is_file():
        raise InputError(path, "campaign file not found")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InputError(path, f"invalid JSON: {exc.msg}", line=exc.lineno) from None
    if not isinstance(raw, dict) or raw.get("format") != CAMPAIGN_FORMAT:
        raise InputError(path, f"not a judgekit campaign file (format {CAMPAIGN_FORMAT})")
    rows = raw.get("items")
    if (
        not isinstance(raw.get("task"), str)
        or not isinstance(rows, list)
        or not all(isinstance(i, dict) and "id" in i and "data" in i for i in rows)
    ):
        raise InputError(path, "a campaign needs a 'task' and 'items' (objects with id and "
                         "data)", field="items")  # fmt: skip
    items = [ReviewItem(i["id"], i["data"], i.get("judge")) for i in raw["items"]]
    for item, stored in zip(items, raw["items"], strict=True):
        if item.hash != stored.get("hash"):
            raise InputError(path, f"item '{item.id}': data edited (hash mismatch)", field="items")
    campaign = Campaign(
        task=raw["task"],
        items=items,
        source=raw.get("source", ""),
        gold=raw.get("gold", {}),
        guidelines=raw.get("guidelines", ""),
        options=raw.get("options", {}),
        raters=raw.get("raters", []),
    )
    if campaign.id != raw.get("campaign"):
        raise InputError(path, "campaign id does not match its items", field="campaign")
    return campaign
