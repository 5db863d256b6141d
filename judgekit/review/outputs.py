"""What ``judgekit review import`` writes, in the layouts the existing commands read unchanged.

Into the output folder, from the done items of every rater:

* ``labels.csv``: long ``item,rater,label`` (``judgekit calibrate agreement|judge``). meanings:
  one row per meaning, item ``<item>|m<i>``, label ``true``/``false`` (as a spilling run's
  ``labels.csv``); csca: label = CS/CA, plus one column per other question, and
  ``labels.<question>.csv`` per question; mqm: per segment ``no-error`` or the worst severity
  of its errors (``minor``/``major``/``critical``), the scheme the errors judge's labels use in
  ``judgekit view`` (:func:`judgekit.data.vocabulary.mqm_segment_label`); postedit: the
  segment's ``kept``/``edited``/``reverted``.
* mqm: ``human_mqm.tsv``, Google's MQM TSV (Marot's columns ``system doc seg_id rater source
  target category severity``, plus ``type``; a segment without a ``seg_id`` gets its item id
  there, as ``calibrate errors`` matches it): one row per error with the span in ``<v>..</v>``
  (in the source for omissions), one ``No-error`` row per clean segment; categories are the
  rubric types' MQM categories, severities Minor/Major/Critical. Read by
  :func:`judgekit.metrics.mqm.read_mqm_tsv` (errors-run calibration). Tabs and line breaks in a
  text become spaces (the format has no quoting) and are counted in ``import.json``.
* postedit: ``postedit/<rater>/<side>.{original,llm,edited}.txt`` (line-aligned, the files of
  ``judgekit contrast postedit``) and ``postedit.csv`` (per rater and item: kept / edited /
  reverted and edit spans, :func:`judgekit.metrics.postedit.postedit_stats`, 13a tokens).
* ``qc.csv`` / ``qc.json``: per rater: items done, seconds per done item (median, mean), gold
  items and gold accuracy (module :func:`gold_correct`); csca: ``rule_contradictions``, the done
  items whose CS/CA label contradicts the rubric's rule shown on the page (required knowledge
  ``none`` means CA, ``cultural`` / ``regional`` / ``dialect`` mean CS; :func:`contradicts_rule`).
"""

from __future__ import annotations

import hashlib
import re
import statistics
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data.atomic import write_frame, write_text
from judgekit.data.jsonfile import write_json
from judgekit.data.vocabulary import mqm_segment_label
from judgekit.errors import InputError, JudgekitError
from judgekit.review.campaign import Campaign
from judgekit.review.checks import Annotation, RaterFile

CSCA_QUESTIONS = ("required_knowledge", "time_sensitive", "subject_category")
SIDES = ("source", "english")


def _done(files: list[RaterFile]) -> list[Annotation]:
    return [a for f in files for a in f.annotations if a.done]


def label_rows(campaign: Campaign, files: list[RaterFile]) -> list[dict[str, Any]]:
    """The long label rows of every done item (module docstring)."""
    items = campaign.by_id()
    rows: list[dict[str, Any]] = []
    for a in _done(files):
        ans = a.answer or {}
        if campaign.task == "meanings":
            rows += [{"item": f"{a.item}|m{i}", "rater": a.rater, "label": str(v).lower()}
                     for i, v in enumerate(ans["valid"])]  # fmt: skip
        elif campaign.task == "csca":
            rows.append({"item": a.item, "rater": a.rater, "label": ans["cs_label"]}
                        | {q: ans[q] for q in CSCA_QUESTIONS})  # fmt: skip
        elif campaign.task == "mqm":
            severities = [e["severity"] for e in ans["errors"]]
            label = mqm_segment_label(bool(ans["no_errors"]), severities)
            rows.append({"item": a.item, "rater": a.rater, "label": label})
        else:
            rows.append(
                {"item": a.item, "rater": a.rater, "label": segment_status(items[a.item], ans)}
            )
    return rows


def _norm(text: str) -> str:
    return " ".join(text.split())


def segment_status(item: Any, answer: dict[str, Any]) -> str:
    """``kept`` / ``reverted`` / ``edited`` of a post-edited pair (as postedit_stats)."""
    llm, orig = item.data["llm"], item.data["original"]
    if all(_norm(answer[s]) == _norm(llm[s]) for s in SIDES):
        return "kept"
    return "reverted" if all(_norm(answer[s]) == _norm(orig[s]) for s in SIDES) else "edited"


_BREAKS = re.compile(r"[\t\r\n]")


