"""Estimates of a mean under a label design, with the uniform-design width beside them.

* active (and uniform) designs: inverse-probability-weighted PPI++ (Zrnic & Candès 2024, Active
  Statistical Inference, ICML, Sec. 3, Eq. 4, with PPI++'s tuned lambda of Angelopoulos, Duchi
  & Zrnic 2023, arXiv 2311.01453): ``ppi_py.ppi_mean_ci`` with sample weights ``w = 1 / pi`` on
  the labelled items (ppi_py scales them to sum to n: the Hájek form of the estimator) and the
  judge's values on all N items as the unlabelled set;
* stratified design: stratified PPI++ (Fisch et al. 2024, Stratified Prediction-Powered
  Inference, Sec. 3): PPI++ with its own tuned lambda in each stratum h, combined with the
  stratum shares ``W_h = N_h / N``: ``theta = sum W_h theta_h``, ``se^2 = sum W_h^2 se_h^2``.

The interval is the CLT interval in both (ppi_py's). The uniform-design width at the same n is
projected from the same labels: ``z sqrt(var_w(Y - lam f) / n + lam^2 var(f) / N)``, with the
weighted (design-corrected) variance of the residual and lam tuned for uniform sampling.
A weighted estimate is refused when a label lacks its inclusion probability.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
from scipy.stats import norm

SOURCES = {
    "active": "Zrnic & Candès 2024, Active Statistical Inference (ICML), Sec. 3",
    "uniform": "Angelopoulos, Duchi & Zrnic 2023, PPI++ (arXiv 2311.01453)",
    "stratified": "Fisch et al. 2024, Stratified Prediction-Powered Inference, Sec. 3",
}


@dataclass(frozen=True)
class DesignEstimate:
    """A mean under a design: estimate, CI [low, high], half-width, the uniform-design half-width
    at the same n on the same data, and the labels a uniform design would need for this width."""

    design: str
    n: int
    n_items: int
    estimate: float
    low: float
    high: float
    half_width: float
    uniform_half_width: float
    uniform_labels: float
    signature: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        return asdict(self)


def _check(y: np.ndarray, f: np.ndarray, pi: np.ndarray | None, design: str) -> None:
    if len(y) != len(f) or (pi is not None and len(pi) != len(y)):
        raise ValueError("labels, judge values and probabilities must have the same length")
    if len(y) < 2:
        raise ValueError(f"{design} estimate needs at least 2 labels, got {len(y)}")
    if design != "uniform" and (pi is None or not np.isfinite(pi).all()):
        raise ValueError(
            f"a weighted ({design}) estimate needs the inclusion probability of every label; "
            "labels imported without their selection.csv probabilities are refused"
        )
    if pi is not None and ((pi <= 0) | (pi > 1)).any():
        raise ValueError("inclusion probabilities must lie in (0, 1]")


def uniform_projection(
    y: np.ndarray, f: np.ndarray, f_all: np.ndarray, w: np.ndarray, alpha: float
) -> float:
    """Half-width a uniform design would give at n = len(y) on this population.

    ``y``, ``f``: labelled human and judge values, shape (n,); ``f_all``: judge on all N items;
    ``w``: design weights 1/pi (shape (n,)), used to estimate population moments of the human
    values. PPI++ variance (Angelopoulos, Duchi & Zrnic 2023, Sec. 2.2) with its optimal lam.
    """
    n, big_n = len(y), len(f_all)
    wn = w / w.sum()
    my, mf = float(wn @ y), float(wn @ f)
    cov = float(wn @ ((y - my) * (f - mf)))
    var_f = float(np.var(f_all))
    lam = 0.0 if var_f == 0 else float(np.clip(cov / ((1 + n / big_n) * var_f), 0, 1))
    r = y - lam * f
    var_r = float(wn @ (r - wn @ r) ** 2)
    return float(norm.ppf(1 - alpha / 2) * np.sqrt(var_r / n + lam**2 * var_f / big_n))


def weighted_ppi(
    y: np.ndarray,
    f: np.ndarray,
    f_all: np.ndarray,
    pi: np.ndarray | None,
    alpha: float = 0.05,
    design: str = "active",
) -> DesignEstimate:
    """IPW PPI++ mean: human ``y`` and judge ``f`` on the n labelled items (shape (n,)), the
    judge ``f_all`` on all N items, inclusion probabilities ``pi`` in (0, 1] (shape (n,)).

    Returns a :class:`DesignEstimate` whose signature names the design. Raises ValueError when
    a probability is missing (NaN or None) for a weighted design, or shapes disagree.
    Source: Zrnic & Candès 2024, Sec. 3; ppi_py ``ppi_mean_ci`` with ``w``.
    """
    y, f, f_all = (np.asarray(a, dtype=float) for a in (y, f, f_all))
    pi = None if pi is None else np.asarray(pi, dtype=float)
    _check(y, f, pi, design)
    w = np.ones(len(y)) if pi is None else 1.0 / pi
    low, high = (float(np.ravel(b)[0]) for b in ppi_mean_ci(y, f, f_all, alpha=alpha, w=w))
    point = float(np.ravel(ppi_mean_pointestimate(y, f, f_all, w=w))[0])
    return _result(
        design, y, f, f_all, w, alpha, point, low, high, "ipw ppi++ (hajek weights 1/pi)"
    )


def _result(
    design: str, y: np.ndarray, f: np.ndarray, f_all: np.ndarray, w: np.ndarray, alpha: float,
    point: float, low: float, high: float, method: str,
) -> DesignEstimate:  # fmt: skip
    half = (high - low) / 2
    uni = uniform_projection(y, f, f_all, w, alpha)
    n_uni = len(y) * (uni / half) ** 2 if half > 0 else float("nan")
    sig = {"design": design, "method": method, "interval": "clt", "alpha": alpha,
           "source": SOURCES[design]}  # fmt: skip
    return DesignEstimate(design, len(y), len(f_all), point, low, high, half, uni, n_uni, sig)


def stratified_ppi(
    y: np.ndarray,
    f: np.ndarray,
    strata: np.ndarray,
    f_all: np.ndarray,
    strata_all: np.ndarray,
    alpha: float = 0.05,
) -> DesignEstimate:
    """Stratified PPI++ mean (Fisch et al. 2024, Sec. 3): per-stratum PPI++ (ppi_py) combined by
    the stratum shares N_h / N. ``y``, ``f``, ``strata``: the n labelled items; ``f_all``,
    ``strata_all``: all N items. Every stratum needs at least 2 labels (ValueError otherwise).
    """
    y, f, f_all = (np.asarray(a, dtype=float) for a in (y, f, f_all))
    strata, strata_all = np.asarray(strata), np.asarray(strata_all)
    _check(y, f, np.ones(len(y)), "stratified")
    z = norm.ppf(1 - alpha / 2)
    point, var, w = 0.0, 0.0, np.empty(len(y))
    for h in np.unique(strata_all):
        lab, pop = strata == h, strata_all == h
        if lab.sum() < 2:
            raise ValueError(f"stratum {h!r} has {int(lab.sum())} label(s); it needs at least 2")
        share = pop.mean()
        # a judge constant in the stratum predicts nothing there: lam = 0, the classical mean
        lam = 0.0 if np.ptp(f_all[pop]) == 0 else None
        args = (y[lab], f[lab], f_all[pop])
        lo, hi = (float(np.ravel(b)[0]) for b in ppi_mean_ci(*args, alpha=alpha, lam=lam))
        point += share * float(np.ravel(ppi_mean_pointestimate(*args, lam=lam))[0])
        var += (share * (hi - lo) / (2 * z)) ** 2
        w[lab] = pop.sum() / lab.sum()
    half = float(z * np.sqrt(var))
    return _result("stratified", y, f, f_all, w, alpha, point, point - half, point + half,
                   "stratified ppi++ (per-stratum lambda)")  # fmt: skip
