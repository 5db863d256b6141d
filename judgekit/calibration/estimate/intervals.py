"""Which confidence interval an estimate gets, and the studentised bootstrap (bootstrap-t) of the
classical, PPI and PPI++ means.

Intervals (``--interval``):

* ``clt``: ``estimate +- z * se``, the interval of ``ppi_py`` (``se`` as ``ppi_mean_ci``);
* ``t``: ``estimate +- t_{n-1} * se``, the same with Student's t quantile at n - 1 degrees of
  freedom (n the labelled items);
* ``bootstrap-t``: the studentised bootstrap (Efron & Tibshirani 1993, ch. 12; Hall 1988).
  Each of B resamples draws the n labelled (human, judge) pairs and the N unlabelled judge
  values with replacement, independently; PPI++ chooses ``lam`` on it again by its rule
  (:mod:`judgekit.calibration.estimate.moments`: ``ppi_py``'s ``tuned`` by default, or
  ``shrunk``); ``t* = (estimate* - estimate) / se*`` with the resample's own ``se*``, and the
  interval is ``[estimate - q(1 - alpha/2) se, estimate - q(alpha/2) se]`` with ``q`` the
  order statistics of ``t*`` (index ``(B + 1) p``). It corrects the one-sided misses of the
  CLT interval on skewed values (segment MQM), where the truth falls below the lower bound
  more often than alpha / 2;
* ``auto`` (default): for a ``mean`` target, bootstrap-t below :data:`BOOTSTRAP_BELOW` labels
  for humans only and PPI++ and CLT from there (untuned PPI keeps the CLT interval: its
  human-minus-judge correction is less skewed than the scores, and its CLT interval covered
  on MQM at 30 labels where its bootstrap-t did not); for a share or rate, ``t`` below
  :data:`T_BELOW` labels, CLT from there (validated on WMT23 MQM and LLMBar,
  docs/estimates.md).

A bootstrap-t bound is undefined when more than alpha / 2 of the resamples have no spread
(``se* = 0``: binary labels with 3 or fewer positives, say): the interval then falls back to
``t`` and says so (:data:`FALLBACK_NOTE`).

The resample statistics are computed from resample sums (moments), all B at once; the same
sums come from gathering resampled values (:func:`resample_sums`, one estimate) or from count
matrices times values (:mod:`judgekit.calibration.estimate.coverage`, many draws at once).
Both draw the resample indices through :func:`judgekit.metrics.bootstrap.resample_indices`,
so a seed gives the same resamples in both.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from judgekit.calibration.estimate.moments import (  # noqa: F401 (re-exported)
    DEFAULT_LAM,
    LAM_RULES,
    Sums,
    labelled_terms,
    lam_for,
    point_and_se,
    tuned_lam,
)
from judgekit.errors import JudgekitError
from judgekit.metrics.bootstrap import resample_indices

INTERVALS = ("auto", "clt", "t", "bootstrap-t")
BOOTSTRAP_BELOW = 100
T_BELOW = 50
RESAMPLES = 2000
SEED = 0
CHUNK_VALUES = 2_000_000  # resample indices drawn per call (rows x items), bounds the memory
FALLBACK_NOTE = (
    "bootstrap-t bound undefined ({k} of {b} resamples without spread, as with 3 or fewer "
    "positives): t interval"
)


def resolve(interval: str, kind: str, n: int, method: str = "ppi++") -> str:
    """The interval a facet value with ``n`` labels gets (module docstring).

    Args:
        interval: one of :data:`INTERVALS`.
        kind: the target's kind, ``mean``, ``share`` or ``rate``.
        method: ``classical``, ``ppi`` or ``ppi++``.

    Raises:
        JudgekitError: an unknown interval.
    """
    if interval not in INTERVALS:
        raise JudgekitError(f"unknown interval '{interval}' (use {', '.join(INTERVALS)})")
    if interval != "auto":
        return interval
    if kind == "mean":
        return "bootstrap-t" if n < BOOTSTRAP_BELOW and method != "ppi" else "clt"
    return "t" if n < T_BELOW else "clt"


def quantile(interval: str, n: int, alpha: float) -> float:
    """The two-sided quantile of a ``clt`` (z) or ``t`` (t at n - 1 df) interval."""
    if interval == "t" and n > 1:
        return float(student_t.ppf(1 - alpha / 2, n - 1))
    return float(norm.ppf(1 - alpha / 2))


def resample_sums(
    y: np.ndarray, h: np.ndarray, u: np.ndarray, b: int, rng: np.random.Generator,
    unlabelled: bool = True,
) -> Sums:  # fmt: skip
    """The sums of B bootstrap resamples: labelled pairs first, then (``unlabelled``) the
    unlabelled values, independently. Arrays of shape (B,)."""
    parts = [np.stack(labelled_terms(y, h), axis=1)[i].sum(axis=1)
             for i in resample_indices(rng, b, len(y))]  # fmt: skip
    lab = np.concatenate(parts).T
    if unlabelled and len(u):
        values = np.stack([u, u * u], axis=1)
        unl = np.concatenate([values[i].sum(axis=1) for i in resample_indices(rng, b, len(u))]).T
    else:
        unl = np.zeros((2, b))
    return Sums.build(len(y), len(u) if unlabelled else 0, list(lab), list(unl))


def bootstrap_t_bounds(
    point: np.ndarray, se: np.ndarray, boot_point: np.ndarray, boot_se: np.ndarray,
    alpha: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """The bootstrap-t interval from the resample estimates and SEs.

    Args:
        point, se: the sample's estimate and SE, shape (...).
        boot_point, boot_se: the resamples', shape (..., B).
        alpha: error level.

    Returns:
        (low, high, degenerate): the bounds (inf or NaN where undefined) and the number of
        resamples without spread, each of shape (...).
    """
    point, se = np.asarray(point, float), np.asarray(se, float)
    diff = boot_point - point[..., None]
    scale = 1e-9 * (np.abs(se) + 1e-12)[..., None]
    flat = boot_se <= scale
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(flat, np.where(np.abs(diff) <= scale, 0.0, np.sign(diff) * np.inf),
                     diff / np.where(flat, 1.0, boot_se))  # fmt: skip
    b = t.shape[-1]
    t.sort(axis=-1)
    k_low = min(max(int(np.floor((b + 1) * alpha / 2)) - 1, 0), b - 1)
    k_high = min(max(int(np.ceil((b + 1) * (1 - alpha / 2))) - 1, 0), b - 1)
    low = point - t[..., k_high] * se
    high = point - t[..., k_low] * se
    bad = ~np.isfinite(low) | ~np.isfinite(high) | (se <= 0)
    return np.where(bad, np.nan, low), np.where(bad, np.nan, high), flat.sum(axis=-1)


def bootstrap_t(
    y: np.ndarray, h: np.ndarray, u: np.ndarray, lam: float | None, alpha: float,
    resamples: int = RESAMPLES, seed: int = SEED, lam_rule: str = DEFAULT_LAM,
) -> tuple[float, float, int]:  # fmt: skip
    """The bootstrap-t interval of one estimate (module docstring).

    Args:
        y, h: human and judge values of the labelled items, shape (n,), n >= 2.
        u: judge values of the unlabelled items, shape (N,).
        lam: 0 (classical), 1 (PPI) or None (PPI++, ``lam`` chosen by ``lam_rule``,
            :mod:`judgekit.calibration.estimate.moments`, in the sample and again in every
            resample).
        resamples: B; seed: numpy ``default_rng`` seed of the resamples.

    Returns:
        (low, high, resamples without spread); the bounds are NaN where undefined.
    """
    y, h, u = (np.asarray(v, float) for v in (y, h, u))
    sample = Sums.of(y, h, u) if lam != 0 else Sums.of(y, h, u[:0])
    boot = resample_sums(y, h, u, resamples, np.random.default_rng(seed), unlabelled=lam != 0)
    lam_s = lam_for(sample, lam_rule) if lam is None else lam
    lam_b = lam_for(boot, lam_rule) if lam is None else lam
    point, se = point_and_se(sample, lam_s)
    boot_point, boot_se = point_and_se(boot, lam_b)
    low, high, flat = bootstrap_t_bounds(point, se, boot_point, boot_se, alpha)
    return float(low), float(high), int(flat)
