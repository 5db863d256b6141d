"""The checks of ``estimate`` and ``difference`` rules: prediction-powered estimates per facet
value, with p-values against the rule's bound from the estimate's own interval.

The values come through the readers of ``calibrate estimate``
(:mod:`judgekit.calibration.estimate.inputs`: the judge's and the humans' labels, the label
check, the facets), and each facet value's estimate is
:func:`judgekit.calibration.estimate.estimate_mean` with the estimate's interval rule (PPI++,
Angelopoulos, Duchi & Zrnic 2023, arXiv 2311.01453; docs/estimates.md). The p-values follow
the interval the row got, so that a check decides exactly where its interval clears the bound:

* ``clt``: the normal distribution of ``(estimate - bound) / se``;
* ``t``: Student's t at n - 1 degrees of freedom;
* ``bootstrap-t``: the studentised resamples ``t*`` of the same bootstrap (same B and seed) that
  built the interval (Efron & Tibshirani 1993, ch. 12; Hall 1988).

A ``difference`` rule estimates the mean of the per-item difference candidate - baseline: the
judge's difference on every item both runs judged, the humans' on every item labelled in both
runs (label the same random items in both). Pairing removes the items' own difficulty from the
variance, so a regression is found with fewer labels than two separate estimates would need.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgekit.calibration.estimate import ALL, IntervalRule, group_rows, split
from judgekit.calibration.estimate import intervals as iv
from judgekit.errors import InputError, JudgekitWarning
from judgekit.gate.bounds import check_bound
from judgekit.gate.spec import GateSpec, Rule
from judgekit.gate.verdicts import Check, one_sided, oriented

LAM = {"classical": 0.0, "ppi": 1.0, "ppi++": None}


@dataclass(frozen=True)
class Facet:
    """The values one check rests on: ``human`` and ``judge`` on the labelled items (shape
    (n,)), ``unlabelled`` judge values (shape (N - n,)), and the target's ``kind``."""

    human: np.ndarray
    judge: np.ndarray
    unlabelled: np.ndarray
    kind: str


@dataclass(frozen=True)
class Loaded:
    """A rule's values: ``data`` (:func:`judgekit.calibration.estimate.split`), ``groups``
    (facet value per item, or None), the target's ``kind`` and the judge run's signature."""

    data: pd.DataFrame
    groups: pd.Series | None
    kind: str
    target: str
    judge_signature: dict[str, Any] | None


def _values(judge: str, human: str, rule: Rule) -> tuple[pd.Series, pd.Series, Any, Any]:
    """(judge values, human values, target, judge source) through the estimate's readers."""
    from judgekit.calibration.estimate import inputs as inputs

    goal = inputs.Target.parse(rule.target) if rule.target else inputs.default_target(judge)
    judged, raters, source = inputs.load_judge(judge, goal, list(rule.judge_raters) or None)
    spelt = _judge_spelling(goal, source.labels, human)
    if spelt is not None:  # share:positive, humans' 'positive' = the judge's 'Positive'
        goal = spelt
        judged, raters, source = inputs.load_judge(judge, goal, list(rule.judge_raters) or None)
    labels, _, human_source = inputs.load_human(human, goal, rule.tie_policy, raters,  # type: ignore[arg-type]
                                                source.labels)  # fmt: skip
    inputs.check_share_given(goal, judged, labels)
    return judged, labels, goal, source


def _judge_spelling(goal: Any, judge_labels: tuple[str, ...], human: str) -> Any:
    """The target ``share:LABEL`` in the judge's spelling where LABEL is a human label that the
    label check takes as a judge label differing in case alone (it warns so, once:
    :func:`judgekit.labels.overlap.align_labels`); None where the target stands as given. A
    LABEL that only differs in case from every label given (a misspelling) stays refused."""
    from judgekit.calibration.estimate import inputs as inputs
    from judgekit.labels.table import load_labels

    if goal.kind != "share" or goal.label in judge_labels:
        return None
    folded = [t for t in judge_labels if t.casefold() == str(goal.label).casefold()]
    if len(folded) != 1 or goal.label not in inputs._label_texts(load_labels(human)):
        return None
    return inputs.Target("share", folded[0])


