"""Result types of ``judgekit calibrate compare`` and the step every statistic shares.

For one facet value, one level and one statistic (a *family*), :func:`build_family` orders the
judges by value, tests every pair (the judge ranked higher first) with the statistic's paired
permutation test, and assigns the rank clusters (:mod:`judgekit.metrics.clusters`). A row is one
judge's value with its bootstrap CI and cluster rank; a pair is one test. :func:`facet_tests`
asks whether a judge's statistic differs between facet values: Cochran's Q = sum_f w_f
(theta_f - theta_bar)^2 with w_f = 1 / se_f^2 (se_f the bootstrap standard error in facet
value f, the facet values being disjoint sets of items) and theta_bar the w-weighted mean, on
k - 1 degrees of freedom (Cochran 1954, "The combination of estimates from different
experiments", Biometrics 10; for k = 2 it is the two-sided z-test of the difference).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from judgekit.metrics.bootstrap import percentile_ci
from judgekit.metrics.clusters import adjust, order_judges, rank_clusters
from judgekit.metrics.perm_both import SwapResult

HUMAN_CEILING = "human ceiling"
ON_CEILING = " on the ceiling's rows"  # a judge's row scored on the human ceiling's own rows


def on_ceiling(judge: str) -> str:
    """The row name of ``judge`` scored on the human ceiling's rows (each human's item, its
    label replaced by the judge's, against the same leave-one-out reference)."""
    return f"{judge}{ON_CEILING}"


def is_ceiling(judge: str) -> bool:
    """True for the human ceiling's row and the judges' rows on the ceiling's rows (unranked:
    their references differ from the judges' majority reference)."""
    return judge == HUMAN_CEILING or judge.endswith(ON_CEILING)


@dataclass
class Row:
    """One judge's statistic: value, percentile bootstrap CI (None where not computed), the
    cluster ``rank`` (1 = best; None for the human ceiling or an undefined value) and ``n``
    (items, segments or systems behind the value)."""

    judge: str
    facet: str
    level: str
    statistic: str
    value: float
    ci_low: float | None
    ci_high: float | None
    rank: int | None
    n: int
    note: str = ""

    def public(self) -> dict[str, Any]:
        """The ``--json`` form: judge, facet, level, statistic, value, ci_low, ci_high, rank,
        n and note (why an undefined value is undefined; an acc_eq's epsilon)."""
        keys = ("judge", "facet", "level", "statistic", "value", "ci_low", "ci_high", "rank",
                "n", "note")  # fmt: skip
        return {k: getattr(self, k) for k in keys}


@dataclass
class Pair:
    """One paired test: judge ``a`` (ranked higher) against ``b``; ``delta`` = value(a) -
    value(b) >= 0; ``p_value``: one-sided, that a's advantage is chance (None without
    permutations); ``p_adjusted`` after the multiplicity correction; ``ci_low``/``ci_high``: the
    paired bootstrap CI of delta where computed (label judges); permutations run."""

    a: str
    b: str
    facet: str
    level: str
    statistic: str
    delta: float
    p_value: float | None
    p_adjusted: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n_permutations: int = 0

    def public(self) -> dict[str, Any]:
        """The ``--json`` form: a, b, facet, level, statistic, delta, p_value, p_adjusted and
        the permutations run (``n_permutations``: a p-value is read beside them)."""
        keys = ("a", "b", "facet", "level", "statistic", "delta", "p_value", "p_adjusted",
                "n_permutations")  # fmt: skip
        return {k: getattr(self, k) for k in keys}


@dataclass
class Family:
    """What :func:`build_family` needs for one (facet, level, statistic): values and bootstrap
    distributions per judge, the paired test ``test(a, b)`` and, optionally, the paired
    bootstrap distribution of a delta ``delta_dist(a, b)``, and ``n`` units."""

    level: str
    statistic: str
    values: dict[str, float]
    dists: dict[str, np.ndarray | None]
    test: Callable[[str, str], SwapResult]
    n: int
    delta_dist: Callable[[str, str], np.ndarray] | None = None
    notes: dict[str, str] = field(default_factory=dict)
    n_by_judge: dict[str, int] = field(default_factory=dict)  # a judge's own n, where it differs


def _ci(dist: np.ndarray | None, confidence: float) -> tuple[float | None, float | None]:
    ci = percentile_ci(dist, confidence) if dist is not None else None
    return ci if ci is not None else (None, None)


def build_family(
    family: Family, facet: str, *, alpha: float, correction: str, confidence: float
) -> tuple[list[Row], list[Pair]]:
    """Rows and pairs of one family (module doc), judges in cluster order."""
    order = order_judges(family.values)
    defined = [j for j in order if not math.isnan(family.values[j])]
    pairs: list[Pair] = []
    for index, a in enumerate(defined):
        for b in defined[index + 1 :]:
            result = family.test(a, b)
            low = high = None
            if family.delta_dist is not None:
                low, high = _ci(family.delta_dist(a, b), confidence)
            pairs.append(
                Pair(
                    a,
                    b,
                    facet,
                    family.level,
                    family.statistic,
                    result.delta,
                    result.p_value,
                    ci_low=low,
                    ci_high=high,
                    n_permutations=result.n_permutations,
                )
            )
    raw = {(p.a, p.b): p.p_value for p in pairs}
    adjusted = adjust(raw, correction)
    for p in pairs:
        p.p_adjusted = adjusted[(p.a, p.b)]
    ranks = rank_clusters(family.values, raw, alpha=alpha, correction=correction)
    rows = []
    for judge in order:
        low, high = _ci(family.dists.get(judge), confidence)
        rows.append(
            Row(
                judge,
                facet,
                family.level,
                family.statistic,
                family.values[judge],
                low,
                high,
                ranks[judge],
                family.n_by_judge.get(judge, family.n),
                family.notes.get(judge, ""),
            )
        )
    return rows, pairs


@dataclass
class FacetTest:
    """Whether one judge's statistic differs between facet values (module doc): the values
    per facet value, Cochran's ``q`` on ``df`` degrees of freedom, its ``p_value`` and the
    largest difference ``spread`` (max - min)."""

    judge: str
    level: str
    statistic: str
    values: dict[str, float]
    spread: float
    q: float | None
    df: int
    p_value: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def facet_tests(
    per_facet: dict[str, dict[tuple[str, str, str], tuple[float, np.ndarray | None]]],
) -> list[FacetTest]:
    """Cochran's Q per (judge, level, statistic) over the facet values that have it.

    Args:
        per_facet: facet value -> {(judge, level, statistic): (value, bootstrap distribution)}.
    """
    keys = list(dict.fromkeys(k for table in per_facet.values() for k in table))
    out = []
    for key in keys:
        found = {f: t[key] for f, t in per_facet.items() if key in t and not math.isnan(t[key][0])}
        if len(found) < 2:
            continue
        values = {f: float(v) for f, (v, _) in found.items()}
        se = {
            f: float(np.nanstd(d, ddof=1)) if d is not None else math.nan
            for f, (_, d) in found.items()
        }
        q = p = None
        if all(math.isfinite(s) and s > 0 for s in se.values()):
            w = np.array([1 / se[f] ** 2 for f in values])
            theta = np.array(list(values.values()))
            mean = float((w * theta).sum() / w.sum())
            q = float((w * (theta - mean) ** 2).sum())
            p = float(stats.chi2.sf(q, len(values) - 1))
        spread = max(values.values()) - min(values.values())
        out.append(
            FacetTest(*key, values=values, spread=spread, q=q, df=len(values) - 1, p_value=p)
        )
    return out
