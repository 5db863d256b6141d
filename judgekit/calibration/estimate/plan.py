"""Labelling plan: how many human labels a CI of half-width W needs, and which items to label.

The judge has labelled all N items; humans will label n of them, drawn at random. With sigma the
standard deviation of the human value and rho its correlation with the judge's value:

* classical: ``n0 = (z * sigma / W)^2`` labels (z the normal quantile at 1 - alpha / 2);
* PPI++ with N - n unlabelled items: the variance is ``sigma^2 / n * (1 - rho^2 (N - n) / N)``
  (Angelopoulos, Duchi & Zrnic 2023, arXiv 2311.01453, Sec. 2.2; the "effective sample size" of
  Broska, Howes & van Loon 2024), so ``n = n0 N (1 - rho^2) / (N - rho^2 n0)``. The numbers come
  from ``ppi_py``'s ``ppi_power`` (``effective_n = n0``, ``n_max = N``, labels at unit cost; the
  judge's labels are already paid for, so they get a nominal cost of 1e-9).

The interval is the one ``calibrate estimate`` will give (the same rule,
:mod:`judgekit.calibration.estimate.intervals`): where it is the ``t`` interval, z becomes
Student's t quantile at n - 1 degrees of freedom and n is solved again until it is stable;
where it is the bootstrap-t (a mean below 100 labels), n is the smallest whose simulated
bootstrap-t half-width reaches W in :data:`REACH_SHARE` (60%) of :data:`SIMULATIONS` samples of
n pilot pairs (drawn with replacement) against the judge's other values (:func:`simulated_size`;
60% rather than half, a margin for the simulation's own noise, so that the planned n reaches W
in at least half of the real samples). With
a kappa instead of a pilot there is nothing to simulate: the t quantile stands in, and the plan
says so.

sigma and rho come from a pilot (human labels on a few judged items: their standard deviation and
their Pearson correlation with the judge) or from a stated Cohen's kappa, taken as rho (for two
binary raters with equal marginals kappa equals the phi coefficient, their correlation), with
sigma from the judge's own labels (``sqrt(p (1 - p))`` for a share or rate). A negative rho
counts as 0: PPI++ clips ``lam`` to [0, 1] and gains nothing from it.

:func:`draw_items` draws the sample, seeded: simple random, or stratified over a facet (each
stratum gets its own n, for a half-width W per facet value). The CIs hold only for a random
sample: items picked by hand (the easy ones, the ones the judge was unsure about) are not
representative, and the correction learnt on them does not carry over (docs/estimates.md).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from judgekit.calibration.estimate import intervals as iv
from judgekit.errors import InputError
from judgekit.metrics.bootstrap import resample_matrix

JUDGE_LABEL_COST = 1e-9
MAX_RHO = 0.999
SIMULATIONS = 200
REACH_SHARE = 0.6


@dataclass(frozen=True)
class Plan:
    """The labels one facet value needs.

    Attributes:
        facet: the facet value (``"all"`` without ``--by``).
        n_items: items the judge labelled (N).
        sigma: standard deviation of the human value used; rho: its correlation with the judge.
        source: ``pilot`` (with ``n_pilot`` items) or ``kappa``.
        half_width: the target half-width W; alpha: the error level.
        n_classical: labels the classical interval needs (capped at N).
        n_ppi: labels PPI++ needs (capped at N).
        reachable: False when even labelling all N items would not reach W with PPI++ (the
            CLT interval, without finite-population correction).
        interval: the interval the PPI++ sample size is planned for (``clt``, ``t``,
            ``bootstrap-t``, or ``t (for bootstrap-t)`` without a pilot to simulate).
    """

    facet: str
    n_items: int
    sigma: float
    rho: float
    source: str
    n_pilot: int
    half_width: float
    alpha: float
    n_classical: int
    n_ppi: int
    reachable: bool
    interval: str = "clt"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pilot_moments(human: np.ndarray, judge: np.ndarray) -> tuple[float, float]:
    """(sigma, rho) from pilot labels: sample SD of ``human`` and its Pearson correlation with
    ``judge`` (0 when either is constant).

    Raises:
        InputError: fewer than 3 pilot items.
    """
    human, judge = np.asarray(human, float), np.asarray(judge, float)
    if len(human) < 3:
        raise InputError(None, f"a pilot needs at least 3 judged items, got {len(human)}",
                         field="--pilot")  # fmt: skip
    sigma = float(human.std(ddof=1))
    if np.ptp(human) == 0 or np.ptp(judge) == 0:
        return sigma, 0.0
    return sigma, float(np.corrcoef(human, judge)[0, 1])


def judge_sigma(judge: np.ndarray, binary: bool) -> float:
    """sigma guessed from the judge's own values: ``sqrt(p (1 - p))`` for a share or rate (p the
    judge's mean), the judge's SD for a mean."""
    judge = np.asarray(judge, float)
    if binary:
        p = float(judge.mean())
        return math.sqrt(p * (1 - p))
    return float(judge.std(ddof=1)) if len(judge) > 1 else 0.0


def plan_size(
    n_items: int, sigma: float, rho: float, half_width: float, alpha: float = 0.05, *,
    kind: str = "mean", interval: str = "clt",
) -> tuple[int, int, bool]:  # fmt: skip
    """(n_classical, n_ppi, reachable) for a (1 - alpha) CI of half-width ``half_width``, with
    the z quantile (``clt``) or, where the interval rule gives ``t`` (or the bootstrap-t, which
    this closed form cannot simulate), the t quantile at the planned n.

    Raises:
        InputError: a half-width <= 0 or alpha outside (0, 1).
    """
    if half_width <= 0:
        raise InputError(None, f"the half-width must be > 0, got {half_width}", field="--width")
    if not 0 < alpha < 1:
        raise InputError(None, f"alpha must be in (0, 1), got {alpha}", field="--alpha")
    if sigma == 0:
        return 2, 2, True
    n_cl, n_ppi, reachable = _clt_size(n_items, sigma, rho, half_width, norm.ppf(1 - alpha / 2))
    sizes = []
    for method, n in (("classical", n_cl), ("ppi++", n_ppi)):
        for _ in range(20):  # the t quantile depends on n: solve again until n is stable
            if iv.resolve(interval, kind, n, method) == "clt":
                break
            q = iv.quantile("t", n, alpha)
            again = _clt_size(n_items, sigma, rho, half_width, q)
            new = again[0] if method == "classical" else again[1]
            if new == n:
                break
            n, reachable = new, reachable and again[2]
        sizes.append(n)
    return sizes[0], sizes[1], reachable


def _clt_size(
    n_items: int, sigma: float, rho: float, half_width: float, q: float
) -> tuple[int, int, bool]:
    from ppi_py import ppi_power

    try:
        need = (float(q) * float(sigma) / half_width) ** 2
    except OverflowError:  # a half-width of 1e-300: no finite sample reaches it
        need = math.inf
    if not need <= n_items:  # even labelling every item gives a wider interval (inf, NaN too)
        return n_items, n_items, False
    n0 = max(2, math.ceil(need))
    rho = min(max(rho, 0.0), MAX_RHO)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = ppi_power(rho, cost_X=0, cost_Y=1, cost_Yhat=JUDGE_LABEL_COST,
                           effective_n=n0, n_max=n_items)  # fmt: skip
    return n0, int(min(max(math.ceil(result["n"]), 2), n_items)), True


def simulated_size(
    pilot_human: np.ndarray, pilot_judge: np.ndarray, judge: np.ndarray, start: int,
    half_width: float, alpha: float = 0.05, *, method: str = "ppi++",
    resamples: int = iv.RESAMPLES, seed: int = 0,
) -> int:  # fmt: skip
    """The smallest n in [start, 100) whose bootstrap-t half-width is at most ``half_width`` in
    :data:`REACH_SHARE` of :data:`SIMULATIONS` simulated samples, else 100 (the CLT from there).

    A simulated sample: n pilot pairs drawn with replacement, and the judge's values on N - n
    random items of ``judge`` (all the facet's judged items, shape (N,)) as the unlabelled ones.
    """
    from judgekit.calibration.estimate.coverage import draw_intervals

    pilot_human, pilot_judge = np.asarray(pilot_human, float), np.asarray(pilot_judge, float)
    judge = np.asarray(judge, float)
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((SIMULATIONS, len(judge))), axis=1)
    picks = resample_matrix(rng, SIMULATIONS, len(pilot_human), draws=iv.BOOTSTRAP_BELOW)

    def reaches(n: int) -> bool:
        y, h = pilot_human[picks[:, :n]], pilot_judge[picks[:, :n]]
        low, high, _ = draw_intervals(y, h, judge[order[:, n:]], method, "bootstrap-t",
                                      alpha=alpha, resamples=resamples)  # fmt: skip
        return float(np.quantile(high - low, REACH_SHARE)) / 2 <= half_width

    low, high = max(start, 2), min(iv.BOOTSTRAP_BELOW, len(judge))  # >= 1 unlabelled item
    while low < high:  # smallest n that reaches the width (the median width falls with n)
        mid = (low + high) // 2
        if reaches(mid):
            high = mid
        else:
            low = mid + 1
    return min(low, len(judge))


def _facet_plan(
    facet: str, part: pd.DataFrame, pilot_human: np.ndarray, pilot_judge: np.ndarray,
    sigma: float, rho: float, width: float, alpha: float, kind: str, interval: str,
    resamples: int, seed: int, has_pilot: bool,
) -> Plan:  # fmt: skip
    """One facet value's plan: the closed form with the rule's quantile, then the simulated
    bootstrap-t size where the rule gives the bootstrap-t and a pilot is there to simulate."""
    n_cl, n_ppi, reachable = plan_size(len(part), sigma, rho, width, alpha, kind=kind,
                                       interval=interval)  # fmt: skip
    start = plan_size(len(part), sigma, rho, width, alpha)
    sized = {}
    for k, (name, n) in enumerate((("classical", n_cl), ("ppi++", n_ppi))):
        used = iv.resolve(interval, kind, n, name)
        if used == "bootstrap-t" and has_pilot and sigma > 0:
            n = simulated_size(pilot_human, pilot_judge, part["judge"].to_numpy(), start[k],
                               width, alpha, method=name, resamples=resamples,
                               seed=seed)  # fmt: skip
            used = iv.resolve(interval, kind, n, name)
        elif used == "bootstrap-t":
            used = "t (for bootstrap-t)"
        sized[name] = (n, used)
    return Plan(facet, len(part), sigma, rho, "pilot" if has_pilot else "kappa",
                len(pilot_human), width, alpha, sized["classical"][0], sized["ppi++"][0],
                reachable, sized["ppi++"][1])  # fmt: skip


def draw_items(
    items: list[str], sizes: dict[str, int], groups: pd.Series | None, seed: int = 0
) -> list[str]:
    """A seeded random sample of items, in a stable order (sorted by item id).

    Args:
        items: the judged items.
        sizes: facet value -> items to draw; ``{"all": n}`` for a simple random sample.
        groups: the facet value of each item (stratified sample), or None.
        seed: numpy ``default_rng`` seed; the same seed and items give the same sample.
    """
    rng = np.random.default_rng(seed)
    index = pd.Index(sorted(str(i) for i in items))
    chosen: list[str] = []
    for value in sorted(sizes):
        pool = index if groups is None else index[groups.reindex(index).to_numpy() == value]
        take = min(sizes[value], len(pool))
        chosen += [str(x) for x in rng.choice(np.asarray(pool), size=take, replace=False)]
    return sorted(chosen)


@dataclass(frozen=True)
class PlanResult:
    """What ``judgekit calibrate plan`` reports: the plan per facet value, the items to label
    (sorted ids) and the signature (inputs with sha256, target, width, alpha, seed)."""

    signature: dict[str, Any]
    plans: list[Plan]
    items: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"signature": self.signature, "plans": [p.to_dict() for p in self.plans],
                "items": self.items}  # fmt: skip


def _check_plan(pilot: str | None, kappa: float | None, method: str, interval: str) -> None:
    """The plan's options, each error naming its option (:class:`InputError`)."""
    if (pilot is None) == (kappa is None):
        raise InputError(None, "give exactly one of a pilot and a kappa", field="--pilot")
    if kappa is not None and not -1 <= kappa <= 1:
        raise InputError(None, f"kappa must be in [-1, 1], got {kappa}", field="--kappa")
    if method not in ("ppi++", "classical"):
        raise InputError(
            None, f"unknown method '{method}' (use ppi++ or classical)", field="--method"
        )
    if interval not in iv.INTERVALS:
        raise InputError(None, f"unknown interval '{interval}' (use {', '.join(iv.INTERVALS)})",
                         field="--interval")  # fmt: skip


def run_plan(
    judge: str, width: float, *, pilot: str | None = None, kappa: float | None = None,
    target: str | None = None, by: str | None = None, facets: str | None = None,
    judge_raters: list[str] | None = None, tie_policy: str = "exclude", alpha: float = 0.05,
    seed: int = 0, method: str = "ppi++", interval: str = "auto",
    resamples: int = iv.RESAMPLES,
) -> PlanResult:  # fmt: skip
    """Plan the human labels for a (1 - alpha) CI of half-width ``width`` on ``judge``'s items.

    Args:
        pilot: human labels on some judged items (sigma and rho from them), or
        kappa: the judge's Cohen's kappa against humans, in [-1, 1] (rho = kappa).
        by: stratify: one plan and one sample per value of this facet.
        method: the sample is sized for ``ppi++`` or ``classical``.
        interval: the interval the estimate will use (``calibrate estimate --interval``;
            module docstring), with ``resamples`` bootstrap-t resamples.

    Raises:
        InputError: neither or both of pilot and kappa, a kappa outside [-1, 1], pilot items
            the judge did not label, an unknown facet, method or interval.
    """
    from judgekit import __version__
    from judgekit.calibration.estimate import ALL, facet_groups, inputs, split
    from judgekit.calibration.estimate.facets import item_facets

    _check_plan(pilot, kappa, method, interval)
    goal = inputs.Target.parse(target) if target else inputs.default_target(judge)
    judged, raters, judge_source = inputs.load_judge(judge, goal, judge_raters)
    data = split(judged, pd.Series(dtype=float))
    sources = {"judge": judge_source.to_dict()}
    if pilot is not None:
        labels, _, pilot_source = inputs.load_human(
            pilot,
            goal,
            tie_policy,
            exclude=raters,
            judge_labels=judge_source.labels,  # type: ignore[arg-type]
        )
        data = split(judged, labels, pilot_source.path)
        sources["pilot"] = pilot_source.to_dict()
    inputs.check_share_given(goal, data["judge"], data["human"].fillna(0.0),
                             labels=judge_source.labels)  # fmt: skip
    groups = facet_groups(data.index, item_facets(judge, pilot, facets, by=by) if by else None, by)
    plans = []
    for value in sorted(set(groups)):
        part = data[groups == value]
        labelled = part[part["human"].notna()]
        if pilot is not None:
            sigma, rho = pilot_moments(labelled["human"].to_numpy(), labelled["judge"].to_numpy())
        else:
            sigma, rho = judge_sigma(part["judge"].to_numpy(), goal.kind != "mean"), float(kappa)  # type: ignore[arg-type]
        pilot_h, pilot_j = labelled["human"].to_numpy(), labelled["judge"].to_numpy()
        plans.append(
            _facet_plan(
                str(value),
                part,
                pilot_h,
                pilot_j,
                sigma,
                rho,
                width,
                alpha,
                goal.kind,
                interval,
                resamples,
                seed,
                pilot is not None,
            )
        )
    sizes = {p.facet: p.n_ppi if method == "ppi++" else p.n_classical for p in plans}
    items = draw_items(list(data.index), sizes, None if by is None else groups, seed)
    signature = {"judgekit": __version__, "command": "calibrate plan", "inputs": sources,
                 "judge_raters": raters, "target": str(goal), "by": by, "half_width": width,
                 "alpha": alpha, "seed": seed, "method": method, "interval": interval,
                 "resamples": resamples,
                 "kappa": kappa, "strata": ALL if by is None else by}  # fmt: skip
    return PlanResult(signature, plans, items)
