"""What the viewer knows of each pipeline: the item a record judges, its label, its facets, and
the extra context its detail pane shows.

* ``item``: the id of the thing a record is about (spilling: ``generator|lang|word|sN``;
  classify, pairwise and CS/CA: the item id; errors: the segment id; localise: ``locale|id``).
* ``label``: a record's answer in one word, for the table and its filter (classify: the label;
  CS/CA: ``cs_label``; spilling judge: ``k of 5 invalid``; errors: ``no-error`` or the worst
  MQM severity, the segment labels ``review import`` writes for an MQM campaign,
  :func:`judgekit.data.vocabulary.mqm_segment_label`; pairwise: ``output 1``, ``output 2`` or
  ``tie``, the verdict in the original outputs' identities whatever the order shown), None
  where a record has none (generations, failed calls).
* ``units``: the labelled units of a record in the id space of the run's ``labels.csv``
  (spilling: one per meaning, ``generator|lang|word|sN|mI`` with ``true``/``false``; paper 002,
  appendix A.3), which is what compare mode and ``--labels`` match on.
* ``raters``: the raters of the run's ``labels.csv`` a record's units belong to, its own first
  (the model, or ``model#sK`` with several samples; pairwise: ``judge#original`` /
  ``judge#swapped``, and the resolved ``judge`` for the original order's record).
* ``facets``: the meta fields offered as filters beside stage, model, status, reason and label.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from judgekit.data.digest import file_sha256
from judgekit.data.vocabulary import mqm_segment_label
from judgekit.pipelines import get_profile
from judgekit.view.data import RunData

Record = dict[str, Any]


def _meta(record: Record, name: str) -> Any:
    return (record.get("meta") or {}).get(name)


def _parsed(record: Record) -> dict[str, Any]:
    parsed = record.get("parsed")
    return parsed if record.get("status") == "ok" and isinstance(parsed, dict) else {}


def _spilling_item(record: Record) -> str:
    generator = _meta(record, "generator") or record.get("model")
    parts = (generator, _meta(record, "lang"), _meta(record, "word"), f"s{_meta(record, 'sample')}")
    return "|".join(str(p) for p in parts)


def _spilling_units(record: Record) -> list[tuple[str, str]]:
    valid = _parsed(record).get("valid")
    if record.get("stage") != "judge" or not isinstance(valid, list):
        return []
    base = _spilling_item(record)
    return [(f"{base}|m{i}", str(bool(v)).lower()) for i, v in enumerate(valid)]


def _spilling_label(record: Record) -> str | None:
    valid = _parsed(record).get("valid")
    if not isinstance(valid, list):
        return None
    return f"{sum(not v for v in valid)} of {len(valid)} invalid"


def _errors_label(record: Record) -> str | None:
    parsed = _parsed(record)
    if not parsed:
        return None
    errors = parsed.get("errors") if isinstance(parsed.get("errors"), list) else []
    found = [e.get("severity") for e in errors if isinstance(e, dict)]
    return mqm_segment_label(bool(parsed.get("no_errors")) or not errors, found)


def _single(field: str) -> Callable[[Record], list[tuple[str, str]]]:
    def units(record: Record) -> list[tuple[str, str]]:
        label = _parsed(record).get(field)
        item = _meta(record, "item")
        return [] if label is None or item is None else [(str(item), str(label))]

    return units


def _errors_units(record: Record) -> list[tuple[str, str]]:
    label = _errors_label(record)
    return [] if label is None else [(str(_meta(record, "id")), label)]


def sample_raters(record: Record, multi: bool) -> list[str]:
    """The model and ``model#sK`` (K the sample index), the one a run with several samples
    names in its labels.csv first."""
    model = str(record.get("model"))
    sampled = f"{model}#s{record.get('sample_index') or 0}"
    return [sampled, model] if multi else [model, sampled]


def _pairwise_raters(record: Record, multi: bool) -> list[str]:
    model, order = str(record.get("model")), _meta(record, "order")
    return [f"{model}#{order}", model] if order == "original" else [f"{model}#{order}"]


def _pairwise_verdict(record: Record) -> str | None:
    """The verdict in the original outputs' identities (a swapped record's "1" is output 2)."""
    verdict = _parsed(record).get("verdict")
    if verdict is None:
        return None
    if _meta(record, "order") == "swapped":
        verdict = {"1": "2", "2": "1"}.get(str(verdict), verdict)
    return str(verdict)


def _pairwise_label(record: Record) -> str | None:
    verdict = _pairwise_verdict(record)
    return None if verdict is None else ("tie" if verdict == "tie" else f"output {verdict}")


def _pairwise_units(record: Record) -> list[tuple[str, str]]:
    verdict, item = _pairwise_verdict(record), _meta(record, "item")
    return [] if verdict is None or item is None else [(str(item), verdict)]


@dataclass(frozen=True)
class Profile:
    """The viewer's knowledge of one pipeline (module doc)."""

    item: Callable[[Record], str]
    label: Callable[[Record], str | None]
    units: Callable[[Record], list[tuple[str, str]]]
    facets: tuple[str, ...] = ()
    raters: Callable[[Record, bool], list[str]] = sample_raters
    extras: Callable[[RunData, dict[str, int]], dict[str, Any]] = lambda run, rows: {}