def _cell(text: str, changed: list[int]) -> str:
    clean = _BREAKS.sub(" ", text)
    if clean != text:
        changed.append(1)
    return clean


def mqm_rows(campaign: Campaign, files: list[RaterFile]) -> tuple[list[list[str]], int]:
    """Google MQM TSV rows (header first) and the number of cells whose tabs or line breaks
    became spaces.

    Raises:
        JudgekitError: a segment text that holds ``<v>`` or ``</v>`` (the span markers).
    """
    items, types = campaign.by_id(), {t["id"]: t for t in campaign.options["types"]}
    header = [
        "system",
        "doc",
        "seg_id",
        "rater",
        "source",
        "target",
        "category",
        "severity",
        "type",
    ]
    rows, changed = [header], []
    for a in _done(files):
        d = items[a.item].data
        for side in ("source", "translation"):
            if "<v>" in d[side] or "</v>" in d[side]:
                raise JudgekitError(f"item '{a.item}': its {side} holds an MQM span marker <v>")
        head = [d["system"], d["doc"], d["seg_id"] or a.item, a.rater]  # no seg_id: the item id
        if a.answer["no_errors"]:
            rows.append(head + [d["source"], d["translation"], "No-error", "no-error", ""])
            continue
        for e in a.answer["errors"]:
            texts = {"source": d["source"], "translation": d["translation"]}
            t = texts[e["side"]]
            texts[e["side"]] = f"{t[: e['start']]}<v>{t[e['start'] : e['end']]}</v>{t[e['end'] :]}"
            kind = types[e["type"]]
            rows.append(head + [texts["source"], texts["translation"], kind["mqm_category"],
                                e["severity"].capitalize(), kind["id"]])  # fmt: skip
    return [[_cell(c, changed) for c in row] for row in rows], len(changed)


def gold_correct(campaign: Campaign, item_id: str, answer: dict[str, Any]) -> float:
    """Share in [0, 1] of the gold item's expected answer that the rater matched: meanings,
    the meanings whose verdict matches; csca, the questions answered as expected; mqm, 1 when
    ``no_errors`` matches and every expected error span is overlapped by a marked span on its
    side (0 otherwise); postedit, 1 when the pair's status (``kept``/``edited``/``reverted``)
    is the expected ``status``."""
    expected, task = campaign.gold[item_id], campaign.task
    if task == "meanings":
        pairs = list(zip(expected["valid"], answer["valid"], strict=False))
        return sum(a == b for a, b in pairs) / len(pairs) if pairs else 0.0
    if task == "csca":
        keys = [k for k in expected if k in answer]
        return sum(expected[k] == answer[k] for k in keys) / len(keys) if keys else 0.0
    if task == "mqm":
        if bool(expected.get("no_errors")) != bool(answer["no_errors"]):
            return 0.0
        for want in expected.get("errors", []):
            if not any(e["side"] == want.get("side", "translation") and e["start"] < want["end"]
                       and want["start"] < e["end"] for e in answer["errors"]):  # fmt: skip
                return 0.0
        return 1.0
    return float(segment_status(campaign.by_id()[item_id], answer) == expected.get("status"))


def contradicts_rule(campaign: Campaign, answer: dict[str, Any]) -> bool:
    """True when a csca answer's ``cs_label`` is not the CS/CA its ``required_knowledge`` implies
    by the rubric's rule (the ``cs`` of each value, as the campaign's page showed it)."""
    implied = {o["id"]: o.get("cs") for o in campaign.options.get("required_knowledge", [])}
    cs = implied.get(answer.get("required_knowledge"))
    return cs is not None and answer.get("cs_label") != cs


def qc_rows(campaign: Campaign, files: list[RaterFile]) -> list[dict[str, Any]]:
    """One QC row per rater (module docstring)."""
    rows = []
    for f in files:
        done = [a for a in f.annotations if a.done]
        secs = [a.seconds for a in done if a.seconds is not None]
        gold = [
            gold_correct(campaign, a.item, a.answer or {}) for a in done if a.item in campaign.gold
        ]
        rows.append({
            "rater": f.rater, "file": f.file, "show_judge": f.show_judge,
            "items": len(campaign.items), "done": len(done),
            "not_done": len(campaign.items) - len(done),
            "median_seconds": round(statistics.median(secs), 3) if secs else None,
            "mean_seconds": round(statistics.fmean(secs), 3) if secs else None,
            "gold_items": len(campaign.gold), "gold_done": len(gold),
            "gold_accuracy": statistics.fmean(gold) if gold else None,
            "rule_contradictions": sum(contradicts_rule(campaign, a.answer or {}) for a in done)
            if campaign.task == "csca" else None,
        })  # fmt: skip
    return rows


