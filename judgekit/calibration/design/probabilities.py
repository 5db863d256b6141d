"""Inclusion probabilities of the label designs.

Active design (Zrnic & Candès 2024, Active Statistical Inference, ICML, Sec. 3): item i is
labelled with probability ``pi_i`` rising with the judge's uncertainty ``u_i``; the variance of
the inverse-probability-weighted estimate is smallest with ``pi_i`` proportional to the expected
error of the judge on i, for which ``u_i`` stands in. To keep every weight bounded, the
probabilities are mixed with the uniform design: ``pi_i = (1 - floor) * n u_i / sum(u) +
floor * n / N``, then capped at 1 (the excess handed to the others), so that every item has
``pi_i >= floor * n / N``.

Stratified design (Fisch et al. 2024, Stratified Prediction-Powered Inference, Sec. 4): Neyman
allocation ``n_h ∝ N_h * sigma_h`` with ``sigma_h`` the pilot's standard deviation of the
human-minus-judge residual in stratum h (all strata share the pooled value where the pilot is
too small; without a pilot all sigmas are equal: proportional allocation), at least
:data:`MIN_PER_STRATUM` labels per stratum and at most ``N_h``.
"""

from __future__ import annotations

import numpy as np

UNCERTAINTIES = ("top", "entropy", "disagreement", "spread")
MIN_PER_STRATUM = 5
"""Fewest labels a stratum gets. Neyman allocation with a small sigma_h gave strata of 100
skewed MQM items 2 labels; their variance estimate (1 degree of freedom) then dominated the
interval's error and stratified coverage fell to 0.78-0.84 at n = 50 (docs/designs.md). With
n_h >= 5 the Satterthwaite degrees of freedom of the stratified variance (Cochran 1977, Sampling
Techniques, Sec. 5.4, Eq. 5.16) stay >= 4 in the worst case."""


def uncertainty(kind: str, values: np.ndarray) -> np.ndarray:
    """The judge's uncertainty per item, in [0, inf).

    ``kind``: ``top`` (1 - top label probability; ``values`` shape (N, K) label probabilities),
    ``entropy`` (Shannon entropy in nats of the (N, K) label probabilities), ``disagreement``
    (share of the (N, J) judges' labels that differ from the item's most frequent label),
    ``spread`` (standard deviation of the (N, S) scores sampled from an MQM judge).
    Raises ValueError for another kind or a value shape that does not fit it.
    """
    v = np.asarray(values)
    if v.ndim != 2:
        raise ValueError(f"uncertainty {kind!r} needs a 2-d array (items x columns), got {v.shape}")
    if kind == "top":
        return 1.0 - v.max(axis=1)
    if kind == "entropy":
        p = np.clip(v.astype(float), 1e-12, 1.0)
        return -(p * np.log(p)).sum(axis=1)
    if kind == "disagreement":
        out = np.empty(len(v))
        for i, row in enumerate(v):
            _, counts = np.unique(row, return_counts=True)
            out[i] = 1.0 - counts.max() / len(row)
        return out
    if kind == "spread":
        return v.astype(float).std(axis=1)
    raise ValueError(f"unknown uncertainty {kind!r}: one of {', '.join(UNCERTAINTIES)}")


def _cap(pi: np.ndarray, budget: float) -> np.ndarray:
    """Cap probabilities at 1 and hand the excess to the items below 1, keeping sum = budget."""
    pi = pi.copy()
    for _ in range(len(pi)):
        over = pi > 1.0
        if not over.any():
            break
        pi[over] = 1.0
        free = ~over & (pi < 1.0)
        rest = budget - pi[~free].sum()
        if not free.any() or pi[free].sum() <= 0:
            break
        pi[free] *= rest / pi[free].sum()
    return np.minimum(pi, 1.0)


def uniform_probabilities(n_items: int, budget: float) -> np.ndarray:
    """``budget / N`` for each of N items (shape (N,)); ValueError unless 0 < budget <= N."""
    if not 0 < budget <= n_items:
        raise ValueError(f"budget {budget} must lie in (0, {n_items}]")
    return np.full(n_items, budget / n_items)


def active_probabilities(u: np.ndarray, budget: float, floor: float = 0.2) -> np.ndarray:
    """Active inclusion probabilities, shape (N,), summing to ``budget`` (expected labels).

    ``u``: uncertainty per item (>= 0); ``floor`` in (0, 1]: the uniform design's share, so each
    item has probability at least ``floor * budget / N``. An uncertainty that is equal
    everywhere (or all zero) gives the uniform design. Raises ValueError on a bad budget, floor
    or a negative / non-finite uncertainty. Source: Zrnic & Candès 2024, Sec. 3 and 6.
    """
    u = np.asarray(u, dtype=float)
    base = uniform_probabilities(len(u), budget)
    if not 0 < floor <= 1:
        raise ValueError(f"floor {floor} must lie in (0, 1]")
    if not np.isfinite(u).all() or (u < 0).any():
        raise ValueError("uncertainty must be finite and non-negative")
    if u.sum() <= 0:
        return base
    pi = (1 - floor) * budget * u / u.sum() + floor * base
    return _cap(pi, budget)


def _bounded(share: np.ndarray, low: np.ndarray, high: np.ndarray, budget: int) -> np.ndarray:
    """``budget`` split in proportion to ``share`` with each part in [low, high]: parts that
    fall outside are fixed at the bound and the rest re-split among the others."""
    fixed = np.full(len(share), np.nan)
    for _ in range(2 * len(share) + 1):
        free = np.isnan(fixed)
        rest = budget - np.nansum(fixed)
        w = np.where(free, share, 0.0)
        n = np.where(free, rest * w / w.sum() if w.sum() > 0 else rest / max(free.sum(), 1),
                     fixed)  # fmt: skip
        out = free & ((n < low) | (n > high))
        if not out.any():
            return n
        fixed[out] = np.where(n[out] < low[out], low[out], high[out])
    return np.clip(n, low, high)


def neyman_allocation(
    sizes: dict[str, int], sigmas: dict[str, float], budget: int, minimum: int = MIN_PER_STRATUM
) -> dict[str, int]:
    """Labels per stratum, ``n_h ∝ N_h sigma_h`` (Neyman), each in [min(minimum, N_h), N_h].

    ``sizes``: items per stratum N_h; ``sigmas``: residual standard deviation per stratum (a
    missing or zero one takes the mean of the others, so no stratum goes unlabelled). The total
    is ``budget`` (or all items if fewer). Source: Fisch et al. 2024, Sec. 4 (Neyman 1934).
    Raises ValueError when ``budget`` cannot give each stratum ``minimum`` labels.
    """
    strata = list(sizes)
    known = [s for s in sigmas.values() if s and np.isfinite(s)]
    pooled = float(np.mean(known)) if known else 1.0
    sig = np.array([sigmas.get(h) or pooled for h in strata], dtype=float)
    cap = np.array([sizes[h] for h in strata], dtype=float)
    budget = int(min(budget, cap.sum()))
    low = np.minimum(minimum, cap)
    if low.sum() > budget:
        raise ValueError(
            f"budget {budget} is below {minimum} labels in each of {len(strata)} strata: "
            "give a larger budget or fewer strata (--by)"
        )
    n = _bounded(cap * sig, low, cap, budget)
    alloc = np.maximum(np.floor(n + 1e-9), low).astype(int)
    order = np.argsort(-(n - np.floor(n)))
    for i in order:  # largest remainders first, up to the budget
        if alloc.sum() >= budget:
            break
        if alloc[i] < cap[i]:
            alloc[i] += 1
    return {h: int(a) for h, a in zip(strata, alloc, strict=True)}
