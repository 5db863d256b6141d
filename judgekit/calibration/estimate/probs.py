"""The judge's probability of the target label as the predictor of a prediction-powered estimate.

For ``share:LABEL`` the hard predictor is ``1[label == LABEL]``; with label probabilities the
predictor is ``p(LABEL)``, in [0, 1]. PPI++ (Angelopoulos, Duchi & Zrnic, "PPI++: Efficient
Prediction-Powered Inference", 2023, Sec. 2) takes any real-valued predictor; its power-tuned
lambda keeps the interval no wider than the classical one, and a predictor that tracks the human
label more closely (a lower mean squared error) gives a narrower one.

* :func:`probability_values`: per item, the mean over the chosen raters of p(LABEL), where the
  rater has probabilities, the hard value elsewhere.
* :func:`judgekit.calibration.estimate.widths.width_with_and_without`: the PPI++ width with
  each predictor on the same labelled draw (``bench/estimate_probs.py``, the docs figure).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgekit.data.vocabulary import canonical_id, label_text


def probability_values(
    path: str | Path, raters: list[str], label: str, hard: pd.Series
) -> tuple[pd.Series, int]:
    """``hard`` (item -> mean hard value) with p(``label``) in place of each rater's label
    where the rater has label probabilities, and the number of items left on their hard value
    (no chosen rater gave probabilities for them; counted, never silent). ``(hard, 0)`` when no
    probabilities are used at all.

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
                return hard, 0  # some rater has none: the hard labels, for every rater alike
            raise
        if probs.empty:
            return hard, 0
        key = str(label_text(label))
        column = probs[key] if key in probs.columns else pd.Series(0.0, index=probs.index)
        column.index = [canonical_id(i) for i in column.index]
        columns[rater] = column.reindex(hard.index)
    frame = pd.DataFrame(columns)
    # items a rater gave no probabilities for keep the hard mean of that item
    mean = frame.mean(axis=1)
    return mean.fillna(hard).astype(float), int(mean.isna().sum())
