"""Labels scored against reference labels: accuracy, macro-F1, Cohen's kappa, Gwet's AC1,
per-class recall and precision, each with a seeded percentile bootstrap CI over items.

The point estimates are scikit-learn's (``accuracy_score``, ``f1_score(average="macro")``,
``cohen_kappa_score``, ``precision_recall_fscore_support``) and irrCAC's for AC1
(:func:`judgekit.metrics.agreement.gwet_ac1`, the two "raters" being the reference and the
label). Bootstrap replicates are computed from the weighted confusion matrix with the same
formulas (:func:`cell_metrics`, checked against sklearn with ``sample_weight`` and against
irrCAC in the tests): sklearn's per-call validation would make 1000 resamples take minutes.
Several rows may share an item (the pooled human ceiling); a resample draws items, and all of
an item's rows move together.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import (
    accuracy_score,
    cohen_kappa_score,
    f1_score,
    precision_recall_fscore_support,
)

from judgekit.labels.majority import TIE, TiePolicy
from judgekit.metrics.bootstrap import bootstrap_ci

METRICS = ("accuracy", "macro_f1", "kappa")
CELL_METRICS = (*METRICS, "ac1")  # what cell_metrics computes from a confusion matrix


def cell_metrics(cells: np.ndarray, classes: np.ndarray) -> dict[str, np.ndarray]:
    """Accuracy, macro-F1, Cohen's kappa and Gwet's AC1 from (weighted) confusion matrices.

    Args:
        cells: shape (..., q, q), rows = reference label, columns = judge label (counts or
            bootstrap weights); any leading axes are batches.
        classes: boolean mask, shape (q,) or (..., q): the labels macro-F1 averages over.

    Returns:
        name -> array of the leading shape. accuracy, macro-F1 in [0, 1]; kappa (Cohen 1960)
        and AC1 in [-1, 1]. AC1 = (p_a - p_e) / (1 - p_e), p_e = sum_k pi_k (1 - pi_k) / (q - 1)
        with pi_k the mean of the two margins' shares (Gwet 2008, Br. J. Math. Stat. Psychol.
        61:29-48, the two-rater case); NaN where undefined (q < 2, no item).
    """
    cells = np.asarray(cells, dtype=float)
    q = cells.shape[-1]
    n = cells.sum(axis=(-1, -2))
    tp = np.diagonal(cells, axis1=-2, axis2=-1)
    true, pred = cells.sum(axis=-1), cells.sum(axis=-2)
    with np.errstate(all="ignore"):
        p_a = tp.sum(axis=-1) / n
        p_e = (true * pred).sum(axis=-1) / n**2
        f1 = np.where(true + pred > 0, 2 * tp / (true + pred), 0.0)
        share = (true + pred) / (2 * n[..., None])
        chance = (share * (1 - share)).sum(axis=-1) / (q - 1) if q > 1 else np.nan * n
        return {
            "accuracy": p_a,
            "macro_f1": (f1 * classes).sum(axis=-1) / np.sum(classes, axis=-1),
            "kappa": (p_a - p_e) / (1 - p_e),
            "ac1": (p_a - chance) / (1 - chance),
        }


@dataclass(frozen=True)
class Estimate:
    """A scalar with its bootstrap interval ((low, high) or None)."""

    value: float
    ci: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci": list(self.ci) if self.ci else None}

    def __str__(self) -> str:
        ci = f" [{self.ci[0]:.3f}, {self.ci[1]:.3f}]" if self.ci else ""
        return f"{self.value:.3f}{ci}"


def label_sets(pairs: pd.DataFrame, tie_policy: TiePolicy) -> tuple[list[str], list[str]]:
    """(all labels, for kappa and the confusion matrix; classes averaged in macro scores).

    Labels are sorted with ``"<tie>"`` last; it is a class only under "own_class".
    """
    seen = sorted(set(pairs["reference"]) | set(pairs["label"]))
    everything = [x for x in seen if x != TIE] + ([TIE] if TIE in seen else [])
    classes = everything if tie_policy == "own_class" else [x for x in everything if x != TIE]
    return everything, classes


def _ac1(reference: np.ndarray, label: np.ndarray, categories: list[Any]) -> float:
    """Gwet's AC1 of the labels against the reference by irrCAC (two raters, every row)."""
    from judgekit.metrics.agreement import gwet_ac1

    frame = pd.DataFrame({"reference": reference, "label": label}, dtype=object)
    if len(frame) < 2 or len(categories) < 2:
        return float("nan")
    return float(gwet_ac1(frame, categories=categories).value)


