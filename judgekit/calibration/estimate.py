"""Prediction-powered estimates: a benchmark figure from a judge on every item and humans on a
random subset, with a valid confidence interval.

Methods (all from ``ppi_py``, the reference implementation of the papers):

* ``classical``: the human mean on the labelled items, CLT interval (``classical_mean_ci``);
* ``judge_only``: the judge's mean over every item; biased by the judge's errors, so no CI;
* ``ppi``: prediction-powered inference (Angelopoulos et al., Science 2023, Sec. 2): the judge's
  mean on the unlabelled items plus the mean human-minus-judge correction on the labelled ones
  (``ppi_mean_ci`` with ``lam=1``);
* ``ppi++``: the power-tuned estimate (Angelopoulos, Duchi & Zrnic 2023, arXiv 2311.01453,
  Sec. 2.2; Boyeau et al. 2024, arXiv 2403.07008): ``lam`` in [0, 1] minimises the variance, so
  the interval is never much wider than the classical one and is the classical one when the
  judge is uninformative (``lam = 0``; a constant judge gets ``lam = 0`` outright).

The labelled items are the sample; the unlabelled items are those the judge labelled and the
humans did not (the two sets are disjoint, as the papers require). The estimand is the mean of
the human value over the population the items are drawn from; the CIs hold when the labelled
items are a simple random sample of the judged items (docs/estimates.md). ``effective_n`` is the
number of human labels the classical interval would need for the same width,
``n_labelled * (classical width / width)^2``.

The per-item values come from :mod:`judgekit.calibration.estimate_inputs`;
:mod:`judgekit.calibration.estimate_plan` says how many labels a CI width needs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from judgekit.errors import InputError, JudgekitError
from judgekit.metrics.common_items import tied_ranks
from judgekit.signature import Signature

METHODS = ("classical", "judge_only", "ppi", "ppi++")
ALL = "all"
MISSING_FACET = "<missing>"


@dataclass(frozen=True)
class Estimate:
    """One estimate of the target's mean for one facet value and one method.

    Attributes:
        facet: the facet value (``"all"`` for every item).
        method: ``classical``, ``judge_only``, ``ppi`` or ``ppi++``.
        estimate: the point estimate, in the target's unit (a share in [0, 1], an MQM mean).
        ci_low, ci_high: the (1 - alpha) interval; None for ``judge_only`` (biased, no CI
            claimed) and where fewer than 2 items are labelled.
        n_labelled: items of the facet with a human label (and a judge label).
        n_unlabelled: items of the facet with a judge label only.
        effective_n: human labels the classical interval would need for this width (None for
            ``judge_only``, or without a CI).
    """

    facet: str
    method: str
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    n_labelled: int
    n_unlabelled: int
    effective_n: float | None

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` row: exactly the attributes above."""
        return asdict(self)

    @property
    def width(self) -> float | None:
        """``ci_high - ci_low``, or None without a CI."""
        if self.ci_low is None or self.ci_high is None:
            return None
        return self.ci_high - self.ci_low


def _scalar(value: Any) -> float:
    return float(np.ravel(value)[0])


def split(judge: pd.Series, human: pd.Series, human_path: str | None = None) -> pd.DataFrame:
    """Every judged item with its judge value and, where labelled, its human value.

    Returns:
        DataFrame indexed by item (text) with columns ``judge`` (float) and ``human`` (float,
        NaN where the humans did not label the item).

    Raises:
        InputError: an item labelled by humans but not judged (the estimate's population is the
            judged items; a human label outside it cannot be used and is never dropped silently).
    """
    judge = judge.copy()
    judge.index = judge.index.astype(str)
    human = human.copy()
    human.index = human.index.astype(str)
    outside = human.index.difference(judge.index)
    if len(outside):
        shown = ", ".join(f"'{i}'" for i in list(outside)[:5])
        raise InputError(
            human_path,
            f"{len(outside)} item(s) labelled by humans but not judged ({shown}"
            f"{', ...' if len(outside) > 5 else ''}): the judge must label every item of the "
            "population (re-run it on them, or leave them out of the human file)",
        )
    return pd.DataFrame({"judge": judge, "human": human.reindex(judge.index)})


