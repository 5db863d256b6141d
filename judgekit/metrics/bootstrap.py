"""Seeded percentile bootstrap over items: the one resampling-index generator every bootstrap in
judgekit draws from (:func:`resample_indices`), its count form (:func:`resample_weights`,
:func:`resample_blocks`), the generic CI (:func:`bootstrap_ci`, through ``scipy.stats.bootstrap``)
and the percentile interval of a distribution (Efron & Tibshirani 1993, ch. 13)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from scipy import stats

_BATCH = 50
CHUNK_VALUES = 2_000_000  # resample indices drawn per block (rows x draws), bounds the memory


def resample_indices(
    rng: np.random.Generator | int,
    n_resamples: int,
    n_items: int,
    *,
    draws: int | None = None,
    block: int | None = None,
) -> Iterator[np.ndarray]:
    """Bootstrap resamples as item indices: ``n_resamples`` rows of ``draws`` (default
    ``n_items``) indices in ``[0, n_items)`` drawn with replacement, yielded as int arrays of
    shape (<= block, draws).

    Args:
        rng: a seeded generator (advanced by the draws) or a seed for ``numpy.random.default_rng``.
        n_resamples: B, the resamples (rows) in all.
        n_items: items resampled from (>= 1 when anything is drawn).
        draws: items per resample (default ``n_items``: the ordinary bootstrap; fewer or more
            for a simulated sample of another size).
        block: rows per yielded array (default: as many as keep :data:`CHUNK_VALUES` indices).

    The draws are ``rng.integers(0, n_items, (rows, draws))`` in row order, and numpy's stream
    does not depend on how it is cut into blocks: one generator gives the same resamples
    whatever the block size, and the same as drawing one resample at a time (Efron & Tibshirani
    1993, ch. 6: the nonparametric bootstrap).
    """
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    width = n_items if draws is None else draws
    rows = block if block is not None else max(1, CHUNK_VALUES // max(width, 1))
    for start in range(0, n_resamples, rows):
        yield gen.integers(0, n_items, size=(min(rows, n_resamples - start), width))


def resample_matrix(
    rng: np.random.Generator | int, n_resamples: int, n_items: int, *, draws: int | None = None
) -> np.ndarray:
    """All of :func:`resample_indices` at once: int array of shape (n_resamples, draws)."""
    blocks = list(resample_indices(rng, n_resamples, n_items, draws=draws))
    width = n_items if draws is None else draws
    return np.concatenate(blocks) if blocks else np.empty((0, width), dtype=np.int64)


def resample_rows(
    rng: np.random.Generator | int, n_resamples: int, n_items: int
) -> Iterator[np.ndarray]:
    """:func:`resample_indices` one resample at a time: ``n_resamples`` int arrays of shape
    (n_items,), for statistics computed per resample."""
    for chunk in resample_indices(rng, n_resamples, n_items):
        yield from chunk


def _counts(draws: np.ndarray, n_items: int) -> np.ndarray:
    """Index rows (rows, n) as counts per item, shape (rows, n_items)."""
    size = len(draws)
    offsets = np.arange(size)[:, None] * n_items
    counts = np.bincount((draws + offsets).ravel(), minlength=size * n_items)
    return counts.reshape(size, n_items)


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
    return _counts(resample_matrix(seed, n_resamples, n_items), n_items)


def resample_blocks(n_items: int, n_resamples: int, seed: int, block: int) -> Iterator[np.ndarray]:
    """:func:`resample_weights` in blocks of at most ``block`` resamples (int arrays of shape
    (<= block, n_items)): the same draws from the same seeded generator, in memory
    ``O(block * n_items)`` instead of ``O(n_resamples * n_items)``."""
    for draws in resample_indices(seed, n_resamples, n_items, block=block):
        yield _counts(draws, n_items)


def percentile_ci(distribution: np.ndarray, confidence: float = 0.95) -> tuple[float, float] | None:
    """The percentile interval (Efron & Tibshirani 1993, ch. 13) of a bootstrap distribution;
    NaN replicates are dropped; None when none is left."""
    values = np.asarray(distribution, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    alpha = (1 - confidence) / 2
    return float(np.quantile(values, alpha)), float(np.quantile(values, 1 - alpha))
