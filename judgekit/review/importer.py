"""Reading the raters' files back: checked against the campaign before anything is written.

A rater's file is the page's Download JSON (format ``judgekit-review/1``, see docs/review.md) or
a Label Studio JSON export of the tasks ``judgekit review export-labelstudio`` wrote
(:mod:`judgekit.review.labelstudio`). Checks, each failure one :class:`InputError` naming the
file and the item:

* the file's campaign id and task are the campaign's (a file of another campaign is refused);
* every item id is in the campaign and its hash is the campaign's (an edited item is refused);
* every answer of a done item passes the task's JSON Schema (rubric ids, 5 booleans, MQM
  offsets within the text in code points, the type's side: omissions in the source;
  :mod:`judgekit.review.schema`, the definition the page's Load JSON applies too);
* MQM spans: ``start < end`` and the marked text equals ``text[start:end]`` after NFC
  normalisation (:func:`judgekit.review.schema.span_problem`);
* ``seconds`` is a finite number >= 0 (or absent), and no item is done twice in one file;
* one file per rater.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

from judgekit.data.vocabulary import canonical_id
from judgekit.errors import InputError
from judgekit.review.campaign import EXPORT_FORMAT, Campaign
from judgekit.review.checks import (
    Annotation,
    RaterFile,
    check_answer,
    check_item,
    check_seconds,
    check_unique,
)
from judgekit.review.labelstudio import read_labelstudio


def read_json(path: Path) -> Any:
    """The JSON value of ``path``.

    Raises:
        InputError: missing file, not UTF-8, or invalid JSON (with its line).
    """
    if not path.is_file():
        raise InputError(path, "file not found")
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InputError(path, f"invalid JSON: {exc.msg}", line=exc.lineno) from None


def read_export(path: Path, campaign: Campaign) -> RaterFile:
    """A page's Download JSON, checked against ``campaign`` (module docstring)."""
    raw = read_json(path)
    if not isinstance(raw, dict) or raw.get("format") != EXPORT_FORMAT:
        raise InputError(path, f"not a judgekit review file (format {EXPORT_FORMAT})")
    if raw.get("campaign") != campaign.id:
        raise InputError(
            path, f"file of campaign {raw.get('campaign')}, not {campaign.id}", field="campaign"
        )
    if raw.get("task") != campaign.task:
        raise InputError(path, f"task {raw.get('task')}, not {campaign.task}", field="task")
    rater = raw.get("rater")
    rater = (canonical_id(rater) or "") if isinstance(rater, str) else ""  # NFC: one rater
    if not rater:
        raise InputError(path, "no rater name", field="rater")
    if any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in rater):  # TSV cells hold none
        raise InputError(path, f"rater name with a tab or line break: {rater!r}", field="rater")
    rows = raw.get("items")
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise InputError(path, "'items' must be a list of objects", field="items")
    items = campaign.by_id()
    annotations = []
    for row in rows:
        item = check_item(path, items, row.get("id"), row.get("hash"))
        done = row.get("done")
        if not isinstance(done, bool):
            raise InputError(path, f"item '{item.id}': 'done' must be true or false", field="done")
        answer = row.get("answer")
        if done:
            check_answer(path, campaign, item, answer)
        seconds = row.get("seconds")
        seconds = check_seconds(path, item, seconds)
        annotations.append(Annotation(rater, item.id, answer, done, seconds, str(path)))
    return RaterFile(rater, str(path), bool(raw.get("show_judge")), annotations)


def read_files(paths: list[Path], campaign: Campaign) -> list[RaterFile]:
    """Every rater file (judgekit's or Label Studio's JSON export), checked; one per rater.

    Raises:
        InputError: a bad file (module docstring), or two files of the same rater.
    """
    out: list[RaterFile] = []
    seen: dict[str, str] = {}
    for path in paths:
        raw = read_json(path)
        files = read_labelstudio(path, raw, campaign) if isinstance(raw, list) else [
            read_export(path, campaign)
        ]  # fmt: skip
        for rf in files:
            check_unique(path, rf)
            if rf.rater in seen:
                raise InputError(path, f"rater '{rf.rater}' is also in {seen[rf.rater]}")
            seen[rf.rater] = str(path)
            out.append(rf)
    if not out:
        raise InputError(None, "no rater files given")
    return out
