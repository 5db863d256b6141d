"""The one definition of a valid answer, per task: a JSON Schema (draft 2020-12) that both
``judgekit review import`` (Python's jsonschema) and the review page's "Load JSON" (the vendored
``@cfworker/json-schema``) apply, so the page never takes as done what the import refuses.

An item's schema is the task's part (:func:`task_schema`: the campaign's rubric values, types,
severities, sides) and the item's part (:func:`item_part`: the number of meanings, the length in
code points of each MQM side), joined by :func:`item_schema`, which the page mirrors in one line
(``{"$defs": ..., "allOf": [{"$ref": "#/$defs/answer"}, part]}``).

JSON Schema cannot compare two values of one answer, so MQM spans have one more rule, written
once here (:func:`span_problem`) and once in the page (``spanProblem`` in ``static/load.js``),
and tested to agree on the same answers: ``start < end`` and the marked ``text`` equals
``text[start:end]`` (code points, after NFC normalisation).
"""

from __future__ import annotations

import copy
import unicodedata
from typing import Any

from jsonschema import Draft202012Validator

from judgekit.review.campaign import Campaign, ReviewItem

DIALECT = "https://json-schema.org/draft/2020-12/schema"
CSCA_FIELDS = ("required_knowledge", "time_sensitive", "cs_label", "subject_category")
SIDE = "omissions are marked in the source, every other type in the translation"
NONE = "'no errors' is chosen exactly when no error is marked"


def _ids(rows: list[dict[str, Any]]) -> list[str]:
    return [str(row["id"]) for row in rows]


def _mqm_answer(options: dict[str, Any]) -> dict[str, Any]:
    """MQM: ``no_errors`` exactly when ``errors`` is empty; each error's side, type (of that
    side: omissions are marked in the source), severity, offsets and quote."""
    on_side: dict[str, list[str]] = {"source": [], "translation": []}
    for t in options["types"]:
        on_side["source" if t["quote_from"] == "source" else "translation"].append(t["id"])
    error = {
        "type": "object",
        "required": ["side", "start", "end", "text", "type", "severity"],
        "properties": {
            "side": {"enum": ["source", "translation"]},
            "start": {"type": "integer", "minimum": 0},
            "end": {"type": "integer", "minimum": 1},
            "text": {"type": "string"},
            "type": {"enum": on_side["source"] + on_side["translation"]},
            "severity": {"enum": _ids(options["severities"])},
        },
        "if": {"properties": {"side": {"const": "source"}}},
        "then": {"properties": {"type": {"enum": on_side["source"], "description": SIDE}}},
        "else": {"properties": {"type": {"enum": on_side["translation"], "description": SIDE}}},
    }
    return {
        "type": "object",
        "required": ["no_errors", "errors"],
        "properties": {
            "no_errors": {"type": "boolean"},
            "errors": {"type": "array", "items": error},
        },
        "if": {"properties": {"errors": {"minItems": 1}}},
        "then": {"properties": {"no_errors": {"const": False, "description": NONE}}},
        "else": {"properties": {"no_errors": {"const": True, "description": NONE}}},
    }


def task_schema(campaign: Campaign) -> dict[str, Any]:
    """The task's part of every item's schema: ``$defs/answer``, a done answer; ``$defs/draft``,
    an unfinished one as the page keeps it (questions not yet answered are ``null``; an MQM
    draft may have neither errors nor "no errors"). The importer reads only done answers; the
    page's Load JSON checks a row that is not done against ``draft`` before taking it."""
    task, opts = campaign.task, campaign.options
    if task == "meanings":
        answer = {
            "type": "object",
            "required": ["valid"],
            "properties": {"valid": {"type": "array", "items": {"type": "boolean"}}},
        }
        draft = copy.deepcopy(answer)
        draft["properties"]["valid"]["items"] = {"type": ["boolean", "null"]}
    elif task == "csca":
        answer = {
            "type": "object",
            "required": list(CSCA_FIELDS),
            "properties": {
                name: {"enum": _ids(opts[name]), "description": "one of the rubric's values"}
                for name in CSCA_FIELDS
            },
        }
        draft = copy.deepcopy(answer)
        for name in CSCA_FIELDS:
            draft["properties"][name]["enum"].append(None)
    elif task == "postedit":
        sides = list(opts.get("sides", ["source", "english"]))
        answer = {
            "type": "object",
            "required": sides,
            "properties": {side: {"type": "string"} for side in sides},
        }
        draft = answer
    else:
        answer = _mqm_answer(opts)
        draft = {k: v for k, v in answer.items() if k not in ("if", "then", "else")}
    return {"$schema": DIALECT, "$defs": {"answer": answer, "draft": draft}}


