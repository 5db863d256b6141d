"""Paired permutation tests between two judges on the same items: PERM-BOTH and its kin.

One driver, :func:`swap_test`, serves every comparison of ``judgekit calibrate compare``: two
judges' per-unit values ``a`` and ``b`` (``a`` the judge with the higher statistic), a statistic
of one row of values, and the null hypothesis that the two judges are exchangeable. Each
permutation swaps the two judges' values on every unit independently with probability 1/2,
giving two hybrid judges A' and B'. With k of the n permutations at ``stat(A') - stat(B') >=
stat(a) - stat(b)`` (an undefined statistic counts as 0), the one-sided p-value is
``(k + 1) / (n + 1)`` (``p_rule="plus_one"``, the default: the observed assignment is one of the
permutations, so p is never 0 and the test keeps its level; Phipson & Smyth 2010, "Permutation
P-values Should Never Be Zero", Stat. Appl. Genet. Mol. Biol. 9(1):39), or ``k / n``
(``p_rule="mtme"``, as MT-Metrics-Eval's ``stats.PermutationSigDiff`` computes it: for
reproducing WMT tables). What a unit is decides the test:

* PERM-BOTH (Deutsch, Dror & Roth 2021, "A Statistical Analysis of Summarization Evaluation
  Metrics Using Resampling Methods", TACL, sec. 5): the units are the scores, each judge's
  scores z-normalised first (:func:`judgekit.metrics.meta_eval.zscore`) so that the two scales
  mix; the systems for system-level statistics, the (system, segment) cells for segment-level
  ones.
* The pair-swapping variant for acc_eq that WMT23 used (MT-Metrics-Eval's
  ``PairwisePermutationSigDiff``; Freitag et al. 2023, WMT23 metrics findings, sec. 3.2): the
  units are the within-item pairs of segments, each judge's pair verdicts already made with its
  own tie threshold epsilon, so two judges with different epsilons meet on an equal footing and
  epsilon is not searched again in every permutation.
* For label judges: the units are the items, each judge's label on it.

Permutations run in blocks (``block``, 100 as in the WMT23 tasks); with early stopping a test
stops at the end of a block where the p-value so far is below ``early_min`` (0.02) or above
``early_max`` (0.5), as MT-Metrics-Eval's early-stopping parameters do (its pair-swapping loop
checks them only after a permutation that counted; this one checks at every block end). Every
test draws from its own seeded generator, so results do not depend on the order of the tests.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from judgekit.errors import JudgekitError

P_RULES = ("plus_one", "mtme")


@dataclass(frozen=True)
class PermutationSettings:
    """How the tests run: ``n_permutations`` (>= 0; 0 = no test), ``block`` size, early
    stopping (``early_stop`` with ``early_min`` / ``early_max``, compared with the p-value so
    far), the ``seed`` and the p-value rule ``p_rule`` (``plus_one`` or ``mtme``: module doc)."""

    n_permutations: int = 1000
    block: int = 100
    early_stop: bool = True
    early_min: float = 0.02
    early_max: float = 0.5
    seed: int = 0
    p_rule: str = "plus_one"

    def __post_init__(self) -> None:
        if self.n_permutations < 0 or self.block < 1:
            raise JudgekitError("permutations must be >= 0 and the block size >= 1")
        if self.p_rule not in P_RULES:
            raise JudgekitError(f"unknown p-value rule '{self.p_rule}' (use {', '.join(P_RULES)})")

    def p_value(self, count: int, done: int) -> float:
        """The p-value of ``count`` of ``done`` permutations at least as extreme (module doc)."""
        return (count + 1) / (done + 1) if self.p_rule == "plus_one" else count / done

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class SwapResult:
    """``delta`` = stat(a) - stat(b); ``p_value`` in [0, 1] (None without permutations);
    ``n_permutations`` actually run (fewer than asked after an early stop)."""

    delta: float
    p_value: float | None
    n_permutations: int


def pair_rng(seed: int, *key: str) -> np.random.Generator:
    """A generator seeded by ``seed`` and a text key (facet, level, statistic, judges)."""
    words = [zlib.crc32(k.encode("utf-8")) for k in key]
    return np.random.default_rng(np.random.SeedSequence([seed, *words]))


def _value(stat: Callable[[np.ndarray], np.ndarray], row: np.ndarray) -> float:
    value = float(np.asarray(stat(row[None]))[0])
    return 0.0 if np.isnan(value) else value


def swap_test(
    stat: Callable[[np.ndarray], np.ndarray],
    a: np.ndarray,
    b: np.ndarray,
    settings: PermutationSettings,
    rng: np.random.Generator,
    pair_stat: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None,
) -> SwapResult:
    """The paired permutation test of the module doc.

    Args:
        stat: maps an array of shape (B, n) (B rows of unit values) to the B statistics.
        a, b: the two judges' unit values, shape (n,), aligned (numbers or label codes).
        settings: permutations, blocks, early stopping.
        rng: the test's generator (:func:`pair_rng`).
        pair_stat: optional faster path: maps the swap masks (B, n), bool (True: the unit's
            values exchanged) to the statistics of both hybrids, ``(stat(A'), stat(B'))``,
            equal to ``stat`` of ``where(swap, b, a)`` and ``where(swap, a, b)``.

    Raises:
        JudgekitError: ``a`` and ``b`` differ in shape.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.ndim != 1:
        raise JudgekitError(f"the two judges need one value per unit: {a.shape} vs {b.shape}")
    delta = _value(stat, a) - _value(stat, b)
    if settings.n_permutations == 0:
        return SwapResult(delta, None, 0)
    count = done = 0
    while done < settings.n_permutations:
        size = min(settings.block, settings.n_permutations - done)
        bits = rng.integers(0, 256, size=(size, (a.size + 7) // 8), dtype=np.uint8)
        swap = np.unpackbits(bits, axis=1, count=a.size).astype(bool)  # fair coins, 8 a byte
        if pair_stat is not None:
            left, right = (np.nan_to_num(np.asarray(v, dtype=float)) for v in pair_stat(swap))
        else:
            left = np.nan_to_num(np.asarray(stat(np.where(swap, b, a)), dtype=float))
            right = np.nan_to_num(np.asarray(stat(np.where(swap, a, b)), dtype=float))
        count += int(np.count_nonzero(left - right >= delta - 1e-12))
        done += size
        p = settings.p_value(count, done)
        if settings.early_stop and (p < settings.early_min or p > settings.early_max):
            break
    return SwapResult(delta, settings.p_value(count, done), done)


def linear_swap_test(
    a: np.ndarray,
    b: np.ndarray,
    weights: np.ndarray,
    settings: PermutationSettings,
    rng: np.random.Generator,
) -> SwapResult:
    """:func:`swap_test` of the statistic ``values @ weights`` (acc_eq's pair credits).

    For a linear statistic stat(A') - stat(B') = sum over units of (1 - 2 swap) (a - b) w, so
    the units where the two judges agree change nothing and are left out before drawing: the
    same test, with fewer random draws.
    """
    a, b, w = (np.asarray(v, dtype=float) for v in (a, b, weights))
    differ = a != b
    if not differ.any():  # every permutation ties: p = 1, at the first block when stopping
        done = min(settings.block, settings.n_permutations) if settings.early_stop else None
        n = settings.n_permutations if done is None else done
        return SwapResult(0.0, 1.0 if n else None, n)
    a, b, w = a[differ], b[differ], w[differ]
    base, step = float(a @ w), ((b - a) * w).astype(np.float32)
    total = float((a + b) @ w)

    def both(swap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        left = base + swap.astype(np.float32) @ step  # where(swap, b, a) @ w
        return left, total - left

    return swap_test(lambda x: np.asarray(x, dtype=float) @ w, a, b, settings, rng, pair_stat=both)
