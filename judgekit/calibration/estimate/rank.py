"""Ranking facet values (systems, models) by a prediction-powered estimate, with simultaneous
intervals and rank intervals (``calibrate estimate --rank``).

The K intervals hold together (Bonferroni over the K values: each at level alpha / K), so with
probability >= 1 - alpha every value lies in its interval. With the bootstrap-t, the tail
quantile alpha / (2K) needs more resamples: :func:`rank_resamples` takes B * K, so that each
tail holds as many resamples (B alpha / 2, 50 with the defaults) as a single interval's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pandas as pd

from judgekit.calibration.estimate import Estimate, IntervalRule, group_rows
from judgekit.errors import JudgekitError
from judgekit.metrics.common_items import tied_ranks


def rank_resamples(resamples: int, k: int) -> int:
    """Bootstrap-t resamples for K simultaneous intervals: B * K (module docstring)."""
    return resamples * max(k, 1)


def ranking(
    data: pd.DataFrame, groups: pd.Series, *, alpha: float = 0.05, higher_is_better: bool = True,
    method: str = "ppi++", rule: IntervalRule | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """Rank the facet values by the estimate, with rank intervals.

    A facet's rank interval is [1 + number of facets surely better, K - number surely worse],
    where "surely better" means the two simultaneous intervals do not overlap. Rank 1 is the
    best.

    Args:
        rule: the interval rule (default ``auto``, a mean); with K values each interval is at
            level alpha / K, with :func:`rank_resamples` resamples for a bootstrap-t.

    Returns:
        one dict per facet value, best first: ``facet``, ``method``, ``estimate``, ``ci_low``,
        ``ci_high`` (simultaneous), ``interval``, ``resamples`` (B of a bootstrap-t, else
        None), ``rank`` (ties share one, ``tied``), ``rank_low``, ``rank_high``.

    Raises:
        JudgekitError: fewer than 2 facet values, or a facet without a CI.
    """
    values = sorted(set(groups.reindex(data.index)))
    if len(values) < 2:
        raise JudgekitError("a ranking needs at least 2 facet values")
    rule = rule or IntervalRule()
    level = alpha / len(values)
    simultaneous = replace(rule, resamples=rank_resamples(rule.resamples, len(values)))
    rows: list[Estimate] = []
    for value in values:
        subset = data[groups.reindex(data.index) == value]
        est = next(e for e in group_rows(subset, str(value), level, simultaneous)
                   if e.method == method)  # fmt: skip
        if est.ci_low is None or est.ci_high is None or est.estimate is None:
            raise JudgekitError(f"facet '{value}': fewer than 2 labelled items, no rank interval")
        rows.append(est)
    sign = 1.0 if higher_is_better else -1.0
    rows.sort(key=lambda e: -sign * e.estimate)  # type: ignore[operator]
    ranks = tied_ranks({e.facet: e.estimate for e in rows}, lower_is_better=not higher_is_better)
    out = []
    for est in rows:
        lo, hi = _bounds(est, higher_is_better)
        better = sum(1 for o in rows if _bounds(o, higher_is_better)[0] > hi)
        worse = sum(1 for o in rows if _bounds(o, higher_is_better)[1] < lo)
        out.append({"facet": est.facet, "method": method, "estimate": est.estimate,
                    "ci_low": est.ci_low, "ci_high": est.ci_high, "interval": est.interval,
                    "resamples": simultaneous.resamples if est.interval == "bootstrap-t"
                    else None, "rank": ranks[est.facet][0], "tied": ranks[est.facet][1],
                    "rank_low": 1 + better, "rank_high": len(rows) - worse})  # fmt: skip
    return out


def _bounds(est: Estimate, higher_is_better: bool) -> tuple[float, float]:
    assert est.ci_low is not None and est.ci_high is not None
    return (est.ci_low, est.ci_high) if higher_is_better else (-est.ci_high, -est.ci_low)
