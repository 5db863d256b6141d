"""A run's records as the compact, column-wise table the page reads.

Columns that repeat a few values (stage, model, status, reason kind, label, prompt, facets) are
dictionary-encoded: ``{"v": [distinct values], "c": [one code per row]}`` (``"c": null`` when
there is one value); numbers are lists, one entry per row, or one number when every row holds
it; the rest are plain lists. A record's ``parsed`` answer is left out (``parsed_is_raw`` = 1) when
it is exactly the JSON of its ``raw`` text, which the page parses back: most ok records then
cost their raw text once, not twice. Nothing is truncated.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import from_json

from judgekit.view.profiles import Profile

CATEGORICAL = ("stage", "role", "route", "model", "status", "reason_kind", "label", "served_by",
               "prompt_id", "prompt_hash", "schema_name", "params", "sample_index")  # fmt: skip
NUMERIC = ("attempts", "reasks", "latency_s", "tokens_in", "tokens_out", "cost")
TEXT = ("key", "item", "reason", "raw")


class _Codes:
    """Dictionary encoding of one column."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.codes: list[int] = []

    def add(self, value: Any) -> None:
        self.codes.append(self.index.setdefault(value, len(self.index)))

    def column(self) -> dict[str, Any]:  # one value: no codes (every row has code 0)
        return {"v": list(self.index), "c": self.codes if len(self.index) > 1 else None}


def _parsed_is_raw(record: dict[str, Any]) -> bool:
    raw, parsed = record.get("raw"), record.get("parsed")
    if parsed is None or not isinstance(raw, str):
        return False
    try:
        return from_json(raw) == parsed
    except ValueError:
        return False


def encode_rows(records: list[dict[str, Any]], prof: Profile) -> dict[str, Any]:
    """The column-wise table of ``records`` (module doc), with ``n`` rows and ``facets``: the
    names of the columns offered as filters, in display order."""
    facets = [f"meta.{name}" for name in prof.facets]
    cats = {name: _Codes() for name in (*CATEGORICAL, *facets)}
    nums: dict[str, list[Any]] = {name: [] for name in (*NUMERIC, "cache_hit", "parsed_is_raw")}
    texts: dict[str, list[Any]] = {name: [] for name in TEXT}
    parsed: list[Any] = []
    metas: list[Any] = []
    hidden = {*prof.facets, "sample"}
    seen_params: dict[Any, str] = {}
    for record in records:
        meta = record.get("meta") or {}
        reason = record.get("reason")
        values = {
            **{name: record.get(name) for name in CATEGORICAL},
            "sample_index": record.get("sample_index") or 0,
            "reason_kind": reason.split(":", 1)[0] if reason else None,
            "label": prof.label(record),
            "params": _params(record.get("params") or {}, seen_params),
            **{f"meta.{name}": _scalar(meta.get(name)) for name in prof.facets},
        }
        for name, codes in cats.items():
            codes.add(values[name])
        for name in NUMERIC:
            value = record.get(name) or 0
            nums[name].append(round(value, 4) if isinstance(value, float) else value)
        nums["cache_hit"].append(int(bool(record.get("cache_hit"))))
        same = _parsed_is_raw(record)
        nums["parsed_is_raw"].append(int(same))
        parsed.append(None if same else record.get("parsed"))
        texts["key"].append(record["key"])
        item = prof.item(record)
        texts["item"].append(item)
        texts["reason"].append(reason)
        texts["raw"].append(record.get("raw"))
        rest = {k: v for k, v in meta.items()
                if k not in hidden and not (k == "item" and v == item)}  # fmt: skip
        metas.append(rest or None)
    return {
        "n": len(records),
        "facets": ["stage", "model", "status", "reason_kind", "label", *facets, "sample_index"],
        "cat": {name: codes.column() for name, codes in cats.items()},
        "num": {name: _constant(values) for name, values in nums.items()},
        "text": texts,
        "parsed": parsed,
        "meta": metas,
    }


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
