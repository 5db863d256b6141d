"""The viewer's column-wise parts are the figures of the plain row-by-row reading: the record
table (``encode_rows``), the natural order of units, the rows' metadata. Each is checked against
a short per-row version of the same rule, on records whose fields vary from row to row."""

from __future__ import annotations

import json
import random
import re

from judgekit.view.order import natural_key, natural_sorted
from judgekit.view.profiles import profile
from judgekit.view.rows import encode_rows, meta_of


def record(i: int, rng: random.Random) -> dict:
    """A record whose optional fields and meta keys come and go (as across pipelines and
    judgekit versions)."""
    answer = {"label": rng.choice(["x", "y", "Y"]), "rationale": f"r{i}"}
    status = rng.choice(["ok", "ok", "unscored", "error"])
    meta = {"item": f"item-{i % 7}", "index": i, "sample": 0}
    if i % 3 == 0:
        meta["item"] = i  # a number: not the row's item text, so kept in the metadata
    if i % 4 == 1:
        meta.pop("index")
    if i > 5 and i % 5 == 0:
        meta = {"late": [i, "x"], **meta, "order": "swapped"}  # keys first seen late
    row = {"key": f"k{i}", "stage": "judge", "role": "judge", "route": "r", "model": f"m{i % 2}",
           "prompt_id": "p", "prompt_hash": "h", "status": status, "meta": meta,
           "params": rng.choice([{"temperature": 0.0}, {"t": [1, 2]}, {}]),
           "latency_s": rng.choice([0.123456, 2, None, 1.00005]), "tokens_in": i,
           "cache_hit": i % 2 == 0}  # fmt: skip
    if status == "ok":
        row["parsed"] = answer
        row["raw"] = json.dumps(answer) if i % 2 else f"```{json.dumps(answer)}```"
    else:
        row["reason"] = rng.choice(["schema: label", "transient: 503", "no colon"])
    if i % 6 == 0:
        row["sample_index"] = 1
        row["label_probs"] = {"x": 0.25, "y": 0.75}
    return row


def per_row(records: list[dict], prof) -> dict:
    """The rules of ``encode_rows`` applied record by record (as the viewer first did)."""
    metas = [r.get("meta") or {} for r in records]
    items = [prof.item(r) for r in records]
    hidden = {*prof.facets, "sample"}
    rest = [{k: v for k, v in m.items() if k not in hidden and not (k == "item" and v == item)}
            for m, item in zip(metas, items, strict=True)]  # fmt: skip
    names = list(dict.fromkeys(k for row in rest for k in row))
    cols = {}
    for name in names:
        absent = [i for i, row in enumerate(rest) if name not in row]
        cols[name] = {"v": [row.get(name) for row in rest]} | ({"absent": absent} if absent else {})
    latency = [r.get("latency_s") for r in records]
    return {
        "latency_s": [round(v, 4) if isinstance(v, float) else v or 0 for v in latency],
        "params": [json.dumps(r.get("params") or {}, sort_keys=True) for r in records],
        "meta": {"names": names, "cols": cols},
        "sample_index": [r.get("sample_index") or 0 for r in records],
        "cache_hit": [int(bool(r.get("cache_hit"))) for r in records],
    }


def values(table: dict, name: str) -> list:
    column = table["cat"][name]
    if column["c"] is None:
        return [column["v"][0]] * table["n"]
    return [column["v"][c] for c in column["c"]]


def test_the_record_table_holds_the_per_row_figures() -> None:
    rng = random.Random(3)
    records = [record(i, rng) for i in range(60)]
    prof = profile("classify")
    table, expected = encode_rows(records, prof), per_row(records, prof)
    assert table["meta"] == expected["meta"]
    assert table["meta"]["names"] == ["item", "index", "late", "order"]  # first kept, row by row
    assert table["num"]["latency_s"] == expected["latency_s"]
    assert table["num"]["cache_hit"] == expected["cache_hit"]
    assert values(table, "params") == expected["params"]
    assert values(table, "sample_index") == expected["sample_index"]
    assert values(table, "label") == [prof.label(r) for r in records]
    assert table["label_probs"] == {str(i): r["label_probs"] for i, r in enumerate(records)
                                    if r.get("label_probs")}  # fmt: skip
    for i, r in enumerate(records):
        meta = {k: v for k, v in r["meta"].items() if k != "sample"}
        if meta.get("item") == prof.item(r):
            del meta["item"]
        assert meta_of(table, i) == meta
        same = table["num"]["parsed_is_raw"][i] == 1
        assert same == (r.get("parsed") is not None and r["raw"] == json.dumps(r["parsed"]))
        assert table["parsed"].get(str(i)) == (None if same else r.get("parsed"))


def tagged_key(text: object) -> tuple:
    """The natural key with a tag per part (the viewer's first form of it)."""
    parts = re.split(r"(\d+)", str(text))
    return tuple((1, int(p)) if k % 2 else (0, p.casefold()) for k, p in enumerate(parts))


def test_natural_order_is_the_tagged_order_with_ties_in_text_order() -> None:
    rng = random.Random(5)
    texts = {"".join(rng.choice("aB1٣0-ß.9 ") for _ in range(rng.randint(0, 7)))
             for _ in range(3000)} | {"item-2", "item-10", "Item-3", "a01", "a1", "A1"}  # fmt: skip
    keys: dict = {}
    found = natural_sorted(texts, keys)
    assert found == sorted(texts, key=lambda t: (tagged_key(t), t))
    assert natural_sorted(texts, keys) == found and len(keys) == len(texts)  # one key a text
    assert all(natural_key(t) == keys[t] for t in ("item-2", "a01"))
    assert found.index("item-2") < found.index("Item-3") < found.index("item-10")
    assert found.index("A1") < found.index("a01") < found.index("a1")  # equal keys: text order
