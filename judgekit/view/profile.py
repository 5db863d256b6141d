"""The viewer profile of a pipeline (each defined beside its report, named by its registry
entry): the item a record judges, its label, its facets, the extra context its detail pane
shows and the headline of its summary.

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
from pathlib import Path
from typing import Any

from judgekit.view.data import RunData
from judgekit.view.headline import Row, items_rows

Record = dict[str, Any]


def meta_of(record: Record, name: str) -> Any:
    """The meta field ``name`` of a record, None when absent."""
    return (record.get("meta") or {}).get(name)


def parsed_of(record: Record) -> dict[str, Any]:
    """The parsed answer of an ok record, {} for any other."""
    parsed = record.get("parsed")
    return parsed if record.get("status") == "ok" and isinstance(parsed, dict) else {}


def single(field: str) -> Callable[[Record], list[tuple[str, str]]]:
    """Units of a one-label answer: ``[(item, parsed[field])]``."""

    def units(record: Record) -> list[tuple[str, str]]:
        label = parsed_of(record).get(field)
        item = meta_of(record, "item")
        return [] if label is None or item is None else [(str(item), str(label))]

    return units


def sample_raters(record: Record, multi: bool) -> list[str]:
    """The model and ``model#sK`` (K the sample index), the one a run with several samples
    names in its labels.csv first."""
    model = str(record.get("model"))
    sampled = f"{model}#s{record.get('sample_index') or 0}"
    return [sampled, model] if multi else [model, sampled]


def label_of(field: str) -> Callable[[Record], str | None]:
    """The label of a record: ``parsed[field]`` as text."""

    def label(record: Record) -> str | None:
        value = parsed_of(record).get(field)
        return None if value is None else str(value)

    return label


@dataclass(frozen=True)
class Profile:
    """The viewer's knowledge of one pipeline (module doc); ``headline``: the headline rows of
    its summary (:mod:`judgekit.view.headline`)."""

    item: Callable[[Record], str]
    label: Callable[[Record], str | None]
    units: Callable[[Record], list[tuple[str, str]]]
    facets: tuple[str, ...] = ()
    raters: Callable[[Record, bool], list[str]] = sample_raters
    extras: Callable[[RunData, dict[str, int]], dict[str, Any]] = lambda run, rows: {}
    headline: Callable[[dict[str, Any]], list[Row | None]] = items_rows


GENERIC = Profile(lambda r: str(r.get("key")), lambda r: None, lambda r: [], ())


def items_of_signature(
    run: RunData, load: Callable[[Path], list[dict[str, Any]]]
) -> tuple[list[dict[str, Any]], str]:
    """(rows, note) of the items file named in the run's signature, when it is still there
    with the sha256 the run recorded, read by ``load`` (path -> item rows; raises InputError
    on a bad file); else no rows and a note saying so."""
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
            rows = load(path)
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
