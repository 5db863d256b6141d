"""``calibrate estimate`` end to end: read the judge's and the humans' labels, estimate the
target per facet with the interval rule, rank the facet values (:func:`run_estimate`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judgekit.calibration.estimate import (
    METHODS,
    Estimate,
    IntervalRule,
    estimate_table,
    facet_groups,
    split,
)
from judgekit.calibration.estimate import intervals as iv
from judgekit.calibration.estimate.rank import rank_resamples, ranking
from judgekit.errors import InputError
from judgekit.signature import Signature


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
        interval: the interval rule: ``requested`` (``auto``...), ``resamples`` (B) and
            ``seed`` of the bootstrap-t, ``rank_resamples`` (B for the ranking's
            simultaneous intervals, or None), and ``used``: facet -> interval given.
        predictor: the judge's predictor: ``used`` (``probabilities``: p(LABEL) from the
            judge's label probabilities; ``hard``: its labels), and with probabilities
            ``hard``: facet -> the PPI++ row with the hard labels on the same labelled
            items (``estimate``, ``ci_low``, ``ci_high``, ``width``) and ``width_ratio``:
            facet -> width with probabilities / width with hard labels.
    """

    signature: dict[str, Any]
    estimates: list[Estimate]
    ranking: list[dict[str, Any]] | None
    n_ties: int
    labels: dict[str, Any] | None = None
    interval: dict[str, Any] | None = None
    predictor: dict[str, Any] | None = None

    @property
    def fallbacks(self) -> dict[str, list[str]]:
        """facet -> ``"method: note"`` for each row with a note: an interval that is not the one
        asked for (a bootstrap-t bound that was undefined, or strata combined), or a share
        clipped to [0, 1] (:func:`judgekit.calibration.estimate.in_range`)."""
        out: dict[str, list[str]] = {}
        for e in self.estimates:
            if e.note:
                out.setdefault(e.facet, []).append(f"{e.method}: {e.note}")
        return out

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
        """``{"signature": ..., "interval": ..., "estimates": [...]}`` (plus ``"ranking"``
        when ranked, ``"labels"`` for shares and rates)."""
        out: dict[str, Any] = {
            "signature": self.signature,
            "interval": self.interval,
            "estimates": [e.to_dict() for e in self.estimates],
        }
        if self.ranking is not None:
            out["ranking"] = self.ranking
        if self.labels is not None:
            out["labels"] = self.labels
        if self.predictor is not None:
            out["predictor"] = self.predictor
        return out


def _check_choices(
    tie_policy: str, rank: str | None, interval: str, resamples: int, lam: str = iv.DEFAULT_LAM,
    by: str | None = None, stratified: bool = False,
) -> None:  # fmt: skip
    """One located error for an unknown tie policy, rank order, interval or lam rule, B < 100,
    or --rank / --stratified without --by."""
    from judgekit.labels.majority import TIE_POLICIES

    if tie_policy not in TIE_POLICIES:
        raise InputError(None, f"unknown tie policy '{tie_policy}'", field="--tie-policy")
    if rank not in (None, "higher", "lower"):
        raise InputError(None, f"unknown rank order '{rank}' (use higher or lower)", field="--rank")
    if interval not in iv.INTERVALS:
        raise InputError(None, f"unknown interval '{interval}' (use {', '.join(iv.INTERVALS)})",
                         field="--interval")  # fmt: skip
    if resamples < 100:
        raise InputError(None, f"at least 100 resamples, got {resamples}", field="--resamples")
    if lam not in iv.LAM_RULES:
        raise InputError(None, f"unknown lam rule '{lam}' (use {', '.join(iv.LAM_RULES)})",
                         field="--lam")  # fmt: skip
    if rank is not None and not by:
        raise InputError(None, "--rank needs --by (the facet to rank)", field="--rank")
    if stratified and not by:
        raise InputError(None, "--stratified needs --by (the strata)", field="--stratified")