def _label_of(field: str) -> Callable[[Record], str | None]:
    def label(record: Record) -> str | None:
        value = _parsed(record).get(field)
        return None if value is None else str(value)

    return label


def profile(pipeline: str) -> Profile:
    """The profile of ``pipeline`` (its registry entry's, :mod:`judgekit.pipelines`; a generic
    one, keyed by record, for any other)."""
    found = get_profile(pipeline)
    return GENERIC if found is None else found


def extras(run: RunData, rows_by_key: dict[str, int]) -> dict[str, Any]:
    """The pipeline context of the detail pane, keyed so the page finds it from a row.

    * spilling: ``dictionary`` (``lang|translation`` -> the entry as the judge saw it, rendered
      by :func:`judgekit.pipelines.spilling.render_entry`), ``generation`` (judge row -> row of
      the generation it judged) and ``dictionary_note`` when a dictionary changed since the run;
    * errors: ``segments`` (segment id -> source, translation and located spans);
    * classify: ``items`` (item id -> its text); pairwise: ``items`` (item id ->
      instruction, both outputs, gold, subset) and ``verdicts`` (``judge|item`` -> the
      verdict of each order, the resolved verdict and its status, from verdicts.csv); both
      with ``items_note`` when the texts come from elsewhere than the run's items.jsonl;
    * localise: ``originals`` (``locale|id`` -> the input pair); CS/CA: ``annotations`` (item
      key -> the item's outcome: status, label, evidence found, rule consistency, per judge).
    """
    return profile(run.pipeline).extras(run, rows_by_key)


def _errors_extras(run: RunData, rows_by_key: dict[str, int]) -> dict[str, Any]:
    keep = ("source", "translation", "errors", "status", "reason", "mqm")
    return {"segments": {str(s.get("id")): {k: s.get(k) for k in keep}
                         for s in run.side.get("segments.jsonl", [])}}  # fmt: skip


def _localise_extras(run: RunData, rows_by_key: dict[str, int]) -> dict[str, Any]:
    return {"originals": {f"{p.get('locale')}|{p.get('id')}": {
        "source": p.get("original_source"), "english": p.get("original_english")}
        for p in run.side.get("localised.jsonl", [])}}  # fmt: skip


def _cultural_extras(run: RunData, rows_by_key: dict[str, int]) -> dict[str, Any]:
    keep = ("subject", "status", "cs_label", "evidence_found", "rule_consistent", "by_judge")
    return {"annotations": {str(a.get("key")): {k: a.get(k) for k in keep}
                            for a in run.side.get("annotations.jsonl", [])}}  # fmt: skip


ITEM_FIELDS = {"classify": {"text": "text"},
               "pairwise": {"input": "input", "output_1": "output_1", "output_2": "output_2",
                            "gold": "label", "subset": "subset"}}  # fmt: skip


def _judged_items(run: RunData, rows_by_key: dict[str, int] | None = None) -> dict[str, Any]:
    """classify / pairwise: the items the judge saw (the run's items.jsonl; for a run made
    before judgekit wrote it, the items file of the signature when its sha256 is the run's)."""
    rows, note = run.side.get("items.jsonl"), None
    if rows is None:
        rows, note = _items_of_signature(run)
    keep = ITEM_FIELDS[run.pipeline]
    if run.pipeline == "classify":  # id -> text: 50,000 items cost their texts, little more
        items: dict[str, Any] = {str(r.get("id")): r.get("text") for r in rows}
    else:
        items = {str(r.get("id")): {k: r.get(f) for k, f in keep.items()} for r in rows}
    out: dict[str, Any] = {"items": items}
    if note:
        out["items_note"] = note
    if run.pipeline == "pairwise":
        fields = ("original", "swapped", "resolved", "status", "gold")
        out["verdicts"] = {
            f"{v.get('judge')}|{v.get('item')}": {k: v.get(k) or None for k in fields}
            for v in run.side.get("verdicts.csv", [])
        }
    return out


