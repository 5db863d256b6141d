"""Agreement among judges: pairwise agreement, Kendall's W, position consistency.

* Pairwise agreement matrix: for each pair of judges, on the items both rated, percent
  agreement and Cohen's kappa (Cohen 1960; ``sklearn.metrics.cohen_kappa_score``). Paper 002
  (concept spilling, judge ablation) reports pairwise judge agreement of 84.59-92.61%.
* Kendall's W, the coefficient of concordance of m judges ranking n models, with the tie
  correction (Kendall & Babington Smith 1939; Siegel & Castellan 1988, sec. 9.4) and its
  chi-square test, chi2 = m (n - 1) W with n - 1 degrees of freedom, which equals Friedman's
  tie-corrected statistic. Paper 002 reports W = 0.9176 for 4 judges ranking 16 models.
* Position consistency of a pairwise-preference judge: the share of items where the verdict
  with the outputs in the original order equals the verdict with them swapped (LLMBar, Zeng et
  al. 2024, "positional agreement", the ``equal`` statistic), with accuracy against gold labels.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from judgekit.errors import JudgekitError

MISSING_POLICIES = ("as_label", "inconsistent", "drop")


def pairwise_agreement(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Percent agreement and Cohen's kappa for every pair of judges, on items both rated.

    Args:
        verdicts: one row per item, one column per judge, categorical labels (compared as
            text, so 1, 1.0 and "1" are the same label); None, NaN or "None" means the judge
            gave no verdict on that item.

    Returns:
        One row per unordered pair, columns ``judge_a``, ``judge_b``, ``n_items`` (items both
        rated), ``percent_agreement`` in [0, 1] and ``cohen_kappa`` in [-1, 1] (NaN when
        there is no shared item, or kappa is undefined because both judges used one label).

    Raises:
        JudgekitError: fewer than 2 judge columns.
    """
    if verdicts.shape[1] < 2:
        raise JudgekitError("pairwise agreement needs at least 2 judges (columns)")
    labels = pd.DataFrame({c: verdict_labels(verdicts[c]) for c in verdicts.columns})
    rows = []
    for a, b in itertools.combinations(verdicts.columns, 2):
        both = labels[[a, b]].dropna()
        n = len(both)
        if n == 0:
            po = kappa = float("nan")
        else:
            va, vb = both[a].to_numpy(dtype=str), both[b].to_numpy(dtype=str)
            po = float(np.mean(va == vb))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                kappa = float(cohen_kappa_score(va, vb))
        rows.append(
            {
                "judge_a": a,
                "judge_b": b,
                "n_items": n,
                "percent_agreement": po,
                "cohen_kappa": kappa,
            }
        )
    return pd.DataFrame(rows)


def agreement_matrix(pairs: pd.DataFrame, statistic: str = "cohen_kappa") -> pd.DataFrame:
    """Square judge x judge matrix of one column of :func:`pairwise_agreement`.

    The diagonal is 1.0 (a judge agrees with itself), except for ``n_items`` where it is NaN.

    Raises:
        JudgekitError: ``statistic`` is not a column of ``pairs``.
    """
    if statistic not in pairs.columns or statistic in ("judge_a", "judge_b"):
        raise JudgekitError(f"unknown statistic {statistic!r}; use a column of {list(pairs)}")
    judges = list(dict.fromkeys([*pairs["judge_a"], *pairs["judge_b"]]))
    matrix = pd.DataFrame(np.nan, index=judges, columns=judges, dtype=float)
    for row in pairs.itertuples(index=False):
        value = getattr(row, statistic)
        matrix.loc[row.judge_a, row.judge_b] = value
        matrix.loc[row.judge_b, row.judge_a] = value
    if statistic != "n_items":
        np.fill_diagonal(matrix.values, 1.0)
    return matrix


@dataclass(frozen=True)
class KendallW:
    """Kendall's coefficient of concordance and its chi-square test.

    ``w`` in [0, 1] (1 = all judges rank the models identically); ``chi2`` = m (n - 1) W on
    ``df`` = n - 1 degrees of freedom, ``p_value`` its upper tail (a large-sample
    approximation; Siegel & Castellan advise exact tables for n <= 7).
    ``tie_correction`` is sum over judges of sum over tie groups of (t^3 - t).
    ``mean_spearman`` is the average Spearman rho over judge pairs, (m W - 1) / (m - 1).
    ``mean_ranks`` maps each model to its mean rank (1 = best), the consensus ranking.
    """

    w: float
    chi2: float
    df: int
    p_value: float
    n_judges: int
    n_models: int
    tie_correction: float
    mean_spearman: float
    mean_ranks: dict[str, float]
    dropped_models: tuple[str, ...]

    def to_dict(self) -> dict:
        return asdict(self)


