"""A run's viewer profile (:func:`profile`, from the pipeline registry) and its extra detail-pane
context (:func:`extras`); what a profile holds is in :mod:`judgekit.view.profile`."""

from __future__ import annotations

from typing import Any

from judgekit.pipelines import get_profile
from judgekit.view.data import RunData
from judgekit.view.profile import GENERIC, Profile, sample_raters

__all__ = ["GENERIC", "Profile", "extras", "profile", "sample_raters"]


def profile(pipeline: str) -> Profile:
    """The profile of ``pipeline`` (its registry entry's, :mod:`judgekit.pipelines`, defined
    beside its report in ``judgekit.report.<pipeline>_view``; a generic one, keyed by record,
    for any other)."""
    found = get_profile(pipeline)
    return GENERIC if found is None else found


def extras(run: RunData, rows_by_key: dict[str, int]) -> dict[str, Any]:
    """The pipeline context of the detail pane, keyed so the page finds it from a row.

    * spilling: ``dictionary`` (``lang|translation`` -> the entry as the judge saw it, rendered
      by :func:`judgekit.pipelines.spilling.render_entry`), ``generation`` (judge row -> row of
      the generation it judged) and ``dictionary_note`` when a dictionary changed since the run;
    * errors: ``segments`` (segment id -> source, translation and located spans);
    * classify: ``items`` (item id -> its text); pairwise: ``items`` (item id ->
      instruction, both outputs, gold, subset) and ``verdicts`` (``judge|item`` -> the
      verdict of each order, the resolved verdict and its status, from verdicts.csv); both
      with ``items_note`` when the texts come from elsewhere than the run's items.jsonl;
    * localise: ``originals`` (``locale|id`` -> the input pair); CS/CA: ``annotations`` (item
      key -> the item's outcome: status, label, evidence found, rule consistency, per judge).
    """
    return profile(run.pipeline).extras(run, rows_by_key)
