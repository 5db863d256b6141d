"""Results of the agreement statistics, and how a statistic becomes one (value + bootstrap CI).

:func:`evaluate` is the one path every coefficient in :mod:`judgekit.metrics.agreement` and
:mod:`judgekit.metrics.krippendorff_alpha` takes: the statistic is a function of an array of
item indices, evaluated on all items for the estimate and, when a CI is asked for, on seeded
bootstrap resamples of items (:func:`judgekit.metrics.bootstrap.bootstrap_ci`, percentile).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Hashable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from judgekit.errors import JudgekitError
from judgekit.metrics.bootstrap import bootstrap_ci


@dataclass(frozen=True)
class AgreementResult:
    """One agreement statistic.

    Attributes:
        statistic: its name in the field's words ("Fleiss' kappa", "Gwet's AC1", ...).
        value: the estimate (NaN when undefined, e.g. a chance-corrected coefficient with one
            category); kappa-type coefficients lie in [-1, 1], shares in [0, 1].
        ci: (low, high) percentile bootstrap interval over items, or None when not requested.
        n_items: items that entered the statistic (after the statistic's missing-data rule).
        n_raters: raters (columns) in the table.
        level: level of measurement or weighting ("nominal", "linear", "interval", ...).
        confidence, n_resamples, seed: the bootstrap settings (None without a CI).
        details: statistic-specific extras (observed and chance agreement, ASE, z, method).
        note: why ``value`` is NaN (``"no variation: ..."``, ``"one item: ..."``, ``"no item
            with 2 or more ratings"``); None when the value is defined.
    """

    statistic: str
    value: float
    ci: tuple[float, float] | None
    n_items: int
    n_raters: int
    level: str = "nominal"
    confidence: float | None = None
    n_resamples: int | None = None
    seed: int | None = None
    details: dict[str, Any] = field(default_factory=dict)
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (NaN kept as float NaN)."""
        out = asdict(self)
        out["ci"] = list(self.ci) if self.ci is not None else None
        return out


@dataclass(frozen=True)
class PrevalenceResult:
    """Share of all ratings in each category (raw ratings, every rater counted).

    Attributes:
        value: share of the most frequent category, in [0, 1]; category: that category.
        counts: ratings per category. per_category: the share of each category as an
            :class:`AgreementResult` (value in [0, 1], bootstrap CI over items when asked).
        n_items, n_ratings: items with at least one rating; non-missing ratings.
    """

    value: float
    category: Hashable
    counts: dict[Hashable, int]
    per_category: dict[Hashable, AgreementResult]
    n_items: int
    n_ratings: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with category names as text."""
        return {
            "statistic": "prevalence",
            "value": self.value,
            "category": str(self.category),
            "n_items": self.n_items,
            "n_ratings": self.n_ratings,
            "categories": [
                {"category": str(c), "count": self.counts[c], **r.to_dict()}
                for c, r in self.per_category.items()
            ],
        }


@dataclass(frozen=True)
class Boot:
    """Bootstrap settings of one statistic; ``n`` = 0 means no CI."""

    n: int
    confidence: float
    seed: int


def boot_settings(ci: bool, n_resamples: int | None, confidence: float, seed: int) -> Boot:
    """A CI is computed when ``ci`` is True (1000 resamples unless given) or n_resamples > 0.

    Raises:
        JudgekitError: ``n_resamples`` < 0.
    """
    if n_resamples is not None and n_resamples < 0:
        raise JudgekitError(f"n_resamples must be >= 0, got {n_resamples}")
    return Boot(n_resamples or (1000 if ci else 0), confidence, seed)


def evaluate(
    statistic: str,
    fn: Callable[[np.ndarray], float],
    n_items: int,
    n_raters: int,
    boot: Boot,
    level: str = "nominal",
    details: dict[str, Any] | None = None,
    undefined: str | None = None,
) -> AgreementResult:
    """Evaluate ``fn`` on all items (an index array) and, if asked, bootstrap it over items.

    Args:
        fn: the statistic as a function of item indices, shape (k,), values in [0, n_items).
        undefined: the reason to give when the estimate is NaN (the caller knows its data:
            :func:`degenerate`); without one, the library's error is named.

    A resample (or data set) where the statistic is undefined (e.g. no item with 2 ratings,
    a division by zero inside a library) counts as NaN, which the bootstrap drops.
    """
    failure: list[str] = []

    def safe(idx: np.ndarray) -> float:
        try:
            return float(fn(idx))
        except (ZeroDivisionError, FloatingPointError, ValueError) as exc:
            failure.append(f"{type(exc).__name__}: {exc}")
            return float("nan")

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        value = safe(np.arange(n_items)) if n_items else float("nan")
        note = None
        if math.isnan(value):
            reason = "no item with 2 or more ratings" if not n_items else None
            note = undefined or reason or (f"undefined ({failure[0]})" if failure else "undefined")
        interval = None
        if boot.n:
            interval = bootstrap_ci(
                n_items, safe, n_resamples=boot.n, confidence=boot.confidence, seed=boot.seed
            )
    on = bool(boot.n)
    return AgreementResult(
        statistic, value, interval, n_items, n_raters, level,
        boot.confidence if on else None, boot.n or None, boot.seed if on else None,
        details or {}, note,
    )  # fmt: skip


def degenerate(counts: np.ndarray, *, chance_corrected: bool = True) -> str | None:
    """Why an agreement statistic of per-item category counts may be undefined, or None.

    Args:
        counts: (n_items, q) ratings of each category per item.
        chance_corrected: the statistic divides by 1 - p_e (kappa-type, alpha), which is 0 when
            every rating is the same category.

    Returns:
        ``"no item with 2 or more ratings"``, ``"no variation: ..."`` (chance-corrected only) or
        ``"one item: ..."``; None for a table with no such degeneracy.
    """
    paired = counts[counts.sum(axis=1) >= 2]
    if not len(paired):
        return "no item with 2 or more ratings"
    if chance_corrected and int((paired.sum(axis=0) > 0).sum()) < 2:
        return ("no variation: every rating on the items with 2 or more ratings is the same "
                "category, so chance agreement is 1")  # fmt: skip
    if len(paired) == 1:
        return "one item: irrCAC computes it together with a variance over items, needing 2 or more"
    return None
