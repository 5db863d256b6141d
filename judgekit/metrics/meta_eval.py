"""System-level meta-evaluation statistics of a score judge (the WMT metrics task's), vectorised.

Every function takes score *rows* so that one call scores many vectors: the judge's scores,
their bootstrap resamples, or the hybrids of a permutation test (:mod:`judgekit.metrics.
perm_both`). Scores are "higher is better" on both sides (MT-Metrics-Eval's convention: MQM is
negated); the human side is one fixed vector or matrix.

* :func:`pearson_rows`: Pearson r of each row with the human vector, in [-1, 1] (NaN where a
  side is constant); the system-level correlation of WMT (Freitag et al. 2023, WMT23 metrics
  task findings, sec. 3).
* :func:`pairwise_accuracy_rows`: the share of system pairs that the judge orders as the
  humans do, ``sign(judge_i - judge_j) == sign(human_i - human_j)`` (a pair tied on both sides
  agrees, tied on one side only does not), in [0, 1]; Kocmi et al. 2021, "To Ship or Not to
  Ship" (WMT), sec. 3.1, as MT-Metrics-Eval's ``stats.Agreement`` counts it.
* :func:`soft_pairwise_accuracy`: 1 - mean |p_h - p_j| over system pairs, where p is the
  one-sided p-value of "system i is better than system j" from a paired permutation test over
  segments, on the human and on the judge scores (Thompson et al. 2024, "Improving Statistical
  Significance in Human Evaluation of Automatic Metrics via Soft Pairwise Accuracy", WMT,
  sec. 3), in [0, 1]. The permutation signs are drawn as MT-Metrics-Eval's ``pce.py`` draws
  them (numpy ``default_rng(seed)``, float32 uniforms rounded to 0/1, seed 4 and 1,000
  permutations by default), so the value is reproducible; the same signs serve both sides.
"""

from __future__ import annotations

import numba
import numpy as np

from judgekit.errors import JudgekitError

SPA_PERMUTATIONS = 1000
SPA_SEED = 4  # MT-Metrics-Eval's pce.compute_pairwise_p_values default


def _rows(values: np.ndarray) -> np.ndarray:
    return np.atleast_2d(np.asarray(values, dtype=float))


def pearson_rows(judges: np.ndarray, human: np.ndarray) -> np.ndarray:
    """Pearson r of each row of ``judges`` (shape (B, n)) with ``human`` ((n,), or (B, n) for
    one human row per judge row); shape (B,).

    NaN for a row (or a human vector) with no variance, as MT-Metrics-Eval treats scipy's
    constant-input case.
    """
    x = _rows(judges)
    y = np.broadcast_to(np.asarray(human, dtype=float), x.shape)
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    with np.errstate(all="ignore"):
        r = (xc * yc).sum(axis=1) / np.sqrt((xc**2).sum(axis=1) * (yc**2).sum(axis=1))
        constant = (np.ptp(x, axis=1) == 0) | (np.ptp(y, axis=1) == 0)
    return np.where(constant, np.nan, np.clip(r, -1.0, 1.0))


def pairwise_accuracy_rows(judges: np.ndarray, human: np.ndarray) -> np.ndarray:
    """Pairwise accuracy of each row of ``judges`` (B, n systems) against ``human`` ((n,) or
    (B, n)), in [0, 1]: the share of the n (n - 1) / 2 system pairs ordered alike (module
    doc)."""
    x = _rows(judges)
    y = np.broadcast_to(np.asarray(human, dtype=float), x.shape)
    i, j = np.triu_indices(x.shape[1], 1)
    if i.size == 0:
        return np.full(x.shape[0], np.nan)
    agree = np.sign(x[:, i] - x[:, j]) == np.sign(y[:, i] - y[:, j])
    return agree.mean(axis=1)


def spa_signs(n_segments: int, n_permutations: int = SPA_PERMUTATIONS, seed: int = SPA_SEED):
    """The +1/-1 segment signs of the SPA permutation test, shape (n_permutations,
    n_segments), float32, drawn as MT-Metrics-Eval's ``compute_pairwise_p_values`` does."""
    rng = np.random.default_rng(seed)
    signs = rng.random(size=(n_permutations, n_segments), dtype=np.float32)
    np.rint(signs, out=signs)
    signs *= 2.0
    signs -= 1.0
    return signs


