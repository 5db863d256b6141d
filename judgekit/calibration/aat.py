"""The Alternative Annotator Test (Calderon, Reichart & Dror, ACL 2025): can an LLM judge
replace a human annotator? The authors' public implementation is followed step by step
(:func:`alt_test`); the result type is :class:`judgekit.calibration.results.AltTestResult`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from judgekit.calibration.results import AltTestResult
from judgekit.data.vocabulary import canonical_id, label_text
from judgekit.errors import JudgekitError
from judgekit.labels.majority import JudgeLabels, judge_labels
from judgekit.labels.table import LabelData, as_label_table


def _accuracy(pred: Any, others: list[Any]) -> float:
    return float(np.mean([pred == o for o in others]))


def _neg_rmse(pred: Any, others: list[Any]) -> float:
    return -float(np.sqrt(np.mean([(float(pred) - float(o)) ** 2 for o in others])))


SCORINGS: dict[str, Callable[[Any, list[Any]], float]] = {
    "accuracy": _accuracy,
    "neg_rmse": _neg_rmse,
}


def alt_test(
    judge: JudgeLabels,
    humans: LabelData,
    *,
    judge_rater: Hashable | None = None,
    epsilon: float = 0.2,
    q: float = 0.05,
    scoring: str = "accuracy",
    min_humans_per_item: int = 2,
    min_items: int = 30,
) -> AltTestResult:
    """Alternative Annotator Test (Calderon, Reichart & Dror, ACL 2025, Sec. 3; public code).

    Procedure:

    1. Keep items with a judge label and at least ``min_humans_per_item`` human labels.
    2. For each annotator j with at least ``min_items`` kept items (others are skipped and
       reported), and each item i that j labelled: S_judge = alignment of the judge's label
       with the labels of the *other* annotators on i, S_j = the same for j's label. The
       alignment is "accuracy" (share of the others with the same label; labels as text) or
       "neg_rmse" (minus the RMSE to the others; numeric labels).
    3. W_judge = [S_judge >= S_j], W_j = [S_j >= S_judge]; d_i = W_j - W_judge.
       rho_j = mean(W_judge) (the judge's advantage probability against j).
    4. One-sided one-sample t-test of H0: mean(d) >= epsilon against H1: mean(d) < epsilon
       (scipy ``ttest_1samp(d, epsilon, alternative="less")``; equivalently, the judge's
       advantage rho_judge - rho_j exceeds -epsilon). Epsilon is the cost-benefit margin:
       0.2 for expert annotators, 0.15 skilled, 0.1 crowd workers (paper's guidance). When
       every d_i is equal the t statistic is infinite: p = 0 if d < epsilon, else 1.
    5. Benjamini-Yekutieli FDR correction at level ``q`` over annotators (statsmodels
       ``multipletests(method="fdr_by")``); winning rate omega = share of rejected nulls; the
       judge passes when omega >= 0.5. Advantage probability rho = mean of rho_j.

    Raises:
        JudgekitError: unknown scoring, or no annotator with ``min_items`` items.
    """
    if scoring not in SCORINGS:
        raise JudgekitError(f"unknown alignment scoring '{scoring}' (use {', '.join(SCORINGS)})")
    score = SCORINGS[scoring]
    table = as_label_table(humans)
    frame = table.frame.copy()
    frame.index = [canonical_id(i) for i in frame.index]
    predicted = judge_labels(judge, judge_rater)
    if scoring == "accuracy":
        frame = frame.apply(lambda col: col.map(label_text))
    counts = frame.notna().sum(axis=1)
    keep = frame.index[(counts >= min_humans_per_item) & frame.index.isin(predicted.index)]
    frame = frame.loc[keep]
    rows, skipped = [], {}
    for rater in frame.columns:
        mine = frame[rater].dropna()
        if len(mine) < min_items:
            skipped[str(rater)] = f"{len(mine)} items < {min_items}"
            continue
        rows.append(_annotator_test(frame, rater, mine, predicted, score, epsilon))
    if not rows:
        raise JudgekitError(
            f"alt-test: no annotator has {min_items} items shared with the judge and "
            f"{min_humans_per_item - 1}+ other annotators (skipped: {skipped})"
        )
    per = pd.DataFrame(rows)
    rejected, adjusted, _, _ = multipletests(per["p_value"], alpha=q, method="fdr_by")
    per["p_adjusted"], per["rejected"] = adjusted, rejected
    omega = float(np.mean(rejected))
    return AltTestResult(
        winning_rate=omega,
        advantage_probability=float(per["rho_judge"].mean()),
        passed=omega >= 0.5,
        epsilon=epsilon,
        q=q,
        scoring=scoring,
        per_annotator=per,
        skipped=skipped,
        n_items=len(frame),
    )


def _annotator_test(
    frame: pd.DataFrame,
    rater: Hashable,
    mine: pd.Series,
    predicted: pd.Series,
    score: Any,
    epsilon: float,
) -> dict[str, Any]:
    """Steps 2-4 of :func:`alt_test` for one annotator: the winning indicators on each of
    their items, rho of the judge and of the annotator, and the one-sided t-test's p-value."""
    w_judge, w_human = [], []
    for item, label in mine.items():
        others = [v for r, v in frame.loc[item].items() if r != rater and v is not None]
        s_judge, s_human = score(predicted[item], others), score(label, others)
        w_judge.append(float(s_judge >= s_human))
        w_human.append(float(s_human >= s_judge))
    d = np.asarray(w_human) - np.asarray(w_judge)
    if np.all(d == d[0]):
        p_value = 0.0 if d[0] < epsilon else 1.0
    else:
        p_value = float(stats.ttest_1samp(d, epsilon, alternative="less").pvalue)
    return {
        "annotator": str(rater),
        "n_items": len(d),
        "rho_judge": float(np.mean(w_judge)),
        "rho_human": float(np.mean(w_human)),
        "mean_difference": float(d.mean()),
        "p_value": p_value,
    }
