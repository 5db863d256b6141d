"""What the viewer knows of each pipeline: the item a record judges, its label, its facets, and
the extra context its detail pane shows.

* ``item``: the id of the thing a record is about (spilling: ``generator|lang|word|sN``;
  classify, pairwise and CS/CA: the item id; errors: the segment id; localise: ``locale|id``).
* ``label``: a record's answer in one word, for the table and its filter (classify: the label;
  CS/CA: ``cs_label``; spilling judge: ``k of 5 invalid``; errors: ``no-error`` or the worst
  MQM severity, the segment labels ``review import`` writes for an MQM campaign,
  :func:`judgekit.data.vocabulary.mqm_segment_label`; pairwise: ``output 1``, ``output 2`` or
  ``tie``, the verdict in the original outputs' identities whatever the order shown), None
  where a record has none (generations, failed calls).
* ``units``: the labelled units of a record in the id space of the run's ``labels.csv``
  (spilling: one per meaning, ``generator|lang|word|sN|mI`` with ``true``/``false``; paper 002,
  appendix A.3), which is what compare mode and ``--labels`` match on.
* ``raters``: the raters of the run's ``labels.csv`` a record's units belong to, its own first
  (the model, or ``model#sK`` with several samples; pairwise: ``judge#original`` /
  ``judge#swapped``, and the resolved ``judge`` for the original order's record).
* ``facets``: the meta fields offered as filters beside stage, model, status, reason and label.
"""

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
