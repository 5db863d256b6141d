"""Estimates of a mean under a label design, with the uniform-design width beside them.

* active (and uniform) designs: inverse-probability-weighted PPI++ (Zrnic & Candès 2024, Active
  Statistical Inference, ICML, Sec. 3, Eq. 4, with PPI++'s tuned lambda of Angelopoulos, Duchi
  & Zrnic 2023, arXiv 2311.01453): ``ppi_py.ppi_mean_ci`` with sample weights ``w = 1 / pi`` on
  the labelled items (ppi_py scales them to sum to n: the Hájek form of the estimator) and the
  judge's values on all N items as the unlabelled set;
* stratified design: stratified PPI++ (Fisch et al. 2024, Stratified Prediction-Powered
  Inference, Sec. 3): PPI++ with its own tuned lambda in each stratum h, combined with the
  stratum shares ``W_h = N_h / N``: ``theta = sum W_h theta_h``, ``se^2 = sum W_h^2 se_h^2``.

The interval follows ``calibrate estimate``'s rule: the CLT interval (ppi_py's) from 100 labels,
below that the design-respecting bootstrap-t of :mod:`.bootstrap` (resampling with the weights,
within strata). Sequential rounds combine by :func:`combine_rounds`. The uniform-design width
at the same n is projected from the same labels:
``z sqrt(var_w(Y - lam f) / n + lam^2 var(f) / N)``, with the weighted (design-corrected)
variance of the residual and lam tuned for uniform sampling.
A weighted estimate is refused when a label lacks its inclusion probability.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
from scipy.stats import norm

from judgekit.calibration.design.bootstrap import weighted_bootstrap_t
from judgekit.calibration.estimate.intervals import quantile, resolve

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
    note: str | None = None  # e.g. a share's interval clipped to [0, 1], with the values before

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
    interval: str = "auto",
    kind: str = "mean",
) -> DesignEstimate:
    """IPW PPI++ mean: human ``y`` and judge ``f`` on the n labelled items (shape (n,)), the
    judge ``f_all`` on all N items, inclusion probabilities ``pi`` in (0, 1] (shape (n,)).

    ``interval``: ``clt`` (ppi_py's), ``t`` (the same with Student's t at n - 1),
    ``bootstrap-t`` (design-respecting, :mod:`.bootstrap`) or ``auto``: the rule of
    ``calibrate estimate`` for the target's ``kind`` (a ``mean``: bootstrap-t below 100 labels;
    a ``share`` or ``rate``: t below 50; CLT from there).
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
    boot, rule = _boot(interval, kind, y, f, w, f_all, alpha, None, None, (low + high) / 2,
                       (high - low) / 2)  # fmt: skip
    clt_half = (high - low) / 2
    if boot:
        point, low, high = boot
    method = "ipw ppi++ (hajek weights 1/pi)"
    return _result(design, y, f, f_all, w, alpha, point, low, high, method, rule, clt_half)


def _boot(
    interval: str, kind: str, y: np.ndarray, f: np.ndarray, w: np.ndarray, f_all: np.ndarray,
    alpha: float, strata: np.ndarray | None = None, strata_all: np.ndarray | None = None,
    point: float = 0.0, half: float = 0.0, n_eff: float | None = None,
) -> tuple[tuple[float, float, float] | None, str]:  # fmt: skip
    """(estimate, low, high) when the rule (``intervals.resolve``) asks for bootstrap-t or t
    (the CLT ``point +- half`` widened by t / z), else None; and the rule's name. ``n_eff``:
    the labels the rule counts (default n; a stratified design: its effective degrees of
    freedom + 1, :func:`satterthwaite_df`)."""
    n = len(y) if n_eff is None else n_eff
    rule = resolve(interval, kind, int(n))
    if rule == "t":
        wide = half * quantile("t", n, alpha) / quantile("clt", len(y), alpha)
        return (point, point - wide, point + wide), "t"
    if rule != "bootstrap-t":
        return None, "clt"
    out = weighted_bootstrap_t(y, f, w, f_all, alpha, strata=strata, strata_all=strata_all)
    return out, "bootstrap-t" if out else "clt (bootstrap-t undefined: no spread)"


def _result(
    design: str, y: np.ndarray, f: np.ndarray, f_all: np.ndarray, w: np.ndarray, alpha: float,
    point: float, low: float, high: float, method: str, rule: str = "clt",
    clt_half: float | None = None,
) -> DesignEstimate:  # fmt: skip
    """The estimate with the uniform design's half-width at the same n; when the interval is a
    bootstrap-t, the uniform CLT projection is widened by the same ratio (bootstrap-t over CLT
    half-width), so the two are compared under one interval rule."""
    half = (high - low) / 2
    uni = uniform_projection(y, f, f_all, w, alpha)
    if clt_half and clt_half > 0:
        uni *= half / clt_half
    n_uni = len(y) * (uni / half) ** 2 if half > 0 else float("nan")
    sig = {"design": design, "method": method, "interval": rule, "alpha": alpha,
           "source": SOURCES[design]}  # fmt: skip
    return DesignEstimate(design, len(y), len(f_all), point, low, high, half, uni, n_uni, sig)


