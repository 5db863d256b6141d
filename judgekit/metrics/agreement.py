"""Agreement among raters (humans or judges) on categorical labels, with bootstrap CIs.

Every function takes an items x raters table: a :class:`~judgekit.labels.table.LabelTable`, a
DataFrame (index = items, one column per rater), a 2-D numpy array or a list of rows; a missing
rating is None or NaN; or that table encoded once
(:class:`~judgekit.metrics.label_codes.CodedLabels` from :func:`~judgekit.metrics.label_codes.
encode`), so that several coefficients compute on one encoding without reading the labels again
(:func:`judgekit.metrics.agreement_all.agreement_statistics`). Each returns an
:class:`AgreementResult` (``.value``, ``.ci`` and extras). A CI is computed only when asked for
(``ci=True`` or ``n_resamples > 0``): a seeded percentile bootstrap over items
(:func:`judgekit.metrics.bootstrap.bootstrap_ci`).

Thin over the libraries: scikit-learn ``cohen_kappa_score``, statsmodels ``fleiss_kappa`` /
``aggregate_raters`` / ``cohens_kappa`` and ``irrCAC.raw.CAC``; Krippendorff's alpha lives in
:mod:`judgekit.metrics.krippendorff_alpha` (``krippendorff.alpha``) and is importable from here.
Result types and the bootstrap path are in :mod:`judgekit.metrics.agreement_results`.

Every statistic takes ``categories``: the category set (and order) of the scale. By default it
is the set of labels present in the table, which loses a category nobody used: with all
ratings ``1`` on a {1, 2} scale, Gwet's AC1 is 1.0 (p_a = 1, p_e = 0, Gwet 2008) only when the
set is given. A label outside the set is an error. Where a statistic is undefined its value is
NaN and ``note`` says why: "no variation" (every rating one category: kappa, Fleiss' kappa and
alpha divide 0 by 0), "one item" (irrCAC's AC1 needs two), or no item with 2 ratings.

Missing ratings, per statistic:

* percent agreement, unanimous share: items with at least 2 ratings;
* Cohen's kappa: items rated by both raters (pairwise deletion);
* Fleiss' kappa: complete data (every item has the same number m >= 2 of ratings) uses
  statsmodels (Fleiss 1971); otherwise Gwet's generalisation for missing ratings (Gwet 2014,
  *Handbook of Inter-Rater Reliability*, 4th ed., ch. 2; irrCAC ``CAC.fleiss``): observed
  agreement averaged over items with >= 2 ratings, category shares averaged over items with
  >= 1 rating. Both agree exactly on complete data;
* Gwet's AC1/AC2: irrCAC ``CAC.gwet`` (Gwet 2008, Br. J. Math. Stat. Psychol. 61:29-48), same
  missing-data rule as Fleiss' generalisation;
* Krippendorff's alpha: units with fewer than 2 values are unpairable and drop out
  (Krippendorff 2011, *Computing Krippendorff's Alpha-Reliability*).
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from irrCAC.raw import CAC
from statsmodels.stats import inter_rater

from judgekit.labels.table import LabelData, as_label_table
from judgekit.metrics.agreement_results import (
    AgreementResult,
    PrevalenceResult,
    boot_settings,
    degenerate,
    evaluate,
)
from judgekit.metrics.krippendorff_alpha import krippendorff_alpha
from judgekit.metrics.label_codes import CodedLabels, Ratings, encode, two_raters

__all__ = [
    "cohen_kappa",
    "fleiss_kappa",
    "gwet_ac1",
    "item_agreement",
    "krippendorff_alpha",
    "percent_agreement",
    "prevalence",
    "unanimous_share",
]

KappaWeights = Literal["linear", "quadratic"] | None
Categories = Sequence[Hashable] | None
_AC1_ONE_CATEGORY = (
    "no variation: one category seen; AC1's chance agreement needs the category set "
    "(categories=, --categories)"
)


# -- simple agreement ------------------------------------------------------------------------------
def _item_agreement(counts: np.ndarray) -> np.ndarray:
    r = counts.sum(axis=1).astype(float)
    with np.errstate(all="ignore"):
        p = (counts * (counts - 1)).sum(axis=1) / (r * (r - 1))
    return np.where(r >= 2, p, np.nan)


def item_agreement(data: LabelData, *, categories: Categories = None) -> pd.Series:
    """Per-item observed agreement P_i: the share of agreeing rater pairs, in [0, 1].

    P_i = sum_k n_ik (n_ik - 1) / (r_i (r_i - 1)), with n_ik ratings of category k and r_i
    ratings of item i (Fleiss 1971, eq. 2). NaN for items with fewer than 2 ratings.
    Returns a float Series indexed by item.
    """
    table = as_label_table(data)
    coded, _ = encode(table, table.categories if categories is None else categories)
    rated = table.ratings_per_item() >= 1
    out = pd.Series(np.nan, index=table.frame.index, dtype=float)
    out[rated.to_numpy()] = _item_agreement(coded.counts())
    return out


def percent_agreement(
    data: Ratings,
    *,
    categories: Categories = None,
    ci: bool = False,
    n_resamples: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> AgreementResult:
    """Observed (percent) agreement in [0, 1]: mean pairwise agreement P_i over items.

    With two raters this is the share of items on which they agree. Items with fewer than 2
    ratings are left out. Source: Fleiss (1971) P-bar; Gwet (2014) ch. 2.
    """
    coded, n_raters = encode(data, categories)
    counts = coded.counts()
    counts = counts[counts.sum(axis=1) >= 2]
    p_item = _item_agreement(counts)
    return evaluate(
        "percent agreement",
        lambda idx: float(p_item[idx].mean()),
        len(counts),
        n_raters,
        boot_settings(ci, n_resamples, confidence, seed),
    )


def unanimous_share(
    data: Ratings,
    *,
    categories: Categories = None,
    ci: bool = False,
    n_resamples: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> AgreementResult:
    """Share of items, in [0, 1], on which every present rating is the same category.

    Items with fewer than 2 ratings are left out (paper 001 reports "unanimous 3-of-3").
    """
    coded, n_raters = encode(data, categories)
    counts = coded.counts()
    counts = counts[counts.sum(axis=1) >= 2]
    unanimous = (counts.max(axis=1, initial=0) == counts.sum(axis=1)).astype(float)
    return evaluate(
        "unanimous share",
        lambda idx: float(unanimous[idx].mean()),
        len(counts),
        n_raters,
        boot_settings(ci, n_resamples, confidence, seed),
    )


def prevalence(
    data: Ratings,
    *,
    categories: Categories = None,
    ci: bool = False,
    n_resamples: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> PrevalenceResult:
    """Share of all (raw) ratings in each category, e.g. "277/300 raw ratings are CS".

    Report it next to kappa: with a skewed label kappa collapses while AC1 does not (paper 001,
    Danish; Feinstein & Cicchetti 1990, "High agreement but low kappa"). With ``categories``,
    a category nobody used is listed with count 0.
    """
    coded, n_raters = encode(data, categories)
    counts = coded.counts()
    totals = counts.sum(axis=0)
    boot = boot_settings(ci, n_resamples, confidence, seed)
    per_category = {}
    for k, category in enumerate(coded.categories):

        def share(idx: np.ndarray, k: int = k) -> float:
            return float(counts[idx, k].sum() / counts[idx].sum())

        name = f"prevalence of {category}"
        per_category[category] = evaluate(name, share, len(counts), n_raters, boot)
    top = coded.categories[int(np.argmax(totals))] if coded.q else None
    return PrevalenceResult(
        value=per_category[top].value if coded.q else float("nan"),
        category=top,
        counts={c: int(totals[k]) for k, c in enumerate(coded.categories)},
        per_category=per_category,
        n_items=len(counts),
        n_ratings=int(totals.sum()),
    )


# -- chance-corrected coefficients -------------------------------------------------------------
def cohen_kappa(
    data: Ratings,
    *,
    weights: KappaWeights = None,
    raters: tuple[Hashable, Hashable] | None = None,
    categories: Categories = None,
    ci: bool = False,
    n_resamples: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> AgreementResult:
    """Cohen's kappa of two raters, in [-1, 1] (Cohen 1960; weighted: Cohen 1968).

    Args:
        data: a table with exactly two raters, or pick two with ``raters``.
        weights: None (nominal), "linear" (Cicchetti-Allison) or "quadratic" (Fleiss-Cohen);
            the distance between categories is their rank distance in the declared order
            (numbers: by value), as in scikit-learn's ``cohen_kappa_score``; text labels
            need ``categories`` (:func:`judgekit.metrics.label_codes.encode`).
        categories: the category set and order (module docstring); NaN with ``note`` "no
            variation" when every rating is the same category (p_e = 1).

    Items missing either rating are dropped. ``details`` holds p_o, p_e and the asymptotic
    standard error, its value under H0, z and the asymptotic 95% CI from statsmodels
    ``cohens_kappa`` (SAS PROC FREQ formulas).

    Raises:
        JudgekitError: not exactly two raters; weights with text labels and no ``categories``.
    """
    coded = two_raters(data, raters, "Cohen's kappa")
    from sklearn.metrics import cohen_kappa_score  # here: scikit-learn takes ~1 s to import

    order = None if weights is None else f"Cohen's kappa with {weights} weights"
    coded, _ = encode(coded, categories, order_for=order)
    a, b = coded.codes[:, 0].astype(int), coded.codes[:, 1].astype(int)
    labels = list(range(coded.q))

    def kappa(idx: np.ndarray) -> float:
        return float(cohen_kappa_score(a[idx], b[idx], labels=labels, weights=weights))

    details: dict[str, Any] = {"raters": [str(r) for r in coded.raters]}
    if coded.q >= 2 and len(a):
        cells = np.zeros((coded.q, coded.q))
        np.add.at(cells, (a, b), 1)
        details["p_o"] = float(np.trace(cells) / cells.sum())
        details["p_e"] = float(cells.sum(1) @ cells.sum(0) / cells.sum() ** 2)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            res = inter_rater.cohens_kappa(cells, wt=weights)
        details.update(
            ase=float(res.std_kappa),
            ase_h0=float(res.std_kappa0),
            z=float(res.z_value),
            asymptotic_ci=[float(res.kappa_low), float(res.kappa_upp)],
        )
    name = "Cohen's kappa" if weights is None else f"Cohen's kappa ({weights} weights)"
    return evaluate(
        name,
        kappa,
        len(a),
        2,
        boot_settings(ci, n_resamples, confidence, seed),
        level=weights or "nominal",
        details=details,
        undefined=degenerate(coded.counts()),
    )


def _fleiss_null_se(counts: np.ndarray) -> float:
    """SE of Fleiss' kappa under H0 (Fleiss, Nee & Landis 1979), complete data only."""
    n_items, m = counts.shape[0], counts[0].sum()
    p = counts.sum(axis=0) / (n_items * m)
    pq = p * (1 - p)
    var = 2 / (pq.sum() ** 2 * n_items * m * (m - 1)) * (pq.sum() ** 2 - (pq * (1 - 2 * p)).sum())
    return float(np.sqrt(var))


