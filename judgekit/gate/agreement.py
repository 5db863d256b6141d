"""The checks of ``agreement`` rules: a judge's accuracy, macro-F1 or Cohen's kappa against the
human majority, per facet value, with a percentile bootstrap interval and p-values.

The figure is :func:`judgekit.calibration.judge.judge_vs_humans`' (the label check, the
majority reference, the tie policy, scikit-learn's metrics; paper 001's validation protocol). The
interval and the p-values come from one seeded percentile bootstrap over items (Efron &
Tibshirani 1993, ch. 13) of the same (reference, judge) pairs, scored by
:class:`judgekit.metrics.classification.ReferenceScorer`: ``p_pass`` of an at_least rule is the
share of resamples at or below the bound, ``p_fail`` the share at or above it, so the check
decides exactly where the equal-tailed percentile interval excludes the bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgekit.calibration.estimate import ALL
from judgekit.calibration.judge import judge_vs_humans
from judgekit.errors import InputError, JudgekitError
from judgekit.gate.spec import GateSpec, Rule
from judgekit.gate.verdicts import Check, oriented
from judgekit.labels.majority import apply_ties, judge_labels, majority_vote
from judgekit.labels.overlap import align_labels
from judgekit.labels.table import LabelTable, load_labels
from judgekit.metrics.bootstrap import resample_rows
from judgekit.metrics.classification import ReferenceScorer


@dataclass(frozen=True)
class Pairs:
    """The (item, reference, label) rows of one facet value (ties handled), and the number of
    human-labelled items the judge did not label."""

    rows: pd.DataFrame
    n_unjudged: int


def _judge_column(table: LabelTable, rule: Rule) -> pd.Series:
    names = {str(r): r for r in table.raters}
    if rule.judge_raters:
        name = rule.judge_raters[0]
        if name not in names:
            raise InputError(table.source, f"no rater '{name}' (raters: {', '.join(names)})",
                             field="rater")  # fmt: skip
        return table.column(names[name])
    if len(names) != 1:
        raise InputError(
            table.source,
            f"several raters ({', '.join(names)}): name the judge with judge_raters in rule "
            f"'{rule.name}'",
            field="judge_raters",
        )
    return table.column(table.raters[0])


def load_pairs(rule: Rule) -> tuple[pd.Series, LabelTable]:
    """(the judge's labels, the humans' table without the judge's rater) of an agreement rule.

    Raises:
        InputError: a missing file, an unknown or ambiguous judge rater, no human rater left.
    """
    judge_table = load_labels(rule.judge)
    column = _judge_column(judge_table, rule)
    humans = load_labels(rule.human)
    if column.name in humans.raters:
        humans = humans.drop([column.name])
    if humans.n_raters == 0:
        raise InputError(rule.human, "no human raters")
    return judge_labels(column), humans


def _pairs(judge: pd.Series, humans: LabelTable, tie_policy: str) -> pd.DataFrame:
    """The (item, reference, label) rows that ``judge_vs_humans`` scores."""
    judge, humans, _ = align_labels(judge, humans, warn=False)
    reference = majority_vote(humans)
    rows = pd.DataFrame({"reference": reference})
    rows["label"] = judge.reindex(rows.index)
    rows = rows[rows["label"].notna()].rename_axis("item").reset_index()
    return apply_ties(rows, tie_policy)  # type: ignore[arg-type]


def replicates(rows: pd.DataFrame, metric: str, tie_policy: str, spec: GateSpec) -> np.ndarray:
    """The metric on ``spec.resamples`` bootstrap resamples of the items (seeded), shape (B,);
    NaN where a resample leaves it undefined."""
    scorer = ReferenceScorer(rows, tie_policy)  # type: ignore[arg-type]
    rows = resample_rows(spec.seed, spec.resamples, len(scorer.items))
    return np.array([scorer.metric(metric, idx) for idx in rows])


def agreement_check(
    rule: Rule, facet: str, judge: pd.Series, humans: LabelTable, spec: GateSpec
) -> Check:
    """The check of one facet value: the point value from ``judge_vs_humans`` (no CI), the
    percentile interval and p-values from :func:`replicates` (module docstring)."""
    base = dict(rule=rule.name, kind="agreement", facet=facet, figure=rule.metric,
                bound=rule.bound, direction=rule.direction,
                interval="percentile bootstrap")  # fmt: skip
    try:
        report = judge_vs_humans(judge, humans, tie_policy=rule.tie_policy, ci=False,  # type: ignore[arg-type]
                                 judge_name=f"the judge ({rule.judge})")  # fmt: skip
    except JudgekitError as exc:
        if isinstance(exc, InputError):
            raise
        return Check(**base, estimate=None, ci_low=None, ci_high=None, p_pass=1.0, p_fail=1.0,
                     n_labelled=0, n_items=len(judge), note=str(exc))  # fmt: skip
    value = float(getattr(report, rule.metric).value)
    rows = _pairs(judge, humans, rule.tie_policy)
    reps = replicates(rows, rule.metric, rule.tie_policy, spec)
    reps = reps[~np.isnan(reps)]
    n_items = int(rows["item"].nunique())
    base.update(n_labelled=n_items, n_items=int(len(judge)))
    if not np.isfinite(value) or len(reps) == 0:
        return Check(**base, estimate=None if not np.isfinite(value) else value, ci_low=None,
                     ci_high=None, p_pass=1.0, p_fail=1.0,
                     note=f"{rule.metric} undefined on these items")  # fmt: skip
    b = len(reps)
    upper = float((np.sum(reps <= rule.bound) + 1) / (b + 1))  # H0 theta <= bound
    lower = float((np.sum(reps >= rule.bound) + 1) / (b + 1))  # H0 theta >= bound
    p_pass, p_fail = oriented(upper, lower, rule.direction)
    low, high = np.quantile(reps, [spec.alpha, 1 - spec.alpha])  # the (1 - 2 alpha) interval
    return Check(**base, estimate=value, ci_low=float(low), ci_high=float(high), p_pass=p_pass,
                 p_fail=p_fail)  # fmt: skip


def agreement_checks(rule: Rule, spec: GateSpec) -> list[Check]:
    """Every check of an agreement rule: one per value of ``by`` (the facets of the judge's and
    the humans' files, or ``facets``), or one for all items."""
    from judgekit.gate.facets import rule_groups

    judge, humans = load_pairs(rule)
    if not rule.by:
        return [agreement_check(rule, ALL, judge, humans, spec)]
    groups = rule_groups(judge.index, rule, [rule.judge, rule.human])
    checks = []
    for value in sorted(set(groups)):
        items = groups.index[groups == value]
        part = humans.frame.reindex([i for i in humans.frame.index if str(i) in set(items)])
        checks.append(agreement_check(rule, str(value), judge[items],
                                      LabelTable(part, humans.source), spec))  # fmt: skip
    return checks


def more_labels(check: Check, alpha: float) -> tuple[int | None, bool | None]:
    """(labels to add, decidable) for an inconclusive agreement check: the interval's
    half-width shrinks as 1 / sqrt(n), so an interval of half-width ``|value - bound|`` at the
    check's Holm level (one-sided) needs about ``n (z_holm se / gap)^2`` items (se from the
    interval's width); an approximation, stated as such in the output."""
    from scipy.stats import norm

    if check.estimate is None or check.ci_low is None or check.ci_high is None:
        return None, None
    gap = abs(check.estimate - check.bound)
    level = check.holm_alpha or alpha
    se = (check.ci_high - check.ci_low) / (2 * norm.ppf(1 - alpha))  # a (1 - 2 alpha) interval
    if gap == 0 or se == 0:
        return None, False
    needed = int(np.ceil(check.n_labelled * (norm.ppf(1 - level) * se / gap) ** 2))
    return max(needed - check.n_labelled, 1), True
