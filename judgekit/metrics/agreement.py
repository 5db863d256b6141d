"""Agreement among raters (humans or judges) on categorical labels, with bootstrap CIs.

Every function takes an items x raters table: a :class:`~judgekit.labels.LabelTable`, a
DataFrame (index = items, one column per rater), a 2-D numpy array or a list of rows; a missing
rating is None or NaN. Each returns an :class:`AgreementResult` (``.value``, ``.ci`` and
extras). A CI is computed only when asked for (``ci=True`` or ``n_resamples > 0``): a seeded
percentile bootstrap over items (:func:`judgekit.metrics.bootstrap.bootstrap_ci`).

Thin over the libraries: scikit-learn ``cohen_kappa_score``, statsmodels ``fleiss_kappa`` /
``aggregate_raters`` / ``cohens_kappa``, ``krippendorff.alpha`` and ``irrCAC.raw.CAC``.

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
from collections.abc import Callable, Hashable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import krippendorff
import numpy as np
import pandas as pd
from irrCAC.raw import CAC
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats import inter_rater

from judgekit.errors import JudgekitError
from judgekit.labels import LabelTable
from judgekit.metrics.bootstrap import bootstrap_ci

Level = Literal["nominal", "ordinal", "interval", "ratio"]
KappaWeights = Literal["linear", "quadratic"] | None
LEVELS = ("nominal", "ordinal", "interval", "ratio")
LabelData = LabelTable | pd.DataFrame | np.ndarray | Sequence[Sequence[Any]]


@dataclass(frozen=True)
class AgreementResult:
    """One agreement statistic.

    Attributes:
        statistic: its name in the field's words ("Fleiss' kappa", "Gwet's AC1", ...).
        value: the estimate (NaN when undefined, e.g. a chance-corrected coefficient with one
            category); kappa-type coefficients lie in [-1, 1], shares in [0, 1].
        ci: (low, high) percentile bootstrap interval over items, or None when not requested.
        n_items: items that entered the statistic (after the missing-data rule above).
        n_raters: raters (columns) in the table.
        level: level of measurement or weighting ("nominal", "linear", "interval", ...).
        confidence, n_resamples, seed: the bootstrap settings (None without a CI).
        details: statistic-specific extras (observed and chance agreement, ASE, z, method).
    """

    statistic: str
    value: float
    ci: tuple[float, float] | None
    n_items: int
    n_raters: int
    level: str = "nominal"
    confidence: float | None = None
    n_resamples: int | None = None
    seed: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (NaN kept as float NaN)."""
        out = asdict(self)
        out["ci"] = list(self.ci) if self.ci is not None else None
        return out


