"""``judgekit calibrate judge`` as a library: one judge against human labels, all three views.

:func:`calibrate_judge` computes the judge against the human majority
(:func:`judgekit.calibration.judge.judge_vs_humans`), the human ceiling
(:func:`judgekit.calibration.judge.human_ceiling`) and the Alternative Annotator Test
(:func:`judgekit.calibration.aat.alt_test`; Calderon, Reichart & Dror, ACL 2025); a view that
cannot be computed (one human only, too few items per annotator) is a note, not an error.
:func:`judgekit.report.judge.write_judge_calibration` writes them; ``judgekit.report.calibration``
prints them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from judgekit.calibration.aat import alt_test
from judgekit.calibration.confidence import ConfidenceReport, confidence_report
from judgekit.calibration.judge import human_ceiling, judge_vs_humans
from judgekit.calibration.results import AltTestResult, CeilingReport, JudgeReport
from judgekit.errors import JudgekitError
from judgekit.labels.majority import judge_labels, majority_vote
from judgekit.labels.overlap import align_labels
from judgekit.labels.table import LabelTable


@dataclass
class JudgeCalibration:
    """The three views of one judge, and the table rows that sum them up.

    Attributes:
        report: judge vs human majority (accuracy, macro-F1, Cohen's kappa, confusion matrix).
        ceiling: each human vs the other humans, and the judge on the same references; None
            with ``ceiling_note`` saying why.
        alt: the Alternative Annotator Test; None with ``alt_note`` saying why.
        rows: ``comparison, metric, n, value, ci`` per figure (accuracy, macro_f1, kappa in
            [0, 1] / [-1, 1]; n items, or (human, item) pairs for the ceiling rows).
        tie_policy, epsilon, q: the settings used (for the printed notes).
        confidence: the judge's probabilities against the human majority
            (:mod:`judgekit.calibration.confidence`); None with ``confidence_note`` saying
            why (no probabilities given, or none on an item with a human majority).
    """

    report: JudgeReport
    ceiling: CeilingReport | None
    ceiling_note: str
    alt: AltTestResult | None
    alt_note: str
    rows: list[dict[str, Any]]
    tie_policy: str
    epsilon: float
    q: float
    confidence: ConfidenceReport | None = None
    confidence_note: str = "no label probabilities (records without label_probs)"


def calibrate_judge(
    labels: pd.Series,
    humans: LabelTable,
    *,
    tie_policy: str = "exclude",
    epsilon: float = 0.2,
    q: float = 0.05,
    min_items: int = 30,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    judge_name: str = "the judge",
    probs: pd.DataFrame | None = None,
    n_bins: int = 10,
    thresholds: tuple[float, ...] = (0.5, 0.7, 0.9),
) -> JudgeCalibration:
    """The judge's ``labels`` (per item) against the human raters of ``humans``.

    ``probs`` (items x labels, :func:`judgekit.calibration.confidence_inputs.load_label_probs`)
    adds the confidence view (ECE over ``n_bins`` equal-width bins, Brier, selective accuracy
    at ``thresholds``), against the same human majority, human ties left out.

    The label sets are checked and case-folded once
    (:func:`judgekit.labels.overlap.align_labels`), and all three views use the result.

    Raises:
        LabelSetError: the judge's and the humans' label sets share no label.
        JudgekitError: no item has both a judge label and a human majority (ties with
            ``tie_policy="error"`` too); the ceiling and the alt-test fail into notes instead.
    """
    labels, humans, _ = align_labels(judge_labels(labels), humans, judge_name=judge_name)
    boot = {"ci": n_resamples > 0, "n_resamples": n_resamples, "confidence": confidence}
    report = judge_vs_humans(labels, humans, tie_policy=tie_policy, seed=seed,
                             judge_name=judge_name, **boot)  # fmt: skip
    rows = [
        {"comparison": "judge vs human majority", "metric": m, "n": report.n_items, **e.to_dict()}
        for m, e in (("accuracy", report.accuracy), ("macro_f1", report.macro_f1),
                     ("kappa", report.kappa))
    ]  # fmt: skip
    ceiling, ceiling_note = None, ""
    try:
        ceiling = human_ceiling(humans, labels, tie_policy=tie_policy, seed=seed,
                                judge_name=judge_name, **boot)  # fmt: skip
    except JudgekitError as exc:
        ceiling_note = str(exc)
    if ceiling is not None:
        for scope, scores in (
            ("human vs other humans (ceiling)", ceiling.humans),
            ("judge vs the same references", ceiling.judge or {}),
        ):
            rows += [
                {"comparison": scope, "metric": m, "n": ceiling.n_rows, **e.to_dict()}
                for m, e in scores.items()
            ]
    alt, alt_note = None, ""
    try:
        alt = alt_test(labels, humans, epsilon=epsilon, q=q, min_items=min_items)
    except JudgekitError as exc:
        alt_note = str(exc)
    result = JudgeCalibration(report, ceiling, ceiling_note, alt, alt_note, rows, tie_policy,
                              epsilon, q)  # fmt: skip
    if probs is not None and not probs.empty:
        try:
            conf = confidence_report(
                probs, majority_vote(humans), judge_labels=labels, n_bins=n_bins,
                thresholds=thresholds, n_resamples=n_resamples, confidence=confidence, seed=seed,
            )  # fmt: skip
        except JudgekitError as exc:
            result.confidence_note = str(exc)
        else:
            result.confidence, result.confidence_note = conf, ""
            rows += [
                {"comparison": "judge confidence vs human majority", "metric": m,
                 "n": conf.n_items, **e.to_dict()}
                for m, e in (("ece", conf.ece), ("brier", conf.brier))
            ]  # fmt: skip
    return result
