"""The viewer profile of the CS/CA audit: an item's ``cs_label``, the annotations of its detail
pane and the headline of its summary (:mod:`judgekit.view.profile`)."""

from __future__ import annotations

from typing import Any

from judgekit.view.data import RunData
from judgekit.view.headline import Row, items_rows, row
from judgekit.view.profile import Profile, label_of, meta_of, single


def _cultural_extras(run: RunData, rows_by_key: dict[str, int]) -> dict[str, Any]:
    keep = ("subject", "status", "cs_label", "evidence_found", "rule_consistent", "by_judge")
    return {"annotations": {str(a.get("key")): {k: a.get(k) for k in keep}
                            for a in run.side.get("annotations.jsonl", [])}}  # fmt: skip


def _cultural(s: dict[str, Any]) -> list[Row | None]:
    at = ["shares", "all", 0]
    return [row(s, "CS share [95% CI]", [*at, "cs_share"],
                 [[*at, "cs_ci_low"], [*at, "cs_ci_high"]]),
            row(s, "time-sensitive share [95% CI]", [*at, "ts_share"],
                 [[*at, "ts_ci_low"], [*at, "ts_ci_high"]]),
            row(s, "CS/CA consistent with the rule", ["checks", "rule_consistent_share"]),
            row(s, "self-consistency over samples", ["checks", "self_consistency"]),
            *items_rows(s)]  # fmt: skip


PROFILE = Profile(
    lambda r: str(meta_of(r, "item")),
    label_of("cs_label"),
    single("cs_label"),
    ("language",),
    extras=_cultural_extras,
    headline=_cultural,
)