@dataclass(frozen=True)
class PrevalenceResult:
    """Share of all ratings in each category (raw ratings, every rater counted).

    Attributes:
        value: share of the most frequent category, in [0, 1]; category: that category.
        counts: ratings per category. per_category: the share of each category as an
            :class:`AgreementResult` (value in [0, 1], bootstrap CI over items when asked).
        n_items, n_ratings: items with at least one rating; non-missing ratings.
    """

    value: float
    category: Hashable
    counts: dict[Hashable, int]
    per_category: dict[Hashable, AgreementResult]
    n_items: int
    n_ratings: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with category names as text."""
        return {
            "statistic": "prevalence",
            "value": self.value,
            "category": str(self.category),
            "n_items": self.n_items,
            "n_ratings": self.n_ratings,
            "categories": [
                {"category": str(c), "count": self.counts[c], **r.to_dict()}
                for c, r in self.per_category.items()
            ],
        }


# -- input ---------------------------------------------------------------------------------------
def as_label_table(data: LabelData) -> LabelTable:
    """Coerce an items x raters table (LabelTable, DataFrame, 2-D array, list of rows)."""
    if isinstance(data, LabelTable):
        return data
    if isinstance(data, pd.DataFrame):
        return LabelTable(data.copy())
    if isinstance(data, np.ndarray) and data.ndim != 2:
        raise JudgekitError(f"expected an items x raters table, got shape {data.shape}")
    return LabelTable(pd.DataFrame(list(data)))


@dataclass(frozen=True)
class _Coded:
    """Labels as category indices: ``codes`` float (n_items, n_raters), NaN where missing."""

    codes: np.ndarray
    categories: list[Hashable]

    @property
    def q(self) -> int:
        return len(self.categories)

    def counts(self) -> np.ndarray:
        """(n_items, q) number of ratings of each category per item."""
        if not self.q:
            return np.zeros((len(self.codes), 0), dtype=int)
        return np.stack([(self.codes == k).sum(axis=1) for k in range(self.q)], axis=1)

    def numeric_categories(self) -> np.ndarray | None:
        """Categories as floats when all are real numbers (not bools), else None."""
        if all(
            isinstance(c, (int, float, np.number)) and not isinstance(c, bool)
            for c in self.categories
        ):
            return np.asarray(self.categories, dtype=float)
        return None


def _encode(data: LabelData, categories: Sequence[Hashable] | None = None) -> tuple[_Coded, int]:
    table = as_label_table(data).dropna_items(1)
    cats = list(categories) if categories is not None else table.categories
    index = {c: k for k, c in enumerate(cats)}
    values = table.values
    codes = np.full(values.shape, np.nan)
    for (i, j), label in np.ndenumerate(values):
        if label is None:
            continue
        if label not in index:
            raise JudgekitError(f"label '{label}' is not among the categories {cats}")
        codes[i, j] = index[label]
    return _Coded(codes, cats), table.n_raters


@dataclass(frozen=True)
class _Boot:
    """Bootstrap settings; ``n`` = 0 means no CI."""

    n: int
    confidence: float
    seed: int


def _boot(ci: bool, n_resamples: int | None, confidence: float, seed: int) -> _Boot:
    """A CI is computed when ``ci`` is True (1000 resamples unless given) or n_resamples > 0."""
    if n_resamples is not None and n_resamples < 0:
        raise JudgekitError(f"n_resamples must be >= 0, got {n_resamples}")
    return _Boot(n_resamples or (1000 if ci else 0), confidence, seed)


def _result(
    statistic: str,
    fn: Callable[[np.ndarray], float],
    n_items: int,
    n_raters: int,
    boot: _Boot,
    level: str = "nominal",
    details: dict[str, Any] | None = None,
) -> AgreementResult:
    """Evaluate ``fn`` on all items (an index array) and, if asked, bootstrap it over items.

    A resample (or data set) where the statistic is undefined (e.g. no item with 2 ratings,
    a division by zero inside a library) counts as NaN, which the bootstrap drops.
    """

    def safe(idx: np.ndarray) -> float:
        try:
            return float(fn(idx))
        except (ZeroDivisionError, FloatingPointError, ValueError):
            return float("nan")

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        value = safe(np.arange(n_items)) if n_items else float("nan")
        interval = None
        if boot.n:
            interval = bootstrap_ci(
                n_items, safe, n_resamples=boot.n, confidence=boot.confidence, seed=boot.seed
            )
    on = bool(boot.n)
    return AgreementResult(
        statistic, value, interval, n_items, n_raters, level,
        boot.confidence if on else None, boot.n or None, boot.seed if on else None,
        details or {},
    )  # fmt: skip


# -- simple agreement ------------------------------------------------------------------------------
def _item_agreement(counts: np.ndarray) -> np.ndarray:
    r = counts.sum(axis=1).astype(float)
    with np.errstate(all="ignore"):
        p = (counts * (counts - 1)).sum(axis=1) / (r * (r - 1))
    return np.where(r >= 2, p, np.nan)


def item_agreement(data: LabelData) -> pd.Series:
    """Per-item observed agreement P_i: the share of agreeing rater pairs, in [0, 1].

    P_i = sum_k n_ik (n_ik - 1) / (r_i (r_i - 1)), with n_ik ratings of category k and r_i
    ratings of item i (Fleiss 1971, eq. 2). NaN for items with fewer than 2 ratings.
    Returns a float Series indexed by item.
    """
    table = as_label_table(data)
    coded, _ = _encode(table, table.categories)
    rated = table.ratings_per_item() >= 1
    out = pd.Series(np.nan, index=table.frame.index, dtype=float)
    out[rated.to_numpy()] = _item_agreement(coded.counts())
    return out


def percent_agreement(
    data: LabelData,
    *,
    ci: bool = False,
    n_resamples: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> AgreementResult:
    """Observed (percent) agreement in [0, 1]: mean pairwise agreement P_i over items.

    With two raters this is the share of items on which they agree. Items with fewer than 2
    ratings are left out. Source: Fleiss (1971) P-bar; Gwet (2014) ch. 2.
    """
    coded, n_raters = _encode(data)
    counts = coded.counts()
    counts = counts[counts.sum(axis=1) >= 2]
    p_item = _item_agreement(counts)
    return _result(
        "percent agreement",
        lambda idx: float(p_item[idx].mean()),
        len(counts),
        n_raters,
        _boot(ci, n_resamples, confidence, seed),
    )


def unanimous_share(
    data: LabelData,
    *,
    ci: bool = False,
    n_resamples: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> AgreementResult:
    """Share of items, in [0, 1], on which every present rating is the same category.

    Items with fewer than 2 ratings are left out (paper 001 reports "unanimous 3-of-3").
    """
    coded, n_raters = _encode(data)
    counts = coded.counts()
    counts = counts[counts.sum(axis=1) >= 2]
    unanimous = (counts.max(axis=1, initial=0) == counts.sum(axis=1)).astype(float)
    return _result(
        "unanimous share",
        lambda idx: float(unanimous[idx].mean()),
        len(counts),
        n_raters,
        _boot(ci, n_resamples, confidence, seed),
    )


def prevalence(
    data: LabelData,
    *,
    ci: bool = False,
    n_resamples: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> PrevalenceResult:
    """Share of all (raw) ratings in each category, e.g. "277/300 raw ratings are CS".

    Report it next to kappa: with a skewed label kappa collapses while AC1 does not (paper 001,
    Danish; Feinstein & Cicchetti 1990, "High agreement but low kappa").
    """
    coded, n_raters = _encode(data)
    counts = coded.counts()
    totals = counts.sum(axis=0)
    boot = _boot(ci, n_resamples, confidence, seed)
    per_category = {}
    for k, category in enumerate(coded.categories):

        def share(idx: np.ndarray, k: int = k) -> float:
            return float(counts[idx, k].sum() / counts[idx].sum())

        name = f"prevalence of {category}"
        per_category[category] = _result(name, share, len(counts), n_raters, boot)
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
    data: LabelData,
    *,
    weights: KappaWeights = None,
    raters: tuple[Hashable, Hashable] | None = None,
    ci: bool = False,
    n_resamples: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> AgreementResult:
    """Cohen's kappa of two raters, in [-1, 1] (Cohen 1960; weighted: Cohen 1968).

    Args:
        data: a table with exactly two raters, or pick two with ``raters``.
        weights: None (nominal), "linear" (Cicchetti-Allison) or "quadratic" (Fleiss-Cohen);
            the distance between categories is their rank distance in sorted order, as in
            scikit-learn's ``cohen_kappa_score``.

    Items missing either rating are dropped. ``details`` holds p_o, p_e and the asymptotic
    standard error, its value under H0, z and the asymptotic 95% CI from statsmodels
    ``cohens_kappa`` (SAS PROC FREQ formulas).

    Raises:
        JudgekitError: not exactly two raters.
    """
    table = as_label_table(data)
    if raters is not None:
        table = table.select(list(raters))
    if table.n_raters != 2:
        raise JudgekitError(
            f"Cohen's kappa needs exactly two raters, got {table.n_raters}: "
            f"{table.raters} (choose two with raters=(a, b))"
        )
    table = table.dropna_items(2)
    coded, _ = _encode(table)
    a, b = coded.codes[:, 0].astype(int), coded.codes[:, 1].astype(int)
    labels = list(range(coded.q))

    def kappa(idx: np.ndarray) -> float:
        return float(cohen_kappa_score(a[idx], b[idx], labels=labels, weights=weights))

    details: dict[str, Any] = {"raters": [str(r) for r in table.raters]}
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
    return _result(
        name,
        kappa,
        len(a),
        2,
        _boot(ci, n_resamples, confidence, seed),
        level=weights or "nominal",
        details=details,
    )


def _fleiss_null_se(counts: np.ndarray) -> float:
    """SE of Fleiss' kappa under H0 (Fleiss, Nee & Landis 1979), complete data only."""
    n_items, m = counts.shape[0], counts[0].sum()
    p = counts.sum(axis=0) / (n_items * m)
    pq = p * (1 - p)
    var = 2 / (pq.sum() ** 2 * n_items * m * (m - 1)) * (pq.sum() ** 2 - (pq * (1 - 2 * p)).sum())
    return float(np.sqrt(var))


