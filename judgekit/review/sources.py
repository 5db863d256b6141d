"""The items of a review campaign, per task, from a judgekit run directory or an items file.

=========  ============================================  ======================================
task       run directory (what it reads)                 items file (JSONL, one item a line)
=========  ============================================  ======================================
postedit   localise run (``localised.jsonl``)            ``id, original_source,
                                                         original_english, source, english``
meanings   spilling run (``records.jsonl``: generations  ``id, lang, word, translation, entry,
           and judgments; dictionaries/ for the entry)   meanings [{meaning, examples}]``
csca       cultural audit (the items of its              a benchmark items file
           ``annotations.jsonl``, from the items files   (:func:`judgekit.data.items.load_items`)
           named in ``summary.json``)
mqm        errors run (``segments.jsonl``)               segments (``SegmentItem``: id, source,
                                                         translation, system, doc, seg_id)
=========  ============================================  ======================================

Item ids are the run's own, so the imported labels join the run's ``labels.csv``: meanings
``<model>|<lang>|<word>|s<sample>`` (labels add ``|m<i>``, paper 002's 5 meanings), csca
``<benchmark>|<id>``, mqm the segment id, postedit ``<model>|<locale>|<pair id>``. The judge's
answer comes along where the run has one (shown only with ``--show-judge``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgekit.data import jsonl_objects, stored_path
from judgekit.errors import InputError
from judgekit.record_file import read_record_lines
from judgekit.review.campaign import ReviewItem


def _jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    return list(jsonl_objects(path))


def _need(path: Path, line: int, row: dict[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        if row.get(key) in (None, ""):
            raise InputError(path, f"missing '{key}'", line=line, field=key)


# -- postedit (Cultivar, paper 000, Sec. 2.3) -------------------------------------------------
def postedit_items(source: Path) -> list[ReviewItem]:
    """Localised pairs that passed the checks: original and LLM source and English sides."""
    path = source / "localised.jsonl" if source.is_dir() else source
    items = []
    for line, row in _jsonl(path):
        if row.get("excluded"):
            continue
        sides = ("original_source", "original_english", "source", "english")
        _need(path, line, row, ("id", *sides))
        for side in sides:
            if not isinstance(row[side], str):
                raise InputError(path, f"'{side}' must be text", line=line, field=side)
        model, locale = row.get("model", ""), row.get("locale", "")
        item_id = "|".join(str(p) for p in (model, locale, row["id"]) if p != "") or str(line)
        data = {
            "model": model,
            "locale": locale,
            "pair": str(row["id"]),
            "original": {"source": row["original_source"], "english": row["original_english"]},
            "llm": {"source": row["source"], "english": row["english"]},
        }
        items.append(ReviewItem(item_id, data))
    return items


# -- meanings (paper 002, Sec. 3.3) ---------------------------------------------------------------
def meanings_items(source: Path) -> list[ReviewItem]:
    """Judged items of a spilling run (or an items file): the word, its translation, the
    dictionary entry the judge saw and the 5 meanings with their examples."""
    if not source.is_dir():
        return [_meanings_row(source, line, row) for line, row in _jsonl(source)]
    from judgekit.lexicon.store import load_dictionary
    from judgekit.pipelines.spilling import render_entry

    gens: dict[tuple, dict[str, Any]] = {}
    judged: dict[tuple, list[bool]] = {}
    path = _records(source)
    read = read_record_lines(path)  # the one reader of records.jsonl: its current records
    for line, rec in zip(read.lines, read.records, strict=True):
        meta, stage = rec.get("meta") or {}, rec.get("stage")
        if rec.get("status") != "ok" or stage not in ("generate", "judge"):
            continue
        parsed = rec.get("parsed")
        valid = parsed.get("valid") if isinstance(parsed, dict) else None
        if not isinstance(parsed, dict) or (stage == "judge" and not isinstance(valid, list)):
            what = "meanings" if stage == "generate" else "5 verdicts ('valid')"
            raise InputError(path, f"not a spilling run: a {stage} record without its {what}",
                             line=line, field="parsed")  # fmt: skip
        who = rec.get("model") if stage == "generate" else meta.get("generator")
        key = (who, meta.get("lang"), meta.get("word"), meta.get("sample"))
        if stage == "generate":
            gens[key] = {"translation": meta.get("translation"), "answer": parsed}
        else:
            judged[key] = list(valid)  # type: ignore[arg-type]
    dictionaries: dict[str, Any] = {}
    items = []
    for key, gen in gens.items():
        if key not in judged:
            continue  # excluded from the run's rate: not labelled by the judge either
        model, lang, word, sample = key
        if lang not in dictionaries:
            dictionaries[lang] = load_dictionary(lang)
        entry = dictionaries[lang].get(gen["translation"])
        meanings = _meanings_of(gen["answer"])
        data = {
            "model": model, "lang": lang, "word": word, "translation": gen["translation"],
            "sample": sample, "entry": render_entry(entry) if entry else "",
            "meanings": meanings,
        }  # fmt: skip
        item_id = f"{model}|{lang}|{word}|s{sample}"
        items.append(ReviewItem(item_id, data, {"valid": judged[key]}))
    return sorted(items, key=lambda i: i.id)


def _records(run: Path) -> Path:
    path = run / "records.jsonl"
    if not path.is_file():
        raise InputError(run, "not a run directory: no records.jsonl in it")
    return path


def _meanings_of(answer: Any) -> list[dict[str, Any]]:
    if isinstance(answer, dict) and "meanings" in answer:
        return [
            {"meaning": m["meaning"], "examples": list(m["examples"])} for m in answer["meanings"]
        ]
    return [{"meaning": k, "examples": list(v)} for k, v in dict(answer).items()]


def _meanings_row(path: Path, line: int, row: dict[str, Any]) -> ReviewItem:
    _need(path, line, row, ("id", "lang", "word", "translation", "meanings"))
    meanings = row["meanings"]
    if not isinstance(meanings, list) or not all(
        isinstance(m, dict) and isinstance(m.get("meaning"), str) for m in meanings
    ):
        raise InputError(
            path, "expected a list of {meaning, examples}", line=line, field="meanings"
        )
    data = {
        "model": row.get("model", ""), "lang": row["lang"], "word": row["word"],
        "translation": row["translation"], "sample": row.get("sample", 0),
        "entry": row.get("entry", ""),
        "meanings": [{"meaning": m["meaning"], "examples": list(m.get("examples", []))}
                     for m in meanings],
    }  # fmt: skip
    judge = {"valid": row["valid"]} if isinstance(row.get("valid"), list) else None
    return ReviewItem(str(row["id"]), data, judge)


# -- csca (paper 001; Global-MMLU schema) -----------------------------------------------------
CSCA_FIELDS = ("required_knowledge", "time_sensitive", "cs_label", "subject_category")


def csca_items(source: Path) -> list[ReviewItem]:
    """Benchmark items (question and choices); from an audit run, with the judge's answer."""
    from judgekit.data.items import load_items

    if not source.is_dir():  # items without a language field: "und" (shown, not used)
        return [_csca_item(it) for it in load_items(source, language="und").items]
    summary = source / "summary.json"
    if not summary.is_file():
        raise InputError(source, "not a run directory: no summary.json in it")
    from judgekit.review.importer import read_json  # UTF-8 and JSON errors, located

    raw = read_json(summary)
    signature = raw.get("signature") if isinstance(raw, dict) else None
    if not isinstance(signature, dict):
        raise InputError(summary, "not a run summary: no signature object", field="signature")
    files, language = signature.get("items"), (signature.get("options") or {}).get("language")
    if not files:
        raise InputError(summary, "not a cultural audit: no items in its signature")
    judge: dict[str, dict[str, Any] | None] = {}  # the run's items: a --limit or split subset
    for _, row in _jsonl(source / "annotations.jsonl"):
        annotated = row.get("status") == "annotated"
        judge[row["key"]] = {f: row.get(f) for f in CSCA_FIELDS} if annotated else None
    items = []
    for f in files:
        path = stored_path(f["path"], summary, "items")
        for it in load_items(path, language=language, benchmark=f.get("benchmark")).items:
            if it.key in judge:
                items.append(_csca_item(it, judge[it.key]))
    return items