def kendalls_w(scores: pd.DataFrame, *, higher_is_better: bool = True) -> KendallW:
    """Kendall's W over the model rankings that each judge induces.

    Args:
        scores: judges x models table (one row per judge, one column per model) of scores;
            each judge's row is turned into ranks (average ranks for ties, 1 = best).
            Models not scored by every judge (NaN) are dropped and listed.
        higher_is_better: whether a higher score ranks a model higher.

    W = 12 S / (m^2 (n^3 - n) - m sum T), S = sum_j (R_j - m (n + 1) / 2)^2, R_j the rank sum
    of model j over the m judges, T the per-judge tie term (Siegel & Castellan 1988, 9.4).

    Raises:
        JudgekitError: fewer than 2 judges or 2 complete models, non-numeric scores, or
            every judge ties all models (W undefined).
    """
    try:
        table = scores.apply(pd.to_numeric, errors="raise").astype(float)
    except (TypeError, ValueError) as exc:
        raise JudgekitError(f"Kendall's W: scores must be numbers: {exc}") from None
    complete = table.columns[table.notna().all(axis=0)]
    dropped = tuple(str(c) for c in table.columns if c not in complete)
    table = table[complete]
    m, n = table.shape
    if m < 2 or n < 2:
        raise JudgekitError(f"Kendall's W needs >= 2 judges and >= 2 models, got {m} x {n}")
    ranks = table.rank(axis=1, method="average", ascending=not higher_is_better).to_numpy()
    rank_sums = ranks.sum(axis=0)
    s = float(((rank_sums - m * (n + 1) / 2) ** 2).sum())
    ties = 0.0
    for row in ranks:
        _, counts = np.unique(row, return_counts=True)
        ties += float((counts**3 - counts).sum())
    denominator = m**2 * (n**3 - n) - m * ties
    if denominator <= 0:
        raise JudgekitError("Kendall's W is undefined: every judge ties all models")
    w = 12 * s / denominator
    chi2 = m * (n - 1) * w
    return KendallW(
        w=w,
        chi2=chi2,
        df=n - 1,
        p_value=float(stats.chi2.sf(chi2, n - 1)),
        n_judges=m,
        n_models=n,
        tie_correction=ties,
        mean_spearman=(m * w - 1) / (m - 1),
        mean_ranks={str(c): float(r) for c, r in zip(table.columns, rank_sums / m, strict=True)},
        dropped_models=dropped,
    )


@dataclass(frozen=True)
class PositionConsistency:
    """Position consistency of a pairwise-preference judge, and its accuracy if gold is given.

    ``consistency`` = ``n_consistent / n_compared`` in [0, 1]. Accuracies are shares of all
    ``n_items`` (a missing verdict is never correct): ``accuracy_original`` (outputs in the
    original order), ``accuracy_swapped``, their mean ``accuracy_mean``, and
    ``accuracy_both`` (correct in both orders). They are None without gold labels.
    """

    n_items: int
    n_compared: int
    n_consistent: int
    consistency: float
    n_missing_original: int
    n_missing_swapped: int
    missing: str
    accuracy_original: float | None = None
    accuracy_swapped: float | None = None
    accuracy_mean: float | None = None
    accuracy_both: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def verdict_labels(values: Sequence | pd.Series | np.ndarray) -> np.ndarray:
    """Verdict labels as strings; None for missing (None, NaN, '', 'None')."""
    out = []
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out.append(None)
            continue
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        text = str(v).strip()
        out.append(None if text in ("", "None", "nan", "NaN") else text)
    return np.array(out, dtype=object)


def unswap_verdicts(
    verdicts: Sequence | pd.Series | np.ndarray, labels: tuple[str, str] = ("1", "2")
) -> np.ndarray:
    """Map verdicts given with the outputs swapped back to the original output identities.

    ``labels[0]`` and ``labels[1]`` are exchanged; any other label (a tie, a missing verdict)
    is kept. Returns an object array of strings (None for missing).
    """
    swap = {labels[0]: labels[1], labels[1]: labels[0]}
    return np.array([swap.get(v, v) for v in verdict_labels(verdicts)], dtype=object)


def position_consistency(
    original: Sequence | pd.Series | np.ndarray,
    swapped: Sequence | pd.Series | np.ndarray,
    gold: Sequence | pd.Series | np.ndarray | None = None,
    *,
    missing: str = "inconsistent",
) -> PositionConsistency:
    """Share of items whose verdict is the same with the two outputs in either order.

    Args:
        original: verdict per item with the outputs in the original order (e.g. "1" or "2",
            naming the better output).
        swapped: verdict per item with the outputs swapped, already mapped back to the
            original output identities (see :func:`unswap_verdicts`).
        gold: optional gold label per item, same label set.
        missing: how a missing verdict (None, NaN, "None") counts: ``inconsistent`` (the item
            counts as inconsistent), ``as_label`` (missing is a verdict of its own, so missing
            in both orders is consistent: LLMBar's ``equal``), or ``drop`` (the item is left
            out of the consistency share).

    Raises:
        JudgekitError: inputs of different lengths, no item, or an unknown ``missing``.
    """
    if missing not in MISSING_POLICIES:
        raise JudgekitError(f"missing must be one of {MISSING_POLICIES}, got {missing!r}")
    a, b = verdict_labels(original), verdict_labels(swapped)
    g = None if gold is None else verdict_labels(gold)
    if len(a) != len(b) or (g is not None and len(g) != len(a)):
        raise JudgekitError("original, swapped (and gold) verdicts must have equal lengths")
    if len(a) == 0:
        raise JudgekitError("position consistency needs at least one item")
    miss_a = np.array([v is None for v in a])
    miss_b = np.array([v is None for v in b])
    same = a == b
    if missing == "inconsistent":
        same &= ~miss_a & ~miss_b
        compared = len(a)
    elif missing == "drop":
        keep = ~miss_a & ~miss_b
        same &= keep
        compared = int(keep.sum())
    else:
        compared = len(a)
    n_same = int(same.sum())
    result = dict(
        n_items=len(a),
        n_compared=compared,
        n_consistent=n_same,
        consistency=n_same / compared if compared else float("nan"),
        n_missing_original=int(miss_a.sum()),
        n_missing_swapped=int(miss_b.sum()),
        missing=missing,
    )
    if g is not None:
        ok_a = (a == g) & ~miss_a
        ok_b = (b == g) & ~miss_b
        result |= dict(
            accuracy_original=float(ok_a.mean()),
            accuracy_swapped=float(ok_b.mean()),
            accuracy_mean=float((ok_a.mean() + ok_b.mean()) / 2),
            accuracy_both=float((ok_a & ok_b).mean()),
        )
    return PositionConsistency(**result)
