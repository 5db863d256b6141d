"""Kendall tau-b over many score vectors at once (numba), for permutation tests and bootstraps.

A permutation test of two judges (PERM-BOTH, :mod:`judgekit.metrics.perm_both`) needs tau-b of
thousands of hybrid score vectors against one human vector; ``scipy.stats.kendalltau`` costs
about 3 ms for the 18,832 scored WMT23 zh-en segments, so 12,000 calls would take a minute.
These kernels count the same sufficient statistics with Knight's O(n log n) algorithm (Knight
1966, "A computer method for calculating Kendall's tau with ungrouped data", JASA 61: sort by
the human score, then by the judge score within human ties, and count the inversions of the
judge scores with a merge sort), once per row, the rows spread over the CPU cores:

    tau_b = (n0 - n1 - n2 + n3 - 2 D) / sqrt((n0 - n1) (n0 - n2))

with n0 = n (n - 1) / 2 pairs, n1 pairs tied in the judge scores, n2 tied in the human scores,
n3 tied in both and D discordant pairs; NaN where a side is constant. The grouped kernel does
the same within each group (one WMT source segment: the systems' outputs for it) over
precomputed pair lists and averages the defined groups, as MT-Metrics-Eval's item-grouped
``KendallVariants`` does. Both are checked against ``scipy.stats.kendalltau`` in the tests.
"""

from __future__ import annotations

import numba
import numpy as np

from judgekit.metrics.correlation import upper_pairs


@numba.njit(cache=True)
def _tie_pairs(sorted_values: np.ndarray) -> int:
    """Pairs of equal values in an ascending array."""
    total, run = 0, 1
    for i in range(1, sorted_values.size):
        if sorted_values[i] == sorted_values[i - 1]:
            run += 1
        else:
            total += run * (run - 1) // 2
            run = 1
    return total + run * (run - 1) // 2


@numba.njit(cache=True)
def _inversions(values: np.ndarray, buffer: np.ndarray) -> tuple[int, np.ndarray]:
    """(pairs i < j with values[i] > values[j], the values sorted): a bottom-up merge sort."""
    n = values.size
    src, dst = values, buffer
    inversions, width = 0, 1
    while width < n:
        start = 0
        while start < n:
            mid, end = min(start + width, n), min(start + 2 * width, n)
            left, right, k = start, mid, start
            while left < mid and right < end:
                if src[right] < src[left]:
                    dst[k] = src[right]
                    inversions += mid - left
                    right += 1
                else:
                    dst[k] = src[left]
                    left += 1
                k += 1
            while left < mid:
                dst[k] = src[left]
                left += 1
                k += 1
            while right < end:
                dst[k] = src[right]
                right += 1
                k += 1
            start += 2 * width
        src, dst = dst, src
        width *= 2
    return inversions, src


@numba.njit(cache=True)
def _tau_b_sorted(judge: np.ndarray, order: np.ndarray, starts: np.ndarray, n2: int) -> float:
    """tau-b of ``judge`` against a human vector given by its stable ``order`` (argsort) and the
    ``starts`` of its tie runs in that order (with the end), and its tied pairs ``n2``."""
    n = judge.size
    xs = judge[order].copy()
    n3 = 0
    for g in range(starts.size - 1):
        run = np.sort(xs[starts[g] : starts[g + 1]])
        xs[starts[g] : starts[g + 1]] = run
        n3 += _tie_pairs(run)
    discordant, ordered = _inversions(xs, np.empty_like(xs))
    n0 = n * (n - 1) // 2
    n1 = _tie_pairs(ordered)
    denominator = float(n0 - n1) * float(n0 - n2)
    if denominator <= 0:
        return np.nan
    return (n0 - n1 - n2 + n3 - 2 * discordant) / np.sqrt(denominator)