def item_part(campaign: Campaign, item: ReviewItem) -> dict[str, Any]:
    """The item's own limits: the number of meanings (meanings), the largest ``end`` on each
    side, in code points (mqm); ``{}`` for the other tasks."""
    if campaign.task == "meanings":
        n = len(item.data["meanings"])
        part = {"minItems": n, "maxItems": n, "description": f"one true/false per meaning ({n})"}
        return {"properties": {"valid": part}}
    if campaign.task == "mqm":
        src, tgt = len(item.data["source"]), len(item.data["translation"])
        error = {
            "if": {"properties": {"side": {"const": "source"}}},
            "then": {"properties": {"end": {"maximum": src, "description": f"{src} code points"}}},
            "else": {"properties": {"end": {"maximum": tgt, "description": f"{tgt} code points"}}},
        }
        return {"properties": {"errors": {"items": error}}}
    return {}


def item_schema(task: dict[str, Any], part: dict[str, Any], kind: str = "answer") -> dict[str, Any]:
    """One item's full schema: ``task`` (:func:`task_schema`) and ``part`` (:func:`item_part`);
    ``kind``: ``"answer"`` (done) or ``"draft"`` (not done)."""
    both = [{"$ref": f"#/$defs/{kind}"}, part]
    return {"$schema": DIALECT, "$defs": task["$defs"], "allOf": both}


def _where(path: Any) -> str:
    return "/" + "/".join(str(p) for p in path) if path else "the answer"


def answer_problem(
    campaign: Campaign, item: ReviewItem, answer: Any, kind: str = "answer"
) -> str | None:
    """Why ``answer`` is not a valid done answer of ``item`` (``kind="draft"``: a valid
    unfinished one), or None when it is.

    The message names the place in the answer (a JSON pointer such as ``/errors/0/end``), the
    rule broken and the rule's ``description`` where it has one: the deepest problem (the page
    picks the same), then the span rule.
    """
    schema = item_schema(task_schema(campaign), item_part(campaign, item), kind)
    errors = list(Draft202012Validator(schema).iter_errors(answer))
    if errors:
        deepest = max(errors, key=lambda e: len(e.absolute_path))
        nested = [e for e in deepest.context or []]
        worst = max(nested, key=lambda e: len(e.absolute_path)) if nested else deepest
        why = worst.schema.get("description") if isinstance(worst.schema, dict) else None
        return f"{_where(worst.absolute_path)}: {worst.message}" + (f" ({why})" if why else "")
    if campaign.task == "mqm":
        for n, err in enumerate(answer["errors"]):
            problem = span_problem(item.data[err["side"]], err)
            if problem:
                return f"/errors/{n}: {problem}"
    return None


def span_problem(text: str, error: dict[str, Any]) -> str | None:
    """``start < end`` and ``error["text"] == text[start:end]`` (code points, NFC), or why not."""
    start, end, marked = int(error["start"]), int(error["end"]), error["text"]
    if start >= end:
        return f"start {start} is not before end {end}"
    found = text[start:end]
    if unicodedata.normalize("NFC", found) != unicodedata.normalize("NFC", marked):
        return f"offsets [{start}, {end}) mark {found!r}, not {marked!r}"
    return None