def satterthwaite_df(var_h: np.ndarray, n_h: np.ndarray) -> float:
    """Effective degrees of freedom of a stratified variance ``sum_h v_h`` whose stratum terms
    ``v_h`` (shape (H,), each ``W_h^2 se_h^2``) rest on ``n_h`` labels (shape (H,), each >= 2):
    ``(sum v_h)^2 / sum(v_h^2 / (n_h - 1))`` (Satterthwaite 1946; Cochran 1977, Sampling
    Techniques, Sec. 5.4, Eq. 5.16). Between ``min(n_h) - 1`` and ``n - H``; a stratum with few
    labels and a large share of the variance pulls it down. ``n - H`` when every v_h is 0."""
    var_h, n_h = np.asarray(var_h, dtype=float), np.asarray(n_h, dtype=float)
    den = float(np.sum(var_h**2 / (n_h - 1)))
    return float(var_h.sum() ** 2 / den) if den > 0 else float(n_h.sum() - len(n_h))


def stratified_ppi(
    y: np.ndarray,
    f: np.ndarray,
    strata: np.ndarray,
    f_all: np.ndarray,
    strata_all: np.ndarray,
    alpha: float = 0.05,
    interval: str = "auto",
    kind: str = "mean",
) -> DesignEstimate:
    """Stratified PPI++ mean (Fisch et al. 2024, Sec. 3): per-stratum PPI++ (ppi_py) combined by
    the stratum shares N_h / N. ``y``, ``f``, ``strata``: the n labelled items; ``f_all``,
    ``strata_all``: all N items. Every stratum needs at least 2 labels (ValueError otherwise).
    ``interval``, ``kind``: as :func:`weighted_ppi` (the bootstrap resamples within strata);
    ``auto`` counts the Satterthwaite effective labels (:func:`satterthwaite_df` + 1), not n:
    with n = 100 split over strata of 5-40 labels the CLT interval undercovered skewed MQM
    (0.79-0.86 worst facet, docs/designs.md), so such a design keeps the bootstrap-t.
    """
    y, f, f_all = (np.asarray(a, dtype=float) for a in (y, f, f_all))
    strata, strata_all = np.asarray(strata), np.asarray(strata_all)
    _check(y, f, np.ones(len(y)), "stratified")
    z = norm.ppf(1 - alpha / 2)
    point, var, w, parts = 0.0, 0.0, np.empty(len(y)), []
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
        parts.append(((share * (hi - lo) / (2 * z)) ** 2, lab.sum()))
        var += parts[-1][0]
        w[lab] = pop.sum() / lab.sum()
    half = float(z * np.sqrt(var))
    low, high = point - half, point + half
    clt_half = half
    n_eff = satterthwaite_df(*np.array(parts).T) + 1
    boot, rule = _boot(interval, kind, y, f, w, f_all, alpha, strata, strata_all, point, half,
                       n_eff)  # fmt: skip
    if boot:
        point, low, high = boot
    return _result("stratified", y, f, f_all, w, alpha, point, low, high,
                   "stratified ppi++ (per-stratum lambda)", rule, clt_half)  # fmt: skip


def combine_rounds(last: DesignEstimate, known: np.ndarray, n_items: int) -> DesignEstimate:
    """The population mean from sequential rounds (issue 37's rounds: label some, re-plan the
    rest): the items labelled in earlier rounds are known exactly (``known``: their human
    values, shape (k,)); ``last`` estimates the mean of the other ``N - k`` items under the last
    round's design (planned on them, given the earlier rounds). Then
    ``theta = (sum(known) + (N - k) theta_last) / N`` with the interval of ``last`` scaled by
    ``(N - k) / N``: conditional on the earlier rounds the last one is an ordinary design on a
    fixed population, so the interval keeps its coverage whatever rule chose the rounds
    (finite-population form of Zrnic & Candès 2024, Sec. 4, sequential active inference).
    ``n_items``: N. Raises ValueError when ``last`` does not cover the other N - k items.
    """
    known = np.asarray(known, dtype=float)
    rest = n_items - len(known)
    if rest != last.n_items:
        raise ValueError(f"last round covers {last.n_items} items, expected {rest}")
    share = rest / n_items
    point = (known.sum() + rest * last.estimate) / n_items
    half, uni = last.half_width * share, last.uniform_half_width * share
    n = last.n + len(known)
    sig = {**last.signature, "rounds": last.signature.get("rounds", 1) + 1,
           "earlier_labels": len(known)}  # fmt: skip
    n_uni = n * (uni / half) ** 2 if half > 0 else float("nan")
    return DesignEstimate(last.design, n, n_items, float(point), float(point - half),
                          float(point + half), half, uni, n_uni, sig)  # fmt: skip
