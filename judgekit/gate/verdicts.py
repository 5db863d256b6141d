"""Checks, their three verdicts, multiplicity control and the gate's exit code.

A **check** is one rule on one facet value (``language = de``, or ``all``): a calibrated figure
with its equal-tailed (1 - 2 alpha) interval, and two one-sided p-values against the rule's bound:

* ``p_pass``: for H0 "the figure is on the failing side of the bound" (at_least: theta <= b);
* ``p_fail``: for H0 "the figure is on the passing side" (at_least: theta >= b).

Each verdict is a one-sided test at alpha (the two one-sided tests convention, Schuirmann
1987): pass rejects "the figure is on the failing side", fail rejects "it is on the passing
side". At any true value at most one of the two is an error, so each check errs with
probability at most alpha; with the bound exactly at the truth, the false-fail rate is alpha.
The check's p-value is ``min(p_pass, p_fail)``: below alpha exactly where the (1 - 2 alpha)
interval excludes the bound. Across checks of a family, the p-values are
adjusted with Holm's step-down procedure (Holm 1979, "A simple sequentially rejective multiple
test procedure", Scand. J. Statist. 6:65-70; ``statsmodels.stats.multitest.multipletests``,
method ``holm``), which holds the family-wise error rate at alpha whatever the dependence between
checks. A check's verdict:

* ``pass``: adjusted p < alpha and the figure is on the passing side (the interval clears the
  bound);
* ``fail``: adjusted p < alpha and the figure is beyond the bound (the interval is beyond it);
* ``inconclusive``: otherwise (the interval straddles the bound).

A ``no-regression`` rule has no inconclusive verdict: a check fails where the regression is
significant and passes otherwise (weak evidence then passes; docs/gate.md says when to prefer a
non-inferiority margin). A check whose ``requires`` rules did not pass is not allowed to pass:
its pass becomes ``inconclusive`` and its note says which rule held it back.

The gate's verdict: ``fail`` if any check fails, else ``inconclusive`` if any is, else ``pass``.
Exit codes (:func:`exit_code`): 0 pass, 1 fail, 3 inconclusive (or 0 / 1 with
``inconclusive: pass|fail``); 2 is kept for bad input.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

VERDICTS = ("pass", "fail", "inconclusive")
EXIT_CODES = {"pass": 0, "fail": 1, "inconclusive": 3}
BAD_INPUT = 2


@dataclass(frozen=True)
class Check:
    """One rule on one facet value.

    Attributes:
        rule: the rule's name; kind: its kind; facet: the facet value (``all`` without ``by``).
        figure: what is measured (``ppi++ mean``, ``kappa``...), in its unit.
        estimate: the point estimate; ci_low, ci_high: its (1 - alpha) interval (None where
            none could be computed).
        bound, direction: the rule's bound and the side that passes (``at_least``/``at_most``).
        p_pass, p_fail: the one-sided p-values (module docstring), in [0, 1].
        n_labelled: items with a human label (and a judge value); n_items: judged items.
        interval: how the interval was built (``clt``, ``t``, ``bootstrap-t``, ``percentile
            bootstrap``).
        p_adjusted: Holm's adjusted p-value within the family; family: the family's name and
            size (``gate (6 checks)``).
        verdict: ``pass``, ``fail`` or ``inconclusive``.
        more_labels: for an inconclusive check, the human labels to add (beyond
            ``n_labelled``) for an interval that would decide it at the check's Holm level, or
            None; decidable: False where even labelling every judged item would not.
        note: why the verdict is what it is, where it needs saying.
        judge_signature: the signature of the judge run the figure rests on (for
            ``judgekit drift status``), or None.
    """

    rule: str
    kind: str
    facet: str
    figure: str
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    bound: float
    direction: str
    p_pass: float
    p_fail: float
    n_labelled: int
    n_items: int
    interval: str | None = None
    mode: str = "non-inferiority"
    p_adjusted: float | None = None
    family: str | None = None
    verdict: str | None = None
    more_labels: int | None = None
    decidable: bool | None = None
    note: str | None = None
    judge_signature: dict[str, Any] | None = None
    se: float | None = None
    holm_alpha: float | None = None

    @property
    def p_value(self) -> float:
        """``min(p_pass, p_fail)``: the one-sided p-value on the side the evidence points to."""
        return float(min(self.p_pass, self.p_fail))

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` row: every attribute, plus ``p_value``."""
        return {**asdict(self), "p_value": self.p_value}


