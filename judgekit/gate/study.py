"""The gate's error rates by simulation: the verdicts of ``estimate`` and ``difference`` checks
on many draws of human labels at once, each equal to what ``judgekit gate`` decides on that
draw (tested one by one against :func:`judgekit.gate.figures.facet_check` and
:func:`judgekit.gate.verdicts.holm`).

A draw is one split of a population into labelled pairs (human, judge) and unlabelled judge
values. The check's estimate, SE and ``lam`` come from the draw's sums, and its bootstrap-t
reference ``t*`` from the same resamples the gate draws (same B and seed: the resample indices
become count matrices, :mod:`judgekit.calibration.estimate.coverage`), so that 1,000 draws take
seconds instead of the per-draw library calls' minutes. ``bench/gate.py`` measures false fails
and power with it (docs/gate.md).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from judgekit.calibration.estimate import intervals as iv
from judgekit.calibration.estimate.coverage import draw_sums, resample_counts
from judgekit.errors import JudgekitError

LAM = {"classical": 0.0, "ppi": 1.0, "ppi++": None}
DRAW_CHUNK = 250  # draws held at once (each with B resamples of 13 sums)


def _tail_counts(t_star: np.ndarray, t_obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P(T >= t_obs), P(T <= t_obs)) per draw from its row of ``t*`` as
    :func:`judgekit.gate.verdicts.one_sided` computes them ((count + 1) / (B + 1), NaN dropped)."""
    valid = ~np.isnan(t_star)
    b = valid.sum(axis=1)
    with np.errstate(invalid="ignore"):
        upper = ((t_star >= t_obs[:, None]) & valid).sum(axis=1)
        lower = ((t_star <= t_obs[:, None]) & valid).sum(axis=1)
    return (upper + 1) / (b + 1), (lower + 1) / (b + 1)


