"""Tie calibration of acc_eq: the judge tie threshold epsilon that maximises pairwise accuracy.

Deutsch, Foster & Freitag 2023, "Ties Matter: Meta-Evaluating Modern Metrics with Pairwise
Accuracy and Tie Calibration" (EMNLP 2023), section 5: a judge tie is |m_i - m_j| <= epsilon, and
epsilon is chosen to maximise acc_eq (:mod:`judgekit.metrics.correlation`). Every candidate is
evaluated in one sorted sweep, as in MT-Metrics-Eval's ``tau_optimization``; with groups
(item-grouped acc_eq, as in the WMT23 Metrics shared task) one epsilon is chosen for all groups.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgekit.errors import JudgekitError
from judgekit.metrics.correlation import group_index, paired_scores, upper_pairs


@dataclass(frozen=True)
class TieCalibration:
    """Result of the epsilon search: the best ``epsilon`` and its ``acc_eq``.

    ``thresholds`` (ascending, starting at 0) and ``accuracies`` hold every candidate epsilon
    and its acc_eq, for plotting.
    """

    epsilon: float
    acc_eq: float
    n_pairs: int
    thresholds: np.ndarray
    accuracies: np.ndarray


_ONE_PASS = 1024  # items whose pairs are taken in one pass; more, a row at a time (memory)


def _within_pairs(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """For all pairs i < j (row by row): |x_i - x_j| and the acc_eq gain (+1, -1 or 0, int8)
    of making the pair a judge tie; and C + T_hm, the acc_eq numerator at epsilon = 0. Up to
    ``_ONE_PASS`` items at once; larger inputs a row at a time (memory)."""
    if len(x) <= _ONE_PASS:
        first, second = upper_pairs(len(x))
        return _pair_gains(x[first] - x[second], y[first] - y[second])
    diffs, gains, base = [], [], 0
    for r in range(len(x) - 1):
        diff, gain, count = _pair_gains(x[r] - x[r + 1 :], y[r] - y[r + 1 :])
        diffs.append(diff)
        gains.append(gain)
        base += count
    return np.concatenate(diffs), np.concatenate(gains), base


def _pair_gains(dx: np.ndarray, dy: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """|dx|, the int8 gain of tying each pair, and the pairs counted at epsilon = 0."""
    h_tie, j_tie = dy == 0, dx == 0
    concordant = ~h_tie & (np.sign(dx) == np.sign(dy))
    base = int(np.count_nonzero(concordant)) + int(np.count_nonzero(h_tie & j_tie))
    return np.abs(dx), (h_tie & ~j_tie).astype(np.int8) - concordant.astype(np.int8), base


def tie_calibration(
    judge: Sequence | np.ndarray | pd.Series,
    human: Sequence | np.ndarray | pd.Series,
    groups: Sequence | np.ndarray | pd.Series | None = None,
    *,
    max_pairs: int = 20_000_000,
) -> TieCalibration:
    """Search the judge tie threshold epsilon that maximises acc_eq (Deutsch et al. 2023, sec. 5).

    Every distinct |m_i - m_j| over the pairs is a candidate (plus 0); raising epsilon past a
    pair's difference turns it into a judge tie, which gains a point when the humans tie it
    and loses one when it was concordant. All candidates are evaluated in one sorted sweep,
    as in MT-Metrics-Eval's ``tau_optimization``. With ``groups``, acc_eq is the average of
    the per-group accuracies (item-grouped) and one epsilon is chosen for all groups.

    Args:
        judge, human: scores per item, aligned; None/NaN pairs are dropped.
        groups: optional group label per item (item-grouped acc_eq).
        max_pairs: refuse inputs with more pairs than this. Memory is about 40 bytes a pair
            (0.7 GB for the 18 M pairs of 5,980 ungrouped items); grouping needs far fewer.

    Returns:
        The smallest epsilon reaching the best acc_eq, with all candidates.

    Raises:
        JudgekitError: more than ``max_pairs`` pairs, or no pair at all.
    """
    x, y, g, _ = paired_scores(judge, human, groups)
    index = [np.arange(len(x))] if g is None else group_index(g)
    index = [ix for ix in index if len(ix) >= 2]
    sizes = np.array([len(ix) * (len(ix) - 1) // 2 for ix in index], dtype=np.int64)
    total = int(sizes.sum())
    if total > max_pairs:
        raise JudgekitError(
            f"tie calibration over {total:,} pairs exceeds max_pairs={max_pairs:,}; "
            "group the items (item-grouped acc_eq) or raise max_pairs"
        )
    if total == 0:
        raise JudgekitError("tie calibration needs at least one pair of items")
    parts = [_within_pairs(x[ix], y[ix]) for ix in index]
    # acc_eq = mean over groups of (numerator / pairs): each pair weighs 1 / (pairs * groups).
    weights = 1.0 / (sizes * len(index))
    base = float(sum(w * p[2] for w, p in zip(weights, parts, strict=True)))
    diff = np.concatenate([p[0] for p in parts])
    gain = np.concatenate([p[1] for p in parts])
    del parts
    order = np.argsort(diff, kind="stable")
    sorted_diff = diff[order]
    del diff
    if len(index) == 1:
        cumulative = np.cumsum(gain[order], dtype=np.int64) * weights[0]
    else:
        cumulative = np.cumsum(gain[order] * np.repeat(weights, sizes)[order])
    last = np.r_[sorted_diff[1:] != sorted_diff[:-1], True]
    thresholds = np.r_[0.0, sorted_diff[last]]
    accuracies = base + np.r_[0.0, cumulative[last]]
    if thresholds.size > 1 and thresholds[1] == 0.0:
        thresholds, accuracies = thresholds[1:], accuracies[1:]
    best = int(np.argmax(accuracies))
    return TieCalibration(
        epsilon=float(thresholds[best]),
        acc_eq=float(accuracies[best]),
        n_pairs=total,
        thresholds=thresholds,
        accuracies=accuracies,
    )
