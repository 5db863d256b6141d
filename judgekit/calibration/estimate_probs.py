"""The judge's probability of the target label as the predictor of a prediction-powered estimate.

For ``share:LABEL`` the hard predictor is ``1[label == LABEL]``; with label probabilities the
predictor is ``p(LABEL)``, in [0, 1]. PPI++ (Angelopoulos, Duchi & Zrnic, "PPI++: Efficient
Prediction-Powered Inference", 2023, Sec. 2) takes any real-valued predictor; its power-tuned
lambda keeps the interval no wider than the classical one, and a predictor that tracks the human
label more closely (a lower mean squared error) gives a narrower one.

* :func:`probability_values`: per item, the mean over the chosen raters of p(LABEL), where the
  rater has probabilities, the hard value elsewhere.
* :func:`width_with_and_without`: the PPI++ interval width with each predictor on the same
  labelled draw, for ``bench/estimate_probs.py`` and the docs figure.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgekit.labels.vocabulary import canonical_id, label_text


def probability_values(
    path: str | Path, raters: list[str], label: str, hard: pd.Series
) -> pd.Series:
    """``hard`` (item -> mean hard value) with p(``label``) in place of each rater's label
    where the rater has label probabilities; ``hard`` itself when none has.

    Raises:
        InputError: malformed probabilities (:func:`load_label_probs`).
    """
    from judgekit.calibration.confidence_inputs import load_label_probs
    from judgekit.errors import InputError

    columns = {}
    for rater in raters:
        try:
            probs, _ = load_label_probs(path, rater)
        except InputError as exc:
            if "no label probabilities of rater" in str(exc):
                return hard  # some rater has none: the hard labels, for every rater alike
            raise
        if probs.empty:
            return hard
        key = str(label_text(label))
        column = probs[key] if key in probs.columns else pd.Series(0.0, index=probs.index)
        column.index = [canonical_id(i) for i in column.index]
        columns[rater] = column.reindex(hard.index)
    frame = pd.DataFrame(columns)
    # items a rater gave no probabilities for keep the hard mean of that item
    return frame.mean(axis=1).fillna(hard).astype(float)


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
    from judgekit.calibration.estimate import estimate_mean

    widths: dict[str, float] = {}
    for name, yhat, yhat_u in (("hard", hard, hard_u), ("probabilities", prob, prob_u)):
        rows = {e.method: e for e in estimate_mean(y, yhat, yhat_u, alpha=alpha)}
        widths[name] = float(rows["ppi++"].ci_high - rows["ppi++"].ci_low)
        widths["classical"] = float(rows["classical"].ci_high - rows["classical"].ci_low)
    return widths
