"""Judge vs human on continuous scores (MQM, DA): Pearson, Spearman, Kendall tau-b and acc_eq.

acc_eq follows Deutsch, Foster & Freitag 2023, "Ties Matter: Meta-Evaluating Modern Metrics with
Pairwise Accuracy and Tie Calibration" (EMNLP 2023), section 4: over all pairs of items,
acc_eq = (C + T_hm) / (C + D + T_h + T_m + T_hm), where a pair is concordant (C) or discordant
(D) when both scores order it, T_h / T_m are pairs tied only in the human / judge scores and
T_hm pairs tied in both; a judge tie is |m_i - m_j| <= epsilon (the epsilon search, section 5,
is :func:`judgekit.metrics.tie_calibration.tie_calibration`). The grouped ("item-grouped")
variants compute the statistic within each group (for WMT: one source segment, the systems'
outputs for it) and average over groups, as in the WMT23 Metrics shared task (Freitag et al.
2023).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import stats

from judgekit.errors import JudgekitError
from judgekit.metrics.bootstrap import bootstrap_ci

METHODS = ("pearson", "spearman", "kendall_tau_b", "acc_eq")


@dataclass(frozen=True)
class PairCounts:
    """Counts of item pairs by how the judge and the human scores order them (Deutsch 2023)."""

    concordant: int
    discordant: int
    ties_human: int
    ties_judge: int
    ties_both: int

    @property
    def n_pairs(self) -> int:
        return (
            self.concordant + self.discordant + self.ties_human + self.ties_judge + self.ties_both
        )

    @property
    def acc_eq(self) -> float:
        """(C + T_hm) / all pairs, in [0, 1]; NaN without pairs."""
        if self.n_pairs == 0:
            return float("nan")
        return (self.concordant + self.ties_both) / self.n_pairs


@dataclass(frozen=True)
class Correlation:
    """One judge-vs-human correlation, with the counts needed to reproduce it.

    ``n`` items entered the statistic, ``n_dropped`` were left out because the judge or the
    human score was missing. For grouped results, ``n_groups`` groups were averaged and
    ``n_groups_skipped`` had an undefined statistic (fewer than 2 items, or constant scores).
    ``ci`` is a percentile bootstrap interval (items, or groups when grouped, resampled).
    """

    method: str
    value: float
    n: int
    n_dropped: int
    p_value: float | None = None
    ci: tuple[float, float] | None = None
    confidence: float = 0.95
    n_resamples: int = 0
    grouping: str = "none"
    n_groups: int | None = None
    n_groups_skipped: int = 0
    epsilon: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _to_float(values: Sequence | np.ndarray | pd.Series, name: str) -> np.ndarray:
    try:
        return pd.to_numeric(pd.Series(list(values), dtype=object), errors="raise").to_numpy(
            dtype=float
        )
    except (TypeError, ValueError) as exc:
        raise JudgekitError(f"{name} scores must be numbers or missing: {exc}") from None


def paired_scores(
    judge: Sequence | np.ndarray | pd.Series,
    human: Sequence | np.ndarray | pd.Series,
    groups: Sequence | np.ndarray | pd.Series | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int]:
    """Drop items whose judge or human score is missing (None or NaN), and count them.

    Returns:
        ``(judge, human, groups, n_dropped)``: float arrays of equal length (groups as an
        object array, or None), and the number of items dropped.

    Raises:
        JudgekitError: the inputs differ in length, or a score is not a number.
    """
    x, y = _to_float(judge, "judge"), _to_float(human, "human")
    if len(x) != len(y) or (groups is not None and len(groups) != len(x)):
        raise JudgekitError(
            f"judge, human (and groups) must have one value per item: got {len(x)}, {len(y)}"
            + ("" if groups is None else f", {len(groups)}")
        )
    keep = ~(np.isnan(x) | np.isnan(y))
    g = None if groups is None else np.asarray(list(groups), dtype=object)[keep]
    return x[keep], y[keep], g, int((~keep).sum())


def pair_counts(judge: np.ndarray, human: np.ndarray, epsilon: float = 0.0) -> PairCounts:
    """Count concordant, discordant and tied pairs over all item pairs i < j.

    Args:
        judge: judge scores, shape (n,), no NaN (see :func:`paired_scores`).
        human: human scores, shape (n,), no NaN.
        epsilon: judge scores closer than or equal to ``epsilon`` count as tied (>= 0, in
            the judge's units); 0 means exact equality.

    Memory is O(n) and time O(n^2): about 1 s for n = 20,000 on one core.
    """
    if epsilon < 0:
        raise JudgekitError(f"epsilon must be >= 0, got {epsilon}")
    x, y = np.asarray(judge, dtype=float), np.asarray(human, dtype=float)
    c = d = th = tm = thm = 0
    for r in range(len(x) - 1):
        dy = y[r] - y[r + 1 :]
        dx = x[r] - x[r + 1 :]
        h_tie = dy == 0
        j_tie = np.abs(dx) <= epsilon
        thm += int(np.count_nonzero(h_tie & j_tie))
        th += int(np.count_nonzero(h_tie & ~j_tie))
        tm += int(np.count_nonzero(~h_tie & j_tie))
        rest = ~h_tie & ~j_tie
        same = np.count_nonzero(rest & (np.sign(dy) == np.sign(dx)))
        c += int(same)
        d += int(np.count_nonzero(rest)) - int(same)
    return PairCounts(c, d, th, tm, thm)


def _statistic(method: str, x: np.ndarray, y: np.ndarray, epsilon: float) -> tuple[float, float]:
    """(value, p-value) of ``method``; NaN where undefined (n < 2, constant scores)."""
    if len(x) < 2:
        return float("nan"), float("nan")
    if method == "acc_eq":
        return pair_counts(x, y, epsilon).acc_eq, float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "pearson":
            if np.ptp(x) == 0 or np.ptp(y) == 0:
                return float("nan"), float("nan")
            res = stats.pearsonr(x, y)
        elif method == "spearman":
            res = stats.spearmanr(x, y)
        elif method == "kendall_tau_b":
            res = stats.kendalltau(x, y, variant="b")
        else:
            raise JudgekitError(f"unknown correlation method {method!r}; use one of {METHODS}")
    return float(res.statistic), float(res.pvalue)


def undefined_reason(judge: np.ndarray, human: np.ndarray) -> str | None:
    """Why a correlation (Pearson, Spearman, Kendall) of ``judge`` and ``human`` (same length,
    complete) is undefined, or None when it is defined: fewer than 2 values, or one side's
    scores all equal (its variance is 0, so the coefficient is 0/0)."""
    judge, human = np.asarray(judge, dtype=float), np.asarray(human, dtype=float)
    if judge.size < 2:
        return f"undefined: {judge.size} value (a correlation needs 2)"
    for side, values in (("the judge's", judge), ("the humans'", human)):
        if np.ptp(values) == 0:
            return (
                f"undefined: all {values.size} of {side} scores are {values[0]:g} (no "
                "variance: the coefficient is 0/0)"
            )
    return None


def undefined_reasons(
    values: dict[str, float], sides: dict[str, tuple[np.ndarray, np.ndarray]]
) -> dict[str, str]:
    """name -> why its value is undefined, for each NaN in ``values`` (name -> a correlation of
    ``sides[name]`` = (judge, human)): :func:`undefined_reason`, else no group (item) defines
    it (within every group one side's scores are equal)."""
    return {name: undefined_reason(*sides[name])
            or "undefined: within every item the judge's or the humans' scores are equal"
            for name, value in values.items() if np.isnan(value)}  # fmt: skip


def _check_method(method: str, epsilon: float | None) -> None:
    if method not in METHODS:
        raise JudgekitError(f"unknown correlation method {method!r}; use one of {METHODS}")
    if epsilon is not None and method != "acc_eq":
        raise JudgekitError("epsilon applies to acc_eq only")


def correlate(
    judge: Sequence | np.ndarray | pd.Series,
    human: Sequence | np.ndarray | pd.Series,
    method: str = "kendall_tau_b",
    *,
    epsilon: float | None = None,
    n_resamples: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> Correlation:
    """Correlation of judge and human scores over items ("no grouping").

    Args:
        judge: judge scores, one per item; None/NaN = missing.
        human: human scores for the same items, in the same order; None/NaN = missing.
        method: ``pearson`` (Pearson r), ``spearman`` (Spearman rho), ``kendall_tau_b``
            (Kendall tau-b, scipy.stats.kendalltau) or ``acc_eq`` (pairwise accuracy with
            ties, Deutsch et al. 2023); all in [-1, 1] except acc_eq in [0, 1].
        epsilon: acc_eq only: judge tie threshold (default 0; see
            :func:`judgekit.metrics.tie_calibration.tie_calibration`).
        n_resamples: bootstrap resamples of items for the CI (0 = no CI). acc_eq costs
            O(n^2) per resample.
        confidence: two-sided CI level in (0, 1).
        seed: bootstrap seed.

    Raises:
        JudgekitError: unknown method, mismatched lengths, non-numeric scores.
    """
    _check_method(method, epsilon)
    eps = 0.0 if epsilon is None else float(epsilon)
    x, y, _, dropped = paired_scores(judge, human)
    value, p = _statistic(method, x, y, eps)
    ci = None
    if n_resamples > 0:
        ci = bootstrap_ci(
            len(x),
            lambda idx: _statistic(method, x[idx], y[idx], eps)[0],
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
        )
    return Correlation(
        method=method,
        value=value,
        n=len(x),
        n_dropped=dropped,
        p_value=None if np.isnan(p) else p,
        ci=ci,
        confidence=confidence,
        n_resamples=n_resamples,
        epsilon=eps if method == "acc_eq" else None,
    )


def upper_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """All pairs i < j of ``n`` positions, ``np.triu_indices(n, 1)`` (row by row), read-only:
    shape (n (n - 1) / 2,) each; kept once per ``n`` up to 128 positions (a WMT segment's
    systems: at most 130 KB a size, 8 MB in all)."""
    return _kept_pairs(n) if n <= 128 else np.triu_indices(n, 1)


@lru_cache(maxsize=128)
def _kept_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    first, second = np.triu_indices(n, 1)
    first.setflags(write=False)
    second.setflags(write=False)
    return first, second


def group_index(groups: np.ndarray) -> list[np.ndarray]:
    """Row positions of each group, groups in order of first appearance (shape: one array per
    group)."""
    codes, _ = pd.factorize(pd.Series(groups), sort=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    return np.split(order, bounds)


def correlate_grouped(
    judge: Sequence | np.ndarray | pd.Series,
    human: Sequence | np.ndarray | pd.Series,
    groups: Sequence | np.ndarray | pd.Series,
    method: str = "kendall_tau_b",
    *,
    grouping: str = "item",
    epsilon: float | None = None,
    n_resamples: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> Correlation:
    """Average over groups of the within-group correlation (WMT's "item-grouped" variant).

    For item grouping pass the segment id (for MT-Metrics-Eval files: the position within the
    system block), so each group compares the systems' outputs for one source segment.
    Groups whose statistic is undefined (fewer than 2 complete items, constant scores) are
    skipped and counted in ``n_groups_skipped``. The CI resamples groups.

    Args:
        groups: group label per item, aligned with ``judge`` and ``human``.
        grouping: a name for the grouping, stored in the result.
        Others: as in :func:`correlate`.

    Raises:
        JudgekitError: unknown method, mismatched lengths, non-numeric scores, or no group
            with a defined statistic.
    """
    _check_method(method, epsilon)
    eps = 0.0 if epsilon is None else float(epsilon)
    x, y, g, dropped = paired_scores(judge, human, groups)
    per_group = np.array(
        [_statistic(method, x[ix], y[ix], eps)[0] for ix in group_index(g)], dtype=float
    )
    defined = per_group[~np.isnan(per_group)]
    if defined.size == 0:
        raise JudgekitError(f"no group has a defined {method} (each needs >= 2 varying items)")
    ci = None
    if n_resamples > 0:
        ci = bootstrap_ci(
            len(defined),
            lambda idx: float(defined[idx].mean()),
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
        )
    return Correlation(
        method=method,
        value=float(defined.mean()),
        n=len(x),
        n_dropped=dropped,
        ci=ci,
        confidence=confidence,
        n_resamples=n_resamples,
        grouping=grouping,
        n_groups=int(defined.size),
        n_groups_skipped=int(per_group.size - defined.size),
        epsilon=eps if method == "acc_eq" else None,
    )


def correlation_table(
    judge: Sequence | np.ndarray | pd.Series,
    human: Sequence | np.ndarray | pd.Series,
    groups: Sequence | np.ndarray | pd.Series | None = None,
    *,
    methods: Sequence[str] = METHODS,
    epsilon: float | None = None,
    n_resamples: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per method (columns of :class:`Correlation`), no grouping or grouped.

    ``epsilon`` is passed to acc_eq only.
    """
    rows = []
    for method in methods:
        eps = epsilon if method == "acc_eq" else None
        kwargs = dict(epsilon=eps, n_resamples=n_resamples, confidence=confidence, seed=seed)
        if groups is None:
            rows.append(correlate(judge, human, method, **kwargs).to_dict())
        else:
            rows.append(correlate_grouped(judge, human, groups, method, **kwargs).to_dict())
    return pd.DataFrame(rows)