def _chunk_pvalues(
    y: np.ndarray, h: np.ndarray, u: np.ndarray, bound: float, lam: float | None, name: str,
    alpha: float, boot: tuple[np.ndarray, np.ndarray] | None, lam_rule: str,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(P(T >= t_obs), P(T <= t_obs)) for the draws of one chunk (module docstring)."""
    n = y.shape[1]
    sample, boot_sums = draw_sums(y, h, u, boot)
    point, se = iv.point_and_se(sample, iv.lam_for(sample, lam_rule) if lam is None else lam)
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = point - bound
        edge = np.where(gap == 0, 0.0, np.sign(gap) * np.inf)  # se 0: as facet_check
        t_obs = np.where(se > 0, gap / np.where(se > 0, se, 1.0), edge)
    upper = norm.sf(t_obs) if name == "clt" else student_t(n - 1).sf(t_obs)
    lower = norm.cdf(t_obs) if name == "clt" else student_t(n - 1).cdf(t_obs)
    if boot_sums is not None:
        b_point, b_se = iv.point_and_se(boot_sums, iv.lam_for(boot_sums, lam_rule)
                                        if lam is None else lam)  # fmt: skip
        low, _, _ = iv.bootstrap_t_bounds(point, se, b_point, b_se, alpha)
        diff = b_point - point[:, None]
        scale = 1e-9 * (np.abs(se) + 1e-12)[:, None]
        flat = b_se <= scale
        with np.errstate(divide="ignore", invalid="ignore"):
            t_star = np.where(flat, np.where(np.abs(diff) <= scale, 0.0, np.sign(diff) * np.inf),
                              diff / np.where(flat, 1.0, b_se))  # fmt: skip
        b_upper, b_lower = _tail_counts(t_star, t_obs)
        ok = ~np.isnan(low)  # else the interval fell back to t (estimate_mean)
        upper = np.where(ok, b_upper, student_t(n - 1).sf(t_obs))
        lower = np.where(ok, b_lower, student_t(n - 1).cdf(t_obs))
    infinite = ~np.isfinite(t_obs)
    upper = np.where(infinite, (t_obs > 0).astype(float), upper)
    lower = np.where(infinite, (t_obs < 0).astype(float), lower)
    zero = t_obs == 0
    return np.where(zero, 1.0, upper), np.where(zero, 1.0, lower)


def check_pvalues(
    y: np.ndarray, h: np.ndarray, u: np.ndarray, bound: float, *, method: str = "ppi++",
    direction: str = "at_least", alpha: float = 0.05, interval: str = "auto",
    kind: str = "mean", resamples: int = iv.RESAMPLES, seed: int = iv.SEED,
    lam_rule: str = "shrunk",
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The one-sided p-values ``(p_pass, p_fail)`` of one check on many draws.

    Args:
        y, h: human and judge values of each draw's labelled items, shape (draws, n), n >= 2.
        u: judge values of each draw's unlabelled items, shape (draws, N), N >= 1.
        bound, direction: the rule's bound and passing side (``at_least``/``at_most``).
        method: ``classical``, ``ppi`` or ``ppi++``; alpha: the gate's alpha (the checks'
            intervals are at 2 alpha); interval, kind, resamples, seed, lam_rule: as the gate's
            settings (:class:`judgekit.gate.spec.GateSpec`).

    Returns:
        ``(p_pass, p_fail)``, each of shape (draws,), in (0, 1]: the gate's
        :attr:`judgekit.gate.verdicts.Check.p_pass` and ``p_fail`` on each draw.

    Raises:
        JudgekitError: fewer than 2 labelled or no unlabelled items, or shapes that differ.
    """
    y, h, u = (np.asarray(v, float) for v in (y, h, u))
    if y.ndim != 2 or y.shape != h.shape or u.ndim != 2 or len(u) != len(y):
        raise JudgekitError(f"y, h must be (draws, n) and u (draws, N): {y.shape}, {h.shape}, "
                            f"{u.shape}")  # fmt: skip
    n, big_n = y.shape[1], u.shape[1]
    if n < 2 or big_n < 1:
        raise JudgekitError(f"at least 2 labelled and 1 unlabelled item, got {n} and {big_n}")
    lam = LAM[method]
    name = iv.resolve(interval, kind, n, method)
    boot = None
    if name == "bootstrap-t":
        rng = np.random.default_rng(seed)
        boot = (resample_counts(rng, resamples, n), resample_counts(rng, resamples, big_n))
        if lam == 0:
            boot = (boot[0], boot[1][:, :0])
    constant = np.ptp(np.concatenate([h, u], axis=1), axis=1) == 0
    parts = []
    for start in range(0, len(y), DRAW_CHUNK):
        rows = slice(start, start + DRAW_CHUNK)
        values = (y[rows], h[rows], u[rows] if lam != 0 else u[rows, :0])
        # a constant judge: PPI++ uses lam = 0 (estimate_mean)
        fixed = lam if lam is not None or not constant[rows].any() else None
        out = _chunk_pvalues(*values, bound, fixed, name, 2 * alpha, boot, lam_rule)
        if lam is None and constant[rows].any():
            zero = _chunk_pvalues(*values, bound, 0.0, name, 2 * alpha, boot, lam_rule)
            out = tuple(np.where(constant[rows], z, o) for z, o in zip(zero, out, strict=True))
        parts.append(out)
    upper, lower = (np.concatenate([p[k] for p in parts]) for k in range(2))
    return (upper, lower) if direction == "at_least" else (lower, upper)


def gate_verdicts(
    p_pass: np.ndarray, p_fail: np.ndarray, alpha: float = 0.05, mode: str = "non-inferiority"
) -> np.ndarray:
    """The gate's verdict on each draw from its checks' p-values, as
    :func:`judgekit.gate.verdicts.holm` and :func:`~judgekit.gate.verdicts.overall` decide
    (Holm over the m checks of one family, Holm 1979).

    Args:
        p_pass, p_fail: shape (m, draws), the checks of one gate (one rule per facet value).
        mode: ``non-inferiority`` (three verdicts) or ``no-regression`` (fail or pass).

    Returns:
        Array of shape (draws,) of ``pass``, ``fail`` or ``inconclusive``.
    """
    p_pass, p_fail = np.atleast_2d(p_pass), np.atleast_2d(p_fail)
    p = np.minimum(p_pass, p_fail)
    m = len(p)
    order = np.argsort(p, axis=0, kind="stable")
    ranked = np.take_along_axis(p, order, axis=0) * (m - np.arange(m))[:, None]
    adjusted = np.empty_like(p)
    np.put_along_axis(adjusted, order, np.minimum(1.0, np.maximum.accumulate(ranked)), axis=0)
    significant, beats = adjusted < alpha, p_pass <= p_fail
    if mode == "no-regression":
        fails, unsure = significant & ~beats, np.zeros_like(significant)
    else:
        fails, unsure = significant & ~beats, ~significant
    return np.where(fails.any(axis=0), "fail",
                    np.where(unsure.any(axis=0), "inconclusive", "pass"))  # fmt: skip
