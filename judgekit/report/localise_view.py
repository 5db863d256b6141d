"""The viewer profile of the localisation pipeline: a pair's ``locale|id``, the original pair in
its detail pane and the headline of its summary (:mod:`judgekit.view.profile`)."""

from __future__ import annotations

from typing import Any

from judgekit.view.data import RunData
from judgekit.view.headline import Row, items_rows, row, rows_of
from judgekit.view.profile import Profile, meta_of


def _localise_extras(run: RunData, rows_by_key: dict[str, int]) -> dict[str, Any]:
    return {"originals": {f"{p.get('locale')}|{p.get('id')}": {
        "source": p.get("original_source"), "english": p.get("original_english")}
        for p in run.side.get("localised.jsonl", [])}}  # fmt: skip


def _localise(s: dict[str, Any]) -> list[Row | None]:
    return [row(s, f"localised, {r.get('model')} {r.get('locale')}", ["by_locale", i, "localised"])
            for i, r in rows_of(s, "by_locale")] + items_rows(s)  # fmt: skip


PROFILE = Profile(
    lambda r: f"{meta_of(r, 'locale')}|{meta_of(r, 'id')}",
    lambda r: None,
    lambda r: [],
    ("locale",),
    extras=_localise_extras,
    headline=_localise,
)
