"""A run's records as the compact, column-wise table the page reads.

Columns that repeat a few values (stage, model, status, reason kind, label, prompt, facets) are
dictionary-encoded: ``{"v": [distinct values], "c": [one code per row]}`` (``"c": null`` when
there is one value); numbers are lists, one entry per row, or one number when every row holds
it; the rest are plain lists. A record's ``parsed`` answer is left out (``parsed_is_raw`` = 1) when
it is exactly the JSON of its ``raw`` text, which the page parses back: most ok records then
cost their raw text once, not twice; the other answers are ``{row: parsed}`` (rows without one
left out). A record's ``label_probs`` ({label: p}) are ``{row: label_probs}`` (rows without
them left out). The rest of a record's metadata is column-wise too: ``{"names": [...], "cols":
{name: {"v": [one value per row], "absent": [rows without it]}}}``. Nothing is truncated.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from itertools import repeat
from operator import itemgetter
from typing import Any

from pydantic_core import from_json

from judgekit.view.profiles import Profile

PLAIN = ("stage", "role", "route", "model", "status", "served_by", "prompt_id", "prompt_hash",
         "schema_name")  # record fields kept as they are, dictionary-encoded  # fmt: skip
NUMERIC = ("attempts", "reasks", "latency_s", "tokens_in", "tokens_out", "cost")


def _codes(values: Iterable[Any]) -> dict[str, Any]:
    """Dictionary encoding of one column (no codes when it holds one value: all rows 0).

    Distinct values in the order of their first row; the loops run in C (``dict.fromkeys``,
    ``map``), not in Python per row."""
    values = values if isinstance(values, list) else list(values)
    distinct = list(dict.fromkeys(values))
    if len(distinct) < 2:
        return {"v": distinct, "c": None}
    index = {v: i for i, v in enumerate(distinct)}
    return {"v": distinct, "c": list(map(index.__getitem__, values))}


def _parsed_is_raw(raw: Any, parsed: Any) -> bool:
    """True when a record's ``parsed`` answer is exactly the JSON of its ``raw`` text."""
    if parsed is None or not isinstance(raw, str):
        return False
    try:
        return from_json(raw) == parsed
    except ValueError:
        return False


def _numbers(values: list[Any]) -> list[Any]:
    """A number column as the page shows it: floats to 4 decimals, a missing number as 0."""
    types = set(map(type, values))
    if types <= {int}:  # counts (tokens, attempts): as they are
        return values
    if types == {float}:  # latencies, costs: rounded in one C-level pass
        return list(map(round, values, repeat(4)))
    return [round(v, 4) if isinstance(v, float) else v or 0 for v in values]


def _column(records: list[dict[str, Any]], name: str) -> list[Any]:
    """The field ``name`` of every record, None where a record lacks it."""
    try:
        return list(map(itemgetter(name), records))  # every record holds it (C-level)
    except KeyError:
        return [r.get(name) for r in records]


