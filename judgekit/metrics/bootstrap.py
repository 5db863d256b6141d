"""Seeded percentile bootstrap over items, the one resampling routine every metric uses."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from scipy import stats

_BATCH = 50


def bootstrap_ci(
    n_items: int,
    statistic: Callable[[np.ndarray], float],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of ``statistic`` over items resampled with replacement.

    Args:
        n_items: number of items (rows) in the data the statistic reads.
        statistic: maps an int array of item indices (length ``n_items``, with repeats) to a
            float; it may return NaN for a degenerate resample, which is then dropped.
        n_resamples: bootstrap resamples (>= 1).
        confidence: two-sided level in (0, 1).
        seed: seed of the generator, so the same call gives the same interval.

    Returns:
        ``(low, high)``, or None when there are fewer than 2 items or every resample is NaN.

    Uses ``scipy.stats.bootstrap`` (percentile method) on the index array (Efron & Tibshirani
    1993, ch. 13).
    """
    if n_items < 2:
        return None
    index = np.arange(n_items)

    def _stat(sample: np.ndarray) -> float:
        value = statistic(np.asarray(sample, dtype=int))
        return np.nan if value is None else float(value)

    with np.errstate(all="ignore"):
        res = stats.bootstrap(
            (index,),
            _stat,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method="percentile",
            vectorized=False,
            batch=_BATCH,  # resamples drawn at a time: memory O(batch * n_items)
            random_state=np.random.default_rng(seed),
        )
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if np.isnan(low) or np.isnan(high):
        dist = np.asarray(res.bootstrap_distribution, dtype=float)
        dist = dist[~np.isnan(dist)]
        if dist.size == 0:
            return None
        alpha = (1 - confidence) / 2
        low, high = (float(np.quantile(dist, q)) for q in (alpha, 1 - alpha))
    return (low, high)


def resample_weights(n_items: int, n_resamples: int, seed: int) -> np.ndarray:
    """How often each item is drawn in each of ``n_resamples`` bootstrap resamples (with
    replacement, ``n_items`` draws each): int array of shape (n_resamples, n_items), seeded.

    For statistics that are sums over items (confusion counts, system sums), weights score
    every resample in one matrix product, and the same weights pair two judges' resamples.
    """
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_items, size=(n_resamples, n_items))
    offsets = np.arange(n_resamples)[:, None] * n_items
    counts = np.bincount((draws + offsets).ravel(), minlength=n_resamples * n_items)
    return counts.reshape(n_resamples, n_items)


def resample_blocks(n_items: int, n_resamples: int, seed: int, block: int) -> Iterator[np.ndarray]:
    """:func:`resample_weights` in blocks of at most ``block`` resamples (int arrays of shape
    (<= block, n_items)): the same draws from the same seeded generator, in memory
    ``O(block * n_items)`` instead of ``O(n_resamples * n_items)``."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < n_resamples:
        size = min(block, n_resamples - done)
        draws = rng.integers(0, n_items, size=(size, n_items))
        offsets = np.arange(size)[:, None] * n_items
        counts = np.bincount((draws + offsets).ravel(), minlength=size * n_items)
        yield counts.reshape(size, n_items)
        done += size


def percentile_ci(distribution: np.ndarray, confidence: float = 0.95) -> tuple[float, float] | None:
    """The percentile interval (Efron & Tibshirani 1993, ch. 13) of a bootstrap distribution;
    NaN replicates are dropped; None when none is left."""
    values = np.asarray(distribution, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    alpha = (1 - confidence) / 2
    return float(np.quantile(values, alpha)), float(np.quantile(values, 1 - alpha))
