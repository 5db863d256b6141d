"""PPI++ interval widths with the judge's probabilities and with its hard labels, same draw
(:mod:`judgekit.calibration.estimate.probs` explains the predictor)."""

from __future__ import annotations

import numpy as np

from judgekit.calibration.estimate import estimate_mean


def width_with_and_without(
    y: np.ndarray,
    hard: np.ndarray,
    prob: np.ndarray,
    hard_u: np.ndarray,
    prob_u: np.ndarray,
    alpha: float = 0.05,
) -> dict[str, float]:
    """PPI++ CI widths of the mean with the hard and the probability predictor, same draw.

    Args:
        y: human values on the n labelled items, in {0, 1}, shape (n,).
        hard, prob: the judge's hard value and probability on those items, shape (n,).
        hard_u, prob_u: the same on the N unlabelled items, shape (N,).

    Returns:
        ``{"hard": width, "probabilities": width, "classical": width}`` (share units).
    """
    widths: dict[str, float] = {}
    for name, yhat, yhat_u in (("hard", hard, hard_u), ("probabilities", prob, prob_u)):
        rows = {e.method: e for e in estimate_mean(y, yhat, yhat_u, alpha=alpha)}
        widths[name] = float(rows["ppi++"].ci_high - rows["ppi++"].ci_low)
        widths["classical"] = float(rows["classical"].ci_high - rows["classical"].ci_low)
    return widths
