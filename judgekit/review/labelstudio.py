"""Label Studio interop: the campaign's items as Label Studio tasks with a labelling config, and
Label Studio's JSON export read back into the same annotations as judgekit's own pages.

Export (``judgekit review export-labelstudio``): ``tasks.json`` (a list of ``{"data": {...}}``
tasks; ``data`` holds the item's texts as flat strings plus ``judgekit_campaign``,
``judgekit_id`` and ``judgekit_hash``; postedit tasks carry a prediction that pre-fills the edit
boxes with the LLM version) and ``config.xml`` (the labelling interface), for a project made
with that config and those tasks imported.

Import: Label Studio's JSON export ("JSON" in the Export dialog; the task format of
labelstud.io/guide/export and /guide/task_format): a list of tasks, each with its ``data`` and
``annotations`` (``completed_by``, ``result`` items ``{from_name, to_name, type, value}``,
``was_cancelled``, ``lead_time`` seconds). The rater is ``completed_by`` (its ``email`` where it
is an object, else ``labelstudio-<id>``). Span offsets in ``value.start``/``value.end`` count
UTF-16 units as browsers do; they are converted to code points and checked against
``value.text``. An annotation that does not answer every question is kept as not done.
"""

from __future__ import annotations

import json
from collections import defaultdict
from html import escape
from pathlib import Path
from typing import Any

from judgekit.data.atomic import write_text
from judgekit.data.vocabulary import canonical_id
from judgekit.errors import InputError
from judgekit.review.campaign import Campaign, ReviewItem
from judgekit.review.checks import Annotation, RaterFile, check_answer, check_item, check_seconds

CSCA = ("required_knowledge", "time_sensitive", "cs_label", "subject_category")


def _attr(text: str) -> str:
    return escape(str(text), quote=True)


def _choices(name: str, to: str, values: list[str]) -> str:
    inner = "".join(f'<Choice value="{_attr(v)}"/>' for v in values)
    return f'<Choices name="{name}" toName="{to}" choice="single" required="true">{inner}</Choices>'


def labelling_config(campaign: Campaign) -> str:
    """The Label Studio labelling config (XML) of the campaign's task."""
    task, opts = campaign.task, campaign.options
    parts: list[str] = []
    if task == "meanings":
        parts += [
            '<Header value="$word ($lang): $translation"/>',
            '<Text name="entry" value="$entry"/>',
        ]
        n = max(len(i.data["meanings"]) for i in campaign.items)
        for i in range(n):
            parts += [f'<Text name="meaning{i}" value="$meaning{i}"/>',
                      _choices(f"valid{i}", f"meaning{i}", ["valid", "invalid"])]  # fmt: skip
    elif task == "csca":
        parts += [
            '<Text name="question" value="$question"/>',
            '<Text name="choices" value="$choices"/>',
        ]
        parts += [_choices(f, "question", [o["id"] for o in opts[f]]) for f in CSCA]
    elif task == "mqm":
        parts += [
            '<Text name="source" value="$source"/>',
            '<Text name="translation" value="$translation"/>',
        ]
        for side in ("source", "translation"):
            labels = [f"{t['id']}/{s['id']}" for t in opts["types"] for s in opts["severities"]
                      if (t["quote_from"] == "source") == (side == "source")]  # fmt: skip
            inner = "".join(f'<Label value="{_attr(v)}"/>' for v in labels)
            parts.append(f'<Labels name="errors_{side}" toName="{side}">{inner}</Labels>')
        parts.append('<Choices name="no_errors" toName="translation" choice="single">'
                     '<Choice value="no errors"/></Choices>')  # fmt: skip
    else:
        for side in ("source", "english"):
            parts += [f'<Text name="original_{side}" value="$original_{side}"/>',
                      f'<Text name="llm_{side}" value="$llm_{side}"/>',
                      f'<TextArea name="{side}" toName="llm_{side}" maxSubmissions="1" '
                      'editable="true" required="true"/>']  # fmt: skip
    return "<View>\n  " + "\n  ".join(parts) + "\n</View>\n"


def task_data(campaign: Campaign, item: ReviewItem) -> dict[str, Any]:
    """The flat ``data`` of one Label Studio task (strings only)."""
    d = item.data
    data: dict[str, Any] = {"judgekit_campaign": campaign.id, "judgekit_id": item.id,
                            "judgekit_hash": item.hash}  # fmt: skip
    if campaign.task == "meanings":
        data |= {k: str(d[k]) for k in ("word", "lang", "translation", "entry")}
        for i, m in enumerate(d["meanings"]):
            data[f"meaning{i}"] = m["meaning"] + "".join(f"\n- {x}" for x in m["examples"])
    elif campaign.task == "csca":
        data |= {
            "question": d["question"],
            "choices": "\n".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(d["choices"])),
        }
    elif campaign.task == "mqm":
        data |= {"source": d["source"], "translation": d["translation"]}
    else:
        for side in ("source", "english"):
            data |= {f"original_{side}": d["original"][side], f"llm_{side}": d["llm"][side]}
    return data


def export_labelstudio(campaign: Campaign, out: Path) -> tuple[Path, Path]:
    """Write ``tasks.json`` and ``config.xml`` into ``out``; return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    tasks = []
    for item in campaign.items:
        task: dict[str, Any] = {"data": task_data(campaign, item)}
        if campaign.task == "postedit":
            result = [
                {
                    "from_name": s,
                    "to_name": f"llm_{s}",
                    "type": "textarea",
                    "value": {"text": [item.data["llm"][s]]},
                }
                for s in ("source", "english")
            ]
            task["predictions"] = [{"model_version": "llm", "result": result}]  # fmt: skip
        tasks.append(task)
    tasks_path, config_path = out / "tasks.json", out / "config.xml"
    write_text(tasks_path, json.dumps(tasks, ensure_ascii=False, indent=1) + "\n")
    write_text(config_path, labelling_config(campaign))
    return tasks_path, config_path


def _rater(completed_by: Any) -> str:
    """The rater's name (NFC, as every label reader reads names)."""
    if isinstance(completed_by, dict):
        name = str(completed_by.get("email") or f"labelstudio-{completed_by.get('id')}")
    else:
        name = f"labelstudio-{completed_by}"
    return canonical_id(name) or name


