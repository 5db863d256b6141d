"""Ranking agreement between two benchmarks (or test sets) over the same models.

Spearman rho and Kendall tau-b between the two score vectors (scipy), each with a percentile
bootstrap CI over models, and top-k overlap |top-k(A) & top-k(B)| / k. This is the first
analysis of "Gold vs. Translation" (paper 001: Kendall tau_b with bootstrap CI and top-5 overlap
between a native benchmark and its translated proxy) and the ranking check of Cultivar (paper
000: Spearman and Kendall tau-b between original and localised test sets).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy import stats

from judgekit.errors import JudgekitError
from judgekit.metrics.bootstrap import bootstrap_ci


@dataclass(frozen=True)
class RankingAgreement:
    """Agreement of two model rankings.

    ``spearman`` and ``kendall_tau_b`` are in [-1, 1], with scipy's two-sided p-values and
    bootstrap CIs over models; ``top_k_overlap`` is in [0, 1]. ``dropped`` lists the models
    scored in only one of the two inputs (or with a missing score), which were left out.
    """

    n_models: int
    spearman: float
    spearman_p: float
    spearman_ci: tuple[float, float] | None
    kendall_tau_b: float
    kendall_p: float
    kendall_ci: tuple[float, float] | None
    k: int
    top_k_overlap: float
    top_k_a: tuple[str, ...]
    top_k_b: tuple[str, ...]
    dropped: tuple[str, ...]
    confidence: float
    n_resamples: int
    seed: int

    def to_dict(self) -> dict:
        return asdict(self)


def _as_series(scores: Mapping[str, float] | pd.Series, name: str) -> pd.Series:
    series = pd.Series(scores, dtype=object) if not isinstance(scores, pd.Series) else scores
    if series.index.has_duplicates:
        dup = series.index[series.index.duplicated()][0]
        raise JudgekitError(f"{name}: model {dup!r} appears twice")
    try:
        return pd.to_numeric(series, errors="raise").astype(float)
    except (TypeError, ValueError) as exc:
        raise JudgekitError(f"{name}: scores must be numbers: {exc}") from None


def top_k(
    scores: Mapping[str, float] | pd.Series, k: int, *, higher_is_better: bool = True
) -> tuple[str, ...]:
    """The k best models, best first.

    Ties are broken by model name (ascending), so the result is deterministic and always has
    min(k, n) models; missing scores are never in the top k.

    Raises:
        JudgekitError: k < 1 or a non-numeric score.
    """
    if k < 1:
        raise JudgekitError(f"k must be >= 1, got {k}")
    series = _as_series(scores, "scores").dropna()
    frame = pd.DataFrame({"model": series.index.astype(str), "score": series.to_numpy()})
    frame = frame.sort_values(
        ["score", "model"], ascending=[not higher_is_better, True], kind="mergesort"
    )
    return tuple(frame["model"].head(k))


def top_k_overlap(
    a: Mapping[str, float] | pd.Series,
    b: Mapping[str, float] | pd.Series,
    k: int = 5,
    *,
    higher_is_better: bool = True,
) -> float:
    """|top-k(a) & top-k(b)| / k, in [0, 1] (paper 001: "top-5 overlap", e.g. 4/5 = 0.8).

    Only models scored in both inputs are ranked. Ties at the k-th place are broken by model
    name (see :func:`top_k`).

    Raises:
        JudgekitError: k < 1 or k larger than the number of shared models.
    """
    sa, sb = _shared(a, b)[:2]
    if k > len(sa):
        raise JudgekitError(f"k={k} exceeds the {len(sa)} models scored in both inputs")
    ta = top_k(sa, k, higher_is_better=higher_is_better)
    tb = top_k(sb, k, higher_is_better=higher_is_better)
    return len(set(ta) & set(tb)) / k


def _shared(
    a: Mapping[str, float] | pd.Series, b: Mapping[str, float] | pd.Series
) -> tuple[pd.Series, pd.Series, tuple[str, ...]]:
    sa, sb = _as_series(a, "a"), _as_series(b, "b")
    models = [m for m in sa.index if m in sb.index and not (np.isnan(sa[m]) or np.isnan(sb[m]))]
    dropped = tuple(sorted(str(m) for m in set(sa.index) | set(sb.index) if m not in models))
    return sa[models], sb[models], dropped


def _rank_stat(name: str, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.spearmanr(x, y) if name == "spearman" else stats.kendalltau(x, y, variant="b")
    return float(res.statistic), float(res.pvalue)


def ranking_agreement(
    a: Mapping[str, float] | pd.Series,
    b: Mapping[str, float] | pd.Series,
    *,
    k: int = 5,
    higher_is_better: bool = True,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> RankingAgreement:
    """Spearman, Kendall tau-b (with bootstrap CIs over models) and top-k overlap of a and b.

    Args:
        a: model -> score on the first benchmark (e.g. native).
        b: model -> score on the second benchmark (e.g. translated proxy).
        k: size of the top-k sets (clipped to the number of shared models).
        higher_is_better: direction of both scores, for top-k only (correlations are
            symmetric in it).
        n_resamples: bootstrap resamples of models (0 = no CI); a resample with constant
            scores is dropped.
        confidence: two-sided CI level in (0, 1).
        seed: bootstrap seed.

    Raises:
        JudgekitError: fewer than 3 models scored in both inputs, duplicates, non-numeric
            scores.
    """
    sa, sb, dropped = _shared(a, b)
    if len(sa) < 3:
        raise JudgekitError(f"ranking agreement needs >= 3 models scored in both, got {len(sa)}")
    x, y = sa.to_numpy(), sb.to_numpy()
    values: dict[str, tuple[float, float, tuple[float, float] | None]] = {}
    for name in ("spearman", "kendall"):
        value, p = _rank_stat(name, x, y)
        ci = None
        if n_resamples > 0:
            ci = bootstrap_ci(
                len(x),
                lambda idx, name=name: _rank_stat(name, x[idx], y[idx])[0],
                n_resamples=n_resamples,
                confidence=confidence,
                seed=seed,
            )
        values[name] = (value, p, ci)
    kk = min(k, len(sa))
    ta = top_k(sa, kk, higher_is_better=higher_is_better)
    tb = top_k(sb, kk, higher_is_better=higher_is_better)
    return RankingAgreement(
        n_models=len(sa),
        spearman=values["spearman"][0],
        spearman_p=values["spearman"][1],
        spearman_ci=values["spearman"][2],
        kendall_tau_b=values["kendall"][0],
        kendall_p=values["kendall"][1],
        kendall_ci=values["kendall"][2],
        k=kk,
        top_k_overlap=len(set(ta) & set(tb)) / kk,
        top_k_a=ta,
        top_k_b=tb,
        dropped=dropped,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )


def ranking_agreement_frame(
    frame: pd.DataFrame,
    a: str,
    b: str,
    *,
    model: str = "model",
    **kwargs,
) -> RankingAgreement:
    """:func:`ranking_agreement` on two score columns of a DataFrame with a model column.

    Raises:
        JudgekitError: a named column is absent (others as in :func:`ranking_agreement`).
    """
    missing = [c for c in (model, a, b) if c not in frame.columns]
    if missing:
        raise JudgekitError(f"columns not found: {missing}; have {list(frame.columns)}")
    indexed = frame.set_index(model)
    return ranking_agreement(indexed[a], indexed[b], **kwargs)
