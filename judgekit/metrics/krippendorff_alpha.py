"""Krippendorff's alpha at the four levels of measurement, with fast bootstrap replicates.

The point estimate is the ``krippendorff`` package's (Krippendorff 2011, *Computing
Krippendorff's Alpha-Reliability*), given per-item value counts so that units with fewer than
2 values drop out as in the reference computation. Bootstrap replicates use the same formulas
in matrix form (:func:`alpha_replicate`), orders of magnitude faster on rating scales; a test
checks them against the package at every level.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal

import krippendorff
import numpy as np

from judgekit.errors import JudgekitError
from judgekit.metrics.agreement_results import AgreementResult, boot_settings, degenerate, evaluate
from judgekit.metrics.label_codes import Ratings, encode

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS = ("nominal", "ordinal", "interval", "ratio")


def alpha_replicate(counts: np.ndarray, domain: np.ndarray, level: str, idx: np.ndarray) -> float:
    """Krippendorff's alpha of one bootstrap resample, from the coincidence matrix.

    Args:
        counts: (n_units, V) values per unit, every unit with >= 2 values.
        domain: (V,) the values (category indices at the nominal level).
        level: "nominal", "ordinal", "interval" or "ratio".
        idx: (k,) unit indices of the resample (with repetitions).

    Same quantities as ``krippendorff.alpha`` (Krippendorff 2011, eqs. for o_ck, e_ck and the
    four difference functions), in matrix form: the package builds an (items, V, V) array per
    call, which takes seconds for a 0-100 scale.
    """
    weights = np.bincount(idx, minlength=len(counts)) / (counts.sum(axis=1) - 1)
    weighted = counts * weights[:, None]
    o = weighted.T @ counts - np.diag(weighted.sum(axis=0))
    n_v = o.sum(axis=0)
    e = (np.outer(n_v, n_v) - np.diag(n_v)) / (n_v.sum() - 1)
    v1, v2 = np.meshgrid(domain, domain, indexing="ij")
    if level == "nominal":
        delta = 1.0 - np.eye(len(domain))
    elif level == "interval":
        delta = (v1 - v2) ** 2
    elif level == "ratio":
        total = v1 + v2
        delta = np.divide(v1 - v2, total, out=np.zeros_like(total), where=total != 0) ** 2
    else:  # ordinal: (sum of n_g for g between c and k, minus (n_c + n_k) / 2) squared
        cum = np.concatenate([[0.0], np.cumsum(n_v)])
        i1, i2 = np.meshgrid(np.arange(len(domain)), np.arange(len(domain)), indexing="ij")
        lo, hi = np.minimum(i1, i2), np.maximum(i1, i2)
        delta = (cum[hi + 1] - cum[lo] - (n_v[i1] + n_v[i2]) / 2) ** 2
    with np.errstate(all="ignore"):
        return float(1 - (o * delta).sum() / (e * delta).sum())


def krippendorff_alpha(
    data: Ratings,
    *,
    level: Level = "nominal",
    categories: Sequence[Hashable] | None = None,
    ci: bool = False,
    n_resamples: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> AgreementResult:
    """Krippendorff's alpha, at most 1 (Krippendorff 2011), via ``krippendorff.alpha``.

    ``level`` is the level of measurement ("nominal", "ordinal", "interval", "ratio") and is
    stated in the result. Ordinal uses the order of ``categories`` (numbers: by value; text
    labels with no declared order are refused, never sorted alphabetically); interval and
    ratio need numeric labels. Units with fewer than 2 values drop out (``n_items`` counts the
    rest).
    A CI (``ci=True`` or ``n_resamples > 0``) is a seeded percentile bootstrap over units.
    ``categories``: the category set and order (default: the labels present); NaN with the
    reason in ``note`` when every value is the same ("no variation": D_e = 0).

    Raises:
        JudgekitError: unknown level, a non-numeric label at the interval or ratio level, or
            text labels at the ordinal level without ``categories``.
    """
    if level not in LEVELS:
        raise JudgekitError(f"unknown level of measurement '{level}' (use {', '.join(LEVELS)})")
    order = f"Krippendorff's alpha at the {level} level" if level == "ordinal" else None
    coded, n_raters = encode(data, categories, order_for=order)
    numeric = coded.numeric_categories()
    if level in ("interval", "ratio") and numeric is None:
        raise JudgekitError(
            f"Krippendorff's alpha at the {level} level needs numeric labels, "
            f"got {coded.categories[:5]}"
        )
    domain = numeric if numeric is not None and level != "nominal" else np.arange(coded.q)
    counts = coded.counts()
    counts = counts[counts.sum(axis=1) >= 2]

    def alpha(idx: np.ndarray) -> float:
        if len(idx) == len(counts) and np.array_equal(idx, np.arange(len(counts))):
            return float(
                krippendorff.alpha(
                    value_counts=counts, value_domain=domain, level_of_measurement=level
                )
            )
        return alpha_replicate(counts, domain, level, idx)

    return evaluate(
        "Krippendorff's alpha",
        alpha if coded.q >= 2 else (lambda idx: float("nan")),
        len(counts),
        n_raters,
        boot_settings(ci, n_resamples, confidence, seed),
        level=level,
        undefined=degenerate(counts),
    )
