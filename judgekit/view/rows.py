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


def _parsed_is_raw(record: dict[str, Any]) -> bool:
    raw, parsed = record.get("raw"), record.get("parsed")
    if parsed is None or not isinstance(raw, str):
        return False
    try:
        return from_json(raw) == parsed
    except ValueError:
        return False


def _numbers(values: list[Any]) -> list[Any]:
    """A number column as the page shows it: floats to 4 decimals, a missing number as 0."""
    if set(map(type, values)) <= {int}:  # counts (tokens, attempts): as they are
        return values
    return [round(v, 4) if isinstance(v, float) else v or 0 for v in values]


def encode_rows(records: list[dict[str, Any]], prof: Profile) -> dict[str, Any]:
    """The column-wise table of ``records`` (module doc), with ``n`` rows and ``facets``: the
    names of the columns offered as filters, in display order."""
    seen_params: dict[Any, str] = {}
    metas = [r.get("meta") or {} for r in records]
    reasons = [r.get("reason") for r in records]
    cat = {name: _codes([r.get(name) for r in records]) for name in PLAIN}
    cat["sample_index"] = _codes([r.get("sample_index") or 0 for r in records])
    kinds = {x: x.split(":", 1)[0] if x else None for x in dict.fromkeys(reasons)}
    cat["reason_kind"] = _codes(list(map(kinds.__getitem__, reasons)))
    cat["label"] = _codes(list(map(prof.label, records)))
    cat["params"] = _codes([_params(r.get("params") or {}, seen_params) for r in records])
    for name in prof.facets:
        cat[f"meta.{name}"] = _codes([_scalar(m.get(name)) for m in metas])
    nums = {name: _numbers([r.get(name) for r in records]) for name in NUMERIC}
    nums["cache_hit"] = [int(bool(r.get("cache_hit"))) for r in records]
    same = [_parsed_is_raw(r) for r in records]
    nums["parsed_is_raw"] = [int(x) for x in same]
    items = [prof.item(r) for r in records]
    hidden = {*prof.facets, "sample"}
    rest = [
        {k: v for k, v in m.items() if k not in hidden and not (k == "item" and v == item)}
        for m, item in zip(metas, items, strict=True)
    ]
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
        "text": {
            "key": [r["key"] for r in records],
            "item": items,
            "reason": reasons,
            "raw": [r.get("raw") for r in records],
        },  # fmt: skip
        "parsed": {
            str(i): r["parsed"]
            for i, (x, r) in enumerate(zip(same, records, strict=True))
            if not x and r.get("parsed") is not None
        },
        "meta": _columns(rest),
        "label_probs": {
            str(i): r["label_probs"] for i, r in enumerate(records) if r.get("label_probs")
        },
    }


def _columns(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-row mappings as columns (module doc): each name's values aligned with the rows, and
    the rows that lack the name."""
    names = list(dict.fromkeys(k for row in rows for k in row))
    cols = {}
    for name in names:
        absent = [i for i, row in enumerate(rows) if name not in row]
        cols[name] = {"v": [row.get(name) for row in rows]} | ({"absent": absent} if absent else {})
    return {"names": names, "cols": cols}


def meta_of(table: dict[str, Any], row: int) -> dict[str, Any]:
    """The rest of the metadata of ``row`` of an :func:`encode_rows` table, as a mapping."""
    meta = table["meta"]
    return {n: meta["cols"][n]["v"][row] for n in meta["names"]
            if row not in meta["cols"][n].get("absent", ())}  # fmt: skip


def _constant(values: list[Any]) -> Any:
    """A column whose rows all hold one number as that number, else the list."""
    return values[0] if values and all(v == values[0] for v in values) else values


def _params(params: dict[str, Any], seen: dict[Any, str]) -> str:
    """``params`` as sorted JSON text (memoised: a run has a few distinct parameter sets)."""
    try:
        key = tuple(sorted(params.items()))
        hash(key)
    except TypeError:  # a list or dict value
        return json.dumps(params, sort_keys=True, ensure_ascii=False)
    text = seen.get(key)
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