def _u16_to_cp(text: str, u16: int) -> int:
    return len(text.encode("utf-16-le")[: 2 * u16].decode("utf-16-le", errors="ignore"))


def _span(path: Path, item: ReviewItem, side: str, value: dict[str, Any]) -> tuple[int, int]:
    text, start, end = item.data[side], value.get("start"), value.get("end")
    if not isinstance(start, int) or not isinstance(end, int):
        raise InputError(path, f"item '{item.id}': a span without start/end", field="result")
    cs, ce = _u16_to_cp(text, start), _u16_to_cp(text, end)
    if (
        value.get("text") is not None
        and text[cs:ce] != value["text"]
        and text[start:end] == value["text"]
    ):
        return start, end  # offsets already in code points
    return cs, ce


def answer_of(path: Path, campaign: Campaign, item: ReviewItem, result: list[dict]) -> dict | None:
    """The judgekit answer of one Label Studio annotation, or None when a question is left."""
    by_name: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in result:
        by_name[str(r.get("from_name"))].append(r.get("value") or {})
    one = {
        k: (v[0].get("choices") or [None])[0] for k, v in by_name.items() if v and "choices" in v[0]
    }
    task = campaign.task
    if task == "meanings":
        valid = [one.get(f"valid{i}") for i in range(len(item.data["meanings"]))]
        return None if None in valid else {"valid": [v == "valid" for v in valid]}
    if task == "csca":
        answer = {f: one.get(f) for f in CSCA}
        return None if None in answer.values() else answer
    if task == "postedit":
        texts = {s: (by_name[s][0].get("text") or [None])[0] if by_name.get(s) else None
                 for s in ("source", "english")}  # fmt: skip
        return None if None in texts.values() else {**texts, "confirmed": True}
    errors = []
    for side in ("source", "translation"):
        for value in by_name.get(f"errors_{side}", []):
            label = str((value.get("labels") or ["/"])[0])
            if "/" not in label:
                raise InputError(path, f"item '{item.id}': span label '{label}' is not "
                                 "TYPE/severity", field="result")  # fmt: skip
            kind, severity = label.split("/", 1)
            start, end = _span(path, item, side, value)
            errors.append({"side": side, "start": start, "end": end, "text": value.get("text"),
                           "type": kind, "severity": severity})  # fmt: skip
    none = one.get("no_errors") == "no errors"
    return {"no_errors": none, "errors": errors} if (none or errors) else None


def _annotations(path: Path, n: int, annotations: Any) -> list[dict[str, Any]]:
    """Task ``n``'s annotations, checked to be objects whose ``result`` is a list of objects
    with an object ``value`` (the shape of Label Studio's JSON export)."""
    annotations = [] if annotations is None else annotations
    if not isinstance(annotations, list) or not all(isinstance(a, dict) for a in annotations):
        raise InputError(path, f"task {n}: 'annotations' must be a list of objects",
                         field="annotations")  # fmt: skip
    for ann in annotations:
        result = ann.get("result") or []
        if not isinstance(result, list) or not all(
            isinstance(r, dict) and isinstance(r.get("value") or {}, dict) for r in result
        ):
            raise InputError(path, f"task {n}: an annotation's 'result' must be a list of "
                             "objects with an object 'value'", field="result")  # fmt: skip
    return annotations


def read_labelstudio(path: Path, tasks: list[Any], campaign: Campaign) -> list[RaterFile]:
    """The annotations of a Label Studio JSON export, one :class:`RaterFile` per annotator.

    Raises:
        InputError: a task of another campaign, an item not in the campaign or edited, or an
            answer that fails the checks of :func:`judgekit.review.checks.check_answer`.
    """
    items = campaign.by_id()
    per_rater: dict[str, list[Annotation]] = defaultdict(list)
    for n, task in enumerate(tasks, 1):
        data = task.get("data") if isinstance(task, dict) else None
        if not isinstance(data, dict) or "judgekit_id" not in data:
            raise InputError(path, f"task {n}: no judgekit_id in its data (not exported by "
                             "judgekit review export-labelstudio)", field="data")  # fmt: skip
        if data.get("judgekit_campaign") != campaign.id:
            raise InputError(path, f"task {n}: campaign {data.get('judgekit_campaign')}, not "
                             f"{campaign.id}", field="judgekit_campaign")  # fmt: skip
        item = check_item(path, items, data["judgekit_id"], data.get("judgekit_hash"))
        for ann in _annotations(path, n, task.get("annotations")):
            if ann.get("was_cancelled"):
                continue
            answer = answer_of(path, campaign, item, ann.get("result") or [])
            if answer is not None:
                check_answer(path, campaign, item, answer)
            seconds = ann.get("lead_time")
            per_rater[_rater(ann.get("completed_by"))].append(
                Annotation(
                    _rater(ann.get("completed_by")),
                    item.id,
                    answer,
                    answer is not None,
                    check_seconds(path, item, seconds, "lead_time"),
                    str(path),
                )  # fmt: skip
            )
    return [RaterFile(r, str(path), False, anns) for r, anns in per_rater.items()]