def _cac(coded: _Coded, idx: np.ndarray, weights: str = "identity") -> CAC:
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
    data: LabelData,
    *,
    ci: bool = False,
    n_resamples: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> AgreementResult:
    """Fleiss' kappa for any number of raters, in [-1, 1] (Fleiss 1971, Psychol. Bull. 76:378).

    Complete data (the same number m >= 2 of ratings per item): statsmodels ``fleiss_kappa``
    on ``aggregate_raters`` counts; ``details`` adds the SE under H0 and z (Fleiss, Nee &
    Landis 1979, as R ``irr::kappam.fleiss``). Unequal numbers of ratings per item: Gwet's
    generalisation (irrCAC ``CAC.fleiss``), see the module docstring. NaN with one category.
    """
    coded, n_raters = _encode(data)
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
    result = _result(
        "Fleiss' kappa",
        kappa if coded.q >= 2 else (lambda idx: float("nan")),
        len(counts),
        n_raters,
        _boot(ci, n_resamples, confidence, seed),
        details=details,
    )
    if coded.q >= 2 and (r >= 2).any():
        p_item = _item_agreement(counts)
        p_cat = (counts / np.maximum(r, 1)[:, None]).mean(axis=0)
        details["p_o"] = float(np.nanmean(p_item))
        details["p_e"] = float((p_cat**2).sum())
        if complete:
            se0 = _fleiss_null_se(counts)
            details.update(se_h0=se0, z=result.value / se0)
    return result


