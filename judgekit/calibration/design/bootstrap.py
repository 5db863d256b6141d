"""Design-respecting bootstrap-t of the weighted and stratified PPI++ means (below 100 labels).

The interval rule of ``calibrate estimate`` (bootstrap-t below
:data:`judgekit.calibration.estimate.intervals.BOOTSTRAP_BELOW` labels, CLT from there) applied
to the label designs. Each of B resamples draws, with replacement, the n labelled
``(human, judge, weight)`` triples and the N judge values of the population; a stratified design
resamples within each stratum (n_h labelled, N_h population), so every resample has the
design's allocation (Rao & Wu 1988, the with-replacement bootstrap for stratified samples; for
Poisson sampling with weights ``1 / pi`` the weighted with-replacement bootstrap, Efron &
Tibshirani 1993, ch. 12, studentised as in Hall 1988).

Statistic of one (re)sample, Hájek form (weights ``a_i = w_i / sum(w)``): ``lam`` PPI++'s tuned
value ``cov_a(Y, f) / ((1 + n/N) var(f_all))`` clipped to [0, 1]; ``theta = lam mean(f_all)
+ sum a_i (Y_i - lam f_i)``; ``se^2 = lam^2 var(f_all) / N + n/(n-1) sum a_i^2 (r_i - rbar)^2``
with ``r = Y - lam f`` (the linearised variance of the Hájek mean: centred residuals). The
interval is ``[theta - q(1 - alpha/2) se, theta - q(alpha/2) se]`` with ``q`` the quantiles of
``t* = (theta* - theta) / se*``. Everything is computed from count matrices, all B at once; the
population's B resamples (their mean and variance) come from their own seeded stream, cached per
population (a coverage study's draws on one population reuse them).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

RESAMPLES = 2000
SEED = 0


def _stats(c: np.ndarray, y: np.ndarray, f: np.ndarray, w: np.ndarray,
           pop: tuple[np.ndarray, np.ndarray, int]) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(theta, se^2) per row of the count matrix ``c`` (B, n) of the labelled items and the
    resampled population judge values' mean and variance ``pop`` ((B,), (B,), N)."""
    n = len(y)
    mu, var_u, big_n = pop
    cw = c * w
    tot = cw.sum(axis=1)
    my, mf = cw @ y / tot, cw @ f / tot
    cov = cw @ (y * f) / tot - my * mf
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(var_u > 0, np.clip(cov / ((1 + n / big_n) * var_u), 0, 1), 0.0)
    theta = lam * mu + my - lam * mf
    c2 = c * w**2
    s1, sy, sf = c2.sum(axis=1), c2 @ y, c2 @ f
    syy, sff, syf = c2 @ y**2, c2 @ f**2, c2 @ (y * f)
    dyy = syy - 2 * my * sy + my**2 * s1
    dff = sff - 2 * mf * sf + mf**2 * s1
    dyf = syf - my * sf - mf * sy + my * mf * s1
    var_r = (dyy - 2 * lam * dyf + lam**2 * dff) / tot**2 * n / max(n - 1, 1)
    return theta, lam**2 * var_u / big_n + np.maximum(var_r, 0.0)


@lru_cache(maxsize=64)
def _population_moments(values: bytes, b: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of ``b`` with-replacement resamples of the population judge values
    (float64 ``values`` as bytes), drawn from their own seeded stream: the same population
    gives the same resamples, so repeated estimates on one population (a coverage study's
    draws) reuse them."""
    f = np.frombuffer(values, dtype=float)
    rng = np.random.default_rng([seed, len(f)])
    mu, var = np.empty(b), np.empty(b)
    step = max(1, 2_000_000 // max(len(f), 1))
    for lo in range(0, b, step):
        block = f[rng.integers(0, len(f), (min(step, b - lo), len(f)))]
        mu[lo : lo + len(block)], var[lo : lo + len(block)] = block.mean(1), block.var(1)
    mu.flags.writeable = var.flags.writeable = False
    return mu, var


def _counts(rng: np.random.Generator, b: int, size: int) -> np.ndarray:
    """Resample counts, shape (b, size): each row ``size`` draws with replacement."""
    idx = rng.integers(0, size, (b, size)) + np.arange(b)[:, None] * size
    return np.bincount(idx.ravel(), minlength=b * size).reshape(b, size).astype(float)


def weighted_bootstrap_t(
    y: np.ndarray, f: np.ndarray, w: np.ndarray, f_all: np.ndarray, alpha: float = 0.05,
    *, strata: np.ndarray | None = None, strata_all: np.ndarray | None = None,
    b: int = RESAMPLES, seed: int = SEED,
) -> tuple[float, float, float] | None:  # fmt: skip
    """(estimate, low, high) of the bootstrap-t interval (module docstring), or None when it is
    undefined (the sample's se is 0, or more than alpha / 2 of the resamples have se 0): the
    caller then keeps the CLT interval and says so.

    ``y``, ``f``, ``w``: the n labelled human values, judge values and design weights
    ``1 / pi`` (shape (n,)); ``f_all``: the judge on the N population items. With ``strata``
    (shape (n,)) and ``strata_all`` (shape (N,)): the stratified PPI++ mean, per-stratum
    statistics combined by the shares ``N_h / N`` (Fisch et al. 2024, Sec. 3), resampled
    within strata. Seeded: the same inputs give the same interval.
    """
    y, f, w, f_all = (np.asarray(a, dtype=float) for a in (y, f, w, f_all))
    rng = np.random.default_rng(seed)
    if strata is None:
        groups = [(np.arange(len(y)), np.arange(len(f_all)), 1.0)]
    else:
        strata, strata_all = np.asarray(strata), np.asarray(strata_all)
        groups = [(np.flatnonzero(strata == h), np.flatnonzero(strata_all == h),
                   float(np.mean(strata_all == h))) for h in np.unique(strata_all)]  # fmt: skip
    theta0, var0 = 0.0, 0.0
    theta_b, var_b = np.zeros(b), np.zeros(b)
    for lab, pop, share in groups:
        args, fp = (y[lab], f[lab], w[lab]), np.ascontiguousarray(f_all[pop])
        t0, v0 = _stats(np.ones((1, len(lab))), *args, (fp.mean()[None], fp.var()[None], len(fp)))
        resampled = (*_population_moments(fp.tobytes(), b, seed), len(fp))
        tb, vb = _stats(_counts(rng, b, len(lab)), *args, resampled)
        theta0 += share * t0[0]
        var0 += share**2 * v0[0]
        theta_b += share * tb
        var_b += share**2 * vb
    se0 = float(np.sqrt(var0))
    ok = var_b > 0
    t = (theta_b[ok] - theta0) / np.sqrt(var_b[ok])
    if se0 == 0 or len(t) < b * (1 - alpha / 2):
        return None
    q_lo, q_hi = np.quantile(t, [alpha / 2, 1 - alpha / 2])
    return float(theta0), float(theta0 - q_hi * se0), float(theta0 - q_lo * se0)