def run_estimate(
    judge: str, human: str, *, target: str | None = None, by: str | None = None,
    facets: str | None = None, judge_raters: list[str] | None = None,
    tie_policy: str = "exclude", alpha: float = 0.05, rank: str | None = None,
    stratified: bool = False, interval: str = "auto", resamples: int = iv.RESAMPLES,
    seed: int = iv.SEED, hard_labels: bool = False, lam: str = iv.DEFAULT_LAM,
) -> EstimateResult:  # fmt: skip
    """Read the judge's and the humans' labels, and estimate the target per facet.

    Args:
        judge, human: label files or run directories (:mod:`judgekit.calibration.estimate.inputs`).
        target: ``share:LABEL``, ``rate`` or ``mean`` (default: the run's usual quantity).
        by: a facet (``system``, ``lang``, ``language``, a column of ``facets``...).
        facets: an extra table of item facets (an ``item``/``id``/``key`` column).
        judge_raters: the judge's raters to use (default: all; several are averaged).
        tie_policy: the humans' ties: ``exclude``, ``error`` or ``own_class``.
        rank: ``higher`` or ``lower`` (is better): rank the facet values with PPI++.
        stratified: the human sample was stratified over ``by`` (:func:`estimate_table`).
        interval: ``auto``, ``clt``, ``t`` or ``bootstrap-t``
            (:mod:`judgekit.calibration.estimate.intervals`); resamples: B of the
            bootstrap-t (>= 100); seed: its resamples' seed.
        hard_labels: for ``share:LABEL``, use the judge's labels even where its records have
            label probabilities (by default p(LABEL) is the predictor there, and the hard-label
            PPI++ row is reported beside it: ``EstimateResult.predictor``).
        lam: PPI++'s ``lam`` rule, ``tuned`` (``ppi_py``'s) or ``shrunk`` (the gate's,
            :mod:`judgekit.calibration.estimate.moments`).

    Raises:
        InputError: bad files, an unknown facet, interval or B, or human items the judge did
            not label.
        LabelSetError: the judge's and the humans' labels share none (share and rate targets:
            the label check of :func:`judgekit.calibration.estimate.inputs.load_human`).
    """
    from judgekit.calibration.estimate import inputs
    from judgekit.calibration.estimate.facets import item_facets

    _check_choices(tie_policy, rank, interval, resamples, lam, by, stratified)
    goal = inputs.Target.parse(target) if target else inputs.default_target(judge)
    rule = IntervalRule(interval, goal.kind, resamples, seed, lam)
    judged, raters, judge_source = inputs.load_judge(
        judge, goal, judge_raters, probabilities=not hard_labels
    )
    hard = judged  # the judge's labels; p(LABEL) only for a share where records carry them
    if goal.kind == "share" and not hard_labels:
        hard = inputs.load_judge(judge, goal, judge_raters, probabilities=False)[0]
    with_probs = not judged.equals(hard)
    labels, n_ties, human_source = inputs.load_human(human, goal, tie_policy, raters,  # type: ignore[arg-type]
                                                     judge_source.labels)  # fmt: skip
    inputs.check_share_given(goal, judged, labels)
    data = split(judged, labels, human_source.path)
    table = item_facets(judge, human, facets, by=by) if by else None
    groups = facet_groups(data.index, table, by) if by else None
    settings = {"target": str(goal), "by": by, "alpha": alpha, "tie_policy": tie_policy,
                "stratified": stratified, "judge_raters": raters, "interval": interval,
                "resamples": resamples, "lam": lam,
                "predictor": "probabilities" if with_probs else "hard"}  # fmt: skip
    signature = _signature(settings, seed, judge_source, human_source, facets)
    ranked = None
    if rank is not None:
        ranked = ranking(data, groups, alpha=alpha, higher_is_better=rank == "higher",
                         rule=rule)  # fmt: skip
    rows = estimate_table(data, groups, alpha=alpha, stratified=stratified, rule=rule)
    k = len(set(groups)) if groups is not None else 1
    used = {e.facet: e.interval for e in rows if e.method == "ppi++" and e.interval}
    summary = {"requested": interval, "resamples": resamples, "seed": seed,
               "rank_resamples": rank_resamples(resamples, k) if ranked else None,
               "used": used}  # fmt: skip
    predictor = {"used": settings["predictor"]}
    if with_probs:
        hard_data = split(hard, labels, human_source.path)
        hard_rows = estimate_table(hard_data, groups, alpha=alpha, stratified=stratified,
                                   rule=rule)  # fmt: skip
        predictor.update(_beside_hard(rows, hard_rows))
        predictor["items_without_probabilities"] = judge_source.n_without_probs
    overlap = human_source.overlap
    return EstimateResult(signature, rows, ranked, n_ties, overlap and overlap.to_dict(), summary,
                          predictor)  # fmt: skip


def _beside_hard(rows: list[Estimate], hard_rows: list[Estimate]) -> dict[str, Any]:
    """The hard-label PPI++ row of each facet and the width ratio of the probability
    predictor's interval to it (same labelled items, same interval rule and seed)."""
    ours = {e.facet: e for e in rows if e.method == "ppi++"}
    hard: dict[str, Any] = {}
    ratio: dict[str, float | None] = {}
    for e in hard_rows:
        if e.method != "ppi++" or e.facet not in ours:
            continue
        hard[e.facet] = {"estimate": e.estimate, "ci_low": e.ci_low, "ci_high": e.ci_high,
                         "width": e.width}  # fmt: skip
        mine = ours[e.facet].width
        ratio[e.facet] = mine / e.width if mine is not None and e.width else None
    return {"hard": hard, "width_ratio": ratio}


def _signature(
    settings: dict[str, Any], seed: int, judge_source: Any, human_source: Any,
    facets: str | None,
) -> dict[str, Any]:  # fmt: skip
    """judgekit's one signature of an estimate: the settings under ``parameters`` and at the
    top, the inputs with their sha256, the ppi_py version and the bootstrap-t's seed."""
    from importlib.metadata import version

    return Signature(
        pipeline="calibrate-estimate",
        parameters={**settings, "seed": seed},
        data={s.path: s.sha256 for s in (judge_source, human_source)},
        ppi_py=version("ppi-python"),
        command="calibrate estimate",
        inputs={"judge": judge_source.to_dict(), "human": human_source.to_dict()}
        | ({"facets": {"path": facets}} if facets else {}),
        methods=list(METHODS),
        seed=seed,
        **settings,
    ).as_dict()
