"""The viewer profile of the pairwise pipeline: a verdict in the original outputs' identities,
the raters of each order, the pairs and verdicts of its detail pane and the headline of its
summary (:mod:`judgekit.view.profile`)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from judgekit.view.data import RunData
from judgekit.view.headline import Row, row, rows_of, with_ci
from judgekit.view.profile import Profile, Record, items_of_signature, meta_of, parsed_of


def _pairwise_raters(record: Record, multi: bool) -> list[str]:
    model, order = str(record.get("model")), meta_of(record, "order")
    return [f"{model}#{order}", model] if order == "original" else [f"{model}#{order}"]


def _pairwise_verdict(record: Record) -> str | None:
    """The verdict in the original outputs' identities (a swapped record's "1" is output 2)."""
    verdict = parsed_of(record).get("verdict")
    if verdict is None:
        return None
    if meta_of(record, "order") == "swapped":
        verdict = {"1": "2", "2": "1"}.get(str(verdict), verdict)
    return str(verdict)


def _pairwise_label(record: Record) -> str | None:
    verdict = _pairwise_verdict(record)
    return None if verdict is None else ("tie" if verdict == "tie" else f"output {verdict}")


def _pairwise_units(record: Record) -> list[tuple[str, str]]:
    verdict, item = _pairwise_verdict(record), meta_of(record, "item")
    return [] if verdict is None or item is None else [(str(item), verdict)]


ITEM_FIELDS = {"input": "input", "output_1": "output_1", "output_2": "output_2", "gold": "label",
               "subset": "subset"}  # fmt: skip


def _load_pairs(path: Path) -> list[dict[str, Any]]:
    from judgekit.data.pairwise import load_pairs

    return [asdict(i) | {"input": i.instruction, "label": i.gold} for i in load_pairs(path)]


def _pairwise_extras(run: RunData, rows_by_key: dict[str, int]) -> dict[str, Any]:
    """``items``: item id -> instruction, both outputs, gold and subset (the run's items.jsonl,
    else the items file of the signature when its sha256 is the run's, with ``items_note``);
    ``verdicts``: ``judge|item`` -> each order's verdict, the resolved one and its status."""
    rows, note = run.side.get("items.jsonl"), None
    if rows is None:
        rows, note = items_of_signature(run, _load_pairs)
    items = {str(r.get("id")): {k: r.get(f) for k, f in ITEM_FIELDS.items()} for r in rows}
    out: dict[str, Any] = {"items": items}
    if note:
        out["items_note"] = note
    fields = ("original", "swapped", "resolved", "status", "gold")
    out["verdicts"] = {
        f"{v.get('judge')}|{v.get('item')}": {k: v.get(k) or None for k in fields}
        for v in run.side.get("verdicts.csv", [])
    }
    return out


def _pairwise(s: dict[str, Any]) -> list[Row | None]:
    out: list[Row | None] = []
    for i, r in rows_of(s, "judges"):
        if r.get("source") != "run":
            continue
        name, at = f"{r.get('judge')} ({r.get('subset')})", ["judges", i]
        out += [with_ci(s, f"accuracy vs gold [95% CI], {name}", at, "accuracy"),
                row(s, f"positional agreement, {name}", [*at, "positional_agreement"]),
                row(s, f"first-position win rate, {name}", [*at, "first_position_win_rate"]),
                with_ci(s, f"resolved accuracy [95% CI], {name}", at,
                         "resolved_accuracy")]  # fmt: skip
    return out + [row(s, "pairs consistent", ["resolution", "consistent"]),
                  row(s, "pairs inconsistent", ["resolution", "inconsistent"])]  # fmt: skip


PROFILE = Profile(
    lambda r: str(meta_of(r, "item")),
    _pairwise_label,
    _pairwise_units,
    ("order",),
    _pairwise_raters,
    _pairwise_extras,
    _pairwise,
)