def load_rule(rule: Rule) -> Loaded:
    """The values of an ``estimate`` or ``difference`` rule (module docstring).

    Raises:
        InputError: bad files, human labels on items the judge did not label, an unknown
            facet, or (difference) no item judged in both runs, a baseline run over other
            data, one set of human labels for both runs (:mod:`judgekit.gate.pairing`).
        LabelSetError: the judge's and the humans' labels share no label.
    """
    from judgekit.gate.facets import rule_groups
    from judgekit.gate.pairing import check_same_data, check_two_labellings

    judged, labels, goal, source = _values(rule.judge, rule.human, rule)
    check_bound(rule, str(goal), None)  # a default target is known once the run is read
    paths: list[str | None] = [rule.judge, rule.human]
    if rule.kind == "difference":
        base_judged, base_labels, base_goal, base_source = _values(
            rule.baseline_judge or "", rule.baseline_human or "", rule
        )
        check_same_data(rule, source.run_signature, base_source.run_signature)
        check_two_labellings(rule, labels, base_labels)
        common = judged.index.intersection(base_judged.index)
        if not len(common):
            raise InputError(rule.baseline_judge, f"rule '{rule.name}': no item is judged in "
                             "both the candidate and the baseline run (items are matched by id)",
                             field="baseline_judge")  # fmt: skip
        judged = judged[common] - base_judged[common]
        both = labels.index.intersection(base_labels.index)
        left = len(labels) - len(both), len(base_labels) - len(both)
        if any(left):
            warnings.warn(JudgekitWarning(
                f"rule '{rule.name}': a difference needs both runs' labels of an item; "
                f"{left[0]} of the {len(labels)} candidate labels and {left[1]} of the "
                f"{len(base_labels)} baseline labels are of items labelled in one run only and "
                f"are left out ({len(both)} paired); label the same items in both runs"),
                stacklevel=2)  # fmt: skip
        labels = labels[both] - base_labels[both]
        paths += [rule.baseline_judge, rule.baseline_human]
    data = split(judged, labels, rule.human)
    groups = None
    if rule.by:
        groups = rule_groups(data.index, rule, paths)
    return Loaded(data, groups, goal.kind, str(goal), source.run_signature)


def _t_star(part: pd.DataFrame, lam: float | None, spec: GateSpec) -> np.ndarray:
    """The bootstrap-t's studentised resamples ``t*`` of one facet value, as
    :func:`judgekit.calibration.estimate.intervals.bootstrap_t` draws them (same B, seed)."""
    labelled = part[part["human"].notna()]
    y, h = labelled["human"].to_numpy(float), labelled["judge"].to_numpy(float)
    u = part.loc[part["human"].isna(), "judge"].to_numpy(float)
    sample = iv.Sums.of(y, h, u) if lam != 0 else iv.Sums.of(y, h, u[:0])
    rng = np.random.default_rng(spec.seed)
    boot = iv.resample_sums(y, h, u, spec.resamples, rng, unlabelled=lam != 0)
    point, se = iv.point_and_se(sample, iv.lam_for(sample, spec.lam) if lam is None else lam)
    boot_point, boot_se = iv.point_and_se(boot, iv.lam_for(boot, spec.lam) if lam is None else lam)
    diff = boot_point - point
    scale = 1e-9 * (abs(float(se)) + 1e-12)
    flat = boot_se <= scale
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(flat, np.where(np.abs(diff) <= scale, 0.0, np.sign(diff) * np.inf),
                        diff / np.where(flat, 1.0, boot_se))  # fmt: skip