def pairwise_p_values(seg_scores: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """One-sided permutation p-values of "system i beats system j", for i < j.

    Args:
        seg_scores: shape (S, G) (systems x segments, no NaN) or (B, S, G) for B score sets.
        signs: shape (P, G), from :func:`spa_signs`.

    Returns:
        Shape (S (S - 1) / 2,) or (B, S (S - 1) / 2): for each pair i < j (``np.triu_indices``
        order), the share of permutations whose swapped sum difference is >= the observed one.
    """
    scores = np.asarray(seg_scores, dtype=np.float32)
    batched = scores.ndim == 3
    scores = scores if batched else scores[None]
    n_sets, n_sys, n_seg = scores.shape
    partial = (signs @ scores.reshape(n_sets * n_sys, n_seg).T).reshape(-1, n_sets, n_sys)
    p = _p_values(partial, scores.sum(axis=2))
    return p if batched else p[0]


@numba.njit(parallel=True, cache=True)
def _count_p(partial: np.ndarray, observed: np.ndarray) -> np.ndarray:
    n_perm, n_sets, n_sys = partial.shape
    n_pairs = n_sys * (n_sys - 1) // 2
    out = np.empty((n_sets, n_pairs))
    for b in numba.prange(n_sets):
        k = 0
        for i in range(n_sys):
            for j in range(i + 1, n_sys):
                test = observed[b, i] - observed[b, j]
                count = 0
                for p in range(n_perm):
                    if partial[p, b, i] - partial[p, b, j] >= test:
                        count += 1
                out[b, k] = count / n_perm
                k += 1
    return out


def _p_values(partial: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """p-values (B, pairs), pairs in ``np.triu_indices`` order, from permuted sums (P, B, S)
    and observed sums (B, S): the share of permutations whose sum difference is >= the
    observed one (float32 sums, as MT-Metrics-Eval's ``pce.py``)."""
    return _count_p(np.ascontiguousarray(partial, dtype=np.float32),
                    np.ascontiguousarray(observed, dtype=np.float32))  # fmt: skip


def complementary_p_values(
    left: np.ndarray, total: np.ndarray, signs: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pairwise_p_values` of B score sets ``left`` (B, S, G) and of ``total - left``
    (``total``: (S, G)) with one matrix product: the two hybrids of a permutation test are
    complementary (each cell's two values are the two judges'), so their permuted sums are
    ``signs @ total - signs @ left``."""
    left = np.asarray(left, dtype=np.float32)
    n_sets, n_sys, n_seg = left.shape
    partial = (signs @ left.reshape(n_sets * n_sys, n_seg).T).reshape(-1, n_sets, n_sys)
    total = np.asarray(total, dtype=np.float32)
    partial_total = (signs @ total.T)[:, None, :]  # (P, 1, S)
    observed = left.sum(axis=2)
    p_left = _p_values(partial, observed)
    p_right = _p_values(partial_total - partial, total.sum(axis=1)[None] - observed)
    return p_left, p_right


def spa_from_p(human_p: np.ndarray, judge_p: np.ndarray) -> np.ndarray:
    """1 - mean |p_human - p_judge| over system pairs (last axis); in [0, 1]."""
    return 1.0 - np.abs(np.asarray(judge_p) - np.asarray(human_p)).mean(axis=-1)


def soft_pairwise_accuracy(
    judge_seg: np.ndarray,
    human_seg: np.ndarray,
    *,
    n_permutations: int = SPA_PERMUTATIONS,
    seed: int = SPA_SEED,
) -> float:
    """Soft pairwise accuracy (module doc) of a judge's segment scores against the humans'.

    Args:
        judge_seg, human_seg: systems x segments (S, G), the same segments for every system, no
            missing score.
        n_permutations, seed: the permutation test behind each p-value.

    Raises:
        JudgekitError: shapes differ, fewer than 2 systems, or a missing score.
    """
    j, h = np.asarray(judge_seg, dtype=float), np.asarray(human_seg, dtype=float)
    if j.shape != h.shape or j.ndim != 2 or j.shape[0] < 2:
        raise JudgekitError(f"SPA needs two systems x segments tables of one shape: {j.shape}")
    if np.isnan(j).any() or np.isnan(h).any():
        raise JudgekitError("SPA needs every system scored on every segment")
    signs = spa_signs(h.shape[1], n_permutations, seed)
    return float(spa_from_p(pairwise_p_values(h, signs), pairwise_p_values(j, signs)))


def zscore(values: np.ndarray) -> np.ndarray:
    """(values - mean) / std (population std), as MT-Metrics-Eval normalises each metric before
    mixing two in a permutation test; a constant vector becomes zeros."""
    v = np.asarray(values, dtype=float)
    sd = v.std()
    return (v - v.mean()) / sd if sd > 0 else v - v.mean()


def acc_eq_pairs(
    judge: np.ndarray,
    human: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    bounds: np.ndarray,
    epsilon: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Per within-group pair: 1 where acc_eq credits it, and its weight in the grouped mean.

    A pair is credited when both sides tie it (the judge within ``epsilon``: |dx| <= epsilon)
    or neither does and they order it alike (Deutsch, Foster & Freitag 2023, "Ties Matter",
    sec. 4). Item-grouped acc_eq is the mean over groups of each group's credited share, so a
    pair of group g weighs 1 / (pairs in g x groups); ``credits @ weights`` is the statistic.
    Pairs come from :func:`judgekit.metrics.kendall_fast.group_pairs`.

    Returns:
        ``(credits, weights)``, float arrays of shape (pairs,).
    """
    x = np.asarray(judge, dtype=float)
    y = np.asarray(human, dtype=float)
    dx, dy = x[first] - x[second], y[first] - y[second]
    judge_tie, human_tie = np.abs(dx) <= epsilon, dy == 0
    credit = (judge_tie & human_tie) | (~judge_tie & ~human_tie & (np.sign(dx) == np.sign(dy)))
    sizes = np.diff(bounds)
    weights = np.repeat(1.0 / (sizes * max(len(sizes), 1)), sizes)
    return credit.astype(float), weights
