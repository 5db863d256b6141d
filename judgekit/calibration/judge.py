"""A judge against human labels: majority reference, human ceiling, Alternative Annotator Test.

* :func:`majority_vote` (:mod:`judgekit.labels.majority`): the humans' majority label per item, ties
  reported, never broken.
* :func:`judge_vs_humans`: accuracy, macro-F1, Cohen's kappa (bootstrap CIs over items),
  confusion matrix, per-class recall and precision, direction of errors (paper 001, Sec. on
  validating the annotation pipeline: "35 CA->CS versus 12 CS->CA errors").
* :func:`human_ceiling`: each human against the majority of the *other* humans, pooled, on the
  same footing (same metrics, same tie policy), and the judge against those same references.
* :func:`alt_test` (:mod:`judgekit.calibration.aat`): the Alternative Annotator Test
  (Calderon, Reichart & Dror, ACL 2025).

Labels are compared in the label vocabulary's text form (``1`` and ``"1"`` match, ``TRUE``
is ``true``: :mod:`judgekit.data.vocabulary`), after the overlap check of
:mod:`judgekit.labels.overlap` (disjoint label sets are an error). Tie policies for an item
whose human votes tie (two or more categories share the top count):

* ``"exclude"``: the item is left out of every metric (and counted in ``n_ties``);
* ``"error"``: the item stays with reference ``"<tie>"``, which no judge label matches, so it
  counts as an error; macro-F1 and per-class scores average over the real categories only;
* ``"own_class"``: ``"<tie>"`` is a category like the others (a judge may answer it).

Metrics are scored by :class:`judgekit.metrics.classification.ReferenceScorer`; the report
types are in :mod:`judgekit.calibration.results`.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

import pandas as pd
from sklearn.metrics import confusion_matrix

from judgekit.calibration.results import CeilingReport, JudgeReport
from judgekit.errors import JudgekitError
from judgekit.labels.majority import (
    TIE,
    JudgeLabels,
    TiePolicy,
    apply_ties,
    judge_labels,
    labels_as_text,
    majority_vote,
)
from judgekit.labels.overlap import align_labels
from judgekit.labels.table import LabelData, as_label_table
from judgekit.metrics.classification import METRICS, Estimate, ReferenceScorer

__all__ = ["human_ceiling", "judge_vs_humans"]


def _boots(ci: bool, n_resamples: int) -> int:
    return n_resamples if ci else 0


def judge_vs_humans(
    judge: JudgeLabels,
    humans: LabelData,
    *,
    judge_rater: Hashable | None = None,
    tie_policy: TiePolicy = "exclude",
    ci: bool = True,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    declared: Iterable[Hashable] | None = None,
    judge_name: str = "the judge",
) -> JudgeReport:
    """Score a judge against the humans' majority label (sklearn metrics, bootstrap CIs).

    Args:
        judge: the judge's labels (Series or mapping item -> label, or a table; pick the rater
            with ``judge_rater`` when it has several).
        humans: items x human raters.
        tie_policy: "exclude", "error" or "own_class" (module docstring).
        declared: the task's label set, where it has one (CS/CA): see
            :mod:`judgekit.labels.overlap`.
        judge_name: how warnings and errors name the judge.

    The two label sets are checked first (:func:`judgekit.labels.overlap.align_labels`):
    labels that differ in case alone are folded to the judge's spelling, with a warning;
    labels seen on one side only are a warning (``report.labels`` keeps the overlap).

    Raises:
        LabelSetError: the judge and the humans share no label.
        JudgekitError: no item has both a judge label and a human majority.

    The items scored are those with a human majority and a judge label. Source of the
    protocol: paper 001 (CS/CA validation: accuracy, macro-F1, per-class recall, direction of
    errors, ties counted as errors as a variant).
    """
    predicted = judge_labels(judge, judge_rater)
    predicted, table, overlap = align_labels(
        predicted, as_label_table(humans), declared=declared, judge_name=judge_name
    )
    reference = majority_vote(table)
    n_unjudged = int((~reference.index.isin(predicted.index)).sum())
    pairs = pd.DataFrame({"reference": reference})
    pairs["label"] = predicted.reindex(pairs.index)
    pairs = pairs[pairs["label"].notna()].rename_axis("item").reset_index()
    if pairs.empty:
        raise JudgekitError(
            "no item has both a judge label and a human label (judge items such as "
            f"{list(predicted.index[:3])}, human items such as {list(reference.index[:3])})"
        )
    n_ties = int((pairs["reference"] == TIE).sum())
    pairs = apply_ties(pairs, tie_policy)
    if pairs.empty:
        raise JudgekitError("every item shared with the judge is a human tie (tie policy exclude)")
    scorer = ReferenceScorer(pairs, tie_policy)
    boots = _boots(ci, n_resamples)

    def est(name: str) -> Estimate:
        return scorer.estimate(name, boots, confidence, seed)

    rows = [_class_row(label, pairs, est) for label in scorer.classes]
    confusion, errors = _confusion(pairs, scorer)
    return JudgeReport(
        n_items=len(pairs),
        n_ties=n_ties,
        n_unjudged=n_unjudged,
        tie_policy=tie_policy,
        accuracy=est("accuracy"),
        macro_f1=est("macro_f1"),
        kappa=est("kappa"),
        per_class=pd.DataFrame(rows),
        confusion=confusion,
        errors=errors,
        labels=overlap.to_dict(),
    )


def _class_row(label: Any, pairs: pd.DataFrame, est: Any) -> dict[str, Any]:
    """Support, recall and precision (with CIs) of one class of :func:`judge_vs_humans`."""
    rec, prec = est(f"recall:{label}"), est(f"precision:{label}")
    return {
        "label": label,
        "support": int((pairs["reference"] == label).sum()),
        "recall": rec.value,
        "recall_low": rec.ci[0] if rec.ci else None,
        "recall_high": rec.ci[1] if rec.ci else None,
        "precision": prec.value,
        "precision_low": prec.ci[0] if prec.ci else None,
        "precision_high": prec.ci[1] if prec.ci else None,
    }


def _confusion(pairs: pd.DataFrame, scorer: Any) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """The confusion matrix (rows: human majority, columns: judge) and the errors by
    (human, judge) pair, most frequent first."""
    labels = scorer.everything
    with warnings.catch_warnings():  # one known label: a 1 x 1 matrix is the right shape
        warnings.filterwarnings("ignore", "A single label was found", UserWarning)
        cells = confusion_matrix(pairs["reference"], pairs["label"], labels=labels)
    confusion = pd.DataFrame(cells, index=labels, columns=labels).loc[
        [x for x in labels if x in set(pairs["reference"]) or x in scorer.classes],
        [x for x in labels if x in set(pairs["label"]) or x in scorer.classes],
    ]
    confusion.index.name, confusion.columns.name = "human", "judge"
    wrong = pairs[pairs["reference"] != pairs["label"]]
    errors = [
        {"human": h, "judge": j, "count": int(n)}
        for (h, j), n in Counter(zip(wrong["reference"], wrong["label"], strict=True)).most_common()
    ]
    return confusion, errors


def human_ceiling(
    humans: LabelData,
    judge: JudgeLabels | None = None,
    *,
    judge_rater: Hashable | None = None,
    tie_policy: TiePolicy = "exclude",
    ci: bool = True,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    judge_name: str = "the judge",
    declared: Iterable[Hashable] | None = None,
    metrics: tuple[str, ...] = METRICS,
    others: Mapping[str, pd.Series] | None = None,
    others_ci: bool = True,
) -> CeilingReport:
    """Agreement of each human with the majority of the others, on the judge's footing.

    For every human h and item i rated by h and by at least one other human, the reference is
    the majority of the other humans' labels on i (``"<tie>"`` when it ties, then the tie
    policy applies). The (reference, h's label) rows of all humans are pooled and scored with
    the metrics of :func:`judge_vs_humans`. With a judge, only items it labelled are kept, and
    the judge is scored on the same rows (its label against the same leave-one-out reference),
    with the same bootstrap resamples (same seed), so the two are directly comparable.
    ``metrics``: the metric names scored (default accuracy, macro-F1, kappa; ``"ac1"`` too).
    ``others`` (name -> Series item -> label, label sets already checked by the caller): more
    judges scored on the same pooled rows (each on the rows of the items it labelled), with
    the same resamples (CIs only with ``others_ci``), in ``report.others``; the rows and their
    leave-one-out majorities are built once for all of them.
    """
    table = as_label_table(humans)
    predicted = judge_labels(judge, judge_rater) if judge is not None else None
    if predicted is not None:
        predicted, table, _ = align_labels(
            predicted, table, declared=declared, judge_name=judge_name
        )
    frames = []
    for rater in table.raters:
        own = labels_as_text(table.frame[rater])
        reference = majority_vote(table.drop([rater]))
        rows = pd.DataFrame({"label": own, "reference": reference.reindex(own.index)})
        rows = rows[rows["reference"].notna()].rename_axis("item").reset_index()
        rows["human"] = str(rater)
        if predicted is not None:
            rows["judge"] = predicted.reindex(rows["item"]).to_numpy()
            rows = rows[rows["judge"].notna()]
        frames.append(rows)
    pooled = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if pooled.empty:
        raise JudgekitError(
            "no item is rated by two humans (and labelled by the judge): no human ceiling"
        )
    n_ties = int((pooled["reference"] == TIE).sum())
    pooled = apply_ties(pooled, tie_policy)
    boots = _boots(ci, n_resamples)

    def scores(frame: pd.DataFrame, column: str, boot: int) -> dict[str, Estimate]:
        scorer = ReferenceScorer(frame.assign(label=frame[column]), tie_policy)
        return {m: scorer.estimate(m, boot, confidence, seed) for m in metrics}

    per_human = []
    for rater, rows in pooled.groupby("human", sort=False):
        entry: dict[str, Any] = {"human": rater, "n_items": len(rows)}
        entry.update({m: e.value for m, e in scores(rows, "label", 0).items()})
        if predicted is not None:
            entry.update({f"judge_{m}": e.value for m, e in scores(rows, "judge", 0).items()})
        per_human.append(entry)
    extra = _others(pooled, others or {}, scores, boots if others_ci else 0)
    return CeilingReport(
        tie_policy=tie_policy,
        humans=scores(pooled, "label", boots),
        judge=scores(pooled, "judge", boots) if predicted is not None else None,
        per_human=pd.DataFrame(per_human),
        n_rows=len(pooled),
        n_items=int(pooled["item"].nunique()),
        n_ties=n_ties,
        others=extra,
    )


def _others(pooled: pd.DataFrame, others: Mapping[str, pd.Series], scores: Any, boots: int) -> dict:
    """Each of ``others`` on the pooled ceiling rows of the items it labelled (see
    :func:`human_ceiling`): ``{name: {"scores", "n_rows", "n_items"}}``; a judge with no such
    row is left out."""
    out = {}
    for name, labels in others.items():
        judged = pooled["item"].map(labels_as_text(labels))
        part = pooled[judged.notna()].assign(judge=judged[judged.notna()])
        if part.empty:
            continue
        out[name] = {"scores": scores(part, "judge", boots), "n_rows": len(part),
                     "n_items": int(part["item"].nunique())}  # fmt: skip
    return out
