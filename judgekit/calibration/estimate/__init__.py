"""Prediction-powered estimates: a benchmark figure from a judge on every item and humans on a
random subset, with a valid confidence interval.

Methods (all from ``ppi_py``, the reference implementation of the papers):

* ``classical``: the human mean on the labelled items, CLT interval (``classical_mean_ci``);
* ``judge_only``: the judge's mean over every item; biased by the judge's errors, so no CI;
* ``ppi``: prediction-powered inference (Angelopoulos et al., Science 2023, Sec. 2): the judge's
  mean on the unlabelled items plus the mean human-minus-judge correction on the labelled ones
  (``ppi_mean_ci`` with ``lam=1``);
* ``ppi++``: the power-tuned estimate (Angelopoulos, Duchi & Zrnic 2023, arXiv 2311.01453,
  Sec. 2.2; Boyeau et al. 2024, arXiv 2403.07008): ``lam`` in [0, 1] estimates the
  variance-minimising one (``ppi_py``'s ``tuned`` rule by default; ``shrunk``, as the gate
  uses it, shrinks it toward 0 by its own signal-to-noise ratio:
  :mod:`judgekit.calibration.estimate.moments`), so the interval is never much wider than the
  classical one and is the classical one when the judge is uninformative (``lam`` 0; a
  constant judge gets ``lam = 0`` outright). ``ppi_py`` computes the estimate and its CLT
  interval at that ``lam``.

The labelled items are the sample; the unlabelled items are those the judge labelled and the
humans did not (the two sets are disjoint, as the papers require). The estimand is the mean of
the human value over the population the items are drawn from; the CIs hold when the labelled
items are a simple random sample of the judged items (docs/estimates.md). ``effective_n`` is the
number of human labels the classical interval would need for the same width,
``n_labelled * (classical width / width)^2``.

The per-item values come from :mod:`judgekit.calibration.estimate.inputs`;
:mod:`judgekit.calibration.estimate.plan` says how many labels a CI width needs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from judgekit.calibration.estimate import intervals as iv
from judgekit.errors import InputError, JudgekitError

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
        interval: the interval given: ``clt``, ``t`` or ``bootstrap-t``
            (:mod:`judgekit.calibration.estimate.intervals`); None without a CI.
        se: the estimate's standard error (``ppi_py``'s, as in the CLT interval).
        note: why the interval is not the one asked for (a bootstrap-t fallback), or None.
    """

    facet: str
    method: str
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    n_labelled: int
    n_unlabelled: int
    effective_n: float | None
    interval: str | None = None
    se: float | None = None
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` row: exactly the attributes above."""
        return asdict(self)

    @property
    def width(self) -> float | None:
        """``ci_high - ci_low``, or None without a CI."""
        if self.ci_low is None or self.ci_high is None:
            return None
        return self.ci_high - self.ci_low


@dataclass(frozen=True)
class IntervalRule:
    """How the CIs are built: ``interval`` (``auto``, ``clt``, ``t``, ``bootstrap-t``), the
    target's ``kind`` (``mean``, ``share``, ``rate``: what ``auto`` picks), the bootstrap-t's
    ``resamples`` (B) and ``seed``, and PPI++'s ``lam`` rule (``shrunk`` or ``tuned``,
    :mod:`judgekit.calibration.estimate.moments`)."""

    interval: str = "auto"
    kind: str = "mean"
    resamples: int = iv.RESAMPLES
    seed: int = iv.SEED
    lam: str = iv.DEFAULT_LAM

    def pick(self, n: int, method: str = "ppi++") -> str:
        """The interval of ``method`` for ``n`` labels (:func:`estimate_intervals.resolve`)."""
        return iv.resolve(self.interval, self.kind, n, method)


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
    facet: str = ALL, rule: IntervalRule | None = None,
) -> list[Estimate]:  # fmt: skip
    """The four estimates of one mean (module docstring), in :data:`METHODS` order.

    Args:
        y: human values on the labelled items, shape (n,).
        yhat: judge values on the same items, shape (n,).
        yhat_unlabelled: judge values on the unlabelled items, shape (N,).
        alpha: error level; the CIs target coverage 1 - alpha, in (0, 1).
        rule: the interval (default ``auto`` for a mean, B = 2,000, seed 0).

    With n < 2 no CI is given; with N = 0 (every item labelled) PPI and PPI++ are the classical
    estimate (there is nothing to predict).

    Raises:
        JudgekitError: alpha outside (0, 1), or an unknown interval.
    """
    from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

    if not 0 < alpha < 1:
        raise JudgekitError(f"alpha must be in (0, 1), got {alpha}")
    rule = rule or IntervalRule()
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
    classical = _interval(facet, "classical", mean, low, high, (y, yhat, yhat_u[:0], 0.0),
                          alpha, rule, rule.pick(n, "classical"), big_n)  # fmt: skip
    rows = [classical, judge_only]
    for method in ("ppi", "ppi++"):
        if big_n == 0:
            rows.append(Estimate(**{**classical.to_dict(), "method": method}))
            continue
        lam = 1.0 if method == "ppi" else (0.0 if np.ptp(everything) == 0 else None)
        used = lam  # None with the tuned rule: ppi_py tunes it (the same rule, iv.tuned_lam)
        if lam is None and rule.lam != "tuned":
            used = _scalar(iv.lam_for(iv.Sums.of(y, yhat, yhat_u), rule.lam))
        point = _scalar(ppi_mean_pointestimate(y, yhat, yhat_u, lam=used))
        lo, hi = (_scalar(v) for v in ppi_mean_ci(y, yhat, yhat_u, alpha=alpha, lam=used))
        est = _interval(facet, method, point, lo, hi, (y, yhat, yhat_u, lam), alpha, rule,
                        rule.pick(n, method), big_n)  # fmt: skip
        rows.append(_with_effective_n(est, classical))
    return rows


def _interval(
    facet: str, method: str, point: float, low: float, high: float, data: tuple, alpha: float,
    rule: IntervalRule, kind: str, big_n: int,
) -> Estimate:  # fmt: skip
    """One CI row from ppi_py's CLT bounds: kept (``clt``), rescaled to the t quantile, or
    replaced by the bootstrap-t (falling back to ``t`` where a bound is undefined)."""
    n = len(data[0])
    z = iv.quantile("clt", n, alpha)
    se = (high - low) / (2 * z)
    note = None
    if kind == "bootstrap-t":
        y, yhat, yhat_u, lam = data
        b_low, b_high, flat = iv.bootstrap_t(y, yhat, yhat_u, lam, alpha, rule.resamples,
                                             rule.seed, rule.lam)  # fmt: skip
        if np.isfinite(b_low) and np.isfinite(b_high):
            return Estimate(facet, method, point, b_low, b_high, n, big_n, float(n),
                            "bootstrap-t", se)  # fmt: skip
        note = iv.FALLBACK_NOTE.format(k=flat, b=rule.resamples)
        kind = "t"
    if kind == "t":
        q = iv.quantile("t", n, alpha)
        low, high = point - q * se, point + q * se
    return Estimate(facet, method, point, low, high, n, big_n, float(n), kind, se, note)


def _with_effective_n(est: Estimate, classical: Estimate) -> Estimate:
    if est.ci_low is None or est.ci_high is None:
        return Estimate(**{**est.to_dict(), "effective_n": None})
    return Estimate(**{**est.to_dict(), "effective_n": _effective_n(classical, est.ci_low,
                                                                    est.ci_high)})  # fmt: skip


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
    stratified: bool = False, rule: IntervalRule | None = None,
) -> list[Estimate]:  # fmt: skip
    """All estimates: every item (facet ``"all"``), then each facet value in sorted order.

    Args:
        data: output of :func:`split` (columns ``judge`` and ``human``).
        groups: the facet value of each item (:func:`facet_groups`), or None for ``"all"`` only.
        stratified: the human sample was drawn per facet value (``calibrate plan --by``), at
            rates that may differ: the ``"all"`` row then combines the facets' estimates with
            weights N_h / N (stratified estimator, variances added with weights squared)
            instead of pooling the items, which would weigh the strata by their sampling rate.
        rule: the interval of every row (:class:`IntervalRule`; default ``auto``, a mean).
    """
    rule = rule or IntervalRule()
    if groups is None or (groups == ALL).all():
        return in_range(group_rows(data, ALL, alpha, rule), rule.kind)
    parts = []
    for value in sorted(set(groups.reindex(data.index))):
        subset = data[groups.reindex(data.index) == value]
        parts.append((len(subset), group_rows(subset, str(value), alpha, rule)))
    overall = _combine(parts, alpha, rule) if stratified else group_rows(data, ALL, alpha, rule)
    return in_range(overall + [e for _, rows in parts for e in rows], rule.kind)


def in_range(rows: list[Estimate], kind: str) -> list[Estimate]:
    """The rows with a share's or a rate's estimate and interval clipped to [0, 1].

    PPI, PPI++ and the t and bootstrap-t intervals can leave [0, 1] when few labels are
    positive (1 in 30: PPI -0.053, a humans-only interval from -0.031). A row that was clipped
    says so in its ``note`` with the values before clipping; a ``mean`` (``kind``) is unbounded
    and left as it is.
    """
    return rows if kind not in ("share", "rate") else [_clipped(e) for e in rows]


def clip_share(before: dict[str, float | None]) -> tuple[dict[str, float | None], str | None]:
    """``before`` (name -> a share's estimate or bound; None kept) clipped to [0, 1], and the note
    saying so with the values before (None when nothing moved)."""
    after = {k: v if v is None else min(1.0, max(0.0, v)) for k, v in before.items()}
    if after == before:
        return after, None
    was = ", ".join(f"{k} {before[k]:.3f}" for k in before if before[k] != after[k])
    return after, f"clipped to [0, 1], a share's range (was {was})"


def _clipped(row: Estimate) -> Estimate:
    after, note = clip_share({k: getattr(row, k) for k in ("estimate", "ci_low", "ci_high")})
    if note is None:
        return row
    return replace(row, **after, note=note if row.note is None else f"{row.note}; {note}")


def _combine(
    parts: list[tuple[int, list[Estimate]]], alpha: float, rule: IntervalRule
) -> list[Estimate]:
    """The ``"all"`` rows of a stratified sample: sum over strata of (N_h / N) * estimate_h,
    SE from the strata's SEs. The interval is the CLT one, or ``t`` (n - strata degrees of
    freedom) where the rule asks for ``t`` or the bootstrap-t (not defined for the sum)."""
    total = sum(size for size, _ in parts)
    n_lab = sum(rows[0].n_labelled for _, rows in parts)
    n_unl = sum(rows[0].n_unlabelled for _, rows in parts)
    kind = "clt" if rule.pick(n_lab) == "clt" else "t"
    q = iv.quantile(kind, n_lab - len(parts) + 1, alpha)
    note = "strata combined: t interval" if rule.pick(n_lab) == "bootstrap-t" else None
    out = []
    for k, method in enumerate(METHODS):
        ests = [(size / total, rows[k]) for size, rows in parts]
        if any(e.estimate is None for _, e in ests):
            out.append(Estimate(ALL, method, None, None, None, n_lab, n_unl, None))
            continue
        point = float(sum(w * e.estimate for w, e in ests))  # type: ignore[operator]
        if method == "judge_only" or any(e.se is None for _, e in ests):
            out.append(Estimate(ALL, method, point, None, None, n_lab, n_unl, None))
            continue
        se = float(np.sqrt(sum((w * e.se) ** 2 for w, e in ests)))  # type: ignore[operator]
        out.append(Estimate(ALL, method, point, point - q * se, point + q * se, n_lab, n_unl,
                            None, kind, se, note))  # fmt: skip
    classical = out[0]
    return [
        Estimate(**{**e.to_dict(), "effective_n": _effective_n(classical, e.ci_low, e.ci_high)})
        if e.ci_low is not None and e.ci_high is not None and classical.width is not None
        else e
        for e in out
    ]


def group_rows(
    data: pd.DataFrame, facet: str, alpha: float, rule: IntervalRule | None = None
) -> list[Estimate]:
    """:func:`estimate_mean` of one facet value's rows of :func:`split`."""
    labelled = data[data["human"].notna()]
    unlabelled = data[data["human"].isna()]
    return estimate_mean(labelled["human"].to_numpy(), labelled["judge"].to_numpy(),
                         unlabelled["judge"].to_numpy(), alpha=alpha, facet=facet,
                         rule=rule)  # fmt: skip
