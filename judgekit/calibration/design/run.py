"""Plan a label design on a judge's run and estimate from labels drawn under it.

* :func:`plan_design`: the judge's value and uncertainty of every item, then the draw
  (:func:`judgekit.calibration.design.selection.draw`) for a budget of labels;
* :func:`estimate_design`: human labels joined to ``selection.csv``'s probabilities and the
  matching estimator (:mod:`judgekit.calibration.design.estimators`). A weighted estimate from
  labels that lack their probability is refused, naming the items.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgekit.calibration.design.estimators import (
    DesignEstimate,
    combine_rounds,
    stratified_ppi,
    weighted_ppi,
)
from judgekit.calibration.design.probabilities import uncertainty
from judgekit.calibration.design.selection import Selected, check_against, draw, read_selection
from judgekit.calibration.estimate import clip_share
from judgekit.calibration.estimate.inputs import (
    Target,
    check_share_given,
    default_target,
    load_human,
    load_judge,
)
from judgekit.errors import InputError

AUTO = "auto"


def _target(judge: str, target: str | None) -> Target:
    return Target.parse(target) if target else default_target(judge)


def judge_uncertainty(
    judge: str, values: pd.Series, kind: str, raters: list[str], facets: pd.DataFrame | None,
    goal: Target,
) -> np.ndarray:  # fmt: skip
    """Uncertainty per item of ``values``' index (shape (N,)).

    ``auto``: ``sqrt(f (1 - f))`` for a judge value f in [0, 1] (a label probability: the
    expected error of a calibrated soft label, Zrnic & Candès 2024, Sec. 6), else
    ``|f - median(f)|`` distance to the decision boundary scaled to the largest; ``top`` and
    ``entropy`` from the run's ``label_probs``; ``disagreement`` from the raters' hard values;
    ``column:NAME``: a numeric --facets column (e.g. an MQM judge's score spread over samples).
    Raises InputError when the source lacks what the kind needs.
    """
    items = values.index
    if kind == AUTO:
        f = values.to_numpy(float)
        if ((f >= 0) & (f <= 1)).all():
            return np.sqrt(f * (1 - f))
        d = np.abs(f - np.median(f))
        return 1 - d / d.max() if d.max() > 0 else np.ones(len(f))
    if kind in ("top", "entropy"):
        from judgekit.calibration.confidence_inputs import load_label_probs

        probs, _ = load_label_probs(judge, raters[0] if len(raters) == 1 else None)
        if probs.empty:
            raise InputError(
                judge, "no label probabilities: use --uncertainty auto", field="--uncertainty"
            )
        probs = probs.reindex(items).fillna(1.0 / probs.shape[1])
        return uncertainty(kind, probs.to_numpy(float))
    if kind == "disagreement":
        if len(raters) < 2:
            raise InputError(
                judge, "disagreement needs 2 or more judge raters", field="--uncertainty"
            )
        per = [load_judge(judge, goal, [r], probabilities=False)[0].reindex(items) for r in raters]
        return uncertainty("disagreement", np.stack([v.fillna(-1).to_numpy() for v in per], axis=1))
    if kind.startswith("column:"):
        name = kind.split(":", 1)[1]
        if facets is None or name not in facets.columns:
            raise InputError(None, f"no --facets column '{name}'", field="--uncertainty")
        return facets[name].reindex(items).astype(float).fillna(0.0).to_numpy()
    raise InputError(None, f"unknown uncertainty '{kind}'", field="--uncertainty")


def population_strata(values: pd.Series, table: pd.DataFrame | None, by: str | None) -> pd.Series:
    """Stratum (text) of every judged item: the ``by`` facet's value, else the judge's rounded
    value (its label). The plan and the estimate both use this one rule."""
    from judgekit.calibration.estimate import facet_groups

    if by:
        return facet_groups(values.index, table, by).astype(str)
    return values.round().astype(str)


def pilot_feature(values: pd.Series, u: np.ndarray, kind: str) -> np.ndarray:
    """The feature a pilot fits the judge's expected residual on (shape (N,)): with ``auto``, a
    judge value that is a label probability gives ``sqrt(f (1 - f))``, a score gives the score
    itself (the fit learns how the error varies along it: on WMT23 MQM the large errors sit at
    very negative GEMBA scores); another ``kind`` gives its uncertainty ``u``."""
    if kind != AUTO:
        return u
    f = values.to_numpy(float)
    probability = bool(((f >= 0) & (f <= 1)).all()) and len(np.unique(f)) > 3
    return np.sqrt(f * (1 - f)) if probability else f


def _active(
    judge: str, values: pd.Series, kind: str, chosen: list[str], table: pd.DataFrame | None,
    goal: Target, pilot: str | None, budget: int, floor: float, done: set[str],
) -> tuple[np.ndarray, float, str, str, float]:  # fmt: skip
    """(score per item, floor, design, note, projected saving) of the active design: the raw
    uncertainty without a pilot (no saving projected); with one, fitted and checked
    (:func:`judgekit.calibration.design.pilot.choose`). Without a pilot, a judge whose values
    are scores (not label probabilities in [0, 1]) is refused: its intervals undercover
    (docs/designs.md, Coverage: 0.89 mean, 0.77-0.84 worst on WMT23 MQM)."""
    u = judge_uncertainty(judge, values, kind, chosen, table, goal)
    f = values.to_numpy(float)
    if not pilot and not ((f >= 0) & (f <= 1)).all():
        raise InputError(None, "an active design on a score judge needs --pilot LABELS: the "
                         "judge's uncertainty is then fitted on human labels; assumed, it can "
                         "run against the error and the intervals undercover (docs/designs.md, "
                         "Coverage)", field="--pilot")  # fmt: skip
    if not pilot:
        return u, floor, "active", "", 0.0
    from judgekit.calibration.design.pilot import choose, pilot_residuals

    x = pilot_feature(values, u, kind)
    human, _, _ = load_human(pilot, goal)
    on = values.index.isin(human.index)
    y = human.reindex(values.index[on]).to_numpy(float)
    e = pilot_residuals(y, values[on].to_numpy(float), values.to_numpy(float))
    rest = ~values.index.astype(str).isin(done)
    pick = choose(x[on], e, x[rest], min(budget, int(rest.sum())))
    score = np.ones(len(x))
    score[rest] = pick.score
    note = f"pilot {int(on.sum())}: {pick.reason}"
    if pick.design != "active":
        note = f"active requested, {pick.design} used: {note}"
    return score, pick.floor, pick.design, note, max(pick.projected_saving, 0.0)


@dataclass(frozen=True)
class DesignPlan:
    """What :func:`plan_design` drew and under which design.

    Attributes:
        requested: the design asked for (``--design``); design: the one used (the active design
            falls back to uniform when its pilot is too small to fit or projects under 10%
            saving, :func:`judgekit.calibration.design.pilot.choose`); why: the reason, in
            words (also in each drawn row's ``reason``); budget: the labels planned (expected;
            exact when stratified); rows: every row of the selection (earlier rounds first).
    """

    requested: str
    design: str
    why: str
    budget: int
    rows: list[Selected]

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON-ready values (the rows as counts: the selection file has them)."""
        last = max((r.round for r in self.rows), default=1)
        drawn = [r for r in self.rows if r.round == last]
        return {"requested": self.requested, "design": self.design, "why": self.why,
                "budget": self.budget, "round": last, "drawn": len(drawn),
                "rows": len(self.rows), "strata": sorted({r.stratum for r in drawn})}  # fmt: skip


def plan_design(
    judge: str, design: str, budget: int, *, target: str | None = None,
    raters: list[str] | None = None, kind: str = AUTO, floor: float = 0.2,
    by: str | None = None, facets: str | None = None, pilot: str | None = None,
    exclude: str | None = None, seed: int = 0,
) -> DesignPlan:  # fmt: skip
    """The items to label under ``design`` for ``budget`` labels (expected, or exact when
    stratified), seeded, with the design used and why (:class:`DesignPlan`).

    Active: probability rising with the judge's uncertainty; with a ``pilot`` (human labels,
    e.g. a uniform first round), ``sqrt(E[e^2 | feature])`` fitted on it, or the uniform design
    when the pilot projects under 10% saving (the safeguard, :mod:`.pilot`).
    Stratified: strata are the ``by`` facet's values (default: the judge's rounded value, i.e.
    its label), with Neyman allocation from the ``pilot``'s residual standard deviation per
    stratum (without a pilot: proportional allocation), at least
    :data:`probabilities.MIN_PER_STRATUM` labels per stratum (a smaller budget is refused).
    ``exclude``: a previous round's ``selection.csv`` (sequential mode): its rows are kept as
    they were, the rest of the items planned anew as the next round (the estimate treats the
    earlier rounds' items as known, :func:`estimators.combine_rounds`).
    Raises InputError on a bad input file or option.
    """
    from judgekit.calibration.estimate.facets import item_facets

    goal = _target(judge, target)
    values, chosen, source = load_judge(judge, goal, raters)
    shown = [load_human(pilot, goal, judge_labels=source.labels)[0]] if pilot and goal.kind == (
        "share") else []  # fmt: skip
    check_share_given(goal, values, *shown, labels=source.labels)  # a score judge: no share
    table = item_facets(judge, facets, by=by) if (facets or by) else None
    items = [str(i) for i in values.index]
    before = read_selection(Path(exclude)) if exclude else []
    done = {r.item for r in before}
    step = {"exclude": done, "seed": seed, "round_no": max((r.round for r in before), default=0)
            + 1}  # fmt: skip
    if design == "active":
        u, floor, used, note, _ = _active(judge, values, kind, chosen, table, goal, pilot,
                                          budget, floor, done)  # fmt: skip
        kw = {"uncertainty": u, "floor": floor} if used == "active" else {}
        why = note or "no pilot: the judge's uncertainty as it is (a label probability)"
        rows = draw(items, used, budget, note=note, **kw, **step)
        return DesignPlan(design, used, why, budget, before + rows)
    if design != "stratified":
        return DesignPlan(design, design, "as requested", budget,
                          before + draw(items, design, budget, **step))  # fmt: skip
    strata = population_strata(values, table, by)
    if pilot:
        human, _, _ = load_human(pilot, goal)
        resid = (human - values.reindex(human.index)).dropna()
        sig = resid.groupby(strata.reindex(resid.index)).std().dropna().to_dict()
    else:  # proportional: the judge's own spread does not track the residual's (designs.md)
        sig = {h: 1.0 for h in strata.unique()}
    sigmas = {str(k): float(v) for k, v in sig.items()}
    try:
        rows = draw(items, design, budget, strata=list(strata), sigmas=sigmas, **step)
    except ValueError as err:
        raise InputError(None, str(err), field="--budget") from err
    how = "Neyman allocation from the pilot" if pilot else "proportional allocation (no pilot)"
    return DesignPlan(design, design, how, budget, before + rows)


def design_budget(
    judge: str, design: str, width: float, *, pilot: str | None = None,
    kappa: float | None = None, target: str | None = None, raters: list[str] | None = None,
    kind: str = AUTO, exclude: str | None = None, alpha: float = 0.05,
) -> tuple[int, str]:  # fmt: skip
    """Labels (budget) a design needs for a (1 - alpha) CI of half-width ``width``, and how.

    The uniform PPI++ size of ``calibrate plan --width`` (:func:`run_plan`, from the ``pilot``
    or ``kappa``), less the labels of earlier rounds (``exclude``, known in the estimate); the
    active design with a pilot takes the share its pilot projects to save
    (:func:`judgekit.calibration.design.pilot.choose`); stratified and active without a pilot
    are planned at the uniform size (Neyman allocation does not do worse than proportional
    allocation, Cochran 1977, Sec. 5.5; an unchecked uncertainty is not promised a saving).
    Raises InputError as :func:`run_plan`.
    """
    from judgekit.calibration.estimate.plan import run_plan

    plan = run_plan(judge, width, pilot=pilot, kappa=kappa, target=target,
                    judge_raters=raters, alpha=alpha)  # fmt: skip
    n_uniform = sum(p.n_ppi for p in plan.plans)
    done = {r.item for r in read_selection(Path(exclude))} if exclude else set()
    budget = max(n_uniform - len(done), 2)
    note = f"uniform PPI++ needs {n_uniform} labels for half-width {width:g}"
    if done:
        note += f", {len(done)} known from earlier rounds"
    if design == "active" and pilot:
        goal = _target(judge, target)
        values, chosen, _ = load_judge(judge, goal, raters)
        saving = _active(judge, values, kind, chosen, None, goal, pilot, budget, 0.2, done)[4]
        budget = max(int(np.ceil(budget * (1 - saving))), 2)
        note += f"; the pilot projects the active design to save {saving:.0%}"
    return budget, note


def estimate_design(
    judge: str, human: str, selection: str, *, target: str | None = None,
    raters: list[str] | None = None, alpha: float = 0.05, by: str | None = None,
    facets: str | None = None,
) -> DesignEstimate:  # fmt: skip
    """The mean under the design of ``selection`` (a ``selection.csv``), from the human labels
    in ``human`` and the judge's values on all its items. A stratified design needs the plan's
    ``by`` and ``facets`` to place every item in its stratum. Sequential rounds: the items of
    the earlier rounds are known (each needs its label), the last round's design estimates the
    mean of the others, combined by :func:`estimators.combine_rounds`.

    Raises InputError when a human-labelled item has no probability in the selection (a
    weighted estimate is refused: the weights would be unknown), an earlier round's item lacks
    its label, none is labelled, or the selection fails :func:`selection.check_against` (an item
    the judge did not judge; active weights under 10 effective labels).
    """
    goal = _target(judge, target)
    values, _, source = load_judge(judge, goal, raters)
    every = read_selection(Path(selection))
    last = max((r.round for r in every), default=1)
    rows = {r.item: r for r in every if r.round == last}
    earlier = [r.item for r in every if r.round < last]
    y, _, _ = load_human(human, goal, judge_labels=source.labels)
    y = y[y.index.isin(values.index)]
    y.index = y.index.astype(str)
    values.index = values.index.astype(str)
    judged = set(values.index)
    unlabelled = [i for i in earlier if i not in y.index]
    if unlabelled:
        raise InputError(human, f"{len(unlabelled)} item(s) of an earlier round lack a label "
                         f"(e.g. {', '.join(unlabelled[:3])})", field="item")  # fmt: skip
    known = y.reindex(earlier).to_numpy(float)
    y = y.drop(index=earlier)
    values = values.drop(index=[i for i in earlier if i in values.index])
    lacking = [i for i in y.index if i not in rows]
    design = next(iter(rows.values())).design if rows else "uniform"
    if lacking and design != "uniform":
        raise InputError(selection, f"{len(lacking)} labelled item(s) lack their inclusion "
                         f"probability (e.g. {', '.join(lacking[:3])}): a weighted estimate "
                         "is refused", field="inclusion_probability")  # fmt: skip
    y = y[[i in rows for i in y.index]]
    check_against(Path(selection), every, judged, list(y.index) if design == "active" else [])
    missing = [i for i in rows if i not in y.index]
    if missing:
        raise InputError(human, f"{len(missing)} of the {len(rows)} items the selection drew "
                         f"lack a label (e.g. {', '.join(missing[:3])}): the design's "
                         "probabilities hold only for the whole sample; label them",
                         field="item")  # fmt: skip
    try:
        est = _last_round(judge, y, values, rows, design, alpha, by, facets, selection, goal.kind)
    except ValueError as exc:
        raise InputError(selection, str(exc), field="inclusion_probability") from None
    est = combine_rounds(est, known, len(values) + len(known)) if earlier else est
    return _in_range(est) if goal.kind in ("share", "rate") else est


def _in_range(est: DesignEstimate) -> DesignEstimate:
    """A share's or rate's estimate and interval clipped to [0, 1], said in ``note``."""
    after, note = clip_share({"estimate": est.estimate, "low": est.low, "high": est.high})
    return est if note is None else replace(est, **after, note=note)  # type: ignore[arg-type]


def _last_round(
    judge: str, y: pd.Series, values: pd.Series, rows: dict[str, Selected], design: str,
    alpha: float, by: str | None, facets: str | None, selection: str, kind: str = "mean",
) -> DesignEstimate:  # fmt: skip
    """The estimate of one round's design on the items ``values`` (those not known before)."""
    f = values.reindex(y.index).to_numpy(float)
    pi = np.array([rows[i].probability for i in y.index])
    if design == "stratified":
        lab = np.array([rows[i].stratum for i in y.index])
        from judgekit.calibration.estimate.facets import item_facets

        table = item_facets(judge, facets, by=by) if (facets or by) else None
        pop = population_strata(values, table, by).to_numpy()
        if set(lab) - set(pop):
            msg = "strata of the selection are not the judge's: give the plan's --by and --facets"
            raise InputError(selection, msg, field="stratum")
        return stratified_ppi(y.to_numpy(float), f, lab, values.to_numpy(float), pop, alpha,
                              kind=kind)  # fmt: skip
    return weighted_ppi(y.to_numpy(float), f, values.to_numpy(float), pi, alpha, design,
                        kind=kind)  # fmt: skip
