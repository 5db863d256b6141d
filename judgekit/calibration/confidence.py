"""A judge's confidence against human labels: ECE, Brier score, reliability bins, selective judging.

The judge gives a probability per label (``label_probs`` of its records, or ``p:LABEL`` columns
of a labels file: :mod:`judgekit.calibration.confidence_inputs`); the reference is the humans'
majority label (items whose votes tie are left out: a tie has no one-hot vector).

* Top-label confidence of an item: ``max_k p_k``; its predicted label is the arg max (ties of
  probabilities go to the first label in sorted order); it is correct when that label is the
  human majority.
* Expected calibration error (Guo, Pleiss, Sun & Weinberger, "On Calibration of Modern Neural
  Networks", ICML 2017, Sec. 2, Eq. 3): ``ECE = sum_b (n_b / n) |acc(b) - conf(b)|`` over
  ``n_bins`` equal-width bins of top-label confidence (default 10). Bin ``b`` holds the
  confidences in ``(b/B, (b+1)/B]``, the first bin ``[0, 1/B]``: the binning of
  ``sklearn.calibration.calibration_curve(strategy="uniform")``, which gives the curve.
* Brier score (Brier, "Verification of forecasts expressed in terms of probability", Monthly
  Weather Review 78(1), 1950), multiclass form: ``mean_i sum_k (p_ik - y_ik)^2`` with ``y_i`` the
  one-hot human label; in [0, 2], 0 best. For two labels it is twice the binary
  ``mean (p - y)^2``. Computed by ``sklearn.metrics.brier_score_loss(scale_by_half=False)``.
* Selective judging: for each threshold t, the items with top-label confidence >= t, their
  share of all items and their accuracy (a judge that abstains below t).

CIs: percentile bootstrap over items (Efron & Tibshirani 1993, ch. 13), seeded; ECE and Brier
are sums over items within fixed bins, so every resample is scored at once from
:func:`judgekit.metrics.bootstrap.resample_weights`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss

from judgekit.errors import JudgekitError
from judgekit.labels.majority import TIE
from judgekit.metrics.bootstrap import percentile_ci, resample_weights
from judgekit.metrics.classification import Estimate

DEFAULT_THRESHOLDS = (0.5, 0.7, 0.9)
BINNING = "equal-width bins of top-label confidence, (b/B, (b+1)/B], the first [0, 1/B]"


@dataclass
class ConfidenceReport:
    """The judge's probabilities against the human majority.

    Attributes:
        n_items: items scored (a judge probability and a human majority in the label set).
        labels: the label set, sorted (the probability columns).
        n_bins: bins of top-label confidence (equal width on [0, 1]).
        ece: expected calibration error in [0, 1] with its bootstrap CI.
        brier: multiclass Brier score in [0, 2] with its bootstrap CI.
        accuracy: share of items whose arg-max label is the human majority, in [0, 1].
        bins: one dict per bin: ``bin, low, high, n, mean_confidence, accuracy`` (None where
            the bin is empty).
        selective: one dict per threshold: ``threshold, n, share, accuracy``.
        n_ties: items left out because the human votes tie.
        n_outside: items left out because the human majority is not in the label set.
        n_argmax_differs: items whose arg-max label is not the judge's own label (where the
            judge's labels were given).
    """

    n_items: int
    labels: list[str]
    n_bins: int
    ece: Estimate
    brier: Estimate
    accuracy: float
    bins: list[dict[str, Any]]
    selective: list[dict[str, Any]]
    n_ties: int = 0
    n_outside: int = 0
    n_argmax_differs: int | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ``confidence`` section of ``judge_calibration.json``)."""
        return {
            "n_items": self.n_items,
            "labels": self.labels,
            "binning": f"{self.n_bins} {BINNING}",
            "n_bins": self.n_bins,
            "ece": self.ece.to_dict(),
            "brier": self.brier.to_dict(),
            "brier_form": "mean over items of sum over labels of (p - onehot)^2",
            "accuracy": self.accuracy,
            "bins": self.bins,
            "selective": self.selective,
            "n_ties": self.n_ties,
            "n_outside": self.n_outside,
            "n_argmax_differs": self.n_argmax_differs,
            "notes": self.notes,
        }