class ReferenceScorer:
    """Accuracy, macro-F1 and kappa of ``label`` against ``reference``, bootstrapped by item.

    Args:
        pairs: DataFrame with columns item, reference, label (labels as text); several rows
            may share an item.
        tie_policy: decides whether ``"<tie>"`` is a class (see :mod:`judgekit.labels.majority`);
            tied rows must already be removed under "exclude".

    Metric names: "accuracy" and "macro_f1" in [0, 1], "kappa" and "ac1" in [-1, 1],
    "recall:<class>" and "precision:<class>" in [0, 1] (NaN without support / predictions).
    """

    def __init__(self, pairs: pd.DataFrame, tie_policy: TiePolicy) -> None:
        self.pairs = pairs
        self.everything, self.classes = label_sets(pairs, tie_policy)
        self.item_codes, self.items = pd.factorize(pairs["item"])
        self.y_true = pairs["reference"].to_numpy()
        self.y_pred = pairs["label"].to_numpy()
        code = {label: k for k, label in enumerate(self.everything)}
        self.t_codes = np.array([code[x] for x in self.y_true], dtype=int)
        self.p_codes = np.array([code[x] for x in self.y_pred], dtype=int)
        self.class_codes = [code[c] for c in self.classes]
        self._cache: dict[bytes, dict[str, float]] = {}

    def _all(self, idx: np.ndarray | None) -> dict[str, float]:
        """Every metric on all rows (sklearn) or on one bootstrap resample of items (counts).

        Results are cached: each metric's bootstrap replays the same resamples.
        """
        # a digest, not the resample itself: 1,000 keys of 100,000 items would hold 0.8 GB
        key = b"" if idx is None else hashlib.blake2b(idx.tobytes(), digest_size=16).digest()
        if key not in self._cache:
            self._cache[key] = self._sklearn() if idx is None else self._from_counts(idx)
        return self._cache[key]

    def _sklearn(self) -> dict[str, float]:
        t, p = self.y_true, self.y_pred
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = {
                "accuracy": float(accuracy_score(t, p)),
                "macro_f1": float(f1_score(t, p, labels=self.classes, average="macro")),
                "kappa": float(cohen_kappa_score(t, p, labels=self.everything)),
            }
            prec, rec, _, _ = precision_recall_fscore_support(
                t, p, labels=self.classes, zero_division=np.nan
            )
        out.update({f"recall:{c}": float(r) for c, r in zip(self.classes, rec, strict=True)})
        out.update({f"precision:{c}": float(x) for c, x in zip(self.classes, prec, strict=True)})
        return out

    def _from_counts(self, idx: np.ndarray) -> dict[str, float]:
        q = len(self.everything)
        weights = np.bincount(idx, minlength=len(self.items))[self.item_codes]
        cells = np.bincount(self.t_codes * q + self.p_codes, weights=weights, minlength=q * q)
        cells = cells.reshape(q, q)
        tp = np.diag(cells)
        true, pred = cells.sum(axis=1), cells.sum(axis=0)
        mask = np.isin(np.arange(q), self.class_codes)
        out = {k: float(v) for k, v in cell_metrics(cells, mask).items()}
        with np.errstate(all="ignore"):
            for c, k in zip(self.classes, self.class_codes, strict=True):
                out[f"recall:{c}"] = float(tp[k] / true[k]) if true[k] else float("nan")
                out[f"precision:{c}"] = float(tp[k] / pred[k]) if pred[k] else float("nan")
        return out

    def metric(self, name: str, idx: np.ndarray | None = None) -> float:
        """One metric on all rows, or on the resample ``idx`` (item indices, with repeats)."""
        values = self._all(idx)
        if name == "ac1" and idx is None and name not in values:  # irrCAC, only when asked
            values[name] = _ac1(self.y_true, self.y_pred, self.everything)
        return values[name]

    def estimate(self, name: str, n_resamples: int, confidence: float, seed: int) -> Estimate:
        """The metric with a percentile bootstrap CI over items (none when n_resamples is 0)."""
        value = self.metric(name) if len(self.pairs) else float("nan")
        ci = None
        if n_resamples and len(self.pairs):
            ci = bootstrap_ci(
                len(self.items),
                lambda idx: self.metric(name, idx),
                n_resamples=n_resamples,
                confidence=confidence,
                seed=seed,
            )
        return Estimate(value, ci)