def gwet_ac1(
    data: LabelData,
    *,
    weights: str | None = None,
    ci: bool = False,
    n_resamples: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> AgreementResult:
    """Gwet's AC1 (unweighted) or AC2 (weighted), in [-1, 1], via irrCAC ``CAC.gwet``.

    AC1 = (p_a - p_e) / (1 - p_e) with p_e = sum_k pi_k (1 - pi_k) / (q - 1) (Gwet 2008,
    Br. J. Math. Stat. Psychol. 61:29-48); robust to skewed prevalence where kappa collapses.
    ``weights``: None or any irrCAC weight name ("linear", "quadratic", "ordinal", ...); with
    numeric categories the weights use their values, otherwise their rank in sorted order.
    Handles missing ratings (Gwet 2014, ch. 2). NaN with one category.
    """
    coded, n_raters = _encode(data)
    name = "identity" if weights is None else weights

    def ac(idx: np.ndarray) -> float:
        return float(_cac(coded, idx, name).gwet()["est"]["coefficient_value"])

    details: dict[str, Any] = {}
    if coded.q >= 2 and (coded.counts().sum(axis=1) >= 2).any():
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            est = _cac(coded, np.arange(len(coded.codes)), name).gwet()["est"]
        details = {"p_a": float(est["pa"]), "p_e": float(est["pe"]), "se": float(est["se"])}
    return _result(
        "Gwet's AC1" if weights is None else f"Gwet's AC2 ({weights} weights)",
        ac if coded.q >= 2 else (lambda idx: float("nan")),
        len(coded.codes),
        n_raters,
        _boot(ci, n_resamples, confidence, seed),
        level=weights or "nominal",
        details=details,
    )


def _alpha_replicate(counts: np.ndarray, domain: np.ndarray, level: str, idx: np.ndarray) -> float:
    """Krippendorff's alpha of a bootstrap resample, from the coincidence matrix.

    Same quantities as ``krippendorff.alpha`` (Krippendorff 2011, eqs. for o_ck, e_ck and the
    four difference functions), in matrix form: the package builds an (items, V, V) array per
    call, which takes seconds for a 0-100 scale. Checked against the package in the tests.
    """
    weights = np.bincount(idx, minlength=len(counts)) / (counts.sum(axis=1) - 1)
    weighted = counts * weights[:, None]
    o = weighted.T @ counts - np.diag(weighted.sum(axis=0))
    n_v = o.sum(axis=0)
    e = (np.outer(n_v, n_v) - np.diag(n_v)) / (n_v.sum() - 1)
    v1, v2 = np.meshgrid(domain, domain, indexing="ij")
    if level == "nominal":
        delta = 1.0 - np.eye(len(domain))
    elif level == "interval":
        delta = (v1 - v2) ** 2
    elif level == "ratio":
        total = v1 + v2
        delta = np.divide(v1 - v2, total, out=np.zeros_like(total), where=total != 0) ** 2
    else:  # ordinal: (sum of n_g for g between c and k, minus (n_c + n_k) / 2) squared
        cum = np.concatenate([[0.0], np.cumsum(n_v)])
        i1, i2 = np.meshgrid(np.arange(len(domain)), np.arange(len(domain)), indexing="ij")
        lo, hi = np.minimum(i1, i2), np.maximum(i1, i2)
        delta = (cum[hi + 1] - cum[lo] - (n_v[i1] + n_v[i2]) / 2) ** 2
    with np.errstate(all="ignore"):
        return float(1 - (o * delta).sum() / (e * delta).sum())


def krippendorff_alpha(
    data: LabelData,
    *,
    level: Level = "nominal",
    ci: bool = False,
    n_resamples: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> AgreementResult:
    """Krippendorff's alpha, at most 1 (Krippendorff 2011), via ``krippendorff.alpha``.

    ``level`` is the level of measurement ("nominal", "ordinal", "interval", "ratio") and is
    stated in the result. Ordinal uses the sorted order of the categories; interval and ratio
    need numeric labels. The package is given per-item value counts, so units with fewer than
    2 values drop out as in the reference computation. Bootstrap replicates use the same
    formulas in matrix form (:func:`_alpha_replicate`), which is orders of magnitude faster.

    Raises:
        JudgekitError: unknown level, or a non-numeric label at the interval or ratio level.
    """
    if level not in LEVELS:
        raise JudgekitError(f"unknown level of measurement '{level}' (use {', '.join(LEVELS)})")
    coded, n_raters = _encode(data)
    numeric = coded.numeric_categories()
    if level in ("interval", "ratio") and numeric is None:
        raise JudgekitError(
            f"Krippendorff's alpha at the {level} level needs numeric labels, "
            f"got {coded.categories[:5]}"
        )
    domain = numeric if numeric is not None and level != "nominal" else np.arange(coded.q)
    counts = coded.counts()
    counts = counts[counts.sum(axis=1) >= 2]

    def alpha(idx: np.ndarray) -> float:
        if len(idx) == len(counts) and np.array_equal(idx, np.arange(len(counts))):
            return float(
                krippendorff.alpha(
                    value_counts=counts, value_domain=domain, level_of_measurement=level
                )
            )
        return _alpha_replicate(counts, domain, level, idx)

    return _result(
        "Krippendorff's alpha",
        alpha if coded.q >= 2 else (lambda idx: float("nan")),
        len(counts),
        n_raters,
        _boot(ci, n_resamples, confidence, seed),
        level=level,
    )