def _csca_item(it: Any, judge: dict[str, Any] | None = None) -> ReviewItem:
    data = {
        "benchmark": it.benchmark, "id": it.id, "language": it.language,
        "question": it.question, "choices": list(it.choices), "subject": it.subject or "",
    }  # fmt: skip
    return ReviewItem(it.key, data, judge)


def csca_options() -> dict[str, Any]:
    """The rubric's values and definitions (``rubrics/cultural_sensitivity.yaml``)."""
    from judgekit.pipelines.cultural_schemas import load_rubric

    r = load_rubric()
    return {
        "rubric": {"id": r.id, "version": r.version, "hash": r.hash},
        "required_knowledge": [{"id": v.id, "definition": v.definition, "cs": v.cs}
                               for v in r.required_knowledge],
        "time_sensitive": [{"id": v.id, "definition": v.definition} for v in r.time_sensitive],
        "cs_label": [{"id": v.id, "definition": v.definition} for v in r.cs_labels.values],
        "cs_rule": r.cs_labels.rule,
        "subject_category": [{"id": c.id, "definition": c.definition}
                             for c in r.subject_categories],
    }  # fmt: skip


# -- mqm ----------------------------------------------------------------------------------------
def mqm_items(source: Path) -> list[ReviewItem]:
    """Segments (source, translation); from an errors run, with the judge's located errors."""
    if not source.is_dir():
        from judgekit.pipelines.localisation_schemas import SegmentItem, read_records

        return [
            ReviewItem(s.id, _segment(s.model_dump())) for s in read_records(source, SegmentItem)
        ]
    items = []
    for _, row in _jsonl(source / "segments.jsonl"):
        judge = None
        if row.get("status") == "scored":
            keys = ("side", "start", "end", "type", "severity")
            errors = [{k: e[k] for k in keys} | {"text": e["quote"]} for e in row["errors"]]
            judge = {"no_errors": not errors, "errors": errors}
        items.append(ReviewItem(str(row["id"]), _segment(row), judge))
    return items