def _human_order(human: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    order = np.argsort(human, kind="stable")
    ordered = human[order]
    starts = np.r_[0, np.flatnonzero(ordered[1:] != ordered[:-1]) + 1, human.size]
    counts = np.diff(starts)
    return order, starts.astype(np.int64), int((counts * (counts - 1) // 2).sum())


@numba.njit(parallel=True, cache=True)
def _rows_fixed(judges: np.ndarray, order: np.ndarray, starts: np.ndarray, n2: int) -> np.ndarray:
    out = np.empty(judges.shape[0])
    for r in numba.prange(judges.shape[0]):
        out[r] = _tau_b_sorted(judges[r], order, starts, n2)
    return out


def tau_b_rows(judges: np.ndarray, human: np.ndarray) -> np.ndarray:
    """Kendall tau-b of every row of ``judges`` (shape (B, n), no NaN) against ``human``
    (shape (n,), no NaN); returns shape (B,), NaN where a side is constant."""
    order, starts, n2 = _human_order(np.asarray(human, dtype=float))
    return _rows_fixed(np.ascontiguousarray(judges, dtype=float), order, starts, n2)


@numba.njit(parallel=True, cache=True)
def _grouped_rows(
    judges: np.ndarray,
    human_sign: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    bounds: np.ndarray,
    human_ties: np.ndarray,
) -> np.ndarray:
    n_groups = bounds.size - 1
    out = np.empty(judges.shape[0])
    for r in numba.prange(judges.shape[0]):
        x = judges[r]
        total, defined = 0.0, 0
        for g in range(n_groups):
            s, ties = 0.0, 0
            for p in range(bounds[g], bounds[g + 1]):
                d = x[first[p]] - x[second[p]]
                if d == 0:
                    ties += 1
                elif d > 0:
                    s += human_sign[p]
                else:
                    s -= human_sign[p]
            n0 = bounds[g + 1] - bounds[g]
            denominator = float(n0 - ties) * float(n0 - human_ties[g])
            if denominator > 0:
                total += s / np.sqrt(denominator)
                defined += 1
        out[r] = total / defined if defined else np.nan
    return out


def group_pairs(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All within-group pairs of positions: ``(first, second, bounds)``, the pairs of group g
    being ``first[bounds[g]:bounds[g+1]]`` (groups with < 2 members have none and are left
    out). ``groups``: one group code per position, shape (n,)."""
    _, codes = np.unique(groups, return_inverse=True)
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes)
    firsts, seconds, bound = [], [], [0]
    start = 0
    for size in sizes:
        members = order[start : start + size]
        start += size
        if size < 2:
            continue
        i, j = upper_pairs(int(size))
        firsts.append(members[i])
        seconds.append(members[j])
        bound.append(bound[-1] + i.size)
    if not firsts:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, np.zeros(1, dtype=np.int64)
    return (
        np.concatenate(firsts).astype(np.int64),
        np.concatenate(seconds).astype(np.int64),
        np.asarray(bound, dtype=np.int64),
    )


class GroupedTau:
    """Item-grouped tau-b against a fixed human vector, its within-group pairs listed once:
    ``GroupedTau(human, groups)(judges)`` is the mean over groups of the within-group tau-b
    of every row of ``judges`` (shape (B, n)); groups with an undefined tau-b (fewer than 2
    members, a constant side) are left out of the mean. Returns shape (B,)."""

    def __init__(self, human: np.ndarray, groups: np.ndarray) -> None:
        human = np.asarray(human, dtype=float)
        self.first, self.second, self.bounds = group_pairs(np.asarray(groups))
        self.sign = np.sign(human[self.first] - human[self.second])
        zero = (self.sign == 0).astype(np.int64)
        self.ties = np.add.reduceat(zero, self.bounds[:-1]) if self.first.size else zero

    def __call__(self, judges: np.ndarray) -> np.ndarray:
        rows = np.ascontiguousarray(np.atleast_2d(judges), dtype=float)
        return _grouped_rows(rows, self.sign, self.first, self.second, self.bounds, self.ties)

    def hybrids(self, a: np.ndarray, b: np.ndarray):
        """The pair statistic of :func:`judgekit.metrics.perm_both.swap_test` for judges ``a``
        and ``b``: swap masks (B, n) -> (this statistic of ``where(swap, b, a)``, of
        ``where(swap, a, b)``), from the sign of each pair's difference in its four cases
        (which judge each side of the pair comes from), computed once."""
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        f, s = self.first, self.second
        cases = [a[f] - a[s], a[f] - b[s], b[f] - a[s], b[f] - b[s]]
        signs4 = np.sign(np.stack(cases, axis=1)).astype(np.int8)
        args = (signs4, self.sign, f, s, self.bounds, self.ties)
        return lambda swap: _grouped_pair_rows(*args, np.ascontiguousarray(swap, dtype=np.int8))


@numba.njit(parallel=True, cache=True)
def _grouped_pair_rows(
    signs4: np.ndarray, human_sign: np.ndarray, first: np.ndarray, second: np.ndarray,
    bounds: np.ndarray, human_ties: np.ndarray, swap: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    n_groups = bounds.size - 1
    left, right = np.empty(swap.shape[0]), np.empty(swap.shape[0])
    for r in numba.prange(swap.shape[0]):
        total_l = total_r = 0.0
        defined_l = defined_r = 0
        for g in range(n_groups):
            s_l = s_r = 0.0
            ties_l = ties_r = 0
            for p in range(bounds[g], bounds[g + 1]):
                case = 2 * swap[r, first[p]] + swap[r, second[p]]
                d_l, d_r = signs4[p, case], signs4[p, 3 - case]
                if d_l == 0:
                    ties_l += 1
                else:
                    s_l += d_l * human_sign[p]
                if d_r == 0:
                    ties_r += 1
                else:
                    s_r += d_r * human_sign[p]
            n0 = bounds[g + 1] - bounds[g]
            den_l = float(n0 - ties_l) * float(n0 - human_ties[g])
            den_r = float(n0 - ties_r) * float(n0 - human_ties[g])
            if den_l > 0:
                total_l += s_l / np.sqrt(den_l)
                defined_l += 1
            if den_r > 0:
                total_r += s_r / np.sqrt(den_r)
                defined_r += 1
        left[r] = total_l / defined_l if defined_l else np.nan
        right[r] = total_r / defined_r if defined_r else np.nan
    return left, right


def grouped_tau_b_rows(judges: np.ndarray, human: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """``GroupedTau(human, groups)(judges)`` (see :class:`GroupedTau`)."""
    return GroupedTau(human, groups)(judges)


@numba.njit(cache=True)
def _bit_prefix(tree: np.ndarray, k: int) -> int:
    """Sum of the first k counts of a Fenwick tree (labels 0 .. k-1)."""
    total = 0
    while k > 0:
        total += tree[k]
        k -= k & -k
    return total


@numba.njit(parallel=True, cache=True)
def _weighted_rows(
    group: np.ndarray, labels: np.ndarray, n_labels: int, weights: np.ndarray
) -> np.ndarray:
    """tau-b of the multisets given by integer ``weights`` (B, m) over m elements sorted by
    judge value (``group``: equal-value group of each, ascending; ``labels``: the human score
    level of each): each element counts ``weights[r, k]`` times (0: absent). Pairs of copies of
    one element are tied on both sides, as in the expanded multiset."""
    out = np.empty(weights.shape[0])
    m = labels.size
    for r in numba.prange(weights.shape[0]):
        tree = np.zeros(n_labels + 1, dtype=np.int64)
        count_of = np.zeros(n_labels, dtype=np.int64)
        buf = np.empty(m, dtype=np.int64)
        wbuf = np.empty(m, dtype=np.int64)
        seen, s, n1, n3, pos = 0, 0, 0, 0, 0
        while pos < m:
            g, k_in = group[pos], 0
            while pos < m and group[pos] == g:
                if weights[r, pos] > 0:
                    buf[k_in], wbuf[k_in] = labels[pos], weights[r, pos]
                    k_in += 1
                pos += 1
            if k_in == 0:
                continue
            total = 0
            for t in range(k_in):  # smaller human levels seen: +1 a pair, larger: -1
                k = buf[t]
                s += wbuf[t] * (2 * _bit_prefix(tree, k) + count_of[k] - seen)
                total += wbuf[t]
            n1 += total * (total - 1) // 2
            if k_in == 1:
                n3 += total * (total - 1) // 2
            else:
                run, last = 0, -1
                for t in np.argsort(buf[:k_in]):
                    if buf[t] != last:
                        n3 += run * (run - 1) // 2
                        run, last = 0, buf[t]
                    run += wbuf[t]
                n3 += run * (run - 1) // 2
            for t in range(k_in):
                count_of[buf[t]] += wbuf[t]
                k = buf[t] + 1
                while k <= n_labels:
                    tree[k] += wbuf[t]
                    k += k & -k
            seen += total
        n0 = seen * (seen - 1) // 2
        n2 = 0
        for k in range(n_labels):
            n2 += count_of[k] * (count_of[k] - 1) // 2
        denominator = float(n0 - n1) * float(n0 - n2)
        out[r] = s / np.sqrt(denominator) if denominator > 0 else np.nan
    return out


def _levels(human: np.ndarray) -> tuple[np.ndarray, int]:
    levels, labels = np.unique(np.asarray(human, dtype=float), return_inverse=True)
    return labels.astype(np.int64), int(levels.size)


def _groups(ordered: np.ndarray) -> np.ndarray:
    return np.r_[0, np.cumsum(ordered[1:] != ordered[:-1])].astype(np.int64)


class WeightedTau:
    """tau-b of one judge against the humans on reweighted elements: ``WeightedTau(judge,
    human)(weights)`` for integer weights (B, n) (bootstrap counts; 0/1 for a subset) gives
    the tau-b of each multiset, shape (B,), from one sort of the judge's scores (a Fenwick
    tree over the human score levels: O(n log K) a row)."""

    def __init__(self, judge: np.ndarray, human: np.ndarray) -> None:
        x = np.asarray(judge, dtype=float)
        self.order = np.argsort(x, kind="stable")
        self.group = _groups(x[self.order])
        labels, self.n_levels = _levels(human)
        self.labels = labels[self.order]

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        w = np.ascontiguousarray(np.asarray(weights, dtype=np.int32)[:, self.order])
        return _weighted_rows(self.group, self.labels, self.n_levels, w)


class HybridTau:
    """tau-b of the hybrids of two judges' score vectors ``a`` and ``b`` (shape (n,)) against
    ``human``, straight from permutation swap masks, without sorting each hybrid.

    Every hybrid takes each unit's value from ``a`` or ``b``, so its sorted order is the sorted
    order of the 2n values of both, filtered (0/1 weights of :func:`_weighted_rows`): that order
    is computed once. ``HybridTau(a, b, human)(swap)`` gives ``(tau_b(where(swap, b, a)),
    tau_b(where(swap, a, b)))`` for a bool mask of shape (B, n); the pair statistic of
    :func:`judgekit.metrics.perm_both.swap_test`.
    """

    def __init__(self, a: np.ndarray, b: np.ndarray, human: np.ndarray) -> None:
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        n = a.size
        values = np.r_[a, b]
        order = np.argsort(values, kind="stable")
        self.item = np.r_[np.arange(n), np.arange(n)][order]
        self.from_b = np.r_[np.zeros(n, bool), np.ones(n, bool)][order]
        self.group = _groups(values[order])
        labels, self.n_levels = _levels(human)
        self.labels = labels[self.item]

    def __call__(self, swap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        swapped = np.asarray(swap, dtype=np.bool_)[:, self.item]
        left = np.ascontiguousarray(swapped == self.from_b, dtype=np.int32)  # where(swap, b, a)
        args = (self.group, self.labels, self.n_levels)
        return _weighted_rows(*args, left), _weighted_rows(*args, 1 - left)


def compile_kernels() -> None:
    """Compile every kernel for the argument types judgekit passes (each public entry point on
    a few values), so the first ``calibrate compare`` does not wait for numba (about 20 s of CPU
    on 2 cores). numba keeps the machine code in its cache (``__pycache__`` beside this file, or
    ``NUMBA_CACHE_DIR``) for every later process; ``scripts/install.sh`` calls this."""
    human = np.array([1.0, 2.0, 2.0, 3.0, 1.0, 3.0])
    judge = np.array([0.5, 0.7, 0.6, 0.9, 0.4, 0.8])
    groups = np.array([0, 0, 0, 1, 1, 1])
    swap = np.array([[True, False, True, False, False, True]])
    tau_b_rows(judge[None, :], human)
    grouped = GroupedTau(human, groups)
    grouped(judge[None, :])
    grouped.hybrids(judge, human)(swap)
    WeightedTau(judge, human)(np.ones((1, human.size), dtype=np.int32))
    HybridTau(judge, human, human)(swap)
