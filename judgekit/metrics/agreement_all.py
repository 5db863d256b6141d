"""Every agreement statistic of a rating table, from one encoding: what ``calibrate agreement``
prints.

The table is encoded once (:func:`judgekit.metrics.label_codes.encode`, the category set and
order read there) and every coefficient of :mod:`judgekit.metrics.agreement` computes on that
encoding, in the order of the ``among="raters"`` entries of
:data:`judgekit.metrics.statistics.STATISTICS` (Cohen's kappa only with two raters), then the
category prevalence.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from judgekit.errors import InputError
from judgekit.labels.table import LabelTable
from judgekit.metrics.agreement import (
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    percent_agreement,
    prevalence,
    unanimous_share,
)
from judgekit.metrics.agreement_results import AgreementResult, PrevalenceResult
from judgekit.metrics.label_codes import encode
from judgekit.metrics.statistics import among

MANY_CATEGORIES = 20  # above this, a scale (0-100 scores), not categories
FUNCTIONS: dict[str, Callable[..., AgreementResult]] = {
    "percent_agreement": percent_agreement,
    "unanimous_share": unanimous_share,
    "cohen_kappa": cohen_kappa,
    "fleiss_kappa": fleiss_kappa,
    "gwet_ac1": gwet_ac1,
    "krippendorff_alpha": krippendorff_alpha,
}
_SLOW = ("cohen_kappa", "fleiss_kappa", "gwet_ac1")  # irrCAC/statsmodels per resample


def agreement_statistics(
    table: LabelTable,
    level: str = "nominal",
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    categories: Sequence[Hashable] | None = None,
) -> tuple[list[AgreementResult], PrevalenceResult, str]:
    """Every agreement statistic of ``table`` (module doc) over the category set
    ``categories`` (default: the labels present), Krippendorff's alpha at ``level``.

    With more than 20 distinct labels (a rating scale), Cohen's and Fleiss' kappa, Gwet's AC1
    and the prevalence get no bootstrap CI (each resample costs ~0.3 s there) and the note
    says so.

    Returns:
        (results in list order, prevalence, note or "").

    Raises:
        InputError: no item of ``table`` has 2 or more ratings (nothing to agree on: a run's
            ``labels.csv`` holds its one judge's labels).
        JudgekitError: a label outside ``categories``; ordinal alpha on text labels with no
            declared order; interval or ratio alpha on text labels.
    """
    _require_pairs(table)
    coded, _ = encode(table, categories)  # once: every coefficient computes on these codes
    boot: dict[str, Any] = {"n_resamples": n_resamples, "seed": seed, "confidence": confidence}
    scale = len(table.categories) > MANY_CATEGORIES
    note = ""
    if scale and n_resamples:
        note = (
            f"{len(table.categories)} distinct labels: a scale, not categories; no bootstrap "
            "CI for Fleiss' kappa and Gwet's AC1 (use Krippendorff's alpha --level interval)"
        )
    results = []
    for statistic in among("raters"):
        if statistic.key == "cohen_kappa" and coded.n_raters != 2:
            continue
        kw = {**boot, "n_resamples": 0} if scale and statistic.key in _SLOW else boot
        if statistic.key == "krippendorff_alpha":
            kw = {**kw, "level": level}
        results.append(FUNCTIONS[statistic.key](coded, **kw))
    slow = {**boot, "n_resamples": 0} if scale else boot
    return results, prevalence(coded, **slow), note


def _require_pairs(table: LabelTable) -> None:
    """Refuse a table in which no item has 2 or more ratings, saying what to run instead (the
    first rater names shown escaped and clipped: a name is the file's text, and the error is
    one line)."""
    if (table.frame.notna().sum(axis=1) >= 2).any():
        return
    if table.frame.notna().sum().sum() == 0:
        raise InputError(table.source, "no ratings in the file: nothing to agree on")
    raters = ", ".join(_shown(r) for r in table.raters[:3]) + (", ..." * (table.n_raters > 3))
    why = (
        "one rater: a run's labels.csv holds its judge's labels only; compare them with human "
        "labels by `judgekit calibrate judge --judge RUN_DIR --human HUMAN_LABELS`"
        if table.n_raters == 1
        else "the raters labelled disjoint items"
    )
    raise InputError(
        table.source,
        f"no item has 2 or more ratings ({table.n_items} items, raters {raters}), and agreement "
        f"among raters needs items that 2 or more raters labelled: {why}",
    )


def _shown(name: object, limit: int = 40) -> str:
    """``name`` as a quoted literal (control characters escaped), cut at ``limit`` characters."""
    text = str(name)
    return repr(text[:limit]) + ("..." if len(text) > limit else "")
