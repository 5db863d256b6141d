"""Result types of the calibration of a judge against humans, and their JSON form.

* :class:`JudgeReport`: the judge against the human majority (:func:`judgekit.calibration.judge.
  judge_vs_humans`);
* :class:`CeilingReport`: each human against the others, and the judge on the same references
  (:func:`judgekit.calibration.judge.human_ceiling`);
* :class:`AltTestResult`: the Alternative Annotator Test
  (:func:`judgekit.calibration.aat.alt_test`).

``to_dict()`` gives Estimates as ``{value, ci}`` and tables as records (the confusion matrix
as ``{index, columns, data}``); :func:`judgekit.data.jsonfile.write_json` writes it as JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import pandas as pd

from judgekit.metrics.classification import Estimate


class Report:
    """``to_dict`` for the report dataclasses below."""

    def to_dict(self) -> dict[str, Any]:
        def convert(value: Any) -> Any:
            if isinstance(value, Estimate):
                return value.to_dict()
            if isinstance(value, pd.DataFrame):
                if isinstance(value.index, pd.RangeIndex):
                    return value.to_dict(orient="records")
                return value.to_dict(orient="split")
            if isinstance(value, dict):
                return {k: convert(v) for k, v in value.items()}
            return value

        return {f.name: convert(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]


@dataclass(frozen=True)
class JudgeReport(Report):
    """A judge against the human majority.

    Attributes:
        n_items: items scored. n_ties: items whose human votes tie (before the tie policy).
        n_unjudged: items with human labels but no judge label (left out, never guessed).
        accuracy, macro_f1, kappa: rates in [0, 1] / kappa in [-1, 1], with bootstrap CIs.
        per_class: DataFrame (label, support, recall, recall_low, recall_high, precision, ...).
        confusion: DataFrame, rows = human majority label, columns = judge label, counts.
        errors: disagreements by direction, [{"human", "judge", "count"}], most frequent first.
        labels: how the judge's label set met the humans' (``LabelOverlap.to_dict()`` of
            :mod:`judgekit.labels.overlap`: judge, human, common, judge_only, human_only,
            folded, notes).
    """

    n_items: int
    n_ties: int
    n_unjudged: int
    tie_policy: str
    accuracy: Estimate
    macro_f1: Estimate
    kappa: Estimate
    per_class: pd.DataFrame
    confusion: pd.DataFrame
    errors: list[dict[str, Any]]
    labels: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CeilingReport(Report):
    """Each human against the majority of the other humans, pooled over humans.

    Attributes:
        humans: pooled accuracy, macro-F1, kappa of human vs majority(other humans), with CIs
            from a bootstrap over items (all of an item's rows move together).
        judge: the judge's scores against exactly the same references and rows (None without
            a judge), so "judge 0.74 [..] vs human ceiling 0.79 [..]" compares like with like.
        per_human: DataFrame (human, n_items, accuracy, macro_f1, kappa[, judge_*]).
        n_rows, n_items: pooled (human, item) rows and distinct items; n_ties: tied references.
        others: per judge of ``human_ceiling(others=...)``, ``{"scores": {metric: Estimate},
            "n_rows", "n_items"}``: that judge on the same rows (those of items it labelled).
    """

    tie_policy: str
    humans: dict[str, Estimate]
    judge: dict[str, Estimate] | None
    per_human: pd.DataFrame
    n_rows: int
    n_items: int
    n_ties: int
    others: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class AltTestResult(Report):
    """Outcome of the Alternative Annotator Test.

    Attributes:
        winning_rate: omega in [0, 1], share of annotators whose null is rejected after
            Benjamini-Yekutieli correction. passed: omega >= 0.5.
        advantage_probability: rho in [0, 1], mean over annotators of the share of items where
            the judge's alignment >= the annotator's.
        per_annotator: DataFrame (annotator, n_items, rho_judge, rho_human, mean_difference,
            p_value, p_adjusted, rejected).
        skipped: annotators left out, with the reason (fewer than ``min_items`` items).
    """

    winning_rate: float
    advantage_probability: float
    passed: bool
    epsilon: float
    q: float
    scoring: str
    per_annotator: pd.DataFrame
    skipped: dict[str, str] = field(default_factory=dict)
    n_items: int = 0
