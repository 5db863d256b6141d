"""Judge drift on a frozen anchor set: the same items, the judge's answers before and after, and
the humans' labels; per language, did the judge's agreement with the humans change?

Two kinds of answers:

* ``label`` (a verdict, a category, a pairwise winner): the figure is accuracy against the human
  label; the change is tested with McNemar's exact test on the discordant pairs (McNemar 1947,
  "Note on the sampling error of the difference between correlated proportions or
  percentages", Psychometrika 12:153-157; ``statsmodels.stats.contingency_tables.mcnemar``);
* ``score`` (MQM, a Likert score): the figure is Kendall's tau-b with the human score
  (``scipy.stats.kendalltau``); the change is tested with a seeded paired bootstrap over items
  (Efron & Tibshirani 1993, ch. 16: the share of resampled changes on either side of 0).

Per language also: the flip rate (share of items whose answer changed) with its exact
Clopper-Pearson interval (``statsmodels.stats.proportion.proportion_confint(method="beta")``),
and the smallest drop the anchor set can detect with 80% power at alpha (:func:`detectable_drop`).
Across languages the p-values are Holm-adjusted (Holm 1979, Scand. J. Statist. 6:65-70;
``multipletests(method="holm")``); a language has drifted where its adjusted p < alpha.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgekit.errors import InputError
from judgekit.metrics.bootstrap import resample_rows

KINDS = ("label", "score")
COLUMNS = ("group", "human", "before", "after")


@dataclass(frozen=True)
class DriftCheck:
    """One language (or ``all``) of a drift comparison.

    Attributes:
        group: the facet value; n: anchor items with a human label and both answers.
        metric: ``accuracy`` or ``kendall tau``; before, after: the figure on each run, change:
            after - before (negative = the judge agrees less with the humans).
        ci_low, ci_high: the change's (1 - alpha) paired bootstrap interval.
        p_value: McNemar's exact p (label) or the paired bootstrap's two-sided p (score);
            p_adjusted: Holm-adjusted across groups.
        n_flipped: items whose answer changed; flip_rate, flip_low, flip_high: its share and
            exact (Clopper-Pearson) (1 - alpha) interval.
        detectable_drop: the smallest drop of the figure found with 80% power (None when
            the group is too small or the figure undefined).
        drifted: p_adjusted < alpha.
    """

    group: str
    n: int
    metric: str
    before: float
    after: float
    change: float
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float
    n_flipped: int
    flip_rate: float
    flip_low: float
    flip_high: float
    detectable_drop: float | None
    drifted: bool

    def to_dict(self) -> dict[str, Any]:
        """The JSON row: every attribute."""
        return asdict(self)


def _figure(kind: str, human: np.ndarray, answer: np.ndarray) -> float:
    from scipy.stats import kendalltau

    if kind == "label":
        return float(np.mean(human == answer))
    if len(human) < 2 or np.all(human == human[0]) or np.all(answer == answer[0]):
        return float("nan")
    return float(kendalltau(human, answer).statistic)


def _boot_figures(kind: str, part: pd.DataFrame, n_boot: int, seed: int) -> np.ndarray:
    """Paired bootstrap: the figures (before, after) on ``n_boot`` item resamples, shape
    (n_boot, 2), rows with an undefined figure dropped."""
    h, b, a = (part[c].to_numpy() for c in ("human", "before", "after"))
    out = np.empty((n_boot, 2))
    for i, idx in enumerate(resample_rows(seed, n_boot, len(h))):
        out[i] = _figure(kind, h[idx], b[idx]), _figure(kind, h[idx], a[idx])
    return out[~np.isnan(out).any(axis=1)]


def _mcnemar_p(part: pd.DataFrame) -> float:
    from statsmodels.stats.contingency_tables import mcnemar

    ok_b = (part["before"] == part["human"]).to_numpy()
    ok_a = (part["after"] == part["human"]).to_numpy()
    table = [[int(np.sum(ok_b & ok_a)), int(np.sum(ok_b & ~ok_a))],
             [int(np.sum(~ok_b & ok_a)), int(np.sum(~ok_b & ~ok_a))]]  # fmt: skip
    if table[0][1] + table[1][0] == 0:
        return 1.0
    return float(mcnemar(table, exact=True).pvalue)


def detectable_drop(
    kind: str, n: int, before: float, se_before: float | None = None,
    alpha: float = 0.05, power: float = 0.8,
) -> float | None:  # fmt: skip
    """The smallest drop of the figure that a two-sided level-``alpha`` test on ``n`` anchor
    items detects with probability ``power``, from the anchor set's size and the baseline.

    ``label``: McNemar's test, Connor's (1987, Biometrics 43:207-211) normal approximation
    ``n = (z_a sqrt(psi) + z_b sqrt(psi - d^2))^2 / d^2`` solved for the drop ``d``, with the
    discordance ``psi = 2 p (1 - p)`` of a new revision whose errors are independent of the
    old one's at accuracy ``p = before`` (a planning assumption: correlated errors make drops
    easier to detect). ``score``: ``(z_a + z_b) sqrt(2) se_before`` (two independent figures
    of standard error ``se_before``, the baseline's bootstrap standard error).
    Returns None when ``n < 2`` or the inputs are undefined; a drop in the figure's unit.
    """
    from scipy.optimize import brentq
    from scipy.stats import norm

    za, zb = norm.ppf(1 - alpha / 2), norm.ppf(power)
    if n < 2 or not np.isfinite(before):
        return None
    if kind == "score":
        return None if se_before is None else float((za + zb) * np.sqrt(2) * se_before)
    psi = max(2 * before * (1 - before), 1.0 / n)

    def needed(d: float) -> float:
        return (za * np.sqrt(psi) + zb * np.sqrt(max(psi - d * d, 0.0))) ** 2 / (d * d) - n

    hi = min(np.sqrt(psi), 1.0)
    if needed(hi) > 0:
        return None
    return float(brentq(needed, 1e-6, hi))


def _group_row(kind: str, group: str, part: pd.DataFrame, alpha: float, n_boot: int,
               seed: int) -> dict[str, Any]:  # fmt: skip
    from statsmodels.stats.proportion import proportion_confint

    h, b, a = (part[c].to_numpy() for c in ("human", "before", "after"))
    before, after = _figure(kind, h, b), _figure(kind, h, a)
    figures = _boot_figures(kind, part, n_boot, seed)
    boots = figures[:, 1] - figures[:, 0]
    if len(boots):
        lo, hi = np.quantile(boots, [alpha / 2, 1 - alpha / 2])
    else:
        lo = hi = float("nan")
    if kind == "label":
        p = _mcnemar_p(part)
    elif not len(boots) or np.all(boots == 0):
        p = 1.0
    else:
        p = float(min(1.0, 2 * min(np.mean(boots <= 0), np.mean(boots >= 0))))
    flipped = int(np.sum(b != a))
    f_lo, f_hi = proportion_confint(flipped, len(part), alpha=alpha, method="beta")
    se = float(np.std(figures[:, 0], ddof=1)) if len(figures) > 1 else None
    return dict(group=group, n=len(part), metric="accuracy" if kind == "label" else "kendall tau",
                before=before, after=after, change=after - before, ci_low=float(lo),
                ci_high=float(hi), p_value=p, n_flipped=flipped,
                flip_rate=flipped / len(part), flip_low=float(f_lo), flip_high=float(f_hi),
                detectable_drop=detectable_drop(kind, len(part), before, se, alpha))  # fmt: skip


def compare_answers(
    frame: pd.DataFrame, kind: str = "label", alpha: float = 0.05,
    n_boot: int = 1000, seed: int = 0,
) -> list[DriftCheck]:  # fmt: skip
    """Per group (language), the judge's change in agreement with the humans between two runs
    on the same anchor items, Holm-adjusted across groups (module docstring).

    Args:
        frame: one row per anchor item, columns ``group`` (language; one group ``all`` when
            absent), ``human`` (the human label or score), ``before`` and ``after`` (the
            judge's answers; for a judge-vs-judge check pass the earlier answers as
            ``human``). Rows with a missing value are dropped.
        kind: ``label`` (accuracy, McNemar) or ``score`` (Kendall tau, paired bootstrap).
        alpha: the error level, in (0, 1); n_boot: bootstrap resamples; seed: their seed.

    Returns:
        one :class:`DriftCheck` per group, sorted by group.

    Raises:
        InputError: on an unknown kind, missing columns or no complete row.
    """
    from statsmodels.stats.multitest import multipletests

    if kind not in KINDS:
        raise InputError(None, f"drift kind must be one of {', '.join(KINDS)}, not {kind!r}")
    frame = frame if "group" in frame else frame.assign(group="all")
    missing = [c for c in COLUMNS if c not in frame]
    if missing:
        raise InputError(None, f"drift comparison needs the columns {', '.join(missing)}")
    data = frame[list(COLUMNS)].dropna()
    if data.empty:
        raise InputError(
            None, "drift comparison: no anchor item has a human label and both answers"
        )
    if kind == "score":
        data = data.astype({"human": float, "before": float, "after": float})
    rows = [_group_row(kind, str(g), part, alpha, n_boot, seed + i)
            for i, (g, part) in enumerate(data.groupby("group", sort=True))]  # fmt: skip
    _, adjusted, _, _ = multipletests([r["p_value"] for r in rows], alpha=alpha, method="holm")
    return [DriftCheck(**r, p_adjusted=float(p), drifted=bool(p < alpha))
            for r, p in zip(rows, adjusted, strict=True)]  # fmt: skip


def compare_signatures(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What changed between two judges' signatures: one line per differing key among the
    judge's models (route, revision), its prompts' (templates') and schema's hashes, the seed,
    each of the pipeline's ``parameters`` (``parameters.task: 'Sentiment.' -> 'Sentiment of a
    review.'``), the runs' task fingerprints (the hash of what reached the model: the prompt's
    text and options, the label set, the model and its parameters) and the model name and
    ``system_fingerprint`` the provider's answers carried, e.g. ``"system_fingerprint:
    ['fp_1'] -> ['fp_2']"``; empty when equal or not recorded on either side. Both arguments
    are signature dicts (``summary.json``'s, with ``drift.run``'s served values and task
    fingerprints added)."""
    keys = ("models", "prompts", "schema_hash", "seed", "task_fingerprints", "served_model",
            "system_fingerprint")  # fmt: skip
    changes = [f"{key}: {before.get(key)!r} -> {after.get(key)!r}" for key in keys
               if key in before and key in after and before[key] != after[key]]  # fmt: skip
    old, new = before.get("parameters"), after.get("parameters")
    if isinstance(old, dict) and isinstance(new, dict):
        changes += [f"parameters.{k}: {old.get(k)!r} -> {new.get(k)!r}"
                    for k in sorted(set(old) | set(new), key=str)
                    if old.get(k) != new.get(k)]  # fmt: skip
    return changes
