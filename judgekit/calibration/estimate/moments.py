"""The sums a mean's estimate is computed from, and how PPI++ chooses its ``lam``.

Every classical, PPI and PPI++ estimate of a mean, its SE and its ``lam`` is a function of a few
sums over the labelled pairs (y human, h judge) and the unlabelled judge values u
(:class:`Sums`). The same formulas then serve one sample (``calibrate estimate``), the B
resamples of a bootstrap-t, and many simulated draws at once (coverage and gate studies).

``lam`` rules (:data:`LAM_RULES`):

* ``tuned`` (``calibrate estimate``'s default): ``ppi_py``'s power-tuning rule
  (``_calc_lam_glm`` for a mean; Angelopoulos, Duchi & Zrnic 2023, arXiv 2311.01453, Sec. 2.2):
  ``lam = cov(y, h) / ((1 + n / N) var(h, all))``, clipped to [0, 1], the variance-optimal
  ``lam*`` with sample moments plugged in. With few labels and heavy-tailed values (segment
  MQM at 50 labels) it is itself noisy (SD 0.27 around 0.40 on WMT23 en-de), and its noise
  costs about as much variance as a weakly correlated judge saves.
* ``shrunk`` (the gate's default, ``GateSpec.lam``): the tuned ``lam`` shrunk toward 0 (the
  classical estimate) by its own signal-to-noise ratio, ``lam = lam_tuned * z^2 / (z^2 + 1)``;
  ``z`` is the t-statistic of the judge's slope in the least-squares regression of y on h over
  the labelled pairs, with White's heteroskedasticity-consistent (HC0) standard error (White
  1980, Econometrica 48:817-838). Since ``lam*`` is proportional to that slope,
  ``z^2 / (z^2 + 1)`` is the plug-in of ``lam*^2 / (lam*^2 + var(lam_tuned))``, the factor
  that minimises the expected excess variance ``A E[(s lam_tuned - lam*)^2]`` of the PPI++
  estimate (its variance is quadratic in ``lam``). A judge that correlates weakly at this n
  gets ``lam`` near 0; a well-correlated one (``z^2`` large) keeps the tuned ``lam``; as n
  grows the factor tends to 1, so PPI++'s asymptotic guarantees are unchanged. The bootstrap-t
  applies the same rule in every resample, so the interval accounts for the choice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judgekit.errors import JudgekitError

LAM_RULES = ("shrunk", "tuned")
DEFAULT_LAM = "tuned"  # calibrate estimate; the gate uses "shrunk" (GateSpec.lam)


def labelled_terms(y: np.ndarray, h: np.ndarray) -> list[np.ndarray]:
    """The per-pair values whose sums :class:`Sums` holds, in its field order: y, h, y^2, h^2,
    y h, h^3, h^4, h^2 y, h^3 y, h^2 y^2, h y^2 (any shape, elementwise)."""
    hh, yy = h * h, y * y
    return [y, h, yy, hh, y * h, hh * h, hh * hh, hh * y, hh * h * y, hh * yy, h * yy]


@dataclass(frozen=True)
class Sums:
    """Sums over the labelled pairs (y human, h judge) and the unlabelled judge values u, each
    an array of one shape (one entry per resample, or per draw and resample).

    ``n`` and ``big_n`` are the labelled and unlabelled counts (``big_n`` 0: no unlabelled).
    The third and fourth moments (``hhh`` ... ``hyy``) serve the ``shrunk`` rule's HC0 standard
    error; None where only the ``tuned`` rule or a fixed ``lam`` is used."""

    n: int
    big_n: int
    y: np.ndarray
    h: np.ndarray
    yy: np.ndarray
    hh: np.ndarray
    yh: np.ndarray
    u: np.ndarray
    uu: np.ndarray
    hhh: np.ndarray | None = None
    hhhh: np.ndarray | None = None
    hhy: np.ndarray | None = None
    hhhy: np.ndarray | None = None
    hhyy: np.ndarray | None = None
    hyy: np.ndarray | None = None

    @classmethod
    def of(cls, y: np.ndarray, h: np.ndarray, u: np.ndarray) -> Sums:
        """The sums of one sample (shapes (n,), (n,), (N,)), as 0-d arrays."""
        lab = [np.asarray(v.sum(), float) for v in labelled_terms(y, h)]
        return cls(len(y), len(u), *lab[:5], np.asarray(u.sum(), float),
                   np.asarray((u * u).sum(), float), *lab[5:])  # fmt: skip

    @classmethod
    def build(cls, n: int, big_n: int, lab: list[np.ndarray], unl: list[np.ndarray]) -> Sums:
        """From the sums of :func:`labelled_terms` (``lab``, 5 or 11 arrays) and of u, u^2."""
        return cls(n, big_n, *lab[:5], *unl, *lab[5:])


def tuned_lam(s: Sums) -> np.ndarray:
    """PPI++'s ``lam`` (``ppi_py._calc_lam_glm`` for a mean, d = 1, clipped to [0, 1]);
    0 where the judge values have no spread (ppi_py would divide by 0)."""
    n, big_n = s.n, s.big_n
    cov = 2 * (s.yh - s.y * s.h / n) / n
    total = n + big_n
    var_all = (s.hh + s.uu - (s.h + s.u) ** 2 / total) / (total - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = cov / (2 * (1 + n / big_n) * var_all)
    return np.where(var_all > 1e-12 * (1 + np.abs(s.hh / n)), np.clip(lam, 0.0, 1.0), 0.0)


def slope_z2(s: Sums) -> np.ndarray:
    """``z^2`` of the judge's slope in the regression of y on h (labelled pairs, intercept),
    with White's HC0 standard error: ``beta = Shy / Shh`` and
    ``var(beta) = sum(H^2 e^2) / Shh^2``, H = h - mean(h), e = y - mean(y) - beta H (centred
    sums from the raw ones). ``inf`` where the residuals vanish; 0 where h has no spread.

    Raises:
        JudgekitError: the sums lack the third and fourth moments.
    """
    if s.hhhh is None:
        raise JudgekitError("the shrunk lam needs the sums' third and fourth moments")
    n = s.n
    a, b = s.h / n, s.y / n
    shh = s.hh - n * a * a
    shy = s.yh - n * a * b
    h4 = s.hhhh - 4 * a * s.hhh + 6 * a * a * s.hh - 4 * a**3 * s.h + n * a**4
    h3y = ((s.hhhy - b * s.hhh) - 3 * a * (s.hhy - b * s.hh) + 3 * a * a * (s.yh - b * s.h)
           - a**3 * (s.y - n * b))  # fmt: skip
    h2y2 = ((s.hhyy - 2 * b * s.hhy + b * b * s.hh) - 2 * a * (s.hyy - 2 * b * s.yh + b * b * s.h)
            + a * a * (s.yy - 2 * b * s.y + n * b * b))  # fmt: skip
    spread = shh > 1e-12 * (1 + np.abs(s.hh))
    with np.errstate(divide="ignore", invalid="ignore"):
        beta = np.where(spread, shy / np.where(spread, shh, 1.0), 0.0)
        meat = np.maximum(h2y2 - 2 * beta * h3y + beta * beta * h4, 0.0)
        z2 = np.where(meat > 0, beta * beta * shh * shh / meat, np.inf)
    return np.where(spread, z2, 0.0)


def shrunk_lam(s: Sums) -> np.ndarray:
    """The ``shrunk`` rule (module docstring): ``tuned_lam * z^2 / (z^2 + 1)``, in [0, 1]."""
    z2 = slope_z2(s)
    with np.errstate(invalid="ignore"):
        factor = np.where(np.isinf(z2), 1.0, z2 / (z2 + 1.0))
    return tuned_lam(s) * factor


def lam_for(s: Sums, rule: str = DEFAULT_LAM) -> np.ndarray:
    """PPI++'s ``lam`` by ``rule`` (:data:`LAM_RULES`), of the sums' shape.

    Raises:
        JudgekitError: an unknown rule.
    """
    if rule == "tuned":
        return tuned_lam(s)
    if rule == "shrunk":
        return shrunk_lam(s)
    raise JudgekitError(f"unknown lam rule '{rule}' (use {', '.join(LAM_RULES)})")


def point_and_se(s: Sums, lam: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """``(estimate, se)`` as ``ppi_mean_pointestimate`` and ``ppi_mean_ci`` compute them:
    ``lam mean(u) + mean(y - lam h)`` and ``sqrt(var(lam u) / N + var(y - lam h) / n)``
    (population variances, as ``ppi_py``); ``lam = 0`` is the classical mean."""
    n, big_n = s.n, s.big_n
    rect = (s.y - lam * s.h) / n
    var_rect = (s.yy - 2 * lam * s.yh + lam * lam * s.hh) / n - rect**2
    if big_n == 0:
        return rect, np.sqrt(np.maximum(var_rect, 0.0) / n)
    mean_u = s.u / big_n
    var_u = s.uu / big_n - mean_u**2
    se2 = lam * lam * np.maximum(var_u, 0.0) / big_n + np.maximum(var_rect, 0.0) / n
    return lam * mean_u + rect, np.sqrt(se2)
