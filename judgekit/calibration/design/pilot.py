"""The active design fitted on a pilot: the expected residual per item, and the safeguard.

Why a pilot. The variance of the inverse-probability-weighted PPI++ mean under Poisson sampling
is ``sum_i e_i^2 (1 - pi_i) / pi_i / N^2`` with ``e_i`` the item's centred residual
``Y_i - lam f_i``; it is smallest with ``pi_i`` proportional to ``sqrt(E[e_i^2 | x_i])``
(Zrnic & Candès 2024, Active Statistical Inference, ICML, Sec. 3, Eq. 6; Neyman's rule per
item). The judge's raw uncertainty stands in for that only when it tracks the judge's error (a
calibrated label probability). Measured on WMT23 MQM, closeness of a GEMBA-MQM score to the
median runs *against* the error (large errors sit at very negative scores), and on LLMBar a
judge's disagreement with itself predicts its error hardly at all: taken at face value the
active design was 23-58% worse than uniform (docs/designs.md).

So, with a pilot of human labels (a uniform first round): :func:`error_model` estimates
``sqrt(E[e^2 | u])`` in quantile bins of the uncertainty feature ``u`` (any monotone or not
relation), shrunk to the pooled value by :data:`SHRINK` pseudo-labels per bin; and
:func:`choose` projects, by leave-one-out on the pilot, the variance of the fitted active
design against the uniform design's at the same budget and falls back to uniform unless the
projected saving reaches ``margin`` (the safeguard: an uninformative uncertainty costs nothing
but the pilot, which the estimate uses in full; :mod:`.estimators`, sequential rounds).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judgekit.calibration.design.probabilities import active_probabilities

BINS = 4
SHRINK = 3.0
FLOORS = (0.1, 0.2, 0.35, 0.5)
MARGIN = 0.1
RAW = -1
MODELS = (RAW, 0, BINS)


def _bins(u_all: np.ndarray, bins: int) -> np.ndarray:
    edges = np.unique(np.quantile(u_all, np.linspace(0, 1, bins + 1)[1:-1]))
    return edges


def pilot_residuals(y: np.ndarray, f: np.ndarray, f_all: np.ndarray) -> np.ndarray:
    """Centred PPI++ residuals ``e = (y - lam f) - mean(y - lam f)`` of the pilot, shape (n,).

    ``lam`` is PPI++'s power-tuned value for the mean (Angelopoulos, Duchi & Zrnic 2023, Sec.
    2.2: ``cov(y, f) / ((1 + n/N) var(f_all))``, clipped to [0, 1]).
    """
    y, f, f_all = (np.asarray(a, dtype=float) for a in (y, f, f_all))
    var = float(np.var(f_all))
    cov = float(np.mean((y - y.mean()) * (f - f.mean())))
    lam = 0.0 if var == 0 else float(np.clip(cov / ((1 + len(y) / len(f_all)) * var), 0, 1))
    r = y - lam * f
    return r - r.mean()


def error_model(
    u_pilot: np.ndarray, e_pilot: np.ndarray, u_all: np.ndarray, bins: int = BINS
) -> np.ndarray:
    """``sqrt(E[e^2 | u])`` for every item, shape (N,), from the pilot.

    ``u_pilot``, ``e_pilot``: the pilot's uncertainty feature and centred residual (shape
    (n,)); ``u_all``: the feature on all N items, cut into ``bins`` quantile bins (fewer where
    values tie); ``bins`` 0: a least-squares line of ``|e|`` on the feature; :data:`RAW`: the
    feature itself, unfitted (right for a calibrated judge's ``sqrt(p (1 - p))``). Each bin's
    mean of ``e^2`` is shrunk to the pooled mean by :data:`SHRINK` pseudo-labels, so an empty
    bin takes the pooled value. Source: Zrnic & Candès 2024, Sec. 3
    (the optimal rule ``pi ∝ sqrt(E[e^2 | x])``, with its expectation learned from labels).
    """
    u_pilot, e2, u_all = (np.asarray(a, dtype=float) for a in (u_pilot, e_pilot, u_all))
    if bins == RAW:  # the feature itself, unfitted (a calibrated judge's sqrt(p (1 - p)))
        return np.maximum(u_all, 0.0)
    if bins == 0:
        return _linear(u_pilot, np.abs(e2), u_all)
    e2 = e2**2
    edges = _bins(u_all, bins)
    b_pilot, b_all = np.digitize(u_pilot, edges), np.digitize(u_all, edges)
    pooled = float(e2.mean()) if len(e2) else 1.0
    k = len(edges) + 1
    sums = np.bincount(b_pilot, weights=e2, minlength=k)
    counts = np.bincount(b_pilot, minlength=k)
    m = (sums + SHRINK * pooled) / (counts + SHRINK)
    return np.sqrt(np.maximum(m, 1e-12))[b_all]


def _linear(u_pilot: np.ndarray, a: np.ndarray, u_all: np.ndarray) -> np.ndarray:
    """Least-squares line of ``|e|`` on ``u``, floored at a tenth of the pilot's mean ``|e|``."""
    low = max(0.1 * float(a.mean()), 1e-9) if len(a) else 1.0
    if len(a) < 3 or np.ptp(u_pilot) == 0:
        return np.full(len(u_all), max(float(a.mean()) if len(a) else 1.0, low))
    slope, icpt = np.polyfit(u_pilot, a, 1)
    return np.maximum(icpt + slope * u_all, low)


@dataclass(frozen=True)
class Choice:
    """The pilot's verdict: ``design`` (active or uniform), the ``floor``, the projected
    label saving of the fitted active design over uniform (share, may be negative), the score
    ``sqrt(E[e^2|u])`` per item (shape (N,)) and why."""

    design: str
    floor: float
    projected_saving: float
    score: np.ndarray
    reason: str


def _loo_scores(u_pilot: np.ndarray, e: np.ndarray, u_all: np.ndarray, bins: int) -> np.ndarray:
    """The score of each pilot item from the model fitted without it (shape (n,)), in closed
    form: a bin's sums less the item's own (the bin edges are the population's), a line's
    leave-one-out prediction ``(yhat_i - h_ii a_i) / (1 - h_ii)`` from the hat matrix."""
    n = len(e)
    if bins == RAW:
        return np.maximum(u_pilot, 0.0)
    if bins == 0:
        return _linear_loo(u_pilot, np.abs(e))
    e2 = e**2
    edges = _bins(u_all, bins)
    b = np.digitize(u_pilot, edges)
    k = len(edges) + 1
    sums = np.bincount(b, weights=e2, minlength=k)[b] - e2
    counts = np.bincount(b, minlength=k)[b] - 1
    pooled = (e2.sum() - e2) / max(n - 1, 1)
    return np.sqrt(np.maximum((sums + SHRINK * pooled) / (counts + SHRINK), 1e-12))


def _linear_loo(u: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Leave-one-out :func:`_linear` at each pilot item (shape (n,))."""
    n = len(a)
    rest = (a.sum() - a) / max(n - 1, 1)
    low = np.maximum(0.1 * rest, 1e-9)
    if n - 1 < 3 or np.ptp(u) == 0:
        return np.maximum(rest, low)
    x = np.column_stack([np.ones(n), u])
    inv = np.linalg.pinv(x.T @ x)
    h = np.einsum("ij,jk,ik->i", x, inv, x)
    fit = x @ (inv @ (x.T @ a))
    with np.errstate(divide="ignore", invalid="ignore"):
        pred = (fit - h * a) / (1 - h)
    pred = np.where(h < 1 - 1e-9, pred, rest)  # the only distinct u: the others' line is flat
    return np.maximum(pred, low)


def choose(
    u_pilot: np.ndarray,
    e_pilot: np.ndarray,
    u_all: np.ndarray,
    budget: float,
    *,
    margin: float = MARGIN,
    floors: tuple[float, ...] = FLOORS,
    models: tuple[int, ...] = MODELS,
) -> Choice:
    """Active (the fitted model and floor that project best) or uniform (the safeguard).

    ``u_pilot``, ``e_pilot``: pilot feature and centred residual (shape (n,), n >= 8);
    ``u_all``: the feature on the N items to plan; ``budget``: expected labels in (0, N];
    ``models``: :func:`error_model`'s ``bins`` values to try (0: a line). The projected
    variance of a design ``pi`` is ``mean(e_i^2 / pi_i)`` over the pilot, each pilot item scored
    by the model fitted without it (so the projection is not the fit's own optimism), against
    ``mean(e_i^2) N / budget`` for uniform. Uniform unless the best projected saving
    ``1 - V_active / V_uniform`` reaches ``margin``.
    """
    u_pilot, e, u_all = (np.asarray(a, dtype=float) for a in (u_pilot, e_pilot, u_all))
    if len(e) < 8 or float(np.mean(e**2)) == 0:
        score = np.ones(len(u_all))
        return Choice("uniform", 1.0, 0.0, score, f"pilot of {len(e)} labels: too small to fit")
    v_uni = float(np.mean(e**2)) * len(u_all) / budget
    grown = budget * (len(u_all) + len(e)) / len(u_all)
    best = (float("-inf"), 1.0, models[0])
    for model in models:
        if model == RAW and (u_all < 0).any():
            continue  # a score, not an uncertainty: only fitted
        loo = _loo_scores(u_pilot, e, u_all, model)
        score = error_model(u_pilot, e, u_all, model)
        for floor in floors:
            # the probability a pilot item would get beside the population's items
            pi = active_probabilities(np.append(score, loo), grown, floor)[len(u_all) :]
            best = max(best, (1 - float(np.mean(e**2 / pi)) / v_uni, floor, model))
    saving, floor, model = best
    score = error_model(u_pilot, e, u_all, model)
    fit = {RAW: "the uncertainty as is", 0: "a line"}.get(model, f"{model} bins")
    if saving < margin:
        why = f"pilot projects {saving:.0%} saving (< {margin:.0%}): uncertainty not informative"
        return Choice("uniform", 1.0, saving, score, why)
    return Choice("active", floor, saving, score, f"pilot projects {saving:.0%} ({fit})")
