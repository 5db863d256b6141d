"""Coverage and width of the estimates on fully labelled data: draw the human-labelled subset
many times and count how often each method's interval holds the full-human value.

This is how judgekit validates PPI on real data (docs/estimates.md, ``bench/estimates.py``):
with every item labelled by humans, the full-human mean is known; a draw keeps the human labels
of ``n`` items chosen at random and hides the rest, and each method's CI is checked against the
full-human mean. All draws of one setting are computed at once: ``ppi_py`` estimates a
d-dimensional mean, and each draw is one coordinate, with ``lam`` tuned per coordinate
(``lam_optim_mode="element"``), which is the same as running the draws one by one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judgekit.errors import JudgekitError

COVERAGE_METHODS = ("classical", "ppi", "ppi++")


@dataclass(frozen=True)
class Coverage:
    """Result of one setting (one population, one ``n``) for one method.

    Attributes:
        method: ``classical``, ``ppi`` or ``ppi++``.
        n: human-labelled items per draw; ``n_items`` the population size.
        draws: number of draws; ``coverage`` the share of draws whose CI holds ``truth``.
        mean_width: mean CI width (ci_high - ci_low), in the target's unit.
        truth: the full-human mean.
    """

    method: str
    n: int
    n_items: int
    draws: int
    coverage: float
    mean_width: float
    truth: float


def coverage_study(
    human: np.ndarray, judge: np.ndarray, n: int, *, draws: int = 1000, seed: int = 0,
    alpha: float = 0.05,
) -> dict[str, Coverage]:  # fmt: skip
    """Coverage of the full-human mean by the classical, PPI and PPI++ intervals.

    Args:
        human: the human value of every item, shape (N,).
        judge: the judge's value of the same items, shape (N,).
        n: items labelled per draw, 2 <= n < N.
        draws: simple random samples drawn (seeded by ``seed``).
        alpha: error level of the intervals.

    Returns:
        method -> :class:`Coverage`.

    Raises:
        JudgekitError: shapes differ, or ``n`` is out of range.
    """
    from ppi_py import ppi_mean_ci

    human, judge = np.asarray(human, float), np.asarray(judge, float)
    if human.shape != judge.shape or human.ndim != 1:
        raise JudgekitError(
            f"human and judge must be 1-D of one length ({human.shape}, {judge.shape})"
        )
    size = len(human)
    if not 2 <= n < size:
        raise JudgekitError(f"n must be in [2, {size - 1}], got {n}")
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((draws, size)), axis=1)
    labelled, unlabelled = order[:, :n].T, order[:, n:].T
    y, yhat, yhat_u = human[labelled], judge[labelled], judge[unlabelled]
    truth = float(human.mean())
    out = {}
    for method in COVERAGE_METHODS:
        lam = {"classical": 0.0, "ppi": 1.0}.get(method)
        if method == "ppi++" and np.ptp(judge) == 0:
            lam = 0.0  # a constant judge carries no information: the classical interval
        low, high = ppi_mean_ci(y, yhat, yhat_u, alpha=alpha, lam=lam, lam_optim_mode="element")
        low, high = np.ravel(low), np.ravel(high)
        covered = (low <= truth) & (truth <= high)
        out[method] = Coverage(method, n, size, draws, float(covered.mean()),
                               float((high - low).mean()), truth)  # fmt: skip
    return out