def _items_of_signature(run: RunData) -> tuple[list[dict[str, Any]], str]:
    """(rows, note) of the items file named in the run's signature, when it is still there
    with the sha256 the run recorded; else no rows and a note saying so."""
    from dataclasses import asdict

    from judgekit.data import resolve_path
    from judgekit.errors import InputError, JudgekitError
    from judgekit.signature import file_hash

    recorded = (run.summary.get("signature") or {}).get("data") or {}
    for name, sha in recorded.items():
        try:
            path = resolve_path(name)
        except JudgekitError:  # gone, or a data set that cannot be fetched now
            continue
        if sha is None or file_hash(path) != sha:
            continue
        try:
            if run.pipeline == "pairwise":
                from judgekit.data.pairwise import load_pairs

                rows = [
                    asdict(i) | {"input": i.instruction, "label": i.gold} for i in load_pairs(path)
                ]
            else:
                from judgekit.pipelines.classify import load_items

                rows = [asdict(i) for i in load_items(path)]
        except InputError:
            continue
        return rows, (
            f"the item texts are read from {path} (its sha256 is the one this run recorded; "
            "the run directory has no items.jsonl)"
        )
    return [], (
        "this run has no items.jsonl and the items file of its signature is gone or changed: "
        "the item texts are not shown"
    )


def _spilling_extras(run: RunData, rows_by_key: dict[str, int]) -> dict[str, Any]:
    from judgekit.lexicon.store import dictionaries_dir, load_dictionary
    from judgekit.pipelines.spilling import render_entry

    generated: dict[tuple[Any, ...], int] = {}
    for record in run.records:
        if record.get("stage") == "generate":
            meta = record.get("meta") or {}
            ident = (record.get("model"), meta.get("lang"), meta.get("word"), meta.get("sample"))
            generated[ident] = rows_by_key[record["key"]]
    links: dict[int, int] = {}
    wanted: set[tuple[str, str]] = set()
    for record in run.records:
        if record.get("stage") == "judge":
            meta = record.get("meta") or {}
            ident = (meta.get("generator"), meta.get("lang"), meta.get("word"), meta.get("sample"))
            if ident in generated:
                links[rows_by_key[record["key"]]] = generated[ident]
            wanted.add((str(meta.get("lang")), str(meta.get("translation"))))
    dictionary, changed = {}, []
    recorded = (run.summary.get("signature") or {}).get("data_sha256") or {}
    for lang in sorted({lang for lang, _ in wanted}):
        path = dictionaries_dir() / f"{lang}.jsonl"
        if path.is_file() and recorded.get(path.name) not in (None, file_sha256(path, 16)):
            changed.append(path.name)
        entries = load_dictionary(lang)
        for wlang, word in wanted:
            if wlang == lang and word in entries:
                dictionary[f"{lang}|{word}"] = render_entry(entries[word])
    out: dict[str, Any] = {"dictionary": dictionary, "generation": links}
    if changed:
        out["dictionary_note"] = (
            f"{', '.join(changed)} changed since this run (its sha256 differs from the run's "
            "signature): the entry shown is today's, not necessarily the one the judge saw"
        )
    return out


# The profile of each pipeline (its registry entry names it: judgekit.pipelines.PIPELINES)
SPILLING = Profile(_spilling_item, _spilling_label, _spilling_units, ("lang", "generator"),
                   extras=_spilling_extras)  # fmt: skip
CLASSIFY = Profile(lambda r: str(_meta(r, "item")), _label_of("label"), _single("label"), (),
                   extras=_judged_items)  # fmt: skip
CULTURAL = Profile(
    lambda r: str(_meta(r, "item")),
    _label_of("cs_label"),
    _single("cs_label"),
    ("language",),
    extras=_cultural_extras,
)
ERRORS = Profile(lambda r: str(_meta(r, "id")), _errors_label, _errors_units, ("system",),
                 extras=_errors_extras)  # fmt: skip
PAIRWISE = Profile(
    lambda r: str(_meta(r, "item")),
    _pairwise_label,
    _pairwise_units,
    ("order",),
    _pairwise_raters,
    _judged_items,
)
LOCALISE = Profile(
    lambda r: f"{_meta(r, 'locale')}|{_meta(r, 'id')}",
    lambda r: None,
    lambda r: [],
    ("locale",),
    extras=_localise_extras,
)
GENERIC = Profile(lambda r: str(r.get("key")), lambda r: None, lambda r: [], ())
