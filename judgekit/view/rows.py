"""A run's records as the compact, column-wise table the page reads.

Columns that repeat a few values (stage, model, status, reason kind, label, prompt, facets) are
dictionary-encoded: ``{"v": [distinct values], "c": [one code per row]}``; the rest are plain
lists, one entry per row. A record's ``parsed`` answer is left out (``parsed_is_raw`` = 1) when
it is exactly the JSON of its ``raw`` text, which the page parses back: most ok records then
cost their raw text once, not twice. Nothing is truncated.
"""

from __future__ import annotations

import json
from typing import Any

from judgekit.view.profiles import Profile

CATEGORICAL = ("stage", "role", "route", "model", "status", "reason_kind", "label", "served_by",
               "prompt_id", "prompt_hash", "schema_name", "params")  # fmt: skip
NUMERIC = ("sample_index", "attempts", "reasks", "latency_s", "tokens_in", "tokens_out", "cost")
TEXT = ("key", "item", "reason", "raw")


class _Codes:
    """Dictionary encoding of one column."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self.index: dict[Any, int] = {}
        self.codes: list[int] = []

    def add(self, value: Any) -> None:
        code = self.index.get(value)
        if code is None:
            code = self.index[value] = len(self.values)
            self.values.append(value)
        self.codes.append(code)

    def column(self) -> dict[str, list[Any]]:
        return {"v": self.values, "c": self.codes}


def _parsed_is_raw(record: dict[str, Any]) -> bool:
    raw, parsed = record.get("raw"), record.get("parsed")
    if parsed is None or not isinstance(raw, str):
        return False
    try:
        return json.loads(raw) == parsed
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
    for record in records:
        meta = record.get("meta") or {}
        reason = record.get("reason")
        values = {
            **{name: record.get(name) for name in CATEGORICAL},
            "reason_kind": reason.split(":", 1)[0] if reason else None,
            "label": prof.label(record),
            "params": json.dumps(record.get("params") or {}, sort_keys=True, ensure_ascii=False),
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
        texts["item"].append(prof.item(record))
        texts["reason"].append(reason)
        texts["raw"].append(record.get("raw"))
        rest = {k: v for k, v in meta.items() if k not in hidden}
        metas.append(rest or None)
    return {
        "n": len(records),
        "facets": ["stage", "model", "status", "reason_kind", "label", *facets],
        "cat": {name: codes.column() for name, codes in cats.items()},
        "num": nums,
        "text": texts,
        "parsed": parsed,
        "meta": metas,
    }


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, ensure_ascii=False)