def _segment(row: dict[str, Any]) -> dict[str, Any]:
    keys = ("system", "doc", "seg_id", "locale", "source", "translation")
    return {k: "" if row.get(k) is None else str(row[k]) for k in keys}


def mqm_options() -> dict[str, Any]:
    """The error typology and severities (``rubrics/localisation_errors.yaml``)."""
    from judgekit.pipelines.localisation_schemas import load_rubric

    r = load_rubric()
    return {
        "rubric": {"id": r.id, "version": r.version, "hash": r.hash},
        "types": [{"id": t.id, "name": t.name, "group": t.group, "definition": t.definition,
                   "quote_from": t.quote_from, "mqm_category": t.mqm_category} for t in r.types],
        "severities": [{"id": s.id, "definition": s.definition} for s in r.severities],
    }  # fmt: skip


LOADERS = {
    "postedit": postedit_items,
    "meanings": meanings_items,
    "csca": csca_items,
    "mqm": mqm_items,
}
OPTIONS = {"csca": csca_options, "mqm": mqm_options}


def load_source(task: str, source: Path) -> tuple[list[ReviewItem], dict[str, Any]]:
    """The items of ``source`` for ``task``, and the task's page options.

    Raises:
        InputError: an unknown task, a missing source, a run of the wrong kind, a bad row.
    """
    if task not in LOADERS:
        raise InputError(None, f"unknown task '{task}' (use {', '.join(LOADERS)})", field="--task")
    if not source.exists():
        raise InputError(source, "no such file or directory")
    items = LOADERS[task](source)
    if not items:
        raise InputError(source, f"no items for the {task} task")
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise InputError(source, f"item id '{item.id}' occurs twice", field="id")
        seen.add(item.id)
    options = OPTIONS[task]() if task in OPTIONS else {}
    if task == "postedit":
        options = {"sides": ["source", "english"]}
    return items, options