def estimate_mean(
    y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray, *, alpha: float = 0.05,
    facet: str = ALL,
) -> list[Estimate]:  # fmt: skip
    """The four estimates of one mean (module docstring), in :data:`METHODS` order.

    Args:
        y: human values on the labelled items, shape (n,).
        yhat: judge values on the same items, shape (n,).
        yhat_unlabelled: judge values on the unlabelled items, shape (N,).
        alpha: error level; the CIs target coverage 1 - alpha, in (0, 1).

    With n < 2 no CI is given; with N = 0 (every item labelled) PPI and PPI++ are the classical
    estimate (there is nothing to predict).
    """
    from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

    if not 0 < alpha < 1:
        raise JudgekitError(f"alpha must be in (0, 1), got {alpha}")
    y, yhat = np.asarray(y, float), np.asarray(yhat, float)
    yhat_u = np.asarray(yhat_unlabelled, float)
    n, big_n = len(y), len(yhat_u)
    everything = np.concatenate([yhat, yhat_u])
    judge_mean = float(everything.mean()) if len(everything) else None
    judge_only = Estimate(facet, "judge_only", judge_mean, None, None, n, big_n, None)
    if n < 2:  # no CI from fewer than 2 labels
        point = float(y.mean()) if n else None
        rest = [Estimate(facet, m, point if big_n == 0 else None, None, None, n, big_n, None)
                for m in ("ppi", "ppi++")]  # fmt: skip
        return [Estimate(facet, "classical", point, None, None, n, big_n, None), judge_only, *rest]
    mean = float(y.mean())
    low, high = (_scalar(v) for v in classical_mean_ci(y, alpha=alpha))
    classical = Estimate(facet, "classical", mean, low, high, n, big_n, float(n))
    rows = [classical, judge_only]
    for method in ("ppi", "ppi++"):
        if big_n == 0:
            rows.append(Estimate(facet, method, mean, low, high, n, big_n, float(n)))
            continue
        lam = 1.0 if method == "ppi" else (0.0 if np.ptp(everything) == 0 else None)
        point = _scalar(ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam))
        lo, hi = (_scalar(v) for v in ppi_mean_ci(y, yhat, yhat_u, alpha=alpha, lam=lam))
        rows.append(
            Estimate(facet, method, point, lo, hi, n, big_n, _effective_n(classical, lo, hi))
        )
    return rows


def _effective_n(classical: Estimate, low: float, high: float) -> float | None:
    width = high - low
    if classical.width is None or width <= 0:
        return None
    return float(classical.n_labelled * (classical.width / width) ** 2)


def facet_groups(items: pd.Index, facets: pd.DataFrame | None, by: str | None) -> pd.Series:
    """The facet value of each item (text; ``"<missing>"`` where an item has none).

    Raises:
        InputError: ``by`` is not among the facets (the message lists those known).
    """
    if by is None:
        return pd.Series(ALL, index=items, dtype=object)
    if facets is None or by not in facets.columns:
        known = ", ".join(facets.columns) if facets is not None and len(facets.columns) else "none"
        raise InputError(None, f"no facet '{by}' for these items (facets: {known})", field="--by")
    values = facets[by].reindex(items)
    return values.where(values.notna(), MISSING_FACET).astype(str)


def estimate_table(
    data: pd.DataFrame, groups: pd.Series | None = None, *, alpha: float = 0.05,
    stratified: bool = False,
) -> list[Estimate]:  # fmt: skip
    """All estimates: every item (facet ``"all"``), then each facet value in sorted order.

    Args:
        data: output of :func:`split` (columns ``judge`` and ``human``).
        groups: the facet value of each item (:func:`facet_groups`), or None for ``"all"`` only.
        stratified: the human sample was drawn per facet value (``calibrate plan --by``), at
            rates that may differ: the ``"all"`` row then combines the facets' estimates with
            weights N_h / N (stratified estimator, variances added with weights squared)
            instead of pooling the items, which would weigh the strata by their sampling rate.
    """
    if groups is None or (groups == ALL).all():
        return _group_rows(data, ALL, alpha)
    parts = []
    for value in sorted(set(groups.reindex(data.index))):
        subset = data[groups.reindex(data.index) == value]
        parts.append((len(subset), _group_rows(subset, str(value), alpha)))
    overall = _combine(parts, alpha) if stratified else _group_rows(data, ALL, alpha)
    return overall + [e for _, rows in parts for e in rows]


