"""Labelling plan: how many human labels a CI of half-width W needs, and which items to label.

The judge has labelled all N items; humans will label n of them, drawn at random. With sigma the
standard deviation of the human value and rho its correlation with the judge's value:

* classical: ``n0 = (z * sigma / W)^2`` labels (z the normal quantile at 1 - alpha / 2);
* PPI++ with N - n unlabelled items: the variance is ``sigma^2 / n * (1 - rho^2 (N - n) / N)``
  (Angelopoulos, Duchi & Zrnic 2023, arXiv 2311.01453, Sec. 2.2; the "effective sample size" of
  Broska, Howes & van Loon 2024), so ``n = n0 N (1 - rho^2) / (N - rho^2 n0)``. The numbers come
  from ``ppi_py``'s ``ppi_power`` (``effective_n = n0``, ``n_max = N``, labels at unit cost; the
  judge's labels are already paid for, so they get a nominal cost of 1e-9).

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

from judgekit.errors import InputError

JUDGE_LABEL_COST = 1e-9
MAX_RHO = 0.999


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
    n_items: int, sigma: float, rho: float, half_width: float, alpha: float = 0.05
) -> tuple[int, int, bool]:
    """(n_classical, n_ppi, reachable) for a (1 - alpha) CI of half-width ``half_width``.

    Raises:
        InputError: a half-width <= 0 or alpha outside (0, 1).
    """
    from ppi_py import ppi_power

    if half_width <= 0:
        raise InputError(None, f"the half-width must be > 0, got {half_width}", field="--width")
    if not 0 < alpha < 1:
        raise InputError(None, f"alpha must be in (0, 1), got {alpha}", field="--alpha")
    z = float(norm.ppf(1 - alpha / 2))
    if sigma == 0:
        return 2, 2, True
    n0 = max(2, math.ceil((z * sigma / half_width) ** 2))
    if n0 > n_items:  # even labelling every item gives a wider interval
        return n_items, n_items, False
    rho = min(max(rho, 0.0), MAX_RHO)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = ppi_power(rho, cost_X=0, cost_Y=1, cost_Yhat=JUDGE_LABEL_COST,
                           effective_n=n0, n_max=n_items)  # fmt: skip
    return n0, int(min(max(math.ceil(result["n"]), 2), n_items)), True


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


def run_plan(
    judge: str, width: float, *, pilot: str | None = None, kappa: float | None = None,
    target: str | None = None, by: str | None = None, facets: str | None = None,
    judge_raters: list[str] | None = None, tie_policy: str = "exclude", alpha: float = 0.05,
    seed: int = 0, method: str = "ppi++",
) -> PlanResult:  # fmt: skip
    """Plan the human labels for a (1 - alpha) CI of half-width ``width`` on ``judge``'s items.

    Args:
        pilot: human labels on some judged items (sigma and rho from them), or
        kappa: the judge's Cohen's kappa against humans, in [-1, 1] (rho = kappa).
        by: stratify: one plan and one sample per value of this facet.
        method: the sample is sized for ``ppi++`` or ``classical``.

    Raises:
        InputError: neither or both of pilot and kappa, a kappa outside [-1, 1], pilot items
            the judge did not label, an unknown facet or method.
    """
    from judgekit import __version__
    from judgekit.calibration import estimate_inputs as inputs
    from judgekit.calibration.estimate import ALL, facet_groups, split
    from judgekit.calibration.estimate_facets import item_facets

    if (pilot is None) == (kappa is None):
        raise InputError(None, "give exactly one of a pilot and a kappa", field="--pilot")
    if kappa is not None and not -1 <= kappa <= 1:
        raise InputError(None, f"kappa must be in [-1, 1], got {kappa}", field="--kappa")
    if method not in ("ppi++", "classical"):
        raise InputError(
            None, f"unknown method '{method}' (use ppi++ or classical)", field="--method"
        )
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
    inputs.check_share_given(goal, data["judge"], data["human"].fillna(0.0))
    groups = facet_groups(data.index, item_facets(judge, pilot, facets, by=by) if by else None, by)
    plans = []
    for value in sorted(set(groups)):
        part = data[groups == value]
        labelled = part[part["human"].notna()]
        if pilot is not None:
            sigma, rho = pilot_moments(labelled["human"].to_numpy(), labelled["judge"].to_numpy())
        else:
            sigma, rho = judge_sigma(part["judge"].to_numpy(), goal.kind != "mean"), float(kappa)  # type: ignore[arg-type]
        n_cl, n_ppi, reachable = plan_size(len(part), sigma, rho, width, alpha)
        plans.append(Plan(str(value), len(part), sigma, rho, "pilot" if pilot else "kappa",
                          len(labelled), width, alpha, n_cl, n_ppi, reachable))  # fmt: skip
    sizes = {p.facet: p.n_ppi if method == "ppi++" else p.n_classical for p in plans}
    items = draw_items(list(data.index), sizes, None if by is None else groups, seed)
    signature = {"judgekit": __version__, "command": "calibrate plan", "inputs": sources,
                 "judge_raters": raters, "target": str(goal), "by": by, "half_width": width,
                 "alpha": alpha, "seed": seed, "method": method,
                 "kappa": kappa, "strata": ALL if by is None else by}  # fmt: skip
    return PlanResult(signature, plans, items)
