"""Rank clusters: which judges are statistically tied, from pairwise one-sided p-values.

The WMT metrics task's procedure (MT-Metrics-Eval ``data.AssignRanks``; Freitag et al. 2023,
WMT23 metrics findings, sec. 3.2): sort the judges by the statistic, best first (ties broken by
name); walk down the list, and open a new cluster at judge j when some judge of the current
cluster beats j significantly (p <= alpha for "i is better than j"). The judges of one cluster
are therefore never significantly worse than a judge ranked above them in that cluster; rank
r = the cluster's number, 1 the best.

Multiplicity: with ``correction="none"`` (WMT's choice, the default) every test is run at level
alpha, unadjusted; with n judges the family has n (n - 1) / 2 tests, so some separation is
expected by chance alone (about 1 in 20 truly tied pairs split at alpha = 0.05).
``"holm"`` or ``"bonferroni"`` adjust the p-values of the whole family (one statistic, one
facet, one level) with ``statsmodels.stats.multitest.multipletests`` before the walk, which
controls the family-wise error rate: fewer, more reliable separations.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from statsmodels.stats.multitest import multipletests

from judgekit.errors import JudgekitError

CORRECTIONS = ("none", "holm", "bonferroni")


def order_judges(values: Mapping[str, float]) -> list[str]:
    """Judges by decreasing value, name as the tie-break; undefined (NaN) values last."""

    def key(name: str) -> tuple[bool, float, str]:
        value = values[name]
        missing = value is None or np.isnan(value)
        return (missing, 0.0 if missing else -float(value), name)

    return sorted(values, key=key)


def adjust(p_values: Mapping[tuple[str, str], float | None], correction: str):
    """The p-values adjusted for multiplicity over the family (None entries stay None).

    Raises:
        JudgekitError: an unknown correction.
    """
    if correction not in CORRECTIONS:
        raise JudgekitError(f"unknown correction {correction!r}; use {', '.join(CORRECTIONS)}")
    known = {k: v for k, v in p_values.items() if v is not None}
    if correction == "none" or not known:
        return dict(p_values)
    adjusted = multipletests(list(known.values()), method=correction)[1]
    out = dict(p_values)
    out.update(zip(known, (float(x) for x in adjusted), strict=True))
    return out


def rank_clusters(
    values: Mapping[str, float],
    p_values: Mapping[tuple[str, str], float | None],
    *,
    alpha: float = 0.05,
    correction: str = "none",
) -> dict[str, int | None]:
    """The cluster rank of every judge (module doc).

    Args:
        values: judge -> statistic (higher is better).
        p_values: (i, j) -> one-sided p-value of "i is better than j" for i ranked above j
            (:func:`order_judges`); a missing pair, or None, never separates.
        alpha: significance level in (0, 1).
        correction: "none", "holm" or "bonferroni" (module doc).

    Returns:
        judge -> rank (1 = best cluster); None for a judge whose statistic is undefined.
    """
    if not 0 < alpha < 1:
        raise JudgekitError(f"alpha must be in (0, 1), got {alpha}")
    p = adjust(p_values, correction)
    ranked = [j for j in order_judges(values) if not np.isnan(values[j])]
    ranks: dict[str, int | None] = {j: None for j in values}
    rank, start = 1, 0
    for index, judge in enumerate(ranked):
        above = ranked[start:index]
        if any((p.get((i, judge)) is not None and p[(i, judge)] <= alpha) for i in above):
            rank += 1
            start = index
        ranks[judge] = rank
    return ranks