def encode_rows(records: list[dict[str, Any]], prof: Profile) -> dict[str, Any]:
    """The column-wise table of ``records`` (module doc), with ``n`` rows and ``facets``: the
    names of the columns offered as filters, in display order.

    Each field is taken out of the records once, as a column; dictionary encoding and number
    formatting then run over the columns (once per distinct value where they can)."""
    seen_params: dict[Any, str] = {}
    metas = [m or {} for m in _column(records, "meta")]
    reasons = _column(records, "reason")
    cat = {name: _codes(_column(records, name)) for name in PLAIN}
    cat["sample_index"] = _codes([v or 0 for v in _column(records, "sample_index")])
    kinds = {x: x.split(":", 1)[0] if x else None for x in dict.fromkeys(reasons)}
    cat["reason_kind"] = _codes(list(map(kinds.__getitem__, reasons)))
    cat["label"] = _codes(list(map(prof.label, records)))
    cat["params"] = _codes([_params(p or {}, seen_params) for p in _column(records, "params")])
    for name in prof.facets:
        cat[f"meta.{name}"] = _codes([_scalar(m.get(name)) for m in metas])
    nums = {name: _numbers(_column(records, name)) for name in NUMERIC}
    nums["cache_hit"] = list(map(int, map(bool, _column(records, "cache_hit"))))
    raws, parsed = _column(records, "raw"), _column(records, "parsed")
    same = list(map(_parsed_is_raw, raws, parsed))
    nums["parsed_is_raw"] = list(map(int, same))
    items = list(map(prof.item, records))
    return {
        "n": len(records),
        "facets": [
            "stage",
            "model",
            "status",
            "reason_kind",
            "label",
            *(f"meta.{name}" for name in prof.facets),
            "sample_index",
        ],  # fmt: skip
        "cat": cat,
        "num": {name: _constant(values) for name, values in nums.items()},
        "text": {"key": _column(records, "key"), "item": items, "reason": reasons, "raw": raws},
        "parsed": {
            str(i): p
            for i, (x, p) in enumerate(zip(same, parsed, strict=True))
            if not x and p is not None
        },  # fmt: skip
        "meta": _rest_columns(metas, items, {*prof.facets, "sample"}),
        "label_probs": {
            str(i): p for i, p in enumerate(_column(records, "label_probs")) if p
        },  # fmt: skip
    }


def _rest_columns(metas: list[dict[str, Any]], items: list[str], hidden: set[str]) -> dict:
    """The rest of each row's metadata as columns (module doc): every meta field but the
    ``hidden`` ones (facets) and an ``item`` equal to the row's item, each name with its values
    aligned with the rows (None where a row lacks it) and the rows that lack it; names in the
    order they first occur, row by row."""
    shapes = dict.fromkeys(map(tuple, metas))  # the distinct key sequences (a run has few)
    found = []
    for name in dict.fromkeys(k for shape in shapes for k in shape if k not in hidden):
        values = _column(metas, name)
        if name == "item":
            gone = [
                name not in m or v == item for m, v, item in zip(metas, values, items, strict=True)
            ]
        elif all(name in shape for shape in shapes):
            found.append((0, list(metas[0]).index(name), name, values, []))
            continue
        else:
            gone = [name not in m for m in metas]
        kept = gone.index(False) if False in gone else -1
        if kept < 0:
            continue
        absent = [i for i, x in enumerate(gone) if x]
        values = [None if x else v for v, x in zip(values, gone, strict=True)]
        found.append((kept, list(metas[kept]).index(name), name, values, absent))
    found.sort(key=lambda entry: entry[:2])  # first kept row, then its place in that row
    cols = {name: {"v": v} | ({"absent": a} if a else {}) for *_, name, v, a in found}
    return {"names": list(cols), "cols": cols}


def meta_of(table: dict[str, Any], row: int) -> dict[str, Any]:
    """The rest of the metadata of ``row`` of an :func:`encode_rows` table, as a mapping."""
    meta = table["meta"]
    return {n: meta["cols"][n]["v"][row] for n in meta["names"]
            if row not in meta["cols"][n].get("absent", ())}  # fmt: skip


def _constant(values: list[Any]) -> Any:
    """A column whose rows all hold one number as that number, else the list."""
    return values[0] if values and all(v == values[0] for v in values) else values


def _params(params: dict[str, Any], seen: dict[Any, str]) -> str:
    """``params`` as sorted JSON text (memoised by its items: a run has a few distinct
    parameter sets)."""
    try:
        key = tuple(params.items())
        text = seen.get(key)
    except TypeError:  # a list or dict value
        return json.dumps(params, sort_keys=True, ensure_ascii=False)
    if text is None:
        text = seen[key] = json.dumps(params, sort_keys=True, ensure_ascii=False)
    return text


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, ensure_ascii=False)


def add_facet(rows: dict[str, Any], name: str, values: list[Any], after: str = "label") -> None:
    """Add the dictionary-encoded column ``name`` (one value per row) to an
    :func:`encode_rows` table, offered as a filter right after ``after``."""
    rows["cat"][name] = _codes(values)
    facets = rows["facets"]
    facets.insert(facets.index(after) + 1 if after in facets else len(facets), name)
