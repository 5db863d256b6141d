"""Choose a judge on the select split by a declared agreement statistic."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import kendalltau
from sklearn.metrics import accuracy_score, cohen_kappa_score

STATISTICS = ("accuracy", "kappa", "ac1", "tau_b", "acc_eq")


def _ac1(judge: Sequence, human: Sequence) -> float:
    from judgekit.metrics.agreement import gwet_ac1

    frame = pd.DataFrame({"human": list(human), "judge": list(judge)}, dtype=object)
    categories = sorted(set(frame["human"]) | set(frame["judge"]), key=str)
    if len(frame) < 2 or len(categories) < 2:
        return float("nan")
    return float(gwet_ac1(frame, categories=categories).value)


def _acc_eq(judge: Sequence, human: Sequence) -> float:
    from judgekit.metrics.meta_eval import acc_eq_pairs

    n = len(judge)
    if n < 2:
        return float("nan")
    first, second = np.triu_indices(n, k=1)
    bounds = np.array([0, len(first)])
    credits, weights = acc_eq_pairs(
        np.asarray(judge, float), np.asarray(human, float), first, second, bounds, 0.0
    )
    return float(credits @ weights)


def statistic(name: str, judge: Sequence, human: Sequence) -> float:
    """Agreement of ``judge`` with ``human`` (same length, same items in the same order).

    ``accuracy`` (share equal, 0..1), ``kappa`` (Cohen 1960, -1..1, via scikit-learn) or
    ``ac1`` (Gwet 2008 AC1, -1..1, via irrCAC), ``tau_b`` (Kendall's tau-b for scores, -1..1,
    via scipy) or ``acc_eq`` (pairwise accuracy with ties, 0..1, all item pairs as one group,
    epsilon 0: Deutsch, Foster & Freitag 2023, "Ties Matter", sec. 4). Raises ValueError on an
    unknown name or empty input.
    """
    if len(judge) == 0 or len(judge) != len(human):
        raise ValueError(f"need equal non-empty sequences, got {len(judge)} and {len(human)}")
    if name == "accuracy":
        return float(accuracy_score(human, judge))
    if name == "kappa":
        return float(cohen_kappa_score(human, judge))
    if name == "ac1":
        return _ac1(judge, human)
    if name == "acc_eq":
        return _acc_eq(judge, human)
    if name == "tau_b":
        return float(kendalltau(np.asarray(judge, float), np.asarray(human, float)).statistic)
    raise ValueError(f"unknown statistic {name!r}; expected one of {', '.join(STATISTICS)}")


@dataclass(frozen=True)
class Ranking:
    """Candidates best first with their select-split figures; ``chosen`` is the first."""

    statistic: str
    figures: tuple[tuple[str, float], ...]

    @property
    def chosen(self) -> str:
        return self.figures[0][0]


def choose(
    candidates: Mapping[str, Mapping[str, object]],
    human: Mapping[str, object],
    select_ids: Sequence[str],
    stat: str = "accuracy",
) -> Ranking:
    """Rank ``candidates`` (name -> item id -> output) by ``stat`` on ``select_ids`` only.

    Ties keep the candidates' declared order. Raises KeyError if a candidate or the human labels
    lack a select item (a candidate must be judged on every select item).
    """
    gold = [human[i] for i in select_ids]
    scored = [
        (name, statistic(stat, [out[i] for i in select_ids], gold))
        for name, out in candidates.items()
    ]
    ranked = sorted(scored, key=lambda pair: -pair[1] if np.isfinite(pair[1]) else np.inf)
    return Ranking(stat, tuple(ranked))