def _combine(parts: list[tuple[int, list[Estimate]]], alpha: float) -> list[Estimate]:
    """The ``"all"`` rows of a stratified sample: sum over strata of (N_h / N) * estimate_h."""
    z = float(norm.ppf(1 - alpha / 2))
    total = sum(size for size, _ in parts)
    n_lab = sum(rows[0].n_labelled for _, rows in parts)
    n_unl = sum(rows[0].n_unlabelled for _, rows in parts)
    out = []
    for k, method in enumerate(METHODS):
        ests = [(size / total, rows[k]) for size, rows in parts]
        if any(e.estimate is None for _, e in ests):
            out.append(Estimate(ALL, method, None, None, None, n_lab, n_unl, None))
            continue
        point = float(sum(w * e.estimate for w, e in ests))  # type: ignore[operator]
        if method == "judge_only" or any(e.width is None for _, e in ests):
            out.append(Estimate(ALL, method, point, None, None, n_lab, n_unl, None))
            continue
        se = float(np.sqrt(sum((w * e.width / (2 * z)) ** 2 for w, e in ests)))  # type: ignore[operator]
        out.append(Estimate(ALL, method, point, point - z * se, point + z * se, n_lab, n_unl, None))
    classical = out[0]
    return [
        Estimate(**{**e.to_dict(), "effective_n": _effective_n(classical, e.ci_low, e.ci_high)})
        if e.ci_low is not None and e.ci_high is not None and classical.width is not None
        else e
        for e in out
    ]


def _group_rows(data: pd.DataFrame, facet: str, alpha: float) -> list[Estimate]:
    labelled = data[data["human"].notna()]
    unlabelled = data[data["human"].isna()]
    return estimate_mean(labelled["human"].to_numpy(), labelled["judge"].to_numpy(),
                         unlabelled["judge"].to_numpy(), alpha=alpha, facet=facet)  # fmt: skip


def ranking(
    data: pd.DataFrame, groups: pd.Series, *, alpha: float = 0.05, higher_is_better: bool = True,
    method: str = "ppi++",
) -> list[dict[str, Any]]:  # fmt: skip
    """Rank the facet values (systems, models) by the estimate, with rank intervals.

    The intervals of all K facet values hold together (Bonferroni: each at level alpha / K), so
    with probability >= 1 - alpha every value lies in its interval; a facet's rank interval is
    then [1 + number of facets surely better, K - number surely worse], where "surely better"
    means the two intervals do not overlap. Rank 1 is the best.

    Returns:
        one dict per facet value, best first: ``facet``, ``method``, ``estimate``, ``ci_low``,
        ``ci_high`` (simultaneous), ``rank`` (ties share one, ``tied``), ``rank_low``,
        ``rank_high``.

    Raises:
        JudgekitError: fewer than 2 facet values, or a facet without a CI.
    """
    values = sorted(set(groups.reindex(data.index)))
    if len(values) < 2:
        raise JudgekitError("a ranking needs at least 2 facet values")
    level = alpha / len(values)
    rows = []
    for value in values:
        subset = data[groups.reindex(data.index) == value]
        est = next(e for e in _group_rows(subset, str(value), level) if e.method == method)
        if est.ci_low is None or est.ci_high is None:
            raise JudgekitError(f"facet '{value}': fewer than 2 labelled items, no rank interval")
        rows.append(est)
    sign = 1.0 if higher_is_better else -1.0
    rows.sort(key=lambda e: -sign * e.estimate)
    ranks = tied_ranks({e.facet: e.estimate for e in rows}, lower_is_better=not higher_is_better)
    out = []
    for est in rows:
        lo, hi = (est.ci_low, est.ci_high) if higher_is_better else (-est.ci_high, -est.ci_low)
        better = sum(1 for o in rows if _bounds(o, higher_is_better)[0] > hi)
        worse = sum(1 for o in rows if _bounds(o, higher_is_better)[1] < lo)
        out.append({"facet": est.facet, "method": method, "estimate": est.estimate,
                    "ci_low": est.ci_low, "ci_high": est.ci_high, "rank": ranks[est.facet][0],
                    "tied": ranks[est.facet][1],
                    "rank_low": 1 + better, "rank_high": len(rows) - worse})  # fmt: skip
    return out


def _bounds(est: Estimate, higher_is_better: bool) -> tuple[float, float]:
    assert est.ci_low is not None and est.ci_high is not None
    return (est.ci_low, est.ci_high) if higher_is_better else (-est.ci_high, -est.ci_low)