def one_sided(t_obs: float, reference: np.ndarray | None, df: int | None) -> tuple[float, float]:
    """(P(T >= t_obs), P(T <= t_obs)) under the reference distribution of the studentised
    statistic: the bootstrap's ``t*`` values where given (Efron & Tibshirani 1993, ch. 12: the
    p-value of the bootstrap-t interval), else Student's t at ``df`` (``t`` interval) or the
    normal (``clt``, df None). With ``t_obs = (estimate - bound) / se``, the first is ``p_pass``
    of an at_least rule and the second its ``p_fail``."""
    from scipy.stats import norm
    from scipy.stats import t as student_t

    if not np.isfinite(t_obs):
        return (0.0, 1.0) if t_obs > 0 else (1.0, 0.0)
    if reference is not None:
        ref = np.asarray(reference, float)
        ref = ref[~np.isnan(ref)]
        b = len(ref)  # (count + 1) / (B + 1): never exactly 0 from a finite bootstrap
        return float((np.sum(ref >= t_obs) + 1) / (b + 1)), float(
            (np.sum(ref <= t_obs) + 1) / (b + 1)
        )
    dist = student_t(df) if df is not None and df > 0 else norm
    return float(dist.sf(t_obs)), float(dist.cdf(t_obs))


def oriented(upper: float, lower: float, direction: str) -> tuple[float, float]:
    """(p_pass, p_fail) from (P(T >= t_obs), P(T <= t_obs)) for a rule's direction."""
    return (upper, lower) if direction == "at_least" else (lower, upper)


def _verdict(check: Check, alpha: float) -> str:
    p_adj = check.p_adjusted if check.p_adjusted is not None else check.p_value
    if check.estimate is None:
        return "inconclusive"
    significant = p_adj < alpha
    beats = check.p_pass <= check.p_fail
    if check.mode == "no-regression":
        return "fail" if significant and not beats else "pass"
    if not significant:
        return "inconclusive"
    return "pass" if beats else "fail"


def holm(checks: list[Check], alpha: float, family: str) -> list[Check]:
    """``checks`` with Holm-adjusted p-values (``multipletests(method="holm")``), each check's
    Holm level (``alpha / (m - k + 1)`` for the k-th smallest p-value) and its verdict, one
    family: ``family`` names it in the output. Checks without an estimate stay inconclusive."""
    from statsmodels.stats.multitest import multipletests

    if not checks:
        return []
    p = np.array([c.p_value for c in checks])
    _, adjusted, _, _ = multipletests(p, alpha=alpha, method="holm")
    order = np.argsort(p, kind="stable")
    levels = np.empty(len(p))
    levels[order] = alpha / (len(p) - np.arange(len(p)))
    label = f"{family} ({len(checks)} check{'s' if len(checks) != 1 else ''})"
    out = []
    for check, p_adj, level in zip(checks, adjusted, levels, strict=True):
        done = replace(check, p_adjusted=float(p_adj), family=label, holm_alpha=float(level))
        out.append(replace(done, verdict=_verdict(done, alpha)))
    return out


def apply_requires(checks: list[Check], requires: dict[str, tuple[str, ...]]) -> list[Check]:
    """A check whose required rules did not pass (on its facet value, or overall where the
    required rule has no such facet value) may not pass: its pass becomes inconclusive, with a
    note naming the rule (a judge not calibrated enough cannot pass a gate)."""
    by_key = {(c.rule, c.facet): c for c in checks}
    out = []
    for check in checks:
        blockers = []
        for name in requires.get(check.rule, ()):
            own = [c for c in checks if c.rule == name]
            same = by_key.get((name, check.facet))
            needed = [same] if same is not None else own
            blockers += [f"{c.rule}[{c.facet}] is {c.verdict}" for c in needed
                         if c.verdict != "pass"]  # fmt: skip
        if blockers and check.verdict == "pass":
            note = "not allowed to pass: " + "; ".join(blockers)
            check = replace(check, verdict="inconclusive", note=note)
        out.append(check)
    return out


def overall(checks: list[Check]) -> str:
    """``fail`` if any check fails, else ``inconclusive`` if any is, else ``pass``."""
    verdicts = {c.verdict for c in checks}
    if "fail" in verdicts:
        return "fail"
    return "inconclusive" if "inconclusive" in verdicts or not checks else "pass"


def exit_code(verdict: str, inconclusive: str = "inconclusive") -> int:
    """0 pass, 1 fail, 3 inconclusive; ``inconclusive="pass"|"fail"`` maps an inconclusive
    gate to 0 or 1 (the verdict printed stays inconclusive)."""
    if verdict == "inconclusive":
        return EXIT_CODES[inconclusive]
    return EXIT_CODES[verdict]
