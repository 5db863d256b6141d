"""The human reference of an item: majority vote with ties reported, never broken silently.

Labels are compared in the text form of the label vocabulary
(:func:`judgekit.data.vocabulary.label_text`: ``1``, ``1.0`` and ``"1"`` are one label,
``TRUE`` is ``true``), item ids as NFC text. An item whose top count is
shared by two or more labels is a tie, marked :data:`TIE`; what happens to it is the caller's
tie policy (:func:`apply_ties`):

* ``"exclude"``: the item is left out of every metric (and counted);
* ``"error"``: the item stays with reference ``"<tie>"``, which no judge label matches, so it
  counts as an error; macro-F1 and per-class scores average over the real categories only;
* ``"own_class"``: ``"<tie>"`` is a category like the others (a judge may answer it).

Source: paper 001's validation protocol (majority label, ties reported, ties-as-errors variant).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping
from typing import Literal

import pandas as pd

from judgekit.data.vocabulary import canonical_id, label_text
from judgekit.errors import JudgekitError
from judgekit.labels.table import LabelData, as_label_table

TiePolicy = Literal["exclude", "error", "own_class"]
TIE_POLICIES = ("exclude", "error", "own_class")
TIE = "<tie>"
JudgeLabels = pd.Series | Mapping[Hashable, Hashable] | LabelData


def labels_as_text(series: pd.Series) -> pd.Series:
    """Index (item ids) and labels in the vocabulary's text form, missing labels dropped (a
    Series of str indexed by str)."""
    texts = [(canonical_id(i), label_text(v)) for i, v in series.items()]
    kept = [(i, v) for i, v in texts if v is not None and i is not None]
    return pd.Series([v for _, v in kept], index=[i for i, _ in kept], dtype=object)


def majority_vote(humans: LabelData) -> pd.Series:
    """The majority label of each item, or ``"<tie>"`` where the top count is shared.

    Returns a Series indexed by item (as text) of labels (as text); items without any rating
    are left out. A single rating is its own majority.
    """
    frame = as_label_table(humans).frame
    out = {}
    for item, row in frame.iterrows():
        votes = Counter(t for t in (label_text(v) for v in row) if t is not None)
        if not votes:
            continue
        (top, n), *rest = votes.most_common()
        out[canonical_id(item)] = TIE if rest and rest[0][1] == n else top
    return pd.Series(out, dtype=object)


def judge_labels(judge: JudgeLabels, rater: Hashable | None = None) -> pd.Series:
    """One rater's labels as a Series (item -> label, text) from a Series, mapping or table.

    Raises:
        JudgekitError: a table with several raters and no (or an unknown) ``rater``.
    """
    if isinstance(judge, pd.Series):
        return labels_as_text(judge)
    if isinstance(judge, Mapping):
        return labels_as_text(pd.Series(dict(judge), dtype=object))
    table = as_label_table(judge)
    if rater is None:
        if table.n_raters != 1:
            raise JudgekitError(f"choose the judge among raters {table.raters}")
        rater = table.raters[0]
    if rater not in table.raters:
        raise JudgekitError(f"no rater '{rater}' among {table.raters}")
    return labels_as_text(table.frame[rater])


def apply_ties(pairs: pd.DataFrame, tie_policy: TiePolicy) -> pd.DataFrame:
    """``pairs`` (a ``reference`` column) without tied rows under "exclude", else unchanged.

    Raises:
        JudgekitError: an unknown tie policy.
    """
    if tie_policy not in TIE_POLICIES:
        raise JudgekitError(f"unknown tie policy '{tie_policy}' (use {', '.join(TIE_POLICIES)})")
    return pairs[pairs["reference"] != TIE] if tie_policy == "exclude" else pairs