def facet_check(
    rule: Rule, loaded: Loaded, facet: str, part: pd.DataFrame, spec: GateSpec
) -> tuple[Check, Facet]:
    """The check of one facet value (``part``: its rows of the split) and its values."""
    interval = IntervalRule(spec.interval, loaded.kind, spec.resamples, spec.seed, spec.lam)
    rows = group_rows(part, facet, spec.interval_alpha, interval)
    row = next(r for r in rows if r.method == rule.method)
    labelled = part[part["human"].notna()]
    unlabelled = part.loc[part["human"].isna(), "judge"].to_numpy(float)
    values = Facet(labelled["human"].to_numpy(float), labelled["judge"].to_numpy(float),
                   unlabelled, loaded.kind)  # fmt: skip
    figure = f"{rule.method} {loaded.target}" + (" (candidate - baseline)"
                                                 if rule.kind == "difference" else "")  # fmt: skip
    base = dict(rule=rule.name, kind=rule.kind, facet=facet, figure=figure, bound=rule.bound,
                direction=rule.direction, n_labelled=row.n_labelled,
                n_items=row.n_labelled + row.n_unlabelled, mode=rule.mode,
                judge_signature=loaded.judge_signature)  # fmt: skip
    if row.estimate is None or row.se is None or row.ci_low is None:
        return Check(**base, estimate=row.estimate, ci_low=None, ci_high=None, p_pass=1.0,
                     p_fail=1.0, note="fewer than 2 human labels: no interval"), values  # fmt: skip
    lam = LAM[rule.method]
    if lam is None and np.ptp(part["judge"].to_numpy(float)) == 0:
        lam = 0.0  # a constant judge: estimate_mean's PPI++ uses lam = 0 too
    if row.se == 0:
        gap = row.estimate - rule.bound
        t_obs = np.inf if gap > 0 else (-np.inf if gap < 0 else 0.0)
    else:
        t_obs = (row.estimate - rule.bound) / row.se
    reference, df = None, None
    if row.interval == "bootstrap-t":
        reference = _t_star(part, lam, spec)
    elif row.interval == "t":
        df = row.n_labelled - 1
    if t_obs == 0.0:
        upper = lower = 1.0
    else:
        upper, lower = one_sided(float(t_obs), reference, df)
    p_pass, p_fail = oriented(upper, lower, rule.direction)
    return Check(**base, estimate=row.estimate, ci_low=row.ci_low, ci_high=row.ci_high,
                 p_pass=p_pass, p_fail=p_fail, interval=row.interval, se=row.se,
                 note=row.note), values  # fmt: skip


def estimate_checks(rule: Rule, spec: GateSpec) -> list[tuple[Check, Facet]]:
    """Every check of an ``estimate`` or ``difference`` rule: one per value of ``by`` (sorted),
    or one for all items; each with the values the labelling plan needs."""
    loaded = load_rule(rule)
    if loaded.groups is None:
        return [facet_check(rule, loaded, ALL, loaded.data, spec)]
    groups = loaded.groups.reindex(loaded.data.index)
    return [facet_check(rule, loaded, str(v), loaded.data[groups == v], spec)
            for v in sorted(set(groups))]  # fmt: skip


def more_labels(check: Check, values: Facet, spec: GateSpec) -> tuple[int | None, bool | None]:
    """(labels to add, decidable) for an inconclusive check: the labels for an interval of
    half-width ``|estimate - bound|`` whose one-sided test is at the check's Holm level (the
    (1 - 2 level) interval of ``calibrate plan``'s sizes:
    :func:`judgekit.calibration.estimate.plan.plan_size`, sigma and rho from the labelled pairs),
    minus those it has. ``(None, None)`` where the check has no estimate or too few labels."""
    from judgekit.calibration.estimate.plan import pilot_moments, plan_size

    if check.estimate is None or len(values.human) < 3 or check.holm_alpha is None:
        return None, None
    width = abs(check.estimate - check.bound)
    total = len(values.human) + len(values.unlabelled)
    if width == 0:
        return None, False
    sigma, rho = pilot_moments(values.human, values.judge)
    n_classical, n_ppi, reachable = plan_size(total, sigma, rho, width, 2 * check.holm_alpha,
                                              kind=values.kind, interval=spec.interval)  # fmt: skip
    needed = n_classical if check.figure.startswith("classical") else n_ppi
    if not reachable:
        return None, False
    return max(needed - len(values.human), 1), True