def postedit_outputs(campaign: Campaign, files: list[RaterFile], out: Path) -> list[dict[str, Any]]:
    """Write the per-rater line files and return the ``postedit.csv`` rows."""
    from judgekit.metrics.postedit import postedit_stats

    items, rows = campaign.by_id(), []
    for f in files:
        done = [a for a in f.annotations if a.done]
        if not done:
            continue
        folder = out / "postedit" / _safe(f.rater)
        folder.mkdir(parents=True, exist_ok=True)
        sides = {}
        for side in SIDES:
            versions = (
                [items[a.item].data["original"][side] for a in done],
                [items[a.item].data["llm"][side] for a in done],
                [a.answer[side] for a in done],
            )
            versions = tuple([_norm(t) for t in v] for v in versions)
            for name, lines in zip(("original", "llm", "edited"), versions, strict=True):
                write_text(folder / f"{side}.{name}.txt", "".join(x + "\n" for x in lines))
            sides[side] = versions
        write_text(folder / "ids.txt", "".join(a.item + "\n" for a in done))
        stats = postedit_stats(sides, tokenize="13a")
        for a, d in zip(done, stats.detail, strict=True):
            row: dict[str, Any] = {"rater": f.rater, "item": a.item, "status": d.status,
                                   "edited_sides": "+".join(d.edited_sides)}  # fmt: skip
            for name, e in d.sides.items():
                row |= {f"{name}_{k}": v for k, v in vars(e).items()}
            rows.append(row)
    return rows


def _safe(name: str) -> str:
    """A folder name for rater ``name``: the name itself where it is one (letters of any script,
    digits, ``.``, ``_``, ``-``), else its cleaned form plus 8 hex digits of its SHA-256, so that
    two raters (``a b`` and ``a-b``) never share a folder."""
    safe = re.sub(r"[^\w.-]+", "-", name)
    if safe != name or safe.strip(".") == "":
        safe = f"{safe}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}".lstrip(".")
    return safe


def write_outputs(campaign: Campaign, files: list[RaterFile], out: Path) -> dict[str, Any]:
    """Write every output of the campaign's task into ``out``; return ``import.json``'s content.

    Raises:
        InputError: ``out`` is a run directory (its labels.csv is the judge's, not to be lost).
    """
    if (out / "records.jsonl").is_file():
        raise InputError(out, "a run directory: its labels.csv is the judge's; give another --out")
    out.mkdir(parents=True, exist_ok=True)
    rows = label_rows(campaign, files)
    written = ["labels.csv", "qc.csv", "qc.json"]
    frame = pd.DataFrame(rows, columns=_columns(campaign.task))
    write_frame(frame, out / "labels.csv", index=False)
    notes: dict[str, Any] = {}
    if campaign.task == "csca":
        for q in CSCA_QUESTIONS:
            part = frame[["item", "rater", q]].rename(columns={q: "label"})
            write_frame(part, out / f"labels.{q}.csv", index=False)
            written.append(f"labels.{q}.csv")
    elif campaign.task == "mqm":
        tsv, changed = mqm_rows(campaign, files)
        write_text(out / "human_mqm.tsv", "".join("\t".join(r) + "\n" for r in tsv))
        written.append("human_mqm.tsv")
        notes["tsv_cells_with_tabs_or_breaks_replaced"] = changed
    elif campaign.task == "postedit":
        pe = postedit_outputs(campaign, files, out)
        write_frame(pd.DataFrame(pe), out / "postedit.csv", index=False)
        written += ["postedit.csv", "postedit/<rater>/<side>.{original,llm,edited}.txt"]
    qc = qc_rows(campaign, files)
    write_frame(pd.DataFrame(qc), out / "qc.csv", index=False)
    summary = {
        "campaign": campaign.id, "task": campaign.task, "raters": [f.rater for f in files],
        "labels": len(rows), "qc": qc, "files": written, **notes,
    }  # fmt: skip
    write_json(out / "qc.json", qc)
    write_json(out / "import.json", summary)
    return summary


def _columns(task: str) -> list[str]:
    return (
        ["item", "rater", "label", *CSCA_QUESTIONS]
        if task == "csca"
        else ["item", "rater", "label"]
    )
