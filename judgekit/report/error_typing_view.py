"""The viewer profile of the MQM error-typing pipeline: a segment's label (``no-error`` or its
worst MQM severity), units and facets, the segments of its detail pane and the headline of
its summary (:mod:`judgekit.view.profile`)."""

from __future__ import annotations

from typing import Any

from judgekit.data.vocabulary import mqm_segment_label
from judgekit.view.data import RunData
from judgekit.view.headline import Row, readable, row, rows_of, scalar, value_at
from judgekit.view.profile import Profile, Record, meta_of, parsed_of


def _errors_label(record: Record) -> str | None:
    parsed = parsed_of(record)
    if not parsed:
        return None
    errors = parsed.get("errors") if isinstance(parsed.get("errors"), list) else []
    found = [e.get("severity") for e in errors if isinstance(e, dict)]
    return mqm_segment_label(bool(parsed.get("no_errors")) or not errors, found)


def _errors_units(record: Record) -> list[tuple[str, str]]:
    label = _errors_label(record)
    return [] if label is None else [(str(meta_of(record, "id")), label)]


def _errors_extras(run: RunData, rows_by_key: dict[str, int]) -> dict[str, Any]:
    keep = ("source", "translation", "errors", "status", "reason", "mqm")
    return {"segments": {str(s.get("id")): {k: s.get(k) for k in keep}
                         for s in run.side.get("segments.jsonl", [])}}  # fmt: skip


def _errors(s: dict[str, Any]) -> list[Row | None]:
    out: list[Row | None] = []
    for i, r in rows_of(s, "type_counts"):
        system = r.get("system")
        at = ["type_counts", i]
        out += [row(s, f"mean MQM, system {system}", [*at, "mean_mqm"]),
                row(s, f"segments scored, system {system}", [*at, "n_scored"])]  # fmt: skip
    calibration = value_at(s, ["calibration"])
    if isinstance(calibration, dict):
        out += [row(s, f"vs human MQM: {readable(k)}", ["calibration", k])
                for k, v in calibration.items() if scalar(v)]  # fmt: skip
    return out


PROFILE = Profile(
    lambda r: str(meta_of(r, "id")),
    _errors_label,
    _errors_units,
    ("system",),
    extras=_errors_extras,
    headline=_errors,
)