@dataclass(frozen=True)
class EstimateResult:
    """What ``judgekit calibrate estimate`` reports (:func:`run_estimate`).

    Attributes:
        signature: everything that changes the numbers: judgekit and ppi_py versions, the
            judge and human files with their sha256 (and the run's own signature), target,
            facet, alpha, tie policy, judge raters.
        estimates: every :class:`Estimate`, facet ``"all"`` first.
        ranking: the facet values ranked (:func:`ranking`), or None.
        n_ties: human ties left out (tie policy ``exclude``).
        labels: the label check (``LabelOverlap.to_dict()``; None for a ``mean``).
    """

    signature: dict[str, Any]
    estimates: list[Estimate]
    ranking: list[dict[str, Any]] | None
    n_ties: int
    labels: dict[str, Any] | None = None

    @property
    def zero_width(self) -> dict[str, list[str]]:
        """facet -> methods whose CI has zero width: the values it rests on are all equal (every
        human said CS), so the CLT interval claims a certainty the sample cannot give."""
        out: dict[str, list[str]] = {}
        for e in self.estimates:
            if e.ci_low is not None and e.ci_low == e.ci_high:
                out.setdefault(e.facet, []).append(e.method)
        return out

    def to_dict(self) -> dict[str, Any]:
        """``{"signature": ..., "estimates": [...]}`` (plus ``"ranking"`` when ranked)."""
        out: dict[str, Any] = {
            "signature": self.signature,
            "estimates": [e.to_dict() for e in self.estimates],
        }
        if self.ranking is not None:
            out["ranking"] = self.ranking
        if self.labels is not None:
            out["labels"] = self.labels
        return out


def run_estimate(
    judge: str, human: str, *, target: str | None = None, by: str | None = None,
    facets: str | None = None, judge_raters: list[str] | None = None,
    tie_policy: str = "exclude", alpha: float = 0.05, rank: str | None = None,
    stratified: bool = False,
) -> EstimateResult:  # fmt: skip
    """Read the judge's and the humans' labels, and estimate the target per facet.

    Args:
        judge, human: label files or run directories (:mod:`judgekit.calibration.estimate_inputs`).
        target: ``share:LABEL``, ``rate`` or ``mean`` (default: the run's usual quantity).
        by: a facet (``system``, ``lang``, ``language``, a column of ``facets``...).
        facets: an extra table of item facets (an ``item``/``id``/``key`` column).
        judge_raters: the judge's raters to use (default: all; several are averaged).
        tie_policy: the humans' ties: ``exclude``, ``error`` or ``own_class``.
        rank: ``higher`` or ``lower`` (is better): rank the facet values with PPI++.
        stratified: the human sample was stratified over ``by`` (:func:`estimate_table`).

    Raises:
        InputError: bad files, an unknown facet, or human items the judge did not label.
        LabelSetError: the judge's and the humans' labels share none (share and rate targets:
            the label check of :func:`judgekit.calibration.estimate_inputs.load_human`).
    """
    from importlib.metadata import version

    from judgekit.calibration import estimate_inputs as inputs
    from judgekit.calibration.estimate_facets import item_facets
    from judgekit.labels.majority import TIE_POLICIES

    if tie_policy not in TIE_POLICIES:
        raise InputError(None, f"unknown tie policy '{tie_policy}'", field="--tie-policy")
    if rank not in (None, "higher", "lower"):
        raise InputError(None, f"unknown rank order '{rank}' (use higher or lower)", field="--rank")
    goal = inputs.Target.parse(target) if target else inputs.default_target(judge)
    judged, raters, judge_source = inputs.load_judge(judge, goal, judge_raters)
    labels, n_ties, human_source = inputs.load_human(human, goal, tie_policy, raters,  # type: ignore[arg-type]
                                                     judge_source.labels)  # fmt: skip
    inputs.check_share_given(goal, judged, labels)
    data = split(judged, labels, human_source.path)
    table = item_facets(judge, human, facets, by=by) if by else None
    groups = facet_groups(data.index, table, by) if by else None
    signature = Signature(
        pipeline="calibrate-estimate",
        parameters={
            "target": str(goal),
            "by": by,
            "alpha": alpha,
            "tie_policy": tie_policy,
            "stratified": stratified,
            "judge_raters": raters,
        },  # fmt: skip
        data={s.path: s.sha256 for s in (judge_source, human_source)},
        ppi_py=version("ppi-python"),
        command="calibrate estimate",
        inputs={"judge": judge_source.to_dict(), "human": human_source.to_dict()}
        | ({"facets": {"path": facets}} if facets else {}),
        judge_raters=raters,
        target=str(goal),
        by=by,
        alpha=alpha,
        tie_policy=tie_policy,
        stratified=stratified,
        methods=list(METHODS),
    ).as_dict()
    ranked = None
    if rank is not None:
        if groups is None:
            raise InputError(None, "--rank needs --by (the facet to rank)", field="--rank")
        ranked = ranking(data, groups, alpha=alpha, higher_is_better=rank == "higher")
    if stratified and groups is None:
        raise InputError(None, "--stratified needs --by (the strata)", field="--stratified")
    rows = estimate_table(data, groups, alpha=alpha, stratified=stratified)
    overlap = human_source.overlap
    return EstimateResult(signature, rows, ranked, n_ties, overlap and overlap.to_dict())