def bin_index(conf: np.ndarray, n_bins: int) -> np.ndarray:
    """The bin of each confidence in [0, 1] (int array, values 0..n_bins-1), as
    ``sklearn.calibration.calibration_curve(strategy="uniform")`` bins them."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return np.searchsorted(edges[1:-1], conf)


def _ece_of(counts_conf: np.ndarray, counts_acc: np.ndarray, n: float) -> np.ndarray:
    """ECE from per-bin sums of confidence and of correctness (last axis: bins)."""
    return np.abs(counts_conf - counts_acc).sum(axis=-1) / n


def confidence_report(
    probs: pd.DataFrame,
    reference: pd.Series,
    *,
    judge_labels: pd.Series | None = None,
    n_bins: int = 10,
    thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> ConfidenceReport:
    """ECE, Brier score, reliability bins and selective accuracy (module docstring).

    Args:
        probs: items (index, text ids) x labels (columns, text), each row summing to 1.
        reference: the human majority label per item (text; ``"<tie>"`` for a tie).
        judge_labels: the judge's own label per item, to count items whose arg max differs.
        n_bins: number of equal-width confidence bins (>= 1).
        thresholds: confidence thresholds in [0, 1] of the selective-judging table.
        n_resamples: bootstrap resamples (0: no CI).

    Raises:
        JudgekitError: no item has both probabilities and a human majority in the label set,
            ``n_bins`` < 1, or a threshold outside [0, 1].
    """
    if n_bins < 1:
        raise JudgekitError(f"n_bins must be >= 1, got {n_bins}")
    if any(not 0 <= t <= 1 for t in thresholds):
        raise JudgekitError(f"thresholds must be in [0, 1], got {list(thresholds)}")
    labels = sorted(str(c) for c in probs.columns)
    probs = probs.rename(columns=str)[labels]
    ref = reference.reindex(probs.index).dropna()
    n_ties = int((ref == TIE).sum())
    ref = ref[ref != TIE]
    inside = ref.isin(labels)
    n_outside = int((~inside).sum())
    ref = ref[inside]
    if ref.empty:
        raise JudgekitError("no item has both judge probabilities and a human majority label")
    p = probs.loc[ref.index].to_numpy(dtype=float)
    onehot = (np.asarray(ref)[:, None] == np.asarray(labels)[None, :]).astype(float)
    top = p.argmax(axis=1)
    conf = p[np.arange(len(p)), top]
    correct = onehot[np.arange(len(p)), top]
    bins = bin_index(conf, n_bins)
    n = len(p)
    per_bin_n = np.bincount(bins, minlength=n_bins)
    sum_conf = np.bincount(bins, weights=conf, minlength=n_bins)
    sum_acc = np.bincount(bins, weights=correct, minlength=n_bins)
    ece = float(_ece_of(sum_conf, sum_acc, n))
    brier = float(brier_score_loss(np.asarray(ref), p, labels=labels, scale_by_half=False))
    ece_ci = brier_ci = None
    if n_resamples and n >= 2:
        w = resample_weights(n, n_resamples, seed).astype(float)
        member = np.eye(n_bins)[bins]  # items x bins
        boot_ece = _ece_of(w @ (member * conf[:, None]), w @ (member * correct[:, None]), n)
        per_item = ((p - onehot) ** 2).sum(axis=1)
        ece_ci = percentile_ci(boot_ece, confidence)
        brier_ci = percentile_ci(w @ per_item / n, confidence)
    differs = None
    if judge_labels is not None:
        own = judge_labels.reindex(ref.index).astype(object)
        chosen = np.asarray(labels, dtype=object)[top]
        differs = int(sum(o is not None and str(o) != c for o, c in zip(own, chosen, strict=True)))
    return ConfidenceReport(
        n_items=n,
        labels=labels,
        n_bins=n_bins,
        ece=Estimate(ece, ece_ci),
        brier=Estimate(brier, brier_ci),
        accuracy=float(correct.mean()),
        bins=_bin_rows(conf, correct, per_bin_n, n_bins),
        selective=_selective(conf, correct, thresholds),
        n_ties=n_ties,
        n_outside=n_outside,
        n_argmax_differs=differs,
    )


def _bin_rows(
    conf: np.ndarray, correct: np.ndarray, per_bin_n: np.ndarray, n_bins: int
) -> list[dict[str, Any]]:
    """The reliability table: sklearn's curve for the non-empty bins, empty bins as None."""
    accuracy, mean_conf = calibration_curve(correct, conf, n_bins=n_bins, strategy="uniform")
    filled = iter(zip(accuracy, mean_conf, strict=True))
    rows = []
    for b in range(n_bins):
        acc, mc = next(filled) if per_bin_n[b] else (None, None)
        rows.append({
            "bin": b,
            "low": b / n_bins,
            "high": (b + 1) / n_bins,
            "n": int(per_bin_n[b]),
            "mean_confidence": None if mc is None else float(mc),
            "accuracy": None if acc is None else float(acc),
        })  # fmt: skip
    return rows


def _selective(
    conf: np.ndarray, correct: np.ndarray, thresholds: Sequence[float]
) -> list[dict[str, Any]]:
    """Share of items with confidence >= t and their accuracy, per threshold t."""
    rows = []
    for t in sorted(thresholds):
        kept = conf >= t
        k = int(kept.sum())
        rows.append({
            "threshold": float(t),
            "n": k,
            "share": k / len(conf),
            "accuracy": float(correct[kept].mean()) if k else None,
        })  # fmt: skip
    return rows