def _cac(coded: CodedLabels, idx: np.ndarray, weights: str = "identity") -> CAC:
    numeric = coded.numeric_categories()
    values = coded.codes[idx]
    cats: list[float] = list(range(coded.q))
    if numeric is not None and weights != "identity":
        values = np.where(np.isnan(values), np.nan, numeric[np.nan_to_num(values).astype(int)])
        cats = list(numeric)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CAC(pd.DataFrame(values), weights=weights, categories=cats, digits=15)


def fleiss_kappa(
    data: Ratings,
    *,
    categories: Categories = None,
    ci: bool = False,
    n_resamples: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> AgreementResult:
    """Fleiss' kappa for any number of raters, in [-1, 1] (Fleiss 1971, Psychol. Bull. 76:378).

    Complete data (the same number m >= 2 of ratings per item): statsmodels ``fleiss_kappa``
    on ``aggregate_raters`` counts; ``details`` adds the SE under H0 and z (Fleiss, Nee &
    Landis 1979, as R ``irr::kappam.fleiss``). Unequal numbers of ratings per item: Gwet's
    generalisation (irrCAC ``CAC.fleiss``), see the module docstring. NaN when every rating is
    the same category (p_e = 1: "no variation"), whatever the category set.
    """
    coded, n_raters = encode(data, categories)
    counts = coded.counts()
    r = counts.sum(axis=1)
    complete = len(r) > 0 and r.min() == r.max() >= 2
    details: dict[str, Any] = {}
    if complete:

        def kappa(idx: np.ndarray) -> float:
            return float(inter_rater.fleiss_kappa(counts[idx], method="fleiss"))

        details["method"] = "Fleiss 1971, complete data (statsmodels)"
    else:

        def kappa(idx: np.ndarray) -> float:
            return float(_cac(coded, idx).fleiss()["est"]["coefficient_value"])

        details["method"] = "Gwet 2014 generalisation for missing ratings (irrCAC)"
    result = evaluate(
        "Fleiss' kappa",
        kappa if coded.q >= 2 else (lambda idx: float("nan")),
        len(counts),
        n_raters,
        boot_settings(ci, n_resamples, confidence, seed),
        details=details,
        undefined=degenerate(counts),
    )
    if coded.q >= 2 and (r >= 2).any():
        p_item = _item_agreement(counts)
        p_cat = (counts / np.maximum(r, 1)[:, None]).mean(axis=0)
        details["p_o"] = float(np.nanmean(p_item))
        details["p_e"] = float((p_cat**2).sum())
        if complete and result.note is None:
            with np.errstate(all="ignore"):
                se0 = _fleiss_null_se(counts)
            details.update(se_h0=se0, z=result.value / se0 if se0 else float("nan"))
    return result


def gwet_ac1(
    data: Ratings,
    *,
    weights: str | None = None,
    categories: Categories = None,
    ci: bool = False,
    n_resamples: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> AgreementResult:
    """Gwet's AC1 (unweighted) or AC2 (weighted), in [-1, 1], via irrCAC ``CAC.gwet``.

    AC1 = (p_a - p_e) / (1 - p_e) with p_e = sum_k pi_k (1 - pi_k) / (q - 1) (Gwet 2008,
    Br. J. Math. Stat. Psychol. 61:29-48); robust to skewed prevalence where kappa collapses.
    ``weights``: None or any irrCAC weight name ("linear", "quadratic", "ordinal", ...); with
    numeric categories the weights use their values, otherwise their rank in the declared
    ``categories`` order (text labels need it: :func:`judgekit.metrics.label_codes.encode`).
    Handles missing ratings (Gwet 2014, ch. 2). With ``categories`` of q >= 2 a table where
    every rating is the same category is 1.0 (p_a = 1, p_e = 0); with one category known
    (the default when only one is used) NaN. One item: NaN (irrCAC's variance divides by n - 1).
    """
    order = None if weights is None else f"Gwet's AC2 with {weights} weights"
    coded, n_raters = encode(data, categories, order_for=order)
    name = "identity" if weights is None else weights

    def ac(idx: np.ndarray) -> float:
        return float(_cac(coded, idx, name).gwet()["est"]["coefficient_value"])

    details: dict[str, Any] = {}
    counts = coded.counts()
    if coded.q >= 2 and (counts.sum(axis=1) >= 2).any():
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                est = _cac(coded, np.arange(len(coded.codes)), name).gwet()["est"]
            details = {"p_a": float(est["pa"]), "p_e": float(est["pe"]), "se": float(est["se"])}
        except (ZeroDivisionError, FloatingPointError, ValueError):
            details = {}  # the estimate below fails the same way and says why
    undefined = degenerate(counts, chance_corrected=False)
    if undefined is None and coded.q < 2:
        undefined = _AC1_ONE_CATEGORY
    return evaluate(
        "Gwet's AC1" if weights is None else f"Gwet's AC2 ({weights} weights)",
        ac if coded.q >= 2 else (lambda idx: float("nan")),
        len(coded.codes),
        n_raters,
        boot_settings(ci, n_resamples, confidence, seed),
        level=weights or "nominal",
        details=details,
        undefined=undefined,
    )
